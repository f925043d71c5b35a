"""Named mistakes for chapters 1-2: the pipeline's shapes, Q/K/V projections, their initialisation and size.

Shapes follow the library legend: ``x (..., L, D)`` tokens with ``D = d_model`` features,
``w_q, w_k (D, E)``, ``w_v (D, Ev)``.
"""
from __future__ import annotations

import numpy as np

from ..mistakes import Mistake
from ...i18n.messages import N_

# What each intermediate of self-attention is, for feedback on a wrong predicted shape (chapter 1).
PIPELINE_SHAPE_HINTS = {
    "X": N_("the input has one row of D = d_model features per token: (..., L, D)"),
    "W_Q": N_("a projection is one learned matrix shared by every token and every batch element: (D, E), "
              "no batch axes"),
    "W_K": N_("W_K must give keys with the same E as the queries so q . k is defined: (D, E), no batch axes"),
    "W_V": N_("W_V maps each token to its value, with its own width Ev: (D, Ev), no batch axes"),
    "Q": N_("X (..., L, D) @ W_Q (D, E) -> (..., L, E): one query per token"),
    "K": N_("X (..., L, D) @ W_K (D, E) -> (..., L, E): one key per token"),
    "V": N_("X (..., L, D) @ W_V (D, Ev) -> (..., L, Ev): one value per token"),
    "scores": N_("scores compare every query with every key: Q (..., L, E) @ K^T (..., E, L) -> (..., L, L)"),
    "weights": N_("softmax normalises each row of the scores and keeps their shape: (..., L, L)"),
    "output": N_("each output row is a mix of value rows, weights (..., L, L) @ V (..., L, Ev) -> (..., L, Ev)"),
}


def _project(x, w):
    return np.asarray(x) @ np.asarray(w)


PROJECT_QKV_MISTAKES = (
    Mistake("one projection for all three", lambda x, w_q, w_k, w_v: (_project(x, w_q),) * 3,
            "Q, K and V each have their own matrix: Q = X W_Q, K = X W_K, V = X W_V"),
    Mistake("keys and values swapped", lambda x, w_q, w_k, w_v: (_project(x, w_q), _project(x, w_v), _project(x, w_k)),
            "return them in the order (q, k, v): K = X W_K is what queries are compared with, V = X W_V is what is mixed"),
    Mistake("weights on the left", lambda x, w_q, w_k, w_v: tuple(np.swapaxes(np.asarray(w), -1, -2) @ np.swapaxes(x, -1, -2)
                                                            for w in (w_q, w_k, w_v)),
            "tokens are rows: X (..., L, D) @ W (D, E) -> (..., L, E), not W^T X^T"),
)

# init_projection(d_model, d_out, rng): a wrong recipe is recognised by the variance it gives.
# Here ``compute(d_model, d_out)`` is that variance.
INIT_VARIANCE_MISTAKES = (
    Mistake("unscaled N(0, 1)", lambda d_model, d_out: 1.0,
            "entries with variance 1 make each output component's variance D times the input's; "
            "draw with standard deviation 1/sqrt(d_model)"),
    Mistake("1/d_model used as the standard deviation", lambda d_model, d_out: 1.0 / d_model ** 2,
            "numpy's `scale` is the standard deviation: for variance 1/d_model pass scale=1/sqrt(d_model)"),
    Mistake("scaled by the fan-out", lambda d_model, d_out: 1.0 / d_out,
            "what keeps q's components at the input's variance is the number of terms summed, the fan-in d_model"),
)

# qkv_parameter_count(d_model, d_k, d_v, bias): the usual miscounts.
PARAMETER_COUNT_MISTAKES = (
    Mistake("counted one projection", lambda d_model, d_k, d_v, bias=True: d_model * d_k + bias * d_k,
            "there are three matrices, W_Q and W_K of shape (d_model, d_k) and W_V of shape (d_model, d_v)"),
    Mistake("forgot the biases", lambda d_model, d_k, d_v, bias=True: d_model * (2 * d_k + d_v),
            "with bias=True each projection also has one bias per output feature: 2 * d_k + d_v more"),
    Mistake("d_k used for the values", lambda d_model, d_k, d_v, bias=True: 3 * (d_model * d_k + bias * d_k),
            "W_V has d_v columns, which need not equal d_k"),
)
