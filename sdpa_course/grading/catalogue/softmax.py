"""Named wrong answers for softmax, its Jacobian and its backward (chapter 5).

Each ``compute`` takes the graded function's arguments and returns exactly what that
mistake outputs, so :func:`~sdpa_course.grading.diagnose` can recognise it.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.softmax import softmax as _softmax
from ..mistakes import Mistake


def _naive(x, axis=-1):
    exps = np.exp(x)
    return exps / exps.sum(axis=axis, keepdims=True)


def _shifted_exp(x, axis=-1):
    return np.exp(x - np.max(x, axis=axis, keepdims=True))


def _global_max(x, axis=-1):
    top = np.max(x)  # one maximum for the whole array, not one per slice; all -inf rows guarded as asked
    exps = np.exp(x - (0 if np.isneginf(top) else top))
    total = exps.sum(axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)


def _unguarded(x, axis=-1):
    exps = _shifted_exp(x, axis)
    return exps / exps.sum(axis=axis, keepdims=True)


def _other_axis(x, axis=-1):
    x = np.asarray(x)
    wrong = 0 if axis % x.ndim == x.ndim - 1 else -1
    return _softmax(x, axis=wrong)


def _no_exp(x, axis=-1):
    return x / np.sum(x, axis=axis, keepdims=True)


SOFTMAX_MISTAKES = (
    Mistake("no max subtraction", _naive,
            "exp(1000) overflows to inf and inf/inf is NaN. Subtract the row maximum first: softmax(x) = "
            "softmax(x - max(x)) (shift invariance), and the largest exponent becomes exp(0) = 1."),
    Mistake("an all -inf row gives NaN (0/0)", _unguarded,
            "When every entry of a row is -inf (a query whose keys are all masked), max is -inf and "
            "x - max is -inf - (-inf) = NaN. Shift such rows by 0 instead, and divide only where the sum is "
            "nonzero (np.divide(..., where=total != 0)) so the row comes out all zeros."),
    Mistake("one maximum for the whole array", _global_max,
            "np.max(x) without axis= subtracts the largest score of the whole array from every slice. A slice whose "
            "scores all lie far below it underflows: exp gives 0 everywhere, and the slice comes out all 0 (or NaN) "
            "instead of summing to 1. Subtract each slice's own maximum: np.max(x, axis=axis, keepdims=True)."),
    Mistake("softmax over the wrong axis", _other_axis,
            "Normalise along `axis` (by default the last one, the keys): pass axis=axis, keepdims=True to both "
            "the max and the sum."),
    Mistake("exp(x - max) not divided by the sum", _shifted_exp,
            "The exponentials are only proportional to the probabilities: divide by their sum along the axis, "
            "not by the max (the largest entry would be 1)."),
    Mistake("normalised the scores without exp", _no_exp,
            "x / sum(x) is not softmax (it breaks for negative scores); take exp first."),
)


def _diagonal_only(p):
    return p[..., None, :] * np.eye(p.shape[-1])  # (..., 1, N) * (N, N) -> (..., N, N)


def _diagonal_variance(p):
    return (p * (1 - p))[..., None, :] * np.eye(p.shape[-1])


def _outer(p):
    return p[..., :, None] * p[..., None, :]  # (..., N, 1) * (..., 1, N) -> (..., N, N)


JACOBIAN_MISTAKES = (
    Mistake("Jacobian missing the outer product", _diagonal_only,
            "d p_i / d x_j = p_i (delta_ij - p_j): every output depends on every input through the sum, so "
            "the off-diagonal entries -p_i p_j are not zero. J = diag(p) - p p^T."),
    Mistake("Jacobian with only the diagonal p(1 - p)", _diagonal_variance,
            "The diagonal p_i(1 - p_i) is right, but the off-diagonal entries are -p_i p_j: "
            "J = diag(p) - p p^T (p[..., :, None] * p[..., None, :] is the outer product)."),
    Mistake("outer product added instead of subtracted", lambda p: _diagonal_only(p) + _outer(p),
            "Raising x_j lowers every other p_i, so the off-diagonal entries are negative: diag(p) - p p^T; "
            "each row of J sums to 0."),
    Mistake("Jacobian with the sign flipped", lambda p: _outer(p) - _diagonal_only(p),
            "Raising x_i raises p_i, so the diagonal is positive: J = diag(p) - p p^T, not p p^T - diag(p)."),
)


def _inner(p, grad_p, axis=-1):
    return np.sum(grad_p * p, axis=axis, keepdims=True)


BACKWARD_MISTAKES = (
    Mistake("backward without the <g, p> term", lambda p, g: p * g,
            "That is diag(p) g, the Jacobian without its outer product. J^T g = p * (g - <g, p>), where "
            "<g, p> = sum(g * p, axis=-1, keepdims=True)."),
    Mistake("subtracted the mean of g instead of <g, p>", lambda p, g: p * (g - g.mean(axis=-1, keepdims=True)),
            "The term comes from -p p^T g, so it is the p-weighted sum <g, p> = sum(g * p), not the plain mean."),
    Mistake("forgot the factor p", lambda p, g: g - _inner(p, g),
            "J^T g = p * (g - <g, p>): multiply elementwise by p at the end."),
    Mistake("<g, p> summed over the wrong axis", lambda p, g: p * (g - _inner(p, g, axis=0)),
            "Each row is its own softmax: sum g * p along the last axis, with keepdims=True."),
)
