"""The question bank's text as translation units, and a question in another language.

A question's translatable fields are its prompt, explanation and model answer, and each option's
text and ``why``; a unit's context is ``<question id>:<field>`` (``ch04-sqrt-128:prompt``,
``ch03-scale-key:option-2``, ``ch03-scale-key:why-2``, options counted from 1 in bank order).  Ids,
tags, answers, tolerances and which option is right are the English bank's: a translation
changes only what a learner reads.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..quiz.schema import Question
from .notebooks import Unit


def _fields(question: Question) -> list[tuple[str, str]]:
    fields = [("prompt", question.prompt), ("explanation", question.explanation), ("model_answer", question.model_answer)]
    for number, option in enumerate(question.options, 1):
        fields += [(f"option-{number}", option.text), (f"why-{number}", option.why)]
    return [(name, text) for name, text in fields if text]


def question_units(questions) -> list[Unit]:
    return [Unit(f"{q.id}:{name}", text, "text") for q in questions for name, text in _fields(q)]


def translated_question(question: Question, translate: Callable[[Unit], str | None]) -> Question:
    """``question`` with each translated field replaced (an untranslated one stays English)."""
    def text(name: str, english: str) -> str:
        return (translate(Unit(f"{question.id}:{name}", english, "text")) or english) if english else english

    options = tuple(replace(option, text=text(f"option-{n}", option.text), why=text(f"why-{n}", option.why))
                    for n, option in enumerate(question.options, 1))
    return replace(question, prompt=text("prompt", question.prompt), explanation=text("explanation", question.explanation),
                   model_answer=text("model_answer", question.model_answer), options=options)
