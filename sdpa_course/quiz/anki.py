"""Export the question bank as an Anki deck (``.apkg``), so the learner can review it in Anki too.

One note per question, in a deck "Scaled dot-product attention" with a sub-deck per chapter
(``Scaled dot-product attention::ch04 The scaling factor``), of one of two note types:

- **SDPA choice** (single, multiple, true/false, numeric): the front is the prompt and the
  lettered options; the back the right answer, the explanation and, for each wrong option that
  has one, its ``why`` (the mistake it stands for).
- **SDPA open** (open questions): the front is the prompt; the back the model answer and the
  explanation.

Tags: ``ch04``, the chapter's slug, the question's topic tags, its difficulty and its type.

Re-importing a newer export updates the notes already in Anki instead of adding copies, and
keeps their review history, because everything Anki matches on is fixed:

- a note's guid is ``genanki.guid_for(question.id)``: it depends on the id only, so editing a
  question's text, options or tags updates its note;
- the note types' ids are the constants below.  **Never change them**: Anki finds a note by guid
  *and* note type; with another id it adds a second note type ("SDPA choice+") and skips every
  note as conflicting, so the learner's cards would never be updated again.
  The decks' ids are fixed too (a chapter's is ``DECK_ID + its number``; never change
  ``DECK_ID``), so every export is the same package; Anki itself finds a deck by its name.

What Anki does not follow:

- A renamed question (its old id moved to ``formerly``) is a new note: its guid is that of its
  current id.  The old note stays in Anki, with its history, until the learner deletes it
  (search ``Id:<old id>`` in the browser).  ``formerly`` exists for the answer store, whose
  history it carries over; Anki has no such link.
- A question deleted from the bank is not deleted from Anki, and a question moved to another
  chapter keeps its card in the old chapter's deck (an import moves no cards; the tags change).
- Anki's import updates a note only if the file's note is newer ("Update notes: if newer", its
  default): a note the learner edited in Anki after the export is kept as they left it.
- Adding or removing a field of a note type changes its schema: Anki then skips every note as
  conflicting unless the learner ticks "Merge notetypes" on import.  Change templates and CSS
  freely; fields only with a word in docs/quiz.md.

(Checked by importing exports into a collection of the ``anki`` package, 26.9.)

Option order: Anki cannot shuffle, and the bank usually lists the right option first, so a card
in bank order would give the answer away.  Each question's options are put in a fixed order
derived from its id (:func:`option_order`): the same in every export, different between
questions, independent of any library's random generator.

Text is HTML-escaped (prompts contain ``<``, ``&``, ``*``) and newlines become ``<br>``;
``html.unescape(field.replace("<br>", "\\n"))`` gives the bank text back.
"""
from __future__ import annotations

import hashlib
import html
import itertools
import re
import sqlite3
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import genanki

from ..chapters import chapter as find_chapter
from ..i18n.messages import _
from ..json_file import write_atomically
from .bank import load_bank
from .engine import Presented, kind_names, right_answer
from .schema import Question

# Never change these ids (see the module's docstring): Anki recognises a re-import by them.
CHOICE_MODEL_ID = 1238426946
OPEN_MODEL_ID = 1858726258
DECK_ID = 2008010708  # the parent deck; chapter N's deck is DECK_ID + N
DECK_NAME = "Scaled dot-product attention"
CHOICE_MODEL_NAME = "SDPA choice"
OPEN_MODEL_NAME = "SDPA open"
SUFFIX = ".apkg"
FILE_MODE = 0o644  # an export is for sharing, unlike the private answer store

CSS = """\
.card { font-family: sans-serif; font-size: 18px; text-align: left; }
.kind { font-size: 13px; color: #666; margin-bottom: 0.5em; }
.option { margin: 0.3em 0 0.3em 1em; }
.answer { font-weight: bold; margin-bottom: 0.5em; }
.explanation, .wrong, .zh { margin-top: 0.7em; }
.id { font-size: 12px; color: #888; margin-top: 1.2em; }
.nightMode .kind, .nightMode .id { color: #aaa; }
"""
BACK_TAIL = '{{#Chinese}}<div class="zh">{{Chinese}}</div>{{/Chinese}}<div class="id">{{Id}}</div>'


def _note_types() -> tuple[genanki.Model, genanki.Model]:
    """The two note types (made anew for each export: genanki writes into their templates)."""
    choice = genanki.Model(
        CHOICE_MODEL_ID, CHOICE_MODEL_NAME,
        fields=[{"name": name} for name in ("Prompt", "Kind", "Options", "Answer", "Explanation", "Wrong",
                                            "Chinese", "Id")],
        templates=[{
            "name": "Recall",
            "qfmt": '<div class="kind">{{Kind}}</div><div class="prompt">{{Prompt}}</div>'
                    '{{#Options}}<div class="options">{{Options}}</div>{{/Options}}',
            "afmt": '{{FrontSide}}<hr id="answer"><div class="answer">Answer: {{Answer}}</div>'
                    '<div class="explanation">{{Explanation}}</div>'
                    '{{#Wrong}}<div class="wrong">{{Wrong}}</div>{{/Wrong}}' + BACK_TAIL,
        }],
        css=CSS)
    open_ = genanki.Model(
        OPEN_MODEL_ID, OPEN_MODEL_NAME,
        fields=[{"name": name} for name in ("Prompt", "Model answer", "Explanation", "Chinese", "Id")],
        templates=[{
            "name": "Recall",
            "qfmt": '<div class="kind">open question: answer it in your head, then check</div>'
                    '<div class="prompt">{{Prompt}}</div>',
            "afmt": '{{FrontSide}}<hr id="answer"><div class="answer">Model answer:</div>'
                    '<div class="model-answer">{{Model answer}}</div>'
                    '<div class="explanation">{{Explanation}}</div>' + BACK_TAIL,
        }],
        css=CSS)
    return choice, open_


@dataclass(frozen=True)
class AnkiExport:
    """What :func:`export_anki` wrote: the file, how many notes of each type, the chapter decks."""
    path: Path
    notes: dict[str, int]
    decks: tuple[str, ...]

    def __str__(self) -> str:
        counts = ", ".join(f"{n} {name}" for name, n in self.notes.items())
        return _("Wrote {count} Anki note(s) ({counts}) in {decks} chapter deck(s) of '{deck}' to {file}.").format(
            count=sum(self.notes.values()), counts=counts, decks=len(self.decks), deck=DECK_NAME, file=self.path)


def to_html(text: str) -> str:
    """``text`` as an Anki field: HTML-escaped, newlines as ``<br>``."""
    return html.escape(text, quote=False).replace("\n", "<br>")


def tag(text: str) -> str:
    """An Anki tag: no whitespace (Anki splits tags on it) and no double quote."""
    return re.sub(r'[\s"]+', "_", text.strip())


def option_order(question: Question) -> tuple[int, ...]:
    """The bank indices of the options in the order the card shows them, fixed by the question id.

    Each option is ranked by the SHA-256 of ``"<id>:<bank index>"``: the same order in every
    export and on every machine; editing an option's text does not move it.
    """
    def rank(index: int) -> bytes:
        return hashlib.sha256(f"{question.id}:{index}".encode("utf-8")).digest()
    return tuple(sorted(range(len(question.options)), key=rank))


def note_guid(question: Question) -> str:
    """The note's guid: from the current id alone (a renamed question is a new note)."""
    return genanki.guid_for(question.id)


def note_tags(question: Question) -> list[str]:
    """``ch04``, the chapter slug, the topic tags, the difficulty and the type; no repeats."""
    wanted = [f"ch{question.chapter:02d}", find_chapter(question.chapter).slug, *question.tags,
              question.difficulty, question.type]
    return list(dict.fromkeys(tag(t) for t in wanted))


def _choice_fields(question: Question) -> list[str]:
    presented = Presented(question, option_order(question))
    options = "".join(f'<div class="option"><b>{letter}.</b> {to_html(question.options[i].text)}</div>'
                      for letter, i in zip(presented.labels, presented.order))
    wrong = "".join("<div>" + _("Not <b>{letter}</b>: {why}").format(letter=letter,
                                                                      why=to_html(question.options[i].why)) + "</div>"
                    for letter, i in zip(presented.labels, presented.order)
                    if not question.options[i].correct and question.options[i].why)
    return [to_html(question.prompt), to_html(kind_names()[question.type]), options,
            to_html(right_answer(presented)), to_html(question.explanation), wrong, to_html(question.zh),
            to_html(question.id)]


def _open_fields(question: Question) -> list[str]:
    return [to_html(question.prompt), to_html(question.model_answer), to_html(question.explanation),
            to_html(question.zh), to_html(question.id)]


def chapter_deck_name(number: int) -> str:
    return f"{DECK_NAME}::ch{number:02d} {find_chapter(number).title}"


def build_decks(questions) -> list[genanki.Deck]:
    """The parent deck and one deck per chapter that has questions, holding one note per question."""
    choice, open_ = _note_types()
    parent = genanki.Deck(DECK_ID, DECK_NAME, description="Interview review of the course on scaled "
                          "dot-product attention: sdpa-quiz --export-anki writes this deck.")
    decks = {}
    for position, question in enumerate(questions):
        number = question.chapter
        if number not in decks:
            decks[number] = genanki.Deck(DECK_ID + number, chapter_deck_name(number))
        is_open = question.type == "open"
        decks[number].add_note(genanki.Note(
            model=open_ if is_open else choice,
            fields=_open_fields(question) if is_open else _choice_fields(question),
            tags=note_tags(question), guid=note_guid(question), due=position))
    return [parent, *(decks[number] for number in sorted(decks))]


def checked_path(path) -> Path:
    """``path`` as the file to write (symbolic links followed); ``ValueError`` saying what is wrong with it."""
    given = Path(path)
    if given.is_dir():
        raise ValueError(_("{path} is a folder; give a file name ending in {suffix}, e.g. {example}").format(
            path=given, suffix=SUFFIX, example=given / ("sdpa" + SUFFIX)))
    if given.suffix.lower() != SUFFIX:
        raise ValueError(_("{path} does not end in {suffix}: Anki imports a deck package only by that name; "
                           "e.g. {example}").format(path=given, suffix=SUFFIX,
                                                    example=given.with_name(given.stem + SUFFIX)))
    target = given.resolve()
    if not target.parent.is_dir():
        raise ValueError(_("cannot write {path}: the folder {folder} does not exist; create it first").format(
            path=given, folder=given.parent))
    return target


def _write_package(package: genanki.Package, file, timestamp: float) -> None:
    """``package`` as ``.apkg`` bytes into ``file``.

    ``genanki.Package.write_to_file`` does the same, but leaves its SQLite file behind in the
    temporary folder (``mkstemp``, never removed); here it lives in a folder that is removed.
    """
    with tempfile.TemporaryDirectory(prefix="sdpa-anki-") as scratch:
        database = Path(scratch, "collection.anki2")
        connection = sqlite3.connect(database)
        try:
            package.write_to_db(connection.cursor(), timestamp, itertools.count(int(timestamp * 1000)))
            connection.commit()
        finally:
            connection.close()
        with zipfile.ZipFile(file, "w") as archive:
            archive.write(database, "collection.anki2")
            archive.writestr("media", "{}")


def export_anki(path, questions=None) -> AnkiExport:
    """Write ``questions`` (default: the whole bank) as an Anki deck package at ``path``.

    Parameters
    ----------
    path : str or Path
        The ``.apkg`` file; its folder must exist.  An existing file is replaced, atomically: a
        failed export leaves the old file whole.
    questions : iterable of Question, optional
        What to export (e.g. :func:`~sdpa_course.quiz.bank.select`'s answer), in that order.

    Returns
    -------
    AnkiExport
        The file written, the number of notes per note type (they add up to the number of
        questions) and the chapter decks.

    Raises
    ------
    ValueError
        for a path that is a folder, does not end in ``.apkg`` or whose folder does not exist;
        for no question, or two with the same id.
    OSError
        when the file cannot be written (permissions, full disk).

    Notes
    -----
    The notes are stamped with the time of the export, so that Anki's default import ("update
    notes if newer") updates the notes of an earlier export.  See the module's docstring for
    what a re-import keeps.
    """
    target = checked_path(path)
    questions = list(load_bank() if questions is None else questions)
    if not questions:
        raise ValueError(_("no question to export"))
    repeated = sorted(qid for qid, n in Counter(q.id for q in questions).items() if n > 1)
    if repeated:
        raise ValueError(_("question id(s) {ids} appear twice: each question is one note, found by its id").format(
            ids=repeated))
    decks = build_decks(questions)
    package = genanki.Package(decks)
    write_atomically(target, lambda file: _write_package(package, file, time.time()), mode=FILE_MODE)
    notes = Counter(OPEN_MODEL_NAME if q.type == "open" else CHOICE_MODEL_NAME for q in questions)
    return AnkiExport(target, {name: notes[name] for name in (CHOICE_MODEL_NAME, OPEN_MODEL_NAME) if notes[name]},
                      tuple(deck.name for deck in decks[1:]))
