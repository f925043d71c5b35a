"""A graded class with `sdpa-course grade` and `export`: parallel grading, hand grades kept, one true export.

One course with ch05 generated, a roster of five imported with `nbgrader db student import`
(one never submits), and four submissions: the solution, one function written, the blank
release and a file that is not a notebook.  The class is graded with --jobs 2, the instructor
gives a hand score and a comment (what formgrader writes), and then regrades, regrades one
student, resets, and exports; each step is checked against the gradebook.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from exercise_harness import (SOLUTIONS, grades, make_course, points_per_test, read, release_folder,
                              solution_cells, submit, work)
from nbgrader.api import Gradebook

from sdpa_course.grading.autograde import interpreter_path

ASSIGNMENT = "ch05_softmax"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
WRITTEN = "softmax"  # the partial student wrote this function only
ROSTER = [("ana", "Ana", "Lima", "ana@example.org", "1001"), ("ben", "Ben", "Okafor", "ben@example.org", "1002"),
          ("cai", "Cai", "Wen", "cai@example.org", "1003"), ("dev", "Dev", "Rao", "dev@example.org", "1004"),
          ("eve", "Eve", "Stone", "eve@example.org", "1005")]
SUBMITTED = {"ana": "solution", "ben": "partial", "cai": "blank", "dev": "unreadable"}  # eve never submits

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_class"),
              pytest.mark.skipif(not (SOLUTIONS / ASSIGNMENT).is_dir(), reason=f"no solutions/{ASSIGNMENT}")]


def sdpa_course(course: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sdpa_course.cli", *args, "--course", str(course)],
                          capture_output=True, text=True, input=stdin, timeout=900,
                          env={**os.environ, "PATH": interpreter_path()})


def rows(course: Path, name: str = "grades.csv") -> dict[str, dict]:
    with open(course / "grades" / name, newline="") as handle:
        return {row.get("student") or row["SIS User ID"] or row["Student"]: row for row in csv.DictReader(handle)}


def hand_grade(course: Path, student: str, test: str, score: float, comment: str) -> None:
    """What formgrader saves: a manual score on a test and a grader's comment on an answer cell."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade(test, ASSIGNMENT, ASSIGNMENT, student)
        grade.manual_score, grade.needs_manual_grade = score, False
        gradebook.find_comment(WRITTEN, ASSIGNMENT, ASSIGNMENT, student).manual_comment = comment
        gradebook.db.commit()


def manual(course: Path, student: str, test: str) -> tuple:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return (gradebook.find_grade(test, ASSIGNMENT, ASSIGNMENT, student).manual_score,
                gradebook.find_comment(WRITTEN, ASSIGNMENT, ASSIGNMENT, student).manual_comment)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = make_course(tmp_path_factory.mktemp("class"), ASSIGNMENT)
    os.chmod(course, 0o755)
    roster = course.parent / "roster.csv"
    roster.write_text("id,first_name,last_name,email,lms_user_id\n" + "".join(",".join(r) + "\n" for r in ROSTER))
    subprocess.run([sys.executable, "-m", "nbgrader", "db", "student", "import", str(roster)], cwd=course,
                   check=True, capture_output=True, env={**os.environ, "PATH": interpreter_path()})
    solution, release = read(SOLUTIONS / ASSIGNMENT / NOTEBOOK), read(release_folder(course, ASSIGNMENT) / NOTEBOOK)
    notebooks = {"solution": solution, "blank": release,
                 "partial": work(release, {WRITTEN: solution_cells(solution)[WRITTEN]}, "ben")}
    for student, kind in SUBMITTED.items():
        if kind == "unreadable":
            (course / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
            (course / "submitted" / student / ASSIGNMENT / NOTEBOOK).write_text("{ not a notebook")
        else:
            submit(course, ASSIGNMENT, student, {NOTEBOOK: notebooks[kind]})
    return course


def test_grading_in_parallel_hand_grades_regrades_and_export(course):
    """--jobs 2 grades the class; hand grades survive a regrade and --student; the export follows the gradebook."""
    points = points_per_test(read(SOLUTIONS / ASSIGNMENT / NOTEBOOK))
    total, written_test = sum(points.values()), f"test_{WRITTEN}"

    graded = sdpa_course(course, "grade", ASSIGNMENT, "--jobs", "2")
    assert graded.returncode == 1, "dev's file cannot be graded: the exit status says so\n" + graded.stdout
    table = rows(course)
    assert {s: table[s]["status"] for s in table} == {"ana": "graded", "ben": "graded", "cai": "graded",
                                                      "dev": "ungradable", "eve": "missing"}, graded.stdout
    assert [float(table[s]["score"]) for s in ("ana", "ben", "cai")] == [total, points[written_test], 0]
    assert table["ana"]["email"] == "ana@example.org" and table["ana"]["lms_user_id"] == "1001"
    assert "not a valid notebook" in table["dev"]["reason"] and table["dev"]["score"] == ""
    assert "could not be graded" in (course / "feedback" / "dev" / ASSIGNMENT / "not_graded.html").read_text()

    # The instructor hand-grades ben in formgrader: 1 point more on a test he failed, and a comment.
    failed_test = next(t for t in points if t != written_test)
    hand_grade(course, "ben", failed_test, 1.0, "Right idea, wrong axis.")
    exported = sdpa_course(course, "export")
    assert exported.returncode == 0, exported.stderr
    assert float(rows(course)["ben"]["score"]) == points[written_test] + 1
    assert rows(course)["ben"]["manual_score"] == "1"
    canvas = rows(course, "canvas.csv")
    assert canvas["ben"][ASSIGNMENT] == f"{points[written_test] + 1:g}" and canvas["ben"]["ID"] == "1002"
    assert canvas["dev"][ASSIGNMENT] == "" and canvas["eve"][ASSIGNMENT] == "", "no score for no grading"
    assert canvas["Points Possible"][ASSIGNMENT] == f"{total:g}"

    # Regrading the class, then one student, keeps the hand grade and the comment, with a backup made first.
    ana_notebook = course / "autograded" / "ana" / ASSIGNMENT / NOTEBOOK
    before = ana_notebook.stat().st_mtime_ns
    for extra in ((), ("--student", "ben")):
        again = sdpa_course(course, "grade", ASSIGNMENT, "--jobs", "2", *extra)
        assert "backup of the gradebook" in again.stdout and "hand grades kept for ben" in again.stdout, again.stdout
        assert manual(course, "ben", failed_test) == (1.0, "Right idea, wrong axis.")
        assert float(rows(course)["ben"]["score"]) == points[written_test] + 1
    assert ana_notebook.stat().st_mtime_ns != before, "the class regrade graded ana again"
    feedback = (course / "feedback" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "Right idea, wrong axis." in feedback, "the regrade's feedback carries the grader's comment"
    assert list(course.glob("gradebook.db.backup-*")), "a backup of the gradebook"
    only_ben = ana_notebook.stat().st_mtime_ns
    sdpa_course(course, "grade", ASSIGNMENT, "--student", "ben")
    assert ana_notebook.stat().st_mtime_ns == only_ben, "--student ben left ana alone"
    assert grades(course, ASSIGNMENT, "ana", ASSIGNMENT)[written_test][0] == points[written_test]

    # --reset drops hand grades only when told so.
    refused = sdpa_course(course, "grade", ASSIGNMENT, "--student", "ben", "--reset")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert manual(course, "ben", failed_test) == (1.0, "Right idea, wrong axis.")
    reset = sdpa_course(course, "grade", ASSIGNMENT, "--student", "ben", "--reset", "--yes")
    assert reset.returncode == 0, reset.stdout + reset.stderr
    assert manual(course, "ben", failed_test) == (None, None)
    assert float(rows(course)["ben"]["score"]) == points[written_test]


def test_grade_names_a_student_without_a_submission(course):
    done = sdpa_course(course, "grade", ASSIGNMENT, "--student", "eve")
    assert done.returncode == 2 and "no submission of ch05_softmax for eve" in done.stderr


def auto_scores(course: Path, student: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {grade.name: grade.auto_score for grade in notebook.grades}


def test_parallel_and_sequential_grading_agree(course, tmp_path):
    """The same submissions graded with --jobs 2 and with --jobs 1, each in a copy of the course, get the same
    automatic points per test."""
    import shutil
    copies = {}
    for jobs in ("2", "1"):
        copy = copies[jobs] = tmp_path / f"jobs-{jobs}"
        shutil.copytree(course, copy, ignore=shutil.ignore_patterns("autograded", "feedback", "grades", "gradebook.db*"))
        shutil.copy2(course / "gradebook.db", copy / "gradebook.db")
        os.chmod(copy, 0o755)
        done = sdpa_course(copy, "grade", ASSIGNMENT, "--jobs", jobs, "--reset", "--yes")
        assert done.returncode == 1, done.stdout + done.stderr  # dev's file is not a notebook
    for student in ("ana", "ben", "cai"):
        assert auto_scores(copies["2"], student) == auto_scores(copies["1"], student), student
