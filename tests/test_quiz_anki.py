"""``sdpa-quiz --export-anki``: the .apkg it writes, opened as Anki would (a zip holding an SQLite collection)."""
import dataclasses
import html
import json
import os
import sqlite3
import tempfile
import warnings
import zipfile
from pathlib import Path

import genanki
import pytest

from sdpa_course.chapters import chapter
from sdpa_course.quiz import anki, load_bank, select
from sdpa_course.quiz.cli import main
from sdpa_course.quiz.schema import Option


@dataclasses.dataclass
class Apkg:
    """The parts of an opened package the tests read: notes (with fields by name), cards, note types, decks."""
    notes: list[dict]
    cards: list[dict]
    models: dict
    decks: dict

    def note(self, question_id):
        return next(n for n in self.notes if n["fields"]["Id"] == question_id)


def open_apkg(path: Path) -> Apkg:
    with zipfile.ZipFile(path) as archive:
        assert "collection.anki2" in archive.namelist(), archive.namelist()
        data = archive.read("collection.anki2")
    database = path.with_name(path.name + ".anki2")
    database.write_bytes(data)
    connection = sqlite3.connect(database)
    try:
        models_json, decks_json = connection.execute("SELECT models, decks FROM col").fetchone()
        models, decks = json.loads(models_json), json.loads(decks_json)
        notes = []
        for note_id, guid, mid, tags, flds in connection.execute("SELECT id, guid, mid, tags, flds FROM notes"):
            names = [field["name"] for field in models[str(mid)]["flds"]]
            notes.append({"id": note_id, "guid": guid, "mid": mid, "tags": tags.split(),
                          "fields": dict(zip(names, flds.split("\x1f"), strict=True))})
        cards = [{"nid": nid, "did": did} for nid, did in connection.execute("SELECT nid, did FROM cards")]
    finally:
        connection.close()
    database.unlink()
    return Apkg(notes, cards, models, decks)


def text_of(field: str) -> str:
    """The bank text back from a field (the inverse of ``anki.to_html``)."""
    return html.unescape(field.replace("<br>", "\n"))


@pytest.fixture(scope="module")
def whole_bank(tmp_path_factory):
    """The whole bank exported once (no warning from genanki about bad HTML)."""
    path = tmp_path_factory.mktemp("anki") / "sdpa.apkg"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = anki.export_anki(path)
    return summary, open_apkg(path)


def test_the_ids_anki_matches_on_never_change():
    """Are the note type and deck ids still the ones of the first export (a change duplicates every note)?"""
    assert (anki.CHOICE_MODEL_ID, anki.OPEN_MODEL_ID, anki.DECK_ID) == (1238426946, 1858726258, 2008010708)
    assert genanki.guid_for("ch04-sqrt-128") == anki.note_guid(next(q for q in load_bank() if q.id == "ch04-sqrt-128"))


def test_one_note_and_one_card_per_question(whole_bank):
    """Does every question become exactly one note (guid from its id) with one card in its chapter's deck?"""
    summary, apkg = whole_bank
    bank = load_bank()
    assert sorted(n["guid"] for n in apkg.notes) == sorted(genanki.guid_for(q.id) for q in bank)
    assert len(apkg.cards) == len(bank)
    chapter_of = {n["id"]: next(q.chapter for q in bank if q.id == n["fields"]["Id"]) for n in apkg.notes}
    assert sorted(card["nid"] for card in apkg.cards) == sorted(chapter_of)
    for card in apkg.cards:
        number = chapter_of[card["nid"]]
        assert card["did"] == anki.DECK_ID + number
        assert apkg.decks[str(card["did"])]["name"] == f"Scaled dot-product attention::ch{number:02d} {chapter(number).title}"
    assert apkg.decks[str(anki.DECK_ID)]["name"] == "Scaled dot-product attention"
    assert sum(summary.notes.values()) == len(bank) and len(summary.decks) == len({q.chapter for q in bank})


def test_two_note_types_with_fixed_ids(whole_bank):
    """Are open questions notes of 'SDPA open' and all others of 'SDPA choice', under the fixed ids?"""
    summary, apkg = whole_bank
    assert {mid: model["name"] for mid, model in apkg.models.items()} == {
        str(anki.CHOICE_MODEL_ID): "SDPA choice", str(anki.OPEN_MODEL_ID): "SDPA open"}
    kinds = {q.id: q.type for q in load_bank()}
    for note in apkg.notes:
        expected = anki.OPEN_MODEL_ID if kinds[note["fields"]["Id"]] == "open" else anki.CHOICE_MODEL_ID
        assert note["mid"] == expected, note["fields"]["Id"]
    assert summary.notes == {"SDPA choice": sum(k != "open" for k in kinds.values()),
                             "SDPA open": sum(k == "open" for k in kinds.values())}


def test_fields_hold_the_bank_text(whole_bank):
    """Do prompt, options, answer, explanation and model answer read back as the bank's text, unescaped?"""
    _, apkg = whole_bank
    for q in load_bank():
        fields = apkg.note(q.id)["fields"]
        assert text_of(fields["Prompt"]) == q.prompt
        assert text_of(fields["Explanation"]) == q.explanation
        assert text_of(fields["Chinese"]) == q.zh
        if q.type == "open":
            assert text_of(fields["Model answer"]) == q.model_answer
            continue
        shown = [text_of(part.split("</b> ", 1)[1]) for part in fields["Options"].split("</div>") if part]
        assert sorted(shown) == sorted(o.text for o in q.options)
        if q.type == "true_false":
            assert fields["Answer"] == ("true" if q.answer else "false")
        if q.type == "numeric":
            assert float(fields["Answer"].split()[0]) == pytest.approx(q.answer, abs=q.tolerance)


def test_markup_in_a_question_is_text_not_html(tmp_path):
    """Are <, &, * and newlines in a question shown as written (escaped, <br>), never as markup?"""
    base = next(q for q in load_bank() if q.type == "single")
    raw = "Is <script>alert(1)</script> & *bold* < 3?\nSecond line"
    question = dataclasses.replace(base, prompt=raw, explanation=raw, options=(
        Option("a < b & c", True), Option("<i>x</i>", False, "the <why> & more")))
    anki.export_anki(tmp_path / "markup.apkg", [question])
    fields = open_apkg(tmp_path / "markup.apkg").note(base.id)["fields"]
    assert "<script>" not in fields["Prompt"] and "<i>" not in fields["Options"] and "<why>" not in fields["Wrong"]
    assert "<br>" in fields["Prompt"]
    assert text_of(fields["Prompt"]) == raw and text_of(fields["Explanation"]) == raw
    assert "a &lt; b &amp; c" in fields["Options"] and text_of(fields["Answer"]).endswith("(a < b & c)")


def test_tags_name_chapter_topics_difficulty_and_type(whole_bank, tmp_path):
    """Does each note carry ch04, the chapter slug, its topic tags, difficulty and type, with no space in any tag?"""
    _, apkg = whole_bank
    for q in load_bank():
        tags = apkg.note(q.id)["tags"]
        expected = {f"ch{q.chapter:02d}", chapter(q.chapter).slug, *q.tags, q.difficulty, q.type}
        assert set(tags) == expected, q.id
    spaced = dataclasses.replace(load_bank()[0], tags=("two words", 'a"quote'))
    anki.export_anki(tmp_path / "tags.apkg", [spaced])
    assert {"two_words", "a_quote"} <= set(open_apkg(tmp_path / "tags.apkg").notes[0]["tags"])


def test_guids_stable_across_exports_and_text_edits(tmp_path):
    """Is a note's guid the same in two exports and after its question's text changes (so a re-import updates)?"""
    bank = list(load_bank())
    edited = [dataclasses.replace(q, prompt=q.prompt + " (edited)", explanation="new", tags=("other",))
              for q in bank]
    guids = []
    for name, questions in (("a.apkg", bank), ("b.apkg", bank), ("edited.apkg", edited)):
        anki.export_anki(tmp_path / name, questions)
        guids.append({n["fields"]["Id"]: n["guid"] for n in open_apkg(tmp_path / name).notes})
    assert guids[0] == guids[1] == guids[2]
    renamed = dataclasses.replace(bank[0], id=bank[0].id + "-v2", formerly=(bank[0].id,))
    assert anki.note_guid(renamed) != guids[0][bank[0].id]  # the documented rule: a renamed question is a new note


def test_options_in_a_fixed_order_that_hides_the_answer(whole_bank, tmp_path):
    """Is the option order the same in every export but not the bank's (whose right option is mostly first)?"""
    _, apkg = whole_bank
    singles = [q for q in load_bank() if q.type == "single"]
    first = [apkg.note(q.id)["fields"]["Answer"].startswith("A ") for q in singles]
    assert sum(first) < len(singles) / 2, f"{sum(first)} of {len(singles)} right answers are A"
    for q in singles:
        order = anki.option_order(q)
        assert sorted(order) == list(range(len(q.options)))
        options = apkg.note(q.id)["fields"]["Options"]
        letter = apkg.note(q.id)["fields"]["Answer"][0]
        right = q.options[next(iter(q.correct_options))].text
        assert f"<b>{letter}.</b> {anki.to_html(right)}</div>" in options, q.id
    anki.export_anki(tmp_path / "again.apkg")
    again = open_apkg(tmp_path / "again.apkg")
    assert all(again.note(q.id)["fields"]["Options"] == apkg.note(q.id)["fields"]["Options"] for q in singles)


def test_the_back_names_each_wrong_option_and_its_mistake(tmp_path):
    """Does the back list every wrong option that has a 'why', by its letter, and no right option?"""
    base = next(q for q in load_bank() if q.type == "multiple")
    options = tuple(dataclasses.replace(o, why="" if o.correct else f"mistake {i}") for i, o in enumerate(base.options))
    question = dataclasses.replace(base, options=options)
    anki.export_anki(tmp_path / "why.apkg", [question])
    wrong = open_apkg(tmp_path / "why.apkg").notes[0]["fields"]["Wrong"]
    order = anki.option_order(question)
    for letter, index in zip("ABCDEFGH", order):
        if options[index].correct:
            assert f"Not <b>{letter}</b>" not in wrong, (letter, wrong)
        else:
            assert f"Not <b>{letter}</b>: mistake {index}" in wrong, (letter, wrong)
    question = dataclasses.replace(base, options=tuple(dataclasses.replace(o, why="") for o in options))
    anki.export_anki(tmp_path / "no-why.apkg", [question])
    assert open_apkg(tmp_path / "no-why.apkg").notes[0]["fields"]["Wrong"] == ""  # the back shows no empty list


def test_cli_filters_select_what_is_exported(tmp_path, capsys):
    """Does --export-anki with --chapter write only that chapter's questions, and say how many of each type?"""
    path = tmp_path / "ch12.apkg"
    assert main(["--export-anki", str(path), "--chapter", "interview"]) == 0
    out = capsys.readouterr().out
    chosen = select(chapter=12)
    apkg = open_apkg(path)
    assert sorted(n["fields"]["Id"] for n in apkg.notes) == sorted(q.id for q in chosen)
    assert {card["did"] for card in apkg.cards} == {anki.DECK_ID + 12}
    assert all("ch12" in n["tags"] for n in apkg.notes)
    n_open = sum(q.type == "open" for q in chosen)
    assert f"({len(chosen) - n_open} SDPA choice, {n_open} SDPA open)" in out and str(path) in out


@pytest.mark.parametrize("name, message", [
    ("missing/deck.apkg", "does not exist"),
    ("folder.apkg", "is a folder"),
    ("deck.zip", "does not end in .apkg"),
    ("deck", "does not end in .apkg"),
])
def test_cli_refuses_a_bad_path(tmp_path, capsys, name, message):
    """Is a path in a missing folder, a folder, or a name without .apkg refused with exit 2, and nothing written?"""
    (tmp_path / "folder.apkg").mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main(["--export-anki", str(tmp_path / name)]) == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_cli_refuses_quiz_options(tmp_path, capsys):
    """Does --export-anki refuse options that only mean something to a quiz (even --seed 0)?"""
    assert main(["--export-anki", str(tmp_path / "x.apkg"), "--seed", "0", "--review"]) == 2
    assert "--review, --seed" in capsys.readouterr().err
    assert not (tmp_path / "x.apkg").exists()


def test_a_failed_export_leaves_the_old_file_whole(tmp_path, monkeypatch, capsys):
    """Does an export that fails half-way keep the previous file byte for byte, with no temporary file left?"""
    path = tmp_path / "deck.apkg"
    anki.export_anki(path, select(chapter=4))
    old = path.read_bytes()

    def fail_half_way(package, file, timestamp):
        file.write(b"PK half a zip")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(anki, "_write_package", fail_half_way)
    with pytest.raises(OSError, match="No space"):
        anki.export_anki(path)
    assert path.read_bytes() == old and [p.name for p in tmp_path.iterdir()] == ["deck.apkg"]
    assert main(["--export-anki", str(path)]) == 2
    assert "cannot write" in capsys.readouterr().err and path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["deck.apkg"]


def test_no_scratch_file_left_and_the_file_is_readable(tmp_path, monkeypatch):
    """Is the scratch SQLite file removed (genanki's own writer leaves one in the temporary folder) and the .apkg 0644?"""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    anki.export_anki(tmp_path / "deck.apkg", select(chapter=1))
    assert list(scratch.iterdir()) == []
    assert (tmp_path / "deck.apkg").stat().st_mode & 0o777 == 0o644


def test_bad_question_lists_are_refused(tmp_path):
    """Are an empty list and a list with one id twice (two notes, one guid) refused before anything is written?"""
    with pytest.raises(ValueError, match="no question"):
        anki.export_anki(tmp_path / "x.apkg", [])
    question = load_bank()[0]
    with pytest.raises(ValueError, match="appear twice"):
        anki.export_anki(tmp_path / "x.apkg", [question, dataclasses.replace(question, prompt="other")])
    assert not (tmp_path / "x.apkg").exists()
    assert not os.listdir(tmp_path)
