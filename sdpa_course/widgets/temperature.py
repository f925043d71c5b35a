"""Temperature explorer (chapter 5): how dividing the scores by T sharpens or flattens softmax.

``temperature_state`` computes the numbers (pure, unit-tested), ``draw_temperature``
draws them, ``temperature_explorer`` wires a log-scale slider to the drawing.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from sdpa_lib.softmax import entropy, softmax, softmax_jacobian
from ..i18n.messages import _, N_
from ._base import FigureView, show_explorer, view_of

DEFAULT_SCORES = np.array([2.0, 1.0, 0.5, 0.0, -1.0])  # one query's scores over five keys
TEMPERATURE_RANGE = (0.05, 20.0)
CURVES = (("entropy", N_("entropy (nats)")), ("jacobian_norm", "||dp/d(s/T)||"))  # the two right panels' curves


def _check_temperature(temperature) -> float:
    is_real = isinstance(temperature, (int, float, np.integer, np.floating)) and not isinstance(temperature, bool)
    if not (is_real and np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a positive finite number; got {temperature!r}")
    return float(temperature)


def temperature_state(temperature: float = 1.0, scores=None) -> dict:
    r"""Softmax of ``scores / temperature`` and the quantities that describe it.

    Parameters
    ----------
    temperature : float > 0
        ``T``; ``T = 1`` is plain softmax, ``T -> 0`` approaches argmax (one-hot),
        ``T -> inf`` approaches the uniform distribution.
    scores : array_like, shape ``(N,)``, optional
        One query's scores; defaults to ``DEFAULT_SCORES``.

    Returns
    -------
    dict
        ``scores`` (N,), ``logits`` = scores / T (N,), ``weights`` (N,) summing to 1,
        ``entropy`` in nats (0 = one-hot, log N = uniform), ``max_weight``,
        ``jacobian`` (N, N) = diag(p) - p p^T (derivative with respect to the logits),
        ``jacobian_norm`` its Frobenius norm (how strongly the weights still respond to a
        change of the logits) and ``score_jacobian_norm`` = jacobian_norm / T (the same
        with respect to the scores, since logits = scores / T).

    Raises
    ------
    ValueError
        If ``temperature`` is not a positive finite number or ``scores`` is not 1-D.

    Examples
    --------
    >>> s = temperature_state(1e6)
    >>> bool(np.allclose(s["weights"], 0.2))
    True
    """
    temperature = _check_temperature(temperature)
    scores = DEFAULT_SCORES if scores is None else np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size < 2:
        raise ValueError(f"scores must be 1-D with at least 2 entries (N,); got shape {scores.shape}")
    logits = scores / temperature  # (N,)
    weights = softmax(logits)  # (N,)
    jacobian = softmax_jacobian(weights)  # (N, N)
    return {"scores": scores, "temperature": temperature, "logits": logits, "weights": weights,
            "entropy": float(entropy(weights)), "max_weight": float(weights.max()),
            "jacobian": jacobian, "jacobian_norm": float(np.linalg.norm(jacobian)),
            "score_jacobian_norm": float(np.linalg.norm(jacobian)) / temperature}


def temperature_curve(temperatures, scores=None) -> dict:
    """Entropy, max weight and Jacobian norm at each temperature: arrays of ``len(temperatures)``."""
    states = [temperature_state(t, scores) for t in temperatures]
    return {name: np.array([s[name] for s in states]) for name in ("entropy", "max_weight", "jacobian_norm", "score_jacobian_norm")}


class _TemperatureView(FigureView):
    """Three panels built once for one set of scores: curves, axes and legend stay; bars, labels, dots and titles move."""

    def __init__(self, figure, key, scores: np.ndarray):
        ax_w, ax_h, ax_j = figure.subplots(1, 3)
        grid = np.geomspace(*TEMPERATURE_RANGE, 60)
        curve = _cached_curve(key)
        keys = [f"k{j}" for j in range(scores.size)]
        self.bars = ax_w.bar(keys, np.zeros(scores.size), color="tab:blue")
        ax_w.set_ylim(0, 1.2)  # room for the labels above a bar of height 1
        self.labels = [ax_w.text(j, 0, "", ha="center", fontsize=7) for j in range(scores.size)]
        self.dots, self.titles = {}, [ax_w.title]
        for ax, (name, label) in zip((ax_h, ax_j), CURVES):
            ax.semilogx(grid, curve[name], color="tab:grey", label=_(label))
            self.dots[name], = ax.plot([], [], "o", color="tab:red")
            ax.set_xlabel(_("temperature T (log scale)"))
            self.titles.append(ax.title)
        ax_j.semilogx(grid, curve["score_jacobian_norm"], color="tab:orange", label="||dp/ds|| = ||dp/d(s/T)|| / T")
        self.dots["score_jacobian_norm"], = ax_j.plot([], [], "o", color="tab:red")
        ax_j.legend(fontsize=7)
        ax_h.axhline(np.log(scores.size), ls=":", color="k")
        ax_h.text(grid[0], np.log(scores.size) * 0.93, _("log N (uniform)"), fontsize=7)
        figure.subplots_adjust(left=0.05, right=0.98, bottom=0.17, top=0.9, wspace=0.25)  # fixed: tight_layout costs 5x the redraw
        self.axes = (ax_w, ax_h, ax_j)
        self.dynamic = [*self.bars, *self.labels, *self.dots.values(), *self.titles]

    def update(self, state: dict) -> None:
        for bar, label, w, s in zip(self.bars, self.labels, state["weights"], state["scores"]):
            bar.set_height(w)
            label.set_text(f"{w:.2f}\n(s={s:g})")
            label.set_y(w + 0.02)
        for name, dot in self.dots.items():
            dot.set_data([state["temperature"]], [state[name]])
        ax_w, ax_h, ax_j = self.axes
        ax_w.set_title(_("softmax(scores / T), T = {temperature:.2f}").format(temperature=state["temperature"]),
                       fontsize=10)
        for ax, (name, label) in zip((ax_h, ax_j), CURVES):
            ax.set_title(f"{_(label)} = {state[name]:.3f}", fontsize=10)


@lru_cache(maxsize=8)
def _cached_curve(scores: tuple) -> dict:
    """:func:`temperature_curve` on the explorer's grid, once per set of scores."""
    return temperature_curve(np.geomspace(*TEMPERATURE_RANGE, 60), np.array(scores))


def draw_temperature(temperature: float = 1.0, scores=None, *, figure=None):
    """Three panels: the weights at ``temperature``; entropy and Jacobian norms against T.

    ``figure``: None draws a new pyplot figure; a figure this function drew before (for
    the same scores) is updated in place.

    Returns
    -------
    matplotlib Figure
    """
    state = temperature_state(temperature, scores)
    key = tuple(state["scores"].tolist())
    view = view_of(figure, _TemperatureView, key, (12, 3.2), state["scores"])
    view.update(state)
    return view.figure


def temperature_explorer(scores=None):
    """A log-scale temperature slider redrawing :func:`draw_temperature` (a static figure headless)."""
    import ipywidgets as widgets

    slider = widgets.FloatLogSlider(value=1.0, base=10, min=np.log10(TEMPERATURE_RANGE[0]),
                                    max=np.log10(TEMPERATURE_RANGE[1]), step=0.05,
                                    description="T", continuous_update=False)
    return show_explorer({"temperature": slider},
                         lambda temperature, figure=None: draw_temperature(temperature, scores, figure=figure))
