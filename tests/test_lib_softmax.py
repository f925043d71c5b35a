"""softmax, log_softmax, logsumexp, softmax_jacobian, softmax_backward and entropy against loop specs."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loops import (B, H, L, S, entropy_row, along_last_axis, log_softmax_row, logsumexp_row, randn,
                   softmax_backward_loop, softmax_jacobian_loop, softmax_loop)
from sdpa_lib import entropy, log_softmax, logsumexp, softmax, softmax_backward, softmax_jacobian

pytestmark = pytest.mark.filterwarnings("error")

SHAPES = [(S,), (L, S), (B, L, S), (B, H, L, S), (1, S), (H, 1, 1)]
DTYPES = [(np.float64, 1e-12), (np.float32, 1e-5)]
SETTINGS = settings(max_examples=40, deadline=None)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_softmax_matches_loop(shape, dtype, tol):
    """Does softmax agree with the one-row-at-a-time spec, keeping shape and dtype?"""
    x = randn(np.random.default_rng(1), shape, dtype) * 3
    p = softmax(x)
    assert p.shape == shape and p.dtype == dtype
    np.testing.assert_allclose(p, softmax_loop(x), rtol=tol, atol=tol)


@pytest.mark.parametrize("axis", [0, 1, -2])
def test_softmax_along_other_axes(axis):
    """Does ``axis`` choose the normalised axis (each axis a different size)?"""
    x = randn(np.random.default_rng(2), (B, L, S))
    p = softmax(x, axis=axis)
    np.testing.assert_allclose(p, softmax_loop(x, axis=axis), atol=1e-12)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, atol=1e-12)


@pytest.mark.parametrize("function, row_spec", [(log_softmax, log_softmax_row), (logsumexp, logsumexp_row),
                                                 (entropy, entropy_row)])
def test_row_functions_match_loops(function, row_spec):
    """Do log_softmax, logsumexp and entropy agree with their loop specs?"""
    x = randn(np.random.default_rng(3), (B, L, S))
    argument = softmax(x) if function is entropy else x
    np.testing.assert_allclose(function(argument), along_last_axis(row_spec, argument), atol=1e-12)


def test_jacobian_and_backward_match_loops():
    """Do softmax_jacobian and softmax_backward agree with J = diag(p) - p p^T built entry by entry?"""
    rng = np.random.default_rng(4)
    p, g = softmax(randn(rng, (B, L, S))), randn(rng, (B, L, S))
    np.testing.assert_allclose(softmax_jacobian(p), softmax_jacobian_loop(p), atol=1e-14)
    np.testing.assert_allclose(softmax_backward(p, g), softmax_backward_loop(p, g), atol=1e-12)


def test_softmax_backward_is_the_derivative():
    """Does softmax_backward agree with central finite differences of softmax?"""
    rng = np.random.default_rng(5)
    x, g = randn(rng, (L, S)), randn(rng, (L, S))
    h, numeric = 1e-6, np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[index] = h
        numeric[index] = np.sum(g * (softmax(x + step) - softmax(x - step))) / (2 * h)
    np.testing.assert_allclose(softmax_backward(softmax(x), g), numeric, atol=1e-8)


def test_analytic_values():
    """Small cases checked by hand: equal logits, log 3 ratio, one-hot and uniform entropy."""
    np.testing.assert_allclose(softmax(np.zeros(4)), np.full(4, 0.25))
    np.testing.assert_allclose(softmax(np.array([0.0, np.log(3.0)])), [0.25, 0.75])
    assert entropy(np.array([0.0, 1.0, 0.0])) == 0.0
    np.testing.assert_allclose(entropy(np.full(S, 1 / S)), np.log(S))
    assert logsumexp(np.full(3, -np.inf)) == -np.inf


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9), shift=st.floats(-500, 500))
def test_softmax_sums_to_one_and_is_shift_invariant(seed, n, shift):
    """Do rows sum to 1, and does adding a constant to a row change nothing?"""
    x = randn(np.random.default_rng(seed), (3, n)) * 5
    p = softmax(x)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(softmax(x + shift), p, atol=1e-9)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), big=st.sampled_from([1000.0, -1000.0, 1e300, 3e38]))
def test_softmax_survives_huge_logits_and_minus_inf(seed, big):
    """With logits near 1000 (or 1e300) and some -inf, is the result finite, exact 0 at -inf, and summing to 1?"""
    rng = np.random.default_rng(seed)
    x = big + rng.normal(size=(4, S))
    x[rng.random(x.shape) < 0.3] = -np.inf
    x[0] = -np.inf  # one fully masked row
    x[1:, 0] = big  # every other row surely keeps a finite entry
    p = softmax(x)
    assert np.all(np.isfinite(p))
    assert np.all(p[np.isneginf(x)] == 0)
    np.testing.assert_array_equal(p[0], 0.0)
    np.testing.assert_allclose(p[1:].sum(-1), 1.0, atol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_float32_within_1e5_of_float64(seed):
    """For logits of moderate scale, is float32 softmax within 1e-5 of float64?"""
    x = randn(np.random.default_rng(seed), (L, S)) * 4
    np.testing.assert_allclose(softmax(x.astype(np.float32)), softmax(x), atol=1e-5)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_finite_extremes_are_exact_and_silent(dtype):
    """For [big, 0, -big] at the edge of the float range, x - max overflows to -inf: are softmax,
    log_softmax and logsumexp still exact, with no RuntimeWarning (warnings are errors here)?"""
    big = np.finfo(dtype).max
    x = np.array([big, 0.0, -big], dtype=dtype)
    np.testing.assert_array_equal(softmax(x), np.array([1.0, 0.0, 0.0], dtype=dtype))
    assert logsumexp(x) == big
    np.testing.assert_array_equal(log_softmax(x), np.array([0.0, -big, -np.inf], dtype=dtype))
    np.testing.assert_array_equal(softmax(np.stack([x, x[::-1]]))[1], np.array([0.0, 0.0, 1.0], dtype=dtype))


def test_nan_propagates_to_its_row():
    """Is a NaN in a row visible in that row's output (never a silent number), other rows untouched?"""
    x = randn(np.random.default_rng(6), (3, S))
    x[1, 2] = np.nan
    p = softmax(x)
    assert np.all(np.isnan(p[1]))
    np.testing.assert_allclose(p[[0, 2]], softmax(x[[0, 2]]))
