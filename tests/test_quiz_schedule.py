"""The FSRS review schedule, simulated with a fixed clock: growing intervals, lapses that come back, the day boundary,
the old store migrated, renamed questions, ratings, and what --stats reports."""
import json
from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating, State

from sdpa_course.quiz.schedule import KNOWN_STABILITY_DAYS, derived_rating, replay
from sdpa_course.quiz.stats import due_by_day, retention, stats_report
from sdpa_course.quiz.store import AnswerStore

START = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)


class FixedClock:
    """'Now', moved by hand."""

    def __init__(self, now=START):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return FixedClock()


@pytest.fixture
def store(tmp_path, clock):
    return AnswerStore(tmp_path / "quiz.json", clock=clock, report=lambda message: None)


def simulate(store, clock, days, recalls, question="q1"):
    """Answer ``question`` each time it falls due over ``days`` days; ``recalls(n)`` says whether answer n is right.

    Returns the times of the answers.
    """
    end, times = START + timedelta(days=days), []
    store.record(question, recalls(0), "A")
    times.append(clock.now)
    while True:
        item = store.schedule()[question]
        if item.due > end:
            return times
        clock.now = max(clock.now, item.due)
        store.record(question, recalls(len(times)), "A")
        times.append(clock.now)


def test_over_60_days_intervals_grow_until_the_question_is_known(store, clock):
    """Always right: each wait is longer than the one before, few answers are needed, and the question ends known."""
    times = simulate(store, clock, 60, lambda n: True)
    waits = [later - earlier for earlier, later in zip(times, times[1:])]
    assert all(a < b for a, b in zip(waits, waits[1:])), waits
    assert len(times) <= 6
    item = store.schedule()["q1"]
    assert item.known and not item.in_book
    assert item.card.stability >= KNOWN_STABILITY_DAYS


def test_over_60_days_a_lapse_comes_back_soon_then_grows_again(store, clock, tmp_path):
    """Wrong on the fourth answer: it is due again within the hour, and its waits grow anew, from lower stability."""
    times = simulate(store, clock, 60, lambda n: n != 3)
    assert times[4] - times[3] <= timedelta(hours=1)  # the relearning step
    waits_after = [later - earlier for earlier, later in zip(times[4:], times[5:])]
    assert all(a < b for a, b in zip(waits_after, waits_after[1:])), waits_after
    assert times[5] - times[4] >= timedelta(days=1)
    item = store.schedule()["q1"]
    assert item.lapses == 1
    clean_clock = FixedClock()
    clean = AnswerStore(tmp_path / "clean.json", clock=clean_clock, report=print)
    simulate(clean, clean_clock, 60, lambda n: True)
    assert item.card.stability < clean.schedule()["q1"].card.stability / 2  # the lapse cost stability


def test_a_question_never_leaves_the_schedule(store, clock):
    """Known questions still come back (after a long interval): nothing is dropped, unlike the old Leitner book."""
    simulate(store, clock, 60, lambda n: True)
    item = store.schedule()["q1"]
    assert START + timedelta(days=60) < item.due < START + timedelta(days=400)
    clock.now = item.due
    assert [due.id for due in store.due()] == ["q1"]


def test_wrong_at_2355_and_right_at_0005_is_not_two_days(store, clock):
    """Ten minutes across midnight are ten minutes: the question stays in the book and is due again shortly."""
    clock.now = datetime(2026, 3, 2, 23, 55, tzinfo=timezone.utc)
    store.record("q1", False, "B")
    clock.now = datetime(2026, 3, 3, 0, 5, tzinfo=timezone.utc)
    store.record("q1", True, "A")
    item = store.schedule()["q1"]
    assert item.in_book and item.card.state != State.Review
    assert item.due - clock.now <= timedelta(hours=1)
    clock.now += timedelta(hours=1)
    assert [due.id for due in store.due()] == ["q1"]


def test_review_order_puts_the_most_forgotten_first(store, clock):
    for question in ("earlier", "later"):
        store.record(question, True, "A")
        clock.now += timedelta(minutes=10)
        store.record(question, True, "A")  # both graduate: due in days
        clock.now += timedelta(days=20)
    clock.now += timedelta(days=10)
    assert [item.id for item in store.due()] == ["earlier", "later"]  # the longer unseen is the less likely recalled


def test_easy_hard_and_good_give_different_intervals(tmp_path, clock):
    intervals = {}
    for rating in (Rating.Hard, Rating.Good, Rating.Easy):
        store = AnswerStore(tmp_path / f"{rating.name}.json", clock=FixedClock(START), report=print)
        store.record("q1", True, "A", rating=int(rating))
        intervals[rating] = store.schedule()["q1"].due - START
    assert intervals[Rating.Hard] < intervals[Rating.Good] < intervals[Rating.Easy]


@pytest.mark.parametrize("correct, seconds, budget, expected", [
    (False, 5, 45, Rating.Again), (True, 5, 45, Rating.Good), (True, 46, 45, Rating.Hard), (True, None, 45, Rating.Good),
])
def test_a_rating_is_derived_from_right_wrong_and_time(correct, seconds, budget, expected):
    assert derived_rating(correct, seconds, budget) == expected


def test_a_stored_rating_never_makes_a_wrong_answer_a_recall(store):
    store.record("q1", False, "B", rating=4)
    assert store.schedule()["q1"].history[0].rating == Rating.Again


def test_an_old_leitner_store_is_migrated_with_its_book(tmp_path, clock):
    """A version 1 file: its wrong answers are in the new book and due; the next answer keeps every old row."""
    path = tmp_path / "quiz.json"
    old_rows = [{"id": "missed", "correct": False, "chosen": "B", "time": "2026-02-27T10:00:00+01:00", "day": "2026-02-27"},
                {"id": "known", "correct": True, "chosen": "A", "time": "2026-02-27T10:01:00+01:00", "day": "2026-02-27"}]
    path.write_text(json.dumps({"format": "sdpa-quiz-store", "version": 1, "answers": old_rows}, indent=1))
    store = AnswerStore(path, clock=clock, report=print)
    assert [item.id for item in store.book()] == ["missed"]
    assert "missed" in [item.id for item in store.due()]
    store.record("other", True, "A")
    document = json.loads(path.read_text())
    assert document["version"] == 2 and document["answers"][:2] == old_rows


def test_a_renamed_question_keeps_its_history(store):
    store.record("old-id", False, "B")
    assert [item.id for item in store.book({"old-id": "new-id"})] == ["new-id"]


def test_rows_are_replayed_in_time_order():
    """Two quizzes at once may interleave rows: the schedule follows the times, not the file order."""
    right = {"id": "q", "correct": True, "chosen": "A", "time": "2026-03-02T10:10:00+00:00", "day": "2026-03-02"}
    wrong = {"id": "q", "correct": False, "chosen": "B", "time": "2026-03-02T10:00:00+00:00", "day": "2026-03-02"}
    assert replay([right, wrong])["q"].history[-1].correct is True


def test_retention_counts_only_answers_due_after_an_interval(store, clock):
    """Learning steps do not count; of the two reviews after real intervals one was right: 1 of 2."""
    store.record("q1", True, "A")  # first sight: learning
    clock.now += timedelta(minutes=10)
    store.record("q1", True, "A")  # second learning step: graduates
    for correct in (True, False):
        clock.now = store.schedule()["q1"].due
        store.record("q1", correct, "A")
    items = store.schedule().values()
    assert retention(items, clock.now) == (1, 2)
    assert retention(items, clock.now + timedelta(days=60)) == (0, 0)  # outside the window


def test_stats_report_shows_retention_book_and_the_week(store, clock):
    from sdpa_course.quiz import load_bank
    first, second = load_bank()[0].id, load_bank()[1].id
    store.record(first, False, "B")
    store.record(second, True, "A")
    clock.now += timedelta(minutes=10)
    store.record(second, True, "A")  # due in days
    report = stats_report(store)
    assert "answered 2 of" in report and "wrong-answer book: 1" in report
    assert "retention over the last 30 days: none yet" in report
    week = dict(due_by_day(store.schedule().values(), clock.now))
    assert week["now"] == 1  # the missed one, due after its step
    assert sum(week.values()) == 2
    chapter_row = next(line for line in report.splitlines() if line.strip().startswith("ch01"))
    assert "2/" in chapter_row.split()[1] and chapter_row.split()[-1] == "1"


def test_stats_on_an_empty_store_says_how_to_start(store):
    assert "No answers yet" in stats_report(store)


def test_a_failed_coding_drill_is_scheduled_and_named_when_due(store, clock):
    """Drills share the schedule: a failed one is due again soon, and the quiz's summary names it."""
    from sdpa_course.quiz.cli import book_status
    store.record("drill-padding-mask", False, "padding mask sign flipped", seconds=120)
    assert "Coding drills due again: padding-mask (sdpa-quiz --drill padding-mask)" in book_status(store)
    for _ in range(2):  # the two learning steps
        clock.now += timedelta(minutes=11)
        store.record("drill-padding-mask", True, "passed", seconds=100)
    assert "Coding drills due again" not in book_status(store)
    assert store.schedule()["drill-padding-mask"].due > clock.now + timedelta(hours=12)
