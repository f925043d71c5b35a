"""The grading messages of attention, heads, masks, applications, the exercises and the drills, in Chinese.

With ``SDPA_LANG=zh`` every catalogued mistake of these catalogues has a Chinese name and hint, and
the verdicts and lookup errors written there speak Chinese; in English each message is, byte for
byte, the text printed before it was marked (written out here as the old f-strings).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from sdpa_course.grading.catalogue import applications, attention, heads, masks
from sdpa_course.grading.exercises import task, tasks
from sdpa_course.grading.exercises.ch01_visual_demo import shapes_problem
from sdpa_course.grading.exercises.ch13_beyond import integer_problem
from sdpa_course.i18n.messages import _
from sdpa_course.quiz.drill_tasks import CAUSAL_SDPA_MISTAKES, drill_task

CJK = re.compile(r"[\u4e00-\u9fff]")
CATALOGUES = {
    "attention": attention.ATTENTION_MISTAKES,
    "split heads": heads.SPLIT_HEADS_MISTAKES, "merge heads": heads.MERGE_HEADS_MISTAKES, "mha": heads.MHA_MISTAKES,
    "causal mask": masks.CAUSAL_MASK_MISTAKES, "sliding window": masks.SLIDING_WINDOW_MISTAKES,
    "padding mask": masks.PADDING_MASK_MISTAKES, "masked attention": masks.MASKED_ATTENTION_MISTAKES,
    "cross-attention": masks.CROSS_ATTENTION_MISTAKES,
    "retrieval": applications.RETRIEVAL_MISTAKES, "next token": applications.NEXT_TOKEN_MISTAKES,
    "alignment": applications.ALIGNMENT_MISTAKES, "seed demo": applications.SEED_DEMO_MISTAKES,
    "batched": applications.BATCHED_MISTAKES, "padded": applications.PADDED_MISTAKES,
    "share outside": applications.SHARE_OUTSIDE_MISTAKES, "mean max": applications.MEAN_MAX_MISTAKES,
    "causal sdpa drill": CAUSAL_SDPA_MISTAKES,
}


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("SDPA_LANG", "zh")


def chinese(text: str, english: str) -> bool:
    return text != english and bool(CJK.search(text))


@pytest.mark.parametrize("catalogue", CATALOGUES.values(), ids=CATALOGUES.keys())
def test_every_mistake_has_a_chinese_name_and_hint(zh, catalogue):
    untranslated = [text for mistake in catalogue for text in (mistake.name, mistake.hint) if not chinese(_(text), text)]
    assert not untranslated, untranslated[:3]


def test_a_mistake_keeps_its_english_identity_in_chinese(zh):
    """Only what is shown is translated: the name stays the English one that matching and the tests use."""
    forgot = attention.ATTENTION_MISTAKES[0]
    assert forgot.name == "forgot the scale" and _(forgot.name) == "忘了缩放"


def verdicts():
    """(what the learner sees, the English it was before it was marked) for each verdict and lookup error."""
    q = np.array([1.0, 0.0])
    weights = np.array([0.5, 0.3, 0.2])
    yield applications.disagreeing_keys_problem(q, (np.zeros(2), q)), \
        "a zero key has no direction, so its cosine is undefined"
    yield applications.disagreeing_keys_problem(q, "k1"), "return 2 arrays (k1, k2); got str"
    yield applications.disagreeing_keys_problem(q, (q, np.ones(3))), \
        "k1, k2 must be finite arrays of shape (2,); got shapes [(2,), (3,)]"
    yield applications.disagreeing_keys_problem(q, (2 * q, q)), \
        "q . k1 = 2, q . k2 = 1; cos(q, k1) = 1, cos(q, k2) = 1. k1 and k2 point the same way"
    yield applications.misleading_values_problem(weights, "v"), \
        "return finite values of shape (S, Ev) with S = 3 rows, one per token; got str ()"
    yield applications.misleading_values_problem(weights, np.eye(3)), \
        "removing the token with the largest weight (0.5) moves the output by 0.6164, at least as much as"
    yield shapes_problem((), 2, 3, 4, 5, {"X": (2, 3)}), \
        "return a dict with exactly the keys ['K', 'Q', 'V', 'W_K', 'W_Q', 'W_V', 'X', 'output', 'scores', " \
        "'weights']; got {'X': (2, 3)}"
    yield integer_problem(2.0), ("your function returned 2.0, a float: a number of bytes is a whole number, so "
                                 "return an int. Multiply the integers (no / and no float constants such as 2.0 or "
                                 "1e3), or convert a product you are sure is whole with int(...)")
    for lookup, english in ((lambda: tasks("ch99"), "no graded exercise for chapter 'ch99'; the chapters with one are "),
                            (lambda: task("ch08", "nothing"), "chapter 'ch08' grades no function 'nothing'; it grades "),
                            (lambda: drill_task("nothing"),
                             "the drills grade no function 'nothing' of their own; they grade causal_sdpa")):
        with pytest.raises(LookupError) as raised:
            lookup()
        yield str(raised.value), english


def test_the_verdicts_and_lookup_errors_read_as_before_in_english():
    """Each message, or its beginning where the rest is another module's hint or a list of names."""
    for shown, english in verdicts():
        assert shown[:len(english)] == english


def test_the_verdicts_and_lookup_errors_speak_chinese(zh):
    shown = [text for text, unused in verdicts()]
    assert all(CJK.search(text) for text in shown[:3] + shown[4:]), shown
    assert "cos(q, k1) = 1" in shown[3] and "。" in shown[3]  # the formulas kept, the punctuation Chinese
    assert "'ch99'" in shown[-3] and "causal_sdpa" in shown[-1]


def test_a_wrong_shape_is_explained_in_chinese(zh):
    """The sizes and shapes stay formulas; the sentence around them (and the hint of catalogue.projections) is
    Chinese."""
    predicted = {name: () for name in ("W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "weights", "output")}
    problem = shapes_problem((), 2, 3, 4, 5, {"X": (2, 3), **predicted})
    assert problem.startswith("对于 batch=(), L=2, D=3, E=4, Ev=5，你预测 W_Q 的形状是 ()，实际是 (3, 4)："), problem
