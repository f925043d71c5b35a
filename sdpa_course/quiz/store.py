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
answer, and two quizzes running at once never drop each other's answers.  A file that cannot
be read as a store is renamed ``<name>.corrupt-<timestamp>``, reported, and a fresh store is
started.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable

from ..json_file import JsonFile, StoreError

STORE_ENV = "SDPA_QUIZ_STORE"
FORMAT = "sdpa-quiz-store"
VERSION = 1

__all__ = ["STORE_ENV", "AnswerStore", "BookEntry", "StoreError", "default_store_path"]


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


def _check_document(document) -> list[dict]:
    """The answers of a parsed store file; ``ValueError`` if it is not one."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    answers = document.get("answers")
    keys = {"id", "correct", "chosen", "time", "day"}
    if not isinstance(answers, list) or not all(isinstance(a, dict) and keys <= set(a) for a in answers):
        raise ValueError("'answers' must be a list of {id, correct, chosen, time, day}")
    for answer in answers:
        date.fromisoformat(answer["day"])
    return answers


class AnswerStore:
    """The answers of one learner in one JSON file; see the module docstring.

    Parameters
    ----------
    path : path-like, optional
        The store file; default :func:`default_store_path`.
    clock : callable returning an aware ``datetime``, optional
        "Now"; tests inject a fixed day to exercise the schedule.
    report : callable taking a message, optional
        Where problems (a corrupt file set aside) are reported; default: print.
    """

    def __init__(self, path=None, *, clock: Callable[[], datetime] | None = None,
                 report: Callable[[str], None] = print):
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.clock = clock or (lambda: datetime.now().astimezone())
        self.report = report
        self.file = JsonFile(self.path, "the quiz store", report)

    def answers(self) -> list[dict]:
        """Every answer recorded so far, oldest first."""
        with self.file.locked():
            return self.file.read(_check_document, list)

    def record(self, question_id: str, correct: bool, chosen: str) -> None:
        """Append one answer to the file now (read, append and replace under the lock)."""
        now = self.clock()
        answer = {"id": question_id, "correct": bool(correct), "chosen": chosen,
                  "time": now.isoformat(timespec="seconds"), "day": now.date().isoformat()}
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
