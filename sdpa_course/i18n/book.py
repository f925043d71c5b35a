"""Which English notebooks the course translates, where their catalogs and translated notebooks live, and building them.

For language ``zh`` (catalogs in ``locale/zh_CN/``), ``notebooks/04_scaling.ipynb`` has the
catalog ``locale/zh_CN/notebooks/04_scaling.po`` and the generated notebook
``zh/notebooks/04_scaling.ipynb``.  The generated tree mirrors the English one, so a link such as
``../exercises/ch04_scaling/ch04_scaling.ipynb`` leads to the same chapter in the same language.
A notebook is translated once its catalog exists; :func:`translated_sources` lists those.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import catalogs
from .notebooks import read, translated, units

LANGUAGES = {"zh": "zh_CN"}  # the course's language codes and their gettext locale names
SOURCE_FOLDERS = ("notebooks",)  # the English notebooks that have translations
# matplotlib reads a matplotlibrc in the working directory, which is the notebook's folder: the
# Chinese figures fall back, glyph by glyph, to the first CJK font installed (Debian: fonts-wqy-microhei).
MATPLOTLIBRC = {"zh": "font.sans-serif: DejaVu Sans, WenQuanYi Micro Hei, Noto Sans CJK SC, Noto Sans SC, "
                      "Source Han Sans SC, PingFang SC, Microsoft YaHei, SimHei, Arial Unicode MS\n"}


@dataclass(frozen=True)
class Source:
    """One English notebook and, for one language, its catalog and its generated translation."""
    root: Path
    notebook: Path
    language: str

    @property
    def catalog(self) -> Path:
        return catalogs.catalog_path(self.root, self.notebook, LANGUAGES[self.language])

    @property
    def output(self) -> Path:
        return self.root / self.language / self.notebook.relative_to(self.root)

    @property
    def name(self) -> str:
        return str(self.notebook.relative_to(self.root))


def language_code(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"no translation into {language!r}; languages: {', '.join(LANGUAGES)}")
    return language


def all_sources(root: Path, language: str) -> list[Source]:
    """Every English notebook that can be translated, translated yet or not."""
    language_code(language)
    return [Source(root, path, language) for folder in SOURCE_FOLDERS for path in sorted((root / folder).glob("*.ipynb"))]


def translated_sources(root: Path, language: str) -> list[Source]:
    """The English notebooks that have a catalog in ``language``."""
    return [source for source in all_sources(root, language) if source.catalog.exists()]


def update(source: Source) -> None:
    """Write ``source``'s catalog in step with its English notebook (see :func:`catalogs.updated`)."""
    catalog = catalogs.updated(catalogs.load(source.catalog, LANGUAGES[source.language]), units(read(source.notebook)),
                               source.name)
    source.catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.save(str(source.catalog))


def built(source: Source):
    """The translated notebook of ``source`` (untranslated or stale units stay English)."""
    catalog = catalogs.load(source.catalog, LANGUAGES[source.language])
    return translated(read(source.notebook), catalogs.translator(catalog), source.language)


def build(source: Source) -> Path:
    """Write ``source``'s translated notebook; refuses with ``ValueError`` listing its catalog's problems."""
    catalog = catalogs.load(source.catalog, LANGUAGES[source.language])
    problems = catalogs.problems(catalog, units(read(source.notebook)))
    if problems:
        raise ValueError(f"{source.catalog} cannot build {source.output}:\n  " + "\n  ".join(problems))
    source.output.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(built(source), str(source.output))
    (source.output.parent / "matplotlibrc").write_text(MATPLOTLIBRC[source.language], encoding="utf-8")
    return source.output
