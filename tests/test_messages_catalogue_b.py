"""The Chinese of the mistake catalogues for chapters 1-5, 7 and 13 (decoding, scaling, softmax, projections, tiled,
scores, positions): each mistake's name and hint, the hint tables, and RoPE's offset check reach the learner in
Chinese, and stay English in English."""
import re

import numpy as np
import pytest

from sdpa_course.grading.catalogue import decoding, positions, projections, scaling, scores, softmax, tiled
from sdpa_course.grading.mistakes import Mistake
from sdpa_course.i18n.messages import _
from sdpa_lib.positions import apply_rope

CATALOGUES = (decoding, scaling, softmax, projections, tiled, scores, positions)
MISTAKES = [value for module in CATALOGUES for table in vars(module).values()
            if isinstance(table, tuple) and table and all(isinstance(m, Mistake) for m in table) for value in table]
HINT_TABLES = (scaling.SCALE_HINTS, projections.PIPELINE_SHAPE_HINTS, scores.DISAGREEING_PAIR_HINTS)
CJK = re.compile(r"[\u4e00-\u9fff]")


def _chinese(text: str) -> bool:
    return _(text) != text and bool(CJK.search(_(text)))


def test_every_mistake_is_named_and_hinted_in_chinese(monkeypatch):
    monkeypatch.setenv("SDPA_LANG", "zh")
    assert len(MISTAKES) > 80
    untranslated = sorted({text for m in MISTAKES for text in (m.name, m.hint) if not _chinese(text)})
    assert not untranslated, untranslated[:5]


def test_the_hint_tables_are_shown_in_chinese(monkeypatch):
    monkeypatch.setenv("SDPA_LANG", "zh")
    assert _(scaling.SCALE_HINTS[scaling.FORGOT_SCALE]).startswith("在 softmax 之前把分数除以 sqrt(E)")
    assert all(_chinese(hint) for table in HINT_TABLES for hint in table.values())


@pytest.mark.parametrize("language, start", [("en", "after your rotation, q . k depends on where the tokens are"),
                                             ("zh", "经过你的旋转，q . k 取决于词元所在的位置")])
def test_ropes_offset_problem_speaks_the_learners_language(monkeypatch, language, start):
    monkeypatch.setenv("SDPA_LANG", language)
    x, at = np.tile(np.eye(4)[:2], (2, 1)), np.array([0, 3, 5, 8])
    problem = positions.rope_offset_problem(x * np.cos(at)[:, None], x, at)
    assert problem.startswith(start)
    assert ("at positions 5 and 5" if language == "en" else "位于位置 5 和 5") in problem
    assert positions.rope_offset_problem(apply_rope(x, at), x, at) is None
