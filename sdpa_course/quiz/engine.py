"""The quiz engine shared by the console command and the notebook widget.

Pure functions on :class:`~sdpa_course.quiz.schema.Question`: shuffle the options for display
(:func:`present`), read a typed answer (:func:`parse_answer`), grade it (:func:`grade`) and
explain it (:func:`feedback`); :class:`QuizSession` walks a list of questions and keeps the
score by chapter.  Nothing here does input/output or touches the store.
"""
from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..chapters import chapter as find_chapter
from .schema import Question

LETTERS = string.ascii_uppercase
ECHO_LIMIT = 200  # characters of a typed line shown back in a message
TRUE_WORDS = {"t", "true", "y", "yes", "1", "对", "是", "正确", "真"}
FALSE_WORDS = {"f", "false", "n", "no", "0", "错", "否", "错误", "假"}
SEPARATORS = r"[\s,;/、]+"  # between letters: after NFKC the Chinese comma and semicolon are "," and ";"
KIND_NAMES = {"single": "single choice", "multiple": "multiple choice: pick every correct option",
              "true_false": "true or false", "numeric": "numeric answer", "open": "open question"}  # as shown


class AnswerError(ValueError):
    """A typed answer that cannot be read; the message says what to type instead."""


@dataclass(frozen=True)
class Presented:
    """A question as shown: ``order[k]`` is the bank index of the option labelled ``LETTERS[k]``."""
    question: Question
    order: tuple[int, ...] = ()

    @property
    def labels(self) -> str:
        return LETTERS[:len(self.order)]

    def letter_of(self, bank_index: int) -> str:
        return LETTERS[self.order.index(bank_index)]


def present(question: Question, rng: np.random.Generator | None = None) -> Presented:
    """Shuffle the options of a choice question (``rng=None`` keeps the bank order)."""
    order = tuple(range(len(question.options)))
    if rng is not None and order:
        order = tuple(int(i) for i in rng.permutation(len(order)))
    return Presented(question, order)


def answer_hint(presented: Presented) -> str:
    """What to type, for the prompt."""
    kind, labels = presented.question.type, presented.labels
    if kind == "single":
        return f"one letter, {labels[0]}-{labels[-1]}"
    if kind == "multiple":
        return f"every correct letter, e.g. {labels[0]}{labels[-1]}"
    return {"true_false": "t (true) or f (false)", "numeric": "a number",
            "open": "y if your answer matched the model answer, n if not"}[kind]


def format_question(presented: Presented, number: int | None = None) -> str:
    """The question as plain text with its lettered options; never gives the answer away."""
    q = presented.question
    kind = KIND_NAMES[q.type]
    head = f"{number}. " if number is not None else ""
    lines = [f"{head}[{q.id} | chapter {q.chapter} | {q.difficulty} | {kind}]", q.prompt]
    lines += [f"  {letter}. {q.options[i].text}" for letter, i in zip(presented.labels, presented.order)]
    return "\n".join(lines)


def shown(text: str) -> str:
    """``text`` stripped and quoted for a message, cut to ``ECHO_LIMIT`` characters with "…"."""
    text = text.strip()
    return repr(text if len(text) <= ECHO_LIMIT else text[:ECHO_LIMIT] + "…")


def _parse_letters(presented: Presented, text: str) -> frozenset[int]:
    letters = re.sub(SEPARATORS, "", text).upper()
    if not letters:
        raise AnswerError(f"no option chosen in {shown(text)}; answer with {answer_hint(presented)}")
    unknown = sorted(set(letters) - set(presented.labels))
    if unknown:
        listed = ", ".join(unknown)
        listed = listed if len(listed) <= ECHO_LIMIT else listed[:ECHO_LIMIT] + "…"
        raise AnswerError(f"{listed} is not an option; answer with {answer_hint(presented)}")
    if len(set(letters)) != len(letters):
        raise AnswerError(f"a letter is repeated in {shown(text)}; give each option once")
    return frozenset(presented.order[LETTERS.index(letter)] for letter in letters)


def _parse_yes_no(text: str, hint: str) -> bool:
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise AnswerError(f"{shown(text)} is not understood; answer with {hint}")


def parse_answer(presented: Presented, text: str):
    """Read a typed answer: a set of bank option indices, a bool or a float.

    Chinese input is read as well: 对/是/正确 and 错/否/错误 for true and false, full-width
    letters and digits, and the Chinese comma, semicolon and 、 between letters (``Ａ，Ｃ``, ``A、C``).

    Raises
    ------
    AnswerError
        for empty input, a letter that is not an option, two letters to a single-choice
        question, or text that is not a number / yes-no; the message says what to type.
    """
    if not isinstance(text, str) or not text.strip():
        raise AnswerError(f"no answer given; type {answer_hint(presented)}")
    text = unicodedata.normalize("NFKC", text)  # full-width letters and digits (Ａ，１２．５) as their ASCII forms
    kind = presented.question.type
    if kind in ("single", "multiple"):
        chosen = _parse_letters(presented, text)
        if kind == "single" and len(chosen) != 1:
            raise AnswerError(f"this is a single-choice question; answer with {answer_hint(presented)}")
        return chosen
    if kind == "numeric":
        try:
            value = float(text.strip().replace("_", ""))
        except ValueError:
            raise AnswerError(f"{shown(text)} is not a number; type e.g. 11.31 or 6.4e1") from None
        if not np.isfinite(value):
            raise AnswerError(f"{shown(text)} is not a finite number")
        return value
    return _parse_yes_no(text, answer_hint(presented))


def grade(question: Question, answer) -> bool:
    """True when ``answer`` (as returned by :func:`parse_answer`) is right."""
    if question.type in ("single", "multiple"):
        return frozenset(answer) == question.correct_options
    if question.type == "numeric":
        return abs(float(answer) - question.answer) <= question.tolerance
    if question.type == "true_false":
        return bool(answer) is question.answer
    return bool(answer)  # open: the learner's own verdict


def describe(presented: Presented, answer) -> str:
    """An answer as text for the wrong-answer book and the feedback (letters plus option text)."""
    q = presented.question
    if q.type in ("single", "multiple"):
        letters = sorted(presented.letter_of(i) for i in answer)
        return ", ".join(f"{letter} ({q.options[presented.order[LETTERS.index(letter)]].text})"
                         for letter in letters) or "(none)"
    if q.type == "true_false":
        return "true" if answer else "false"
    if q.type == "numeric":
        return f"{float(answer):.10g}"
    return "got it" if answer else "missed it"


def right_answer(presented: Presented) -> str:
    """The right answer as text."""
    q = presented.question
    if q.type in ("single", "multiple"):
        return describe(presented, q.correct_options)
    if q.type == "numeric":
        return f"{q.answer:.10g}" + (f" (within {q.tolerance:g})" if q.tolerance else "")
    if q.type == "true_false":
        return "true" if q.answer else "false"
    return q.model_answer


def feedback(presented: Presented, answer) -> str:
    """Verdict, the right answer and the explanation, as plain text."""
    q = presented.question
    if q.type == "open":
        verdict = "Marked as known." if answer else "Marked as missed: it goes into the wrong-answer book."
        return f"{verdict}\nWhy: {q.explanation}"
    verdict = "Right." if grade(q, answer) else f"Wrong: you answered {describe(presented, answer)}."
    return f"{verdict}\nAnswer: {right_answer(presented)}\nWhy: {q.explanation}{_why_not(presented, answer)}"


def _why_not(presented: Presented, answer) -> str:
    """For each wrong option chosen, the mistake it stands for (its ``why``), one line each."""
    q = presented.question
    if q.type not in ("single", "multiple"):
        return ""
    wrong = sorted(i for i in answer if not q.options[i].correct and q.options[i].why)
    return "".join(f"\nNot {presented.letter_of(i)}: {q.options[i].why}" for i in wrong)


def late_feedback(presented: Presented, late: str) -> str:
    """Feedback for an answer given after a mock interview's time: wrong whatever it was, then the answer."""
    return (f"Too late ({late}): this answer counts as wrong.\nAnswer: {right_answer(presented)}\n"
            f"Why: {presented.question.explanation}")


@dataclass
class QuizSession:
    """A run through a list of presented questions, keeping the score by chapter."""
    items: list[Presented]
    position: int = 0
    results: list[tuple[Question, bool]] = field(default_factory=list)
    unanswered: int = 0  # questions closed without an answer (a mock interview's), counted as wrong

    @classmethod
    def start(cls, questions, rng: np.random.Generator | None = None) -> "QuizSession":
        return cls([present(q, rng) for q in questions])

    @property
    def done(self) -> bool:
        return self.position >= len(self.items)

    @property
    def current(self) -> Presented:
        if self.done:
            raise IndexError("the quiz is over; no current question")
        return self.items[self.position]

    def submit(self, answer) -> bool:
        """Grade ``answer`` to the current question, record it and move on; returns whether it was right."""
        return self.record(grade(self.current.question, answer))

    def record(self, correct: bool) -> bool:
        """Record a verdict already reached for the current question and move on."""
        self.results.append((self.current.question, bool(correct)))
        self.position += 1
        return bool(correct)

    def close(self) -> int:
        """Count every question not yet answered as wrong (a mock interview's total is every question)."""
        closed = len(self.items) - self.position
        while not self.done:
            self.record(False)
        self.unanswered += closed
        return closed

    def score_by_chapter(self) -> dict[int, tuple[int, int]]:
        """``{chapter: (right, asked)}`` over the answered questions, chapters in order."""
        score: dict[int, list[int]] = {}
        for question, correct in sorted(self.results, key=lambda r: r[0].chapter):
            tally = score.setdefault(question.chapter, [0, 0])
            tally[0] += correct
            tally[1] += 1
        return {number: (right, asked) for number, (right, asked) in score.items()}

    def summary(self) -> str:
        """The score by chapter as a small text table."""
        if not self.results:
            return "No question answered."
        rows = [f"  ch{number:02d} {find_chapter(number).title:<45} {right}/{asked}"
                for number, (right, asked) in self.score_by_chapter().items()]
        right = sum(correct for _, correct in self.results)
        unanswered = [f"  ({self.unanswered} unanswered, counted as wrong)"] if self.unanswered else []
        return "\n".join(["Score by chapter:", *rows, f"  total{'':<46}{right}/{len(self.results)}", *unanswered])
