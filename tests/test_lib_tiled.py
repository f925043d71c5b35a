"""tiled_attention (online softmax) against the direct form and the loop spec."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loops import B, E, Ev, H, L, S, attention_loop, randn, random_bool_mask
from sdpa_lib import scaled_dot_product_attention, tiled, tiled_attention
from sdpa_lib.tiled import default_block_size

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


def tiled_and_direct_peaks(q, k, v, **tiled_kwargs) -> tuple[int, int]:
    """Peak bytes tracemalloc sees during tiled_attention, then during the direct form, on the same inputs."""
    tracemalloc.start()
    try:
        tiled_attention(q, k, v, **tiled_kwargs)
        _, tiled_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        scaled_dot_product_attention(q, k, v)
        _, direct_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return tiled_peak, direct_peak


def test_never_builds_the_l_by_s_matrix():
    """With L = S = 1024 and blocks of 64, is the peak allocation far below one L x S float64 array (8 MiB)?"""
    rng = np.random.default_rng(52)
    n, block = 1024, 64
    q, k, v = randn(rng, (n, 8)), randn(rng, (n, 8)), randn(rng, (n, 8))
    tiled_peak, direct_peak = tiled_and_direct_peaks(q, k, v, block_size=block)
    full = n * n * 8
    assert direct_peak >= full  # the direct form does hold L x S: the measurement sees numpy's arrays
    assert tiled_peak < full / 8, f"tiled peak {tiled_peak} bytes vs L x S = {full} bytes"


def tile_bytes(block, n_rows, n_keys, itemsize, batch):
    return batch * min(block, n_rows) * min(block, n_keys) * itemsize


@settings(max_examples=200, deadline=None)
@given(n_rows=st.integers(1, 2**17), n_keys=st.integers(1, 2**17), itemsize=st.sampled_from([4, 8]),
       batch=st.integers(1, 64))
def test_default_block_is_the_largest_that_fits_the_budget(n_rows, n_keys, itemsize, batch):
    """Is the default a power of two >= 64 whose tile holds at most 1/16 of the scores and 16 MiB,
    and the largest such (unless it is the minimum, 64, which is kept even when it does not fit)?"""
    block = default_block_size(n_rows, n_keys, itemsize=itemsize, batch=batch)
    assert block >= 64 and block & (block - 1) == 0

    def fits(b):
        return (16 * min(b, n_rows) * min(b, n_keys) <= n_rows * n_keys
                and tile_bytes(b, n_rows, n_keys, itemsize, batch) <= 16 * 2**20)
    assert block == 64 or fits(block)
    assert not fits(2 * block)


def test_default_block_grows_with_length_and_shrinks_with_batch_and_dtype():
    """Longer sequences get larger blocks (up to the budget); a larger batch or float64 never a larger one."""
    lengths = [2**n for n in range(6, 16)]
    blocks = [default_block_size(n, n) for n in lengths]
    assert blocks == sorted(blocks) and blocks[-1] == 2048  # 2048 x 2048 float32 = 16 MiB
    assert default_block_size(1024, 1024) == 256  # a quarter of L at L = S = 1024: 16 tiles
    for n in lengths:
        assert default_block_size(n, n, itemsize=8) <= default_block_size(n, n)
        assert default_block_size(n, n, batch=16) <= default_block_size(n, n)


def test_tiled_attention_uses_the_default_block_and_block_size_overrides_it(monkeypatch):
    """Without block_size, does tiled_attention tile with default_block_size(L, S, itemsize, batch)?"""
    seen = []
    real = tiled._attend_one_query_block
    monkeypatch.setattr(tiled, "_attend_one_query_block", lambda *args: seen.append(args[5]) or real(*args))
    rng = np.random.default_rng(53)
    q, k, v = (randn(rng, (3, n, 4), np.float32) for n in (700, 900, 900))
    np.testing.assert_allclose(tiled_attention(q, k, v), scaled_dot_product_attention(q, k, v), atol=1e-5)
    assert set(seen) == {default_block_size(700, 900, itemsize=4, batch=3)} == {128}  # 256^2 > 700 * 900 / 16
    seen.clear()
    tiled_attention(q, k, v, block_size=300)
    assert set(seen) == {300}


@pytest.mark.parametrize("length", [1024, 2048])
def test_default_saves_memory_from_l_1024(length):
    """With the default block (float32, one head, E = 64), is the peak at most 25% of the direct form's?"""
    q, k, v = (randn(np.random.default_rng(54), (length, 64), np.float32) for _ in range(3))
    tiled_peak, direct_peak = tiled_and_direct_peaks(q, k, v)
    assert tiled_peak <= 0.25 * direct_peak, f"tiled peak {tiled_peak} bytes vs direct {direct_peak} bytes"


@pytest.mark.filterwarnings("error")
def test_finite_extremes_are_silent():
    """Scores at the edge of the float range (x - max overflows to -inf): the exact output, and no warning?"""
    big = np.finfo(np.float64).max
    q, k, v = np.ones((2, 1)), np.array([[big], [0.0], [-big]]), np.eye(3)
    np.testing.assert_array_equal(tiled_attention(q, k, v, block_size=2, scale=1.0), [[1.0, 0, 0], [1.0, 0, 0]])
