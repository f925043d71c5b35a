"""split_heads, merge_heads and MultiHeadAttention (MHA, GQA, MQA) against loops over heads."""
import numpy as np
import pytest

from loops import B, L, S, merge_heads_loop, multi_head_loop, padding_mask_loop, randn, split_heads_loop
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
