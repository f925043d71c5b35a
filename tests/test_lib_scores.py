"""Projections and scores: project_qkv, init_projection, dot/cosine/scaled scores against loop specs."""
import numpy as np
import pytest

from loops import B, E, Ev, H, L, S, cosine_scores_loop, dot_scores_loop, matmul_loop, randn
from sdpa_lib import cosine_scores, dot_product_scores, init_projection, project_qkv, scaled_scores

pytestmark = pytest.mark.filterwarnings("error")

# (query shape, key shape): batch axes present, absent, and broadcast (shared keys, size-1 axes)
SHAPE_PAIRS = [((L, E), (S, E)), ((B, L, E), (B, S, E)), ((B, H, L, E), (B, H, S, E)),
               ((B, H, L, E), (S, E)), ((B, 1, L, E), (1, H, S, E)), ((1, E), (1, E))]
DTYPES = [(np.float64, 1e-12), (np.float32, 1e-5)]


@pytest.mark.parametrize("q_shape, k_shape", SHAPE_PAIRS)
@pytest.mark.parametrize("dtype, tol", DTYPES)
@pytest.mark.parametrize("function, spec", [(dot_product_scores, dot_scores_loop),
                                            (cosine_scores, cosine_scores_loop)])
def test_scores_match_loops(function, spec, q_shape, k_shape, dtype, tol):
    """Do dot-product and cosine scores agree with one dot product per (query, key) pair?"""
    rng = np.random.default_rng(10)
    q, k = randn(rng, q_shape, dtype), randn(rng, k_shape, dtype)
    scores = function(q, k)
    assert scores.dtype == dtype
    assert scores.shape == np.broadcast_shapes(q_shape[:-2], k_shape[:-2]) + (q_shape[-2], k_shape[-2])
    np.testing.assert_allclose(scores, spec(q, k), rtol=tol, atol=tol)


@pytest.mark.parametrize("scale", [None, 0.25, 3.0])
def test_scaled_scores_default_is_one_over_sqrt_e(scale):
    """Is the default scale 1/sqrt(E), and does an explicit scale multiply the raw scores?"""
    rng = np.random.default_rng(11)
    q, k = randn(rng, (B, L, E)), randn(rng, (B, S, E))
    factor = 1 / np.sqrt(E) if scale is None else scale
    np.testing.assert_allclose(scaled_scores(q, k, scale=scale), dot_scores_loop(q, k) * factor, atol=1e-12)


def test_cosine_bounds_and_zero_vector():
    """Is cosine in [-1, 1], 1 for parallel vectors, and 0 (not NaN) against a zero vector?"""
    rng = np.random.default_rng(12)
    q = randn(rng, (L, E))
    k = np.vstack([3 * q[:1], np.zeros((1, E)), randn(rng, (S - 2, E))])
    c = cosine_scores(q, k)
    assert np.all(np.abs(c) <= 1 + 1e-12)
    assert c[0, 0] == pytest.approx(1.0)
    np.testing.assert_array_equal(c[:, 1], 0.0)


def test_scaled_scores_have_unit_variance():
    """With unit-variance q and k, do raw scores have variance about E and scaled ones about 1?"""
    rng = np.random.default_rng(13)
    e = 256
    q, k = randn(rng, (400, e)), randn(rng, (400, e))
    assert dot_product_scores(q, k).var() == pytest.approx(e, rel=0.1)
    assert scaled_scores(q, k).var() == pytest.approx(1.0, rel=0.1)


@pytest.mark.parametrize("x_shape", [(L, 8), (B, L, 8), (B, H, L, 8)])
@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_project_qkv_matches_loop(x_shape, dtype, tol):
    """Is each of q, k, v the token rows times its own weight matrix?"""
    rng = np.random.default_rng(14)
    x = randn(rng, x_shape, dtype)
    w_q, w_k, w_v = randn(rng, (8, E), dtype), randn(rng, (8, E), dtype), randn(rng, (8, Ev), dtype)
    q, k, v = project_qkv(x, w_q, w_k, w_v)
    assert (q.shape[-1], k.shape[-1], v.shape[-1]) == (E, E, Ev)
    for got, w in ((q, w_q), (k, w_k), (v, w_v)):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, matmul_loop(x, w), rtol=tol, atol=tol)


def test_init_projection_shape_variance_seed_and_dtype():
    """Is the matrix (d_model, d_out), of variance 1/d_model, reproducible from the seed, in the asked dtype?"""
    w = init_projection(400, 300, np.random.default_rng(0))
    assert w.shape == (400, 300) and w.dtype == np.float64
    assert w.var() * 400 == pytest.approx(1.0, rel=0.02)
    assert abs(w.mean()) < 0.01
    np.testing.assert_array_equal(w, init_projection(400, 300, np.random.default_rng(0)))
    assert not np.array_equal(w, init_projection(400, 300, np.random.default_rng(1)))
    assert init_projection(4, 2, np.random.default_rng(0), np.float32).dtype == np.float32
