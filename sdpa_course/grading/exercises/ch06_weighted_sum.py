"""Chapter 6: the attention output (the weighted sum of values), the head split and merge, multi-head attention."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.attention import ATTENTION_MISTAKES
from ..catalogue.heads import MERGE_HEADS_MISTAKES, MHA_MISTAKES, SPLIT_HEADS_MISTAKES
from ..draw import Draw
from ..task import Task
from ._attention_draws import FLOATS, attention_scale, special_lengths

HEADS_FORBIDDEN = ("split_heads", "merge_heads", "MultiHeadAttention")
# multi_head_attention leaves attention_weights available: the correct attention_output that stands in for the
# student's while it is graded calls it.  (In the sandbox every name the notebook forbids is absent throughout.)


def output_case(d: Draw):
    """query, key, value with up to 2 batch axes, float64 (a third at scale 30: scores near 1000) or float32;
    L = 1 in 5 cases of 37, L = S in 2 of 37 (a transposed weight matrix then has the right shape)."""
    dtype = d.choice(FLOATS)
    scale = attention_scale(d, dtype, (1.0, 1.0, 30.0))
    lengths = special_lengths(d, one_query=5 / 37, square=2 / 37, high=5)
    return d.attention_inputs(dtype=dtype, scale=scale, **lengths), {}


def split_case(d: Draw):
    """x of shape (..., L, H * Dh), H in 1..5, Dh in 1..4, L in 1..7, float32 or float64; and H."""
    heads, head_dim = d.size(1, 5), d.size(1, 4)
    batch, length = d.batch(), d.size(1, 7)
    return (d.normal((*batch, length, heads * head_dim), dtype=d.choice(FLOATS)), heads), {}


def merge_case(d: Draw):
    """x of shape (..., H, L, Dh), each of H, L, Dh in 1..6, float32 or float64."""
    shape = (*d.batch(), d.size(1, 6), d.size(1, 6), d.size(1, 6))
    return (d.normal(shape, dtype=d.choice(FLOATS)),), {}


def reference_mha(x_query, x_kv, w_q, w_k, w_v, w_o, num_heads):
    """sdpa_lib.MultiHeadAttention holding the given weights."""
    mha = sdpa_lib.MultiHeadAttention(w_q.shape[0], num_heads, np.random.default_rng(0), dtype=w_q.dtype)
    mha.w_q, mha.w_k, mha.w_v, mha.w_o = w_q, w_k, w_v, w_o
    return mha(x_query, x_kv)


def mha_case(d: Draw):
    """x_query (..., L, D), x_kv (..., S, D), four (D, D) weights of scale 1/sqrt(D); L, S, Dh in 1..5, H in 2..5."""
    batch = d.batch()
    L, S, heads, head_dim = d.size(1, 5), d.size(1, 5), max(d.size(1, 5), 2), d.size(1, 5)
    dtype = d.choice(FLOATS)
    D = heads * head_dim
    arrays = [d.normal((*batch, L, D)), d.normal((*batch, S, D))]
    arrays += [d.normal((D, D), scale=1 / np.sqrt(D)) for _ in range(4)]
    return tuple(a.astype(dtype) for a in arrays) + (heads,), {}


TASKS = (
    Task("ch06_weighted_sum", "attention_output", sdpa_lib.scaled_dot_product_attention, output_case,
         ATTENTION_MISTAKES, forbidden=("scaled_dot_product_attention", "attention_weights", "tiled_attention",
                                        "MultiHeadAttention"), count=74),
    Task("ch06_weighted_sum", "split_heads", sdpa_lib.split_heads, split_case, SPLIT_HEADS_MISTAKES,
         forbidden=HEADS_FORBIDDEN, count=40),
    Task("ch06_weighted_sum", "merge_heads", sdpa_lib.merge_heads, merge_case, MERGE_HEADS_MISTAKES,
         forbidden=HEADS_FORBIDDEN, count=40),
    Task("ch06_weighted_sum", "multi_head_attention", reference_mha, mha_case, MHA_MISTAKES,
         forbidden=HEADS_FORBIDDEN + ("scaled_dot_product_attention", "tiled_attention"), count=50,
         helpers={"split_heads": sdpa_lib.split_heads, "merge_heads": sdpa_lib.merge_heads,
                  "attention_output": sdpa_lib.scaled_dot_product_attention}),
)
