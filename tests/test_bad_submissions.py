"""Bad submissions graded by `sdpa-course grade`: grading finishes, the bad part scores 0 with a clear reason.

One class of students, each bad in one way, is graded once by the command (one bounded
process per student, memory capped low, a short per-cell timeout set in the course's
configuration); each test reads one student's row of grades/<assignment>.csv and their
grades in the gradebook.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from exercise_harness import SOLUTIONS, cells_by_id, grades, make_course, read, release_folder
from nbrun import execute_notebook

from sdpa_course.grading.autograde import GRADED, UNGRADABLE, Limits, grade_class, grade_student, interpreter_path
from sdpa_course.grading.export import class_rows, record_status

ASSIGNMENT = "ch05_softmax"  # the smallest assignment: three functions, three test cells
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
MEMORY_MB = 1500  # low enough that the memory hog meets it long before the machine does
CELL_TIMEOUT = 10
FIRST, SECOND, THIRD = "softmax", "softmax_jacobian", "softmax_backward"  # solution cells, in order

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bad_submissions"),
              pytest.mark.skipif(not (SOLUTIONS / ASSIGNMENT).is_dir(), reason=f"no solutions/{ASSIGNMENT} yet")]

# Submission-local modules that would turn every check into a pass if they were importable at grading:
# an sdpa_lib.py without the graded functions and an sdpa_course package whose tasks pass anything.
SHADOW_FILES = {
    "sdpa_lib.py": "softmax = softmax_jacobian = softmax_backward = None\n",
    "sdpa_course/__init__.py": "",
    "sdpa_course/grading/__init__.py": "",
    "sdpa_course/grading/exercises.py": textwrap.dedent('''\
        class Passes:
            def check(self, *args, **kwargs):
                return 1
            check_random = check


        def task(*args):
            return Passes()
    '''),
}


def edited(notebook, grade_id: str, source: str):
    """A copy of ``notebook`` with the source of cell ``grade_id`` replaced."""
    notebook = nbformat.from_dict(notebook)
    cells_by_id(notebook)[grade_id].source = source
    return notebook


def prefixed(notebook, grade_id: str, code: str):
    """A copy with ``code`` run at the top of cell ``grade_id``."""
    return edited(notebook, grade_id, f"{code}\n{cells_by_id(notebook)[grade_id].source}")


def tampered(release, solution):
    """The blank release with one test cell rewritten to pass and another deleted; the third function solved."""
    notebook = edited(release, f"test_{FIRST}", 'print("all good")')
    notebook = edited(notebook, THIRD, cells_by_id(solution)[THIRD].source)
    notebook.cells = [cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id")
                      != f"test_{SECOND}"]
    return notebook


def with_first_cell_raising(solution):
    notebook = prefixed(solution, FIRST, 'raise RuntimeError("I was not finished")')
    notebook.cells.insert(0, nbformat.v4.new_code_cell("1 / 0"))
    return notebook


def filled_in(release, solution):
    """The release (visible tests only, as students get it) with every solution cell answered."""
    notebook = nbformat.from_dict(release)
    for grade_id, cell in cells_by_id(solution).items():
        if cell.metadata.nbgrader.get("solution"):
            cells_by_id(notebook)[grade_id].source = cell.source
    return notebook


SUBMISSIONS = {
    "honest": lambda s, r: filled_in(r, s),
    "regraded": lambda s, r: s,  # graded again in a test after its submission changes
    "infinite_loop": lambda s, r: edited(s, FIRST, "while True:\n    pass"),
    "first_cell_raises": lambda s, r: with_first_cell_raising(s),
    "huge_output": lambda s, r: prefixed(s, FIRST, 'print(("x" * 99 + "\\n") * 60_000)  # 6 MB'),
    "tampered": lambda s, r: tampered(r, s),
    "memory_hog": lambda s, r: prefixed(s, FIRST, "hog = np.ones(2**29)  # 4 GiB"),
    "memory_leak": lambda s, r: prefixed(s, FIRST, "leak = []\nwhile True:\n    leak.append(np.ones(10**7))"),
    "kernel_exit": lambda s, r: edited(s, FIRST, "import os\nos._exit(3)"),
    "calls_reference": lambda s, r: edited(s, FIRST, "def softmax(x, axis=-1):\n    import sdpa_lib\n"
                                                     "    return sdpa_lib.softmax(x, axis=axis)"),
    "shadow_module": lambda s, r: r,  # plus SHADOW_FILES, below
    "reseeds": lambda s, r: prefixed(s, FIRST, "import random\nrandom.seed(0)\nnp.random.seed(0)"),
    "patches_rng": lambda s, r: prefixed(s, FIRST, "_rng = np.random.default_rng\n"
                                                   "np.random.default_rng = lambda seed=None: _rng(0)"),
    "other_notebook": lambda s, r: nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]),
    "patches_allclose": lambda s, r: edited(s, FIRST, "np.allclose = lambda *args, **kwargs: True\n"
                                                      "def softmax(x, axis=-1):\n    return x"),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = make_course(tmp_path_factory.mktemp("bad"), ASSIGNMENT)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Execute.timeout = {CELL_TIMEOUT}  # the test's short per-cell timeout\n")
    solution, release = read(SOLUTIONS / ASSIGNMENT / NOTEBOOK), read(release_folder(course, ASSIGNMENT) / NOTEBOOK)
    for student, build in SUBMISSIONS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(build(solution, release), folder / NOTEBOOK)
    for name, text in SHADOW_FILES.items():
        (course / "submitted" / "shadow_module" / ASSIGNMENT / name).parent.mkdir(parents=True, exist_ok=True)
        (course / "submitted" / "shadow_module" / ASSIGNMENT / name).write_text(text)
    unreadable = course / "submitted" / "unreadable" / ASSIGNMENT
    unreadable.mkdir(parents=True)
    (unreadable / NOTEBOOK).write_text('{"cells": [ this is not json')
    return course


@pytest.fixture(scope="module")
def graded(course) -> subprocess.CompletedProcess:
    """`sdpa-course grade` over the whole class, once."""
    return subprocess.run([sys.executable, "-m", "sdpa_course.cli", "grade", ASSIGNMENT, "--course", str(course),
                           f"--memory-mb={MEMORY_MB}", "--timeout=300"], capture_output=True, text=True,
                          env={**os.environ, "PATH": interpreter_path()})


@pytest.fixture(scope="module")
def rows(course, graded) -> dict[str, dict]:
    path = course / "grades" / f"{ASSIGNMENT}.csv"
    assert path.exists(), f"sdpa-course grade wrote no {path}:\n{graded.stdout}\n{graded.stderr}"
    with open(path) as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def points(course: Path, student: str) -> dict[str, float]:
    """``{test grade_id: score}`` of the student's autograded notebook."""
    return {name: score for name, (score, _, kind) in grades(course, ASSIGNMENT, student, ASSIGNMENT).items()
            if kind == "code"}


def full(course: Path) -> dict[str, float]:
    """The points of every test cell of the assignment, from the honest student's grades."""
    return {name: max_score for name, (_, max_score, kind) in grades(course, ASSIGNMENT, "honest", ASSIGNMENT).items()
            if kind == "code"}


def test_every_student_gets_a_row_and_the_command_reports_the_ungradable(graded, rows):
    """Does one command grade the whole class, a row each, however bad some submissions are?"""
    assert set(rows) == {*SUBMISSIONS, "unreadable"}, graded.stdout + graded.stderr
    assert graded.returncode == 1, "some submissions were ungradable: the exit status must say so"
    assert "kernel_exit" in graded.stdout and "unreadable" in graded.stdout


def test_honest_and_reseeding_students_get_full_marks(course, rows):
    """Is a correct submission graded in full, and does calling np.random.seed change nothing?"""
    for student in ("honest", "reseeds"):
        assert rows[student]["status"] == GRADED and float(rows[student]["score"]) == float(rows[student]["max_score"])
    assert points(course, "reseeds") == full(course)


@pytest.mark.parametrize("student, reason", [
    ("infinite_loop", "CellTimeoutError"),
    ("first_cell_raises", "RuntimeError: I was not finished"),
    ("memory_hog", "MemoryError"),
])
def test_a_cell_that_fails_costs_only_its_own_test(course, rows, student, reason):
    """A loop stopped by the cell timeout, an exception, the memory cap: only the first function's test is lost."""
    assert rows[student]["status"] == GRADED
    assert reason in rows[student]["reason"], rows[student]
    assert points(course, student) == {**full(course), f"test_{FIRST}": 0}
    assert rows[student]["failed_tests"] == f"test_{FIRST}"


def test_a_memory_leak_is_stopped_with_a_reason(rows):
    """Memory that grows without end meets the cap: the cell fails with MemoryError, or the kernel dies of it."""
    assert "MemoryError" in rows["memory_leak"]["reason"] or "memory limit" in rows["memory_leak"]["reason"]


def test_honest_submissions_report_nothing_wrong(rows):
    """No false alarms: a correct submission (the release filled in) has no reason, no failed test."""
    assert (rows["honest"]["reason"], rows["honest"]["failed_tests"]) == ("", "")


def test_megabytes_of_output_are_cut_and_graded(course, rows):
    """Does 6 MB of printing leave grading and the autograded notebook small?"""
    assert rows["huge_output"]["status"] == GRADED and points(course, "huge_output") == full(course)
    autograded = course / "autograded" / "huge_output" / ASSIGNMENT / NOTEBOOK
    assert autograded.stat().st_size < 500_000, f"{autograded.stat().st_size} bytes"


def test_edited_and_deleted_test_cells_are_restored(course, rows):
    """A test cell rewritten to pass and one deleted: both are put back from the gradebook and score 0."""
    assert points(course, "tampered") == {**full(course), f"test_{FIRST}": 0, f"test_{SECOND}": 0}
    reason = rows["tampered"]["reason"]
    assert f"test cell test_{SECOND} was deleted (restored for grading)" in reason
    assert f"test cell test_{FIRST} was edited (graded as the original)" in reason
    restored = cells_by_id(read(course / "autograded" / "tampered" / ASSIGNMENT / NOTEBOOK))
    assert 'print("all good")' not in restored[f"test_{FIRST}"].source and f"test_{SECOND}" in restored


@pytest.mark.parametrize("student, reason", [
    ("kernel_exit", "the kernel died"),
    ("unreadable", "cannot be read"),
    ("other_notebook", "test cells are missing"),
])
def test_ungradable_submissions_are_named_with_a_reason_not_a_zero(course, rows, student, reason):
    """A kernel that exits, a file that is not a notebook, another notebook: ungradable, a reason, no score at all."""
    assert rows[student]["status"] == UNGRADABLE and reason in rows[student]["reason"]
    assert rows[student]["score"] == ""


def test_calling_the_reference_scores_zero_with_the_reason(course, rows):
    """A softmax that calls sdpa_lib.softmax loses that test, and the feedback says why."""
    assert points(course, "calls_reference") == {**full(course), f"test_{FIRST}": 0}
    feedback = (course / "feedback" / "calls_reference" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "ForbiddenCallError" in feedback and "sdpa_lib.softmax is not available while your work is graded" in feedback


def test_a_shipped_sdpa_lib_cannot_shadow_the_reference(course, rows, tmp_path):
    """A blank notebook with its own sdpa_lib.py and sdpa_course package still scores 0: they are not used.

    The control: run beside the notebook, they do make every test cell pass.
    """
    assert float(rows["shadow_module"]["score"]) == 0
    assert not any((course / "autograded" / "shadow_module" / ASSIGNMENT / name).exists() for name in SHADOW_FILES)
    shutil.copytree(course / "submitted" / "shadow_module" / ASSIGNMENT, tmp_path, dirs_exist_ok=True)
    cheated, _ = execute_notebook(tmp_path / NOTEBOOK, allow_errors=True)
    assert [cell for cell in cheated.cells if cell.metadata.get("nbgrader", {}).get("grade")
            and any(output.output_type == "error" for output in cell.outputs)] == []


def test_monkeypatched_numpy_changes_nothing(course, rows):
    """Replacing numpy functions in the student's kernel cannot touch the checks, which run in the grader.

    A seeded ``default_rng`` leaves the honest functions their full marks; an ``np.allclose`` that always
    says True does not save an identity softmax, which loses its test as it would anyway.
    """
    assert points(course, "patches_rng") == full(course)
    assert points(course, "patches_allclose") == {**full(course), f"test_{FIRST}": 0}
    feedback = (course / "feedback" / "patches_allclose" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "wrong answer on inputs" in feedback


def test_a_regrade_replaces_the_scores_and_an_ungradable_one_is_marked(course, rows):
    """After the submission changes, the old full marks are gone: the blank scores 0; an unreadable file then leaves
    the gradebook's last grading in place, and the export says ungradable, with the reason and no score."""
    folder = course / "submitted" / "regraded" / ASSIGNMENT
    limits = Limits(memory_mb=MEMORY_MB, timeout=300)
    assert float(rows["regraded"]["score"]) == float(rows["regraded"]["max_score"])
    nbformat.write(read(release_folder(course, ASSIGNMENT) / NOTEBOOK), folder / NOTEBOOK)
    [blank] = grade_class(course, ASSIGNMENT, limits, students=["regraded"], progress=False)
    assert blank.score == 0 and set(points(course, "regraded").values()) == {0}
    (folder / NOTEBOOK).write_text("not a notebook")
    [unreadable] = grade_class(course, ASSIGNMENT, limits, students=["regraded"], progress=False)
    record_status(course, [unreadable])
    assert unreadable.status == UNGRADABLE and set(points(course, "regraded").values()) == {0}, "the last grading"
    [row] = [r for r in class_rows(course, [ASSIGNMENT]) if r.student == "regraded"]
    assert (row.status, row.score) == (UNGRADABLE, None) and "cannot be read" in row.reason


def processes_in(folder: Path) -> list[int]:
    """Processes whose working folder is inside ``folder`` (a kernel runs in the autograded folder)."""
    found = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            if str(cwd.resolve()).startswith(str(folder)):
                found.append(int(cwd.parent.name))
        except OSError:
            continue
    return found


def test_the_wall_clock_timeout_stops_grading_and_its_kernel(course, rows):
    """A notebook slower than the time allowed (cells each under the cell timeout) is stopped, kernel and all."""
    naps = read(SOLUTIONS / ASSIGNMENT / NOTEBOOK)
    for grade_id in (FIRST, SECOND, THIRD):
        naps = prefixed(naps, grade_id, "import time\ntime.sleep(8)")
    folder = course / "submitted" / "sleeper" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(naps, folder / NOTEBOOK)
    result = grade_student(course, ASSIGNMENT, "sleeper", Limits(memory_mb=MEMORY_MB, timeout=20))
    assert result.status == UNGRADABLE and "longer than 20 s" in result.reason
    assert processes_in(course) == []
