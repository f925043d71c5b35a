"""The chapter-1 pipeline explorer and the chapter-4 saturation explorer, as plain functions."""
from __future__ import annotations


import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from sdpa_lib import scaled_dot_product_attention  # noqa: E402
from sdpa_course.widgets.pipeline import STEPS, draw_pipeline_step, pipeline_explorer, pipeline_state  # noqa: E402
from sdpa_course.widgets.saturation import (D_K_CHOICES, draw_saturation, saturation_explorer,  # noqa: E402
                                         saturation_state)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture
def headless(monkeypatch):
    monkeypatch.setenv("SDPA_HEADLESS", "1")


def test_pipeline_state_matches_the_library():
    """Is every intermediate the right shape, and the output what sdpa_lib's attention gives?"""
    state = pipeline_state(d_k=3, d_v=5, seed=2)
    assert (state.x.shape, state.q.shape, state.k.shape, state.v.shape) == ((3, 4), (3, 3), (3, 3), (3, 5))
    np.testing.assert_allclose(state.scores, state.q @ state.k.T)
    np.testing.assert_allclose(state.scaled, state.scores / np.sqrt(3))
    np.testing.assert_allclose(state.weights.sum(axis=1), 1.0)
    out, weights = scaled_dot_product_attention(state.q, state.k, state.v, return_weights=True)
    np.testing.assert_allclose(state.weights, weights)
    np.testing.assert_allclose(state.output, out)


def test_pipeline_state_custom_input_and_token_count():
    """Does a custom x work, and does a token list of the wrong length raise?"""
    x = np.random.default_rng(0).normal(size=(5, 6))
    state = pipeline_state(x, tokens=tuple("abcde"))
    assert state.weights.shape == (5, 5) and state.output.shape == (5, 4)
    with pytest.raises(ValueError, match="one token name per row"):
        pipeline_state(x)


@pytest.mark.parametrize("step", range(len(STEPS)))
def test_every_step_draws_its_panels(step):
    """Does each step return a figure whose last panel is that step's result, with its shape in the title?"""
    figure = draw_pipeline_step(step)
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    expected_last = {0: "(3 x 4)", 1: "V = X W_V (3 x 4)", 2: "scores = Q K^T (3 x 3)", 3: "(3 x 3)",
                     4: "weights = softmax(row) (3 x 3)", 5: "output = weights V (3 x 4)"}[step]
    assert titles[-1].endswith(expected_last)


def test_pipeline_step_out_of_range():
    """Is a step outside 0..5 refused with the list of steps?"""
    with pytest.raises(ValueError, match="step must be 0..5"):
        draw_pipeline_step(6)


def test_pipeline_seed_changes_the_weights():
    """Does another projection seed give other weights (so the seed slider does something)?"""
    assert not np.allclose(pipeline_state(seed=0).weights, pipeline_state(seed=1).weights)


@pytest.mark.parametrize("d_k", [1, 64, 4096])
def test_scaled_state_keeps_unit_variance_and_a_live_gradient(d_k):
    """With the 1/sqrt(d_k) factor, are the scores' std near 1 and the softmax unsaturated at every d_k?"""
    state = saturation_state(d_k, True)
    assert 0.85 < state.score_std < 1.15
    assert state.max_weight < 0.4 and state.jacobian_norm > 0.25


def test_unscaled_state_saturates_as_dk_grows():
    """Without scaling, does the std grow like sqrt(d_k) and the softmax saturate?"""
    small, large = saturation_state(4, False), saturation_state(4096, False)
    assert large.score_std == pytest.approx(64, rel=0.1)
    assert large.max_weight > 0.9 > small.max_weight
    assert large.entropy < 0.2 * small.entropy
    assert large.jacobian_norm < 0.3 * small.jacobian_norm


def test_state_fields_are_consistent():
    """Are the weights the softmax rows of the scores, and the histogram a count of every score?"""
    state = saturation_state(16, False, n_queries=10, n_keys=5, bins=7)
    assert state.scores.shape == state.weights.shape == (10, 5)
    np.testing.assert_allclose(state.weights.sum(axis=1), 1.0)
    assert state.hist_counts.sum() == 50 and state.hist_edges.shape == (8,)
    np.testing.assert_allclose(state.max_weight, state.weights.max(axis=1).mean())


def test_toggling_scaling_changes_only_the_division():
    """Same seed: are the unscaled scores exactly sqrt(d_k) times the scaled ones?"""
    np.testing.assert_allclose(saturation_state(256, False).scores, 16 * saturation_state(256, True).scores)


def test_star_sits_on_the_sweep_curve():
    """Is the highlighted point of the figure the state of that d_k (the same draws as the curve)?"""
    figure = draw_saturation(d_k=256, scaled=False)
    lines = figure.axes[3].get_lines()  # the Jacobian-norm panel: not-scaled curve, scaled curve, star
    star_x, star_y = next(line.get_data() for line in lines if line.get_marker() == "*")
    curve = lines[0]
    index = list(curve.get_xdata()).index(256)
    assert star_x[0] == 256 and star_y[0] == pytest.approx(curve.get_ydata()[index])


def test_figure_changes_with_dk():
    """Does draw_saturation return a figure whose title and histogram change when d_k changes?"""
    small, large = draw_saturation(d_k=4, scaled=False), draw_saturation(d_k=1024, scaled=False)
    assert isinstance(small, plt.Figure) and len(small.axes) == 4
    assert small._suptitle.get_text() != large._suptitle.get_text()
    assert small.axes[0].get_xlim() != large.axes[0].get_xlim()


def test_explorers_show_a_static_figure_headless(headless):
    """Headless, do both explorers return their static figure instead of widgets?"""
    assert isinstance(pipeline_explorer(step=3), plt.Figure)
    figure = saturation_explorer(d_k=512, scaled=True)
    assert isinstance(figure, plt.Figure) and "d_k = 512" in figure._suptitle.get_text()


def test_saturation_explorer_controls(monkeypatch):
    """With a front end, is d_k a log-scale slider (powers of 2, no continuous update) beside a toggle?"""
    monkeypatch.setenv("SDPA_HEADLESS", "0")
    monkeypatch.setattr("IPython.display.display", lambda *args, **kwargs: None)
    box = saturation_explorer()
    slider, toggle = box.children[0].children
    assert tuple(slider.options) == D_K_CHOICES and slider.continuous_update is False
    assert all(b == 2 * a for a, b in zip(D_K_CHOICES, D_K_CHOICES[1:]))
    assert toggle.value is False


def test_pipeline_explorer_controls(monkeypatch):
    """With a front end, does the step slider offer the six named steps, starting where asked?"""
    monkeypatch.setenv("SDPA_HEADLESS", "0")
    monkeypatch.setattr("IPython.display.display", lambda *args, **kwargs: None)
    box = pipeline_explorer(step=2)
    step, seed = box.children[0].children
    assert [label for label, _ in step.options] == list(STEPS) and step.value == 2
    assert seed.continuous_update is False
