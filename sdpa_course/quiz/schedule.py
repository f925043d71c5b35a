"""When each question comes back: FSRS, the scheduler Anki uses (the ``fsrs`` package), replayed over the answer log.

Every answer ever given is kept in the store (:mod:`~sdpa_course.quiz.store`); the schedule
is not stored but computed from that log, answer by answer, with one FSRS card per
question (or coding drill).  So the history is the single source of truth: a store written
by the old two-box schedule is read the same way (its answers carry no rating: a right one
counts as *good*, a wrong one as *again*), and a change of scheduler settings reschedules
the whole history.

Each answer is rated as FSRS needs it:

* wrong (or late in a mock interview): **again**: the question comes back after a short
  relearning step (10 minutes), and then on a short interval that grows again;
* right, but slower than the question's time budget: **hard**;
* right: **good**;
* **easy** only when the learner says so (``sdpa-quiz --rate``), as is the rating of a
  right answer when asked.

Due times are real times, not calendar days: a wrong answer at 23:55 and a right one at
00:05 are ten minutes apart, and the question comes back on the next interval as usual.
Fuzzing is off, so replaying the same log always gives the same schedule.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from fsrs import Card, Rating, Scheduler, State

DESIRED_RETENTION = 0.9  # FSRS plans each interval so that recall is 90% likely when it ends
LEARN_AHEAD = timedelta(minutes=20)  # as Anki: a step due within this is asked now rather than kept waiting
KNOWN_STABILITY_DAYS = 21  # a question counts as known once FSRS expects it to last three weeks (Anki's "mature")
SCHEDULER = Scheduler(desired_retention=DESIRED_RETENTION, learning_steps=(timedelta(minutes=1), timedelta(minutes=10)),
                      relearning_steps=(timedelta(minutes=10),), enable_fuzzing=False)
BUDGET_SECONDS = {"single": 45, "true_false": 30, "multiple": 60, "numeric": 90, "open": 180}  # for "hard"

__all__ = ["KNOWN_STABILITY_DAYS", "LEARN_AHEAD", "Item", "Review", "derived_rating", "replay"]


def derived_rating(correct: bool, seconds: float | None, budget: float | None) -> Rating:
    """The rating of an answer nobody rated: again if wrong, hard if right past ``budget`` seconds, else good."""
    if not correct:
        return Rating.Again
    if seconds is not None and budget is not None and seconds > budget:
        return Rating.Hard
    return Rating.Good


def answer_rating(kind: str, correct: bool, seconds: float | None) -> Rating:
    """The derived rating of an answer to a question of type ``kind`` (its budget: ``BUDGET_SECONDS``)."""
    return derived_rating(correct, seconds, BUDGET_SECONDS[kind])


def row_rating(row: dict) -> Rating:
    """The rating an answer row carries; good for a right answer without one (the old store's rows)."""
    if not row["correct"]:
        return Rating.Again  # a stored rating never turns a wrong answer into a recall
    return Rating(row.get("rating", Rating.Good))


@dataclass(frozen=True)
class Review:
    """One answer as the scheduler saw it: when, whether it was right, its rating, the card's state before it."""
    time: datetime
    correct: bool
    rating: Rating
    state_before: State  # Review: a recall after a real interval (what retention counts); else still learning
    due_after: datetime


@dataclass(frozen=True)
class Item:
    """One question's (or drill's) schedule after every answer to it.

    ``card`` is its FSRS card (state, stability in days, difficulty, due time); ``history``
    every answer to it, oldest first; ``last_wrong``/``last_chosen`` the time and the answer
    of the latest wrong one.
    """
    id: str
    card: Card
    history: tuple[Review, ...]
    last_wrong: str = ""
    last_chosen: str = ""

    @property
    def lapses(self) -> int:
        return sum(not review.correct for review in self.history)

    @property
    def due(self) -> datetime:
        return self.card.due

    @property
    def known(self) -> bool:
        """FSRS expects it to be remembered for at least ``KNOWN_STABILITY_DAYS``."""
        return self.card.state == State.Review and (self.card.stability or 0) >= KNOWN_STABILITY_DAYS

    @property
    def in_book(self) -> bool:
        """In the wrong-answer book: answered wrong at least once and not yet known."""
        return self.lapses > 0 and not self.known

    def retrievability(self, now: datetime) -> float:
        """FSRS's probability of recalling it at ``now`` (0 before any answer)."""
        return SCHEDULER.get_card_retrievability(self.card, _utc(now))


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc)


def _card_id(question_id: str) -> int:
    return zlib.crc32(question_id.encode()) + 1  # stable, and never 0


def replay(rows, aliases: dict[str, str] | None = None) -> dict[str, Item]:
    """The schedule of every question answered in ``rows`` (valid answer rows, oldest first).

    ``aliases`` maps a question's former ids to its current one, so a renamed question keeps
    its history.  Rows are replayed in time order (two quizzes may have interleaved them).
    """
    aliases = aliases or {}
    items: dict[str, Item] = {}
    for row in sorted(rows, key=lambda r: datetime.fromisoformat(r["time"])):
        qid = aliases.get(row["id"], row["id"])
        moment = _utc(datetime.fromisoformat(row["time"]))
        previous = items.get(qid)
        card = previous.card if previous else Card(card_id=_card_id(qid), due=moment)
        rating, state_before = row_rating(row), card.state
        card, _ = SCHEDULER.review_card(card, rating, moment)
        review = Review(moment, row["correct"], rating, state_before, card.due)
        wrong = (row["time"], row["chosen"]) if not row["correct"] else (
            (previous.last_wrong, previous.last_chosen) if previous else ("", ""))
        items[qid] = Item(qid, card, (previous.history if previous else ()) + (review,), *wrong)
    return items
