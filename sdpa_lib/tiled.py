"""Attention over blocks with an online softmax (the FlashAttention idea), never building L x S.

For each block of queries we walk over blocks of keys, keeping per query row a running
maximum ``m``, a running sum ``l`` of ``exp(s - m)`` and a running output ``acc``.  When
a new block raises the maximum, the old sum and output are rescaled by
``exp(m_old - m_new)``.  At the end ``acc / l`` is exactly ``softmax(S) V``.
"""
from __future__ import annotations

import numpy as np

from ._checks import check_attention_inputs, check_positive_int
from .masks import _apply_mask, _resolve_mask, check_causal_exclusive
from .scores import _scale_factor
from .softmax import _divide_where_nonzero, _minus_max

# The default block size (default_block_size): a tile holds at most 1/_TILE_FRACTION of the
# L x S scores and at most _TILE_BUDGET_BYTES for the whole batch, and a block has at least
# _MIN_BLOCK rows.  Measured by benchmarks/bench_tiled.py, which prints the default's time and
# peak memory against the direct form for L = S = 1024 .. 16384.
_TILE_FRACTION = 16
_TILE_BUDGET_BYTES = 16 * 2**20  # a 2048 x 2048 float32 tile: larger ones were no faster at L = 16384
_MIN_BLOCK = 64  # smaller tiles are dominated by Python's and BLAS's cost per tile


def default_block_size(L: int, S: int, *, itemsize: int = 4, batch: int = 1) -> int:
    """The block size :func:`tiled_attention` uses when none is given, chosen from L and S.

    The largest power of two ``b`` (and at least 64) whose score tile ``(batch, min(b, L),
    min(b, S))`` holds at most a sixteenth of the ``L x S`` scores, so that tiling saves
    memory at every length, and at most 16 MiB, beyond which larger tiles were no faster.

    Parameters
    ----------
    L, S : int
        Query and key lengths.
    itemsize : int
        Bytes per number: 4 for float32, 8 for float64.
    batch : int
        Score matrices computed together (the product of the batch axes).

    Returns
    -------
    int, a power of two, at least 64

    Examples
    --------
    >>> [default_block_size(n, n) for n in (512, 1024, 4096, 8192, 16384)]
    [128, 256, 1024, 2048, 2048]
    >>> default_block_size(16384, 16384, itemsize=8), default_block_size(4096, 4096, batch=16)
    (1024, 512)
    """
    L, S, itemsize, batch = (check_positive_int(v, n) for v, n in
                             ((L, "L"), (S, "S"), (itemsize, "itemsize"), (batch, "batch")))

    def fits(block: int) -> bool:
        tile = min(block, L) * min(block, S)
        return tile * _TILE_FRACTION <= L * S and batch * tile * itemsize <= _TILE_BUDGET_BYTES

    block = _MIN_BLOCK
    while fits(2 * block):
        block *= 2
    return block


def tiled_attention(query, key, value, attn_mask=None, *, block_size: int | None = None,
                    is_causal: bool = False, scale=None) -> np.ndarray:
    r"""Scaled dot-product attention computed block by block with an online softmax.

    Equal to :func:`~sdpa_lib.attention.scaled_dot_product_attention` (within 1e-10 in
    float64) but its working memory is ``O(block_size^2 + L * Ev)`` per batch element
    instead of ``O(L * S)``.

    Parameters
    ----------
    query : array_like, shape ``(..., L, E)``
    key : array_like, shape ``(..., S, E)``
    value : array_like, shape ``(..., S, Ev)``
    attn_mask : array_like, bool or float, broadcastable to ``(..., L, S)``, optional
        Read one ``(block, block)`` tile at a time through a broadcast view.
    block_size : int, optional
        Rows of queries and of keys per tile; need not divide L or S.  Default:
        :func:`default_block_size` for these L, S, dtype and batch (a tile of at most a
        sixteenth of the scores and 16 MiB).
    is_causal : bool
        Causal mask (top-left aligned); tiles entirely above the diagonal are skipped.
    scale : float, optional
        Default :math:`1/\sqrt{E}`.

    Returns
    -------
    ndarray, shape ``(..., L, Ev)``
        Fully masked query rows give zeros.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(5, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 3))
    >>> from sdpa_lib import scaled_dot_product_attention
    >>> bool(np.allclose(tiled_attention(q, k, v, block_size=3), scaled_dot_product_attention(q, k, v)))
    True
    """
    if block_size is not None:
        block_size = check_positive_int(block_size, "block_size")
    query, key, value = check_attention_inputs(query, key, value)
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    L, S = query.shape[-2], key.shape[-2]
    factor = _scale_factor(scale, query.dtype, query.shape[-1])
    check_causal_exclusive(attn_mask, is_causal)
    mask = _resolve_mask(attn_mask, False, (*batch, L, S))  # the causal rule is applied per tile
    if mask is not None:
        batch = np.broadcast_shapes(batch, mask.shape[:-2])
        mask = np.broadcast_to(mask, (*batch, L, S))  # a view: no L x S copy
    if block_size is None:
        block_size = default_block_size(L, S, itemsize=query.itemsize, batch=int(np.prod(batch)))
    query = np.broadcast_to(query, (*batch, L, query.shape[-1]))  # a view: every score tile gets the full batch
    output = np.empty((*batch, L, value.shape[-1]), dtype=query.dtype)  # (..., L, Ev)
    for q_start in range(0, L, block_size):
        rows = slice(q_start, min(q_start + block_size, L))
        q_block = query[..., rows, :] * factor  # (..., Lb, E)
        output[..., rows, :] = _attend_one_query_block(q_block, key, value, mask, rows, block_size, is_causal)
    return output


def _attend_one_query_block(q_block, key, value, mask, rows: slice, block_size: int, is_causal: bool):
    """Online softmax of one query block ``(..., Lb, E)`` over all key blocks -> ``(..., Lb, Ev)``."""
    S = key.shape[-2]
    batch_rows = q_block.shape[:-1]  # (..., Lb)
    running_max = np.full((*batch_rows, 1), -np.inf, dtype=q_block.dtype)  # (..., Lb, 1)
    running_sum = np.zeros((*batch_rows, 1), dtype=q_block.dtype)  # (..., Lb, 1)
    accumulator = np.zeros((*batch_rows, value.shape[-1]), dtype=q_block.dtype)  # (..., Lb, Ev)
    last_key = rows.stop if is_causal else S  # causal: keys after the block's last row are never seen
    for k_start in range(0, min(last_key, S), block_size):
        cols = slice(k_start, min(k_start + block_size, S))
        scores = q_block @ np.swapaxes(key[..., cols, :], -1, -2)  # (..., Lb, E) @ (..., E, Sb) -> (..., Lb, Sb)
        scores = _mask_tile(scores, mask, rows, cols, is_causal)
        running_max, running_sum = _fold_tile(scores, value[..., cols, :], running_max, running_sum, accumulator)
        del scores  # freed before the next tile is built, so memory holds one tile at a time
    return _divide_where_nonzero(accumulator, running_sum)  # (..., Lb, Ev) / (..., Lb, 1); NaN stays NaN


def _fold_tile(scores, value_block, running_max, running_sum, accumulator):
    """Fold a score tile ``(..., Lb, Sb)`` into the running max and sum (returned) and the accumulator (in place)."""
    new_max = np.maximum(running_max, scores.max(axis=-1, keepdims=True))  # (..., Lb, 1)
    safe_max = np.where(np.isneginf(new_max), 0, new_max)  # all-masked so far: shift by 0
    np.exp(_minus_max(scores, safe_max, out=scores), out=scores)  # (..., Lb, Sb), in place: no second tile
    rescale = np.exp(_minus_max(running_max, safe_max))  # (..., Lb, 1): shrinks the old sums if the max grew
    accumulator *= rescale
    accumulator += scores @ value_block  # (..., Lb, Sb) @ (..., Sb, Ev) -> (..., Lb, Ev)
    return new_max, running_sum * rescale + scores.sum(axis=-1, keepdims=True)


def _mask_tile(scores, mask, rows: slice, cols: slice, is_causal: bool):
    """Apply the causal rule or the ``(rows, cols)`` tile of the mask to a score tile, in place."""
    if is_causal:
        if cols.stop - 1 <= rows.start:  # the tile's last key is at or before its first query: all allowed
            return scores
        allowed = np.arange(rows.start, rows.stop)[:, None] >= np.arange(cols.start, cols.stop)  # (Lb, Sb)
        return _apply_mask(scores, allowed)
    if mask is None:
        return scores
    return _apply_mask(scores, mask[..., rows, cols])
