"""Chapter 4: scaled attention weights, and how peaked they are (largest weight and entropy).

``measure_score_variance`` and ``saturation_curve`` are graded by statistics in their grade
cells, not here: a case is a whole sample, whose verdict has no smaller version to shrink to.
"""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.scaling import SATURATION_MISTAKES, WEIGHT_MISTAKES
from ..draw import Draw
from ..task import Task

FLOATS = (np.float64, np.float32)


def reference_weights(x, w_q, w_k):
    return sdpa_lib.attention_weights(x @ w_q, x @ w_k)


def weights_case(d: Draw):
    """Tokens with up to two batch axes, float64 or float32, L, D, E different in 1..11; one case in five
    with tokens 8 times larger (scores in the hundreds, where a missing scale saturates softmax)."""
    dtype = d.choice(FLOATS)
    batch = d.batch(max_axes=2, high=3)
    L, D, E = d.sizes(3, 1, 11)
    x = d.normal((*batch, L, D), scale=8.0 if d.chance(0.2) else 1.0, dtype=dtype)
    return (x, d.normal((D, E), dtype=dtype), d.normal((D, E), dtype=dtype)), {}


def reference_peakedness(query, key, scaled=True):
    weights = sdpa_lib.attention_weights(query, key, scale=None if scaled else 1.0)
    return weights.max(axis=-1), sdpa_lib.entropy(weights)


def peakedness_case(d: Draw):
    """Queries and keys at scale 1, 3 or 20 (20 saturates: weights of exactly 0, where 0 log 0 = 0), scaled or not."""
    query, key, _ = d.attention_inputs(scale=d.choice([1.0, 3.0, 20.0]))
    return (query, key), {"scaled": d.chance(0.5)}


WEIGHT_FORBIDDEN = ("attention_weights", "scaled_scores", "scaled_dot_product_attention")
TASKS = (
    Task("ch04_scaling", "scaled_attention_weights", reference_weights, weights_case, WEIGHT_MISTAKES,
         forbidden=WEIGHT_FORBIDDEN, count=30),
    Task("ch04_scaling", "max_weight_and_entropy", reference_peakedness, peakedness_case, SATURATION_MISTAKES,
         forbidden=("entropy", "attention_weights", "scaled_dot_product_attention"),
         output_names=("max_weight", "entropy"), count=16),
)
