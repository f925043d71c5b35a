"""Chapter 11: counterexamples to two misconceptions (graded by their property) and two measurements."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.applications import (MEAN_MAX_MISTAKES, SHARE_OUTSIDE_MISTAKES, disagreeing_keys_problem,
                                      misleading_values_problem)
from ..draw import FULL, Draw
from ..task import Task
from .ch03_dot_product import query_case


def disagreeing_keys(q):
    """The learner's signature, to name the argument: a counterexample has no one answer (see the verdict)."""


def share_outside_unit_interval(q, k):
    scores = np.einsum("ne,ne->n", q, k) / np.sqrt(q.shape[-1])  # (n,)
    return float(np.mean((scores < 0) | (scores > 1)))


def pairs_case(d: Draw):
    """n = 1 to 299 pairs of E = 1 to 299 features, float64 only, values not rounded at any size: a score within
    rounding of 0 or 1 (float32, or one-decimal values) could fall on either side depending on the order of the sum."""
    n, E = d.size(1, 299), d.size(1, 299)
    return (d.rng.normal(size=(n, E)), d.rng.normal(size=(n, E))), {}


def mean_max_weight(query, key, scaled=True):
    return float(np.mean(np.max(sdpa_lib.attention_weights(query, key, scale=None if scaled else 1.0), axis=-1)))


def saturation_case(d: Draw):
    """Up to two batch axes, E in {2, 3, 16, 100}, scales 0.5 to 30 (scores far past exp's range: an unshifted
    softmax overflows), scaled or not; float32 3 times in 8."""
    dtype = np.float32 if d.chance(3 / 8) else np.float64
    fixed = {"E": d.choice([2, 3, 16, 100])} if d.level == FULL else {}  # smaller cases draw E like the other sizes
    q, k, _ = d.attention_inputs(dtype=dtype, scale=float(d.choice([0.5, 1.0, 3.0, 30.0])), **fixed)
    return (q, k), {"scaled": d.chance(0.5)}


def misleading_values(weights):
    """The learner's signature, to name the argument: a counterexample has no one answer (see the verdict)."""


def weights_case(d: Draw):
    """One query's weights over S = 3 to 12 keys, from nearly uniform (scale 0.1) to peaked (scale 3)."""
    return (sdpa_lib.softmax(d.normal(d.size(3, 12), scale=d.choice([0.1, 1.0, 3.0]))),), {}


TASKS = (
    Task("ch11_misconceptions", "disagreeing_keys", disagreeing_keys, query_case, verdict=disagreeing_keys_problem,
         output_names=("k1", "k2")),
    Task("ch11_misconceptions", "share_outside_unit_interval", share_outside_unit_interval, pairs_case,
         SHARE_OUTSIDE_MISTAKES, output_names=("share",)),
    Task("ch11_misconceptions", "mean_max_weight", mean_max_weight, saturation_case, MEAN_MAX_MISTAKES,
         forbidden=("attention_weights", "scaled_dot_product_attention", "tiled_attention"),
         output_names=("mean largest weight",), count=80),
    Task("ch11_misconceptions", "misleading_values", misleading_values, weights_case, verdict=misleading_values_problem,
         output_names=("values",)),
)
