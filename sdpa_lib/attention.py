r"""Scaled dot-product attention, forward and backward: :math:`\operatorname{softmax}(QK^\top/\sqrt{E})\,V`.

Shape legend (one for the whole library): ``...`` any leading axes (batch, heads),
``L`` query length, ``S`` key/value length, ``E`` query/key features, ``Ev`` value features.
"""
from __future__ import annotations

import numpy as np

from ._checks import (as_float_array, check_batch_broadcast, check_generator, check_key_value, check_mask,
                      check_query_key, check_scale)
from .masks import causal_mask
from .scores import default_scale


def _inputs(query, key, value=None):
    """Validate query ``(..., L, E)``, key ``(..., S, E)`` and value ``(..., S, Ev)``; cast to one dtype."""
    query = as_float_array(query, "query", min_ndim=2)
    key = as_float_array(key, "key", min_ndim=2, legend="(..., S, E)")
    check_query_key(query, key)
    arrays = [query, key]
    if value is not None:
        value = as_float_array(value, "value", min_ndim=2, legend="(..., S, Ev)")
        check_key_value(key, value)
        arrays.append(value)
    dtype = np.result_type(*arrays)
    return [a.astype(dtype, copy=False) for a in arrays]


def check_causal_exclusive(attn_mask, is_causal: bool) -> None:
    """``is_causal`` and an explicit ``attn_mask`` are mutually exclusive (as in PyTorch)."""
    if is_causal and attn_mask is not None:
        raise ValueError("pass either attn_mask or is_causal=True, not both "
                         "(combine them first with combine_masks(causal_mask(L, S), mask))")


def _resolve_mask(attn_mask, is_causal: bool, scores_shape: tuple):
    """The effective mask: ``attn_mask`` as given, or the causal mask, or None."""
    check_causal_exclusive(attn_mask, is_causal)
    if is_causal:
        return causal_mask(*scores_shape[-2:])
    if attn_mask is None:
        return None
    return check_mask(attn_mask, scores_shape)


def _scale_factor(query: np.ndarray, scale):
    """The scale, default ``1/sqrt(E)``, as a scalar of the query's dtype (float32 stays float32)."""
    check_scale(scale)
    return query.dtype.type(default_scale(query.shape[-1]) if scale is None else scale)


def _masked_scores(query, key, attn_mask, is_causal, scale) -> np.ndarray:
    """Scaled scores ``(..., L, S)`` with the mask applied (False -> -inf, float mask added)."""
    # Scale the (..., L, E) query rather than the (..., L, S) scores: fewer multiplications.
    query = query * _scale_factor(query, scale)
    scores = query @ np.swapaxes(key, -1, -2)  # (..., L, E) @ (..., E, S) -> (..., L, S)
    return _apply_mask(scores, _resolve_mask(attn_mask, is_causal, scores.shape))


def _apply_mask(scores: np.ndarray, mask) -> np.ndarray:
    """``scores`` (in place when the shapes allow) with a bool mask's False set to -inf or a float mask added."""
    if mask is None:
        return scores
    full_shape = np.broadcast_shapes(scores.shape, mask.shape)
    if full_shape != scores.shape:
        scores = np.broadcast_to(scores, full_shape).copy()
    if mask.dtype == np.bool_:
        np.copyto(scores, scores.dtype.type(-np.inf), where=~mask)
    else:
        scores += mask.astype(scores.dtype, copy=False)
    return scores


def _exp_shifted(scores: np.ndarray) -> np.ndarray:
    """``exp(scores - row max)`` in place; a row whose keys are all masked (all ``-inf``) becomes all 0."""
    row_max = np.max(scores, axis=-1, keepdims=True)  # (..., L, 1)
    row_max[np.isneginf(row_max)] = 0
    np.subtract(scores, row_max, out=scores)
    return np.exp(scores, out=scores)


def _unnormalised_weights(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp(scores - row max)`` in place, and the row sums ``(..., L, 1)`` (0 for a fully masked row)."""
    scores = _exp_shifted(scores)
    return scores, np.sum(scores, axis=-1, keepdims=True)


def _normalise(numerator: np.ndarray, row_sums: np.ndarray) -> np.ndarray:
    """Divide by the row sums where they are nonzero; fully masked rows stay 0, NaN rows stay NaN."""
    return np.divide(numerator, row_sums, out=np.zeros_like(numerator), where=row_sums != 0)


# A chunk of this many bytes of scores stays in cache through the passes of the softmax
# (exp, @ V); measured by benchmarks/bench_sdpa.py.
_CHUNK_BYTES = 4 * 2**20


def _flat_batch(array: np.ndarray, batch: tuple) -> np.ndarray:
    """``array`` ``(..., X, Y)`` broadcast to ``(*batch, X, Y)`` and flattened to ``(N, X, Y)``, a view if possible."""
    return np.broadcast_to(array, (*batch, *array.shape[-2:])).reshape(-1, *array.shape[-2:])


def _output_by_chunks(query, key, value, attn_mask, is_causal, scale) -> np.ndarray:
    """``softmax(scores) V`` without the weights, a few ``(L, S)`` score matrices at a time -> ``(..., L, Ev)``.

    Each chunk's scores are built, exponentiated and multiplied by V while they are still
    in cache.  A column of ones after V makes that matmul return the row sums as well, and
    the sums divide the small ``(n, L, Ev)`` output, not the weights.
    """
    factor = _scale_factor(query, scale)
    L, S = query.shape[-2], key.shape[-2]
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    mask = _resolve_mask(attn_mask, is_causal, (*batch, L, S))
    if mask is not None:
        batch = np.broadcast_shapes(batch, mask.shape[:-2])
        mask = _flat_batch(mask, batch)  # (N, L or 1, S or 1)
    query = _flat_batch(query * factor, batch)  # (N, L, E)
    keys_t = np.swapaxes(_flat_batch(key, batch), -1, -2)  # (N, S, E) -> (N, E, S)
    value = _flat_batch(value, batch)  # (N, S, Ev)
    Ev = value.shape[-1]
    value_and_ones = _append_ones(value, axis=-1)  # (N, S, Ev+1)
    keys_t_and_ones = _append_ones(keys_t, axis=-2) if mask is None else None  # (N, E+1, S)
    output = np.empty((query.shape[0], L, Ev), dtype=query.dtype)  # (N, L, Ev)
    step = max(1, _CHUNK_BYTES // max(1, L * S * query.itemsize))
    for start in range(0, query.shape[0], step):
        items = slice(start, start + step)
        totals = None
        if mask is None:
            totals = _totals_with_folded_shift(query[items], keys_t_and_ones[items], value_and_ones[items])
        if totals is None or not np.isfinite(totals).all():  # masked, or the cheap shift overflowed
            scores = query[items] @ keys_t[items]  # (n, L, E) @ (n, E, S) -> (n, L, S)
            weights = _exp_shifted(_apply_mask(scores, None if mask is None else mask[items]))
            totals = weights @ value_and_ones[items]  # (n, L, S) @ (n, S, Ev+1) -> (n, L, Ev+1)
        output[items] = _normalise(totals[..., :Ev], totals[..., Ev:])
    return output.reshape((*batch, L, Ev))


def _append_ones(array: np.ndarray, axis: int) -> np.ndarray:
    """``array`` with one more row (``axis=-2``) or column (``axis=-1``) of ones."""
    shape = list(array.shape)
    shape[axis] = 1
    return np.concatenate([array, np.ones(shape, array.dtype)], axis=axis)


# Every this-many-th key is scored first to find a shift for the unmasked fast path.
_SHIFT_SAMPLE_STRIDE = 32


def _totals_with_folded_shift(query: np.ndarray, keys_t_and_ones: np.ndarray, value_and_ones: np.ndarray):
    """``exp(q . k - m) @ [V, 1]`` ``(n, L, Ev+1)`` for unmasked scores, the shift ``m`` folded into the matmul.

    ``m`` is each row's largest score over a sample of the keys, a lower bound of the row
    maximum: the largest term is then at least 1, so nothing that matters underflows, and
    ``[q, -m] @ [K^T; 1]`` gives the shifted scores without a separate max and subtract pass
    over ``(L, S)``.  If a key outside the sample scores far above ``m``, the exponential (or
    its product with a value) overflows; the caller sees a non-finite total and redoes the
    chunk with the exact max.
    """
    sample = keys_t_and_ones[..., :-1, ::_SHIFT_SAMPLE_STRIDE]  # (n, E, S/stride)
    shift = np.max(query @ sample, axis=-1, keepdims=True)  # (n, L, E) @ (n, E, s) -> (n, L, 1)
    scores = np.concatenate([query, -shift], axis=-1) @ keys_t_and_ones  # (n, L, E+1) @ (n, E+1, S) -> (n, L, S)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and redone by the caller
        return np.exp(scores, out=scores) @ value_and_ones  # (n, L, S) @ (n, S, Ev+1) -> (n, L, Ev+1)


def attention_weights(query, key, attn_mask=None, *, is_causal: bool = False, scale=None) -> np.ndarray:
    r"""Attention weights :math:`\operatorname{softmax}(QK^\top \cdot \text{scale} + M)` along the keys.

    Parameters
    ----------
    query : array_like, shape ``(..., L, E)``
    key : array_like, shape ``(..., S, E)``
    attn_mask : array_like, bool or float, broadcastable to ``(..., L, S)``, optional
        Bool: True = may attend.  Float: added to the scores (``-inf`` removes a key).
    is_causal : bool
        Use :func:`causal_mask` (top-left aligned); an error together with ``attn_mask``.
    scale : float, optional
        Defaults to :math:`1/\sqrt{E}`.

    Returns
    -------
    ndarray, shape ``(..., L, S)``
        Each row sums to 1, or is all 0 where every key of that row is masked.
        Masked entries are exactly 0.

    Examples
    --------
    >>> w = attention_weights(np.ones((2, 4)), np.ones((3, 4)), is_causal=True)
    >>> w
    array([[1. , 0. , 0. ],
           [0.5, 0.5, 0. ]])
    """
    query, key = _inputs(query, key)
    scores, row_sums = _unnormalised_weights(_masked_scores(query, key, attn_mask, is_causal, scale))
    return _normalise(scores, row_sums)


def _dropout(weights: np.ndarray, dropout_p: float, rng) -> np.ndarray:
    """Zero each weight with probability ``dropout_p`` and rescale the rest by ``1/(1-p)``."""
    keep = rng.random(weights.shape) >= dropout_p
    return np.where(keep, weights / weights.dtype.type(1.0 - dropout_p), weights.dtype.type(0))


def _check_dropout(dropout_p, rng) -> np.random.Generator | None:
    """Validate ``dropout_p`` and return the generator to draw the dropout pattern from."""
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float, np.integer, np.floating)) \
            or not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be a number in [0, 1); got {dropout_p!r}")
    rng = check_generator(rng, "rng", allow_none=True)
    return np.random.default_rng() if rng is None and dropout_p > 0 else rng


def scaled_dot_product_attention(query, key, value, attn_mask=None, *, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None, rng=None,
                                 return_weights: bool = False):
    r"""Scaled dot-product attention, :math:`\operatorname{softmax}(QK^\top/\sqrt{E} + M)\,V`.

    Parameters
    ----------
    query : array_like, float32 or float64, shape ``(..., L, E)``
    key : array_like, shape ``(..., S, E)``
    value : array_like, shape ``(..., S, Ev)``
        Leading axes broadcast together (e.g. shared keys across a batch).
    attn_mask : array_like, bool or float, broadcastable to ``(..., L, S)``, optional
        Bool: True = may attend.  Float: added to the scaled scores.
    dropout_p : float in [0, 1)
        Dropout on the weights (training only); kept weights are scaled by ``1/(1-p)``.
    is_causal : bool
        Apply :func:`causal_mask` (top-left aligned). Passing ``attn_mask`` too is an error.
    scale : float, optional
        Multiplies the scores; default :math:`1/\sqrt{E}`.
    rng : numpy.random.Generator, optional
        Source of the dropout pattern (a fresh generator if None).
    return_weights : bool
        Also return the ``(..., L, S)`` weights (after dropout, if any).

    Returns
    -------
    output : ndarray, shape ``(..., L, Ev)``
        Row ``i`` is a convex combination of the value rows (without dropout).
    weights : ndarray, shape ``(..., L, S)``, only if ``return_weights``

    Raises
    ------
    ValueError
        Rank below 2, E or S mismatch, masks that don't broadcast, bad ``dropout_p`` or
        ``scale``, ``is_causal`` together with ``attn_mask``.
    TypeError
        Integer, bool, complex or float16 inputs; a mask that is neither bool nor float.

    Notes
    -----
    Same semantics as ``torch.nn.functional.scaled_dot_product_attention``.  Query rows
    whose keys are all masked give zero weights and a zero output, with no NaN and no
    warning (PyTorch >= 2.5 does the same).  NaN in the inputs propagates to the rows it
    touches.  Without ``return_weights`` the normalisation is applied to the
    ``(..., L, Ev)`` output instead of the ``(..., L, S)`` weights, which saves a pass.

    Examples
    --------
    >>> q = np.array([[1.0, 0.0]]); k = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> v = np.array([[10.0], [20.0]])
    >>> out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    >>> out.shape, w.sum(axis=-1)
    ((1, 1), array([1.]))
    """
    rng = _check_dropout(dropout_p, rng)
    query, key, value = _inputs(query, key, value)
    check_batch_broadcast(("query", query.shape[:-2]), ("value", value.shape[:-2]))
    if not return_weights and dropout_p == 0:
        return _output_by_chunks(query, key, value, attn_mask, is_causal, scale)
    scores, row_sums = _unnormalised_weights(_masked_scores(query, key, attn_mask, is_causal, scale))
    weights = _normalise(scores, row_sums)
    if dropout_p > 0:
        weights = _dropout(weights, dropout_p, rng)
    output = weights @ value  # (..., L, S) @ (..., S, Ev) -> (..., L, Ev)
    return (output, weights) if return_weights else output


def _sum_to_shape(gradient: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient back to the shape of the input it belongs to."""
    extra = gradient.ndim - len(shape)
    gradient = gradient.sum(axis=tuple(range(extra))) if extra else gradient
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and gradient.shape[i] != 1)
    return gradient.sum(axis=axes, keepdims=True) if axes else gradient


def scaled_dot_product_attention_backward(query, key, value, grad_output, attn_mask=None, *,
                                          is_causal: bool = False, scale=None):
    r"""Gradients of :func:`scaled_dot_product_attention` (no dropout) with respect to its inputs.

    With :math:`P` the weights, :math:`dO` the output gradient and ``c`` the scale:

    .. math::
        dV = P^\top dO,\quad dP = dO\,V^\top,\quad
        dS = P \odot (dP - \operatorname{rowsum}(dP \odot P)),\quad
        dQ = c\, dS\,K,\quad dK = c\, dS^\top Q

    Parameters
    ----------
    query, key, value, attn_mask, is_causal, scale
        As for :func:`scaled_dot_product_attention`.
    grad_output : array_like, shape ``(..., L, Ev)``

    Returns
    -------
    dq : ndarray, shape of ``query``
    dk : ndarray, shape of ``key``
    dv : ndarray, shape of ``value``
        Gradients summed over any axes that were broadcast.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 5))
    >>> [g.shape for g in scaled_dot_product_attention_backward(q, k, v, np.ones((3, 5)))]
    [(3, 2), (4, 2), (4, 5)]
    """
    query, key, value = _inputs(query, key, value)
    grad_output = as_float_array(grad_output, "grad_output", min_ndim=2, legend="(..., L, Ev)")
    factor = default_scale(query.shape[-1]) if scale is None else scale
    weights = attention_weights(query, key, attn_mask, is_causal=is_causal, scale=scale)  # (..., L, S)
    output_shape = (*np.broadcast_shapes(weights.shape[:-2], value.shape[:-2]), query.shape[-2], value.shape[-1])
    if grad_output.shape != output_shape:
        raise ValueError(f"grad_output must have the output's shape (..., L, Ev) = {output_shape}; "
                         f"got grad_output.shape={grad_output.shape}")
    grad_value = np.swapaxes(weights, -1, -2) @ grad_output  # (..., S, L) @ (..., L, Ev) -> (..., S, Ev)
    grad_weights = grad_output @ np.swapaxes(value, -1, -2)  # (..., L, Ev) @ (..., Ev, S) -> (..., L, S)
    grad_scores = weights * (grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True))
    grad_scores *= grad_scores.dtype.type(factor)
    grad_query = grad_scores @ key  # (..., L, S) @ (..., S, E) -> (..., L, E)
    grad_key = np.swapaxes(grad_scores, -1, -2) @ query  # (..., S, L) @ (..., L, E) -> (..., S, E)
    return (_sum_to_shape(grad_query, query.shape), _sum_to_shape(grad_key, key.shape),
            _sum_to_shape(grad_value, value.shape))
