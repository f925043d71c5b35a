r"""The softmax saturation explorer of chapter 4: what happens to softmax as d_k grows, scaled or not.

``saturation_state`` draws random queries and keys of length ``d_k`` (standard normal
components), forms the scores with or without the :math:`1/\sqrt{d_k}` factor and
measures the softmax; ``draw_saturation`` renders one state beside the whole sweep over
d_k; ``saturation_explorer`` wires a log-scale d_k slider and a scaling toggle to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np

from ..lessons.scaling import random_scores, softmax_saturation
from sdpa_lib.softmax import softmax
from ..i18n.messages import _
from ._base import FigureView, show_explorer, view_of

D_K_CHOICES = tuple(2**power for power in range(13))  # 1, 2, 4, ..., 4096: the slider's stops
N_QUERIES, N_KEYS = 128, 16


@dataclass(frozen=True)
class SaturationState:
    """Everything the explorer shows for one (d_k, scaled) setting."""
    d_k: int
    scaled: bool
    scores: np.ndarray  # (N_QUERIES, N_KEYS): the softmax inputs
    weights: np.ndarray  # (N_QUERIES, N_KEYS): each row sums to 1
    hist_counts: np.ndarray  # (bins,) histogram of every score
    hist_edges: np.ndarray  # (bins + 1,)
    score_std: float
    max_weight: float  # mean over queries of the largest weight
    entropy: float  # mean entropy of a row, nats
    jacobian_norm: float  # mean Frobenius norm of the softmax Jacobian


def saturation_state(d_k: int, scaled: bool, *, n_queries: int = N_QUERIES, n_keys: int = N_KEYS,
                     seed: int = 0, bins: int = 30) -> SaturationState:
    r"""Scores of random unit-variance q, k with (``scaled``) or without the :math:`1/\sqrt{d_k}` factor, and their softmax.

    The same ``seed`` gives the same draws for every setting, so toggling ``scaled`` changes
    only the division.

    Examples
    --------
    >>> raw, fixed = saturation_state(256, False), saturation_state(256, True)
    >>> bool(raw.max_weight > fixed.max_weight), bool(raw.jacobian_norm < fixed.jacobian_norm)
    (True, True)
    """
    scores = random_scores(d_k, np.random.default_rng(seed), n_queries=n_queries, n_keys=n_keys,
                           scale_exponent=0.5 if scaled else 0.0)  # (L, S)
    counts, edges = np.histogram(scores, bins=bins)
    return SaturationState(d_k=int(d_k), scaled=bool(scaled), scores=scores, weights=softmax(scores),
                           hist_counts=counts, hist_edges=edges, score_std=float(scores.std()),
                           **softmax_saturation(scores))


@lru_cache(maxsize=4)
def _sweep(scaled: bool, seed: int) -> dict:
    """The states of every slider stop, computed once per (scaled, seed): the curves the star moves on."""
    states = [saturation_state(d_k, scaled, seed=seed) for d_k in D_K_CHOICES]
    return {"d_k": np.array(D_K_CHOICES),
            **{name: np.array([getattr(s, name) for s in states]) for name in ("max_weight", "entropy", "jacobian_norm")}}


class _SaturationView(FigureView):
    """Four panels built once: the sweep curves, legends and axes stay; the histogram panel, bars, stars and titles move."""

    def __init__(self, figure, key, seed: int):
        ax_hist, ax_weights, ax_peak, ax_grad = figure.subplots(1, 4)
        ax_hist.set(xlabel=_("score (softmax input)"), ylabel=_("count"))
        self.ax_hist, self.hist = ax_hist, ax_hist.stairs(np.zeros(1), [0.0, 1.0], fill=True, alpha=0.7)
        self.bars = ax_weights.bar(range(N_KEYS), np.zeros(N_KEYS))
        ax_weights.set(title=_("weights of query 0 over {keys} keys").format(keys=N_KEYS), xlabel=_("key"),
                       ylim=(0, 1.02),
                       xticks=range(0, N_KEYS, 3))
        for is_scaled, style in ((False, "tab:red"), (True, "tab:blue")):
            sweep = _sweep(is_scaled, seed)
            name = _("scaled") if is_scaled else _("not scaled")
            ax_peak.semilogx(sweep["d_k"], sweep["max_weight"], "-o", ms=3, color=style, base=2,
                             label=_("max weight, {setting}").format(setting=name))
            ax_peak.semilogx(sweep["d_k"], sweep["entropy"] / np.log(N_KEYS), "--", color=style, base=2,
                             label=_("entropy / log {keys}, {setting}").format(keys=N_KEYS, setting=name))
            ax_grad.semilogx(sweep["d_k"], sweep["jacobian_norm"], "-o", ms=3, color=style, base=2, label=name)
        self.peak_star, = ax_peak.plot([], [], "k*", ms=14)
        ax_peak.set(title=_("peak and spread vs d_k"), xlabel="d_k", ylim=(0, 1.05))
        ax_peak.legend(fontsize=7)
        self.grad_star, = ax_grad.plot([], [], "k*", ms=14)
        ax_grad.set(title=_("softmax Jacobian norm vs d_k"), xlabel="d_k", ylabel=_("mean ||J||_F"))
        ax_grad.legend(fontsize=7)
        self.title = figure.suptitle("", fontsize=11)
        figure.subplots_adjust(left=0.04, right=0.99, bottom=0.16, top=0.82, wspace=0.25)  # fixed: tight_layout costs 0.2 s
        # The histogram's limits and ticks follow the scores, so its whole panel is redrawn.
        self.dynamic = [ax_hist, *self.bars, self.peak_star, self.grad_star, self.title]

    def update(self, state: SaturationState) -> None:
        colour = "tab:blue" if state.scaled else "tab:red"
        self.hist.set_data(state.hist_counts, state.hist_edges)
        self.hist.set_color(colour)
        span = state.hist_edges[-1] - state.hist_edges[0]
        self.ax_hist.set(xlim=(state.hist_edges[0] - 0.05 * span, state.hist_edges[-1] + 0.05 * span),
                         ylim=(0, 1.05 * state.hist_counts.max()),
                         title=_("scores, std {std:.2f}").format(std=state.score_std))
        for bar, weight in zip(self.bars, state.weights[0]):
            bar.set_height(weight)
            bar.set_color(colour)
        self.peak_star.set_data([state.d_k], [state.max_weight])
        self.grad_star.set_data([state.d_k], [state.jacobian_norm])
        setting = _("scaled by 1/sqrt(d_k)") if state.scaled else _("not scaled")
        self.title.set_text(_("d_k = {d_k}, {setting}: max weight {max_weight:.2f}, entropy {entropy:.2f} nats, "
                              "Jacobian norm {jacobian_norm:.3f}").format(
            d_k=state.d_k, setting=setting, max_weight=state.max_weight, entropy=state.entropy,
            jacobian_norm=state.jacobian_norm))


_cached_state = lru_cache(maxsize=64)(saturation_state)


def draw_saturation(d_k: int = 64, scaled: bool = False, *, seed: int = 0, figure=None) -> plt.Figure:
    """Figure for one setting: score histogram, one query's weights, and where this d_k sits on the sweep.

    ``figure``: None draws a new pyplot figure; a figure this function drew before (with
    the same seed) is updated in place.  Returns the figure (four panels).
    """
    view = view_of(figure, _SaturationView, seed, (15, 3.4), seed)
    view.update(_cached_state(d_k, scaled, seed=seed))
    return view.figure


def saturation_explorer(d_k: int = 64, scaled: bool = False):
    """A log-scale d_k slider (powers of 2) and a scaling toggle wired to :func:`draw_saturation`."""
    import ipywidgets as widgets

    controls = {
        "d_k": widgets.SelectionSlider(options=D_K_CHOICES, value=d_k, description="d_k",
                                       continuous_update=False),
        "scaled": widgets.ToggleButton(value=scaled, description=_("divide by sqrt(d_k)"), icon="check"),
    }
    return show_explorer(controls, draw_saturation, layout="horizontal")
