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
DOCUMENT_SUFFIX = {"zh": ".zh-CN.md"}  # README.md -> README.zh-CN.md, beside the English


class Notebook:
    """A lecture or exercise notebook, translated into ``<language>/<the same path>``."""
    where = "cell"  # what a context is, in a catalog's problems

    @staticmethod
    def units(path: Path) -> list[Unit]:
        return units(read(path))

    @staticmethod
    def output(root: Path, path: Path, language: str) -> Path:
        return root / language / path.relative_to(root)

    @staticmethod
    def translation(path: Path, translate, language: str):
        return translated(read(path), translate, language)

    @staticmethod
    def write(translation, output: Path) -> None:
        nbformat.write(translation, str(output))


class Document:
    """A Markdown guide, translated beside the English (``README.md`` -> ``README.zh-CN.md``)."""
    where = "section"

    @staticmethod
    def units(path: Path) -> list[Unit]:
        return documents.units(path.read_text(encoding="utf-8"))

    @staticmethod
    def output(root: Path, path: Path, language: str) -> Path:
        return path.with_name(path.stem + DOCUMENT_SUFFIX[language])

    @staticmethod
    def translation(path: Path, translate, language: str) -> str:
        return documents.translated(path.read_text(encoding="utf-8"), translate)

    @staticmethod
    def write(translation: str, output: Path) -> None:
        output.write_text(translation, encoding="utf-8")


class BankFile:
    """A question bank file: its catalog is read when the bank is loaded; nothing is generated from it."""
    where = "question"
    output = translation = write = None

    @staticmethod
    def units(path: Path) -> list[Unit]:
        return question_units(load_bank_file(path))


class Messages:
    """The package's own messages (:mod:`~sdpa_course.i18n.messages`): read at run time, nothing generated."""
    where = "messages"
    output = translation = write = None

    @staticmethod
    def units(path: Path) -> list[Unit]:
        return messages.message_units(path)


# What is translated, and as what.  The package's messages are the package folder itself.
SOURCE_GLOBS = {"notebooks/*.ipynb": Notebook, "solutions/*/*.ipynb": Notebook,
                "sdpa_course/quiz/bank/*.yaml": BankFile, "README.md": Document, "docs/quiz.md": Document}


@dataclass(frozen=True)
class Source:
    """One English source (of a kind: :class:`Notebook`, :class:`Document`, :class:`BankFile`, :class:`Messages`)
    and, for one language, its catalog and its translation."""
    root: Path
    path: Path
    language: str
    kind: type = Notebook

    @property
    def catalog(self) -> Path:
        """Under ``locale/`` beside the source's package (``sdpa_course/locale/`` for the bank: package data)."""
        if self.kind is Messages:
            return messages.catalog_file(self.language, self.path)
        package = self.root / "sdpa_course"
        base = package if self.path.resolve().is_relative_to(package.resolve()) else self.root
        return catalogs.catalog_path(base, self.path, LANGUAGES[self.language])

    @property
    def is_generated(self) -> bool:
        """Is a translated file generated from the catalog (a notebook, a document)?"""
        return self.kind.output is not None

    @property
    def output(self) -> Path:
        """The generated translation (for a kind that has one)."""
        return self.kind.output(self.root, self.path, self.language)

    @property
    def name(self) -> str:
        return str(self.path.relative_to(self.root))

    def units(self) -> list[Unit]:
        return self.kind.units(self.path)

    def problems(self) -> list[str]:
        """What keeps the catalog from translating the source faithfully (empty: complete and current)."""
        catalog = catalogs.load(self.catalog, LANGUAGES[self.language])
        return catalogs.problems(catalog, self.units(), self.kind.where)


def language_code(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"no translation into {language!r}; languages: {', '.join(LANGUAGES)}")
    return language


def all_sources(root: Path, language: str) -> list[Source]:
    """Every English source that can be translated, translated yet or not."""
    language_code(language)
    found = [Source(root, path, language, kind) for pattern, kind in SOURCE_GLOBS.items()
             for path in sorted(root.glob(pattern))]
    return found + [Source(root, root / "sdpa_course", language, Messages)]


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
    return source.kind.translation(source.path, translate, source.language)


def build(source: Source) -> Path:
    """Write ``source``'s translation; refuses with ``ValueError`` listing its catalog's problems."""
    problems = source.problems()
    if problems:
        raise ValueError(f"{source.catalog} cannot build {source.output}:\n  " + "\n  ".join(problems))
    source.output.parent.mkdir(parents=True, exist_ok=True)
    source.kind.write(built(source), source.output)
    return source.output
