"""Text laid out in terminal columns, where a Chinese character takes two."""
from __future__ import annotations

import unicodedata


def padded(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (a Chinese character takes two), left-aligned
    unless ``right``; as ``f"{text:<{width}}"`` for ASCII text, and longer text is left as it is."""
    columns = sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in text)
    fill = " " * max(0, width - columns)
    return fill + text if right else text + fill
