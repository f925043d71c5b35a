"""Named wrong answers for split_heads, merge_heads and multi-head attention (chapter 6)."""
from __future__ import annotations

import numpy as np

from sdpa_lib.attention import scaled_dot_product_attention as _attention
from sdpa_lib.heads import merge_heads as _merge
from sdpa_lib.heads import split_heads as _split
from ..mistakes import Mistake


def _split_without_transpose(x, num_heads):
    *batch, length, d_model = x.shape
    return x.reshape(*batch, num_heads, length, d_model // num_heads)  # (..., H, L, Dh) but rows scrambled


def _split_interleaved(x, num_heads):
    *batch, length, d_model = x.shape
    x = x.reshape(*batch, length, d_model // num_heads, num_heads)  # head h takes features h, h+H, ...
    return np.moveaxis(x, -1, -3)  # (..., L, Dh, H) -> (..., H, L, Dh)


def _split_no_swap(x, num_heads):
    *batch, length, d_model = x.shape
    return x.reshape(*batch, length, num_heads, d_model // num_heads)  # (..., L, H, Dh)


SPLIT_HEADS_MISTAKES = (
    Mistake("heads split in the wrong order (reshape straight to (H, L, Dh))", _split_without_transpose,
            "A reshape keeps the memory order, so (L, D) -> (H, L, Dh) mixes positions between heads. "
            "Reshape to (..., L, H, Dh) first (each position's features cut into H blocks), then swap the "
            "L and H axes: np.swapaxes(x, -3, -2)."),
    Mistake("heads interleaved (head h takes features h, h+H, ...)", _split_interleaved,
            "Head h owns the contiguous block of features h*Dh .. (h+1)*Dh - 1: reshape to (..., L, H, Dh), "
            "not (..., L, Dh, H)."),
    Mistake("forgot to move the heads axis before L", _split_no_swap,
            "(..., L, H, Dh) is the right split but the wrong layout: attention runs per head over L, so the "
            "result must be (..., H, L, Dh); swap axes -3 and -2."),
)


def _merge_without_transpose(x):
    *batch, num_heads, length, head_dim = x.shape
    return x.reshape(*batch, length, num_heads * head_dim)


def _merge_interleaved(x):
    *batch, num_heads, length, head_dim = x.shape
    return np.moveaxis(x, -3, -1).reshape(*batch, length, num_heads * head_dim)  # (..., L, Dh, H) -> (..., L, D)


MERGE_HEADS_MISTAKES = (
    Mistake("heads merged in the wrong order (reshape without the transpose)", _merge_without_transpose,
            "Undo split_heads step by step: swap the H and L axes back to (..., L, H, Dh), then reshape to "
            "(..., L, H*Dh) so each position gets its heads' features side by side."),
    Mistake("heads interleaved when merging", _merge_interleaved,
            "Head h's features go to the contiguous block h*Dh .. (h+1)*Dh - 1: the merge order is "
            "(..., L, H, Dh) -> (..., L, H*Dh), not (..., L, Dh, H)."),
)


def _mha(x_query, x_kv, w_q, w_k, w_v, w_o, num_heads, *, split=_split, merge=_merge, scale=None, project=True):
    q, k, v = split(x_query @ w_q, num_heads), split(x_kv @ w_k, num_heads), split(x_kv @ w_v, num_heads)
    heads = _attention(q, k, v, scale=scale)  # (..., H, L, Dh)
    merged = merge(heads)  # (..., L, D)
    return merged @ w_o if project else merged


MHA_MISTAKES = (
    Mistake("forgot the output projection W_O",
            lambda *args: _mha(*args, project=False),
            "After merging the heads, multiply by W_O: it mixes the heads' outputs, "
            "(..., L, H*Dh) @ (H*Dh, D) -> (..., L, D)."),
    Mistake("scaled by sqrt(D) instead of sqrt(D/H)",
            lambda *args: _mha(*args, scale=1 / np.sqrt(args[2].shape[1])),
            "Each head computes q . k over its own Dh = D/H features, so its scale is 1/sqrt(Dh), "
            "not 1/sqrt(D)."),
    Mistake("one head of full width (no split)",
            lambda *args: _mha(*args[:6], 1),
            "Split Q, K and V into num_heads heads of width D/H, attend within each head, then merge."),
    Mistake("heads split in the wrong order (reshape straight to (H, L, Dh))",
            lambda *args: _mha(*args, split=_split_without_transpose, merge=_merge_without_transpose),
            "Reshape to (..., L, H, Dh) then swap axes to (..., H, L, Dh); a direct reshape to (H, L, Dh) "
            "mixes positions between heads."),
)
