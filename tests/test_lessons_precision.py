"""Chapter 13's precision lesson: bfloat16 rounding in numpy, running sums, and attention weights in 16 bits."""
import numpy as np
import pytest

from sdpa_course.lessons import precision

pytestmark = pytest.mark.filterwarnings("error")


def test_bfloat16_rounding_keeps_the_upper_16_bits_to_nearest_even():
    """Is every result a bfloat16 (low 16 bits zero), the nearest one, ties to even, inf past the range, NaN kept?"""
    x = np.random.default_rng(0).normal(size=1000).astype(np.float32) * 10.0 ** np.random.default_rng(1).integers(-30, 30, 1000)
    rounded = precision.to_bfloat16(x)
    assert not (rounded.view(np.uint32) & 0xFFFF).any()
    spacing = np.abs(x) * 2.0 ** -7
    assert np.all(np.abs(rounded - x) <= spacing / 2 * (1 + 1e-6))
    ties = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8], dtype=np.float32)  # halfway: to the even neighbour
    np.testing.assert_array_equal(precision.to_bfloat16(ties), [1.0, 1 + 2 ** -6])
    assert np.isinf(precision.to_bfloat16(np.float32(3.4e38))) and np.isnan(precision.to_bfloat16(np.float32(np.nan)))


def test_format_facts_match_numpy_where_numpy_has_the_format():
    assert precision.format_facts("float16") == {"max": 65504.0, "tiny": 2.0 ** -14, "eps": 2.0 ** -10}
    assert precision.format_facts("bfloat16")["eps"] == 2.0 ** -7
    assert precision.format_facts("bfloat16")["max"] == pytest.approx(3.3895e38, rel=1e-4)


def test_a_running_sum_in_float16_stalls_at_2048():
    """Does adding 0.9 one at a time stall at 2048 in float16 (spacing 2 there), and not in float32?"""
    assert precision.running_sum(np.full(5000, 0.9), "float16") == 2048.0
    assert precision.running_sum(np.full(5000, 0.9), "float32") == pytest.approx(4500, rel=1e-4)
    with pytest.raises(ValueError, match="fmt must be one of"):
        precision.round_to(1.0, "float8")


def test_the_sweep_shows_float16_failing_and_the_bounded_recipes_holding():
    """On growing scores: float16 NaN past 65504, bfloat16 wrong but finite, QK-norm and soft-capping accurate?"""
    sweep = precision.precision_sweep([1, 32, 256])
    assert sweep["largest_score"][-1] > 65504 and np.isnan(sweep["float16"][-1])
    assert sweep["bfloat16"][1] > 0.05 and np.isfinite(sweep["bfloat16"]).all()
    assert (sweep["fp16 + QK-norm"] < 1e-3).all() and (sweep["fp16 + soft-cap 50"] < 1e-2).all()
    assert sweep["float16"][0] < 1e-3  # small scores: every format is fine


def test_qk_norm_and_soft_cap_bound_the_scores():
    """Are the normalised scores at most sqrt(E), and the capped ones below the cap, however large q and k are?"""
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(4, 16)) * 1e3, rng.normal(size=(5, 16)) * 1e3
    weights = precision.attention_weights_in(q, k, "float32", qk_norm=True)
    assert np.isfinite(weights).all() and np.allclose(weights.sum(-1), 1, atol=1e-5)
    capped = precision.attention_weights_in(q, k, "float16", soft_cap=50.0)
    assert np.isfinite(capped).all()
