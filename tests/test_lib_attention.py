"""scaled_dot_product_attention and attention_weights: loop spec, properties, PyTorch semantics."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loops import B, E, Ev, H, L, S, attention_loop, causal_mask_loop, randn, random_bool_mask
from sdpa_lib import (attention, attention_weights, causal_mask, fast_attention, mask_to_bias, padding_mask,
                      scaled_dot_product_attention)

pytestmark = pytest.mark.filterwarnings("error")
SETTINGS = settings(max_examples=40, deadline=None)
DTYPES = [(np.float64, 1e-12), (np.float32, 2e-5)]

# (query, key, value, mask) shapes; mask None, bool or float, broadcasting on every axis
CASES = {
    "2-D": ((L, E), (S, E), (S, Ev), None),
    "batch": ((B, L, E), (B, S, E), (B, S, Ev), None),
    "heads": ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), None),
    "shared keys": ((B, H, L, E), (S, E), (S, Ev), None),
    "size-1 axes": ((B, 1, L, E), (1, H, S, E), (1, H, S, Ev), None),
    "mask (L, S)": ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), ("bool", (L, S))),
    "padding mask (B, 1, 1, S)": ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), ("bool", (B, 1, 1, S))),
    "per-head mask": ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), ("bool", (H, L, S))),
    "mask adds a batch axis": ((L, E), (S, E), (S, Ev), ("bool", (B, L, S))),
    "query column mask (L, 1)": ((B, L, E), (B, S, E), (B, S, Ev), ("bool", (L, 1))),
    "float mask": ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), ("float", (B, 1, L, S))),
    "float mask with -inf": ((B, L, E), (B, S, E), (B, S, Ev), ("float-inf", (L, S))),
    "one query": ((B, 1, E), (B, S, E), (B, S, Ev), ("bool", (1, S))),
    "one key": ((B, L, E), (B, 1, E), (B, 1, Ev), None),
}


def make_case(name, dtype=np.float64, seed=0):
    q_shape, k_shape, v_shape, mask_spec = CASES[name]
    rng = np.random.default_rng(seed)
    q, k, v = randn(rng, q_shape, dtype), randn(rng, k_shape, dtype), randn(rng, v_shape, dtype)
    mask = None
    if mask_spec is not None:
        kind, shape = mask_spec
        mask = random_bool_mask(rng, shape)
        if kind == "float":
            mask = randn(rng, shape, dtype)
        elif kind == "float-inf":
            mask = np.where(mask, randn(rng, shape), -np.inf).astype(dtype)
    return q, k, v, mask


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_matches_loop(name, dtype, tol):
    """Do output and weights agree with the loop spec, in shape, dtype and value?"""
    q, k, v, mask = make_case(name, dtype)
    out, weights = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    out_spec, weights_spec = attention_loop(q, k, v, mask)
    assert out.dtype == weights.dtype == dtype
    assert out.shape == out_spec.shape and weights.shape == weights_spec.shape
    np.testing.assert_allclose(out, out_spec, rtol=tol, atol=tol)
    np.testing.assert_allclose(weights, weights_spec, rtol=tol, atol=tol)
    # the fast path (no weights returned), the default choice and attention_weights give the same numbers
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, mask, implementation="fast"), out_spec,
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, mask), out_spec, rtol=tol, atol=tol)
    np.testing.assert_allclose(attention_weights(q, k, mask), weights_spec, rtol=tol, atol=tol)


@pytest.mark.parametrize("n_rows, n_keys", [(L, S), (S, L), (L, L)])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_is_causal_and_scale_match_loop(n_rows, n_keys, scale):
    """Is is_causal the top-left aligned lower triangle for L != S, and does scale multiply the scores?"""
    rng = np.random.default_rng(1)
    q, k, v = randn(rng, (B, n_rows, E)), randn(rng, (B, n_keys, E)), randn(rng, (B, n_keys, Ev))
    out, weights = scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, return_weights=True)
    out_spec, weights_spec = attention_loop(q, k, v, causal_mask_loop(n_rows, n_keys), scale=scale)
    np.testing.assert_allclose(out, out_spec, atol=1e-12)
    np.testing.assert_allclose(weights, weights_spec, atol=1e-12)
    assert np.all(weights[:, ~causal_mask_loop(n_rows, n_keys)] == 0)


def test_mixed_dtypes_promote_to_float64():
    """A float32 query with float64 keys gives float64, as numpy promotion does."""
    q, k, v, _ = make_case("batch")
    assert scaled_dot_product_attention(q.astype(np.float32), k, v).dtype == np.float64


def test_analytic_two_keys():
    """By hand: q = (1, 0), keys (1, 0) and (0, 1), E = 2: weights are softmax(1/sqrt 2, 0)."""
    q, k, v = np.array([[1.0, 0.0]]), np.eye(2), np.array([[10.0], [20.0]])
    a = np.exp(1 / np.sqrt(2))
    expected_w = np.array([[a / (a + 1), 1 / (a + 1)]])
    out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    np.testing.assert_allclose(w, expected_w)
    np.testing.assert_allclose(out, expected_w @ v)


# ------------------------------------------------------------------ PyTorch semantics
def test_bool_true_means_attend_and_float_mask_is_added():
    """Bool True = attend (as torch); a float mask is added to the scaled scores; -inf bias equals False."""
    q, k, v, _ = make_case("heads")
    mask = random_bool_mask(np.random.default_rng(2), (L, S))
    mask[:, 0] = True
    _, weights = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    assert np.all(weights[..., ~mask] == 0) and np.all(weights[..., mask] > 0)
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, mask_to_bias(mask)),
                                  scaled_dot_product_attention(q, k, v, mask))
    bias = randn(np.random.default_rng(3), (L, S))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(E) + bias
    expected = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(attention_weights(q, k, bias), expected, atol=1e-12)


def test_fully_masked_rows_give_zeros():
    """A query row with every key masked gives zero weights and zero output, no NaN (torch >= 2.5)."""
    q, k, v, _ = make_case("batch")
    mask = padding_mask([0, 4], S)  # sequence 0 has no real key at all
    out, weights = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    np.testing.assert_array_equal(out[0], 0.0)
    np.testing.assert_array_equal(weights[0], 0.0)
    np.testing.assert_allclose(weights[1].sum(-1), 1.0)
    float_mask = np.where(mask, 0.0, -np.inf)
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, float_mask)[0], 0.0)


def test_nan_propagates():
    """NaN in a query row spreads to that row's output (documented), never becomes a silent number."""
    q, k, v, _ = make_case("batch")
    q[1, 2, 0] = np.nan
    out = scaled_dot_product_attention(q, k, v)
    assert np.all(np.isnan(out[1, 2]))
    assert not np.any(np.isnan(np.delete(out[1], 2, axis=0))) and not np.any(np.isnan(out[0]))
    v[0, 3, 1] = np.nan
    assert np.all(np.isnan(scaled_dot_product_attention(q, k, v)[0, :, 1]))


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_preserves_the_mean_and_zeros_dropped_weights(p):
    """Kept weights are scaled by 1/(1-p), dropped ones are 0, about a fraction p drop, the mean is kept."""
    rng = np.random.default_rng(4)
    q, k, v = 0.1 * randn(rng, (400, E)), randn(rng, (200, E)), np.ones((200, 1))  # near-uniform weights
    clean = attention_weights(q, k)
    out, dropped = scaled_dot_product_attention(q, k, v, dropout_p=p, rng=np.random.default_rng(6),
                                                return_weights=True)
    zero = dropped == 0
    assert zero.mean() == pytest.approx(p, abs=0.02)
    np.testing.assert_allclose(dropped[~zero], clean[~zero] / (1 - p), rtol=1e-12)
    np.testing.assert_allclose(out, dropped @ v)
    # with all-ones values, the output is the row sum of the weights: 1 on average
    assert out.mean() == pytest.approx(1.0, abs=0.02)


def test_dropout_is_deterministic_with_a_seeded_rng():
    """The same seed gives the same dropout pattern; another seed a different one; p = 0 changes nothing."""
    q, k, v, _ = make_case("heads")
    run = lambda seed: scaled_dot_product_attention(q, k, v, dropout_p=0.3, rng=np.random.default_rng(seed))
    np.testing.assert_array_equal(run(7), run(7))
    assert not np.array_equal(run(7), run(8))
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, dropout_p=0.0),
                                  scaled_dot_product_attention(q, k, v))


# ------------------------------------------------------------------ properties
sizes = st.integers(1, 8)


def random_inputs(seed, n_rows, n_keys, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (randn(rng, (2, n_rows, E), dtype), randn(rng, (2, n_keys, E), dtype),
            randn(rng, (2, n_keys, Ev), dtype), random_bool_mask(rng, (2, n_rows, n_keys), 0.6))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n_rows=sizes, n_keys=sizes)
def test_rows_sum_to_one_or_zero_and_masked_weights_are_zero(seed, n_rows, n_keys):
    """Rows of weights sum to 1, or to 0 where every key is masked; masked weights are exactly 0."""
    q, k, v, mask = random_inputs(seed, n_rows, n_keys)
    out, weights = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    np.testing.assert_allclose(weights.sum(-1), mask.any(-1).astype(float), atol=1e-12)
    assert np.all(weights[~mask] == 0) and np.all(weights >= 0)
    # each output row is a convex combination of the value rows: inside their per-feature range
    low, high = v.min(axis=-2, keepdims=True), v.max(axis=-2, keepdims=True)
    live = mask.any(-1)
    assert np.all((out >= low - 1e-12) | ~live[..., None]) and np.all((out <= high + 1e-12) | ~live[..., None])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n_rows=sizes, n_keys=sizes)
def test_permuting_keys_and_values_together_changes_nothing(seed, n_rows, n_keys):
    """Attention is a set operation over the keys: permuting keys, values and mask columns together is harmless."""
    q, k, v, mask = random_inputs(seed, n_rows, n_keys)
    order = np.random.default_rng(seed + 1).permutation(n_keys)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k[:, order], v[:, order], mask[..., order]),
                               scaled_dot_product_attention(q, k, v, mask), atol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n_rows=sizes, n_keys=sizes)
def test_causal_outputs_ignore_future_keys(seed, n_rows, n_keys):
    """Under is_causal, changing keys and values after position i leaves output row i unchanged."""
    q, k, v, _ = random_inputs(seed, n_rows, n_keys)
    cut = int(np.random.default_rng(seed).integers(0, n_keys))
    k2, v2 = k.copy(), v.copy()
    k2[:, cut + 1:] += 5.0
    v2[:, cut + 1:] -= 3.0
    rows = slice(0, min(cut + 1, n_rows))  # rows i <= cut see keys 0..i only
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k2, v2, is_causal=True)[:, rows],
                                  scaled_dot_product_attention(q, k, v, is_causal=True)[:, rows])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n_rows=sizes, n_keys=sizes)
def test_float32_within_1e5_of_float64(seed, n_rows, n_keys):
    """With unit-scale inputs, is the float32 result within 1e-5 of the float64 one (weights and output)?"""
    q, k, v, mask = random_inputs(seed, n_rows, n_keys)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    out32, w32 = scaled_dot_product_attention(q32, k32, v32, mask, return_weights=True)
    out64, w64 = scaled_dot_product_attention(q32.astype(np.float64), k32.astype(np.float64),
                                              v32.astype(np.float64), mask, return_weights=True)
    np.testing.assert_allclose(w32, w64, atol=1e-5)
    np.testing.assert_allclose(out32, out64, atol=1e-5)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), big=st.sampled_from([1e2, 1e4, 1e150]))
def test_huge_scores_stay_finite(seed, big):
    """Scores far beyond exp's range (|q . k| up to 1e300) still give finite, normalised weights."""
    q, k, v, mask = random_inputs(seed, 3, 5)
    out, weights = scaled_dot_product_attention(q * big, k * big, v, mask, return_weights=True)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
    np.testing.assert_allclose(weights.sum(-1), mask.any(-1).astype(float), atol=1e-12)


def test_causal_mask_argument_equals_is_causal():
    """attn_mask=causal_mask(L, S) and is_causal=True are the same computation."""
    q, k, v, _ = make_case("heads")
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, causal_mask(L, S)),
                                  scaled_dot_product_attention(q, k, v, is_causal=True))


@pytest.mark.parametrize("dtype, gap", [(np.float32, 200.0), (np.float64, 1000.0)])
@pytest.mark.parametrize("hot_key", [0, 5, 63])
def test_unmasked_output_exact_when_one_key_towers_over_the_rest(dtype, gap, hot_key):
    """Without a mask the output path shifts by the max over a sample of keys; a key outside the
    sample scoring far above it (exp would overflow) must still give the exact answer."""
    rng = np.random.default_rng(hot_key)
    q, k, v = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 64, 8)), rng.normal(size=(2, 64, 3))
    k[:, hot_key] = q[:, 0] / np.linalg.norm(q[:, 0], axis=-1, keepdims=True) * gap  # row 0 loves this key
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    v[:, hot_key, 0] = 0.0  # inf * 0 in the overflowing fast path must not leak a warning either
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = scaled_dot_product_attention(q, k, v, scale=1.0, implementation="fast")
    expected, _ = attention_loop(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), scale=1.0)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, expected, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5)
    np.testing.assert_allclose(out[:, 0], v[:, hot_key], rtol=1e-5)


def test_unmasked_output_exact_when_exp_times_value_overflows():
    """The fast path's row sums can stay finite while exp(score - shift) * value overflows:
    large values beside a key far above the sampled shift must still give the exact output."""
    q = np.array([[[1.0]]], dtype=np.float32)  # (1, L=1, E=1)
    k = np.zeros((1, 40, 1), dtype=np.float32)
    k[0, 5, 0] = 86.0  # not among the sampled keys (0, 32): exp(86) ~ 2e37 stays finite
    v = np.full((1, 40, 2), 100.0, dtype=np.float32)  # but 2e37 * 100 overflows float32
    out = scaled_dot_product_attention(q, k, v, scale=1.0, implementation="fast")
    np.testing.assert_allclose(out, np.full((1, 1, 2), 100.0), rtol=1e-5)


# ------------------------------------------------------------------ the fast path against the formula
def both_paths(q, k, v, mask=None, **kwargs):
    """The output of implementation="fast" and of implementation="reference" on the same arguments."""
    return tuple(scaled_dot_product_attention(q, k, v, mask, implementation=name, **kwargs)
                 for name in ("fast", "reference"))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_fast_path_equals_the_formula_on_every_case(name, dtype, tol):
    """On every case above, does the fast path give the formula's output, shape and dtype (also causal, scaled)?"""
    q, k, v, mask = make_case(name, dtype)
    fast, reference = both_paths(q, k, v, mask)
    assert fast.dtype == reference.dtype == dtype and fast.shape == reference.shape
    np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol)
    if mask is None:
        fast, reference = both_paths(q, k, v, is_causal=True, scale=0.3)
        np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol)


def towering_key(dtype):
    """Row 0 of each batch scores one key outside the fast path's sample (every 32nd key) far above the rest."""
    rng = np.random.default_rng(9)
    q, k, v = rng.normal(size=(B, L, E)), rng.normal(size=(B, 64, E)), rng.normal(size=(B, 64, Ev))
    k[:, 5] = q[:, 0] / np.linalg.norm(q[:, 0], axis=-1, keepdims=True) * (200.0 if dtype == np.float32 else 1000.0)
    return (q.astype(dtype), k.astype(dtype), v.astype(dtype)), {"scale": 1.0}


def fully_masked(dtype, kind):
    """Sequence 0 has no real key: a bool padding mask, or the same as a float mask of 0 and -inf."""
    q, k, v, _ = make_case("batch", dtype)
    mask = padding_mask([0, 4], S)
    if kind == "float":
        mask = np.where(mask, 0.0, -np.inf).astype(dtype)
    return (q, k, v, mask), {}


def with_nan(dtype, where):
    """A NaN in one query row, or in one value entry."""
    q, k, v, _ = make_case("batch", dtype)
    (q if where == "query" else v)[1, 2, 0] = np.nan
    return (q, k, v), {}


def huge(dtype, masked):
    """Scores far beyond exp's range (|q . k| near the largest float), with a bool mask or none."""
    q, k, v, _ = make_case("heads", dtype)
    big = np.sqrt(np.finfo(dtype).max) / 8
    return (q * big, k * big, v, random_bool_mask(np.random.default_rng(10), (L, S)) if masked else None), {}


def broadcast_batches(dtype):
    """Three different batch layouts broadcast together: query (B, 1, L, E), key (H, S, E), value (1, H, S, Ev)."""
    rng = np.random.default_rng(11)
    return (randn(rng, (B, 1, L, E), dtype), randn(rng, (H, S, E), dtype), randn(rng, (1, H, S, Ev), dtype),
            random_bool_mask(rng, (B, 1, 1, S))), {}


SPECIAL_CASES = {
    "a key towers over the sampled shift": towering_key,
    "fully masked rows, bool mask": lambda dtype: fully_masked(dtype, "bool"),
    "fully masked rows, float mask of -inf": lambda dtype: fully_masked(dtype, "float"),
    "NaN in a query": lambda dtype: with_nan(dtype, "query"),
    "NaN in a value": lambda dtype: with_nan(dtype, "value"),
    "huge scores, bool mask": lambda dtype: huge(dtype, masked=True),
    "huge scores, no mask": lambda dtype: huge(dtype, masked=False),
    "broadcast batch axes": broadcast_batches,
}


@pytest.mark.parametrize("name", SPECIAL_CASES)
@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_fast_path_equals_the_formula_where_it_is_hardest(name, dtype, tol):
    """Overflowing shifts, fully masked rows, NaN, huge scores, broadcast batches: fast == formula, NaN for NaN?"""
    args, kwargs = SPECIAL_CASES[name](dtype)
    fast, reference = both_paths(*args, **kwargs)
    assert fast.shape == reference.shape and fast.dtype == reference.dtype == dtype
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(reference))
    np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol)  # NaN compares equal to NaN here


@pytest.mark.parametrize("mask_kind", ["none", "bool", "causal"])
def test_fast_path_equals_the_formula_over_many_chunks(monkeypatch, mask_kind):
    """With chunks of one score matrix, and an overflowing item among them, is every chunk right?"""
    monkeypatch.setattr(fast_attention, "_CHUNK_BYTES", 1)
    (q, k, v), _ = towering_key(np.float64)
    calm = k.copy()
    calm[:, 5] = 0.0  # without the towering key the sampled shift does not overflow
    q, k, v = np.concatenate([q, q]), np.concatenate([k, calm]), np.concatenate([v, v])  # (2B, ...)
    mask = random_bool_mask(np.random.default_rng(12), (2 * B, L, 64)) if mask_kind == "bool" else None
    fast, reference = both_paths(q, k, v, mask, scale=1.0, is_causal=mask_kind == "causal")
    np.testing.assert_allclose(fast, reference, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("implementation", ["reference", "fast"])
@pytest.mark.parametrize("mask", [None, np.array([[True, True, True], [True, False, True]])])
def test_finite_extremes_are_silent(implementation, mask):
    """Scores at the edge of the float range (x - max overflows to -inf): the exact output, and no warning?"""
    big = np.finfo(np.float64).max
    q, k, v = np.ones((2, 1)), np.array([[big], [0.0], [-big]]), np.eye(3)
    out = scaled_dot_product_attention(q, k, v, mask, scale=1.0, implementation=implementation)
    np.testing.assert_array_equal(out, [[1.0, 0, 0], [1.0, 0, 0]])


# ------------------------------------------------------------------ which implementation runs
def runs_fast(monkeypatch, *args, **kwargs) -> bool:
    """Call scaled_dot_product_attention and report whether it went through the fast path."""
    calls = []
    real = attention.attention_output
    monkeypatch.setattr(attention, "attention_output", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    scaled_dot_product_attention(*args, **kwargs)
    return bool(calls)


@pytest.mark.parametrize("sizes, fast", [
    ((1024, 1024, 64, 64), True),  # L >= 2 (E + Ev) and L S >= 2**17
    ((256, 512, 64, 64), True),  # both limits met exactly
    ((255, 1024, 64, 64), False),  # L just below 2 (E + Ev)
    ((512, 255, 64, 64), False),  # L S just below 2**17
    ((16, 16384, 64, 64), False),  # few queries over many keys (decoding)
    ((L, S, E, Ev), False),  # the tests' small sizes
])
def test_default_picks_the_fast_path_only_where_it_is_faster(monkeypatch, sizes, fast):
    """implementation=None runs the fast path exactly when fast_attention.is_faster says so, as documented."""
    n_rows, n_keys, e, ev = sizes
    assert fast_attention.is_faster(n_rows, n_keys, e, ev) is fast
    q, k, v = np.zeros((1, n_rows, e)), np.zeros((n_keys, e)), np.zeros((n_keys, ev))
    assert runs_fast(monkeypatch, q, k, v) is fast
    assert runs_fast(monkeypatch, q, k, v, implementation="fast")
    assert not runs_fast(monkeypatch, q, k, v, implementation="reference")


@pytest.mark.parametrize("kwargs", [{"return_weights": True}, {"dropout_p": 0.1, "rng": np.random.default_rng(0)}])
def test_default_takes_the_formula_when_the_weights_are_needed(monkeypatch, kwargs):
    """Returning the weights or applying dropout needs the weights: None then runs the formula, at any size."""
    q = np.zeros((1024, 64))
    assert not runs_fast(monkeypatch, q, q, q, **kwargs)


@pytest.mark.parametrize("kwargs, pattern", [
    ({"implementation": "fast", "return_weights": True},
     r"implementation='fast' computes the output without forming the weights, so it cannot do "
     r"return_weights=True; use implementation='reference', or None to choose"),
    ({"implementation": "fast", "dropout_p": 0.5}, r"implementation='fast' .* cannot do dropout_p=0.5;"),
    ({"implementation": "fast", "dropout_p": 0.5, "return_weights": True},
     r"cannot do return_weights=True and dropout_p=0.5;"),
    ({"implementation": "xla"}, r"implementation must be None, 'reference' or 'fast'; got 'xla'"),
    ({"implementation": ["fast"]}, r"implementation must be None, 'reference' or 'fast'; got \['fast'\]"),
])
def test_implementation_refuses_what_it_cannot_do(kwargs, pattern):
    """An unknown implementation, or the fast path asked for the weights or dropout, is a clear ValueError."""
    q, k, v, _ = make_case("batch")
    with pytest.raises(ValueError, match=pattern):
        scaled_dot_product_attention(q, k, v, **kwargs)
