"""The course's own messages (what its commands and widgets print) in the learner's language.

A message is marked where it is written, ``_("Your answer ({hint}; q quits): ").format(hint=...)``:
a constant string, with ``{name}`` fields filled by ``str.format`` after translation (an f-string
cannot be translated, since its text is only known once it has run).  The marked strings of the
whole package are one translation unit each, in one catalog per language
(``sdpa_course/locale/zh_CN/messages.po``, context ``message``, or ``message|<context>`` for
:func:`C_`); ``scripts/translate.py update``
finds them, and a translation must keep the English's ``{fields}``.  In English, or for a
message not translated yet (or stale), ``_`` returns the English.

Text written into a table at import (a widget's labels, a table of hints) is marked with
:func:`N_`, which returns it as it is, and translated with ``_`` where it is shown: the learner's
language is only known then.  A catalogued mistake's name and hint are messages without a mark
(see :data:`KEYWORDS`).
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
def _translations(language: str) -> dict[tuple[str, str], str]:
    """``{(msgctxt, English): translation}`` of the current entries of ``language``'s catalog."""
    path = catalog_file(language)
    if not path.exists():
        return {}
    import polib
    return {(entry.msgctxt, entry.msgid): entry.msgstr for entry in polib.pofile(str(path))
            if entry.msgstr and "fuzzy" not in entry.flags and not entry.obsolete}


def _(text: str) -> str:
    """``text`` in the learner's language (:func:`~sdpa_course.i18n.language.spoken_language`)."""
    return _translated(CONTEXT, text)


def C_(context: str, text: str) -> str:
    """``text`` in the learner's language, where the same English means something else elsewhere (gettext's
    ``pgettext``): ``C_("padding side", "right")`` is not the "right" of a right answer."""
    return _translated(f"{CONTEXT}|{context}", text)


def _translated(context: str, text: str) -> str:
    language = spoken_language()
    if language == "en":
        return text
    return _translations(language).get((context, text), text)


def N_(text: str) -> str:
    """Mark ``text`` for translation where it is defined, and return it unchanged (gettext's ``gettext_noop``);
    ``_(text)`` translates it where it is shown."""
    return text


# What marks a message, as xgettext's --keyword specs: the call and which of its arguments (1-based, or by
# keyword) are messages.  A catalogued mistake's name and hint are shown to learners: ``Mistake`` marks them.
# ``C_(context, text)`` gives its message a context (its first argument).
KEYWORDS = {"_": ((1, None),), "N_": ((1, None),), "C_": ((2, None),), "Mistake": ((1, "name"), (3, "hint"))}


def _marked(call: ast.Call) -> list[tuple[str, ast.Constant]]:
    """``(msgctxt, string)`` of each message ``call`` marks."""
    function = getattr(call.func, "id", None)
    spec = KEYWORDS.get(function, ())
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    found = [call.args[position - 1] if position <= len(call.args) else keywords.get(name) for position, name in spec]
    context = CONTEXT
    if function == "C_":
        if not (call.args and _is_text(call.args[0])):
            return []
        context = f"{CONTEXT}|{call.args[0].value}"
    return [(context, node) for node in found if _is_text(node)]


def _is_text(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def message_units(package: Path = PACKAGE) -> list[Unit]:
    """Every string marked as a message (:data:`KEYWORDS`) in the package's modules, once each, in file order."""
    found: dict[tuple[str, str], Unit] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        strings = [marked for call in ast.walk(tree) if isinstance(call, ast.Call) for marked in _marked(call)]
        for context, node in sorted(strings, key=lambda marked: (marked[1].lineno, marked[1].col_offset)):
            found.setdefault((context, node.value), Unit(context, node.value, "message"))
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
