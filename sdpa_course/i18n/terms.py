"""The glossary as a term base: a translation that mentions a glossary term must use the glossary's Chinese for it.

A term is searched for by its English name, without what follows in parentheses (a gloss such as
"norm (length)" or an abbreviation such as "query (Q)"); "prefill / decode" is two terms.  Its
Chinese forms are the
glossary's, before and inside the full-width parentheses ("查询（查询卡）": 查询 or 查询卡).  A
Chinese form in Latin letters ("Softmax 归一化", "bfloat16（脑浮点）") may stay in Latin letters, and
so may an English form written like code (``d_model``, ``FlashAttention``, ``KV cache``).

The English is searched outside code and formulas (backticks, ``$...$``), as whole words.  Where
a glossary word is used in another sense ("layer norm" is not the "norm (length)" of chapter 3),
the catalog entry says so in a translator comment: ``glossary: not norm (layer norm)``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..glossary import load_glossary

CODE_OR_MATH = re.compile(r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", re.S)
LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class TermPair:
    """One English term and the Chinese the course uses for it."""
    english: tuple[str, ...]  # forms searched for in the English
    chinese: tuple[str, ...]  # forms of which the Chinese must hold one
    name: str  # as a translator comment names it

    def pattern(self) -> re.Pattern:
        forms = "|".join(re.escape(form) for form in sorted(self.english, key=len, reverse=True))
        return re.compile(rf"(?<![\w-])(?:{forms})(?:s|es)?(?![\w-])", re.I)


def _split(text: str, opening: str, closing: str) -> tuple[str, str]:
    if opening in text and text.endswith(closing):
        outside, inside = text[:-1].split(opening, 1)
        return outside.strip(), inside.strip()
    return text.strip(), ""


def _pairs_of(en: str, zh: str) -> list[TermPair]:
    english_parts, chinese_parts = en.split(" / "), zh.split(" / ")
    if len(english_parts) != len(chinese_parts):
        english_parts, chinese_parts = [en], [zh]
    pairs = []
    for english, chinese in zip(english_parts, chinese_parts):
        name, _ = _split(english, "(", ")")
        outside, inside = _split(chinese, "（", "）")
        english_forms = [name]  # "(length)", "(Q)": a gloss or an abbreviation, not searched for
        chinese_forms = [form for form in (outside, inside) if form]
        chinese_forms += [word for form in chinese_forms for word in LATIN.findall(form)]  # "Softmax 归一化"
        chinese_forms += [form for form in english_forms if re.search(r"[A-Z_]", form)]  # d_model, KV cache
        pairs.append(TermPair(tuple(english_forms), tuple(dict.fromkeys(chinese_forms)), name))
    return pairs


def term_pairs() -> list[TermPair]:
    return [pair for term in load_glossary() for pair in _pairs_of(term.en, term.zh)]


def prose(text: str) -> str:
    """``text`` without its code spans, code blocks and formulas."""
    return CODE_OR_MATH.sub(" ", text)


def missing_terms(english: str, chinese: str, exceptions: str = "") -> list[str]:
    """The glossary terms ``english`` uses that ``chinese`` does not render as the glossary does.

    ``exceptions``: translator comments; a line ``glossary: not <name> ...`` excuses that term.
    """
    excused = {match.strip().lower() for match in re.findall(r"glossary:\s*not\s+([^(\n]+)", exceptions)}
    found, text, target = [], prose(english), chinese.lower()
    for pair in term_pairs():
        if pair.name.lower() in excused or not pair.pattern().search(text):
            continue
        if not any(form.lower() in target for form in pair.chinese):
            found.append(f"{pair.name} -> {' / '.join(pair.chinese)}")
    return found
