"""split_heads, merge_heads and MultiHeadAttention (MHA, GQA, MQA) against loops over heads."""
import numpy as np
import pytest

from loops import (B, L, S, merge_heads_loop, multi_head_loop, padding_mask_loop, randn, random_bool_mask,
                   split_heads_loop)
from sdpa_lib import MultiHeadAttention, causal_mask, merge_heads, split_heads

pytestmark = pytest.mark.filterwarnings("error")
D = 12  # d_model: divisible by 1, 2, 3, 4, 6, 12 heads


@pytest.mark.parametrize("shape", [(L, D), (B, L, D), (B, 3, L, D)])
@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 12])
def test_split_and_merge_match_loops(shape, num_heads):
    """Does head h take features h*Dh .. (h+1)*Dh - 1, and is merge_heads its inverse?"""
    x = randn(np.random.default_rng(40), shape)
    heads = split_heads(x, num_heads)
    assert heads.shape == (*shape[:-2], num_heads, L, D // num_heads)
    np.testing.assert_array_equal(heads, split_heads_loop(x, num_heads))
    np.testing.assert_array_equal(merge_heads(heads), merge_heads_loop(heads))
    np.testing.assert_array_equal(merge_heads(heads), x)


# (num_heads, num_kv_heads): MHA, GQA, MQA
FAMILIES = {"MHA": (4, 4), "GQA": (6, 2), "MQA": (3, 1)}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_self_attention_matches_loop_over_heads(family, dtype, tol):
    """Does the module equal, head by head, attention with the matching slices of W_Q, W_K, W_V, then W_O?"""
    num_heads, num_kv_heads = FAMILIES[family]
    mha = MultiHeadAttention(D, num_heads, np.random.default_rng(41), num_kv_heads=num_kv_heads, dtype=dtype)
    x = randn(np.random.default_rng(42), (B, L, D), dtype)
    out = mha(x)
    assert out.shape == (B, L, D) and out.dtype == dtype
    np.testing.assert_allclose(out, multi_head_loop(mha, x), rtol=tol, atol=tol)


@pytest.mark.parametrize("family", FAMILIES)
def test_cross_attention_with_padding_and_causal_masks(family):
    """Cross-attention (L queries over S keys) with a padding mask, and self-attention with is_causal."""
    num_heads, num_kv_heads = FAMILIES[family]
    mha = MultiHeadAttention(D, num_heads, np.random.default_rng(43), num_kv_heads=num_kv_heads)
    rng = np.random.default_rng(44)
    x_q, x_kv = randn(rng, (B, L, D)), randn(rng, (B, S, D))
    pad = padding_mask_loop([3, S], S)  # (B, 1, S)
    out, weights = mha(x_q, x_kv, pad, return_weights=True)
    assert out.shape == (B, L, D) and weights.shape == (B, num_heads, L, S)
    np.testing.assert_allclose(out, multi_head_loop(mha, x_q, x_kv, pad), atol=1e-12)
    assert np.all(weights[0, :, :, 3:] == 0)
    np.testing.assert_allclose(mha(x_q, is_causal=True), multi_head_loop(mha, x_q, is_causal=True), atol=1e-12)
    np.testing.assert_allclose(mha(x_q, x_q, causal_mask(L)), mha(x_q, is_causal=True), atol=1e-12)


def test_parameter_counts_and_kv_sharing():
    """W_K and W_V shrink by H/Hkv: MHA 4*D^2, MQA 2*D^2 + 2*D*Dh; and the seed fixes the weights."""
    mha = MultiHeadAttention(D, 4, np.random.default_rng(0))
    mqa = MultiHeadAttention(D, 4, np.random.default_rng(0), num_kv_heads=1)
    assert mha.parameter_count() == 4 * D * D
    assert mqa.parameter_count() == 2 * D * D + 2 * D * (D // 4)
    assert mqa.w_k.shape == (D, D // 4)
    twin = MultiHeadAttention(D, 4, np.random.default_rng(0))
    np.testing.assert_array_equal(mha(np.ones((L, D))), twin(np.ones((L, D))))


def test_mqa_heads_share_keys():
    """In MQA every query head attends over the same keys: with W_Q columns equal per head, the weights match."""
    mqa = MultiHeadAttention(D, 3, np.random.default_rng(45), num_kv_heads=1)
    mqa.w_q = np.tile(mqa.w_q[:, :D // 3], (1, 3))  # the same query projection for every head
    _, weights = mqa(randn(np.random.default_rng(46), (L, D)), return_weights=True)
    np.testing.assert_allclose(weights[0], weights[1], atol=1e-14)
    np.testing.assert_allclose(weights[0], weights[2], atol=1e-14)


# mask shape, input batch axes, num_heads, has a head axis?  (B = 2; key 0 always allowed: no empty row)
MASK_SHAPES = {
    "(L, S) for everything": ((L, S), (B,), 4, False),
    "(B, L, S) per sequence": ((B, L, S), (B,), 4, False),
    "(B, 1, S) padding per sequence": ((B, 1, S), (B,), 3, False),
    "(B, 1, L, S) per head, a head axis of 1": ((B, 1, L, S), (B,), 2, True),
    "(B, H, L, S) per head": ((B, 4, L, S), (B,), 4, True),
    "(1, H, L, S) per head, same for every sequence": ((1, 4, L, S), (B,), 4, True),
    "(H, L, S) per head, no batch axes": ((4, L, S), (), 4, True),
    "(3, B, L, S) two batch axes, per sequence": ((3, B, L, S), (3, B), 4, False),
}


@pytest.mark.parametrize("name", MASK_SHAPES)
def test_each_documented_mask_shape_means_what_it_says(name):
    """Is each documented mask shape read as documented: for every head, or head h taking its own slice?"""
    shape, batch, num_heads, per_head = MASK_SHAPES[name]
    mha = MultiHeadAttention(D, num_heads, np.random.default_rng(47))
    rng = np.random.default_rng(48)
    x_q, x_kv = randn(rng, (*batch, L, D)), randn(rng, (*batch, S, D))
    mask = random_bool_mask(rng, shape, 0.6)
    mask[..., 0] = True
    expected_mask = np.broadcast_to(mask, (*shape[:-3], num_heads, L, S)) if per_head else mask
    out, weights = mha(x_q, x_kv, mask, return_weights=True)
    assert out.shape == (*batch, L, D) and weights.shape == (*batch, num_heads, L, S)
    np.testing.assert_allclose(out, multi_head_loop(mha, x_q, x_kv, expected_mask, per_head=per_head), atol=1e-12)


@pytest.mark.parametrize("shape, batch, pattern", [
    ((B, L, S), (B,), r"attn_mask.shape=\(2, 5, 7\) could mean two things with num_heads=2: one mask per sequence "
                      r"\(\.\.\., L, S\), the same for every head, or one per head \(H, L, S\), since its axis -3 "
                      r"has size 2; give the head axis explicitly: np.expand_dims\(attn_mask, -3\) \(2, 1, 5, 7\) "
                      r"for one per sequence, or attn_mask reshaped to \(1, 2, 5, 7\) for one per head"),
    ((B, 1, S), (B,), r"attn_mask.shape=\(2, 1, 7\) could mean two things"),  # a padding mask when B == H
    ((3, B, L, S), (3, 4), r"could mean two things .*reshaped to \(1, 3, 2, 5, 7\)"),  # axis -3 of 2 axes
    ((B, 3, L, S), (B,), r"attn_mask.shape=\(2, 3, 5, 7\) has the rank of a per-head mask \(\.\.\., H, L, S\) "
                         r"for inputs with 1 batch axes, but its head axis \(-3\) has size 3, not num_heads=2 or 1"),
    ((1, B, 1, L, S), (B,), r"attn_mask.shape=\(1, 2, 1, 5, 7\) has more axes than a per-head mask"),
])
def test_a_mask_that_could_mean_two_things_is_refused(shape, batch, pattern):
    """A (..., L, S) mask whose axis -3 equals num_heads, a wrong head axis, or too many axes: a ValueError that says why."""
    mha = MultiHeadAttention(D, 2, np.random.default_rng(49))
    x = np.ones((*batch, L, D))
    with pytest.raises(ValueError, match=pattern):
        mha(x, np.ones((*batch, S, D)), np.ones(shape, dtype=bool))
