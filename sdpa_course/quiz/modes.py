"""Which questions a quiz asks: by chapter / tag / difficulty, a mock interview, or the reviews due."""
from __future__ import annotations

import numpy as np

from ..i18n.messages import _
from .bank import aliases, by_id, load_bank, select
from .schema import Question
from .schedule import Item
from .store import AnswerStore

MOCK_SECONDS_PER_QUESTION = 90
DRILL_PREFIX = "drill-"  # the answer store's ids of the coding drills (sdpa_course.quiz.drills)


def is_drill(item_id: str) -> bool:
    return item_id.startswith(DRILL_PREFIX)


class NothingToAsk(ValueError):
    """The chosen mode has no question (e.g. an empty wrong-answer book)."""


def book_in_bank(store: AnswerStore) -> tuple[list[Item], int]:
    """The book's entries whose question is still in the bank, and how many answers are for questions that are not.

    The review and the book's count in the summary both use this, so they agree.  Answers to a
    renamed question count as its own (its ``formerly``); coding drills are not bank questions
    and are neither in the book nor stale.
    """
    known, renamed = by_id(), aliases()
    stale = sum(renamed.get(answer["id"], answer["id"]) not in known and not is_drill(answer["id"])
                for answer in store.answers())
    return [item for item in store.book(renamed) if item.id in known], stale


def due_in_bank(store: AnswerStore) -> list[Item]:
    """The answered bank questions due now, the least likely to be recalled first."""
    known = by_id()
    return [item for item in store.due(aliases()) if item.id in known]


def due_drills(store: AnswerStore) -> list[str]:
    """The names of the coding drills due for another attempt now (``--review`` names them; they are run apart)."""
    return [item.id[len(DRILL_PREFIX):] for item in store.due() if is_drill(item.id)]


def next_due_note(store: AnswerStore) -> str:
    """When the next answered bank question falls due (for a review with nothing due now)."""
    known, now = by_id(), store.clock()
    upcoming = sorted(item.due for item in store.schedule(aliases()).values() if item.id in known and item.due > now)
    if not upcoming:
        return _("no question answered yet")
    return _("the next one is due {when}").format(when=when(upcoming[0], now))


def when(moment, now) -> str:
    """``in 8 min``, ``in 5 h`` or ``on 2026-12-04`` (local time), for due times."""
    seconds = (moment - now).total_seconds()
    if seconds < 3600:
        return _("in {minutes} min").format(minutes=max(1, round(seconds / 60)))
    if seconds < 86400:
        return _("in {hours} h").format(hours=round(seconds / 3600))
    return _("on {date}").format(date=moment.astimezone(now.tzinfo).date().isoformat())


def review_questions(store: AnswerStore, **filters) -> list[Question]:
    """The answered questions due now that match ``filters`` (as :func:`select`), the least likely to be recalled first."""
    known = by_id()
    questions = [known[item.id] for item in due_in_bank(store)]
    if not questions:
        raise NothingToAsk(_("nothing is due for review in {store}: {note}").format(
            store=store.path, note=next_due_note(store)))
    if any(value is not None for value in filters.values()):
        wanted = {q.id for q in select(load_bank(), **filters)}  # ValueError for a bad filter
        questions = [q for q in questions if q.id in wanted]
        if not questions:
            raise NothingToAsk(_("no question due for review in {store} matches these filters").format(
                store=store.path))
    return questions


def choose_questions(*, chapter=None, tag=None, difficulty=None, mock: int | None = None,
                     review: bool = False, store: AnswerStore | None = None,
                     rng: np.random.Generator | None = None, limit: int | None = None) -> list[Question]:
    """The questions of one quiz.

    ``review`` asks what is due in ``store`` (the least likely to be recalled first); ``mock=N``
    draws N questions from the bank; otherwise every question.  In every mode only the
    questions matching ``chapter``, ``tag`` and ``difficulty``; shuffled with ``rng`` (except
    the review), cut to ``limit`` (and to ``mock``: the smaller wins).  Raises ``ValueError``
    for bad filters or for ``mock`` with ``review``, and :class:`NothingToAsk` when nothing is left.
    """
    for name, value in (("mock", mock), ("limit", limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(_("{name} must be a positive whole number of questions; got {value}").format(
                name=name, value=repr(value)))
    filters = {"chapter": chapter, "tag": tag, "difficulty": difficulty}
    if review and mock is not None:
        raise ValueError(_("--mock and --review cannot be combined: a mock interview draws from the whole bank; "
                           "to review part of the book use --review --limit N"))
    if review:
        questions = review_questions(store if store is not None else AnswerStore(), **filters)
    else:
        questions = select(load_bank(), **filters)
        if rng is not None:
            questions = [questions[i] for i in rng.permutation(len(questions))]
    counts = [count for count in (mock, limit) if count is not None]
    return questions[:min(counts)] if counts else questions
