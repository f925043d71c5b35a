"""The scores `check` remembers for `progress`: per course folder and assignment version, never another course's.

The store is driven directly, and `sdpa-course check` / `progress` in this process with grading
replaced by a stub (no nbgrader run), on small course folders with one chapter each.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from sdpa_course import cli
from sdpa_course.grading.autograde import GRADED, UNGRADABLE, StudentResult
from sdpa_course.json_file import StoreError
from sdpa_course.progress_store import (CURRENT, EDITED, OLDER, SCORES_ENV, ScoreStore, default_scores_path,
                                        snapshot)

ASSIGNMENT = "ch05_softmax"


def write_notebook(path: Path, source: str, outputs: int = 0) -> None:
    """A one-cell nbgrader solution notebook whose cell holds ``source`` (and ``outputs`` stream outputs)."""
    cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"solution": True, "grade": False,
                                                                    "grade_id": "softmax", "locked": False}})
    cell.outputs = [nbformat.v4.new_output("stream", text=f"run {n}\n") for n in range(outputs)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)


def make_course(folder: Path) -> Path:
    """A course folder with chapter 5's solution and its exercise (the stub)."""
    folder.mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()\n")
    write_notebook(folder / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", "def softmax(x):\n    return x\n")
    write_notebook(folder / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                   "def softmax(x):\n    raise NotImplementedError()\n")
    return folder


def graded(score: float, max_score: float = 9.0) -> StudentResult:
    return StudentResult(student="learner", assignment=ASSIGNMENT, status=GRADED, score=score, max_score=max_score)


def record(store: ScoreStore, course: Path, result: StudentResult) -> None:
    store.record(course, [(snapshot(course, result.assignment), result)])


@pytest.fixture
def reports() -> list[str]:
    return []


@pytest.fixture
def store(tmp_path, reports) -> ScoreStore:
    return ScoreStore(tmp_path / "scores.json", report=reports.append)


@pytest.fixture
def courses(tmp_path) -> tuple[Path, Path]:
    """Two clones of the course on one machine (a learner's and an instructor's, say)."""
    return make_course(tmp_path / "learner" / "course"), make_course(tmp_path / "instructor" / "course")


def test_two_courses_sharing_one_file_never_see_each_others_marks(store, courses):
    """A score checked in one clone is not another clone's, even with the same chapter at the same version."""
    learner, instructor = courses
    assert snapshot(learner, ASSIGNMENT) == snapshot(instructor, ASSIGNMENT), "the same chapter, the same work"
    record(store, instructor, graded(9))
    assert store.last_checks(learner) == {}
    record(store, learner, graded(2))
    assert store.last_checks(learner)[ASSIGNMENT].score == 2
    assert store.last_checks(instructor)[ASSIGNMENT].score == 9


def test_a_course_is_its_resolved_folder(store, courses, tmp_path):
    """The same folder reached through a link or a roundabout path is the same course."""
    learner, _ = courses
    link = tmp_path / "link"
    link.symlink_to(learner, target_is_directory=True)
    record(store, link, graded(4))
    assert store.last_checks(learner / ".." / "course")[ASSIGNMENT].score == 4
    assert store.last_checks(learner)[ASSIGNMENT].state == CURRENT


def test_a_changed_chapter_is_not_the_current_score(store, courses):
    """After the chapter's solutions/ change (a new version of the assignment), the old score is marked older."""
    learner, _ = courses
    record(store, learner, graded(9))
    write_notebook(learner / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", "def softmax(x):\n    return x + 0\n")
    last = store.last_checks(learner)[ASSIGNMENT]
    assert (last.state, last.score) == (OLDER, 9)


@pytest.mark.parametrize("outputs, source, state", [
    (3, "def softmax(x):\n    raise NotImplementedError()\n", CURRENT),  # run, not changed
    (0, "def softmax(x):\n    return x\n", EDITED),
])
def test_edited_exercises_are_marked_and_running_them_is_not(store, courses, outputs, source, state):
    """Running the exercise notebook keeps the score current; editing a cell marks it edited."""
    learner, _ = courses
    record(store, learner, graded(0))
    write_notebook(learner / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", source, outputs=outputs)
    assert store.last_checks(learner)[ASSIGNMENT].state == state


@pytest.mark.parametrize("content", [
    "{not json", "[1, 2]", b"\xff\xfe binary",
    '{"format": "sdpa-course-scores", "version": 1, "courses": {"/c": {"ch05_softmax": {"score": 1}}}}',
    '{"format": "sdpa-course-scores", "version": 99, "courses": {}}',
    '{"ch05_softmax": "9/9"}',  # neither format
])
def test_a_damaged_file_is_set_aside_reported_and_kept(store, reports, courses, content):
    """An unreadable file is renamed .corrupt-<time> with its bytes, said once, and the next check starts afresh."""
    learner, _ = courses
    data = content if isinstance(content, bytes) else content.encode()
    store.path.write_bytes(data)
    assert store.last_checks(learner) == {}
    [backup] = store.path.parent.glob("scores.json.corrupt-*")
    assert backup.read_bytes() == data
    assert len(reports) == 1 and backup.name in reports[0] and "could not be read" in reports[0]
    record(store, learner, graded(5))
    assert store.last_checks(learner)[ASSIGNMENT].score == 5 and len(reports) == 1


def test_an_old_flat_file_is_not_shown_is_said_and_kept_as_legacy(store, reports, courses):
    """The file of an older sdpa-course ({assignment: score}) can't be attributed: not shown, said, and kept."""
    learner, _ = courses
    old = {ASSIGNMENT: {"status": GRADED, "score": 9, "max_score": 9, "when": "2026-01-05T10:00:00"}}
    store.path.write_text(json.dumps(old))
    assert store.last_checks(learner) == {}
    assert len(reports) == 1 and "1 score(s) from an older sdpa-course" in reports[0]
    record(store, learner, graded(3))
    assert json.loads(store.path.read_text())["legacy"] == old
    assert store.last_checks(learner)[ASSIGNMENT].score == 3
    assert len(reports) == 2, "said while the old file was read (twice), not once it is rewritten"


def test_an_unwritable_location_raises_a_clear_error(tmp_path, courses):
    (tmp_path / "a_file").write_text("")
    store = ScoreStore(tmp_path / "a_file" / "scores.json")
    with pytest.raises(StoreError, match="cannot open the check scores file .*a_file/scores.json"):
        record(store, courses[0], graded(1))


def test_the_path_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(SCORES_ENV, str(tmp_path / "mine.json"))
    assert default_scores_path() == tmp_path / "mine.json" == ScoreStore().path
    monkeypatch.delenv(SCORES_ENV)
    assert default_scores_path().name == "check_scores.json" and "sdpa-course" in str(default_scores_path())


# --- through the command: check records, progress shows this course's scores only ---------------------

@pytest.fixture
def command(tmp_path, monkeypatch):
    """`sdpa-course ARGS...` in this process with ``grading`` in place of nbgrader: (output, its stderr)."""
    monkeypatch.setenv(SCORES_ENV, str(tmp_path / "scores.json"))
    monkeypatch.setenv("SDPA_QUIZ_STORE", str(tmp_path / "quiz.json"))
    monkeypatch.setattr(cli, "sandbox_or_refusal", lambda args: 0)

    def run(capsys, *args, grading=lambda course, item: graded(3)):
        monkeypatch.setattr(cli, "check_one", lambda course, item, limits, source: grading(source, item))
        cli.main(list(args))
        return capsys.readouterr()
    return run


def chapter_row(output: str, number: int) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{number:>2} "))


def test_progress_shows_only_the_scores_checked_in_its_own_course(command, courses, capsys):
    learner, instructor = courses
    command(capsys, "check", "5", "--course", str(instructor), grading=lambda course, item: graded(9))
    assert "9/9 on " in chapter_row(command(capsys, "progress", "--course", str(instructor)).out, 5)
    row = chapter_row(command(capsys, "progress", "--course", str(learner)).out, 5)
    assert "9/9" not in row and "  -  to write: softmax" in row, row


def test_progress_marks_a_score_for_an_older_chapter_and_says_why(command, courses, capsys):
    learner, _ = courses
    command(capsys, "check", "5", "--course", str(learner))
    write_notebook(learner / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", "def softmax(x):\n    return -x\n")
    shown = command(capsys, "progress", "--course", str(learner)).out
    assert "3/9 on " in chapter_row(shown, 5) and "(old)" in chapter_row(shown, 5), shown
    assert "(old): that check graded an older version of the chapter" in shown


def test_check_takes_the_snapshot_before_grading(command, courses, capsys):
    """Work saved while the check runs is not taken for the work it graded: the score shows as edited."""
    learner, _ = courses

    def grading_while_the_learner_saves(course, item):
        write_notebook(course / "exercises" / item.assignment / f"{item.assignment}.ipynb", "def softmax(x): ...")
        return graded(3)
    command(capsys, "check", "5", "--course", str(learner), grading=grading_while_the_learner_saves)
    shown = command(capsys, "progress", "--course", str(learner)).out
    assert "3/9 on " in chapter_row(shown, 5) and "(edited)" in chapter_row(shown, 5), shown


def test_check_reports_even_when_the_scores_cannot_be_saved(command, courses, capsys, monkeypatch, tmp_path):
    learner, _ = courses
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv(SCORES_ENV, str(tmp_path / "a_file" / "scores.json"))
    done = command(capsys, "check", "5", "--course", str(learner),
                   grading=lambda course, item: StudentResult("learner", ASSIGNMENT, UNGRADABLE, reason="the kernel died"))
    assert "the scores were not saved" in done.err and "a_file" in done.err
    assert "could not be graded: the kernel died" in done.out
