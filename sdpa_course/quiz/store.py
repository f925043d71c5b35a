"""The answer log, kept in one JSON file; the review schedule and the wrong-answer book (错题本) come from it.

The file holds every answer ever given: question id, right or wrong, the answer chosen,
the time, and (since version 2) the seconds it took, whether it came too late in a mock
interview, and the learner's own rating if one was asked.  The schedule is FSRS replayed over
these rows (:mod:`~sdpa_course.quiz.schedule`): every answered question has a due time that
grows with each recall and shrinks after a lapse.  The wrong-answer book is the questions
answered wrong at least once and not yet known (FSRS stability under three weeks).  A
version 1 file, written by the old two-box schedule, is read as it is: its rows become the
history of the new schedule, so its book is carried over, and the next answer rewrites it as
version 2 with every old row kept.

Every answer is written at once, and the file is one JSON document kept as
:mod:`~sdpa_course.json_file` keeps it: under an exclusive lock the file is read again, the
answer appended and the whole replaced atomically.  So a crash or Ctrl-C loses no earlier
answer, and two quizzes running at once never drop each other's answers.  A store file the
quiz wrote that cannot be read as one is renamed ``<name>.corrupt-<timestamp>``, reported,
and a fresh store is started; any other file (a folder, README.md, a file without read
permission) raises :class:`StoreError` and is left alone.  A row whose fields have the wrong
types (an id that is not a string, ``"correct": "false"``) is skipped, with one warning, and
kept in the file.

The time of an answer comes from :func:`today_clock`, the one clock of the terminal and the
notebook: now, or ``$SDPA_QUIZ_TODAY`` (an ISO date) at the current time of day.
"""
from __future__ import annotations

import os
from datetime import date, datetime
from pathlib import Path
from typing import Callable

from ..i18n.messages import _
from ..json_file import JsonFile, StoreError
from .schedule import LEARN_AHEAD, Item, replay

STORE_ENV = "SDPA_QUIZ_STORE"
TODAY_ENV = "SDPA_QUIZ_TODAY"  # pretend today is this ISO date: try the schedule, test it
FORMAT = "sdpa-quiz-store"
VERSION = 2  # 2 adds "seconds", "late" and "rating" to a row; version 1 files are read as they are
SIGNATURE = f'"format": "{FORMAT}"'  # how json.dumps(..., indent=1) starts every store this module writes
FIELDS = {"id": str, "correct": bool, "chosen": str, "time": str, "day": str}  # an answer row's fields
OPTIONAL_FIELDS = {"seconds": (int, float), "late": bool, "rating": int}  # since version 2

__all__ = ["STORE_ENV", "TODAY_ENV", "AnswerStore", "Item", "StoreError", "default_store_path", "today_clock"]


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
        raise ValueError(_("{variable}={value} is not a date like 2026-01-31").format(variable=TODAY_ENV,
                                                                                     value=repr(pretend))) from None
    return lambda: datetime.combine(day, datetime.now().time()).astimezone()


def default_store_path() -> Path:
    """``$SDPA_QUIZ_STORE`` if set, else ``quiz_store.json`` in the user data directory."""
    if os.environ.get(STORE_ENV):
        return Path(os.environ[STORE_ENV]).expanduser()
    import platformdirs
    return platformdirs.user_data_path("sdpa-course", appauthor=False) / "quiz_store.json"


def _check_document(document) -> list:
    """The answer rows of a parsed store file, valid or not; ``ValueError`` if it is not a store."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(_("not a {format} file").format(format=FORMAT))
    answers = document.get("answers")
    if not isinstance(answers, list):
        raise ValueError(_("'answers' must be a list of {{id, correct, chosen, time, day}}"))
    return answers


def _row_problem(row) -> str | None:
    """Why ``row`` is not a valid answer (None if it is one)."""
    if not isinstance(row, dict):
        return _("a row is {type}, not an object").format(type=type(row).__name__)
    for name, kind in FIELDS.items():
        if name not in row:
            return _("no {field}").format(field=repr(name))
        if not isinstance(row[name], kind):
            return _("{field} is {type}, not {expected}").format(field=repr(name), type=type(row[name]).__name__,
                                                                 expected=kind.__name__)
    for name, kind in OPTIONAL_FIELDS.items():
        if name in row and (isinstance(row[name], bool) and kind is not bool or not isinstance(row[name], kind)):
            return _("{field} is {type}").format(field=repr(name), type=type(row[name]).__name__)
    if not 1 <= row.get("rating", 1) <= 4:
        return _("'rating' is not 1 (again) to 4 (easy)")
    try:
        date.fromisoformat(row["day"])
        moment = datetime.fromisoformat(row["time"])
    except ValueError:
        return _("'day' or 'time' is not in ISO format")
    if moment.tzinfo is None:
        return _("'time' has no time zone")
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
        self.file = JsonFile(self.path, _("the quiz store"), report, signature=SIGNATURE)
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
            warning = _("{count} answer row(s) in {store} skipped as invalid: {problems}").format(
                count=sum(problems.values()), store=self.path, problems=why)
            if warning not in self._warned:
                self._warned.add(warning)
                self.report(_("Warning: {warning}.").format(warning=warning))
        return valid

    def record(self, question_id: str, correct: bool, chosen: str, *, seconds: float | None = None,
               late: bool = False, rating: int | None = None) -> None:
        """Append one answer to the file now (read, append and replace under the lock).

        ``seconds``: how long the answer took; ``late``: given after a mock interview's time
        (it is then recorded as wrong); ``rating``: the learner's own, 1 (again) to 4 (easy),
        else derived when the schedule is computed (:mod:`~sdpa_course.quiz.schedule`).
        """
        if rating is not None and not (isinstance(rating, int) and 1 <= rating <= 4):
            raise ValueError(f"rating must be 1 (again) to 4 (easy); got {rating!r}")
        now = self.clock()
        answer = {"id": question_id, "correct": bool(correct) and not late, "chosen": chosen,
                  "time": now.isoformat(timespec="seconds"), "day": now.date().isoformat()}
        if seconds is not None:
            answer["seconds"] = round(float(seconds), 1)
        if late:
            answer["late"] = True
        if rating is not None:
            answer["rating"] = rating
        with self.file.locked():
            answers = self.file.read(_check_document, list)
            answers.append(answer)
            self.file.write({"format": FORMAT, "version": VERSION, "answers": answers})

    def schedule(self, aliases: dict[str, str] | None = None) -> dict[str, Item]:
        """Every answered question's FSRS schedule (``aliases``: former ids to current ones)."""
        return replay(self.answers(), aliases)

    def book(self, aliases: dict[str, str] | None = None) -> list[Item]:
        """The wrong-answer book: missed at least once, not yet known; the earliest due first."""
        return sorted((item for item in self.schedule(aliases).values() if item.in_book),
                      key=lambda item: (item.due, item.id))

    def due(self, aliases: dict[str, str] | None = None) -> list[Item]:
        """Every answered question due now (or within ``LEARN_AHEAD``), the least likely to be recalled first."""
        now = self.clock()
        due = [item for item in self.schedule(aliases).values() if item.due <= now + LEARN_AHEAD]
        return sorted(due, key=lambda item: (item.retrievability(now), item.due, item.id))
