"""The answer log and the wrong-answer book (错题本), kept in one JSON file.

The file holds every answer ever given (question id, right or wrong, the answer chosen,
time and day).  The book is derived from it with a two-box Leitner schedule:

* a wrong answer puts the question in box 1 of the book, due at once;
* a right answer to a question in box 1 moves it to box 2, due the next day;
* a right answer to a question in box 2 *on a later day* takes it out of the book
  (two right answers in a row on different days); a right answer on the same day
  changes nothing; any wrong answer sends it back to box 1.

Every answer is written at once, and the file is one JSON document kept as
:mod:`~sdpa_course.json_file` keeps it: under an exclusive lock the file is read again, the
answer appended and the whole replaced atomically.  So a crash or Ctrl-C loses no earlier
answer, and two quizzes running at once never drop each other's answers.  A store file the
quiz wrote that cannot be read as one is renamed ``<name>.corrupt-<timestamp>``, reported,
and a fresh store is started; any other file (a folder, README.md, a file without read
permission) raises :class:`StoreError` and is left alone.  A row whose fields have the wrong
types (an id that is not a string, ``"correct": "false"``) is skipped, with one warning, and
kept in the file.

The day of an answer comes from :func:`today_clock`, the one clock of the terminal and the
notebook: now, or ``$SDPA_QUIZ_TODAY`` (an ISO date) at the current time of day.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable

from ..json_file import JsonFile, StoreError

STORE_ENV = "SDPA_QUIZ_STORE"
TODAY_ENV = "SDPA_QUIZ_TODAY"  # pretend today is this ISO date: try the schedule, test it
FORMAT = "sdpa-quiz-store"
VERSION = 1
SIGNATURE = f'"format": "{FORMAT}"'  # how json.dumps(..., indent=1) starts every store this module writes
FIELDS = {"id": str, "correct": bool, "chosen": str, "time": str, "day": str}  # an answer row's fields

__all__ = ["STORE_ENV", "TODAY_ENV", "AnswerStore", "BookEntry", "StoreError", "default_store_path",
           "today_clock"]


def today_clock() -> Callable[[], datetime]:
    """The quiz's clock (terminal and notebook): now, or ``$SDPA_QUIZ_TODAY`` at the current time of day.

    Raises ``ValueError`` when ``$SDPA_QUIZ_TODAY`` is not an ISO date.
    """
    pretend = os.environ.get(TODAY_ENV)
    if not pretend:
        return lambda: datetime.now().astimezone()
    try:
        day = date.fromisoformat(pretend)
    except ValueError:
        raise ValueError(f"{TODAY_ENV}={pretend!r} is not a date like 2026-01-31") from None
    return lambda: datetime.combine(day, datetime.now().time()).astimezone()


def default_store_path() -> Path:
    """``$SDPA_QUIZ_STORE`` if set, else ``quiz_store.json`` in the user data directory."""
    if os.environ.get(STORE_ENV):
        return Path(os.environ[STORE_ENV]).expanduser()
    import platformdirs
    return platformdirs.user_data_path("sdpa-course", appauthor=False) / "quiz_store.json"


@dataclass(frozen=True)
class BookEntry:
    """One question in the wrong-answer book."""
    question_id: str
    box: int  # 1: answered wrong last time; 2: answered right once since
    due: date
    wrong_count: int
    last_wrong: str  # ISO time of the last wrong answer
    last_chosen: str  # what was answered then


def _leitner(answers: list[dict]) -> dict[str, BookEntry]:
    """Replay the answers in order and return the questions still in the book."""
    book: dict[str, BookEntry] = {}
    wrong_counts: dict[str, int] = {}
    for answer in answers:
        qid, day = answer["id"], date.fromisoformat(answer["day"])
        entry = book.get(qid)
        if not answer["correct"]:
            wrong_counts[qid] = wrong_counts.get(qid, 0) + 1
            book[qid] = BookEntry(qid, 1, day, wrong_counts[qid], answer["time"], answer["chosen"])
        elif entry is not None and entry.box == 1:
            book[qid] = BookEntry(qid, 2, day + timedelta(days=1), entry.wrong_count, entry.last_wrong,
                                  entry.last_chosen)
        elif entry is not None and day >= entry.due:  # box 2, answered right on a later day
            del book[qid]
    return book


def _check_document(document) -> list:
    """The answer rows of a parsed store file, valid or not; ``ValueError`` if it is not a store."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    answers = document.get("answers")
    if not isinstance(answers, list):
        raise ValueError("'answers' must be a list of {id, correct, chosen, time, day}")
    return answers


def _row_problem(row) -> str | None:
    """Why ``row`` is not a valid answer (None if it is one)."""
    if not isinstance(row, dict):
        return f"a row is {type(row).__name__}, not an object"
    for name, kind in FIELDS.items():
        if name not in row:
            return f"no {name!r}"
        if not isinstance(row[name], kind):
            return f"{name!r} is {type(row[name]).__name__}, not {kind.__name__}"
    try:
        date.fromisoformat(row["day"])
    except ValueError:
        return "'day' is not an ISO date"
    return None


class AnswerStore:
    """The answers of one learner in one JSON file; see the module docstring.

    Parameters
    ----------
    path : path-like, optional
        The store file; default :func:`default_store_path`.
    clock : callable returning an aware ``datetime``, optional
        "Now"; default :func:`today_clock`.  Tests inject a fixed day to exercise the schedule.
    report : callable taking a message, optional
        Where problems (a corrupt file set aside) are reported; default: print.
    """

    def __init__(self, path=None, *, clock: Callable[[], datetime] | None = None,
                 report: Callable[[str], None] = print):
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.clock = clock or today_clock()
        self.report = report
        self.file = JsonFile(self.path, "the quiz store", report, signature=SIGNATURE)
        self._warned: set[str] = set()

    def answers(self) -> list[dict]:
        """Every valid answer recorded so far, oldest first; invalid rows are skipped, warned about once."""
        with self.file.locked():
            rows = self.file.read(_check_document, list)
        problems: dict[str, int] = {}
        valid = []
        for row in rows:
            problem = _row_problem(row)
            if problem is None:
                valid.append(row)
            else:
                problems[problem] = problems.get(problem, 0) + 1
        if problems:
            why = "; ".join(f"{problem} ({count})" for problem, count in problems.items())
            warning = f"{sum(problems.values())} answer row(s) in {self.path} skipped as invalid: {why}"
            if warning not in self._warned:
                self._warned.add(warning)
                self.report(f"Warning: {warning}.")
        return valid

    def record(self, question_id: str, correct: bool, chosen: str, *, seconds: float | None = None,
               late: bool = False) -> None:
        """Append one answer to the file now (read, append and replace under the lock).

        ``seconds`` (the time the answer took) and ``late`` (given after its time budget) are kept in
        the row as given.
        """
        now = self.clock()
        answer = {"id": question_id, "correct": bool(correct), "chosen": chosen,
                  "time": now.isoformat(timespec="seconds"), "day": now.date().isoformat(),
                  "seconds": None if seconds is None else float(seconds), "late": bool(late)}
        with self.file.locked():
            answers = self.file.read(_check_document, list)
            answers.append(answer)
            self.file.write({"format": FORMAT, "version": VERSION, "answers": answers})

    def book(self) -> list[BookEntry]:
        """The wrong-answer book: what is due today first (oldest due first), then the rest."""
        today = self.clock().date()
        entries = _leitner(self.answers()).values()
        return sorted(entries, key=lambda e: (e.due > today, e.due, e.question_id))

    def due(self) -> list[BookEntry]:
        """The entries of the book due today or earlier."""
        today = self.clock().date()
        return [entry for entry in self.book() if entry.due <= today]
