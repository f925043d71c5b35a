"""Load the question bank (``bank/chNN_<slug>.yaml``, one file per chapter) and pick questions from it."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from ..chapters import chapter as find_chapter
from ..i18n.messages import _
from .schema import DIFFICULTIES, BankError, Question, parse_bank_file

BANK_DIR = Path(__file__).with_name("bank")
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when libyaml is there


def load_bank_file(path: Path) -> list[Question]:
    """Parse and check one bank file; its name must be ``chNN_<slug>.yaml`` of its chapter."""
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except yaml.YAMLError as error:
        raise BankError(f"{path.name}: not valid YAML: {error}") from None
    questions = parse_bank_file(document, path.name)
    expected = f"{find_chapter(questions[0].chapter).assignment}.yaml"
    if path.name != expected:
        raise BankError(f"{path.name}: holds chapter {questions[0].chapter}, so it must be named {expected}")
    return questions


def load_questions(directory: Path = BANK_DIR) -> tuple[Question, ...]:
    """Every question of every bank file in ``directory``, in chapter order; ids (current and former) must be unique."""
    questions, seen = [], {}
    for path in sorted(directory.glob("*.yaml")):
        for question in load_bank_file(path):
            for qid in (question.id, *question.formerly):
                if qid in seen:
                    raise BankError(f"{path.name}: question id {qid!r} is already used in {seen[qid]}")
                seen[qid] = path.name
            questions.append(question)
    return tuple(questions)


def load_bank(language: str | None = None) -> tuple[Question, ...]:
    """The package's question bank in ``language`` (default: :func:`~sdpa_course.i18n.language.current_language`).

    In another language than English each question's text comes from its bank file's translation
    catalog (:mod:`sdpa_course.i18n.questions`); what is not translated yet stays English.
    """
    from ..i18n.language import current_language
    return _bank_in(language or current_language())


@lru_cache(maxsize=None)
def _bank_in(language: str) -> tuple[Question, ...]:
    questions = load_questions(BANK_DIR)
    if language == "en":
        return questions
    from ..i18n.book import LANGUAGES
    from ..i18n.catalogs import catalog_path, load, translator
    from ..i18n.questions import translated_question
    package = BANK_DIR.parents[1]  # sdpa_course/, whose locale/ holds the catalogs
    translators = {find_chapter(path.stem).number: translator(load(catalog_path(package, path, LANGUAGES[language]),
                                                                   LANGUAGES[language]))
                   for path in sorted(BANK_DIR.glob("*.yaml"))}
    return tuple(translated_question(q, translators[q.chapter]) for q in questions)


def by_id(questions=None) -> dict[str, Question]:
    return {q.id: q for q in (load_bank() if questions is None else questions)}


def aliases(questions=None) -> dict[str, str]:
    """Each former id of a renamed question (its ``formerly``) mapped to its current id."""
    return {old: q.id for q in (load_bank() if questions is None else questions) for old in q.formerly}


def select(questions=None, *, chapter=None, tag: str | None = None, difficulty: str | None = None,
           ids=None) -> list[Question]:
    """The questions matching every filter given (bank order).

    ``chapter`` is a number, slug or assignment name (see :func:`sdpa_lib.chapter`); ``ids``
    picks questions by id, in the order given.  Raises ``ValueError`` naming an unknown id,
    chapter, tag or difficulty, or when nothing matches.
    """
    pool = list(load_bank() if questions is None else questions)
    if ids is not None:
        known = by_id(pool)
        missing = [qid for qid in ids if qid not in known]
        if missing:
            raise ValueError(_("unknown question id(s) {ids}; ids look like {example}").format(
                ids=missing, example=repr(pool[0].id)))
        pool = [known[qid] for qid in ids]
    if chapter is not None:
        try:
            number = find_chapter(chapter).number
        except KeyError as error:
            raise ValueError(error.args[0]) from None
        pool = [q for q in pool if q.chapter == number]
    if tag is not None:
        all_tags = sorted({t for q in pool for t in q.tags})
        if tag.lower() not in all_tags:
            raise ValueError(_("no question has tag {tag}; tags are: {tags}").format(tag=repr(tag),
                                                                                    tags=", ".join(all_tags)))
        pool = [q for q in pool if tag.lower() in q.tags]
    if difficulty is not None:
        if difficulty not in DIFFICULTIES:
            raise ValueError(_("difficulty must be one of {difficulties}; got {difficulty}").format(
                difficulties=", ".join(DIFFICULTIES), difficulty=repr(difficulty)))
        pool = [q for q in pool if q.difficulty == difficulty]
    if not pool:
        raise ValueError(_("no question matches these filters"))
    return pool
