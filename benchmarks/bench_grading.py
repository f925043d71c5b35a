"""(6) Autograding one assignment with the real nbgrader CLI: one student, then a class of 20; and check vs plain.

In a temporary course directory (a copy of ``nbgrader_config.py`` and ``solutions/<assignment>``)
the assignment is generated, every student submits the reference solution (so every test
runs: the slowest honest case), and ``nbgrader autograde`` grades them.  Baselines, in the
same run: the solution notebook executed headless without nbgrader (for one student), and
20 times the one-student time (for the class: below 1x means fixed costs are shared).
Then the grading issue's target: ``sdpa-course check`` of one chapter (the trusted engine in
the sandbox) against one plain ``nbgrader autograde`` of the same solution with nbgrader's own
``Execute`` (no sandbox, tests in the student's kernel), run in turns ``--repeats`` times: the
learner's first check of the chapter (which generates the assignment) and a later one (which
reuses the generated gradebook); the median of the per-run ratios and their range are printed.
Last, the class issue's target: a class of ``--students`` graded by ``sdpa-course grade`` with
``--jobs 2`` against ``--jobs 1`` (at most 0.6x on 2 cores), and per student against plain
batched ``nbgrader autograde``.
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

import numpy as np
from timing import ROOT, header, ratio_spread, row, verdict
from sdpa_course.chapters import CHAPTERS, chapter
from sdpa_course.grading.autograde import interpreter_path, nbgrader_command
from sdpa_course.grading.sandbox import sandbox_status

# nbgrader's own autograde pipeline (what the course's nbgrader_config.py replaces the first step of)
PLAIN_PIPELINE = """
c.Autograde.autograde_preprocessors = [
    "nbgrader.preprocessors.Execute", "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades", "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata"]
"""
CHECK_TARGET = 1.5
PARALLEL_TARGET = 0.6  # a class graded with --jobs 2 on 2 cores, against --jobs 1

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


def make_course(scratch: Path, assignment: str, *, plain: bool = False) -> Path:
    """A course directory with the config and the assignment's source, the assignment generated."""
    shutil.copy(ROOT / "nbgrader_config.py", scratch / "nbgrader_config.py")
    if plain:
        with open(scratch / "nbgrader_config.py", "a") as config:
            config.write(PLAIN_PIPELINE)
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


def plain_autograde_seconds(assignment: str) -> float:
    """One student's ``nbgrader autograde`` with nbgrader's own pipeline, the course generated beforehand."""
    with tempfile.TemporaryDirectory() as scratch:
        return autograde(make_course(Path(scratch), assignment, plain=True), assignment, ["student01"])


def check_seconds(assignment: str, cache: Path) -> float:
    """``sdpa-course check`` of the chapter on a learner's folder whose exercises are the solution.

    ``cache`` is where check keeps generated gradebooks: empty, the check generates the assignment
    (a learner's first check of a chapter); filled by an earlier check, it does not (every later one).
    """
    with tempfile.TemporaryDirectory() as scratch:
        learner = Path(scratch)
        shutil.copy(ROOT / "nbgrader_config.py", learner / "nbgrader_config.py")
        shutil.copytree(ROOT / "solutions" / assignment, learner / "solutions" / assignment)
        shutil.copytree(ROOT / "solutions" / assignment, learner / "exercises" / assignment)
        os.chmod(learner, 0o755)
        env = {**os.environ, "PATH": interpreter_path(), "SDPA_COURSE_SCORES": str(learner / "scores.json"),
               "SDPA_COURSE_CACHE": str(cache)}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sdpa_course.cli", "check", str(chapter(assignment).number),
                        "--course", str(learner)], cwd=learner, env=env, check=True, capture_output=True, text=True)
        return time.perf_counter() - started


def check_against_plain(assignment: str, repeats: int) -> None:
    """The median and range of (check time / plain autograde time), first and later checks, run in turns."""
    # plain is nbgrader autograde alone (its course generated beforehand, untimed); check is the whole command
    times = {"plain": [], "first": [], "later": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            times["plain"].append(plain_autograde_seconds(assignment))
            times["first"].append(check_seconds(assignment, Path(cache)))  # generates, fills the cache
            times["later"].append(check_seconds(assignment, Path(cache)))
    sandbox = "in the sandbox" if sandbox_status().usable else "WITHOUT the sandbox (bwrap not usable here)"
    for kind, what in (("first", "first check (generates)"), ("later", "later checks (cached)")):
        median, figure = ratio_spread(times[kind], times["plain"])
        row(f"sdpa-course check {assignment}, {what}, {sandbox} / plain nbgrader autograde",
            f"{figure} over {repeats} runs; check {np.median(times[kind]):4.1f} s, "
            f"plain {np.median(times['plain']):4.1f} s", f"<= {CHECK_TARGET}x", verdict(median, CHECK_TARGET))


def sdpa_course_grade_seconds(course: Path, assignment: str, jobs: int) -> float:
    """``sdpa-course grade ASSIGNMENT --jobs N --reset --yes`` (every student from clean scores); the seconds it took."""
    env = {**os.environ, "PATH": interpreter_path()}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sdpa_course.cli", "grade", assignment, "--jobs", str(jobs), "--reset",
                    "--yes", "--course", str(course)], cwd=course, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - started


def class_in_parallel(assignment: str, students: int, repeats: int) -> None:
    """A class graded by ``sdpa-course grade`` with --jobs 2 against --jobs 1, and per student against plain batched
    ``nbgrader autograde`` (one process for the whole class, nbgrader's own pipeline), run in turns."""
    names = [f"student{n:02d}" for n in range(1, students + 1)]
    times = {"jobs 2": [], "jobs 1": [], "plain": []}
    with tempfile.TemporaryDirectory() as ours_dir, tempfile.TemporaryDirectory() as plain_dir:
        ours, plain = make_course(Path(ours_dir), assignment), make_course(Path(plain_dir), assignment, plain=True)
        os.chmod(ours, 0o755)
        submit(ours, assignment, names)
        submit(plain, assignment, names)
        for _ in range(repeats):
            times["jobs 2"].append(sdpa_course_grade_seconds(ours, assignment, 2))
            times["jobs 1"].append(sdpa_course_grade_seconds(ours, assignment, 1))
            times["plain"].append(nbgrader(plain, "autograde", assignment, "--create", "--force"))
    median, figure = ratio_spread(times["jobs 2"], times["jobs 1"])
    row(f"class of {students}: sdpa-course grade --jobs 2 / --jobs 1 ({os.cpu_count()} cores)",
        f"{figure} over {repeats} runs; {np.median(times['jobs 2']):5.1f} s vs {np.median(times['jobs 1']):5.1f} s",
        f"<= {PARALLEL_TARGET}x", verdict(median, PARALLEL_TARGET))
    _, figure = ratio_spread(times["jobs 2"], times["plain"])
    row(f"class of {students}: sdpa-course grade --jobs 2 / plain batched nbgrader autograde",
        f"{figure} over {repeats} runs; per student {np.median(times['jobs 2']) / students:4.1f} s vs "
        f"{np.median(times['plain']) / students:4.1f} s", "no target")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default=first_assignment())
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="runs of check vs plain autograde (default 3)")
    parser.add_argument("--class-repeats", type=int, default=2, help="runs of the class in parallel (default 2)")
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
    check_against_plain(args.assignment, args.repeats)
    class_in_parallel(args.assignment, args.students, args.class_repeats)


if __name__ == "__main__":
    main()
