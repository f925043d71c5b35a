"""``sdpa-quiz``: the quiz in a terminal.

Asks questions from the bank (by chapter, tag or difficulty), a timed mock interview
(``--mock N``) or the reviews that FSRS says are due (``--review``), or runs a timed coding
drill (``--drill NAME``, ``--drills`` lists them: :mod:`~sdpa_course.quiz.drill_terminal`); explains every answer;
saves each answer at once, with the time it took and its rating; prints the score by chapter
at the end.  ``--stats`` shows retention and what falls due this week.
Bad input re-prompts; end of input or Ctrl-C stops cleanly with everything answered so
far saved.
"""
from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from typing import Callable

import numpy as np

from fsrs import Rating

from ..i18n.commands import TranslatedParser
from ..i18n.language import LANGUAGES, language_argument, set_language
from ..i18n.messages import _
from .countdown import Countdown, read_line
from .engine import (AnswerError, Presented, QuizSession, answer_hint, describe, feedback, format_question,
                     late_feedback, late_note, parse_answer, shown)
from .modes import (MOCK_SECONDS_PER_QUESTION, NothingToAsk, book_in_bank, choose_questions, due_drills, due_in_bank,
                    next_due_note)
from .schedule import answer_rating
from .stats import stats_report
from .schema import DIFFICULTIES
from .store import STORE_ENV, TODAY_ENV, AnswerStore, StoreError, today_clock  # noqa: F401 (re-exported)

QUIT_WORDS = {"q", "quit", "exit"}


def not_readable() -> str:
    return "  " + _("That line was not readable (it is not UTF-8 text); type it again.")


class StopQuiz(Exception):
    """The learner asked to stop (typed q, or the input ended)."""


def build_parser() -> argparse.ArgumentParser:
    parser = TranslatedParser(
        prog="sdpa-quiz",
        description=_("Interview review for scaled dot-product attention: quiz yourself, "
                      "and re-ask what you got wrong (the wrong-answer book) until you know it."))
    parser.add_argument("--chapter", help=_("chapter number or slug, e.g. 4 or scaling"))
    parser.add_argument("--tag", help=_("topic tag, e.g. masks, multi-head, complexity"))
    parser.add_argument("--difficulty", choices=DIFFICULTIES)
    parser.add_argument("--mock", type=int, metavar="N",
                        help=_("timed mock interview: N random questions (filters apply), a countdown of "
                               "{seconds} s for each; a late answer is saved as late and counts as wrong").format(
                            seconds=MOCK_SECONDS_PER_QUESTION))
    parser.add_argument("--review", action="store_true",
                        help=_("ask the answered questions that are due again (FSRS schedule), the most forgotten "
                               "first"))
    parser.add_argument("--rate", action="store_true",
                        help=_("after a right answer, ask how hard it was (hard / good / easy) instead of deriving it"))
    parser.add_argument("--stats", action="store_true", help=_("show retention, the wrong-answer book and what is due "
                                                               "this week, then stop"))
    parser.add_argument("--limit", type=int, metavar="N", help=_("ask at most N questions"))
    parser.add_argument("--store", help=_("answer file (default: ${variable} or the user data directory)").format(
        variable=STORE_ENV))
    parser.add_argument("--seed", type=int, help=_("seed for the question and option order"))
    parser.add_argument("--lang", choices=LANGUAGES, help=_("the questions' language (default: $SDPA_LANG, else the "
                                                            "locale: zh_CN gives Chinese); what is not translated yet "
                                                            "stays English"))
    parser.add_argument("--export-anki", metavar="FILE.apkg",
                        help=_("write the questions (filters apply) as an Anki deck instead of quizzing"))
    add_drill_options(parser)
    return parser


def add_drill_options(parser: argparse.ArgumentParser) -> None:
    """The coding drills' options (:mod:`sdpa_course.quiz.drill_terminal`)."""
    drills = parser.add_argument_group(_("coding drills"), _("timed 'write it from scratch' tasks, graded by the "
                                                             "course's grading engine"))
    drills.add_argument("--drill", metavar="NAME", help=_("do one coding drill (--drill list: the drills)"))
    drills.add_argument("--drills", action="store_true", help=_("list the coding drills and their time budgets"))
    drills.add_argument("--drill-file", metavar="PATH",
                        help=_("the drill's file (default ./drill_<name>.py, reused when it exists)"))


def drill_command(args: argparse.Namespace) -> int:
    """``--drill NAME`` or ``--drills``: a coding drill, or their list, recorded in the answer store."""
    from .drill_terminal import drill_table, run_drill
    if args.drill_file and not args.drill:
        print("sdpa-quiz: " + _("error: {problem}").format(
            problem=_("--drill-file needs --drill NAME (sdpa-quiz --drills lists them)")), file=sys.stderr)
        return 2
    try:
        store = AnswerStore(args.store, clock=today_clock(), report=lambda message: print(message, file=sys.stderr))
        store.answers()  # reads the store now: a path that is not a store stops here
    except (ValueError, StoreError) as error:
        print("sdpa-quiz: " + _("error: {problem}").format(problem=error), file=sys.stderr)
        return 2
    if args.drills or args.drill.strip().lower() == "list":
        print(drill_table(store))
        return 0
    return run_drill(args.drill, store, file=args.drill_file)


def ask_line(prompt: str, read: Callable[[str], str]) -> str:
    """One line of input; ``StopQuiz`` on end of input or a quit word; a line that is not text is asked again."""
    while True:
        try:
            line = read(prompt)
        except EOFError:
            print("\n" + _("End of input: stopping the quiz."))
            raise StopQuiz from None
        except UnicodeDecodeError:  # stdin could not be made tolerant (see main)
            print(not_readable())
            continue
        if any("\udc80" <= character <= "\udcff" for character in line):  # bytes kept by surrogateescape
            print(not_readable())
            continue
        if line.strip().lower() in QUIT_WORDS:
            raise StopQuiz
        return line


def ask_answer(presented: Presented, read: Callable[[str], str]):
    """Prompt until the answer can be read; the open question first shows the model answer."""
    if presented.question.type == "open":
        ask_line(_("Think (or write) your answer, then press Enter to see the model answer. "), read)
        print(_("Model answer:") + f"\n{presented.question.model_answer}\n")
    while True:
        try:
            return parse_answer(presented, ask_line(_("Your answer ({hint}; q quits): ").format(
                hint=answer_hint(presented)), read))
        except AnswerError as error:
            print(f"  {error}")


@contextlib.contextmanager
def interrupts_deferred():
    """Hold Ctrl-C until the block is done (main thread only), so an answer is saved and counted whole."""
    received = []
    previous = signal.signal(signal.SIGINT, lambda *_: received.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


class Recorder:
    """Saves each answer to the store; after a write failure it warns once and goes on unsaved."""

    def __init__(self, store: AnswerStore):
        self.store, self.saved, self.failed = store, 0, False

    def __call__(self, presented: Presented, answer, correct: bool, late: str | None = None, *,
                 seconds: float | None = None, rating: int | None = None) -> None:
        if self.failed:
            return
        chosen = describe(presented, answer) + (f" ({late})" if late else "")
        try:
            with interrupts_deferred():
                self.store.record(presented.question.id, correct, chosen, seconds=seconds, late=late is not None,
                                  rating=rating)
                self.saved += 1
        except StoreError as error:
            self.failed = True
            print(_("Warning: {error}. The quiz goes on, but answers are no longer saved.").format(error=error),
                  file=sys.stderr)


def ask_rating(derived: Rating, read: Callable[[str], str]) -> Rating:
    """The learner's rating of a right answer: hard, good or easy (Enter keeps ``derived``)."""
    choices = {"h": Rating.Hard, "hard": Rating.Hard, "g": Rating.Good, "good": Rating.Good,
               "e": Rating.Easy, "easy": Rating.Easy}
    while True:
        line = ask_line(_("How did that feel? h = hard, g = good, e = easy (Enter: {rating}): ").format(
            rating=derived.name.lower()), read)
        if not line.strip():
            return derived
        if line.strip().lower() in choices:
            return choices[line.strip().lower()]
        print("  " + _("{typed} is not a rating; type h, g or e, or press Enter").format(typed=shown(line)))


def run_quiz(session: QuizSession, record: Callable, *, read: Callable[[str], str] = input,
             seconds_per_question: float | None = None, clock: Callable[[], float] = time.monotonic,
             timed_read: Callable[[str, Countdown], str] = read_line, rate: bool = False) -> None:
    """Ask every question of ``session``, saving each answer with ``record``; stops on q or EOF.

    Each answer is saved with the seconds it took and its rating (derived from right/wrong and
    time, or asked after a right answer when ``rate``).  With ``seconds_per_question`` (a mock
    interview) each question has its own countdown, read with ``timed_read(prompt, countdown)``
    (the prompt shows the time left; on a terminal, warnings as it runs out).  An answer given
    after its time is recorded as late and wrong (``record(presented, answer, False, "late: ...")``),
    and the interview goes on; questions left unanswered count as wrong in the session's total.
    """
    try:
        for number in range(1, len(session.items) + 1):
            presented = session.current
            print(f"\n{format_question(presented, number)}")
            shown_at = clock()
            countdown = Countdown(seconds_per_question, clock=clock) if seconds_per_question else None
            reader = read if countdown is None else (lambda prompt: timed_read(prompt, countdown))
            try:
                answer = ask_answer(presented, reader)
            except StopQuiz:
                return
            seconds = clock() - shown_at
            if countdown is not None and countdown.expired:
                late = late_note(seconds, seconds_per_question)
                session.record(False)
                record(presented, answer, False, late, seconds=seconds)
                print(late_feedback(presented, late))
                continue
            correct = session.submit(answer)
            print(feedback(presented, answer))
            if countdown is not None:
                print("[" + _("{seconds} s of {budget} s").format(seconds=f"{seconds:.0f}",
                                                                   budget=f"{seconds_per_question:.0f}") + "]")
            rating = answer_rating(presented.question.type, correct, seconds)
            if rate and correct:
                try:
                    rating = ask_rating(rating, read)
                except StopQuiz:
                    record(presented, answer, correct, seconds=seconds, rating=int(rating))
                    return
            record(presented, answer, correct, seconds=seconds, rating=int(rating))
    finally:
        if seconds_per_question is not None:
            session.close()


def book_status(store: AnswerStore) -> str:
    """The book's size and what is due now, over the questions still in the bank (as ``--review`` asks)."""
    book, due = book_in_bank(store)[0], due_in_bank(store)
    status = _("Wrong-answer book: {book} question(s). Due for review now: {due}").format(book=len(book), due=len(due))
    status += _(" (sdpa-quiz --review).") if due else _("; {note}.").format(note=next_due_note(store))
    drills = due_drills(store)
    if drills:
        status += "\n" + drills_due(drills)
    return status


def drills_due(drills: list[str]) -> str:
    """The line naming the coding drills due again, and how to start the first."""
    return _("Coding drills due again: {drills} (sdpa-quiz --drill {first}).").format(drills=", ".join(drills),
                                                                                      first=drills[0])


def main(argv=None) -> int:
    """Entry point of ``sdpa-quiz``; returns the exit status (0, 2 for bad options, 130 after Ctrl-C)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if language_argument(argv):  # before the parser is built: its help speaks the language too
        set_language(language_argument(argv))
    args = build_parser().parse_args(argv)
    if args.lang:  # also an abbreviated --la zh, which only the parser reads
        set_language(args.lang)
    if args.export_anki is not None:
        return export_anki_command(args)
    with contextlib.suppress(AttributeError, ValueError):  # a stray non-UTF-8 byte must not end the quiz
        sys.stdin.reconfigure(errors="surrogateescape")
    try:
        return drill_command(args) if args.drill or args.drills or args.drill_file else quiz(args)
    except KeyboardInterrupt:  # before or after the questions: nothing unsaved to lose
        print("\n" + _("Interrupted."))
        return 130


def quiz(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    try:
        store = AnswerStore(args.store, clock=today_clock(), report=lambda message: print(message, file=sys.stderr))
        stale = book_in_bank(store)[1]  # reads the store now: a path that is not a store stops here
        if stale:
            print(_("Note: {count} answer(s) are for questions no longer in the bank; they are left out.").format(
                count=stale), file=sys.stderr)
        if args.stats:
            print(stats_report(store))
            return 0
        questions = choose_questions(chapter=args.chapter, tag=args.tag, difficulty=args.difficulty,
                                     mock=args.mock, review=args.review, store=store, rng=rng, limit=args.limit)
    except NothingToAsk as message:
        print(message)
        drills = due_drills(store) if args.review else []
        if drills:
            print(drills_due(drills))
        return 0
    except (ValueError, StoreError) as error:
        print("sdpa-quiz: " + _("error: {problem}").format(problem=error), file=sys.stderr)
        return 2
    session, recorder = QuizSession.start(questions, rng), Recorder(store)
    per_question = MOCK_SECONDS_PER_QUESTION if args.mock else None
    print(_("{count} question(s). Answers are saved to {store}.").format(count=len(questions), store=store.path))
    status = 0
    try:
        run_quiz(session, recorder, seconds_per_question=per_question, rate=args.rate)
    except KeyboardInterrupt:
        print("\n" + _("Interrupted."))
        status = 130
    print(f"\n{session.summary()}\n" + _("{count} answer(s) saved to {store}.").format(count=recorder.saved,
                                                                                       store=store.path))
    if not recorder.failed:
        print(book_status(store))
    return status


def export_anki_command(args: argparse.Namespace) -> int:
    """``--export-anki FILE.apkg``: write the chosen questions as an Anki deck; 2 for a bad path or filter."""
    from .anki import export_anki  # genanki is loaded only for an export
    from .bank import select
    others = [f"--{name}" for name in ("mock", "review", "limit", "store", "seed")
              if getattr(args, name) is not None and getattr(args, name) is not False]
    try:
        if others:
            raise ValueError(_("--export-anki takes only --chapter, --tag and --difficulty, not {options}").format(
                options=", ".join(others)))
        summary = export_anki(args.export_anki, select(chapter=args.chapter, tag=args.tag, difficulty=args.difficulty))
    except ValueError as error:
        print("sdpa-quiz: " + _("error: {problem}").format(problem=error), file=sys.stderr)
        return 2
    except OSError as error:
        print("sdpa-quiz: " + _("error: {problem}").format(problem=_("cannot write {file}: {reason}").format(
            file=args.export_anki, reason=error.strerror or error)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n" + _("Interrupted: {file} was not written.").format(file=args.export_anki))
        return 130
    print(f"{summary}\n" + _("Import it in Anki (File > Import); importing a newer export again updates these notes."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
