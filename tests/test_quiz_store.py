"""The answer store: its rows, atomic writes, corruption, concurrency (the schedule: test_quiz_schedule.py)."""
import json
import os
import subprocess
import sys
import textwrap
from datetime import date, datetime, timezone

import pytest

from sdpa_course.quiz.store import STORE_ENV, AnswerStore, StoreError, default_store_path

DAY0 = date(2026, 3, 2)


class FakeClock:
    """A settable 'now', so a test can move between days."""

    def __init__(self, day=DAY0):
        self.day = day

    def __call__(self):
        return datetime(self.day.year, self.day.month, self.day.day, 9, 30, tzinfo=timezone.utc)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock):
    reports = []
    answer_store = AnswerStore(tmp_path / "quiz.json", clock=clock, report=reports.append)
    answer_store.reports = reports
    return answer_store


def test_book_entry_keeps_what_was_answered(store):
    store.record("q1", False, "B (wrong text)")
    store.record("q1", False, "C (other text)")
    entry = store.book()[0]
    assert (entry.lapses, entry.last_chosen) == (2, "C (other text)")
    assert entry.last_wrong == "2026-03-02T09:30:00+00:00"


def test_a_row_keeps_seconds_lateness_and_rating(store):
    store.record("q1", True, "A", seconds=12.34, rating=4)
    store.record("q2", True, "B (late: 200 s of 180 s)", seconds=3, late=True)
    first, second = store.answers()
    assert (first["seconds"], first["rating"], "late" in first) == (12.3, 4, False)
    assert (second["correct"], second["late"]) == (False, True)  # a late answer is saved as wrong
    with pytest.raises(ValueError, match="rating must be 1"):
        store.record("q1", True, "A", rating=5)


def test_crash_during_write_keeps_earlier_answers(store, monkeypatch):
    """If the process dies between writing the temporary file and replacing, no earlier answer is lost."""
    store.record("q1", True, "A")
    store.record("q2", False, "B")

    def crash(*args):
        raise OSError("simulated crash")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StoreError, match="cannot write the quiz store .*simulated crash"):
        store.record("q3", False, "C")
    monkeypatch.undo()
    assert [a["id"] for a in store.answers()] == ["q1", "q2"]
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["quiz.json", "quiz.json.lock"]


@pytest.mark.parametrize("content", ['{\n "format": "sdpa-quiz-store",\n "version": 1,\n "answers": [\n  {',
                                     b'{\n "format": "sdpa-quiz-store",\n "answers": \xff\xfe',
                                     '{"format": "sdpa-quiz-store", "answers": 3}'])
def test_corrupt_store_is_kept_aside_and_reported(store, content):
    """A damaged store file (one the quiz wrote) is renamed to .corrupt-<time>, reported, and the quiz goes on
    with a fresh store.  A file the quiz did not write is refused instead (tests/test_quiz_defects.py)."""
    write = store.path.write_bytes if isinstance(content, bytes) else store.path.write_text
    write(content)
    store.record("q1", False, "A")
    backups = list(store.path.parent.glob("quiz.json.corrupt-*"))
    assert len(backups) == 1
    assert backups[0].read_bytes() == (content if isinstance(content, bytes) else content.encode())
    assert len(store.reports) == 1 and backups[0].name in store.reports[0]
    assert [a["id"] for a in store.answers()] == ["q1"]


def test_unwritable_location_raises_a_clear_error(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(StoreError, match="cannot open the quiz store .*a_file/quiz.json"):
        AnswerStore(tmp_path / "a_file" / "quiz.json").record("q1", True, "A")


def test_store_path_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(STORE_ENV, str(tmp_path / "mine.json"))
    assert default_store_path() == tmp_path / "mine.json"
    monkeypatch.delenv(STORE_ENV)
    assert default_store_path().name == "quiz_store.json" and "sdpa-course" in str(default_store_path())


WRITER = textwrap.dedent("""
    import sys
    from sdpa_course.quiz.store import AnswerStore
    store = AnswerStore(sys.argv[1])
    for number in range(int(sys.argv[3])):
        store.record(f"{sys.argv[2]}-{number}", number % 2 == 0, "A")
""")


def test_two_concurrent_writers_lose_nothing(tmp_path):
    """Two processes appending at the same time: every answer of both ends up in the file."""
    path, count = tmp_path / "quiz.json", 40
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(count)]) for name in "ab"]
    assert [writer.wait(timeout=60) for writer in writers] == [0, 0]
    ids = [answer["id"] for answer in json.loads(path.read_text())["answers"]]
    assert sorted(ids) == sorted(f"{name}-{n}" for name in "ab" for n in range(count))
