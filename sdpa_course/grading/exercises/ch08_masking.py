"""Chapter 8: the causal and padding masks, masked attention and cross-attention.

cross_attention leaves attention_weights available: the correct masked_attention that stands
in for the student's while it is graded calls it.  "The mask must be bool" is checked in the
grade cells of the two masks, not here: values compare equal whether a mask is bool or 0/1,
and the dtype message of a task (``keep_dtype``) speaks of floats.
"""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.masks import (CAUSAL_MASK_MISTAKES, CROSS_ATTENTION_MISTAKES, MASKED_ATTENTION_MISTAKES,
                               PADDING_MASK_MISTAKES)
from ..draw import Draw
from ..task import Task
from ._attention_draws import FLOATS, attention_scale, special_lengths

ATTENTION_FORBIDDEN = ("scaled_dot_product_attention", "attention_weights", "tiled_attention")


def causal_case(d: Draw):
    """L and S in 1..39; in one case of 31, S left out (S = L)."""
    L = d.size(1, 39)
    return ((L,), {}) if d.chance(1 / 31) else ((L, d.size(1, 39)), {})


def padding_case(d: Draw):
    """B in 1..5 lengths, in 0..S (an empty sequence, a full one), padded to S in 1..19."""
    S, B = d.size(1, 19), d.size(1, 5)
    return (d.rng.integers(0, S + 1, size=B), S), {}


def random_mask(d: Draw, batch: tuple, L: int, S: int) -> np.ndarray:
    """A third each: random (60% True) with one fully masked query row, causal (L, S), padding (..., 1, S)."""
    kind = d.choice(("random", "causal", "padding"))
    if kind == "random":
        mask = d.rng.random((*batch, L, S)) < 0.6
        mask[..., int(d.rng.integers(L)), :] = False  # a query that may see no key
        return mask
    if kind == "causal":
        return np.tril(np.ones((L, S), dtype=bool))  # top-left aligned
    return np.arange(S) < d.rng.integers(0, S + 1, size=(*batch, 1, 1))  # padding, broadcast over the queries


def masked_case(d: Draw):
    """query, key, value and a mask: float64 (half at scale 30, scores near 1000) or float32; L = 1 in one case
    of 32, L = S = 2..5 in another."""
    dtype = d.choice(FLOATS)
    scale = attention_scale(d, dtype, (1.0, 30.0))
    batch = d.batch()
    query, key, value = d.attention_inputs(batch=batch, dtype=dtype, scale=scale,
                                           **special_lengths(d, one_query=1 / 32, square=1 / 32, high=5))
    return (query, key, value, random_mask(d, batch, query.shape[-2], key.shape[-2])), {}


def reference_cross(x_dec, x_enc, w_q, w_k, w_v, enc_lengths):
    """Attention of the decoder's queries over the encoder's keys and values, its padding masked."""
    mask = sdpa_lib.padding_mask(enc_lengths, x_enc.shape[-2])  # (B, 1, S)
    query, key, value = x_dec @ w_q, x_enc @ w_k, x_enc @ w_v  # (B, L, D) @ (D, E) -> (B, L, E); (B, S, E), (B, S, Ev)
    return sdpa_lib.scaled_dot_product_attention(query, key, value, mask)  # (B, L, Ev)


def cross_case(d: Draw):
    """B, L, S, D, E, Ev each in 1..7; encoder lengths in 0..S; float64 in 30 cases of 50, float32 in 20."""
    B, L, S, D, E, Ev = (d.size(1, 7) for _ in range(6))
    dtype = np.float64 if d.chance(30 / 50) else np.float32
    arrays = (d.normal((B, L, D)), d.normal((B, S, D)), d.normal((D, E)), d.normal((D, E)), d.normal((D, Ev)))
    return tuple(a.astype(dtype) for a in arrays) + (d.rng.integers(0, S + 1, size=B),), {}


TASKS = (
    Task("ch08_masking", "causal_mask", sdpa_lib.causal_mask, causal_case, CAUSAL_MASK_MISTAKES,
         forbidden=("causal_mask",), exact=True, keep_dtype=True, count=31),
    Task("ch08_masking", "padding_mask", sdpa_lib.padding_mask, padding_case, PADDING_MASK_MISTAKES,
         forbidden=("padding_mask",), exact=True, keep_dtype=True, count=30),
    Task("ch08_masking", "masked_attention", sdpa_lib.scaled_dot_product_attention, masked_case,
         MASKED_ATTENTION_MISTAKES, forbidden=ATTENTION_FORBIDDEN, quiet=True, count=64),
    Task("ch08_masking", "cross_attention", reference_cross, cross_case, CROSS_ATTENTION_MISTAKES,
         forbidden=("scaled_dot_product_attention", "padding_mask", "causal_mask"), count=50,
         helpers={"masked_attention": sdpa_lib.scaled_dot_product_attention, "padding_mask": sdpa_lib.padding_mask}),
)
