"""Named mistakes for chapters 1 and 4: where and by how much the scores are scaled.

``x (..., L, D)`` tokens, ``w_q, w_k (D, E)``, ``w_v (D, Ev)``; the right scale is ``1/sqrt(E)``.
"""
from __future__ import annotations

import numpy as np

from ..mistakes import Mistake
from ...i18n.messages import N_


def _softmax(scores, axis=-1):
    shifted = np.exp(scores - np.max(scores, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def _scores(x, w_q, w_k):
    q, k = np.asarray(x) @ w_q, np.asarray(x) @ w_k  # (..., L, D) @ (D, E) -> (..., L, E)
    return q @ np.swapaxes(k, -1, -2)  # (..., L, E) @ (..., E, L) -> (..., L, L)


def _weights(x, w_q, w_k, scale):
    return _softmax(_scores(x, w_q, w_k) * scale)


def _e(w_q):
    return np.shape(w_q)[-1]


FORGOT_SCALE = N_("forgot the scale")
SCALE_HINTS = {
    FORGOT_SCALE: N_("divide the scores by sqrt(E) before the softmax: Var(q . k) grows like E and saturates softmax"),
    "scaled by d_k, not sqrt(d_k)": N_("the variance of q . k is E, so the standard deviation is sqrt(E): "
                                       "divide by sqrt(E), not E"),
    "scaled by sqrt(d_model)": N_("the scale belongs to the length of q and k, E = w_q.shape[1], not to "
                                  "d_model = x.shape[-1]"),
    "scaled after softmax": N_("scaling must happen before the softmax: scaling its output breaks 'rows sum to 1'"),
    "softmax over the queries": N_("each query's weights over the keys must sum to 1: softmax along the last axis"),
}

# scaled_attention_weights(x, w_q, w_k): softmax(Q K^T / sqrt(E)) with Q = X W_Q, K = X W_K.
WEIGHT_MISTAKES = (
    Mistake(FORGOT_SCALE, lambda x, w_q, w_k: _weights(x, w_q, w_k, 1.0), SCALE_HINTS[FORGOT_SCALE]),
    Mistake("scaled by d_k, not sqrt(d_k)", lambda x, w_q, w_k: _weights(x, w_q, w_k, 1.0 / _e(w_q)),
            SCALE_HINTS["scaled by d_k, not sqrt(d_k)"]),
    Mistake("scaled by sqrt(d_model)", lambda x, w_q, w_k: _weights(x, w_q, w_k, 1.0 / np.sqrt(np.shape(x)[-1])),
            SCALE_HINTS["scaled by sqrt(d_model)"]),
    Mistake("scaled after softmax", lambda x, w_q, w_k: _weights(x, w_q, w_k, 1.0) / np.sqrt(_e(w_q)),
            SCALE_HINTS["scaled after softmax"]),
    Mistake("softmax over the queries", lambda x, w_q, w_k: _softmax(_scores(x, w_q, w_k) / np.sqrt(_e(w_q)), axis=-2),
            SCALE_HINTS["softmax over the queries"]),
)


def _output(mistake_weights):
    return lambda x, w_q, w_k, w_v: mistake_weights(x, w_q, w_k) @ (np.asarray(x) @ w_v)


# self_attention(x, w_q, w_k, w_v) (chapter 1): the same mistakes, seen through the output.
SELF_ATTENTION_MISTAKES = tuple(Mistake(m.name, _output(m.compute), m.hint) for m in WEIGHT_MISTAKES)

# measure_score_variance(d_k, n_samples, rng): ``compute(d_k)`` is what the wrong recipe converges to.
VARIANCE_MISTAKES = (
    Mistake("standard deviation instead of variance", lambda d_k: np.sqrt(d_k),
            "np.std is the square root of the variance: use np.var (or square the std)"),
    Mistake("variance of the scaled score", lambda d_k: 1.0,
            "measure the raw q . k; dividing by sqrt(d_k) is what brings its variance back to 1"),
)


def _stats(weights, log=np.log):
    logs = log(np.where(weights > 0, weights, 1.0))
    return np.max(weights, axis=-1), -np.sum(weights * logs, axis=-1)


def _plain_weights(query, key, scaled):
    scores = np.asarray(query) @ np.swapaxes(key, -1, -2)  # (..., L, E) @ (..., E, S) -> (..., L, S)
    return _softmax(scores / np.sqrt(np.shape(key)[-1]) if scaled else scores)


# max_weight_and_entropy(query, key, scaled): (max weight per query, entropy per query in nats).
SATURATION_MISTAKES = (
    Mistake("entropy in bits", lambda query, key, scaled=True: _stats(_plain_weights(query, key, scaled), np.log2),
            "use the natural log (nats), as sdpa_lib.entropy does: H = -sum p log p with np.log"),
    Mistake("entropy without the minus sign",
            lambda query, key, scaled=True: (_stats(_plain_weights(query, key, scaled))[0],
                                             -_stats(_plain_weights(query, key, scaled))[1]),
            "H = -sum p log p is never negative: log p <= 0"),
    Mistake("ignored `scaled`", lambda query, key, scaled=True: _stats(_plain_weights(query, key, not scaled)),
            "scaled=True divides the scores by sqrt(E) before softmax; scaled=False uses them raw"),
)

_ROWS = N_("row i of the weights is query i's distribution over the keys: take the argmax along the last axis")
# most_attended(x, w_q, w_k) (chapter 1): which key each query weighs most, (..., L) ints.
ARGMAX_MISTAKES = (
    Mistake("argmax over the queries", lambda x, w_q, w_k: np.argmax(_scores(x, w_q, w_k), axis=-2), _ROWS),
    Mistake("argmax over the queries", lambda x, w_q, w_k: np.argmax(_weights(x, w_q, w_k, 1.0), axis=-2), _ROWS),
    Mistake("least attended (argmin)", lambda x, w_q, w_k: np.argmin(_weights(x, w_q, w_k, 1.0), axis=-1),
            "the most attended key has the largest weight: np.argmax"),
)
