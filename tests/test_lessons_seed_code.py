"""The seed's Python demo (chapter 10): its printed numbers, its agreement with sdpa_lib, its limits."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from sdpa_lib import scaled_dot_product_attention
from sdpa_course.lessons.seed_code import run_seed_demo
from sdpa_course.lessons.seed_code import scaled_dot_product_attention as seed_attention
from sdpa_course.lessons.seed_code import softmax as seed_softmax

# What the seed's script prints with np.random.seed(0) (numpy's legacy global generator).
PRINTED_WEIGHTS = [[0.249, 0.021, 0.730], [0.409, 0.039, 0.552], [0.334, 0.062, 0.604]]
PRINTED_OUTPUT = [[-0.842, -1.310, -1.972, 1.507], [-0.858, -1.450, -1.754, 1.316],
                  [-0.814, -1.352, -1.821, 1.370]]


def quiet_demo():
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        demo = run_seed_demo()
    return demo, printed.getvalue()


def test_printed_numbers_are_reproduced():
    """Does the demo print the rounded weights and output it returns?"""
    demo, printed = quiet_demo()
    np.testing.assert_array_equal(np.round(demo["weights"], 3), PRINTED_WEIGHTS)
    np.testing.assert_array_equal(np.round(demo["output"], 3), PRINTED_OUTPUT)
    assert str(np.round(demo["weights"], 3)) in printed and str(np.round(demo["output"], 3)) in printed


def test_seed_agrees_with_sdpa_lib_on_2d_inputs():
    demo, _ = quiet_demo()
    output, weights = scaled_dot_product_attention(demo["q"], demo["k"], demo["v"], return_weights=True)
    np.testing.assert_allclose(demo["output"], output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(demo["weights"], weights, rtol=1e-12, atol=1e-12)


def test_demo_resets_the_global_generator():
    """Two runs give the same W: the demo seeds numpy's global state itself."""
    first, _ = quiet_demo()
    np.random.rand(5)
    second, _ = quiet_demo()
    np.testing.assert_array_equal(first["W_q"], second["W_q"])


def test_k_dot_T_fails_on_a_batch():
    """A (B, S, E) key with B != E: k.T is (E, S, B) and the matmul cannot broadcast."""
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 5))
    with pytest.raises(ValueError):
        seed_attention(q, k, v)


def test_k_dot_T_is_silently_wrong_when_axes_coincide():
    """With B = S = E the seed's code runs, returns the right shape and the wrong numbers."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(4, 4, 4)) for _ in range(3))
    output, _ = seed_attention(q, k, v)
    expected = scaled_dot_product_attention(q, k, v)
    assert output.shape == expected.shape
    assert not np.allclose(output, expected)


def test_seed_softmax_is_stable_and_sums_to_one():
    p = seed_softmax(np.array([[1000.0, 1000.0, 999.0]]))
    np.testing.assert_allclose(p.sum(-1), 1.0)
    assert np.all(np.isfinite(p))
