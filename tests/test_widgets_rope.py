"""The RoPE explorer (chapter 13) as plain functions: its state, and a figure headless."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sdpa_course.widgets.rope_explorer import draw_rope_explorer, rope_explorer, rope_explorer_state  # noqa: E402


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv("SDPA_HEADLESS", "1")
    yield
    plt.close("all")


@pytest.mark.parametrize("position", [0, 17, 1990])
def test_the_rope_curve_does_not_move_with_the_position_and_the_added_one_does(position):
    """Is the RoPE score curve the same at every position (and the score the one at positions 0 and offset)?"""
    here, start = rope_explorer_state(position, 4), rope_explorer_state(0, 4)
    common = np.isin(start["offsets"], here["offsets"])
    np.testing.assert_allclose(here["rope_curve"][np.isin(here["offsets"], start["offsets"])], start["rope_curve"][common],
                               atol=1e-9)
    assert here["score"] == pytest.approx(here["score_at_zero"], abs=1e-9)
    if position:
        assert not np.allclose(here["added_curve"][np.isin(here["offsets"], start["offsets"])], start["added_curve"][common])


def test_the_pair_arrows_keep_their_length_and_turn_with_the_position():
    a, b = rope_explorer_state(0, 3), rope_explorer_state(5, 3)
    assert np.hypot(*a["q_pair"]) == pytest.approx(np.hypot(*b["q_pair"]))
    assert not np.allclose(a["q_pair"], b["q_pair"])


def test_a_key_before_position_zero_is_refused():
    with pytest.raises(ValueError, match="positions must be >= 0"):
        rope_explorer_state(2, -5)


def test_draw_and_explorer_headless_give_a_two_panel_figure_updated_in_place():
    figure = draw_rope_explorer(100, 3)
    assert len(figure.axes) == 2
    assert draw_rope_explorer(200, 5, figure=figure) is figure
    assert isinstance(rope_explorer(), matplotlib.figure.Figure)
