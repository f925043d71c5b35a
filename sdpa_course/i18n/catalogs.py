"""Translation catalogs (gettext ``.po`` files, read and written with ``polib``) for the course's English sources.

One catalog per English source file: ``locale/<language>/<folder>/<name>.po`` for
``<folder>/<name>.ipynb`` (or ``.yaml``).  Each entry is one :class:`~sdpa_course.i18n.notebooks.Unit`:
``msgctxt`` where it sits (a notebook cell's id, a question's id and field), ``msgid`` the
English text, ``msgstr`` the translation; its occurrence names the source and its extracted
comment tells the translator the kind of unit.

:func:`updated` brings a catalog in line with its English source, as ``msgmerge`` does:

* a unit already in the catalog keeps its entry (translation, flags and translator comments);
* a unit whose English changed takes over the old entry of its cell (the most similar one, for
  a code cell with several literals): the translation is kept but marked **fuzzy**, with the
  old English as ``#| msgid``, so the translator sees what changed;
* a new unit gets an empty entry; entries of units that are gone are dropped.

:func:`problems` lists what stops a catalog from building a faithful notebook: an entry
missing or left over, untranslated, fuzzy, or a code literal whose translation is not a
literal of the same kind with the same fields.
"""
from __future__ import annotations

import difflib
from pathlib import Path

import polib

from .messages import field_problem
from .notebooks import Unit, literal_problem

LOCALE_DIR = "locale"
# The extracted comment of an entry, for the translator (written, never read back).
KIND_COMMENT = {"markdown": "markdown cell", "literal": "code cell: a string the output shows", "text": "text",
                "message": "a message of the course's code: keep its {fields}"}


def catalog_path(root: Path, source: Path, language: str) -> Path:
    """``locale/<language>/<folder>/<name>.po`` for ``<folder>/<name>.<ext>`` (paths relative to ``root``)."""
    relative = source.resolve().relative_to(root.resolve())
    return root / LOCALE_DIR / language / relative.with_suffix(".po")


def load(path: Path, language: str) -> polib.POFile:
    """The catalog at ``path``, or a new empty one for ``language`` if there is none yet."""
    if path.exists():
        return polib.pofile(str(path), wrapwidth=0)
    catalog = polib.POFile(wrapwidth=0)
    catalog.metadata = {"Project-Id-Version": "sdpa-course", "Language": language,
                        "MIME-Version": "1.0", "Content-Type": "text/plain; charset=UTF-8",
                        "Content-Transfer-Encoding": "8bit"}
    return catalog


def updated(catalog: polib.POFile, wanted: list[Unit], source_name: str) -> polib.POFile:
    """A catalog with one entry per unit of ``wanted``, in their order, carrying over what ``catalog`` holds."""
    old = {(entry.msgctxt, entry.msgid): entry for entry in catalog if not entry.obsolete}
    current = {(unit.context, unit.text) for unit in wanted}
    orphans: dict[str, list[polib.POEntry]] = {}
    for key, entry in old.items():
        if key not in current and entry.msgstr:
            orphans.setdefault(entry.msgctxt, []).append(entry)
    result = polib.POFile(wrapwidth=0)
    result.metadata = dict(catalog.metadata)
    for unit in wanted:
        entry = polib.POEntry(msgctxt=unit.context, msgid=unit.text, comment=KIND_COMMENT[unit.kind],
                              occurrences=[(source_name, unit.context)])
        kept = old.get((unit.context, unit.text))
        if kept is not None:
            entry.msgstr, entry.flags = kept.msgstr, list(kept.flags)
            entry.previous_msgid, entry.tcomment = kept.previous_msgid, kept.tcomment
        else:
            predecessor = _closest(unit, orphans.get(unit.context, []))
            if predecessor is not None:
                orphans[unit.context].remove(predecessor)
                entry.msgstr, entry.flags = predecessor.msgstr, ["fuzzy"]
                entry.previous_msgid = predecessor.previous_msgid or predecessor.msgid
                entry.tcomment = predecessor.tcomment  # the translator's notes go with the translation
        result.append(entry)
    return result


def _closest(unit: Unit, candidates: list[polib.POEntry]) -> polib.POEntry | None:
    """The old entry of the same cell most like ``unit``'s English (a changed text), if any.

    A cell's units are of one kind (a markdown cell, or a code cell's literals); a cell whose type
    changed gets its old translation as a fuzzy suggestion, which the translator replaces."""
    if not candidates:
        return None
    return max(candidates, key=lambda entry: difflib.SequenceMatcher(None, entry.msgid, unit.text).ratio())


def problems(catalog: polib.POFile, units: list[Unit], where: str = "cell") -> list[str]:
    """What keeps ``catalog`` from translating ``units`` faithfully; empty when it is complete and current.

    ``where`` names a context in the messages ("cell 3f2a...", "question ch04-...").
    """
    found = []
    entries = {(entry.msgctxt, entry.msgid): entry for entry in catalog if not entry.obsolete}
    wanted = {(unit.context, unit.text): unit for unit in units}
    for key in wanted.keys() - entries.keys():
        found.append(f"{where} {key[0]}: no entry for {_short(key[1])} (run scripts/translate.py update)")
    for key in entries.keys() - wanted.keys():
        found.append(f"{where} {key[0]}: the entry for {_short(key[1])} is left over (run scripts/translate.py update)")
    for key in wanted.keys() & entries.keys():
        entry, unit = entries[key], wanted[key]
        if "fuzzy" in entry.flags:
            was, now = _changed_part(entry.previous_msgid or "", entry.msgid)
            found.append(f"{where} {key[0]}: stale: the English changed since it was translated, from "
                         f"{_short(was)} to {_short(now)}")
        elif not entry.msgstr.strip():
            found.append(f"{where} {key[0]}: not translated: {_short(entry.msgid)}")
        elif unit.kind in ("literal", "message"):
            problem = (literal_problem if unit.kind == "literal" else field_problem)(unit.text, entry.msgstr)
            if problem:
                found.append(f"{where} {key[0]}: {problem}: {_short(entry.msgstr)}")
    return sorted(found)


def translator(catalog: polib.POFile):
    """``translate(unit)``: the translation of a unit when its entry is translated and current, else None."""
    done = {(entry.msgctxt, entry.msgid): entry.msgstr for entry in catalog
            if entry.msgstr and "fuzzy" not in entry.flags and not entry.obsolete}
    return lambda unit: done.get((unit.context, unit.text))


def _changed_part(old: str, new: str, margin: int = 15) -> tuple[str, str]:
    """The stretch where ``old`` and ``new`` differ, with ``margin`` characters of context either side."""
    start = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    end = 0
    while end < min(len(old), len(new)) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    begin = max(0, start - margin)
    return old[begin:len(old) - end + margin], new[begin:len(new) - end + margin]


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return repr(line if len(line) <= limit else line[:limit] + "…")
