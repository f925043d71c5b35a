"""The text of a notebook that a learner reads, as translation units, and a notebook rebuilt in another language.

A notebook's translatable text is:

* each markdown cell, whole: one unit whose context is the cell's id;
* in each code cell, the string literals a learner reads in the output: the arguments of
  ``print``, of the figure calls (``set_title``, ``set_xlabel``, ``text``, ``annotate``, ...), of a
  grade cell's feedback (``raise GradingError(f"...")``, the ``what`` of ``expect_close``,
  ``expect_shape``, ``expect_rows_sum_to_one``) and the ``title=``, ``label=``, ``xlabel=``,
  ``ylabel=``, ``description=`` and ``hint=`` keywords of any call; a literal joined to others
  with ``+`` counts as an argument.  A unit is the literal's source as written
  (``f"max weight {w:.2f}"``, quotes and prefix included) and its context the cell's id.

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

READ_BY_LEARNER_CALLS = {"print", "set_title", "set_xlabel", "set_ylabel", "suptitle", "title", "xlabel", "ylabel",
                         "text", "annotate", "GradingError", "expect_close", "expect_shape", "expect_rows_sum_to_one"}
READ_BY_LEARNER_KEYWORDS = {"title", "label", "xlabel", "ylabel", "description", "hint"}
WORDS = re.compile(r"[A-Za-z]{2,}")  # a literal without a word ("-" * 20, ", ") is not prose


@dataclass(frozen=True)
class Unit:
    """One translatable text: ``context`` is its cell's id, ``text`` the English; ``kind`` "markdown" or "literal"."""
    context: str
    text: str
    kind: str


def _literals(source: str, *, prose_only: bool = True) -> list[ast.expr]:
    """The string literals of a code cell that its output shows a learner, in source order.

    ``prose_only=False`` also gives those without an English word (a translation of one has none).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell magic or shell line: nothing to translate
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        candidates = list(node.args) if name in READ_BY_LEARNER_CALLS else []
        candidates += [keyword.value for keyword in node.keywords if keyword.arg in READ_BY_LEARNER_KEYWORDS]
        found += [value for candidate in candidates for value in _joined(candidate)
                  if _is_string_literal(value) and (_is_prose_literal(value) or not prose_only)]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _joined(node: ast.expr) -> list[ast.expr]:
    """The operands of ``a + b + ...`` (``f"variance {v}; " + feedback(v)``), else ``[node]``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _joined(node.left) + _joined(node.right)
    return [node]


def _is_string_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_prose_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(WORDS.search(node.value))
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.Constant) and WORDS.search(part.value) for part in node.values)
    return False


def _segments(source: str, *, prose_only: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, literal source)`` of each translatable literal, as character offsets into ``source``."""
    lines = source.splitlines(keepends=True)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))

    def offset(line_number: int, byte_column: int) -> int:  # ast columns count UTF-8 bytes
        return line_starts[line_number - 1] + len(lines[line_number - 1].encode()[:byte_column].decode())

    segments = []
    for node in _literals(source, prose_only=prose_only):
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
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            found.append(Unit(cell.id, cell.source, "markdown"))
        elif cell.cell_type == "code":
            seen = set()
            for _, _, literal in _segments(cell.source):
                if literal not in seen:
                    seen.add(literal)
                    found.append(Unit(cell.id, literal, "literal"))
    return found


def _fields(node: ast.expr) -> list[str]:
    if isinstance(node, ast.JoinedStr):
        return sorted(ast.unparse(part) for part in node.values if isinstance(part, ast.FormattedValue))
    return []


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
    for cell in result.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            cell.source = translate(Unit(cell.id, cell.source, "markdown")) or cell.source
        elif cell.cell_type == "code":
            source = cell.source
            for start, end, literal in reversed(_segments(source)):
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
