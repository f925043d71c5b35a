"""RoPE explorer (chapter 13): move the query's position and the offset to the key, and watch which scores move.

``rope_explorer_state`` computes the numbers (pure, unit-tested), ``draw_rope_explorer`` draws them,
``rope_explorer`` wires two sliders to the drawing.  Left: the first feature pair of ``q`` and ``k``
after rotation, as arrows in the plane.  Right: the score against the offset, with RoPE (a curve that
stays put when the position moves) and with sinusoids added to q and k (a curve that drifts).
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.positions import apply_rope
from ..i18n.messages import _
from ..lessons.positions import scores_at_offset
from ._base import FigureView, show_explorer, view_of

E = 8
OFFSETS = np.arange(-24, 25)  # the right panel's x axis
MAX_POSITION = 2000


def _vectors(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=E), rng.normal(size=E)


def rope_explorer_state(position: int = 0, offset: int = 3, *, seed: int = 0) -> dict:
    """q at ``position`` and k at ``position + offset``, rotated, and the scores around them.

    Returns
    -------
    dict
        ``q_pair``, ``k_pair`` (2,): feature pair 0 (features 0 and E/2) of the rotated q and k;
        ``score`` (float): their full ``q . k`` after rotation; ``score_at_zero``: the same two
        vectors at positions ``0`` and ``offset`` (equal to ``score``); ``offsets`` and ``rope_curve``,
        ``added_curve`` (the score at each offset from ``position``, with RoPE and with added sinusoids).

    Raises
    ------
    ValueError
        A negative ``position``, or a key position below 0.

    Examples
    --------
    >>> s = rope_explorer_state(1000, 5)
    >>> bool(np.isclose(s["score"], s["score_at_zero"]))
    True
    """
    position, offset = int(position), int(offset)
    if position < 0 or position + offset < 0:
        raise ValueError(f"positions must be >= 0; got position={position}, offset={offset} "
                         f"(the key would be at {position + offset})")
    q, k = _vectors(seed)
    q_rot, k_rot = apply_rope(q[None], [position])[0], apply_rope(k[None], [position + offset])[0]  # (E,) each
    half = E // 2
    at = np.array([position])
    offsets = OFFSETS[position + OFFSETS >= 0]
    return {"position": position, "offset": offset, "q_pair": q_rot[[0, half]], "k_pair": k_rot[[0, half]],
            "score": float(q_rot @ k_rot),
            "score_at_zero": float(scores_at_offset(q, k, offset, [max(0, -offset)])[0]),
            "offsets": offsets,
            "rope_curve": np.array([scores_at_offset(q, k, int(t), at)[0] for t in offsets]),
            "added_curve": np.array([scores_at_offset(q, k, int(t), at, method="added")[0] for t in offsets])}


class _RopeView(FigureView):
    """Two panels: the axes, the unit circle and the legend stay; arrows, curves, dots and titles move."""

    def __init__(self, figure, key, seed: int):
        ax_pair, ax_curve = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.6]})
        q, k = _vectors(seed)
        radius = 1.15 * max(np.hypot(q[0], q[E // 2]), np.hypot(k[0], k[E // 2]))
        ax_pair.set_xlim(-radius, radius); ax_pair.set_ylim(-radius, radius); ax_pair.set_aspect("equal")
        ax_pair.axhline(0, color="grey", lw=0.5); ax_pair.axvline(0, color="grey", lw=0.5)
        ax_pair.set_xlabel(_("feature {index}").format(index=0))
        ax_pair.set_ylabel(_("feature {index}").format(index=E // 2))
        self.q_arrow, = ax_pair.plot([], [], "-o", color="tab:blue", label=_("q (pair 0)"), markevery=[1])
        self.k_arrow, = ax_pair.plot([], [], "-o", color="tab:orange", label=_("k (pair 0)"), markevery=[1])
        ax_pair.legend(fontsize=7, loc="lower left")
        self.rope_line, = ax_curve.plot([], [], color="tab:green", label="RoPE")
        self.added_line, = ax_curve.plot([], [], color="tab:purple", ls="--", label=_("sinusoids added to q, k"))
        self.dots = [ax_curve.plot([], [], "o", color=colour)[0] for colour in ("tab:green", "tab:purple")]
        ax_curve.set_xlabel(_("offset n - m (key position minus query position)")); ax_curve.set_ylabel("q . k")
        ax_curve.set_xlim(OFFSETS[0], OFFSETS[-1])
        ax_curve.legend(fontsize=7, loc="upper right")
        self.axes = (ax_pair, ax_curve)
        figure.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
        self.dynamic = [self.q_arrow, self.k_arrow, self.rope_line, self.added_line, *self.dots, ax_pair.title,
                        ax_curve]  # the curve's axes: its y range follows the curves

    def update(self, state: dict) -> None:
        self.q_arrow.set_data([0, state["q_pair"][0]], [0, state["q_pair"][1]])
        self.k_arrow.set_data([0, state["k_pair"][0]], [0, state["k_pair"][1]])
        self.rope_line.set_data(state["offsets"], state["rope_curve"])
        self.added_line.set_data(state["offsets"], state["added_curve"])
        ax_pair, ax_curve = self.axes
        for dot, curve in zip(self.dots, ("rope_curve", "added_curve")):
            index = int(np.flatnonzero(state["offsets"] == state["offset"])[0]) if state["offset"] in state["offsets"] else None
            dot.set_data([] if index is None else [state["offset"]], [] if index is None else [state[curve][index]])
        values = np.concatenate([state["rope_curve"], state["added_curve"]])
        ax_curve.set_ylim(values.min() - 0.5, values.max() + 0.5)
        ax_pair.set_title(_("q at {query_position}, k at {key_position}").format(
            query_position=state["position"], key_position=state["position"] + state["offset"]), fontsize=9)
        ax_curve.set_title(_("RoPE score {score:+.3f} (the same at positions 0 and {offset}: "
                             "{score_at_zero:+.3f})").format(score=state["score"], offset=state["offset"],
                                                             score_at_zero=state["score_at_zero"]), fontsize=9)


def draw_rope_explorer(position: int = 0, offset: int = 3, *, seed: int = 0, figure=None):
    """The two panels for ``position`` and ``offset``; ``figure`` a figure drawn before is updated in place."""
    state = rope_explorer_state(position, offset, seed=seed)
    view = view_of(figure, _RopeView, seed, (11, 3.6), seed)
    view.update(state)
    return view.figure


def rope_explorer(seed: int = 0):
    """Sliders for the query's position and the offset to the key (a static figure headless)."""
    import ipywidgets as widgets

    controls = {"position": widgets.IntSlider(value=0, min=0, max=MAX_POSITION, step=10, description=_("position m"),
                                              continuous_update=False),
                "offset": widgets.IntSlider(value=3, min=0, max=int(OFFSETS[-1]), description=_("offset"),
                                            continuous_update=False)}
    return show_explorer(controls, lambda position, offset, figure=None:
                         draw_rope_explorer(position, offset, seed=seed, figure=figure))
