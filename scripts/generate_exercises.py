#!/usr/bin/env python3
"""Regenerate exercises/ from solutions/ with `nbgrader generate_assignment` (what `make exercises` runs).

    python scripts/generate_exercises.py [--output DIR] [assignment ...]

With --output the release is written to DIR instead of exercises/ (the sync test compares the two).
The gradebook used meanwhile is a temporary one, so the repository's state is not touched.
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


def generate(assignments: list[str], output: Path) -> None:
    """Run nbgrader generate_assignment for each assignment that has a solutions/ folder."""
    env = {**os.environ, "PATH": interpreter_path()}
    with tempfile.TemporaryDirectory() as scratch:
        for name in assignments:
            if not (ROOT / "solutions" / name).is_dir():
                print(f"skip {name}: no solutions/{name}", file=sys.stderr)
                continue
            command = [*nbgrader_command("generate_assignment", name, "--force"),
                       f"--CourseDirectory.root={ROOT}", f"--CourseDirectory.release_directory={output}",
                       f"--CourseDirectory.db_url=sqlite:///{scratch}/gradebook.db", "--log-level=WARN"]
            subprocess.run(command, cwd=ROOT, env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignments", nargs="*", default=[c.assignment for c in CHAPTERS])
    parser.add_argument("--output", type=Path, default=ROOT / "exercises")
    arguments = parser.parse_args()
    generate(arguments.assignments, arguments.output.resolve())


if __name__ == "__main__":
    main()
