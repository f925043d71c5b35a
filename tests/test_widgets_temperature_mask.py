"""The temperature explorer (chapter 5) and the mask explorer (chapter 8) as plain functions."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sdpa_lib import causal_mask, padding_mask, softmax  # noqa: E402
from sdpa_course.widgets.mask_explorer import (MASK_KINDS, draw_mask_explorer, key_padding_mask,  # noqa: E402
                                            mask_explorer, mask_explorer_state)
from sdpa_course.widgets.temperature import (DEFAULT_SCORES, draw_temperature, temperature_curve,  # noqa: E402
                                          temperature_explorer, temperature_state)


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv("SDPA_HEADLESS", "1")
    yield
    plt.close("all")


# --- temperature -----------------------------------------------------------------------------

@pytest.mark.parametrize("temperature", [0.05, 0.5, 1.0, 3.0, 20.0])
def test_temperature_weights_are_softmax_of_scores_over_t(temperature):
    """Are the weights softmax(scores / T), summing to 1, with the Jacobian diag(p) - pp^T?"""
    state = temperature_state(temperature)
    expected = softmax(DEFAULT_SCORES / temperature)
    np.testing.assert_allclose(state["weights"], expected)
    assert state["weights"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(state["jacobian"], np.diag(expected) - np.outer(expected, expected))
    assert state["score_jacobian_norm"] == pytest.approx(state["jacobian_norm"] / temperature)


def test_temperature_limits_one_hot_and_uniform():
    """Does T -> 0 approach argmax (entropy 0) and T -> inf the uniform distribution (entropy log N)?"""
    cold, hot = temperature_state(1e-3), temperature_state(1e4)
    np.testing.assert_allclose(cold["weights"], np.eye(5)[np.argmax(DEFAULT_SCORES)], atol=1e-12)
    assert cold["entropy"] == pytest.approx(0.0, abs=1e-9)
    assert hot["entropy"] == pytest.approx(np.log(5), rel=1e-6)


def test_entropy_rises_monotonically_with_temperature():
    """Is the entropy an increasing function of T for fixed, distinct scores?"""
    curve = temperature_curve(np.geomspace(0.05, 20, 30))
    assert np.all(np.diff(curve["entropy"]) > 0)


def test_temperature_custom_scores_and_no_overflow():
    """Do scores near 1000 work (no overflow, no warning) at a small temperature?"""
    with np.errstate(all="raise"):
        state = temperature_state(0.1, [1000.0, 999.0, 998.0])
    assert np.isfinite(state["weights"]).all() and state["weights"].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan, True, "1"])
def test_temperature_rejects_bad_values(bad):
    """Is a non-positive, infinite, NaN, bool or string temperature a ValueError that names it?"""
    with pytest.raises(ValueError, match="temperature must be a positive finite number"):
        temperature_state(bad)


def test_temperature_rejects_bad_scores():
    """Are 2-D or single-entry scores refused with the shape in the message?"""
    with pytest.raises(ValueError, match=r"got shape \(2, 2\)"):
        temperature_state(1.0, np.ones((2, 2)))


def test_draw_temperature_and_explorer_headless_returns_figure():
    """Does the drawing have its three panels, and does the explorer show a static figure headless?

    (How fast a redraw is gets reported by the benchmarks, not asserted here: a busy machine is slow.)
    """
    figure = draw_temperature(0.3)
    assert len(figure.axes) == 3
    assert isinstance(temperature_explorer(), matplotlib.figure.Figure)


# --- masks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("side", ["right", "left"])
def test_mask_state_masked_weights_are_exactly_zero(kind, side):
    """For every kind: is each weight 0 where the mask is False and does each row sum to 1 or 0?"""
    state = mask_explorer_state(kind, (4, 2), L=4, S=5, side=side)
    assert state["mask"].shape == state["weights"].shape == (2, 4, 5)
    assert np.all(state["weights"][~state["mask"]] == 0)
    sums = state["weights"].sum(-1)
    np.testing.assert_allclose(sums, np.where(state["fully_masked"], 0.0, 1.0))


def test_mask_kinds_build_the_expected_masks():
    """Is padding the key-padding mask, causal the lower triangle, and both their AND?"""
    lengths, L, S = (5, 3), 5, 5
    pad = np.broadcast_to(padding_mask(lengths, S), (2, L, S))
    tri = np.broadcast_to(causal_mask(L, S), (2, L, S))
    expected = {"none": np.ones((2, L, S), bool), "padding": pad, "causal": tri, "padding+causal": pad & tri}
    for kind, mask in expected.items():
        np.testing.assert_array_equal(mask_explorer_state(kind, lengths, L, S)["mask"], mask)


def test_left_padding_with_causal_leaves_fully_masked_rows():
    """Left padding + causal: do the first rows of a short sequence see no key at all (zero output rows)?"""
    state = mask_explorer_state("padding+causal", (5, 3), 5, 5, side="left")
    np.testing.assert_array_equal(state["fully_masked"], [[0, 0, 0, 0, 0], [1, 1, 0, 0, 0]])
    assert not np.isnan(state["weights"]).any()


def test_key_padding_mask_left_mirrors_right():
    """Is left padding the right-padding mask mirrored along the keys, and a bad side refused?"""
    np.testing.assert_array_equal(key_padding_mask([2], 4, "left")[..., ::-1], padding_mask([2], 4))
    with pytest.raises(ValueError, match="side must be one of"):
        key_padding_mask([2], 4, "middle")


def test_mask_state_rejects_unknown_kind():
    """Is a misspelled kind refused with the list of kinds?"""
    with pytest.raises(ValueError, match="kind must be one of"):
        mask_explorer_state("casual")


def test_draw_mask_explorer_and_headless_explorer():
    """Does the drawing have mask and weight panels for both sequences, and the explorer a static figure?"""
    figure = draw_mask_explorer("padding+causal", 7, 2, 4, 6, "left")
    assert len(figure.axes) >= 4
    assert isinstance(mask_explorer(), matplotlib.figure.Figure)


# --- redraw in place (all four explorers) ----------------------------------------------------

from PIL import Image  # noqa: E402

from sdpa_course.widgets._base import CachedRedraw  # noqa: E402
from sdpa_course.widgets.pipeline import draw_pipeline_step  # noqa: E402
from sdpa_course.widgets.saturation import draw_saturation  # noqa: E402

REDRAWS = [  # draw, figure key, the values of three slider moves (the last is compared)
    pytest.param(draw_pipeline_step, lambda values: values["step"],
                 [dict(step=4, seed=0), dict(step=4, seed=3), dict(step=4, seed=1)], id="pipeline"),
    pytest.param(draw_saturation, lambda values: None,
                 [dict(d_k=4, scaled=False), dict(d_k=4096, scaled=False), dict(d_k=64, scaled=True)], id="saturation"),
    pytest.param(lambda temperature, figure=None: draw_temperature(temperature, figure=figure), lambda values: None,
                 [dict(temperature=0.05), dict(temperature=20.0), dict(temperature=0.7)], id="temperature"),
    pytest.param(draw_mask_explorer, lambda values: None,
                 [dict(kind="none", L=8, S=8), dict(kind="causal", length_b=0, L=3, S=6),
                  dict(kind="padding+causal", length_b=2, L=5, S=5, side="left"),
                  dict(kind="padding+causal", length_b=0, L=5, S=5, side="left"),  # one column redrawn
                  dict(kind="padding+causal", length_a=1, length_b=0, L=5, S=5, side="left"),
                  dict(kind="padding+causal", length_a=1, length_b=3, L=5, S=5, side="left"),  # beside seq 0's notes
                  dict(kind="causal", length_a=1, length_b=0, L=5, S=5, side="left"),  # both and the title
                  dict(kind="none", L=8, S=8)], id="mask"),  # an (L, S) seen before: its kept background
]


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(__import__("io").BytesIO(png)).convert("RGB"), dtype=int)


@pytest.mark.parametrize("draw, figure_key, moves", REDRAWS)
def test_redraw_in_place_shows_what_a_new_figure_shows(draw, figure_key, moves):
    """After other slider moves, is the cached, partly redrawn PNG the picture a new figure of the last values gives?"""
    redraw = CachedRedraw(draw, figure_key)
    images = [pixels(redraw.png(**values)) for values in moves]
    for move, (values, image) in enumerate(zip(moves, images)):
        expected = pixels(CachedRedraw(draw, figure_key).png(**values))  # a new figure, rendered whole
        assert image.shape == expected.shape
        differ = np.abs(image - expected).max(axis=-1) > 0
        assert differ.mean() < 1e-3, f"move {move} {values}: {differ.mean():.2%} of the pixels differ from a new figure's"
    assert all(not np.array_equal(a, b) for a, b in zip(images, images[1:])), "a slider move must change the picture"
    assert plt.get_fignums() == [], "the explorer's figures stay out of pyplot (plt.show() would close them)"


def test_draw_into_a_figure_updates_it_in_place():
    """Does drawing into a figure reuse its axes and show the new values (titles, bar heights), as a new figure would?"""
    figure = draw_temperature(0.1)
    axes = list(figure.axes)
    assert draw_temperature(5.0, figure=figure) is figure and figure.axes == axes
    fresh = draw_temperature(5.0)
    assert [ax.get_title() for ax in figure.axes] == [ax.get_title() for ax in fresh.axes]
    heights = [[patch.get_height() for patch in fig.axes[0].patches] for fig in (figure, fresh)]
    np.testing.assert_allclose(heights[0], heights[1])
    other_step = draw_pipeline_step(2, figure=draw_pipeline_step(4))
    assert [ax.get_title() for ax in other_step.axes] == [ax.get_title() for ax in draw_pipeline_step(2).axes]
