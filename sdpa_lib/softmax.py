"""Softmax and the quantities the course measures on it: Jacobian, backward, entropy."""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_probabilities


def softmax(x, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax along ``axis``.

    .. math:: \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_l e^{x_l - m}},\quad m = \max_l x_l

    Parameters
    ----------
    x : array_like, float32 or float64, shape ``(..., N)``
        Scores; ``-inf`` marks entries that take no part.
    axis : int
        Axis to normalise along (the keys' axis for attention scores).

    Returns
    -------
    ndarray, same shape and dtype as ``x``
        Non-negative, sums to 1 along ``axis``; exactly 0 where ``x`` is ``-inf``.
        A slice that is all ``-inf`` gives all zeros (no NaN, no warning).

    Notes
    -----
    Subtracting the maximum changes nothing mathematically (softmax is shift invariant)
    but keeps ``exp`` from overflowing: inputs near 1000 work.  For finite input there is
    no warning either: ``x - max`` is at most 0, and where it falls below the float range
    (``-1e308 - 1e308``) it becomes ``-inf``, whose ``exp`` is the right 0.  NaN in ``x``
    propagates to its whole slice.

    Examples
    --------
    >>> p = softmax(np.array([1000.0, 1000.0, -np.inf]))
    >>> p
    array([0.5, 0.5, 0. ])
    >>> softmax(np.full((1, 3), -np.inf))
    array([[0., 0., 0.]])
    """
    x = as_float_array(x, "x", min_ndim=1, legend="(..., N)")
    exps = _exp_minus_max(x, axis)
    # In place: a total is 0 only where all its exps are 0 (an all -inf slice), so those stay 0.
    return _divide_where_nonzero(exps, np.sum(exps, axis=axis, keepdims=True), out=exps)


def _minus_max(x: np.ndarray, shift: np.ndarray, out=None) -> np.ndarray:
    """``x - shift`` for a ``shift`` at least as large as every ``x`` (a maximum, a logsumexp).

    The difference is at most 0, so an overflow can only go to ``-inf``, which is the
    correctly rounded result and whose ``exp`` is the right 0: that overflow (``-1e308 -
    1e308`` in float64) is expected, and silenced.
    """
    with np.errstate(over="ignore"):
        return np.subtract(x, shift, out=out)


def _exp_minus_max(x: np.ndarray, axis: int = -1, out=None) -> np.ndarray:
    """``exp(x - max(x))`` along ``axis`` (into ``out``, which may be ``x``); an all ``-inf`` slice gives 0s.

    An all ``-inf`` slice has maximum ``-inf``; it is shifted by 0 instead, which keeps
    ``exp(-inf) = 0`` and avoids ``-inf - (-inf) = NaN``.
    """
    row_max = np.max(x, axis=axis, keepdims=True)  # (..., 1) along axis
    row_max[np.isneginf(row_max)] = 0
    shifted = _minus_max(x, row_max, out=out)
    return np.exp(shifted, out=shifted)


def _divide_where_nonzero(numerator: np.ndarray, totals: np.ndarray, out=None) -> np.ndarray:
    """``numerator / totals`` where the total is nonzero, else 0 (a fully masked row); a NaN total stays NaN.

    ``out`` (default: a new array of zeros) keeps its values where the total is 0.
    """
    out = np.zeros_like(numerator) if out is None else out
    return np.divide(numerator, totals, out=out, where=totals != 0)


def log_softmax(x, axis: int = -1) -> np.ndarray:
    """``x - logsumexp(x)`` along ``axis``, without forming ``exp(x)`` first.

    Examples
    --------
    >>> np.round(log_softmax(np.array([0.0, np.log(3.0)])), 4)
    array([-1.3863, -0.2877])
    """
    x = as_float_array(x, "x", min_ndim=1, legend="(..., N)")
    return _minus_max(x, logsumexp(x, axis=axis, keepdims=True))


def logsumexp(x, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    r"""Stable :math:`\log \sum_j e^{x_j}` along ``axis`` (``-inf`` for an all ``-inf`` slice).

    Examples
    --------
    >>> float(logsumexp(np.array([1000.0, 1000.0])))  # naive: log(inf) = inf
    1000.6931471805599
    """
    x = as_float_array(x, "x", min_ndim=1, legend="(..., N)")
    row_max = np.max(x, axis=axis, keepdims=True)
    safe_max = np.where(np.isfinite(row_max), row_max, 0.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf for an all -inf slice is the right answer
        result = np.log(np.sum(np.exp(_minus_max(x, safe_max)), axis=axis, keepdims=True)) + safe_max
    return result if keepdims else np.squeeze(result, axis=axis)


def softmax_jacobian(p) -> np.ndarray:
    r"""Jacobian of softmax at output ``p``: :math:`J = \operatorname{diag}(p) - p p^\top`.

    Parameters
    ----------
    p : array_like, shape ``(..., N)``
        Softmax outputs (probabilities along the last axis).

    Returns
    -------
    ndarray, shape ``(..., N, N)``
        Symmetric; every row sums to 0 (softmax ignores a constant shift of its input).

    Examples
    --------
    >>> softmax_jacobian(np.array([0.5, 0.5]))
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    """
    p = check_probabilities(p)
    diagonal = p[..., None, :] * np.eye(p.shape[-1], dtype=p.dtype)  # (..., 1, N) * (N, N) -> (..., N, N)
    outer = p[..., :, None] * p[..., None, :]  # (..., N, 1) * (..., 1, N) -> (..., N, N)
    return diagonal - outer


def softmax_backward(p, grad_p) -> np.ndarray:
    r"""Gradient with respect to the softmax input, given ``p`` and :math:`\partial\ell/\partial p`.

    .. math:: \frac{\partial \ell}{\partial x} = p \odot \left(g - \langle g, p\rangle\right)

    which is :math:`J^\top g` without building the ``(N, N)`` Jacobian.

    Parameters
    ----------
    p : array_like, shape ``(..., N)``
    grad_p : array_like, shape ``(..., N)``

    Returns
    -------
    ndarray, shape ``(..., N)``
        Sums to 0 along the last axis.

    Examples
    --------
    >>> softmax_backward(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    array([ 0.25, -0.25])
    """
    p = check_probabilities(p)
    grad_p = as_float_array(grad_p, "grad_p", min_ndim=1, legend="(..., N)")
    try:
        same_shape = np.broadcast_shapes(p.shape, grad_p.shape) == p.shape
    except ValueError:
        same_shape = False
    if not same_shape:
        raise ValueError(f"grad_p must have the shape of p; got p.shape={p.shape}, grad_p.shape={grad_p.shape}")
    inner = np.sum(grad_p * p, axis=-1, keepdims=True)  # (..., 1)
    return p * (grad_p - inner)


def entropy(p, axis: int = -1) -> np.ndarray:
    r"""Shannon entropy in nats, :math:`H(p) = -\sum_j p_j \log p_j`, with :math:`0 \log 0 = 0`.

    Returns
    -------
    ndarray, shape of ``p`` without ``axis``
        0 for a one-hot row, :math:`\log N` for a uniform row of N entries.

    Examples
    --------
    >>> float(entropy(np.full(4, 0.25))) == float(np.log(4))
    True
    """
    p = check_probabilities(p)
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -np.sum(p * logs, axis=axis)
