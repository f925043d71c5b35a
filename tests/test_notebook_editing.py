"""Notebooks edited as learners edit them: a copied cell, a renamed or deleted id, mangled metadata, a changed type.

nbgrader loses the whole chapter to each of these ("KeyError: 'grade_id'", "Duplicate grade id",
"the nbgrader metadata may be corrupted").  The repair pass (sdpa_course/grading/repair.py) runs
on a copy before nbgrader: the first tests run it on in-memory notebooks, with nbgrader's own
metadata check as the control; the slow ones grade a class of edited submissions with one
`sdpa-course grade --jobs 2`, and run `check` and `validate` on an edited exercise.
"""
from __future__ import annotations

import copy
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from exercise_harness import (EXERCISES, ROOT, SOLUTIONS, WRONG_JACOBIAN, cells_by_id, grades, make_course, read,
                              visible_text)
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import SchemaMismatchError

from sdpa_course.cli import temporary_course
from sdpa_course.grading.autograde import GRADED, interpreter_path
from sdpa_course.grading.repair import NOTE_TITLE, expected_from_notebook, first_line, repair

ASSIGNMENT = "ch05_softmax"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
WRONG_SOFTMAX = "def softmax(x, axis=-1):\n    return np.exp(x)  # not normalised\n"
IDS = ("softmax", "softmax_jacobian", "softmax_backward")  # the answer cells, in order

needs_ch05 = pytest.mark.skipif(not (EXERCISES / ASSIGNMENT).is_dir(), reason=f"no exercises/{ASSIGNMENT}")


# --- edited notebooks ------------------------------------------------------------------------------

def release():
    return read(EXERCISES / ASSIGNMENT / NOTEBOOK)


def filled_in(blank: tuple[str, ...] = ()):
    """The release with every answer cell solved, except those in ``blank``."""
    notebook = release()
    for grade_id, cell in cells_by_id(read(SOLUTIONS / ASSIGNMENT / NOTEBOOK)).items():
        if cell.metadata.nbgrader.get("solution") and grade_id not in blank:
            cells_by_id(notebook)[grade_id].source = cell.source
    return notebook


def position(notebook, grade_id: str) -> int:
    return next(i for i, cell in enumerate(notebook.cells)
                if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def duplicated(notebook, grade_id: str, *, source: str | None = None, before: bool = False):
    """The cell ``grade_id`` pasted again right after itself (metadata and all, as JupyterLab pastes), or before."""
    index = position(notebook, grade_id)
    pasted = copy.deepcopy(notebook.cells[index])
    pasted.id = f"paste{index}"
    if source is not None:
        pasted.source = source
    notebook.cells.insert(index if before else index + 1, pasted)
    return notebook


def renamed(notebook, grade_id: str, new: str, *, source: str | None = None):
    cell = notebook.cells[position(notebook, grade_id)]
    cell.metadata.nbgrader["grade_id"] = new
    if source is not None:
        cell.source = source
    return notebook


def id_deleted(notebook, grade_id: str):
    del notebook.cells[position(notebook, grade_id)].metadata.nbgrader["grade_id"]
    return notebook


def metadata_set(notebook, grade_id: str, metadata):
    notebook.cells[position(notebook, grade_id)].metadata["nbgrader"] = metadata
    return notebook


def retyped(notebook, grade_id: str, cell_type: str):
    index = position(notebook, grade_id)
    cell = notebook.cells[index]
    make = nbformat.v4.new_markdown_cell if cell_type == "markdown" else nbformat.v4.new_code_cell
    notebook.cells[index] = make(cell.source, metadata=cell.metadata, id=cell.id)
    return notebook


def moved_to_end(notebook, grade_id: str):
    notebook.cells.append(notebook.cells.pop(position(notebook, grade_id)))
    return notebook


def two_cells_one_id(notebook):
    """The Jacobian's answer cell given the softmax cell's id (a copy of that cell, its code replaced)."""
    return renamed(notebook, "softmax_jacobian", "softmax")


def fake_test(notebook):
    meta = {**cells_by_id(notebook)["test_softmax"].metadata.nbgrader, "grade_id": "bonus", "points": 100}
    notebook.cells.append(nbformat.v4.new_code_cell("pass", metadata={"nbgrader": meta}))
    return notebook


# name: (the edited notebook, the cell the message names (1 = the top) and its id, words of what to do)
CASES = {
    "duplicated answer": (lambda: duplicated(filled_in(), "softmax"), 4, "softmax", "Delete the copy"),
    "duplicated test": (lambda: duplicated(filled_in(), "test_softmax"), 5, "test_softmax", "Delete the copy"),
    "duplicated locked cell": (lambda: duplicated(filled_in(), "imports"), 2, "imports", "Delete the copy"),
    "renamed answer": (lambda: renamed(filled_in(), "softmax", "my_softmax"), 4, "my_softmax",
                       'set "grade_id" back to "softmax"'),
    "renamed test": (lambda: renamed(filled_in(), "test_softmax_jacobian", "t2"), 8, "t2",
                     'set "grade_id" back to "test_softmax_jacobian"'),
    "deleted grade_id": (lambda: id_deleted(filled_in(), "softmax_backward"), 10, "softmax_backward",
                         'set "grade_id" back to "softmax_backward"'),
    "metadata not a dictionary": (lambda: metadata_set(filled_in(), "softmax", "oops"), 4, "softmax",
                                  'set "grade_id" back to "softmax"'),
    "metadata without its flags": (lambda: metadata_set(filled_in(), "softmax", {"grade_id": "softmax"}), 4,
                                   "softmax", "copy the cell's metadata from the released notebook"),
    "metadata emptied": (lambda: metadata_set(filled_in(), "softmax_jacobian", {}), 7, "softmax_jacobian",
                         'set "grade_id" back to "softmax_jacobian"'),
    "answer turned markdown": (lambda: retyped(filled_in(), "softmax", "markdown"), 4, "softmax", "then Y"),
    "two cells, one id": (lambda: two_cells_one_id(filled_in()), 7, "softmax_jacobian",
                          'set "grade_id" back to "softmax_jacobian"'),
    "a test of its own": (lambda: fake_test(filled_in()), 12, "bonus", "remove its nbgrader metadata"),
}


def graded_cells(notebook) -> list[tuple]:
    """(id, cell type, flags) of each cell nbgrader grades or locks, in order: what must be as released."""
    return [(meta["grade_id"], cell.cell_type, *(meta.get(flag, False) for flag in ("grade", "solution", "locked")))
            for cell in notebook.cells if isinstance(meta := cell.metadata.get("nbgrader"), dict)
            and any(meta.get(flag) for flag in ("grade", "solution", "locked"))]


def nbgrader_accepts(notebook) -> bool:
    """nbgrader's CheckCellMetadata passes and the graded cells are the release's (ids, types, flags)."""
    try:
        MetadataValidator().validate_nb(notebook)
        return graded_cells(notebook) == graded_cells(release())
    except (ValidationError, SchemaMismatchError, KeyError, AttributeError, TypeError):
        return False


@needs_ch05
@pytest.mark.parametrize("case", CASES)
def test_each_edit_is_repaired_and_named(case):
    """Is the notebook nbgrader rejects made acceptable, with one message naming the cell and what to do?

    The control: nbgrader rejects the edited notebook (or its graded cells are not the release's).
    Nothing the learner wrote is changed: every cell keeps its text, in its place.
    """
    build, cell, grade_id, action = CASES[case]
    edited = build()
    before = [c.source for c in edited.cells]
    assert not nbgrader_accepts(copy.deepcopy(edited)), "the control: nbgrader would not grade this notebook"
    messages = repair(edited, expected_from_notebook(release()), NOTEBOOK)
    assert nbgrader_accepts(edited), messages
    assert [c.source for c in edited.cells] == before
    [message] = messages
    assert f"cell {cell} (`{first_line(before[cell - 1])}`)" in message and f'"{grade_id}"' in message, message
    assert action in message, message


@needs_ch05
def test_an_unedited_notebook_is_left_alone():
    """No false alarm: the release and a solved notebook come out of the repair as they went in, with no message."""
    for notebook in (release(), filled_in()):
        before = copy.deepcopy(notebook)
        assert repair(notebook, expected_from_notebook(release())) == [] and notebook == before


@needs_ch05
def test_both_copies_of_an_answer_run_and_the_later_carries_the_id():
    """The kernel runs both copies and the later definition wins, so grading does too: both stay code, in order."""
    notebook = duplicated(filled_in(), "softmax", source=WRONG_SOFTMAX, before=True)
    repair(notebook, expected_from_notebook(release()))
    wrong, right = notebook.cells[3], notebook.cells[4]
    assert (wrong.cell_type, wrong.source, "nbgrader" in wrong.metadata) == ("code", WRONG_SOFTMAX, False)
    assert right.cell_type == "code" and right.metadata.nbgrader["grade_id"] == "softmax"


@needs_ch05
def test_a_copy_of_a_test_does_not_run_and_an_edited_one_counts_nothing():
    """A pasted test loses its id and becomes a raw cell, which does not run; a pasted test rewritten to pass is the
    learner's own code; either way the test itself keeps its id, points and lock, once."""
    for source, kind, words in ((None, "raw", "is not run"), ("pass", "code", "does not look like")):
        notebook = duplicated(filled_in(), "test_softmax", source=source, before=True)
        [message] = repair(notebook, expected_from_notebook(release()))
        assert notebook.cells[4].cell_type == kind and "nbgrader" not in notebook.cells[4].metadata
        assert [g for g in graded_cells(notebook) if g[0] == "test_softmax"] == \
            [("test_softmax", "code", True, False, True)]
        released = cells_by_id(release())["test_softmax"].metadata.nbgrader
        assert notebook.cells[5].metadata.nbgrader["points"] == released["points"]
        assert words in message, message


@needs_ch05
def test_a_cell_that_could_be_either_of_two_is_not_guessed():
    """Two copies of the softmax answer, both without an id: neither is given it (graded as the learner's code)."""
    notebook = id_deleted(id_deleted(duplicated(filled_in(), "softmax"), "softmax"), "softmax")
    messages = repair(notebook, expected_from_notebook(release()))
    assert "softmax" not in {g[0] for g in graded_cells(notebook)}
    assert len(messages) == 2 and all("matches no missing cell" in m for m in messages), messages


@pytest.mark.skipif(not (EXERCISES / "ch12_interview").is_dir(), reason="no exercises/ch12_interview")
def test_a_written_answer_keeps_its_id_on_the_copy_that_holds_the_answer():
    """A blank copy of a hand-graded written answer pasted below it does not hide the answer from the grader."""
    released = read(EXERCISES / "ch12_interview" / "ch12_interview.ipynb")
    notebook = copy.deepcopy(released)
    answer = next(c for c in notebook.cells if c.cell_type == "markdown" and c.metadata.nbgrader.get("solution"))
    index, grade_id = notebook.cells.index(answer), answer.metadata.nbgrader.grade_id
    notebook.cells.insert(index + 1, copy.deepcopy(answer))
    answer.source = "Because the variance of the dot product grows with d_k."
    [message] = repair(notebook, expected_from_notebook(released))
    assert cells_by_id(notebook)[grade_id].source == answer.source and f"stays on cell {index + 1}" in message


# --- grading: `sdpa-course grade`, `check` and `validate` ------------------------------------------

SOLVED = tuple(f"test_{grade_id}" for grade_id in IDS)
STUDENTS = {  # student: (the submission, the tests it loses, what its reason must name)
    "honest": (lambda: filled_in(), (), ()),
    "wrong_copy_first": (lambda: duplicated(filled_in(), "softmax", source=WRONG_SOFTMAX, before=True), (),
                         ('cell 4 (`def softmax(x, axis=-1):`) and cell 5 are both the answer cell "softmax"',)),
    "wrong_copy_last": (lambda: duplicated(filled_in(), "softmax", source=WRONG_SOFTMAX), ("test_softmax",),
                        ("the later definition wins",)),
    "renamed_answer": (lambda: renamed(filled_in(), "softmax_jacobian", "jacobian"), (),
                       ('has the id "jacobian"', 'set "grade_id" back to "softmax_jacobian"')),
    "deleted_id": (lambda: id_deleted(filled_in(), "softmax_backward"), (),
                   ('cell 10 (`def softmax_backward(p, grad_p):`) has lost its grade_id',)),
    "duplicated_test": (lambda: duplicated(filled_in(), "test_softmax"), (),
                        ('are both the test cell "test_softmax"', "Delete the copy")),
    # the function not written, its test renamed and emptied: found again, graded from the gradebook, 0
    "renamed_test": (lambda: renamed(filled_in(blank=("softmax",)), "test_softmax", "mine", source="pass"),
                     ("test_softmax",), ('cell 5 (`pass`) has the id "mine"', 'back to "test_softmax"')),
    # the same, moved away: stripped of its metadata, and nbgrader puts the test back from the gradebook
    "renamed_moved_test": (lambda: moved_to_end(renamed(filled_in(blank=("softmax",)), "test_softmax", "mine",
                                                        source="pass"), "mine"),
                           ("test_softmax",), ('has the nbgrader id "mine"', "test cell test_softmax was deleted")),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    """One course, every edited submission graded by one `sdpa-course grade --jobs 2`."""
    course = make_course(tmp_path_factory.mktemp("editing"), ASSIGNMENT)
    digests = {}
    for student, (build, _, _) in STUDENTS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(build(), folder / NOTEBOOK)
        digests[student] = hashlib.sha256((folder / NOTEBOOK).read_bytes()).hexdigest()
    done = subprocess.run([sys.executable, "-m", "sdpa_course.cli", "grade", ASSIGNMENT, "--course", str(course),
                           "--jobs", "2", "--timeout=300"], capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PATH": interpreter_path()})
    path = course / "grades" / f"{ASSIGNMENT}.csv"
    assert path.exists(), done.stdout + done.stderr
    with open(path, newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return {"course": course, "done": done, "rows": rows, "digests": digests}


@pytest.mark.slow
@pytest.mark.xdist_group("notebook_editing")
@needs_ch05
@pytest.mark.parametrize("student", STUDENTS)
def test_an_edited_submission_keeps_the_rest_of_its_points_and_is_told_why(graded, student):
    """Graded (not lost), every test it did not lose at full points, and the export, the status file and the
    feedback name the cell and what to do; a renamed or copied test scores no more than the test itself."""
    course, row = graded["course"], graded["rows"][student]
    _, lost, named = STUDENTS[student]
    assert row["status"] == GRADED, (row, graded["done"].stdout)
    points = {name: (score, most) for name, (score, most, kind) in
              grades(course, ASSIGNMENT, student, ASSIGNMENT).items() if kind == "code"}
    assert set(points) == set(SOLVED), "one grade per test of the gradebook, no more"
    assert {name: score for name, (score, _) in points.items()} == \
        {name: 0 if name in lost else most for name, (_, most) in points.items()}, row
    status = json.loads((course / "grades" / "status.json").read_text())[ASSIGNMENT][student]["reason"]
    feedback = visible_text((course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text())
    for words in named:
        assert words in row["reason"] and words in status, row["reason"]
        if not words.startswith("test cell"):  # the repairs, not nbgrader's own restoring, are in the feedback
            assert words.replace("`", "") in " ".join(feedback.split()), f"{words!r} not in the feedback"
    if not named:
        assert row["reason"] == "" and NOTE_TITLE.strip("*") not in feedback
    submitted = course / "submitted" / student / ASSIGNMENT / NOTEBOOK
    assert hashlib.sha256(submitted.read_bytes()).hexdigest() == graded["digests"][student], "the submission as sent"


def learner_course(folder: Path, exercise) -> dict:
    """A self-learner's course in ``folder`` (ch05's solutions and ``exercise`` as their exercise), and its files."""
    (folder / "course").mkdir()
    course = temporary_course(ROOT, folder / "course")
    shutil.copytree(SOLUTIONS / ASSIGNMENT, course / "solutions" / ASSIGNMENT)
    (course / "exercises" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(exercise, course / "exercises" / ASSIGNMENT / NOTEBOOK)
    env = {**os.environ, "PATH": interpreter_path(), "SDPA_COURSE_SCORES": str(folder / "scores.json"),
           "SDPA_COURSE_CACHE": str(folder / "cache")}
    return {"course": course, "exercise": course / "exercises" / ASSIGNMENT / NOTEBOOK, "env": env}


def sdpa_course(learner: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sdpa_course.cli", *args, "--course", str(learner["course"])],
                          cwd=learner["course"], env=learner["env"], capture_output=True, text=True, timeout=900)


@pytest.mark.slow
@pytest.mark.xdist_group("notebook_editing")
@needs_ch05
def test_check_grades_a_notebook_with_a_pasted_cell_and_says_so(tmp_path):
    """`check 5` on an exercise whose softmax cell was pasted twice: all its points, and the message printed."""
    learner = learner_course(tmp_path, duplicated(filled_in(), "softmax"))
    before = learner["exercise"].read_bytes()
    done = sdpa_course(learner, "check", "5")
    total = sum(cells_by_id(read(SOLUTIONS / ASSIGNMENT / NOTEBOOK))[t].metadata.nbgrader["points"] for t in SOLVED)
    assert f"{total:g} / {total:g}" in done.stdout, done.stdout + done.stderr
    assert 'cell 4 (`def softmax(x, axis=-1):`) and cell 5 are both the answer cell "softmax"' in done.stdout
    assert "Delete the copy you do not want." in done.stdout
    assert learner["exercise"].read_bytes() == before, "check never changes the learner's notebook"


@pytest.mark.slow
@pytest.mark.xdist_group("notebook_editing")
@needs_ch05
def test_validate_names_the_copied_test_and_still_runs_the_tests(tmp_path):
    """`validate` on a notebook with a pasted test cell and a wrong Jacobian: the copy named, the failure reported.

    The control: nbgrader's own validation refuses the notebook (a duplicate grade id).
    """
    exercise = duplicated(filled_in(), "test_softmax")
    cells_by_id(exercise)["softmax_jacobian"].source = WRONG_JACOBIAN
    learner = learner_course(tmp_path, exercise)
    mine = tmp_path / NOTEBOOK
    nbformat.write(exercise, mine)
    before = mine.read_bytes()
    with pytest.raises(ValidationError):
        MetadataValidator().validate_nb(read(mine))
    done = sdpa_course(learner, "validate", str(mine))
    assert 'are both the test cell "test_softmax"' in done.stdout, done.stdout + done.stderr
    assert "1 test(s) failed." in done.stdout and "softmax_jacobian" in done.stdout, done.stdout
    assert done.returncode == 1 and mine.read_bytes() == before
