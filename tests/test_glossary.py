"""The glossary that chapter 0 shows."""
from __future__ import annotations

import pytest

from sdpa_course.glossary import glossary_markdown, load_glossary


def test_glossary_entries_are_complete_and_unique():
    """Does every term have English, Chinese, a meaning and a chapter, with no term twice?"""
    terms = load_glossary()
    assert len(terms) >= 25
    assert all(term.en and term.zh and term.meaning for term in terms)
    assert len({term.en for term in terms}) == len(terms)


def test_glossary_table_links_each_term_to_its_chapter():
    """Is there one table row per term, each linking an existing chapter notebook?"""
    table = glossary_markdown().splitlines()
    assert len(table) == 2 + len(load_glossary())
    assert "(04_scaling.ipynb)" in "\n".join(table)


def test_bad_glossary_entry_is_named(tmp_path):
    """Does an entry missing a field fail with its index?"""
    bad = tmp_path / "glossary.yaml"
    bad.write_text("- {en: query, zh: 查询, chapter: 2}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="entry 0"):
        load_glossary.__wrapped__(bad)
