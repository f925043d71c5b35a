r"""The step-through explorer of chapter 1: one three-token sentence through the whole pipeline.

X -> Q, K, V -> scores QK^T -> scaled scores -> weights (softmax) -> output, every matrix an
annotated heatmap with its shape.  ``pipeline_state`` computes every matrix with sdpa_lib;
``draw_pipeline_step`` draws the inputs and the result of one step; ``pipeline_explorer``
puts a step slider in front of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np

from sdpa_lib.scores import dot_product_scores, project_qkv
from sdpa_lib.softmax import softmax
from ..i18n.messages import _, N_
from ._base import FigureView, Heatmap, show_explorer, view_of

TOKENS = (N_("I"), N_("love"), N_("Beijing"))  # shown in the learner's language: 我 爱 北京
# The seed's three word vectors for "我 爱 北京" (I love Beijing): one row per token, D = 4 features.
SEED_X = np.array([[0.9, 0.1, 0.2, 0.3],
                   [0.2, 0.8, 0.4, 0.1],
                   [0.1, 0.3, 0.6, 0.9]])

STEPS = (
    N_("0 input X"),
    N_("1 project: Q = X W_Q, K = X W_K, V = X W_V"),
    N_("2 scores = Q K^T"),
    N_("3 scale: scores / sqrt(d_k)"),
    N_("4 softmax along each row"),
    N_("5 output = weights V"),
)


@dataclass(frozen=True)
class PipelineState:
    """Every intermediate matrix of one attention pass (L tokens, D = d_model, E = d_k, Ev = d_v)."""
    tokens: tuple
    x: np.ndarray  # (L, D)
    w_q: np.ndarray  # (D, E)
    w_k: np.ndarray  # (D, E)
    w_v: np.ndarray  # (D, Ev)
    q: np.ndarray  # (L, E)
    k: np.ndarray  # (L, E)
    v: np.ndarray  # (L, Ev)
    scores: np.ndarray  # (L, L)
    scaled: np.ndarray  # (L, L)
    weights: np.ndarray  # (L, L), rows sum to 1
    output: np.ndarray  # (L, Ev)


def pipeline_state(x=None, *, d_k: int = 2, d_v: int = 4, seed: int = 0, tokens=TOKENS) -> PipelineState:
    r"""Run self-attention on ``x`` step by step and keep every intermediate.

    Parameters
    ----------
    x : array_like, shape ``(L, D)``, optional
        Token vectors; the seed's three 4-feature vectors by default.
    d_k, d_v : int
        Widths ``E`` of queries/keys and ``Ev`` of values.
    seed : int
        Draws the projections from N(0, 1), as the seed's demo does (``randn``).
    tokens : sequence of str, length ``L``

    Examples
    --------
    >>> state = pipeline_state()
    >>> state.q.shape, state.weights.shape, state.output.shape
    ((3, 2), (3, 3), (3, 4))
    """
    x = SEED_X if x is None else np.asarray(x, dtype=float)
    if len(tokens) != x.shape[0]:
        raise ValueError(f"one token name per row of x: got {len(tokens)} tokens for x.shape={x.shape}")
    rng = np.random.default_rng(seed)
    d_model = x.shape[1]
    w_q, w_k = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k))  # (D, E) each
    w_v = rng.normal(size=(d_model, d_v))  # (D, Ev)
    q, k, v = project_qkv(x, w_q, w_k, w_v)  # (L, E), (L, E), (L, Ev)
    scores = dot_product_scores(q, k)  # (L, E) @ (E, L) -> (L, L)
    scaled = scores / np.sqrt(d_k)  # (L, L)
    weights = softmax(scaled)  # (L, L), softmax over the keys (last axis)
    output = weights @ v  # (L, L) @ (L, Ev) -> (L, Ev)
    return PipelineState(tuple(tokens), x, w_q, w_k, w_v, q, k, v, scores, scaled, weights, output)


def _panels(state: PipelineState, step: int) -> list[tuple[str, np.ndarray, list, list]]:
    """(title, matrix, row labels, column labels) of the panels one step shows, inputs first."""
    tokens = [_(token) for token in state.tokens]
    feature = [f"f{i}" for i in range(state.x.shape[1])]
    e_cols = [f"e{i}" for i in range(state.q.shape[1])]
    ev_cols = [f"ev{i}" for i in range(state.v.shape[1])]
    keys = [_("key {token}").format(token=token) for token in tokens]
    return {
        0: [(_("X: one row per token"), state.x, tokens, feature)],
        1: [("X", state.x, tokens, feature), ("Q = X W_Q", state.q, tokens, e_cols),
            ("K = X W_K", state.k, tokens, e_cols), ("V = X W_V", state.v, tokens, ev_cols)],
        2: [("Q", state.q, tokens, e_cols), ("K^T", state.k.T, e_cols, tokens),
            (_("scores = Q K^T"), state.scores, tokens, keys)],
        3: [(_("scores"), state.scores, tokens, keys),
            (_("scores / sqrt({d_k})").format(d_k=state.q.shape[1]), state.scaled, tokens, keys)],
        4: [(_("scaled scores"), state.scaled, tokens, keys),
            (_("weights = softmax(row)"), state.weights, tokens, keys)],
        5: [(_("weights"), state.weights, tokens, keys), ("V", state.v, tokens, ev_cols),
            (_("output = weights V"), state.output, tokens, ev_cols)],
    }[step]


class _PipelineView(FigureView):
    """One step's panels (key: step and the panels' shapes): a heatmap each, the row sums under step 4's weights."""

    def __init__(self, figure, key, panels, weights):
        step = key[0]
        axes = figure.subplots(1, len(panels), squeeze=False)[0]
        self.heatmaps = [Heatmap(ax, *matrix.shape, cmap="magma" if matrix is weights else "viridis")
                         for ax, (title, matrix, rows, cols) in zip(axes, panels)]
        self.row_sums = axes[-1].text(0.5, -0.2, "", transform=axes[-1].transAxes, ha="center", va="top", fontsize=8)
        self.row_sums.set_visible(step == 4)
        figure.suptitle(_("step {step}").format(step=_(STEPS[step])), fontsize=11)
        figure.subplots_adjust(left=0.08, right=0.98, bottom=0.2, top=0.8, wspace=0.45)  # fixed: tight_layout is slow
        self.dynamic = [artist for heatmap in self.heatmaps for artist in heatmap.artists] + [self.row_sums]

    def update(self, state) -> None:
        state, panels = state
        for heatmap, (title, matrix, rows, cols) in zip(self.heatmaps, panels):
            heatmap.update(matrix, title=title, row_labels=rows, col_labels=cols)
        sums = ", ".join(f"{s:.3f}" for s in state.weights.sum(axis=1))
        self.row_sums.set_text(_("row sums: {sums}").format(sums=sums))


@lru_cache(maxsize=64)
def _cached_state(d_k: int, d_v: int, seed: int) -> PipelineState:
    return pipeline_state(d_k=d_k, d_v=d_v, seed=seed)


def draw_pipeline_step(step: int = 0, *, d_k: int = 2, d_v: int = 4, seed: int = 0, figure=None) -> plt.Figure:
    """Draw step ``step`` (0-5, see ``STEPS``) of :func:`pipeline_state`: its inputs, then its result.

    ``figure``: None draws a new pyplot figure; a figure this function drew before is
    updated in place (rebuilt if it showed another step).  Returns the figure; the result
    is the right-most panel.
    """
    if step not in range(len(STEPS)):
        raise ValueError(f"step must be 0..{len(STEPS) - 1} ({', '.join(STEPS)}); got {step!r}")
    state = _cached_state(d_k, d_v, seed)
    panels = _panels(state, step)
    key = (step, *(matrix.shape for title, matrix, rows, cols in panels))
    view = view_of(figure, _PipelineView, key, (3.3 * len(panels) + 0.5, 2.9), panels, state.weights)
    view.update((state, panels))
    return view.figure


def pipeline_explorer(step: int = 0, seed: int = 0):
    """A step slider (and a seed for the projections) wired to :func:`draw_pipeline_step`."""
    import ipywidgets as widgets

    controls = {
        "step": widgets.SelectionSlider(options=[(_(name), i) for i, name in enumerate(STEPS)], value=step,
                                        description=_("step"), layout=widgets.Layout(width="520px"),
                                        style={"description_width": "40px"}),
        "seed": widgets.IntSlider(value=seed, min=0, max=20, description=_("W seed"), continuous_update=False),
    }
    return show_explorer(controls, draw_pipeline_step, figure_key=lambda values: values["step"],
                         warm=[{"step": other} for other in range(len(STEPS)) if other != step])
