"""The answer store and its wrong-answer book: Leitner schedule, atomic writes, corruption, concurrency."""
import json
import os
import subprocess
import sys
import textwrap
from datetime import date, datetime, timedelta, timezone

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


def play(store, clock, script):
    """``script``: (day offset, right?) pairs for question 'q1'."""
    for offset, correct in script:
        clock.day = DAY0 + timedelta(days=offset)
        store.record("q1", correct, "A")


LEITNER = [  # (answers as (day, right?), in the book afterwards?, box, due offset)
    ([(0, False)], True, 1, 0),
    ([(0, False), (0, True)], True, 2, 1),
    ([(0, False), (0, True), (0, True)], True, 2, 1),  # two right the same day: not enough
    ([(0, False), (0, True), (1, True)], False, None, None),  # right on two different days: out
    ([(0, False), (0, True), (3, True)], False, None, None),
    ([(0, False), (0, True), (1, False)], True, 1, 1),  # wrong again: back to box 1
    ([(0, False), (1, True), (2, False), (3, True), (3, True)], True, 2, 4),
    ([(0, True), (1, True)], False, None, None),  # never wrong: never in the book
]


@pytest.mark.parametrize("script, in_book, box, due", LEITNER)
def test_leitner_schedule(store, clock, script, in_book, box, due):
    """Does a question leave the book only after two right answers in a row on different days?"""
    play(store, clock, script)
    book = store.book()
    assert bool(book) is in_book
    if in_book:
        assert (book[0].box, book[0].due) == (box, DAY0 + timedelta(days=due))


def test_book_lists_due_questions_first(store, clock):
    store.record("later", False, "B")
    store.record("later", True, "A")  # box 2, due tomorrow
    store.record("now", False, "C")  # box 1, due today
    assert [e.question_id for e in store.book()] == ["now", "later"]
    assert [e.question_id for e in store.due()] == ["now"]
    clock.day = DAY0 + timedelta(days=1)
    assert [e.question_id for e in store.due()] == ["now", "later"]


def test_book_entry_keeps_what_was_answered(store):
    store.record("q1", False, "B (wrong text)")
    store.record("q1", False, "C (other text)")
    entry = store.book()[0]
    assert (entry.wrong_count, entry.last_chosen) == (2, "C (other text)")
    assert entry.last_wrong == "2026-03-02T09:30:00+00:00"


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
