r"""The fast path of :func:`~sdpa_lib.attention.scaled_dot_product_attention`: the output only, tuned for numpy.

Read :mod:`sdpa_lib.attention` first: it is the formula, and what this module is tested
against (``tests/test_lib_attention.py``, on every case of the attention tests).  The
output :math:`\operatorname{softmax}(QK^\top \cdot \text{scale} + M)\,V` is the same; what
changes is how often the ``(L, S)`` scores travel between memory and the processor, which is
what numpy on a CPU pays for beyond the two matmuls:

* the batch is processed a few score matrices at a time (``_CHUNK_BYTES``), so that each
  chunk is built, exponentiated and multiplied by V while it is still in cache;
* a column of ones after V makes the second matmul return the row sums as well, and the sums
  divide the small ``(n, L, Ev)`` output instead of the ``(n, L, S)`` weights;
* without a mask, the shift that keeps ``exp`` from overflowing is folded into the first
  matmul as an extra column (see :func:`_totals_with_folded_shift`), which saves the max and
  subtract passes; a chunk whose result overflows is redone with the exact maximum.

It never forms the weights, so it can neither return them nor apply dropout to them.
"""
from __future__ import annotations

import numpy as np

from .masks import _apply_mask, _resolve_mask
from .scores import _scale_factor
from .softmax import _divide_where_nonzero, _exp_minus_max

# A chunk of this many bytes of scores stays in cache through the passes of the softmax
# (exp, @ V); measured by benchmarks/bench_sdpa.py.
_CHUNK_BYTES = 4 * 2**20

# Every this-many-th key is scored first to find a shift for the unmasked chunks.
_SHIFT_SAMPLE_STRIDE = 32

# Below this many scores per batch element, the fast path's extra numpy calls cost more than it saves.
_MIN_SCORES = 2**17


def is_faster(L: int, S: int, E: int, Ev: int) -> bool:
    """Whether :func:`attention_output` beats the formula for one ``(L, S)`` score matrix per batch element.

    The fast path copies K and V with a row or column of ones, ``S (E + Ev + 2)`` numbers,
    to save about three passes over the ``L S`` scores, and makes a few more numpy calls.
    That pays when ``L >= 2 (E + Ev)`` and ``L S >= 2**17``: measured on one core (CPU
    time, float32, batch 1 and 8, E = Ev in 16, 64, 128, L in 16 .. 1024, S in 256 .. 4096),
    the fast path took 0.6x to 0.97x the formula's time inside that region and up to 1.45x
    outside it, most where L is small (one query row: about 2x).  ``benchmarks/bench_sdpa.py``
    prints the ratio on either side of the rule.

    Examples
    --------
    >>> is_faster(1024, 1024, 64, 64), is_faster(16, 4096, 64, 64), is_faster(5, 7, 4, 6)
    (True, False, False)
    """
    return L >= 2 * (E + Ev) and L * S >= _MIN_SCORES


def attention_output(query: np.ndarray, key: np.ndarray, value: np.ndarray, attn_mask=None, *,
                     is_causal: bool = False, scale=None) -> np.ndarray:
    """``softmax(QK^T * scale + M) V`` ``(..., L, Ev)`` without the weights, a few score matrices at a time.

    Parameters
    ----------
    query, key, value : ndarray, shapes ``(..., L, E)``, ``(..., S, E)``, ``(..., S, Ev)``
        Already checked and of one dtype, as
        :func:`~sdpa_lib._checks.check_attention_inputs` returns them.
    attn_mask, is_causal, scale
        As for :func:`~sdpa_lib.attention.scaled_dot_product_attention` (checked here).

    Returns
    -------
    ndarray, shape ``(..., L, Ev)``
        The formula's output within rounding; 0 for a fully masked query row.

    Examples
    --------
    >>> q, k, v = np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.arange(10.0).reshape(2, 5, 1)
    >>> attention_output(q, k, v)[:, 0, 0]  # equal scores: the mean of each batch's values
    array([2., 7.])
    """
    factor = _scale_factor(scale, query.dtype, query.shape[-1])
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
            scores = _apply_mask(scores, None if mask is None else mask[items])
            weights = _exp_minus_max(scores, out=scores)  # unnormalised, in place
            totals = weights @ value_and_ones[items]  # (n, L, S) @ (n, S, Ev+1) -> (n, L, Ev+1)
        output[items] = _divide_where_nonzero(totals[..., :Ev], totals[..., Ev:])  # (n, L, Ev) / (n, L, 1)
    return output.reshape((*batch, L, Ev))


def _flat_batch(array: np.ndarray, batch: tuple) -> np.ndarray:
    """``array`` ``(..., X, Y)`` broadcast to ``(*batch, X, Y)`` and flattened to ``(N, X, Y)``, a view if possible."""
    return np.broadcast_to(array, (*batch, *array.shape[-2:])).reshape(-1, *array.shape[-2:])


def _append_ones(array: np.ndarray, axis: int) -> np.ndarray:
    """``array`` with one more row (``axis=-2``) or column (``axis=-1``) of ones."""
    shape = list(array.shape)
    shape[axis] = 1
    return np.concatenate([array, np.ones(shape, array.dtype)], axis=axis)


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
    # An overflow to -inf in q . k - m is the right answer (exp gives 0); any other is detected and redone by the caller.
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.concatenate([query, -shift], axis=-1) @ keys_t_and_ones  # (n, L, E+1) @ (n, E+1, S) -> (n, L, S)
        return np.exp(scores, out=scores) @ value_and_ones  # (n, L, S) @ (n, S, Ev+1) -> (n, L, Ev+1)
