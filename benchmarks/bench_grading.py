"""(6) Autograding one assignment with the real nbgrader CLI: one student, then a class of 20.

In a temporary course directory (a copy of ``nbgrader_config.py`` and ``solutions/<assignment>``)
the assignment is generated, every student submits the reference solution (so every test
runs: the slowest honest case), and ``nbgrader autograde`` grades them.  Baselines, in the
same run: the solution notebook executed headless without nbgrader (for one student), and
20 times the one-student time (for the class: below 1x means fixed costs are shared).
Run alone: ``.venv/bin/python benchmarks/bench_grading.py [--assignment ch05_softmax] [--students 20]``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import ROOT, header, row
from sdpa_course.chapters import CHAPTERS
from sdpa_course.grading.autograde import interpreter_path, nbgrader_command

sys.path.insert(0, str(ROOT / "tests"))
from nbrun import execute_notebook  # noqa: E402


def first_assignment() -> str | None:
    """The first chapter, in course order, that has a folder in solutions/."""
    return next((c.assignment for c in CHAPTERS if (ROOT / "solutions" / c.assignment).is_dir()), None)


def nbgrader(course: Path, *arguments: str) -> float:
    """Run ``nbgrader <arguments>`` in ``course`` with a gradebook there; return the seconds it took."""
    env = {**os.environ, "PATH": interpreter_path()}
    command = nbgrader_command(*arguments, f"--CourseDirectory.root={course}",
                               f"--CourseDirectory.db_url=sqlite:///{course}/gradebook.db", "--log-level=WARN")
    started = time.perf_counter()
    subprocess.run(command, cwd=course, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - started


def make_course(scratch: Path, assignment: str) -> Path:
    """A course directory with the config and the assignment's source, the assignment generated."""
    shutil.copy(ROOT / "nbgrader_config.py", scratch / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions" / assignment, scratch / "solutions" / assignment)
    nbgrader(scratch, "generate_assignment", assignment, "--force")
    return scratch


def submit(course: Path, assignment: str, students: list[str]) -> None:
    """Each student hands in the reference solution under submitted/<student>/<assignment>/."""
    for student in students:
        shutil.copytree(course / "solutions" / assignment, course / "submitted" / student / assignment)


def autograde(course: Path, assignment: str, students: list[str]) -> float:
    submit(course, assignment, students)
    only = [f"--student={students[0]}"] if len(students) == 1 else []
    return nbgrader(course, "autograde", assignment, *only, "--create", "--force")


def plain_run_seconds(assignment: str) -> float:
    notebook = next((ROOT / "solutions" / assignment).glob("*.ipynb"))
    return execute_notebook(notebook)[1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default=first_assignment())
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args(argv)
    header(f"(6) nbgrader autograde, assignment {args.assignment}, 1 student then {args.students}")
    if args.assignment is None or not (ROOT / "solutions" / args.assignment).is_dir():
        row("autograde", "skipped: solutions/ has no assignment yet")
        return
    plain = plain_run_seconds(args.assignment)
    row("baseline: the solution run headless", f"{plain:5.1f} s")
    with tempfile.TemporaryDirectory() as one_dir, tempfile.TemporaryDirectory() as class_dir:
        one = autograde(make_course(Path(one_dir), args.assignment), args.assignment, ["student01"])
        row("one student", f"{one:5.1f} s = {one / plain:4.1f}x the headless run", "no target")
        students = [f"student{n:02d}" for n in range(1, args.students + 1)]
        many = autograde(make_course(Path(class_dir), args.assignment), args.assignment, students)
        row(f"class of {args.students}", f"{many:5.1f} s = {many / (one * args.students):4.2f}x "
            f"{args.students} x one student", "no target")


if __name__ == "__main__":
    main()
