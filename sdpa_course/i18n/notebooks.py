"""The text of a notebook that a learner reads, as translation units, and a notebook rebuilt in another language.

A notebook's translatable text is:

* each markdown cell, whole: one unit whose context is the cell's id;
* in each code cell, the string literals a learner reads in the output (:mod:`~sdpa_course.i18n.display`
  says which: what ``print`` and the figure calls show, and the literals of names that are only
  shown).  A unit is the literal's source as written (``f"max weight {w:.2f}"``, quotes and prefix
  included) and its context the cell's id.

Everything else (code, comments, names, outputs) is the English notebook's.  A translated
notebook is the English one with each unit replaced by its translation: a markdown cell's
source by the translated text, a literal by the translated literal, which must be a literal of
the same kind with the same ``{...}`` fields (:func:`literal_problem`).  So the code a learner
runs in either language is the same code.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from typing import Callable

from .display import Notebook

WORDS = re.compile(r"[A-Za-z]{2,}")  # a literal without a word ("-" * 20, ", ") is not prose
PRINTF_FIELD = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[sdifgeExXr%]")  # "-> winner k%d" % index


@dataclass(frozen=True)
class Unit:
    """One translatable text: ``context`` is its cell's id, ``text`` the English; ``kind`` "markdown" or "literal"."""
    context: str
    text: str
    kind: str


def _is_prose_literal(node: ast.expr) -> bool:
    """Does the literal hold an English word (in its text or its constant fields, ``f"{'loop (ms)':>10}"``)?"""
    if isinstance(node, ast.Constant):
        return bool(WORDS.search(node.value))
    return any(WORDS.search(text) for text in _texts(node))


def _texts(node: ast.JoinedStr) -> list[str]:
    """The text of an f-string: its constant parts and the strings its fields show as they are."""
    texts = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            texts.append(part.value)
        elif isinstance(part, ast.FormattedValue):
            texts += [shown.value for shown in _shown_constants(part.value)]
    return texts


def _shown_constants(value: ast.expr) -> list[ast.Constant]:
    """The strings a field shows as they are: ``{'loop (ms)':>10}``, ``{'ok' if good else 'PROBLEM'}``,
    ``{oom or 'never'}``."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value]
    if isinstance(value, ast.IfExp):
        return _shown_constants(value.body) + _shown_constants(value.orelse)
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):  # {oom or 'never'}
        return _shown_constants(value.values[-1])
    return []


def _segments(source: str, shown: Notebook | None = None, *, prose_only: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, literal source)`` of each translatable literal, as character offsets into ``source``.

    ``shown`` is the cell's notebook (which names the other cells use); without it, the cell is read alone.
    """
    lines = source.splitlines(keepends=True)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))

    def offset(line_number: int, byte_column: int) -> int:  # ast columns count UTF-8 bytes
        return line_starts[line_number - 1] + len(lines[line_number - 1].encode()[:byte_column].decode())

    segments = []
    for node in (shown or Notebook([source])).literals(source):
        if _is_prose_literal(node) or not prose_only:
            start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
            segments.append((start, end, source[start:end]))
    return segments


def code_skeleton(source: str) -> str:
    """``source`` with every string a learner reads blanked: what a translation must leave exactly as it is."""
    for start, end, _ in reversed(_segments(source, prose_only=False)):
        source = source[:start] + "''" + source[end:]
    return source


def units(notebook) -> list[Unit]:
    """Every translatable unit of ``notebook`` (an nbformat node), in cell order; repeats within a cell once."""
    found: list[Unit] = []
    shown = _code_of(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            found.append(Unit(cell.id, cell.source, "markdown"))
        elif cell.cell_type == "code":
            seen = set()
            for _, _, literal in _segments(cell.source, shown):
                if literal not in seen:
                    seen.add(literal)
                    found.append(Unit(cell.id, literal, "literal"))
    return found


def _code_of(notebook) -> Notebook:
    return Notebook(cell.source for cell in notebook.cells if cell.cell_type == "code")


def _fields(node: ast.expr) -> list[str]:
    """A literal's fields as code: an f-string's ``{...}``, the strings they show as they are blanked (a translation
    changes those, and a constant field's width with them), or a %-format's ``%d``."""
    if isinstance(node, ast.Constant):
        return sorted(PRINTF_FIELD.findall(node.value))
    fields = []
    for part in node.values:
        if isinstance(part, ast.FormattedValue) and not isinstance(part.value, ast.Constant):  # a constant field is text
            field = copy.deepcopy(part)
            for constant in _shown_constants(field.value):
                constant.value = ""
            fields.append(ast.unparse(field))
    return sorted(fields)


def literal_problem(english: str, translated: str) -> str | None:
    """Why ``translated`` cannot replace the literal ``english`` (None if it can): not one literal, another
    kind of literal, or other ``{...}`` fields."""
    try:
        mine, theirs = (ast.parse(f"(\n{text}\n)", mode="eval").body for text in (english, translated))
    except SyntaxError as error:
        return f"the translation is not a Python string literal ({error.msg})"
    if type(mine) is not type(theirs) or not isinstance(theirs, (ast.Constant, ast.JoinedStr)):
        return "the translation must be a literal of the same kind (a plain string for a string, an f-string for an f-string)"
    if isinstance(theirs, ast.Constant) and not isinstance(theirs.value, str):
        return "the translation is not a string"
    if _fields(mine) != _fields(theirs):
        return f"the translation's {{...}} fields {_fields(theirs)} are not the English ones {_fields(mine)}"
    return None


def translated(notebook, translate: Callable[[Unit], str | None], language: str):
    """A copy of ``notebook`` with each unit replaced by ``translate(unit)`` (None keeps the English).

    The copy's metadata says its language (``metadata.language``), so a tool can tell the two apart.
    """
    result = copy.deepcopy(notebook)
    shown = _code_of(notebook)
    for cell in result.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            cell.source = translate(Unit(cell.id, cell.source, "markdown")) or cell.source
        elif cell.cell_type == "code":
            source = cell.source
            for start, end, literal in reversed(_segments(source, shown)):
                replacement = translate(Unit(cell.id, literal, "literal"))
                if replacement is not None:
                    source = source[:start] + replacement + source[end:]
            cell.source = source
    result.metadata["language"] = language
    return result


def read(path):
    """The notebook at ``path`` (an nbformat node, version 4)."""
    import nbformat
    return nbformat.read(str(path), as_version=4)
