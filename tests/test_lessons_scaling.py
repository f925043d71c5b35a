"""The chapter-4 measurements: variance of q . k, power-law fits, softmax saturation."""
from __future__ import annotations

import numpy as np
import pytest

from sdpa_lib import softmax_jacobian
from sdpa_course.lessons.scaling import (dot_product_samples, random_scores, saturation_sweep, softmax_saturation,
                              variance_table)
from sdpa_course.lessons.cost import fit_exponent


@pytest.mark.parametrize("d_k, sigma", [(1, 1.0), (16, 1.0), (64, 1.0), (32, 0.5), (8, 2.0)])
def test_dot_product_variance_is_sigma4_dk(d_k, sigma):
    """Does the sampled Var(q . k) match sigma^4 d_k within sampling error?"""
    samples = dot_product_samples(d_k, 40_000, np.random.default_rng(d_k), sigma=sigma)
    assert samples.shape == (40_000,)
    np.testing.assert_allclose(samples.var(), sigma**4 * d_k, rtol=0.06)
    assert abs(samples.mean()) < 0.05 * sigma**2 * np.sqrt(d_k)


def test_variance_table_columns_are_consistent():
    """Are std and scaled variance derived from the measured variance, and theory sigma^4 d_k?"""
    table = variance_table([2, 8, 32], np.random.default_rng(0), n_samples=2000, sigma=0.5)
    np.testing.assert_allclose(table["std"] ** 2, table["variance"])
    np.testing.assert_allclose(table["scaled_variance"], table["variance"] / np.array([2, 8, 32]))
    np.testing.assert_allclose(table["theory"], 0.0625 * np.array([2, 8, 32]))


def test_variance_fit_recovers_slope_one_and_prefactor_sigma4():
    """Does the log-log fit of measured variances give exponent ~1 and prefactor ~sigma^4?"""
    d_ks = 2 ** np.arange(0, 9)
    for sigma in (1.0, 2.0):
        table = variance_table(d_ks, np.random.default_rng(1), n_samples=6000, sigma=sigma)
        exponent, prefactor = fit_exponent(table["d_k"], table["variance"])
        assert abs(exponent - 1) < 0.05
        np.testing.assert_allclose(prefactor, sigma**4, rtol=0.15)


def test_softmax_saturation_analytic_cases():
    """Uniform rows give max 1/S, entropy log S and the uniform Jacobian norm; one-hot rows give 1, 0, 0."""
    uniform = softmax_saturation(np.zeros((3, 4)))
    assert uniform["max_weight"] == pytest.approx(0.25)
    assert uniform["entropy"] == pytest.approx(np.log(4))
    assert uniform["jacobian_norm"] == pytest.approx(np.linalg.norm(softmax_jacobian(np.full(4, 0.25))))
    one_hot = softmax_saturation(np.array([[500.0, 0.0, 0.0]]))
    assert one_hot["max_weight"] == pytest.approx(1.0)
    assert one_hot["entropy"] == pytest.approx(0.0, abs=1e-12)
    assert one_hot["jacobian_norm"] == pytest.approx(0.0, abs=1e-12)


def test_random_scores_scale_exponent():
    """Do exponents 0, 0.5 and 1 divide the same scores by 1, sqrt(d_k) and d_k?"""
    raw, root, linear = (random_scores(64, np.random.default_rng(3), n_queries=5, n_keys=7, scale_exponent=a)
                         for a in (0.0, 0.5, 1.0))
    assert raw.shape == (5, 7)
    np.testing.assert_allclose(root, raw / 8)
    np.testing.assert_allclose(linear, raw / 64)


def test_unscaled_softmax_saturates_and_its_gradient_vanishes():
    """Without scaling, does the max weight rise and the Jacobian norm fall with d_k, while scaling keeps both flat?"""
    d_ks = [4, 64, 1024]
    raw = saturation_sweep(d_ks, np.random.default_rng(0), scale_exponent=0.0)
    scaled = saturation_sweep(d_ks, np.random.default_rng(0), scale_exponent=0.5)
    assert np.all(np.diff(raw["max_weight"]) > 0) and np.all(np.diff(raw["jacobian_norm"]) < 0)
    assert raw["jacobian_norm"][-1] < 0.3 * scaled["jacobian_norm"][-1]
    assert np.ptp(scaled["jacobian_norm"]) < 0.05 and np.ptp(scaled["max_weight"]) < 0.08


def test_bad_arguments_are_refused():
    """Are a non-integer d_k and a missing Generator refused with a message?"""
    with pytest.raises(ValueError, match="d_k"):
        dot_product_samples(0, 10, np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        dot_product_samples(4, 10, 0)
