"""Chapter 7: attention one query at a time, its cost in operations and bytes, the online softmax over key blocks.

The memory checks of the grade cells (no L x S score matrix allocated) are not comparisons
with a reference; they stay in the cells (:func:`~sdpa_course.grading.memory.expect_no_score_matrix`).
"""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.attention import ATTENTION_MISTAKES
from ..catalogue.tiled import FLOP_MISTAKES, ONLINE_SOFTMAX_MISTAKES, SCORE_BYTES_MISTAKES
from ..draw import Draw
from ..task import Task
from ._attention_draws import attention_scale, special_lengths

FORBIDDEN = ("scaled_dot_product_attention", "attention_weights", "tiled_attention")
COST_FORBIDDEN = ("attention_flops", "attention_memory_bytes")
BYTE_DTYPES = (np.float16, np.float32, np.float64)


def rows_case(d: Draw):
    """query, key, value: float64 in 27 cases of 52 (half of them at scale 30, scores near 1000; one with L = 1,
    one with L = S), float32 in the others."""
    if d.chance(27 / 52):
        lengths = special_lengths(d, one_query=1 / 27, square=1 / 27, high=4)
        return d.attention_inputs(scale=attention_scale(d, np.float64, (1.0, 30.0)), **lengths), {}
    return d.attention_inputs(dtype=np.float32), {}


def flops_case(d: Draw):
    """L, S, E, Ev in 1..4999."""
    return tuple(d.size(1, 4999) for _ in range(4)), {}


def reference_bytes(L, S, batch=1, heads=1, dtype=np.float32):
    """The bytes of the (batch, heads, L, S) score matrices, by sdpa_lib.attention_memory_bytes."""
    return sdpa_lib.attention_memory_bytes(L, S, 1, 1, dtype=dtype, batch=batch * heads)["intermediate"]


def bytes_case(d: Draw):
    """L, S in 1..4999; batch and heads in 2..63 (so that forgetting either shows); float16, 32 or 64."""
    L, S = d.size(1, 4999), d.size(1, 4999)
    return (L, S), {"batch": d.size(2, 63), "heads": d.size(2, 63), "dtype": d.choice(BYTE_DTYPES)}


def direct_attention(query, key, value, block_size):
    """What the online softmax must equal: attention computed directly (the block size changes nothing)."""
    return sdpa_lib.scaled_dot_product_attention(query, key, value)


def online_case(d: Draw):
    """query, key, value with S in 1..29 and a block size in 1..S + 2 (dividing S or not, or exceeding it):
    float64 in 40 cases of 65 (half of them at scale 40, scores near 1000), float32 in the others."""
    dtype = np.float64 if d.chance(40 / 65) else np.float32
    S = d.size(1, 29)
    inputs = d.attention_inputs(S=S, dtype=dtype, scale=attention_scale(d, dtype, (1.0, 40.0)))
    return inputs + (d.size(1, S + 2),), {}


TASKS = (
    Task("ch07_parallelism", "attention_row_by_row", sdpa_lib.scaled_dot_product_attention, rows_case,
         ATTENTION_MISTAKES, forbidden=FORBIDDEN, count=52),
    Task("ch07_parallelism", "attention_flop_count", sdpa_lib.attention_flops, flops_case, FLOP_MISTAKES,
         forbidden=COST_FORBIDDEN, exact=True, count=30),
    Task("ch07_parallelism", "score_matrix_bytes", reference_bytes, bytes_case, SCORE_BYTES_MISTAKES,
         forbidden=COST_FORBIDDEN, exact=True, count=30),
    Task("ch07_parallelism", "online_softmax_attention", direct_attention, online_case, ONLINE_SOFTMAX_MISTAKES,
         forbidden=FORBIDDEN, count=65),
)
