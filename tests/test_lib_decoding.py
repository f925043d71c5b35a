"""decode_step: one generation step with a KV cache equals the last row of causal attention."""
import numpy as np
import pytest

from loops import B, H, L, S, attention_loop, randn
from sdpa_lib import apply_rope, decode_step, scaled_dot_product_attention

pytestmark = pytest.mark.filterwarnings("error")
E, Ev = 4, 6


@pytest.mark.parametrize("batch", [(), (B,), (B, H)])
def test_decoding_token_by_token_gives_every_row_of_causal_attention(batch):
    """From an empty cache, one token at a time: is step t's output row t of causal attention, and the cache all keys?"""
    rng = np.random.default_rng(10)
    q, k, v = randn(rng, (*batch, L, E)), randn(rng, (*batch, L, E)), randn(rng, (*batch, L, Ev))
    key_cache, value_cache = np.zeros((*batch, 0, E)), np.zeros((*batch, 0, Ev))
    rows = []
    for t in range(L):
        out, key_cache, value_cache = decode_step(q[..., t:t + 1, :], key_cache, value_cache,
                                                  k[..., t:t + 1, :], v[..., t:t + 1, :])
        rows.append(out)
    np.testing.assert_allclose(np.concatenate(rows, axis=-2), attention_loop(q, k, v, is_causal=True)[0], atol=1e-12)
    np.testing.assert_array_equal(key_cache, k)
    np.testing.assert_array_equal(value_cache, v)


@pytest.mark.parametrize("cached, new", [(0, L), (S, 1), (S, 3)])
def test_several_new_tokens_see_the_cache_and_the_new_tokens_up_to_themselves(cached, new):
    """Prefill (empty cache, T = L) and a chunk of T tokens after S cached: the last T rows of causal attention?"""
    rng = np.random.default_rng(11)
    total = cached + new
    q, k, v = randn(rng, (B, total, E)), randn(rng, (B, total, E)), randn(rng, (B, total, Ev))
    out, keys, values = decode_step(q[:, cached:], k[:, :cached], v[:, :cached], k[:, cached:], v[:, cached:])
    np.testing.assert_allclose(out, attention_loop(q, k, v, is_causal=True)[0][:, cached:], atol=1e-12)
    assert keys.shape == (B, total, E) and values.shape == (B, total, Ev)


def test_rotated_keys_are_cached_once_and_match_full_causal_attention_with_rope():
    """With RoPE: rotating each new key at its position before caching gives full causal attention over rotated q, k."""
    rng = np.random.default_rng(12)
    q, k, v = randn(rng, (L, 8)), randn(rng, (L, 8)), randn(rng, (L, Ev))
    positions = np.arange(L)
    full = scaled_dot_product_attention(apply_rope(q, positions), apply_rope(k, positions), v, is_causal=True)
    key_cache, value_cache = np.zeros((0, 8)), np.zeros((0, Ev))
    for t in range(L):
        out, key_cache, value_cache = decode_step(apply_rope(q[t:t + 1], [t]), key_cache, value_cache,
                                                  apply_rope(k[t:t + 1], [t]), v[t:t + 1])
        np.testing.assert_allclose(out, full[t:t + 1], atol=1e-12)


def test_the_inputs_are_not_changed_and_the_dtype_is_promoted():
    """Are the caches passed in left as they were, and float32 with float64 new rows float64?"""
    rng = np.random.default_rng(13)
    key_cache, value_cache = randn(rng, (S, E), np.float32), randn(rng, (S, Ev), np.float32)
    before = key_cache.copy()
    out, keys, _ = decode_step(randn(rng, (1, E)), key_cache, value_cache, randn(rng, (1, E)), randn(rng, (1, Ev)))
    np.testing.assert_array_equal(key_cache, before)
    assert out.dtype == keys.dtype == np.float64


ONE = np.ones((1, E))


@pytest.mark.parametrize("arguments, message", [
    ((np.ones((2, E)), np.ones((S, E)), np.ones((S, Ev)), ONE, np.ones((1, Ev))), r"must share T >= 1"),
    ((ONE, np.ones((S, E)), np.ones((S + 1, Ev)), ONE, np.ones((1, Ev))), r"key_cache and value_cache must share S"),
    ((ONE, np.ones((S, E + 1)), np.ones((S, Ev)), ONE, np.ones((1, Ev))), r"must share E"),
    ((ONE, np.ones((B, S, E)), np.ones((B, S, Ev)), ONE, np.ones((1, Ev))), r"same leading axes"),
])
def test_bad_shapes_name_every_argument(arguments, message):
    """Is a mismatch of T, S, E or the leading axes a ValueError listing all five shapes?"""
    with pytest.raises(ValueError, match=message) as raised:
        decode_step(*arguments)
    assert "new_value.shape=" in str(raised.value)
