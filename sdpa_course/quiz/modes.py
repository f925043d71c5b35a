"""Which questions a quiz asks: by chapter / tag / difficulty, a mock interview, or the book."""
from __future__ import annotations

import numpy as np

from .bank import by_id, load_bank, select
from .schema import Question
from .store import AnswerStore, BookEntry

MOCK_SECONDS_PER_QUESTION = 90
DRILL_PREFIX = "drill-"  # the answer store's ids of the coding drills (sdpa_course.quiz.drills)


class NothingToAsk(ValueError):
    """The chosen mode has no question (e.g. an empty wrong-answer book)."""


def book_in_bank(store: AnswerStore) -> tuple[list[BookEntry], int]:
    """The book's entries whose question is still in the bank, and how many answers are for questions that are not.

    The review and the book's count in the summary both use this, so they agree.  Coding drills
    (``drill-<name>``, :mod:`~sdpa_course.quiz.drills`) are not bank questions, and not stale either.
    """
    known = by_id()
    stale = sum(answer["id"] not in known and not answer["id"].startswith(DRILL_PREFIX) for answer in store.answers())
    return [entry for entry in store.book() if entry.question_id in known], stale


def review_questions(store: AnswerStore, **filters) -> list[Question]:
    """The questions of the wrong-answer book that match ``filters`` (as :func:`select`), the due ones first."""
    known = by_id()
    questions = [known[entry.question_id] for entry in book_in_bank(store)[0]]
    if not questions:
        raise NothingToAsk(f"the wrong-answer book in {store.path} is empty: nothing to review")
    if any(value is not None for value in filters.values()):
        wanted = {q.id for q in select(load_bank(), **filters)}  # ValueError for a bad filter
        questions = [q for q in questions if q.id in wanted]
        if not questions:
            raise NothingToAsk(f"no question of the wrong-answer book in {store.path} matches these filters")
    return questions


def choose_questions(*, chapter=None, tag=None, difficulty=None, mock: int | None = None,
                     review: bool = False, store: AnswerStore | None = None,
                     rng: np.random.Generator | None = None, limit: int | None = None) -> list[Question]:
    """The questions of one quiz.

    ``review`` asks the wrong-answer book of ``store`` (due first, order kept); ``mock=N``
    draws N questions from the bank; otherwise every question.  In every mode only the
    questions matching ``chapter``, ``tag`` and ``difficulty``; shuffled with ``rng`` (except
    the review), cut to ``limit`` (and to ``mock``: the smaller wins).  Raises ``ValueError``
    for bad filters or for ``mock`` with ``review``, and :class:`NothingToAsk` when nothing is left.
    """
    for name, value in (("mock", mock), ("limit", limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive whole number of questions; got {value!r}")
    filters = {"chapter": chapter, "tag": tag, "difficulty": difficulty}
    if review and mock is not None:
        raise ValueError("--mock and --review cannot be combined: a mock interview draws from the whole bank; "
                         "to review part of the book use --review --limit N")
    if review:
        questions = review_questions(store if store is not None else AnswerStore(), **filters)
    else:
        questions = select(load_bank(), **filters)
        if rng is not None:
            questions = [questions[i] for i in rng.permutation(len(questions))]
    counts = [count for count in (mock, limit) if count is not None]
    return questions[:min(counts)] if counts else questions
