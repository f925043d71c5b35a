"""Named wrong answers for the attention output softmax(QK^T / sqrt(E) + mask) V (chapters 6-7).

Every ``compute`` takes ``(query, key, value, attn_mask=None)`` with a bool mask
(True = may attend) and returns what that mistake outputs.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.softmax import softmax as _softmax
from ..mistakes import Mistake


def scores(query, key, scale=None):
    """``query @ key^T * scale`` ``(..., L, S)``; ``scale`` defaults to ``1/sqrt(E)``."""
    scale = 1 / np.sqrt(query.shape[-1]) if scale is None else scale
    return (query @ np.swapaxes(key, -1, -2)) * scale  # (..., L, E) @ (..., E, S) -> (..., L, S)


def masked(raw_scores, attn_mask, fill=-np.inf):
    """Scores with ``fill`` where the bool mask is False (no mask: unchanged)."""
    return raw_scores if attn_mask is None else np.where(attn_mask, raw_scores, fill)


def weights(query, key, attn_mask=None, *, scale=None, axis=-1):
    """Correct softmax weights, or softmax along another ``axis``."""
    return _softmax(masked(scores(query, key, scale), attn_mask), axis=axis)


def _scaled_by(factor):
    return lambda query, key, value, attn_mask=None: weights(
        query, key, attn_mask, scale=factor(query.shape[-1])) @ value


def _unnormalised(query, key, value, attn_mask=None):
    shifted = masked(scores(query, key), attn_mask)
    return np.exp(shifted - shifted.max(axis=-1, keepdims=True)) @ value


ATTENTION_MISTAKES = (
    Mistake("forgot the scale", _scaled_by(lambda e: 1.0),
            "Divide the scores by sqrt(E) (E = query.shape[-1]) before the softmax, or they grow with E and "
            "the softmax saturates to one-hot."),
    Mistake("scaled by E instead of sqrt(E)", _scaled_by(lambda e: 1.0 / e),
            "Var(q . k) = E, so the standard deviation is sqrt(E): divide by np.sqrt(E), not by E."),
    Mistake("multiplied by sqrt(E) instead of dividing", _scaled_by(np.sqrt),
            "The scale is 1/sqrt(E): it shrinks the scores."),
    Mistake("softmax over the queries (axis -2)",
            lambda query, key, value, attn_mask=None: weights(query, key, attn_mask, axis=-2) @ value,
            "Each query distributes its attention over the keys: softmax along the last axis (S) of the "
            "(..., L, S) scores, so each row sums to 1."),
    Mistake("weights not normalised (exp without dividing by the row sum)", _unnormalised,
            "After exp, divide each row by its sum so the weights of a query add up to 1; the output is then a "
            "weighted average of the value rows."),
    Mistake("scores used as weights (no softmax)",
            lambda query, key, value, attn_mask=None: scores(query, key) @ value,
            "Turn the scores into weights with a softmax along the keys before multiplying by V."),
    Mistake("output transposed (V^T W^T)",
            lambda query, key, value, attn_mask=None: np.swapaxes(weights(query, key, attn_mask) @ value, -1, -2),
            "The output is weights @ V: (..., L, S) @ (..., S, Ev) -> (..., L, Ev), one row per query."),
    Mistake("weights transposed (W^T V)",
            lambda query, key, value, attn_mask=None: np.swapaxes(weights(query, key, attn_mask), -1, -2) @ value,
            "Row i of the weights belongs to query i and its columns to the keys: weights @ V, not weights.T @ V "
            "(the two only have matching shapes when L == S)."),
)
