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
from ..i18n.columns import padded
from ..i18n.messages import _
from .schema import Question

LETTERS = string.ascii_uppercase
ECHO_LIMIT = 200  # characters of a typed line shown back in a message
TRUE_WORDS = {"t", "true", "y", "yes", "1", "对", "是", "正确", "真"}
FALSE_WORDS = {"f", "false", "n", "no", "0", "错", "否", "错误", "假"}
SEPARATORS = r"[\s,;/、]+"  # between letters: after NFKC the Chinese comma and semicolon are "," and ";"


def kind_names() -> dict[str, str]:
    """Each question type's name as shown, in the learner's language."""
    return {"single": _("single choice"), "multiple": _("multiple choice: pick every correct option"),
            "true_false": _("true or false"), "numeric": _("numeric answer"), "open": _("open question")}


def difficulty_names() -> dict[str, str]:
    """Each difficulty's name as shown (the bank's ``easy``, ``mid``, ``hard``), in the learner's language."""
    return {"easy": _("easy"), "mid": _("mid"), "hard": _("hard")}


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
        return _("one letter, {first}-{last}").format(first=labels[0], last=labels[-1])
    if kind == "multiple":
        return _("every correct letter, e.g. {example}").format(example=labels[0] + labels[-1])
    return {"true_false": _("t (true) or f (false)"), "numeric": _("a number"),
            "open": _("y if your answer matched the model answer, n if not")}[kind]


def format_question(presented: Presented, number: int | None = None) -> str:
    """The question as plain text with its lettered options; never gives the answer away."""
    q = presented.question
    kind = kind_names()[q.type]
    head = f"{number}. " if number is not None else ""
    where = _("chapter {number}").format(number=q.chapter)
    lines = [f"{head}[{q.id} | {where} | {difficulty_names().get(q.difficulty, q.difficulty)} | {kind}]", q.prompt]
    lines += [f"  {letter}. {q.options[i].text}" for letter, i in zip(presented.labels, presented.order)]
    return "\n".join(lines)


def shown(text: str) -> str:
    """``text`` stripped and quoted for a message, cut to ``ECHO_LIMIT`` characters with "…"."""
    text = text.strip()
    return repr(text if len(text) <= ECHO_LIMIT else text[:ECHO_LIMIT] + "…")


def _parse_letters(presented: Presented, text: str) -> frozenset[int]:
    letters = re.sub(SEPARATORS, "", text).upper()
    if not letters:
        raise AnswerError(_("no option chosen in {typed}; answer with {hint}").format(
            typed=shown(text), hint=answer_hint(presented)))
    unknown = sorted(set(letters) - set(presented.labels))
    if unknown:
        listed = ", ".join(unknown)
        listed = listed if len(listed) <= ECHO_LIMIT else listed[:ECHO_LIMIT] + "…"
        raise AnswerError(_("{letters} is not an option; answer with {hint}").format(
            letters=listed, hint=answer_hint(presented)))
    if len(set(letters)) != len(letters):
        raise AnswerError(_("a letter is repeated in {typed}; give each option once").format(typed=shown(text)))
    return frozenset(presented.order[LETTERS.index(letter)] for letter in letters)


def _parse_yes_no(text: str, hint: str) -> bool:
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise AnswerError(_("{typed} is not understood; answer with {hint}").format(typed=shown(text), hint=hint))


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
        raise AnswerError(_("no answer given; type {hint}").format(hint=answer_hint(presented)))
    text = unicodedata.normalize("NFKC", text)  # full-width letters and digits (Ａ，１２．５) as their ASCII forms
    kind = presented.question.type
    if kind in ("single", "multiple"):
        chosen = _parse_letters(presented, text)
        if kind == "single" and len(chosen) != 1:
            raise AnswerError(_("this is a single-choice question; answer with {hint}").format(
                hint=answer_hint(presented)))
        return chosen
    if kind == "numeric":
        try:
            value = float(text.strip().replace("_", ""))
        except ValueError:
            raise AnswerError(_("{typed} is not a number; type e.g. 11.31 or 6.4e1").format(typed=shown(text))) \
                from None
        if not np.isfinite(value):
            raise AnswerError(_("{typed} is not a finite number").format(typed=shown(text)))
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
                         for letter in letters) or _("(none)")
    if q.type == "true_false":
        return _("true") if answer else _("false")
    if q.type == "numeric":
        return f"{float(answer):.10g}"
    return _("got it") if answer else _("missed it")


def right_answer(presented: Presented) -> str:
    """The right answer as text."""
    q = presented.question
    if q.type in ("single", "multiple"):
        return describe(presented, q.correct_options)
    if q.type == "numeric":
        within = _(" (within {tolerance})").format(tolerance=f"{q.tolerance:g}") if q.tolerance else ""
        return f"{q.answer:.10g}" + within
    if q.type == "true_false":
        return _("true") if q.answer else _("false")
    return q.model_answer


def feedback(presented: Presented, answer) -> str:
    """Verdict, the right answer and the explanation, as plain text."""
    q = presented.question
    if q.type == "open":
        verdict = _("Marked as known.") if answer else _("Marked as missed: it goes into the wrong-answer book.")
        return verdict + "\n" + _("Why: {explanation}").format(explanation=q.explanation)
    verdict = _("Right.") if grade(q, answer) else _("Wrong: you answered {answer}.").format(
        answer=describe(presented, answer))
    return "\n".join([verdict, _("Answer: {answer}").format(answer=right_answer(presented)),
                      _("Why: {explanation}").format(explanation=q.explanation)]) + _why_not(presented, answer)


def _why_not(presented: Presented, answer) -> str:
    """For each wrong option chosen, the mistake it stands for (its ``why``), one line each."""
    q = presented.question
    if q.type not in ("single", "multiple"):
        return ""
    wrong = sorted(i for i in answer if not q.options[i].correct and q.options[i].why)
    return "".join("\n" + _("Not {letter}: {why}").format(letter=presented.letter_of(i), why=q.options[i].why)
                   for i in wrong)


def late_note(seconds: float, budget: float) -> str:
    """``late: 189 s of 180 s``: how late an answer came (kept with it in the store)."""
    return _("late: {seconds} s of {budget} s").format(seconds=f"{seconds:.0f}", budget=f"{budget:.0f}")


def late_feedback(presented: Presented, late: str) -> str:
    """Feedback for an answer given after a mock interview's time: wrong whatever it was, then the answer."""
    return "\n".join([_("Too late ({late}): this answer counts as wrong.").format(late=late),
                      _("Answer: {answer}").format(answer=right_answer(presented)),
                      _("Why: {explanation}").format(explanation=presented.question.explanation)])


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
            return _("No question answered.")
        rows = [f"  ch{number:02d} {padded(find_chapter(number).shown_title, 45)} {right}/{asked}"
                for number, (right, asked) in self.score_by_chapter().items()]
        right = sum(correct for _question, correct in self.results)
        unanswered = ["  " + _("({count} unanswered, counted as wrong)").format(count=self.unanswered)] \
            if self.unanswered else []
        rows.append(f"  {padded(_('total'), 51)}{right}/{len(self.results)}")
        return "\n".join([_("Score by chapter:"), *rows, *unanswered])
