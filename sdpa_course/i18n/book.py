"""Which English sources the course translates, where their catalogs and translations live, and building them.

The sources are the lecture notebooks, the exercises' source (``solutions/``: the Chinese
``zh/exercises/`` is generated from ``zh/solutions/`` by nbgrader, as the English is), the question
bank's files and the guides.  For language ``zh``
(catalogs in ``locale/zh_CN/``), ``notebooks/04_scaling.ipynb`` has the catalog
``locale/zh_CN/notebooks/04_scaling.po`` and the generated notebook ``zh/notebooks/04_scaling.ipynb``.
The generated tree mirrors the English one, so a link such as ``05_softmax.ipynb`` leads to the
same chapter in the same language.  A bank file's catalog, package data
(``sdpa_course/locale/zh_CN/quiz/bank/ch04_scaling.po``), is read when the bank is loaded in that
language (:func:`sdpa_course.quiz.bank.load_bank`); nothing is generated from it.  A source is
translated once its catalog exists; :func:`translated_sources` lists those.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..quiz.bank import load_bank_file
from . import catalogs, documents, messages
from .notebooks import Unit, read, translated, units
from .questions import question_units

LANGUAGES = {"zh": "zh_CN"}  # the course's language codes and their gettext locale names
SOURCE_GLOBS = ("notebooks/*.ipynb", "solutions/*/*.ipynb", "sdpa_course/quiz/bank/*.yaml", "README.md",
                "docs/quiz.md")  # what is translated
DOCUMENT_SUFFIX = {"zh": ".zh-CN.md"}  # README.md -> README.zh-CN.md, beside the English


@dataclass(frozen=True)
class Source:
    """One English source (a notebook or a bank file) and, for one language, its catalog and its translation."""
    root: Path
    path: Path
    language: str

    @property
    def is_messages(self) -> bool:
        """The package itself: its ``_("...")`` messages (:mod:`~sdpa_course.i18n.messages`)."""
        return self.path.is_dir()

    @property
    def catalog(self) -> Path:
        """Under ``locale/`` beside the source's package (``sdpa_course/locale/`` for the bank: package data)."""
        if self.is_messages:
            return messages.catalog_file(self.language, self.path)
        package = self.root / "sdpa_course"
        base = package if self.path.resolve().is_relative_to(package.resolve()) else self.root
        return catalogs.catalog_path(base, self.path, LANGUAGES[self.language])

    @property
    def is_notebook(self) -> bool:
        return self.path.suffix == ".ipynb"

    @property
    def is_document(self) -> bool:
        return self.path.suffix == ".md"

    @property
    def output(self) -> Path:
        """The generated translation: a notebook under ``zh/``, a document beside the English (not for the bank)."""
        if self.is_document:
            return self.path.with_name(self.path.stem + DOCUMENT_SUFFIX[self.language])
        return self.root / self.language / self.path.relative_to(self.root)

    @property
    def name(self) -> str:
        return str(self.path.relative_to(self.root))

    def units(self) -> list[Unit]:
        if self.is_messages:
            return messages.message_units(self.path)
        if self.is_notebook:
            return units(read(self.path))
        if self.is_document:
            return documents.units(self.path.read_text(encoding="utf-8"))
        return question_units(load_bank_file(self.path))

    def problems(self) -> list[str]:
        """What keeps the catalog from translating the source faithfully (empty: complete and current)."""
        catalog = catalogs.load(self.catalog, LANGUAGES[self.language])
        where = "cell" if self.is_notebook else "section" if self.is_document else "messages" if self.is_messages \
            else "question"
        return catalogs.problems(catalog, self.units(), where)


def language_code(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"no translation into {language!r}; languages: {', '.join(LANGUAGES)}")
    return language


def all_sources(root: Path, language: str) -> list[Source]:
    """Every English source that can be translated, translated yet or not."""
    language_code(language)
    found = [Source(root, path, language) for pattern in SOURCE_GLOBS for path in sorted(root.glob(pattern))]
    return found + [Source(root, root / "sdpa_course", language)]  # the package's own messages


def translated_sources(root: Path, language: str) -> list[Source]:
    """The English sources that have a catalog in ``language``."""
    return [source for source in all_sources(root, language) if source.catalog.exists()]


def update(source: Source) -> None:
    """Write ``source``'s catalog in step with its English (see :func:`catalogs.updated`)."""
    catalog = catalogs.updated(catalogs.load(source.catalog, LANGUAGES[source.language]), source.units(), source.name)
    source.catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.save(str(source.catalog))


def built(source: Source):
    """The translated notebook (a node) or document (text) of ``source`` (untranslated or stale units stay English)."""
    translate = catalogs.translator(catalogs.load(source.catalog, LANGUAGES[source.language]))
    if source.is_document:
        return documents.translated(source.path.read_text(encoding="utf-8"), translate)
    return translated(read(source.path), translate, source.language)


def build(source: Source) -> Path:
    """Write ``source``'s translation; refuses with ``ValueError`` listing its catalog's problems."""
    problems = source.problems()
    if problems:
        raise ValueError(f"{source.catalog} cannot build {source.output}:\n  " + "\n  ".join(problems))
    source.output.parent.mkdir(parents=True, exist_ok=True)
    if source.is_document:
        source.output.write_text(built(source), encoding="utf-8")
    else:
        nbformat.write(built(source), str(source.output))
    return source.output
