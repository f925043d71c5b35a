"""tiled_attention (online softmax) against the direct form and the loop spec."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loops import B, E, Ev, H, L, S, attention_loop, randn, random_bool_mask
from sdpa_lib import scaled_dot_product_attention, tiled_attention

pytestmark = pytest.mark.filterwarnings("error")


@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 6, 100])
@pytest.mark.parametrize("mask_kind", ["none", "bool (B, 1, L, S)", "float (L, S)", "causal"])
def test_matches_loop_spec(block_size, mask_kind):
    """For block sizes that do and don't divide L=5 and S=7, with every kind of mask, is it the loop spec?"""
    rng = np.random.default_rng(50)
    q, k, v = randn(rng, (B, H, L, E)), randn(rng, (B, H, S, E)), randn(rng, (B, H, S, Ev))
    mask = {"none": None, "causal": None, "bool (B, 1, L, S)": random_bool_mask(rng, (B, 1, L, S), 0.5),
            "float (L, S)": randn(rng, (L, S))}[mask_kind]
    causal = mask_kind == "causal"
    out = tiled_attention(q, k, v, mask, block_size=block_size, is_causal=causal)
    np.testing.assert_allclose(out, attention_loop(q, k, v, mask, is_causal=causal)[0], atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 13), n_keys=st.integers(1, 13),
       block_size=st.integers(1, 9), kind=st.sampled_from(["none", "bool", "float", "causal"]),
       scale=st.sampled_from([None, 0.1, 2.0]))
def test_equals_direct_form_within_1e10(seed, n_rows, n_keys, block_size, kind, scale):
    """Whatever the block size (dividing L or not), is tiled attention the direct form within 1e-10 (float64)?"""
    rng = np.random.default_rng(seed)
    q, k, v = randn(rng, (2, n_rows, E)), randn(rng, (n_keys, E)), randn(rng, (n_keys, Ev))
    mask = {"bool": random_bool_mask(rng, (2, n_rows, n_keys), 0.5),
            "float": np.where(random_bool_mask(rng, (n_rows, n_keys), 0.7), randn(rng, (n_rows, n_keys)), -np.inf)
            }.get(kind)
    causal = kind == "causal"
    tiled = tiled_attention(q, k, v, mask, block_size=block_size, is_causal=causal, scale=scale)
    direct = scaled_dot_product_attention(q, k, v, mask, is_causal=causal, scale=scale)
    assert tiled.shape == direct.shape
    np.testing.assert_allclose(tiled, direct, rtol=0, atol=1e-10)


def test_float32_and_huge_scores():
    """float32 stays float32 and within 1e-5 of float64; scores of 1e4 and a fully masked row stay finite."""
    rng = np.random.default_rng(51)
    q, k, v = randn(rng, (B, L, E)), randn(rng, (B, S, E)), randn(rng, (B, S, Ev))
    out32 = tiled_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), block_size=3)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, tiled_attention(q, k, v, block_size=3), atol=1e-5)
    mask = random_bool_mask(rng, (B, L, S))
    mask[0, 1] = False
    out = tiled_attention(q * 100, k * 100, v, mask, block_size=2)
    np.testing.assert_array_equal(out[0, 1], 0.0)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q * 100, k * 100, v, mask), atol=1e-10)


def test_never_builds_the_l_by_s_matrix():
    """With L = S = 1024 and blocks of 64, is the peak allocation far below one L x S float64 array (8 MiB)?"""
    rng = np.random.default_rng(52)
    n, block = 1024, 64
    q, k, v = randn(rng, (n, 8)), randn(rng, (n, 8)), randn(rng, (n, 8))
    tracemalloc.start()
    try:
        tiled_attention(q, k, v, block_size=block)
        _, tiled_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        scaled_dot_product_attention(q, k, v)
        _, direct_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    full = n * n * 8
    assert direct_peak >= full  # the direct form does hold L x S: the measurement sees numpy's arrays
    assert tiled_peak < full / 8, f"tiled peak {tiled_peak} bytes vs L x S = {full} bytes"
