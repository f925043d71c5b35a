"""The course glossary: the seed's key terms in English and Chinese (data in ``glossary.yaml``)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import yaml

from .chapters import chapter

GLOSSARY_FILE = Path(__file__).with_name("glossary.yaml")
FIELDS = ("en", "zh", "meaning", "chapter")


class Term(NamedTuple):
    en: str
    zh: str
    meaning: str
    chapter: int  # the chapter that teaches it


@lru_cache(maxsize=1)
def load_glossary(path: Path = GLOSSARY_FILE) -> tuple[Term, ...]:
    """Read and check the glossary: every entry has exactly the four fields and a chapter of the course.

    Raises
    ------
    ValueError
        Naming the entry and what is wrong with it.

    Examples
    --------
    >>> load_glossary()[0].zh
    '缩放点积注意力'
    """
    entries = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    terms = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != set(FIELDS):
            raise ValueError(f"{path.name} entry {index} must have exactly the fields {FIELDS}; got {entry!r}")
        chapter(entry["chapter"])  # KeyError names the chapters that exist
        terms.append(Term(**{name: entry[name] for name in FIELDS}))
    return tuple(terms)


def glossary_markdown(link_prefix: str = "") -> str:
    """The glossary as a Markdown table, each term linked to its chapter's notebook.

    ``link_prefix`` is the path from the reader to ``notebooks/`` ("" from inside it).

    Examples
    --------
    >>> glossary_markdown().splitlines()[0]
    '| English | 中文 | meaning | chapter |'
    """
    rows = ["| English | 中文 | meaning | chapter |", "|---|---|---|---|"]
    for term in load_glossary():
        where = chapter(term.chapter)
        rows.append(f"| **{term.en}** | {term.zh} | {term.meaning} | "
                    f"[{where.number}]({link_prefix}{where.notebook.removeprefix('notebooks/')}) |")
    return "\n".join(rows)
