"""The question bank's schema: one ``Question`` per entry, checked with errors naming file and id.

A bank file (``bank/chNN_<slug>.yaml``) holds ``chapter: N`` and a list ``questions``.  Every
question has ``id``, ``type``, ``difficulty``, ``tags``, ``prompt`` and ``explanation``; the
rest depends on the type:

=============  ==============================================================
type           answer fields
=============  ==============================================================
single         ``options``: list of ``{text, correct, why}``, exactly one correct
multiple       ``options``: list of ``{text, correct, why}``, at least one correct
true_false     ``answer``: true or false
numeric        ``answer``: a number, ``tolerance``: absolute, >= 0
open           ``model_answer``: text (the learner grades themself)
=============  ==============================================================

An option's ``why`` says, for a wrong option, which real mistake it is and why it fails
(shown to a learner who picks it); a right option has none.

Optional: ``zh`` (the Chinese original, for questions taken from the seed), ``source``, and
``formerly``: the ids the question had before (a list), so that a renamed question keeps the
learner's history.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..chapters import CHAPTERS

TYPES = ("single", "multiple", "true_false", "numeric", "open")
DIFFICULTIES = ("easy", "mid", "hard")
COMMON_FIELDS = {"id", "type", "difficulty", "tags", "prompt", "explanation", "zh", "source", "formerly"}
TYPE_FIELDS = {
    "single": {"options"},
    "multiple": {"options"},
    "true_false": {"answer"},
    "numeric": {"answer", "tolerance"},
    "open": {"model_answer"},
}


class BankError(ValueError):
    """A bank file breaks the schema; the message names the file and the question id."""


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    why: str = ""  # for a wrong option: the mistake it stands for and why it is wrong


@dataclass(frozen=True)
class Question:
    id: str
    chapter: int
    type: str
    difficulty: str
    tags: tuple[str, ...]
    prompt: str
    explanation: str
    options: tuple[Option, ...] = ()
    answer: bool | float | None = None
    tolerance: float = 0.0
    model_answer: str = ""
    zh: str = ""
    source: str = ""
    formerly: tuple[str, ...] = ()  # earlier ids of this question, whose answers are its own

    @property
    def correct_options(self) -> frozenset[int]:
        """Indices (in bank order) of the correct options; empty for non-choice questions."""
        return frozenset(i for i, option in enumerate(self.options) if option.correct)


def _fail(where: str, problem: str):
    raise BankError(f"{where}: {problem}")


def _text(raw: dict, name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        _fail(where, f"'{name}' must be a non-empty string; got {value!r}")
    return value.strip()


def _optional_text(raw: dict, name: str, where: str) -> str:
    value = raw.get(name, "")
    if not isinstance(value, str):
        _fail(where, f"'{name}' must be a string; got {value!r}")
    return value.strip()


def _options(raw: dict, kind: str, where: str) -> tuple[Option, ...]:
    options = raw.get("options")
    if not isinstance(options, list) or len(options) < 2:
        _fail(where, f"'options' must be a list of at least 2 {{text, correct}} entries; got {options!r}")
    parsed = []
    for number, option in enumerate(options, 1):
        if not isinstance(option, dict) or set(option) - {"text", "correct", "why"}:
            _fail(where, f"option {number} must be a mapping with keys text, correct and why; got {option!r}")
        correct = option.get("correct", False)
        if not isinstance(correct, bool):
            _fail(where, f"option {number}: 'correct' must be true or false; got {correct!r}")
        why = _optional_text(option, "why", f"{where} option {number}")
        if correct and why:
            _fail(where, f"option {number} is correct: its reasons belong in the explanation, not in 'why'")
        parsed.append(Option(_text(option, "text", f"{where} option {number}"), correct, why))
    if len({option.text for option in parsed}) != len(parsed):
        _fail(where, "two options have the same text")
    n_correct = sum(option.correct for option in parsed)
    if kind == "single" and n_correct != 1:
        _fail(where, f"a single-choice question needs exactly one correct option; it has {n_correct}")
    if kind == "multiple" and n_correct < 1:
        _fail(where, "a multiple-choice question needs at least one correct option; it has none")
    return tuple(parsed)


def _number(raw: dict, name: str, where: str) -> float:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(where, f"'{name}' must be a finite number; got {value!r}")
    return float(value)


def _answer_fields(raw: dict, kind: str, where: str) -> dict:
    if kind in ("single", "multiple"):
        return {"options": _options(raw, kind, where)}
    if kind == "true_false":
        if not isinstance(raw.get("answer"), bool):
            _fail(where, f"'answer' must be true or false; got {raw.get('answer')!r}")
        return {"answer": raw["answer"]}
    if kind == "numeric":
        tolerance = _number(raw, "tolerance", where)
        if tolerance < 0:
            _fail(where, f"'tolerance' must be >= 0; got {tolerance}")
        return {"answer": _number(raw, "answer", where), "tolerance": tolerance}
    return {"model_answer": _text(raw, "model_answer", where)}


def _tags(raw: dict, where: str) -> tuple[str, ...]:
    tags = raw.get("tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) and t.strip() for t in tags):
        _fail(where, f"'tags' must be a non-empty list of strings; got {tags!r}")
    return tuple(tag.strip().lower() for tag in tags)


def _formerly(raw: dict, where: str) -> tuple[str, ...]:
    ids = raw.get("formerly", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) and i.strip() for i in ids):
        _fail(where, f"'formerly' must be a list of earlier ids (strings); got {ids!r}")
    return tuple(i.strip() for i in ids)


def parse_question(raw, chapter: int, source: str) -> Question:
    """Check one raw entry of a bank file and build its :class:`Question`.

    Raises
    ------
    BankError
        naming ``source`` (the file) and the question id, and what is wrong.
    """
    if not isinstance(raw, dict):
        _fail(source, f"each question must be a mapping; got {type(raw).__name__}")
    where = f"{source} question {raw.get('id', '<no id>')!r}"
    qid = _text(raw, "id", where)
    kind = raw.get("type")
    if kind not in TYPES:
        _fail(where, f"'type' must be one of {', '.join(TYPES)}; got {kind!r}")
    unknown = set(raw) - COMMON_FIELDS - TYPE_FIELDS[kind]
    if unknown:
        _fail(where, f"unknown field(s) {sorted(unknown)} for type {kind}")
    if raw.get("difficulty") not in DIFFICULTIES:
        _fail(where, f"'difficulty' must be one of {', '.join(DIFFICULTIES)}; got {raw.get('difficulty')!r}")
    return Question(
        id=qid, chapter=chapter, type=kind, difficulty=raw["difficulty"], tags=_tags(raw, where),
        prompt=_text(raw, "prompt", where), explanation=_text(raw, "explanation", where),
        zh=_optional_text(raw, "zh", where), source=_optional_text(raw, "source", where),
        formerly=_formerly(raw, where),
        **_answer_fields(raw, kind, where))


def parse_bank_file(document, source: str) -> list[Question]:
    """Check a whole bank file (already parsed from YAML) and return its questions."""
    if not isinstance(document, dict) or set(document) != {"chapter", "questions"}:
        _fail(source, "a bank file must be a mapping with exactly the keys 'chapter' and 'questions'")
    number = document["chapter"]
    if number not in [c.number for c in CHAPTERS]:
        _fail(source, f"'chapter' must be 1-{len(CHAPTERS)}; got {number!r}")
    if not isinstance(document["questions"], list) or not document["questions"]:
        _fail(source, "'questions' must be a non-empty list")
    return [parse_question(raw, number, source) for raw in document["questions"]]
