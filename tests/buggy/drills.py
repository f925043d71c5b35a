"""The coding drills' answers, as data: for each drill a right source and one with its classic slip.

``RIGHT[name]`` is a whole file that passes the drill; each :class:`DrillBug` is the same file
with one slip a learner makes under time pressure, and the text (a catalogued mistake's name)
that the grading message must contain.  ``tests/test_quiz_drills.py`` grades them.
"""
from __future__ import annotations

from typing import NamedTuple


class DrillBug(NamedTuple):
    drill: str
    id: str
    source: str
    hint: str  # must appear in the failure message


_SOFTMAX = '''
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    {body}
'''

_CAUSAL = '''
import numpy as np


def causal_sdpa(query, key, value):
    L, S = query.shape[-2], key.shape[-2]
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])  # (..., L, E) @ (..., E, S) -> (..., L, S)
    allowed = {mask}  # (L, S)
    scores = np.where(allowed, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isneginf(top), 0, top))
    total = weights.sum(axis=-1, keepdims=True)
    weights = weights / np.where(total == 0, 1, total)
    return weights @ value  # (..., L, S) @ (..., S, Ev) -> (..., L, Ev)
'''

_HEADS = '''
import numpy as np


def split_heads(x, num_heads):
    *batch, L, D = x.shape
    {split}


def merge_heads(x):
    *batch, H, L, Dh = x.shape
    return np.swapaxes(x, -3, -2).reshape(*batch, L, H * Dh)  # (..., H, L, Dh) -> (..., L, H, Dh) -> (..., L, D)
'''

_DECODE = '''
import numpy as np
from sdpa_lib import apply_rope


def decode_step(query, key_cache, value_cache, new_key, new_value):
    position = [key_cache.shape[-2]]
    query, new_key = apply_rope(query, position), apply_rope(new_key, position)
    keys = np.concatenate([key_cache, new_key], axis=-2)  # (..., S + 1, E)
    values = np.concatenate([value_cache, new_value], axis=-2)  # (..., S + 1, Ev)
    scores = query @ np.swapaxes(keys, -1, -2) / np.sqrt(query.shape[-1])  # (..., 1, S + 1)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ values, {returned}
'''

_ONLINE = '''
import numpy as np


def online_softmax_attention(query, key, value, block_size):
    query = query / np.sqrt(query.shape[-1])
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    m = np.full((*batch, query.shape[-2], 1), -np.inf)  # (..., L, 1)
    l = np.zeros((*batch, query.shape[-2], 1))  # (..., L, 1)
    acc = np.zeros((*batch, query.shape[-2], value.shape[-1]))  # (..., L, Ev)
    for start in range(0, key.shape[-2], block_size):
        block = slice(start, start + block_size)
        scores = query @ np.swapaxes(key[..., block, :], -1, -2)  # (..., L, Sb)
        new_m = np.maximum(m, scores.max(axis=-1, keepdims=True))
        tile = np.exp(scores - new_m)
        rescale = np.exp(m - new_m)
        l = {sum_update}
        acc = {acc_update}
        m = new_m
    return acc / l
'''

_PADDING = '''
import numpy as np


def padding_mask(lengths, S):
    lengths = np.asarray(lengths)
    return (np.arange(S) {compare} lengths[:, None])[:, None, :]  # (B, S) -> (B, 1, S)
'''

RIGHT = {
    "stable-softmax": _SOFTMAX.format(body="""top = np.max(x, axis=axis, keepdims=True)
    exps = np.exp(x - np.where(np.isneginf(top), 0, top))  # an all -inf slice is shifted by 0
    total = exps.sum(axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)"""),
    "causal-sdpa": _CAUSAL.format(mask="np.tril(np.ones((L, S), dtype=bool))"),
    "split-merge-heads": _HEADS.format(
        split="return np.swapaxes(x.reshape(*batch, L, num_heads, D // num_heads), -3, -2)  # (..., H, L, Dh)"),
    "decode-step": _DECODE.format(returned="keys, values"),
    "online-softmax": _ONLINE.format(sum_update="l * rescale + tile.sum(axis=-1, keepdims=True)",
                                     acc_update="acc * rescale + tile @ value[..., block, :]"),
    "padding-mask": _PADDING.format(compare="<"),
}

BUGS = [
    # exp overflows on scores near 1000 (and -inf - -inf is NaN), caught as the naive softmax.
    DrillBug("stable-softmax", "no-max", _SOFTMAX.format(body="""exps = np.exp(x)
    return exps / exps.sum(axis=axis, keepdims=True)"""), "no max subtraction"),
    DrillBug("causal-sdpa", "mask-transposed", _CAUSAL.format(mask="np.triu(np.ones((L, S), dtype=bool))"),
             "causal mask transposed (upper triangle)"),
    DrillBug("split-merge-heads", "wrong-reshape", _HEADS.format(
        split="return x.reshape(*batch, num_heads, L, D // num_heads)  # straight to (..., H, L, Dh)"),
        "heads split in the wrong order"),
    DrillBug("decode-step", "cache-forgotten", _DECODE.format(returned="key_cache, value_cache"),
             "old caches returned"),
    DrillBug("online-softmax", "no-rescale", _ONLINE.format(sum_update="l * rescale + tile.sum(axis=-1, keepdims=True)",
                                                            acc_update="acc + tile @ value[..., block, :]"),
             "running output not rescaled when the maximum grows"),
    DrillBug("padding-mask", "inverted", _PADDING.format(compare=">="), "padding mask sign flipped"),
]
