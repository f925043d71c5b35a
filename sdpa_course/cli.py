"""``sdpa-course``: grade a class (instructor), check your own exercises and see your progress (self-learner).

    sdpa-course grade ASSIGNMENT [--student ID ...] [--jobs N] [--reset [--yes]] [--course DIR]
                                 [--memory-mb N] [--timeout S] [--strict]
    sdpa-course export [--course DIR]
    sdpa-course check [CHAPTER ...] [--course DIR] [--strict]
    sdpa-course validate NOTEBOOK ... [--course DIR]
    sdpa-course progress [--course DIR]

``grade`` autogrades the submissions in ``submitted/*/ASSIGNMENT`` (or the ``--student`` ones),
``--jobs`` at a time, one bounded worker process and sandbox per student (see
:mod:`sdpa_course.grading.autograde`); this process alone writes the gradebook, and hand grades
are kept (``--reset`` drops them, after asking).  It then writes everyone's feedback in
``feedback/`` and the grades with :mod:`sdpa_course.grading.export` (which ``export`` also runs
on its own, for instance after hand grading): ``grades/grades.csv`` and
``grades/<assignment>.csv`` with a status column (an ungradable submission has a reason, not a 0)
and ``grades/canvas.csv`` for Canvas's gradebook import.

``check`` grades the learner's ``exercises/`` exactly as the instructor would (hidden tests
included) in a temporary course folder, so their notebooks are never touched; it prints the
points per chapter and every failed test with its message, and remembers the scores for
``progress`` (per course folder and version of the chapter, see :mod:`sdpa_course.progress_store`),
which shows per chapter what is still to write, this course's last score and the quiz's
wrong-answer book.  ``validate`` runs a notebook's visible tests as nbgrader's Validate does and
prints each failure's message whole (``nbgrader validate`` cuts every line at 90 characters).
"""
from __future__ import annotations

import argparse
from collections import Counter
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path


from .chapters import CHAPTERS, Chapter, chapter
from .grading.autograde import (EXCEPTION_LINE, GRADED, Limits, StudentResult, generate_class_feedback, grade_class, grade_student,
                                submitted_students)
from .grading.export import class_rows, record_status, write_exports
from .grading.gradebook import back_up, graded_students, hand_graded, has_assignment, remove_submissions
from .json_file import StoreError
from .progress_store import EDITED, OLDER, LastCheck, ScoreStore, snapshot

CACHE_ENV = "SDPA_COURSE_CACHE"  # where `check` keeps generated gradebooks (default: the user cache dir)
LEARNER = "learner"  # the student id of the self-learner in the temporary course
STUB = "raise NotImplementedError()"
ANSWER_STUB = "YOUR ANSWER HERE"


# --- where things are --------------------------------------------------------------------------------

def find_course(start: Path | None = None) -> Path:
    """The course folder: ``start`` (or the working folder) or its nearest parent holding nbgrader_config.py."""
    start = Path(start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "nbgrader_config.py").is_file():
            return folder
    raise SystemExit(f"sdpa-course: no nbgrader_config.py in {start} or above; run it inside the course "
                     f"repository or pass --course DIR")


def note(message: str) -> None:
    """Say something the learner should know that is not the command's answer (on stderr)."""
    print(f"note: {message}", file=sys.stderr)


# --- grade: the instructor's class -------------------------------------------------------------------

def sandbox_or_refusal(args: argparse.Namespace) -> int:
    """Say once which protections are off when the sandbox is not usable; 2 if ``--strict`` refuses to go on."""
    from .grading.sandbox import sandbox_status
    status = sandbox_status()
    if status.usable:
        return 0
    if args.strict:
        print(f"sdpa-course: --strict: the grading sandbox is not available ({status.problem}); install bubblewrap "
              f"(Debian: apt-get install bubblewrap) on a kernel with user namespaces, or drop --strict",
              file=sys.stderr)
        return 2
    print(f"note: {status.fallback_sentence()} The verdict is still decided outside the student's code.",
          file=sys.stderr)
    return 0


def grade(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course()
    limits = Limits(memory_mb=args.memory_mb, timeout=args.timeout, strict=args.strict)
    if sandbox_or_refusal(args):
        return 2
    if not has_assignment(course, args.assignment):
        print(f"sdpa-course: {args.assignment} is not in {course / 'gradebook.db'}: run `nbgrader generate_assignment "
              f"{args.assignment}` in {course} first (it records the tests that grading restores)", file=sys.stderr)
        return 2
    submitted = submitted_students(course, args.assignment)
    students = args.student or submitted
    unknown = sorted(set(students) - set(submitted))
    if unknown:
        print(f"sdpa-course: no submission of {args.assignment} for {', '.join(unknown)} in "
              f"{course / 'submitted'}/<student>/{args.assignment}", file=sys.stderr)
        return 2
    if not students:
        print(f"no submissions in {course / 'submitted'}/*/{args.assignment}")
        return 1
    if not keep_hand_grades_or_consent(course, args, students):
        return 2
    results = grade_class(course, args.assignment, limits, students=students, jobs=args.jobs)
    record_status(course, results)
    generate_class_feedback(course, results)
    exports = write_exports(course)
    print(class_table(results))
    print(f"grades (from the gradebook, hand grades included): {', '.join(str(p) for p in exports)}; "
          f"feedback: {course / 'feedback'}")
    return 0 if all(r.status == GRADED for r in results) else 1


def keep_hand_grades_or_consent(course: Path, args: argparse.Namespace, students: list[str]) -> bool:
    """Back up the gradebook before a regrade; with ``--reset``, get consent to drop hand grades. False: stop.

    A regrade keeps manual scores and comments (and flags a hand-graded test for review if its
    automatic score changed); ``--reset`` removes the submissions first, hand grades included.
    """
    regraded = sorted(graded_students(course, args.assignment) & set(students))
    if not regraded:
        return True
    hand = sorted(hand_graded(course, args.assignment) & set(regraded))
    print(f"backup of the gradebook before regrading {len(regraded)} student(s): {back_up(course)}")
    if not args.reset:
        if hand:
            print(f"hand grades kept for {', '.join(hand)} (a hand-graded test whose automatic score changes is "
                  f"flagged for review in formgrader)")
        return True
    if hand and not args.yes:
        question = (f"--reset drops the hand grades and comments of {', '.join(hand)} in {args.assignment}. "
                    f"Go on? [y/N] ")
        if not sys.stdin.isatty():
            print(f"sdpa-course: {question.split(' Go on')[0]} Pass --yes to confirm.", file=sys.stderr)
            return False
        if input(question).strip().lower() not in ("y", "yes"):
            print("nothing changed", file=sys.stderr)
            return False
    remove_submissions(course, args.assignment, regraded)
    return True


def export(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course()
    if not (course / "gradebook.db").is_file():
        print(f"sdpa-course: no gradebook in {course}: generate and grade an assignment first", file=sys.stderr)
        return 2
    written = write_exports(course)
    counts = Counter(row.status for row in class_rows(course))
    print(", ".join(f"{count} {status}" for status, count in sorted(counts.items())) or "no students yet")
    print("written:", *written, sep="\n  ")
    return 0


def class_table(results: list[StudentResult]) -> str:
    rows = [f"{'student':<20} {'points':>11}  status"]
    for r in results:
        points = f"{r.score:g} / {r.max_score:g}" if r.status == GRADED else "-"
        rows.append(f"{r.student:<20} {points:>11}  {r.status}" + (f": {r.reason}" if r.reason else ""))
    return "\n".join(rows)


# --- check: the self-learner's own exercises ---------------------------------------------------------

def temporary_course(course: Path, folder: Path) -> Path:
    """A course in ``folder`` with the course's configuration, rooted there, and an empty gradebook."""
    config = (course / "nbgrader_config.py").read_text()
    (folder / "nbgrader_config.py").write_text(f"{config}\nc.CourseDirectory.root = {str(folder)!r}\n")
    return folder


def edition(course: Path, language: str) -> Path:
    """The folder holding an edition's solutions/ and exercises/: the course itself in English, ``zh/`` in Chinese."""
    return course if language == "en" else course / language


def check_one(course: Path, item: Chapter, limits: Limits, source: Path | None = None) -> StudentResult:
    """Grade a copy of the chapter's exercises/ in a scratch course generated from solutions/ (or its cache).

    ``source``: the edition whose solutions/ and exercises/ are used (default: the course's, English).
    """
    name, source = item.assignment, source or course
    with tempfile.TemporaryDirectory(prefix="sdpa-check-") as folder:
        scratch = temporary_course(course, Path(folder))
        shutil.copytree(source / "solutions" / name, scratch / "solutions" / name)
        submitted = scratch / "submitted" / LEARNER / name
        submitted.mkdir(parents=True)
        for notebook in (source / "exercises" / name).glob("*.ipynb"):
            shutil.copy2(notebook, submitted / notebook.name)
        return grade_student(scratch, name, LEARNER, limits, generate=True, cache=generated_cache())


def generated_cache() -> Path:
    """Where ``check`` keeps the gradebooks it generated, one per assignment source: ``$SDPA_COURSE_CACHE``, else
    ``gradebooks`` in the user cache directory."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    import platformdirs
    return platformdirs.user_cache_path("sdpa-course", appauthor=False) / "gradebooks"


def checkable(course: Path, keys: list[str]) -> list[Chapter]:
    """The chapters asked for (all by default) that have both exercises/ and solutions/."""
    try:
        wanted = [chapter(key) for key in keys] if keys else list(CHAPTERS)
    except KeyError as error:
        raise SystemExit(f"sdpa-course: {error.args[0]}") from None
    present = [c for c in wanted if (course / "exercises" / c.assignment).is_dir()
               and (course / "solutions" / c.assignment).is_dir()]
    for missing in sorted(set(wanted) - set(present)):
        print(f"chapter {missing.number}: no exercises yet, skipped")
    return present


def check(args: argparse.Namespace) -> int:
    from tqdm import tqdm
    course = Path(args.course).resolve() if args.course else find_course()
    limits = Limits(memory_mb=args.memory_mb, timeout=args.timeout, strict=args.strict)
    if sandbox_or_refusal(args):
        return 2
    source = edition(course, args.lang)
    chosen, results, seen = checkable(source, args.chapters), [], []
    for item in tqdm(chosen, desc="checking", unit="chapter", disable=len(chosen) < 2):
        seen.append(snapshot(source, item.assignment))  # before grading reads them: what the score is for
        results.append(check_one(course, item, limits, source))
    try:
        ScoreStore(report=note).record(source, zip(seen, results))
    except StoreError as error:
        note(f"the scores were not saved for `sdpa-course progress`: {error}")
    print(check_report(chosen, results))
    return 0 if all(r.status == GRADED and r.score == r.max_score for r in results) else 1


def readable(message: str) -> str:
    if message.startswith("NotImplementedError"):
        return "not written yet (the stub still raises NotImplementedError)"
    return message


def check_report(chosen: list[Chapter], results: list[StudentResult]) -> str:
    """The points per chapter, then every failed test with its message (the hint is in it)."""
    lines = [f"{'chapter':<46} {'points':>9}"]
    for item, r in zip(chosen, results):
        points = f"{r.score:g} / {r.max_score:g}" if r.status == GRADED else "not graded"
        lines.append(f"{item.number:>2} {item.title:<43} {points:>9}")
    total = [r for r in results if r.status == GRADED]
    if total:
        points = f"{sum(r.score for r in total):g} / {sum(r.max_score for r in total):g}"
        lines.append(f"{'total':<46} {points:>9}")
    for item, r in zip(chosen, results):
        if r.status != GRADED:
            lines.append(f"\n{item.assignment}: could not be graded: {r.reason}")
        for test in r.failed:
            message = "\n    ".join(readable(test.message).splitlines()[:12])
            lines.append(f"\n{item.assignment} {test.grade_id} ({test.score:g}/{test.max_score:g}):\n    {message}")
        if r.notes:
            lines.append(f"\n{item.assignment} notes:" + "".join(f"\n  - {note}" for note in r.notes))
    return "\n".join(lines)


# --- validate: what the Validate button says, whole -----------------------------------------------

def validate(args: argparse.Namespace) -> int:
    """Run each notebook's visible tests, as ``nbgrader validate`` does, and print each failure's message whole."""
    from nbgrader.validator import Validator

    from .grading.repair import validation_copy
    from .grading.worker import course_config
    course = Path(args.course).resolve() if args.course else find_course()
    config = course_config(course)
    validator, worst = Validator(config=config), 0
    sources = course / config.CourseDirectory.get("source_directory", "source")
    for path in args.notebooks:
        if not Path(path).is_file():
            print(f"{path}: no such notebook")
            worst = 2
            continue
        with validation_copy(Path(path).resolve(), sources) as (repaired, repairs):
            print("".join(f"{path}: {message}\n" for message in repairs), end="")
            report, passed = validation_report(validator.validate(str(repaired)))
        print(f"{path}: {report}")
        worst = max(worst, 0 if passed else 1)
    return worst


def validation_report(results: dict) -> tuple[str, bool]:
    """(what nbgrader's validation found, in full sentences; whether the notebook passes)."""
    if results.get("type_changed"):
        return (f"{len(results['type_changed'])} cell(s) changed type (code and markdown): start again from the "
                f"released notebook, or change them back"), False
    if results.get("changed"):
        return (f"{len(results['changed'])} test cell(s) were edited: grading uses the originals, so restore them "
                f"from the released notebook"), False
    if not results.get("failed"):
        return "Success! Your notebook passes all the tests.", True
    parts = [f"{len(results['failed'])} test(s) failed."]
    for failure in results["failed"]:
        parts.append(f"\n--- {failure['source'].splitlines()[0][:100]}\n{error_part(failure['raw_error'])}")
    return "\n".join(parts), False


def error_part(traceback_text: str) -> str:
    """The exception and its whole message at the end of a traceback (ANSI colours removed)."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", traceback_text).splitlines()
    starts = [i for i, line in enumerate(lines) if EXCEPTION_LINE.match(line.strip())]
    return "\n".join(lines[starts[-1]:] if starts else lines[-3:]).strip()


# --- progress: the course at a glance ----------------------------------------------------------------

def still_to_write(notebook_path: Path) -> list[str]:
    """Names of the functions (or written answers) whose cell still holds the stub."""
    import nbformat  # here, not at the top: it takes seconds to import, and only `progress` reads notebooks
    todo = []
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        if cell.cell_type == "code" and STUB in cell.source:
            todo += re.findall(r"^def (\w+)", cell.source, flags=re.M) or [meta.get("grade_id", "?")]
        elif cell.cell_type == "markdown" and ANSWER_STUB in cell.source:
            todo.append(f"{meta.get('grade_id', 'answer')} (written)")
    return todo


def wrong_answer_book() -> str:
    """The quiz's wrong-answer book size, if the quiz is installed and its store readable."""
    try:
        from .quiz.store import AnswerStore
        store = AnswerStore()
        return (f"quiz: {len(store.book())} question(s) in the wrong-answer book, {len(store.due())} due for review "
                f"now (sdpa-quiz --stats)")
    except Exception as error:  # the quiz is optional here: say why it is missing, don't fail the overview
        return f"quiz wrong-answer book: unavailable ({type(error).__name__})"


STALE = {EDITED: ("(edited)", "your exercises changed since that check: check the chapter again for their score"),
         OLDER: ("(old)", "that check graded an older version of the chapter (its solutions/ changed since): "
                          "check it again")}


def progress_row(course: Path, item: Chapter, last: LastCheck | None) -> str:
    folder = course / "exercises" / item.assignment
    notebooks = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    todo = [name for path in notebooks for name in still_to_write(path)]
    work = "no exercises yet" if not notebooks else ("all written" if not todo else f"to write: {', '.join(todo)}")
    checked = "-" if not last else (f"{last.score:g}/{last.max_score:g} on {last.when[:10]}"
                                    if last.status == GRADED else f"not gradable on {last.when[:10]}")
    if last and last.state in STALE:
        checked += f" {STALE[last.state][0]}"
    return f"{item.number:>2} {item.title:<43} {checked:>26}  {work}"


def progress(args: argparse.Namespace) -> int:
    course = edition(Path(args.course).resolve() if args.course else find_course(), args.lang)
    try:
        checks = ScoreStore(report=note).last_checks(course)
    except StoreError as error:
        note(f"no scores shown: {error}")
        checks = {}
    print(f"{'chapter':<46} {'last check (this course)':>26}  exercises")
    for item in CHAPTERS:
        print(progress_row(course, item, checks.get(item.assignment)))
    for state in sorted({last.state for last in checks.values()} & set(STALE)):
        print(f"{STALE[state][0]}: {STALE[state][1]}")
    print(wrong_answer_book())
    return 0


# --- the command line --------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sdpa-course", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    grading = commands.add_parser("grade", help="instructor: autograde the submissions of an assignment")
    grading.add_argument("assignment", help="e.g. ch05_softmax")
    grading.add_argument("--student", action="append", metavar="ID",
                         help="grade only this student (repeat for several; default: every submission)")
    grading.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                         help="students graded at the same time, each in its own sandbox (default: the cores)")
    grading.add_argument("--reset", action="store_true",
                         help="remove the previous grading first, hand grades included (asks, or see --yes)")
    grading.add_argument("--yes", action="store_true", help="with --reset: drop hand grades without asking")
    checking = commands.add_parser("check", help="self-learner: grade your own exercises/ (hidden tests too)")
    checking.add_argument("chapters", nargs="*", help="chapter numbers or slugs (default: all)")
    for sub, timeout in ((grading, 900.0), (checking, 600.0)):
        sub.add_argument("--course", help="course folder (default: the one holding the working folder)")
        sub.add_argument("--memory-mb", type=int, default=4096, help="address space cap per process (MiB)")
        sub.add_argument("--timeout", type=float, default=timeout, help="seconds per student (wall clock and CPU)")
        sub.add_argument("--strict", action="store_true",
                         help="refuse to grade where the bubblewrap sandbox of the student's kernel is not available")
        sub.set_defaults(run=grade if sub is grading else check)
    exporting = commands.add_parser("export", help="instructor: the grades of every student, from the gradebook")
    exporting.add_argument("--course", help="course folder (default: the one holding the working folder)")
    exporting.set_defaults(run=export)
    validating = commands.add_parser("validate", help="self-learner: a notebook's visible tests, messages in full "
                                                       "(what the Validate button runs)")
    validating.add_argument("notebooks", nargs="+", help="notebook files")
    validating.add_argument("--course", help="course folder (default: the one holding the working folder)")
    validating.set_defaults(run=validate)
    overview = commands.add_parser("progress", help="self-learner: the course at a glance")
    overview.add_argument("--course", help="course folder (default: the one holding the working folder)")
    overview.set_defaults(run=progress)
    for sub in (checking, overview):
        sub.add_argument("--lang", choices=("en", "zh"), default=None,
                         help="the edition: en (exercises/) or zh (zh/exercises/); default $SDPA_LANG or the locale")
    return parser


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "lang"):
        from .i18n.language import current_language, set_language
        try:
            args.lang = args.lang or current_language()
        except ValueError as error:
            print(f"sdpa-course: error: {error}", file=sys.stderr)
            return 2
        set_language(args.lang)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("\nInterrupted.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
