#!/usr/bin/env python3
"""Regenerate exercises/ from solutions/ with `nbgrader generate_assignment` (what `make exercises` runs).

    python scripts/generate_exercises.py [--lang zh] [--output DIR] [assignment ...]

With --output the release is written to DIR instead of exercises/ (the sync test compares the two).
``--lang zh`` does the same for the Chinese edition: zh/exercises/ from zh/solutions/ (itself generated
by ``scripts/translate.py build``), with the course's nbgrader_config.py.  The gradebook used meanwhile is
a temporary one, so the repository's state is not touched.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sdpa_course.chapters import CHAPTERS
from sdpa_course.grading.autograde import interpreter_path, nbgrader_command

ROOT = Path(__file__).resolve().parents[1]


def generate(assignments: list[str], output: Path, course: Path = ROOT) -> None:
    """Run nbgrader generate_assignment for each assignment that has a folder in ``course``/solutions/."""
    env = {**os.environ, "PATH": interpreter_path()}
    with tempfile.TemporaryDirectory() as scratch:
        for name in assignments:
            if not (course / "solutions" / name).is_dir():
                print(f"skip {name}: no {(course / 'solutions' / name).relative_to(ROOT)}", file=sys.stderr)
                continue
            command = [*nbgrader_command("generate_assignment", name, "--force"),
                       f"--CourseDirectory.root={course}", f"--CourseDirectory.release_directory={output}",
                       f"--CourseDirectory.db_url=sqlite:///{scratch}/gradebook.db", "--log-level=WARN"]
            subprocess.run(command, cwd=course, env=env, check=True)  # the edition's nbgrader_config.py


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignments", nargs="*", default=[c.assignment for c in CHAPTERS])
    parser.add_argument("--output", type=Path, help="default: exercises/ of the chosen language's course")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    arguments = parser.parse_args()
    course = ROOT if arguments.lang == "en" else ROOT / arguments.lang
    generate(arguments.assignments, (arguments.output or course / "exercises").resolve(), course)


if __name__ == "__main__":
    main()
