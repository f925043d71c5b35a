"""Markdown documents (the README, the guides) as translation units, and a document rebuilt in another language.

A document's units are its blocks: the stretches between blank lines, a fenced code block
whole (blank lines and all: its comments are prose a reader reads).  A unit's context is the
slug of the heading it sits under (``in-a-terminal``), so an edit in one section leaves the
contexts of the others as they were.  A translated document is the English one with each block
replaced by its translation and the blank lines between blocks kept.
"""
from __future__ import annotations

import re
from typing import Callable

from .notebooks import Unit

FENCE = re.compile(r"^(```|~~~)")


def _pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, is_block)``: blocks and the blank-line runs between them, in order."""
    pieces: list[tuple[str, bool]] = []
    block: list[str] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        if not fenced and not line.strip() and not FENCE.match(line.lstrip()):
            if block:
                pieces.append(("".join(block), True))
                block = []
            pieces.append((line, False))
        else:
            block.append(line)
    if block:
        pieces.append(("".join(block), True))
    return pieces


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lstrip("#").strip().lower()).strip("-") or "top"


def _blocks_with_context(text: str) -> list[tuple[str, str]]:
    section, found = "top", []
    for piece, is_block in _pieces(text):
        if is_block:
            if piece.startswith("#"):
                section = _slug(piece.splitlines()[0])
            found.append((section, piece.rstrip("\n")))
    return found


def units(text: str) -> list[Unit]:
    """The blocks of a Markdown document, each with the slug of its section as context."""
    return [Unit(context, block, "markdown") for context, block in _blocks_with_context(text)]


def translated(text: str, translate: Callable[[Unit], str | None]) -> str:
    """``text`` with each block replaced by ``translate(unit)`` (None keeps the English)."""
    section, out = "top", []
    for piece, is_block in _pieces(text):
        if not is_block:
            out.append(piece)
            continue
        if piece.startswith("#"):
            section = _slug(piece.splitlines()[0])
        english = piece.rstrip("\n")
        out.append((translate(Unit(section, english, "markdown")) or english) + piece[len(english):])
    return "".join(out)
