"""The translated course: catalogs complete and current, generated notebooks in sync, code unchanged, terms kept.

Every English notebook with a catalog in ``locale/zh_CN/`` is checked; the machinery itself is
checked on a scratch copy (a changed English cell marks its translation stale).
"""
from __future__ import annotations

import shutil

import nbformat
import polib
import pytest

from nbrun import ROOT
from sdpa_course.i18n import catalogs
from sdpa_course.i18n.book import LANGUAGES, BankFile, Document, Notebook, Source, build, built, translated_sources, update
from sdpa_course.i18n.notebooks import code_skeleton, literal_problem, read, units
from sdpa_course.i18n.terms import missing_terms

TRANSLATED = translated_sources(ROOT, "zh")
SOURCES = [source for source in TRANSLATED if source.kind is Notebook]
DOCUMENTS = [source for source in TRANSLATED if source.kind is Document]
BANK_FILES = [source for source in TRANSLATED if source.kind is BankFile]
PROSE = ("markdown", "text")  # the kinds of unit written as prose (not a code literal, not a message)


def ids(sources):
    return [source.name for source in sources]


def prose_entries(source):
    """The catalog entries of ``source`` whose unit is prose (by the source's own units, not the catalog's comments)."""
    prose = {(unit.context, unit.text) for unit in source.units() if unit.kind in PROSE}
    return [entry for entry in catalogs.load(source.catalog, LANGUAGES["zh"]) if (entry.msgctxt, entry.msgid) in prose]


@pytest.mark.parametrize("source", TRANSLATED, ids=ids(TRANSLATED))
def test_catalog_is_complete_and_current(source):
    """Is every unit of the English source translated, and no translation stale (fuzzy) or left over?"""
    assert source.problems() == []


@pytest.mark.parametrize("source", SOURCES, ids=ids(SOURCES))
def test_generated_notebook_is_in_sync_with_its_catalog(source):
    """Is zh/... exactly what the English notebook and its catalog build (python scripts/translate.py build)?"""
    assert source.output.exists(), f"{source.output} is missing: run python scripts/translate.py build"
    assert nbformat.writes(read(source.output)) == nbformat.writes(built(source))


@pytest.mark.parametrize("source", DOCUMENTS, ids=ids(DOCUMENTS))
def test_generated_document_is_in_sync_with_its_catalog(source):
    """Is README.zh-CN.md (docs/quiz.zh-CN.md) exactly what its English and its catalog build?"""
    assert source.output.exists(), f"{source.output} is missing: run python scripts/translate.py build"
    assert source.output.read_text(encoding="utf-8") == built(source)


@pytest.mark.parametrize("source", SOURCES, ids=ids(SOURCES))
def test_translated_code_is_the_english_code(source):
    """Apart from the strings the output shows, is every code cell the English one, character for character?"""
    english, chinese = read(source.path), read(source.output)
    assert [c.cell_type for c in chinese.cells] == [c.cell_type for c in english.cells]
    for mine, theirs in zip(english.cells, chinese.cells):
        if mine.cell_type == "code":
            assert code_skeleton(theirs.source) == code_skeleton(mine.source), mine.id


@pytest.mark.parametrize("source", TRANSLATED, ids=ids(TRANSLATED))
def test_translation_uses_the_glossary_terms(source):
    """Where the English uses a glossary term, does the Chinese use the glossary's Chinese for it?"""
    missing = {entry.msgctxt: found for entry in prose_entries(source)
               for found in [missing_terms(entry.msgid, entry.msgstr, entry.tcomment)] if found}
    assert missing == {}


@pytest.mark.parametrize("source", BANK_FILES, ids=ids(BANK_FILES))
def test_a_translated_question_changes_only_its_text(source):
    """Same ids, types, tags, answers and right options in Chinese; every text field translated."""
    from sdpa_course.quiz.bank import load_bank
    chapter = int(source.path.name[2:4])
    english = [q for q in load_bank("en") if q.chapter == chapter]
    chinese = [q for q in load_bank("zh") if q.chapter == chapter]
    for mine, theirs in zip(english, chinese, strict=True):
        assert (theirs.id, theirs.type, theirs.tags, theirs.answer, theirs.tolerance, theirs.correct_options) == (
            mine.id, mine.type, mine.tags, mine.answer, mine.tolerance, mine.correct_options)
        assert theirs.prompt != mine.prompt and theirs.explanation != mine.explanation, mine.id


@pytest.mark.parametrize("source", TRANSLATED, ids=ids(TRANSLATED))
def test_formulas_and_code_spans_are_kept(source):
    """Are the English cell's formulas ($...$) and code spans (`...`) all in its translation, unchanged?"""
    import re
    fences = re.compile(r"```.*?```", re.S)  # a code block's comments are translated; its code is checked by eye
    pieces = re.compile(r"\$\$.*?\$\$|\$[^$]+\$|`[^`]+`", re.S)  # inline formulas and code may break across lines
    def found(text):  # a line break inside a span is a space
        return {" ".join(piece.split()) for piece in pieces.findall(fences.sub("", text))}
    lost = {entry.msgctxt: gone for entry in prose_entries(source)
            for gone in [sorted(found(entry.msgid) - found(entry.msgstr))] if gone}
    assert lost == {}


# --- the machinery, on a scratch copy ---------------------------------------------------------------

NOTEBOOK = nbformat.v4.new_notebook(cells=[
    nbformat.v4.new_markdown_cell("# The scaling factor\n\nDivide by $\\sqrt{d_k}$.", id="intro"),
    nbformat.v4.new_code_cell('w = 0.5\nprint(f"max weight {w:.2f}")  # a comment\nax_title = "not shown"\n'
                              'print("done")', id="code"),
])
CHINESE = {"# The scaling factor\n\nDivide by $\\sqrt{d_k}$.": "# 缩放因子\n\n除以 $\\sqrt{d_k}$。",
           'f"max weight {w:.2f}"': 'f"最大权重 {w:.2f}"', '"done"': '"完成"'}


@pytest.fixture
def scratch(tmp_path):
    (tmp_path / "notebooks").mkdir()
    nbformat.write(NOTEBOOK, str(tmp_path / "notebooks" / "04_demo.ipynb"))
    source = Source(tmp_path, tmp_path / "notebooks" / "04_demo.ipynb", "zh")
    update(source)
    catalog = polib.pofile(str(source.catalog))
    for entry in catalog:
        entry.msgstr = CHINESE[entry.msgid]
    catalog.save()
    return source


def test_units_are_the_prose_and_the_printed_strings():
    assert [(u.context, u.kind, u.text) for u in units(NOTEBOOK)] == [
        ("intro", "markdown", NOTEBOOK.cells[0].source), ("code", "literal", 'f"max weight {w:.2f}"'),
        ("code", "literal", '"done"')]


def test_a_grade_cells_feedback_is_a_unit_and_is_translated():
    """What a failed check tells the learner (GradingError, an expect_* check's name and hint) is translated."""
    grade = nbformat.v4.new_code_cell(
        'if share < 0.6:\n    raise GradingError(f"share {share:.3f} is low; " + known_mistake(share))\n'
        'expect_close(out, ref, "the output for one token", hint="one key gets weight 1")\nname = "not shown"', id="grade")
    assert [u.text for u in units(nbformat.v4.new_notebook(cells=[grade]))] == [
        'f"share {share:.3f} is low; "', '"the output for one token"', '"one key gets weight 1"']
    chinese = read(ROOT / "zh" / "solutions" / "ch12_interview" / "ch12_interview.ipynb")
    assert any('raise GradingError(f"Q1：你选了' in cell.source for cell in chinese.cells)


def test_a_complete_catalog_builds_the_translated_notebook(scratch):
    output = build(scratch)
    built_notebook = read(output)
    assert built_notebook.cells[0].source == "# 缩放因子\n\n除以 $\\sqrt{d_k}$。"
    assert built_notebook.cells[1].source == ('w = 0.5\nprint(f"最大权重 {w:.2f}")  # a comment\nax_title = "not shown"\n'
                                              'print("完成")')
    assert built_notebook.metadata["language"] == "zh"
    assert code_skeleton(built_notebook.cells[1].source) == code_skeleton(NOTEBOOK.cells[1].source)


def test_a_literal_all_in_chinese_is_still_a_translated_slot():
    assert code_skeleton('print("最大权重")\nx = "kept"') == code_skeleton('print("max weight")\nx = "kept"')
    assert code_skeleton('print("最大权重")\nx = "changed"') != code_skeleton('print("max weight")\nx = "kept"')


def test_chinese_figures_fall_back_to_an_installed_cjk_font(monkeypatch):
    import matplotlib
    from sdpa_course.i18n import figures
    monkeypatch.setitem(matplotlib.rcParams, "font.family", ["sans-serif"])
    monkeypatch.setattr(figures, "installed_cjk_families", lambda: ["WenQuanYi Micro Hei"])
    assert figures.use_chinese_fonts() == [matplotlib.rcParams["font.sans-serif"][0], "WenQuanYi Micro Hei"]
    monkeypatch.setattr(figures, "installed_cjk_families", lambda: [])
    with pytest.warns(UserWarning, match="no Chinese font"):
        figures.use_chinese_fonts()


@pytest.mark.parametrize("cell, new_source", [(0, "# The scaling factor, again\n\nDivide by $\\sqrt{d_k}$."),
                                              (1, 'w = 0.5\nprint(f"largest weight {w:.2f}")\nprint("done")')])
def test_a_changed_english_cell_marks_its_translation_stale(scratch, cell, new_source):
    """The English changes: the old translation is kept but fuzzy, the catalog has a problem, the build refuses."""
    notebook = read(scratch.path)
    notebook.cells[cell].source = new_source
    nbformat.write(notebook, str(scratch.path))
    assert catalogs.problems(polib.pofile(str(scratch.catalog)), units(notebook))  # stale before the update already
    update(scratch)
    catalog = polib.pofile(str(scratch.catalog))
    stale = [entry for entry in catalog if "fuzzy" in entry.flags]
    assert len(stale) == 1 and stale[0].msgstr in CHINESE.values() and stale[0].previous_msgid
    stale_problem, = [problem for problem in catalogs.problems(catalog, units(notebook)) if "stale" in problem]
    assert ("again" in stale_problem) if cell == 0 else ("largest" in stale_problem and "max" in stale_problem)
    with pytest.raises(ValueError, match="stale"):
        build(scratch)


def test_a_new_english_cell_needs_a_translation(scratch):
    notebook = read(scratch.path)
    notebook.cells.append(nbformat.v4.new_markdown_cell("A new paragraph.", id="new"))
    nbformat.write(notebook, str(scratch.path))
    update(scratch)
    assert catalogs.problems(polib.pofile(str(scratch.catalog)), units(notebook)) == [
        "cell new: not translated: 'A new paragraph.'"]


def test_an_untranslated_unit_stays_english_in_a_draft_build(scratch):
    catalog = polib.pofile(str(scratch.catalog))
    catalog[0].msgstr = ""
    catalog.save()
    assert built(scratch).cells[0].source == NOTEBOOK.cells[0].source


@pytest.mark.parametrize("english, chinese, problem", [
    ('f"max {w:.2f}"', 'f"最大 {w:.3f}"', "fields"),
    ('f"max {w:.2f}"', '"最大"', "same kind"),
    ('"done"', '"完成" + x', "same kind"),
    ('"done"', '完成', "same kind"),  # a Chinese name is a Python identifier, not a string
    ('"done"', '"完成', "not a Python string literal"),
    ('f"max {w:.2f}"', 'f"最大 {w:.2f}"', None),
    ('f"a {x}, " f"b {y}"', 'f"甲 {y}，乙 {x}"', None),  # fields may move; joined literals may become one
    ("f\"{'loop (ms)':>10} {'L':>5}\"", "f\"{'循环（毫秒）':>8} {'L':>5}\"", None),  # a constant field is text
    ("f\"{'ok' if good else 'PROBLEM'}\"", "f\"{'正常' if good else '有问题'}\"", None),
    ("f\"{'ok' if good else 'PROBLEM'}\"", "f\"{'正常' if bad else '有问题'}\"", "fields"),  # the test is code
    ("f\"at {oom or 'never'}\"", "f\"于 {oom or '从不'}\"", None),
    ("f\"{row['name']}\"", "f\"{row['名称']}\"", "fields"),  # a key looked up is code, not text
    ('"-> winner k%d"', '"-> 胜者 k%d"', None),
    ('"-> winner k%d"', '"-> 胜者 k"', "fields"),  # the %-format's fields are kept
])
def test_a_translated_literal_keeps_its_kind_and_fields(english, chinese, problem):
    found = literal_problem(english, chinese)
    assert (found is None) if problem is None else (problem in found)


@pytest.mark.parametrize("cells, shown", [
    (['label = "scaled" if s else "unscaled"\nax.plot(x, label=label)'], ['"scaled"', '"unscaled"']),
    (['for name, mask in [("no mask", None), ("padding mask", m)]:\n    ax.set_title(name)'],
     ['"no mask"', '"padding mask"']),
    (['for ax, title in zip(axes, ("largest weight", "entropy")):\n    ax.set(title=title)'],
     ['"largest weight"', '"entropy"']),
    (['for head, title in enumerate(["head 1", "head 2"]):\n    heatmap(w[head], title=title)'], ['"head 1"', '"head 2"']),
    (['counts = {"shared": 0, "separate": 1}\nfor name, n in counts.items():\n    print(f"{name:10} {n}")'],
     ['"shared"', '"separate"', 'f"{name:10} {n}"']),
    (['print(f"{\'loop (ms)\':>10}")'], ["f\"{'loop (ms)':>10}\""]),
    (['print("query: " + row, "-> winner k%d" % best)'], ['"query: "', '"-> winner k%d"']),
    (['header = "| chapter |\\n"\ndisplay(Markdown(header + table))'], ['"| chapter |\\n"']),
    (['table = [("self-attention", "O(1)"), ("recurrent", "O(L)")]\nfor name, cost in table:\n    print(f"{name:15} {cost}")'],
     ['"self-attention"', '"O(1)"', '"recurrent"', '"O(L)"', 'f"{name:15} {cost}"']),
    (['books = {"pour-over guide": [1, 0], "quantum physics": [0, 1]}\nkeys = np.array(list(books.values()))\n'
      'for name, key in zip(books, keys):\n    print(f"{name:24s} {key}")'], ['"pour-over guide"', '"quantum physics"', 'f"{name:24s} {key}"']),
    (['books = {"pour-over guide": [1, 0]}\nfor name in books:\n    print(name)', 'print(books["pour-over guide"])'], []),
    # used as code, the literals stay: compared, passed to a computation, a dict's key looked up
    (['for name in ("rope", "added"):\n    run(method=name)\n    print(name)'], []),
    (['for name in ("none", "sqrt"):\n    ax.plot(x, color="red" if name == "none" else "blue", label=name)'], []),
    (['counts = {"shared": 0}\ncounts["shared"] += 1\nfor name, n in counts.items():\n    print(name)'], []),
    # another cell uses the name as code without binding it again: the loop's last value is code there
    (['for name in ("rope", "added"):\n    print(name)', 'run(method=name)'], []),
    (['for name in ("rope", "added"):\n    print(name)', 'for name in range(3):\n    run(name)'], ['"rope"', '"added"']),
])
def test_the_literals_a_learner_reads(cells, shown):
    """A literal is translated where the output shows it and nothing else uses it (sdpa_course.i18n.display)."""
    import ast
    from sdpa_course.i18n.display import Notebook
    found = [ast.get_source_segment(cells[0], node) for node in Notebook(cells).literals(cells[0])]
    assert found == shown


def test_a_question_is_translated_field_by_field():
    from sdpa_course.i18n.questions import question_units, translated_question
    from sdpa_course.quiz import select
    question = select(ids=["ch03-scale-key"])[0]
    contexts = [unit.context for unit in question_units([question])]
    assert contexts[:2] == ["ch03-scale-key:prompt", "ch03-scale-key:explanation"]
    assert "ch03-scale-key:option-1" in contexts and "ch03-scale-key:why-2" in contexts
    assert "ch03-scale-key:why-1" not in contexts  # the right option has no why
    chinese = {"ch03-scale-key:prompt": "把键向量 k 加倍……", "ch03-scale-key:option-2": "两者都加倍"}
    translated = translated_question(question, lambda unit: chinese.get(unit.context))
    assert translated.prompt == "把键向量 k 加倍……" and translated.options[1].text == "两者都加倍"
    assert translated.explanation == question.explanation  # untranslated: English
    assert translated.correct_options == question.correct_options and translated.options[1].why == question.options[1].why


def test_the_language_is_chosen_once(monkeypatch):
    from sdpa_course.i18n.language import current_language, set_language
    monkeypatch.setenv("SDPA_LANG", "en")  # recorded, so that set_language's change below is undone after the test
    monkeypatch.delenv("SDPA_LANG")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    assert current_language() == "zh"
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert current_language() == "en"
    set_language("zh")
    assert current_language() == "zh"
    monkeypatch.setenv("SDPA_LANG", "fr")
    with pytest.raises(ValueError, match="not a language of the course"):
        current_language()


def test_a_document_is_translated_block_by_block():
    from sdpa_course.i18n.documents import translated, units
    text = "# Guide\n\nFirst paragraph,\ntwo lines.\n\n```bash\nrun it   # the comment\n\nagain\n```\n\n## Next part\n\nLast.\n"
    found = units(text)
    assert [(u.context, u.text) for u in found] == [
        ("guide", "# Guide"), ("guide", "First paragraph,\ntwo lines."),
        ("guide", "```bash\nrun it   # the comment\n\nagain\n```"), ("next-part", "## Next part"), ("next-part", "Last.")]
    chinese = {"First paragraph,\ntwo lines.": "第一段。", "Last.": "最后。"}
    assert translated(text, lambda unit: chinese.get(unit.text)) == text.replace(
        "First paragraph,\ntwo lines.", "第一段。").replace("Last.", "最后。")


def test_glossary_terms_are_checked_with_exceptions():
    assert missing_terms("Scale the variance.", "缩放方差。") == []
    assert missing_terms("Scale the variance; then mask it.", "缩放方差，然后遮住它。") == ["mask -> 掩码"]
    assert missing_terms("Use layer norm.", "使用层归一化。", "glossary: not norm (layer norm here)") == []
    assert missing_terms("`mask` is a name; $d_k$ too.", "名字") == []


def test_an_update_keeps_the_translators_comments(scratch):
    catalog = polib.pofile(str(scratch.catalog))
    catalog[0].tcomment = "glossary: not norm (layer norm)"
    catalog.save()
    update(scratch)
    assert polib.pofile(str(scratch.catalog))[0].tcomment == "glossary: not norm (layer norm)"


def test_a_marked_message_is_found_and_translated(tmp_path, monkeypatch):
    from sdpa_course.i18n import messages
    (tmp_path / "module.py").write_text('from x import _\nprint(_("Right."))\nprint(_("Wrong: you answered {answer}.").format(answer=1))\n'
                                        'print(_(f"not {1}"))  # an f-string: not a message\n'
                                        'HINTS = {"late": N_("Too late.")}\n'
                                        'A = Mistake("no scale", compute, "divide by sqrt(E)")\n'
                                        'B = Mistake(compute=compute, hint="mask first", name="late mask")\n'
                                        'print(C_("padding side", "right"), _("right"))\n', encoding="utf-8")
    assert ([(unit.context, unit.text) for unit in messages.message_units(tmp_path)]
            == [("message", text) for text in ("Right.", "Wrong: you answered {answer}.", "Too late.", "no scale",
                                               "divide by sqrt(E)", "mask first", "late mask")]
            + [("message|padding side", "right"), ("message", "right")])  # one English, two meanings
    assert messages.N_("Too late.") == "Too late."  # marked where defined, translated where shown
    assert messages.field_problem("Wrong: you answered {answer}.", "错：你答的是 {answer}。") is None
    assert "fields" in messages.field_problem("Wrong: you answered {answer}.", "错：你答的是 {choice}。")
    monkeypatch.setattr(messages, "_translations", lambda language: {("message", "Right."): "对。", ("message", "right"): "对",
                                                                      ("message|padding side", "right"): "右侧"})
    monkeypatch.setenv("SDPA_LANG", "zh")
    assert (messages._("Right."), messages._("Untranslated.")) == ("对。", "Untranslated.")
    assert (messages._("right"), messages.C_("padding side", "right")) == ("对", "右侧")
    monkeypatch.setenv("SDPA_LANG", "en")
    assert messages._("Right.") == "Right."


def test_every_catalogued_mistake_is_a_message():
    """A mistake's name and hint reach the learner: each is in the messages catalog's extraction (so it gets a
    translation), which only sees constant strings."""
    from sdpa_course.grading.exercises import all_tasks
    from sdpa_course.i18n.messages import message_units
    from sdpa_course.quiz.drills import DRILLS
    marked = {unit.text for unit in message_units()}
    mistakes = [m for t in all_tasks() for m in t.mistakes] + [m for drill in DRILLS for t in drill.tasks for m in t.mistakes]
    unmarked = sorted({text for m in mistakes for text in (m.name, m.hint) if text not in marked})
    assert len(mistakes) > 150 and not unmarked, unmarked[:5]
