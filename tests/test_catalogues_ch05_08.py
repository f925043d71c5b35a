"""The catalogues of chapters 5-8 and their grading helpers: every named mistake is a real, distinct wrong answer."""
from __future__ import annotations

import numpy as np
import pytest

import sdpa_lib
from sdpa_course.grading import GradingError, diagnose
from sdpa_course.grading.catalogue import attention, heads, masks, softmax, tiled
from sdpa_course.grading.isolation import correct_helpers
from sdpa_course.grading.memory import expect_no_score_matrix

RNG = np.random.default_rng(0)
B, H, L, S, E, Ev = 2, 3, 5, 7, 4, 6  # every axis a different size
Q, K, V = RNG.normal(size=(B, L, E)), RNG.normal(size=(B, S, E)), RNG.normal(size=(B, S, Ev))
X_Q, X_KV = RNG.normal(size=(B, L, H * 2)), RNG.normal(size=(B, S, H * 2))
W = [RNG.normal(size=(H * 2, H * 2)) for _ in range(4)]
SCORES = RNG.normal(size=(3, 5)) * 3
SCORES[0, 0], SCORES[1] = 1000.0, -np.inf  # a huge score and a fully masked row
P = sdpa_lib.softmax(RNG.normal(size=(3, 4)))
G = RNG.normal(size=(3, 4))
MASK = RNG.random((B, L, S)) < 0.6
MASK[0, 1] = False  # a query that may see nothing
LENGTHS = np.array([S, 3, 0])
X_DEC, X_ENC = RNG.normal(size=(3, L, 4)), RNG.normal(size=(3, S, 4))
W_Q, W_K, W_V = RNG.normal(size=(4, E)), RNG.normal(size=(4, E)), RNG.normal(size=(4, Ev))
BIG = (Q * 40, K * 40, V, 3)  # scores near 1000, blocks of 3 that don't divide S


def _mha(x_query, x_kv, w_q, w_k, w_v, w_o, num_heads):
    mha = sdpa_lib.MultiHeadAttention(w_q.shape[0], num_heads, np.random.default_rng(0))
    mha.w_q, mha.w_k, mha.w_v, mha.w_o = w_q, w_k, w_v, w_o
    return mha(x_query, x_kv)


def _cross(x_dec, x_enc, w_q, w_k, w_v, lengths):
    mask = sdpa_lib.padding_mask(lengths, x_enc.shape[-2])
    return sdpa_lib.scaled_dot_product_attention(x_dec @ w_q, x_enc @ w_k, x_enc @ w_v, mask)


TABLE = [  # (catalogue, reference, args)
    (softmax.SOFTMAX_MISTAKES, sdpa_lib.softmax, (SCORES,)),
    (softmax.JACOBIAN_MISTAKES, sdpa_lib.softmax_jacobian, (P,)),
    (softmax.BACKWARD_MISTAKES, sdpa_lib.softmax_backward, (P, G)),
    (attention.ATTENTION_MISTAKES[:-1], sdpa_lib.scaled_dot_product_attention, (Q, K, V)),
    (attention.ATTENTION_MISTAKES[-1:], sdpa_lib.scaled_dot_product_attention, (Q, K[:, :L], V[:, :L])),  # L == S
    (heads.SPLIT_HEADS_MISTAKES, sdpa_lib.split_heads, (X_Q, H)),
    (heads.MERGE_HEADS_MISTAKES, sdpa_lib.merge_heads, (sdpa_lib.split_heads(X_Q, H),)),
    (heads.MHA_MISTAKES, _mha, (X_Q, X_KV, *W, H)),
    (masks.CAUSAL_MASK_MISTAKES, sdpa_lib.causal_mask, (L, S)),
    (masks.PADDING_MASK_MISTAKES, sdpa_lib.padding_mask, (LENGTHS, S)),
    (masks.MASKED_ATTENTION_MISTAKES[:-2], sdpa_lib.scaled_dot_product_attention, (Q, K, V, MASK)),
    (masks.MASKED_ATTENTION_MISTAKES[-2:-1], sdpa_lib.scaled_dot_product_attention,
     (Q, K[:, :L], V[:, :L], MASK[:, :, :L])),  # L == S
    (masks.MASKED_ATTENTION_MISTAKES[-1:], sdpa_lib.scaled_dot_product_attention,
     (Q * 100, K * 100, V, MASK)),  # scores in the thousands: masked keys far above the visible ones
    (masks.CROSS_ATTENTION_MISTAKES, _cross, (X_DEC, X_ENC, W_Q, W_K, W_V, LENGTHS)),
    (tiled.ONLINE_SOFTMAX_MISTAKES, lambda q, k, v, block: sdpa_lib.scaled_dot_product_attention(q, k, v), BIG),
    (tiled.FLOP_MISTAKES, sdpa_lib.attention_flops, (L, S, E, Ev)),
]
MISTAKES = [(mistake, catalogue, reference, args) for catalogue, reference, args in TABLE for mistake in catalogue]


@pytest.mark.parametrize("mistake, catalogue, reference, args", MISTAKES, ids=[row[0].name for row in MISTAKES])
def test_each_mistake_is_wrong_and_recognised_by_name(mistake, catalogue, reference, args):
    """Does each catalogued mistake differ from the right answer, and does diagnose name it from its own output?"""
    with np.errstate(all="ignore"):
        wrong = mistake.compute(*args)
    right = reference(*args)
    assert np.shape(wrong) != np.shape(right) or not np.allclose(wrong, right, equal_nan=True), mistake.name
    assert diagnose(wrong, catalogue, args) is mistake


@pytest.mark.parametrize("mistake", tiled.SCORE_BYTES_MISTAKES, ids=lambda m: m.name)
def test_score_bytes_mistakes(mistake):
    """Does each score-memory mistake give a different byte count from the reference's for float64 with heads?"""
    right = sdpa_lib.attention_memory_bytes(L, S, 1, 1, dtype=np.float64, batch=B * H)["intermediate"]
    assert mistake.compute(L, S, batch=B, heads=H, dtype=np.float64) != right


def test_expect_no_score_matrix_catches_the_direct_form_only():
    """Is the direct computation caught building (L, S), while the tiled one passes?"""
    q, k, v = (RNG.normal(size=(1024, 4)) for _ in range(3))
    with pytest.raises(GradingError, match=r"score matrix"):
        expect_no_score_matrix(sdpa_lib.scaled_dot_product_attention, q, k, v)
    expect_no_score_matrix(lambda q, k, v: sdpa_lib.tiled_attention(q, k, v, block_size=64), q, k, v)


def helper(x):
    return x


def uses_helper(x):
    return helper(x)


def test_correct_helpers_substitutes_then_restores():
    """Does correct_helpers swap a helper in the student's namespace for the block only, past the forbid guard?"""
    from sdpa_course.grading import unavailable
    with correct_helpers(uses_helper, helper=sdpa_lib.softmax), unavailable(["softmax"], uses_helper):
        np.testing.assert_allclose(uses_helper(np.zeros(2)), [0.5, 0.5])
    assert uses_helper(3) == 3
