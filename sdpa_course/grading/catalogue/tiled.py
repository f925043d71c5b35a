"""Named wrong answers for chapter 7: cost counts and the online softmax over key blocks."""
from __future__ import annotations

import numpy as np

from ..mistakes import Mistake


def _online(query, key, value, block_size, *, rescale_sum=True, rescale_output=True, use_max=True,
            drop_tail=False, per_block=False):
    """Online softmax attention over key blocks, with switches that reproduce each mistake."""
    scale = 1 / np.sqrt(query.shape[-1])
    S = key.shape[-2]
    stop = S - S % block_size if drop_tail else S
    running_max = np.full((*query.shape[:-1], 1), -np.inf)  # (..., L, 1)
    running_sum = np.zeros((*query.shape[:-1], 1))  # (..., L, 1)
    output = np.zeros((*query.shape[:-1], value.shape[-1]))  # (..., L, Ev)
    for start in range(0, stop, block_size):
        block = (query @ np.swapaxes(key[..., start:start + block_size, :], -1, -2)) * scale  # (..., L, Sb)
        new_max = np.maximum(running_max, block.max(axis=-1, keepdims=True)) if use_max else np.zeros_like(running_max)
        tile = np.exp(block - new_max)  # (..., L, Sb)
        if per_block:  # each block normalised on its own, block outputs added
            output = output + tile / tile.sum(axis=-1, keepdims=True) @ value[..., start:start + block_size, :]
            continue
        rescale = np.exp(running_max - new_max) if use_max else 1.0
        running_sum = running_sum * (rescale if rescale_sum else 1.0) + tile.sum(axis=-1, keepdims=True)
        output = output * (rescale if rescale_output else 1.0) + tile @ value[..., start:start + block_size, :]
        running_max = new_max
    return output if per_block else output / running_sum


ONLINE_SOFTMAX_MISTAKES = (
    Mistake("running sum not rescaled when the maximum grows", lambda *a: _online(*a, rescale_sum=False),
            "The sum so far was computed as sum(exp(s - m_old)); when the maximum becomes m_new, multiply it by "
            "exp(m_old - m_new) before adding the new block's sum."),
    Mistake("running output not rescaled when the maximum grows", lambda *a: _online(*a, rescale_output=False),
            "The accumulated output is sum(exp(s - m_old) v): multiply it by exp(m_old - m_new) too, exactly "
            "like the running sum."),
    Mistake("each block normalised on its own", lambda *a: _online(*a, per_block=True),
            "A block's softmax only knows that block's keys. Keep the unnormalised sum and output across "
            "blocks and divide once, at the end."),
    Mistake("last partial block dropped", lambda *a: _online(*a, drop_tail=True),
            "When block_size does not divide S the last block is shorter: loop with range(0, S, block_size) "
            "and slice key[..., start:start + block_size, :] (slicing past the end is fine)."),
    Mistake("no running maximum", lambda *a: _online(*a, use_max=False),
            "Exp of large scores overflows to inf and inf/inf is NaN: keep a running maximum per query and "
            "rescale when it grows."),
)

FLOP_MISTAKES = (
    Mistake("counted a multiply-add as one operation", lambda L, S, E, Ev: L * S * E + L * S * Ev,
            "Each of the E terms of a dot product is one multiply and one add: Q K^T costs 2 L S E."),
    Mistake("forgot the weights @ V product", lambda L, S, E, Ev: 2 * L * S * E,
            "There are two matrix products: Q K^T (2 L S E) and weights @ V (2 L S Ev)."),
    Mistake("used E for the value width", lambda L, S, E, Ev: 4 * L * S * E,
            "weights @ V is (L, S) @ (S, Ev): it costs 2 L S Ev, and Ev need not equal E."),
    Mistake("counted L x L instead of L x S", lambda L, S, E, Ev: 2 * L * L * (E + Ev),
            "The score matrix has one entry per (query, key) pair: L x S, not L x L."),
)


def _bytes(L, S, *, batch=1, heads=1, dtype=np.float32):
    return batch * heads * L * S * np.dtype(dtype).itemsize


SCORE_BYTES_MISTAKES = (
    Mistake("counted elements, not bytes", lambda L, S, **kw: _bytes(L, S, **{**kw, "dtype": np.int8}),
            "Multiply the element count by the bytes per element: np.dtype(dtype).itemsize (4 for float32, "
            "8 for float64)."),
    Mistake("assumed 4 bytes per element", lambda L, S, **kw: _bytes(L, S, **{**kw, "dtype": np.float32}),
            "Use np.dtype(dtype).itemsize: float64 takes 8 bytes, float16 2."),
    Mistake("forgot the heads", lambda L, S, **kw: _bytes(L, S, **{**kw, "heads": 1}),
            "Every head has its own (L, S) score matrix: multiply by heads as well as batch."),
    Mistake("forgot the batch", lambda L, S, **kw: _bytes(L, S, **{**kw, "batch": 1}),
            "Every sequence of the batch has its own score matrices: multiply by batch."),
)
