"""The course's own messages (what its commands and widgets print) in the learner's language.

A message is marked where it is written, ``_("Your answer ({hint}; q quits): ").format(hint=...)``:
a constant string, with ``{name}`` fields filled by ``str.format`` after translation (an f-string
cannot be translated, since its text is only known once it has run).  The marked strings of the
whole package are one translation unit each, in one catalog per language
(``sdpa_course/locale/zh_CN/messages.po``, context ``message``); ``scripts/translate.py update``
finds them, and a translation must keep the English's ``{fields}``.  In English, or for a
message not translated yet (or stale), ``_`` returns the English.
"""
from __future__ import annotations

import ast
import string
from functools import lru_cache
from pathlib import Path

from .language import spoken_language
from .notebooks import Unit

PACKAGE = Path(__file__).resolve().parents[1]
CONTEXT = "message"
LOCALES = {"zh": "zh_CN"}


def catalog_file(language: str, package: Path = PACKAGE) -> Path:
    return package / "locale" / LOCALES[language] / "messages.po"


@lru_cache(maxsize=None)
def _translations(language: str) -> dict[str, str]:
    path = catalog_file(language)
    if not path.exists():
        return {}
    import polib
    return {entry.msgid: entry.msgstr for entry in polib.pofile(str(path))
            if entry.msgstr and "fuzzy" not in entry.flags and not entry.obsolete}


def _(text: str) -> str:
    """``text`` in the learner's language (:func:`~sdpa_course.i18n.language.spoken_language`)."""
    language = spoken_language()
    if language == "en":
        return text
    return _translations(language).get(text, text)


def message_units(package: Path = PACKAGE) -> list[Unit]:
    """Every string marked with ``_(...)`` in the package's modules, once each, in file order."""
    found: dict[str, Unit] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_"]
        for call in sorted(calls, key=lambda node: (node.lineno, node.col_offset)):
            if len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
                found.setdefault(call.args[0].value, Unit(CONTEXT, call.args[0].value, "message"))
    return list(found.values())


def field_problem(english: str, translated: str) -> str | None:
    """Why ``translated`` cannot stand for ``english`` as a format string (other ``{fields}``), or None."""
    def fields(text: str) -> list[str]:
        return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)
    try:
        mine, theirs = fields(english), fields(translated)
    except ValueError as error:
        return f"the translation is not a valid format string ({error})"
    return None if mine == theirs else f"the translation's {{fields}} {theirs} are not the English ones {mine}"
