"""The answer log and the wrong-answer book (错题本), kept in one JSON file.

The file holds every answer ever given (question id, right or wrong, the answer chosen,
time and day).  The book is derived from it with a two-box Leitner schedule:

* a wrong answer puts the question in box 1 of the book, due at once;
* a right answer to a question in box 1 moves it to box 2, due the next day;
* a right answer to a question in box 2 *on a later day* takes it out of the book
  (two right answers in a row on different days); a right answer on the same day
  changes nothing; any wrong answer sends it back to box 1.

Every answer is written at once: under an exclusive lock (``fcntl`` on POSIX) the file is
read again, the answer appended and the whole written to a temporary file that is
fsynced and moved over the old one with ``os.replace``.  So a crash or Ctrl-C loses no
earlier answer, and two quizzes running at once never drop each other's answers.  A
file that cannot be read as a store is renamed ``<name>.corrupt-<timestamp>``, reported,
and a fresh store is started.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable

STORE_ENV = "SDPA_QUIZ_STORE"
FORMAT = "sdpa-quiz-store"
VERSION = 1

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent quizzes are then not protected
    fcntl = None


class StoreError(RuntimeError):
    """The store cannot be written (e.g. a read-only directory); the message names the path."""


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


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError):
        handle = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


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

    @contextlib.contextmanager
    def _locked(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock_file = open(self.path.with_name(self.path.name + ".lock"), "a+")
        except OSError as error:
            raise StoreError(f"cannot open the quiz store {self.path}: {error}") from None
        with lock_file:
            if fcntl is not None:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _set_aside(self, problem: str) -> None:
        backup = self.path.with_name(f"{self.path.name}.corrupt-{datetime.now():%Y%m%d-%H%M%S-%f}")
        try:
            os.replace(self.path, backup)
        except OSError as error:
            raise StoreError(f"the quiz store {self.path} is unreadable ({problem}) and could not be "
                             f"moved aside ({error}); move or delete it by hand") from None
        self.report(f"The quiz store {self.path} could not be read ({problem}); it was kept as "
                    f"{backup.name} and a new store was started.")

    def _read(self) -> list[dict]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as error:
            self._set_aside(str(error))
            return []
        try:
            return _check_document(json.loads(text))
        except (ValueError, TypeError, KeyError) as error:
            self._set_aside(str(error) or type(error).__name__)
            return []

    def _write(self, answers: list[dict]) -> None:
        text = json.dumps({"format": FORMAT, "version": VERSION, "answers": answers}, ensure_ascii=False,
                          indent=1)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
            _fsync_directory(self.path.parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def answers(self) -> list[dict]:
        """Every answer recorded so far, oldest first."""
        with self._locked():
            return self._read()

    def record(self, question_id: str, correct: bool, chosen: str) -> None:
        """Append one answer to the file now (read, append and replace under the lock)."""
        now = self.clock()
        answer = {"id": question_id, "correct": bool(correct), "chosen": chosen,
                  "time": now.isoformat(timespec="seconds"), "day": now.date().isoformat()}
        with self._locked():
            answers = self._read()
            answers.append(answer)
            try:
                self._write(answers)
            except OSError as error:
                raise StoreError(f"cannot write the quiz store {self.path}: {error}") from None

    def book(self) -> list[BookEntry]:
        """The wrong-answer book: what is due today first (oldest due first), then the rest."""
        today = self.clock().date()
        entries = _leitner(self.answers()).values()
        return sorted(entries, key=lambda e: (e.due > today, e.due, e.question_id))

    def due(self) -> list[BookEntry]:
        """The entries of the book due today or earlier."""
        today = self.clock().date()
        return [entry for entry in self.book() if entry.due <= today]
