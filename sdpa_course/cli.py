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
from .i18n.columns import padded
from .i18n.commands import TranslatedParser
from .i18n.language import current_language, language_argument, set_language
from .i18n.messages import N_, _
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
    raise SystemExit("sdpa-course: " + _("no nbgrader_config.py in {folder} or above; run it inside the course "
                                         "repository or pass --course DIR").format(folder=start))


def note(message: str) -> None:
    """Say something the learner should know that is not the command's answer (on stderr)."""
    print(_("note: {message}").format(message=message), file=sys.stderr)


# --- grade: the instructor's class -------------------------------------------------------------------

def sandbox_or_refusal(args: argparse.Namespace) -> int:
    """Say once which protections are off when the sandbox is not usable; 2 if ``--strict`` refuses to go on."""
    from .grading.sandbox import sandbox_status
    status = sandbox_status()
    if status.usable:
        return 0
    if args.strict:
        print("sdpa-course: --strict: " + _("the grading sandbox is not available ({problem}); install bubblewrap "
                                            "(Debian: apt-get install bubblewrap) on a kernel with user namespaces, "
                                            "or drop --strict").format(problem=status.problem), file=sys.stderr)
        return 2
    note(_("{fallback} The verdict is still decided outside the student's code.").format(
        fallback=status.fallback_sentence()))
    return 0


def graded_course(args: argparse.Namespace) -> Path:
    """The course folder an instructor's command works on, its configuration loaded: it sets the language the
    course speaks (``zh/`` speaks Chinese), so that its reasons, feedback pages and tables are in that language."""
    from .grading.worker import course_config
    course = Path(args.course).resolve() if args.course else find_course()
    course_config(course)
    return course


def grade(args: argparse.Namespace) -> int:
    course = graded_course(args)
    limits = Limits(memory_mb=args.memory_mb, timeout=args.timeout, strict=args.strict)
    if sandbox_or_refusal(args):
        return 2
    if not has_assignment(course, args.assignment):
        print("sdpa-course: " + _("{assignment} is not in {gradebook}: run `nbgrader generate_assignment {assignment}` "
                                  "in {course} first (it records the tests that grading restores)").format(
            assignment=args.assignment, gradebook=course / "gradebook.db", course=course), file=sys.stderr)
        return 2
    submitted = submitted_students(course, args.assignment)
    students = args.student or submitted
    unknown = sorted(set(students) - set(submitted))
    if unknown:
        print("sdpa-course: " + _("no submission of {assignment} for {students} in {folder}/<student>/{assignment}").format(
            assignment=args.assignment, students=", ".join(unknown), folder=course / "submitted"), file=sys.stderr)
        return 2
    if not students:
        print(_("no submissions in {folder}/*/{assignment}").format(folder=course / "submitted",
                                                                   assignment=args.assignment))
        return 1
    if not keep_hand_grades_or_consent(course, args, students):
        return 2
    results = grade_class(course, args.assignment, limits, students=students, jobs=args.jobs)
    record_status(course, results)
    generate_class_feedback(course, results)
    exports = write_exports(course)
    print(class_table(results))
    print(_("grades (from the gradebook, hand grades included): {files}; feedback: {folder}").format(
        files=", ".join(str(p) for p in exports), folder=course / "feedback"))
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
    print(_("backup of the gradebook before regrading {count} student(s): {backup}").format(
        count=len(regraded), backup=back_up(course)))
    if not args.reset:
        if hand:
            print(_("hand grades kept for {students} (a hand-graded test whose automatic score changes is flagged for "
                    "review in formgrader)").format(students=", ".join(hand)))
        return True
    if hand and not args.yes:
        dropped = _("--reset drops the hand grades and comments of {students} in {assignment}.").format(
            students=", ".join(hand), assignment=args.assignment)
        if not sys.stdin.isatty():
            print("sdpa-course: " + _("{dropped} Pass --yes to confirm.").format(dropped=dropped), file=sys.stderr)
            return False
        if input(_("{dropped} Go on? [y/N] ").format(dropped=dropped)).strip().lower() not in ("y", "yes"):
            print(_("nothing changed"), file=sys.stderr)
            return False
    remove_submissions(course, args.assignment, regraded)
    return True


def export(args: argparse.Namespace) -> int:
    course = graded_course(args)
    if not (course / "gradebook.db").is_file():
        print("sdpa-course: " + _("no gradebook in {course}: generate and grade an assignment first").format(
            course=course), file=sys.stderr)
        return 2
    written = write_exports(course)
    counts = Counter(row.status for row in class_rows(course))
    print(", ".join(_("{count} {status}").format(count=count, status=_(status))
                    for status, count in sorted(counts.items())) or _("no students yet"))
    print(_("written:"), *written, sep="\n  ")
    return 0


def class_table(results: list[StudentResult]) -> str:
    rows = [f"{padded(_('student'), 20)} {padded(_('points'), 11, right=True)}  {_('status')}"]
    for r in results:
        points = f"{r.score:g} / {r.max_score:g}" if r.status == GRADED else "-"
        reason = _(": {reason}").format(reason=r.reason) if r.reason else ""
        rows.append(f"{padded(r.student, 20)} {points:>11}  {_(r.status)}{reason}")
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
        print(_("chapter {number}: no exercises yet, skipped").format(number=missing.number))
    return present


def check(args: argparse.Namespace) -> int:
    from tqdm import tqdm
    course = Path(args.course).resolve() if args.course else find_course()
    limits = Limits(memory_mb=args.memory_mb, timeout=args.timeout, strict=args.strict)
    if sandbox_or_refusal(args):
        return 2
    source = edition(course, args.lang)
    chosen, results, seen = checkable(source, args.chapters), [], []
    for item in tqdm(chosen, desc=_("checking"), unit=_("chapter"), disable=len(chosen) < 2):
        seen.append(snapshot(source, item.assignment))  # before grading reads them: what the score is for
        results.append(check_one(course, item, limits, source))
    try:
        ScoreStore(report=note).record(source, zip(seen, results))
    except StoreError as error:
        note(_("the scores were not saved for `sdpa-course progress`: {error}").format(error=error))
    print(check_report(chosen, results))
    return 0 if all(r.status == GRADED and r.score == r.max_score for r in results) else 1


def readable(message: str) -> str:
    if message.startswith("NotImplementedError"):
        return _("not written yet (the stub still raises NotImplementedError)")
    return message


def check_report(chosen: list[Chapter], results: list[StudentResult]) -> str:
    """The points per chapter, then every failed test with its message (the hint is in it)."""
    lines = [f"{padded(_('chapter'), 46)} {padded(_('points'), 9, right=True)}"]
    for item, r in zip(chosen, results):
        points = f"{r.score:g} / {r.max_score:g}" if r.status == GRADED else _("not graded")
        lines.append(f"{item.number:>2} {padded(item.shown_title, 43)} {padded(points, 9, right=True)}")
    total = [r for r in results if r.status == GRADED]
    if total:
        points = f"{sum(r.score for r in total):g} / {sum(r.max_score for r in total):g}"
        lines.append(f"{padded(_('total'), 46)} {points:>9}")
    for item, r in zip(chosen, results):
        if r.status != GRADED:
            lines.append("\n" + _("{assignment}: could not be graded: {reason}").format(assignment=item.assignment,
                                                                                       reason=r.reason))
        for test in r.failed:
            message = "\n    ".join(readable(test.message).splitlines()[:12])
            lines.append(f"\n{item.assignment} {test.grade_id} ({test.score:g}/{test.max_score:g}):\n    {message}")
        if r.notes:
            lines.append("\n" + _("{assignment} notes:").format(assignment=item.assignment)
                         + "".join(f"\n  - {note}" for note in r.notes))
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
            print(_("{path}: no such notebook").format(path=path))
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
        return _("{count} cell(s) changed type (code and markdown): start again from the released notebook, or "
                 "change them back").format(count=len(results["type_changed"])), False
    if results.get("changed"):
        return _("{count} test cell(s) were edited: grading uses the originals, so restore them from the released "
                 "notebook").format(count=len(results["changed"])), False
    if not results.get("failed"):
        return _("Success! Your notebook passes all the tests."), True
    parts = [_("{count} test(s) failed.").format(count=len(results["failed"]))]
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
            todo.append(_("{answer} (written)").format(answer=meta.get("grade_id", _("answer"))))
    return todo


def wrong_answer_book() -> str:
    """The quiz's wrong-answer book size, if the quiz is installed and its store readable."""
    try:
        from .quiz.store import AnswerStore
        store = AnswerStore()
        return _("quiz: {book} question(s) in the wrong-answer book, {due} due for review now (sdpa-quiz "
                 "--stats)").format(book=len(store.book()), due=len(store.due()))
    except Exception as error:  # the quiz is optional here: say why it is missing, don't fail the overview
        return _("quiz wrong-answer book: unavailable ({error})").format(error=type(error).__name__)


STALE = {EDITED: (N_("(edited)"), N_("your exercises changed since that check: check the chapter again for their "
                                     "score")),
         OLDER: (N_("(old)"), N_("that check graded an older version of the chapter (its solutions/ changed since): "
                                 "check it again"))}


def progress_row(course: Path, item: Chapter, last: LastCheck | None) -> str:
    folder = course / "exercises" / item.assignment
    notebooks = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    todo = [name for path in notebooks for name in still_to_write(path)]
    work = _("no exercises yet") if not notebooks else (
        _("all written") if not todo else _("to write: {names}").format(names=", ".join(todo)))
    checked = "-" if not last else (
        _("{score:g}/{max_score:g} on {day}").format(score=last.score, max_score=last.max_score, day=last.when[:10])
        if last.status == GRADED else _("not gradable on {day}").format(day=last.when[:10]))
    if last and last.state in STALE:
        checked += f" {_(STALE[last.state][0])}"
    return f"{item.number:>2} {padded(item.shown_title, 43)} {padded(checked, 26, right=True)}  {work}"


def progress(args: argparse.Namespace) -> int:
    course = edition(Path(args.course).resolve() if args.course else find_course(), args.lang)
    try:
        checks = ScoreStore(report=note).last_checks(course)
    except StoreError as error:
        note(_("no scores shown: {error}").format(error=error))
        checks = {}
    print(f"{padded(_('chapter'), 46)} {padded(_('last check (this course)'), 26, right=True)}  {_('exercises')}")
    for item in CHAPTERS:
        print(progress_row(course, item, checks.get(item.assignment)))
    for state in sorted({last.state for last in checks.values()} & set(STALE)):
        mark, meaning = STALE[state]
        print(_("{mark}: {meaning}").format(mark=_(mark), meaning=_(meaning)))
    print(wrong_answer_book())
    return 0


# --- the command line --------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The command line, in the learner's language (build it once the language is set: see :func:`main`)."""
    parser = TranslatedParser(prog="sdpa-course", description=_(
        "``sdpa-course``: grade a class (instructor), check your own exercises and see your progress (self-learner)."))
    commands = parser.add_subparsers(dest="command", required=True)
    course_help = _("course folder (default: the one holding the working folder)")
    grading = commands.add_parser("grade", help=_("instructor: autograde the submissions of an assignment"))
    grading.add_argument("assignment", help=_("e.g. ch05_softmax"))
    grading.add_argument("--student", action="append", metavar="ID",
                         help=_("grade only this student (repeat for several; default: every submission)"))
    grading.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                         help=_("students graded at the same time, each in its own sandbox (default: the cores)"))
    grading.add_argument("--reset", action="store_true",
                         help=_("remove the previous grading first, hand grades included (asks, or see --yes)"))
    grading.add_argument("--yes", action="store_true", help=_("with --reset: drop hand grades without asking"))
    checking = commands.add_parser("check", help=_("self-learner: grade your own exercises/ (hidden tests too)"))
    checking.add_argument("chapters", nargs="*", help=_("chapter numbers or slugs (default: all)"))
    for sub, timeout in ((grading, 900.0), (checking, 600.0)):
        sub.add_argument("--course", help=course_help)
        sub.add_argument("--memory-mb", type=int, default=4096, help=_("address space cap per process (MiB)"))
        sub.add_argument("--timeout", type=float, default=timeout, help=_("seconds per student (wall clock and CPU)"))
        sub.add_argument("--strict", action="store_true",
                         help=_("refuse to grade where the bubblewrap sandbox of the student's kernel is not "
                                "available"))
        sub.set_defaults(run=grade if sub is grading else check)
    exporting = commands.add_parser("export", help=_("instructor: the grades of every student, from the gradebook"))
    exporting.add_argument("--course", help=course_help)
    exporting.set_defaults(run=export)
    validating = commands.add_parser("validate", help=_("self-learner: a notebook's visible tests, messages in full "
                                                        "(what the Validate button runs)"))
    validating.add_argument("notebooks", nargs="+", help=_("notebook files"))
    validating.add_argument("--course", help=course_help)
    validating.set_defaults(run=validate)
    overview = commands.add_parser("progress", help=_("self-learner: the course at a glance"))
    overview.add_argument("--course", help=course_help)
    overview.set_defaults(run=progress)
    for sub in (checking, overview):
        sub.add_argument("--lang", choices=("en", "zh"), default=None,
                         help=_("the edition: en (exercises/) or zh (zh/exercises/); default $SDPA_LANG or the "
                                "locale"))
    return parser


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("expected a whole number, got {text!r}").format(text=text)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(_("expected at least 1, got {value}").format(value=value))
    return value


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    asked = language_argument(argv)
    if asked:
        set_language(asked)  # before the parser is built: its help is in that language
    args = build_parser().parse_args(argv)
    if hasattr(args, "lang"):
        try:
            args.lang = args.lang or current_language()
        except ValueError as error:
            print("sdpa-course: " + _("error: {error}").format(error=error), file=sys.stderr)
            return 2
        set_language(args.lang)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("\n" + _("Interrupted."), file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
