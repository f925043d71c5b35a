"""Chapter 13's positions lesson: RoPE against added sinusoids, and how far a sliding window reaches."""
import numpy as np
import pytest

from sdpa_course.lessons import positions


def test_rope_scores_at_an_offset_are_constant_and_added_sinusoids_are_not():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=16), rng.normal(size=16)
    rope = positions.scores_at_offset(q, k, 7, np.arange(500))
    added = positions.scores_at_offset(q, k, 7, np.arange(500), method="added")
    assert np.ptp(rope) < 1e-10 and np.ptp(added) > 1.0
    with pytest.raises(ValueError, match="method must be one of"):
        positions.scores_at_offset(q, k, 7, np.arange(3), method="learned")


def test_sinusoids_are_sin_then_cos_of_the_rope_angles():
    p = positions.sinusoidal_positions(np.arange(3), 4, base=100.0)
    np.testing.assert_allclose(p[2], [np.sin(2), np.sin(0.2), np.cos(2), np.cos(0.2)])


@pytest.mark.parametrize("window, layers", [(1, 3), (2, 5), (4, 3), (8, 2), (40, 3)])
def test_window_reach_grows_by_window_minus_one_per_layer_until_the_start(window, layers):
    """Does n layers of a window W reach min(n (W - 1), L - 1) positions back?"""
    assert positions.window_reach(64, window, layers) == min(layers * (window - 1), 63)
