r"""Scaled dot-product attention, forward and backward: :math:`\operatorname{softmax}(QK^\top/\sqrt{E})\,V`.

Shape legend (one for the whole library): ``...`` any leading axes (batch, heads),
``L`` query length, ``S`` key/value length, ``E`` query/key features, ``Ev`` value features.
"""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_attention_inputs, check_generator
from .fast_attention import attention_output, is_faster
from .masks import _apply_mask, _resolve_mask
from .scores import _scale_factor
from .softmax import softmax

IMPLEMENTATIONS = ("reference", "fast")


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
    query, key = check_attention_inputs(query, key)
    # Scale the (..., L, E) query rather than the (..., L, S) scores: fewer multiplications.
    query = query * _scale_factor(scale, query.dtype, query.shape[-1])
    scores = query @ np.swapaxes(key, -1, -2)  # (..., L, E) @ (..., E, S) -> (..., L, S)
    scores = _apply_mask(scores, _resolve_mask(attn_mask, is_causal, scores.shape))  # False -> -inf; float added
    return softmax(scores)  # along S, shifted by each row's max: exp never overflows


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


def _chosen_implementation(implementation, dropout_p, return_weights: bool, query, value) -> str:
    """``"fast"`` or ``"reference"``: the path :func:`scaled_dot_product_attention` runs (see its Notes)."""
    if not (implementation is None or (isinstance(implementation, str) and implementation in IMPLEMENTATIONS)):
        raise ValueError(f"implementation must be None, 'reference' or 'fast'; got {implementation!r}")
    needs_weights = [what for what, asked in (("return_weights=True", return_weights),
                                              (f"dropout_p={dropout_p!r}", dropout_p > 0)) if asked]
    if implementation == "fast" and needs_weights:
        raise ValueError(f"implementation='fast' computes the output without forming the weights, so it cannot "
                         f"do {' and '.join(needs_weights)}; use implementation='reference', or None to choose")
    if implementation is not None:
        return implementation
    (L, E), (S, Ev) = query.shape[-2:], value.shape[-2:]
    return "fast" if not needs_weights and is_faster(L, S, E, Ev) else "reference"


def scaled_dot_product_attention(query, key, value, attn_mask=None, *, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None, rng=None,
                                 return_weights: bool = False, implementation: str | None = None):
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
    implementation : {None, "reference", "fast"}
        Which code computes the result (as ``implementation=`` of
        ``jax.nn.dot_product_attention``): ``"reference"`` is the formula in this module,
        ``"fast"`` is :func:`sdpa_lib.fast_attention.attention_output` (the output only),
        None (default) picks one as the Notes say.

    Returns
    -------
    output : ndarray, shape ``(..., L, Ev)``
        Row ``i`` is a convex combination of the value rows (without dropout).
    weights : ndarray, shape ``(..., L, S)``, only if ``return_weights``

    Raises
    ------
    ValueError
        Rank below 2, E or S mismatch, masks that don't broadcast, bad ``dropout_p`` or
        ``scale``, ``is_causal`` together with ``attn_mask``; an unknown ``implementation``,
        or ``"fast"`` together with ``return_weights=True`` or ``dropout_p > 0``.
    TypeError
        Integer, bool, complex or float16 inputs; a mask that is neither bool nor float.

    Notes
    -----
    Same semantics as ``torch.nn.functional.scaled_dot_product_attention``.  Query rows
    whose keys are all masked give zero weights and a zero output, with no NaN and no
    warning (PyTorch >= 2.5 does the same).  NaN in the inputs propagates to the rows it
    touches.

    Two implementations give the same numbers (within rounding; tested on every case of
    ``tests/test_lib_attention.py``).  ``"reference"`` is the code below: scores, mask,
    stable softmax, weights times V.  ``"fast"`` never forms the weights: it works a few
    score matrices at a time, folds the softmax shift into the first matmul and divides the
    ``(..., L, Ev)`` output by the row sums (see :mod:`sdpa_lib.fast_attention`), so it can
    neither return the weights nor apply dropout, and asking it to is a ``ValueError``.
    ``None`` picks ``"fast"`` only where it is faster: no weights returned, no dropout, and
    queries long enough for its fixed costs to pay, ``L >= 2 (E + Ev)`` and ``L S >= 2**17``
    (:func:`sdpa_lib.fast_attention.is_faster`); otherwise ``"reference"``.  Like JAX's
    ``implementation=None``, the choice changes speed, not results.

    Examples
    --------
    >>> q = np.array([[1.0, 0.0]]); k = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> v = np.array([[10.0], [20.0]])
    >>> out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    >>> out.shape, w.sum(axis=-1)
    ((1, 1), array([1.]))
    >>> bool(np.allclose(scaled_dot_product_attention(q, k, v, implementation="fast"), out))
    True
    """
    rng = _check_dropout(dropout_p, rng)
    query, key, value = check_attention_inputs(query, key, value)
    if _chosen_implementation(implementation, dropout_p, return_weights, query, value) == "fast":
        return attention_output(query, key, value, attn_mask, is_causal=is_causal, scale=scale)
    weights = attention_weights(query, key, attn_mask, is_causal=is_causal, scale=scale)  # (..., L, S)
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
    query, key, value = check_attention_inputs(query, key, value)
    grad_output = as_float_array(grad_output, "grad_output", min_ndim=2, legend="(..., L, Ev)")
    weights = attention_weights(query, key, attn_mask, is_causal=is_causal, scale=scale)  # (..., L, S)
    output_shape = (*np.broadcast_shapes(weights.shape[:-2], value.shape[:-2]), query.shape[-2], value.shape[-1])
    if grad_output.shape != output_shape:
        raise ValueError(f"grad_output must have the output's shape (..., L, Ev) = {output_shape}; "
                         f"got grad_output.shape={grad_output.shape}")
    grad_value = np.swapaxes(weights, -1, -2) @ grad_output  # (..., S, L) @ (..., L, Ev) -> (..., S, Ev)
    grad_weights = grad_output @ np.swapaxes(value, -1, -2)  # (..., L, Ev) @ (..., Ev, S) -> (..., L, S)
    grad_scores = weights * (grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True))
    grad_scores *= _scale_factor(scale, grad_scores.dtype, query.shape[-1])
    grad_query = grad_scores @ key  # (..., L, S) @ (..., S, E) -> (..., L, E)
    grad_key = np.swapaxes(grad_scores, -1, -2) @ query  # (..., S, L) @ (..., L, E) -> (..., S, E)
    return (_sum_to_shape(grad_query, query.shape), _sum_to_shape(grad_key, key.shape),
            _sum_to_shape(grad_value, value.shape))
