"""Chapter 2: the three projections and their parameter count.

``init_projection`` is graded by the statistics of many draws in its grade cell, not here:
a case is a whole sample, whose verdict has no smaller version to shrink to.
"""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.projections import PARAMETER_COUNT_MISTAKES, PROJECT_QKV_MISTAKES
from ..draw import Draw
from ..task import Task

FLOATS = (np.float64, np.float32)


def projection_case(d: Draw):
    """Tokens with up to two batch axes, float64 or float32; L, D, E, Ev different in 1..11."""
    dtype = d.choice(FLOATS)
    batch = d.batch(max_axes=2, high=3)
    L, D, E, Ev = d.sizes(4, 1, 11)
    x = d.normal((*batch, L, D), dtype=dtype)
    return (x, *(d.normal((D, n), dtype=dtype) for n in (E, E, Ev))), {}


def parameter_count(d_model, d_k, d_v, bias=True):
    """Weights of W_Q, W_K (d_model, d_k) and W_V (d_model, d_v), and one bias per output feature if ``bias``."""
    return d_model * (2 * d_k + d_v) + bool(bias) * (2 * d_k + d_v)


def count_case(d: Draw):
    """d_model in 1..2047, d_k and d_v in 1..255, with or without biases."""
    return (d.size(1, 2047), d.size(1, 255), d.size(1, 255)), {"bias": d.chance(0.5)}


TASKS = (
    Task("ch02_qkv", "project_qkv", sdpa_lib.project_qkv, projection_case, PROJECT_QKV_MISTAKES,
         forbidden=("project_qkv",), output_names=("q", "k", "v"), count=24),
    Task("ch02_qkv", "qkv_parameter_count", parameter_count, count_case, PARAMETER_COUNT_MISTAKES, exact=True, count=20),
)
