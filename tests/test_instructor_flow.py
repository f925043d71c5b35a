"""The whole nbgrader exchange flow, with the real command-line tools, for three students.

The instructor releases an assignment to an exchange folder; three students, each with
their own HOME, fetch it, work (one perfectly, one partly with a catalogued mistake,
one not at all) and submit; the instructor collects, autogrades, generates and releases
feedback, and exports the grades; each student fetches their feedback.
"""
from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from exercise_harness import (HIDDEN_REGION, SOLUTIONS, WRONG_JACOBIAN, make_course, points_per_test, read,
                              region_lines, solution_cells, visible_text, work)

from sdpa_course.grading.autograde import interpreter_path, nbgrader_command

ASSIGNMENT = "ch05_softmax"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
COURSE_ID = "sdpa"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("instructor_flow"),
              pytest.mark.skipif(not (SOLUTIONS / ASSIGNMENT).is_dir(), reason=f"no solutions/{ASSIGNMENT} yet")]


def run(cwd: Path, home: Path, exchange: Path, *args: str) -> str:
    """``nbgrader <args>`` in ``cwd`` as the user whose HOME is ``home``, against the exchange folder."""
    env = {**os.environ, "HOME": str(home), "PATH": interpreter_path(),
           "SDPA_HEADLESS": "1", "MPLBACKEND": "Agg"}
    done = subprocess.run(nbgrader_command(*args, f"--Exchange.root={exchange}", "--log-level=INFO"), cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def flow(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("flow")
    exchange, instructor = root / "exchange", root / "instructor"
    exchange.mkdir()
    instructor.mkdir()
    (root / "course").mkdir()
    course = make_course(root / "course", ASSIGNMENT)
    solution = read(SOLUTIONS / ASSIGNMENT / NOTEBOOK)
    first = next(iter(solution_cells(solution)))
    answers = {"perfect": solution_cells(solution), "partial": {first: solution_cells(solution)[first],
                                                                "softmax_jacobian": WRONG_JACOBIAN},
               "blank": {}}
    run(course, instructor, exchange, "release_assignment", ASSIGNMENT, "--force")
    homes = {student: root / "home" / student for student in answers}
    for student, home in homes.items():
        home.mkdir(parents=True)
        student_args = (f"--course={COURSE_ID}", f"--CourseDirectory.student_id={student}")
        run(home, home, exchange, "fetch_assignment", ASSIGNMENT, *student_args)
        nbformat.write(work(read(home / ASSIGNMENT / NOTEBOOK), answers[student], student), home / ASSIGNMENT / NOTEBOOK)
        run(home, home, exchange, "submit", ASSIGNMENT, *student_args)
    run(course, instructor, exchange, "collect", ASSIGNMENT)
    run(course, instructor, exchange, "autograde", ASSIGNMENT, "--force", "--Autograde.create_student=True")
    run(course, instructor, exchange, "generate_feedback", ASSIGNMENT, "--force")
    run(course, instructor, exchange, "release_feedback", ASSIGNMENT)
    for student, home in homes.items():
        run(home, home, exchange, "fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}",
            f"--CourseDirectory.student_id={student}")
    run(course, instructor, exchange, "export", f"--CsvExportPlugin.to={root / 'grades.csv'}")
    return {"course": course, "homes": homes, "grades": root / "grades.csv", "solution": solution}


def fetched_feedback(home: Path) -> list[Path]:
    return sorted((home / ASSIGNMENT / "feedback").glob("*/*.html"))


def test_exported_scores(flow):
    """Does the exported CSV hold each student's score: all points, the first test's points, none?"""
    points = points_per_test(flow["solution"])
    with open(flow["grades"]) as handle:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)
                  if row["assignment"] == ASSIGNMENT}
    first_test = next(iter(points.values()))
    assert scores == {"perfect": sum(points.values()), "partial": first_test, "blank": 0.0}


def test_each_student_fetched_their_own_feedback_only(flow):
    """One feedback page each, naming its author and nobody else."""
    for student, home in flow["homes"].items():
        pages = fetched_feedback(home)
        assert len(pages) == 1, f"{student} fetched {pages}"
        text = pages[0].read_text()
        assert f"marker-{student}-end" in text
        assert [other for other in flow["homes"] if other != student and f"marker-{other}-end" in text] == []


def test_feedback_shows_messages_not_hidden_tests(flow):
    """The partial student's page explains the failed test (the named mistake) and quotes no hidden test line."""
    text = visible_text(fetched_feedback(flow["homes"]["partial"])[0].read_text())
    assert "This looks like a known mistake" in text and "GradingError" in text
    hidden = region_lines(flow["solution"], HIDDEN_REGION)
    assert hidden, "the assignment has hidden tests to look for"
    assert [line for line in hidden if line in text] == []
    visible_test_line = 'print("softmax: visible checks passed")'
    assert visible_test_line in text, "the visible test source is shown, so the search above can find source lines"
