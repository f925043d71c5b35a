"""`sdpa-course check` and `progress` driven through subprocesses on a temporary copy of the course,
and the backend of the JupyterLab Validate button (`nbgrader validate`) on an exercise notebook."""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import compute_checksum
from exercise_harness import EXERCISES, ROOT, SOLUTIONS, WRONG_JACOBIAN, cells_by_id, read

from sdpa_course.quiz.store import AnswerStore
from sdpa_course.grading.autograde import interpreter_path

ASSIGNMENT = "ch05_softmax"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
SOLVED = "softmax"  # the learner has written this function, not the other two

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("course_cli"),
              pytest.mark.skipif(not (EXERCISES / ASSIGNMENT).is_dir(), reason=f"no exercises/{ASSIGNMENT} yet")]


def solution_source(grade_id: str) -> str:
    return cells_by_id(read(SOLUTIONS / ASSIGNMENT / NOTEBOOK))[grade_id].source


def points_of(*test_ids: str) -> float:
    cells = cells_by_id(read(SOLUTIONS / ASSIGNMENT / NOTEBOOK))
    return sum(cells[test_id].metadata.nbgrader["points"] for test_id in test_ids)


def total_points() -> float:
    return sum(c.metadata.nbgrader.get("points", 0) for c in read(SOLUTIONS / ASSIGNMENT / NOTEBOOK).cells
               if c.cell_type == "code")


@pytest.fixture(scope="module")
def learner(tmp_path_factory) -> dict:
    """A copy of the course with the learner's exercise (one function written), and their own data files."""
    root = tmp_path_factory.mktemp("learner")
    course = root / "course"
    shutil.copytree(SOLUTIONS / ASSIGNMENT, course / "solutions" / ASSIGNMENT)
    shutil.copytree(EXERCISES / ASSIGNMENT, course / "exercises" / ASSIGNMENT)
    shutil.copy2(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    exercise = course / "exercises" / ASSIGNMENT / NOTEBOOK
    notebook = read(exercise)
    cells_by_id(notebook)[SOLVED].source = solution_source(SOLVED)
    nbformat.write(notebook, exercise)
    store = AnswerStore(root / "quiz.json")
    store.record("some-question", False, "b")  # one question in the wrong-answer book
    env = {**os.environ, "SDPA_COURSE_SCORES": str(root / "scores.json"), "SDPA_QUIZ_STORE": str(root / "quiz.json"),
           "SDPA_COURSE_CACHE": str(root / "cache"), "PATH": interpreter_path()}
    return {"course": course, "exercise": exercise, "env": env}


def sdpa_course(learner: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sdpa_course.cli", *args], cwd=cwd or learner["course"],
                          env=learner["env"], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def checked(learner) -> tuple[subprocess.CompletedProcess, str]:
    before = hashlib.sha256(learner["exercise"].read_bytes()).hexdigest()
    done = sdpa_course(learner, "check", "5")
    return done, before


def test_check_prints_points_and_failed_tests(checked):
    """Does `check 5` give the written function's points and name each failed test with what is wrong?"""
    done, _ = checked
    earned, total = points_of(f"test_{SOLVED}"), total_points()
    assert f"{earned:g} / {total:g}" in done.stdout, done.stdout + done.stderr
    assert "test_softmax_jacobian" in done.stdout and "not written yet" in done.stdout
    assert f"{ASSIGNMENT} test_{SOLVED} " not in done.stdout, "a passed test is not listed as failed"
    assert done.returncode == 1, "not every point was earned"


def test_check_never_touches_the_learners_notebooks(learner, checked):
    """The exercise file is byte for byte what it was, and no grading folders appear in the course."""
    _, before = checked
    assert hashlib.sha256(learner["exercise"].read_bytes()).hexdigest() == before
    assert sorted(p.name for p in learner["course"].iterdir()) == ["exercises", "nbgrader_config.py", "solutions"]


def test_check_reuses_the_generated_gradebook_until_the_source_changes(learner, checked, tmp_path):
    """Is the gradebook `check` generated kept and used again (a tampered copy shows), and made anew for a new source?"""
    cached = sorted(Path(learner["env"]["SDPA_COURSE_CACHE"]).glob(f"{ASSIGNMENT}-*.db"))
    assert len(cached) == 1, cached
    course, cache = tmp_path / "course", tmp_path / "cache"
    shutil.copytree(learner["course"], course)
    cache.mkdir()
    shutil.copy2(cached[0], cache / cached[0].name)
    marker = "graded by the cached test"
    test = cells_by_id(read(SOLUTIONS / ASSIGNMENT / NOTEBOOK))[f"test_{SOLVED}"]
    test.source = f"raise AssertionError({marker!r})"
    with sqlite3.connect(cache / cached[0].name) as gradebook:  # the test of the written function, in the cache only
        gradebook.execute("UPDATE source_cell SET source = ?, checksum = ? WHERE name = ?",
                          (test.source, compute_checksum(test), f"test_{SOLVED}"))
    other = {"course": course, "env": {**learner["env"], "SDPA_COURSE_CACHE": str(cache),
                                       "SDPA_COURSE_SCORES": str(tmp_path / "scores.json")}}
    assert marker in sdpa_course(other, "check", "5").stdout, "the cached gradebook was not used"
    source = course / "solutions" / ASSIGNMENT / NOTEBOOK
    notebook = read(source)
    notebook.cells[0].source += "\n"  # a new source: generated again, true points again
    nbformat.write(notebook, source)
    again = sdpa_course(other, "check", "5").stdout
    assert marker not in again and f"{points_of(f'test_{SOLVED}'):g} / {total_points():g}" in again, again
    assert [p.name for p in cache.glob(f"{ASSIGNMENT}-*.db")] != [cached[0].name], "the new source's gradebook"


def test_progress_shows_what_is_left_the_last_score_and_the_book(learner, checked):
    """From a subfolder of the course: the chapter's functions still to write, the score `check` saved, the book."""
    done = sdpa_course(learner, "progress", cwd=learner["course"] / "exercises")
    row = next(line for line in done.stdout.splitlines() if line.startswith(" 5 "))
    assert f"{points_of(f'test_{SOLVED}'):g}/{total_points():g} on " in row
    assert "to write: softmax_jacobian, softmax_backward" in row
    assert "no exercises yet" in next(line for line in done.stdout.splitlines() if line.startswith(" 1 "))
    assert "quiz: 1 question(s) in the wrong-answer book, 1 due for review now" in done.stdout


def test_check_rejects_an_unknown_chapter(learner):
    done = sdpa_course(learner, "check", "99")
    assert done.returncode != 0 and "no chapter '99'" in done.stderr


def test_grade_refuses_an_assignment_missing_from_the_gradebook(learner):
    """Grading before generate_assignment would fail every student; the command says what to run instead."""
    done = sdpa_course(learner, "grade", ASSIGNMENT)
    assert done.returncode == 2 and f"nbgrader generate_assignment {ASSIGNMENT}" in done.stderr


def test_validate_button_backend(learner, tmp_path):
    """`nbgrader validate` (what the Validate button runs) fails on the unfinished exercise and passes once solved."""
    def validate(path: Path) -> str:
        return subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=learner["course"],
                              env=learner["env"], capture_output=True, text=True).stdout
    assert "NotImplementedError" in validate(learner["exercise"])
    solved = read(learner["exercise"])
    for grade_id in ("softmax_jacobian", "softmax_backward"):
        cells_by_id(solved)[grade_id].source = solution_source(grade_id)
    nbformat.write(solved, tmp_path / NOTEBOOK)
    assert "Success! Your notebook passes all the tests." in validate(tmp_path / NOTEBOOK)
    ours = sdpa_course(learner, "validate", str(tmp_path / NOTEBOOK))
    assert ours.returncode == 0 and "Success! Your notebook passes all the tests." in ours.stdout


def test_validate_prints_the_whole_hint(learner, tmp_path):
    """A catalogued mistake's hint is longer than nbgrader validate's 90 columns: `sdpa-course validate` keeps it whole."""
    wrong = read(learner["exercise"])
    cells_by_id(wrong)["softmax_jacobian"].source = WRONG_JACOBIAN
    nbformat.write(wrong, tmp_path / NOTEBOOK)
    done = sdpa_course(learner, "validate", str(tmp_path / NOTEBOOK))
    assert done.returncode == 1, done.stdout + done.stderr
    hint = next(line for line in done.stdout.splitlines() if "known mistake" in line)
    assert len(hint) > 90 and not hint.endswith("..."), done.stdout


def test_check_in_chinese_grades_exactly_like_english(learner, checked):
    """The same work in the Chinese exercise (zh/exercises/) earns the same points with `check 5 --lang zh`."""
    chinese = learner["course"] / "zh"
    shutil.copytree(ROOT / "zh" / "solutions" / ASSIGNMENT, chinese / "solutions" / ASSIGNMENT)
    shutil.copytree(ROOT / "zh" / "exercises" / ASSIGNMENT, chinese / "exercises" / ASSIGNMENT)
    exercise = chinese / "exercises" / ASSIGNMENT / NOTEBOOK
    notebook = read(exercise)
    cells_by_id(notebook)[SOLVED].source = solution_source(SOLVED)
    nbformat.write(notebook, exercise)
    try:
        done = sdpa_course(learner, "check", "5", "--lang", "zh")
        earned, total = points_of(f"test_{SOLVED}"), total_points()
        assert f"{earned:g} / {total:g}" in done.stdout, done.stdout + done.stderr
        assert done.returncode == checked[0].returncode == 1
        progress = sdpa_course(learner, "progress", "--lang", "zh").stdout
        assert f"{earned:g}/{total:g}" in next(line for line in progress.splitlines() if line.startswith(" 5 "))
    finally:
        shutil.rmtree(chinese)  # the other tests see the English course only
