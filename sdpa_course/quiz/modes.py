"""Which questions a quiz asks: by chapter / tag / difficulty, a mock interview, or the book."""
from __future__ import annotations

import numpy as np

from .bank import by_id, load_bank, select
from .schema import Question
from .store import AnswerStore

MOCK_SECONDS_PER_QUESTION = 90


class NothingToAsk(ValueError):
    """The chosen mode has no question (e.g. an empty wrong-answer book)."""


def review_questions(store: AnswerStore) -> list[Question]:
    """The questions of the wrong-answer book, the due ones first."""
    known = by_id()
    questions = [known[entry.question_id] for entry in store.book() if entry.question_id in known]
    if not questions:
        raise NothingToAsk(f"the wrong-answer book in {store.path} is empty: nothing to review")
    return questions


def choose_questions(*, chapter=None, tag=None, difficulty=None, mock: int | None = None,
                     review: bool = False, store: AnswerStore | None = None,
                     rng: np.random.Generator | None = None, limit: int | None = None) -> list[Question]:
    """The questions of one quiz.

    ``review`` asks the wrong-answer book of ``store`` (due first, order kept); ``mock=N``
    draws N questions from the whole bank (filters still apply); otherwise every question
    matching ``chapter``, ``tag`` and ``difficulty``.  Shuffled with ``rng`` (except the
    review), cut to ``limit``.  Raises ``ValueError`` for bad filters and
    :class:`NothingToAsk` when nothing is left.
    """
    for name, value in (("mock", mock), ("limit", limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive whole number of questions; got {value!r}")
    if review:
        questions = review_questions(store if store is not None else AnswerStore())
    else:
        filters = {"chapter": chapter, "tag": tag, "difficulty": difficulty}
        questions = select(load_bank(), **filters)
        if rng is not None:
            questions = [questions[i] for i in rng.permutation(len(questions))]
    count = mock if mock is not None else limit
    return questions[:count] if count is not None else questions
