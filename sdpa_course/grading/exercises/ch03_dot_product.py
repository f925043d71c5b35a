"""Chapter 3: dot-product scores (with loops, then vectorised), cosine scores, their split, and keys they rank apart."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.applications import disagreeing_keys_problem
from ..catalogue.scores import COSINE_MISTAKES, DOT_SCORE_MISTAKES, SPLIT_MISTAKES
from ..draw import Draw
from ..task import Task

FLOATS = (np.float64, np.float32)
SCALES = (0.1, 1.0, 30.0)


def nonzero(vectors: np.ndarray, length: float) -> np.ndarray:
    """``vectors (..., E)`` with each all-zero vector (rounding at small sizes can make one) given ``length`` along axis 0."""
    zero = ~np.any(vectors, axis=-1)
    vectors[zero, 0] = length
    return vectors


def scores_case(d: Draw, *, batched: bool = True, dtype=np.float64):
    """``query (..., L, E)`` and ``key (..., S, E)`` at one scale of 0.1, 1 or 30; L, S, E different in 1..9."""
    batch = d.batch(max_axes=2, high=3) if batched else ()
    L, S, E = d.sizes(3, 1, 9)
    scale = d.choice(SCALES)
    return tuple(d.normal((*batch, n, E), scale=scale, dtype=dtype) for n in (L, S)), {}


def loops_case(d: Draw):
    """Matrices without batch axes, float64 (the loops are written for 2-D inputs)."""
    return scores_case(d, batched=False)


def batched_scores_case(d: Draw):
    return scores_case(d, dtype=d.choice(FLOATS))


def cosine_case(d: Draw):
    """Batched scores inputs; a zero key (cosine 0 with every query) in two cases of five, so that 15 cases
    almost surely hold one (the hidden test had 3 such cases of 15)."""
    (query, key), kwargs = scores_case(d)
    if d.chance(0.4):
        key[..., 0, :] = 0.0
    return (query, key), kwargs


def reference_split(q, k):
    norm_product = np.linalg.norm(q, axis=-1) * np.linalg.norm(k, axis=-1)
    return norm_product, np.einsum("...e,...e->...", q, k) / norm_product


def split_case(d: Draw):
    """Pairs of nonzero vectors (..., E), E in 2..19, q at scale 0.1, 1 or 10."""
    shape = (*d.batch(max_axes=2, high=3), d.size(2, 19))
    scale = d.choice([0.1, 1.0, 10.0])
    return (nonzero(d.normal(shape, scale=scale), scale), nonzero(d.normal(shape), 1.0)), {}


def disagreeing_keys(query):
    """The student's signature, naming the argument: the keys are judged by the verdict of the catalogue."""
    raise NotImplementedError("graded by a property, not by an answer")


def query_case(d: Draw):
    """A nonzero query (E,), E = 2 to 64 (2 and 3 often), of length about 1e-3, 1 or 1e3: random, along one axis
    (either sign), or with every feature +1 or -1, where no axis is nearly orthogonal to it.

    Chapter 11's counterexample of the same property draws its queries here too.
    """
    E = d.choice([2, 3, d.size(2, 64), d.size(2, 64)])
    kind = d.choice(["random", "random", "axis", "signs"])
    if kind == "random":
        q = d.normal(E)  # (E,)
    elif kind == "axis":
        q = np.eye(E)[d.rng.integers(E)] * d.choice([-1.0, 1.0])
    else:
        q = d.rng.choice([-1.0, 1.0], size=E)
    return (nonzero(q, 1.0) * d.choice([1e-3, 1.0, 1e3]),), {}


SCORE_FORBIDDEN = ("dot_product_scores", "scaled_scores")
TASKS = (
    Task("ch03_dot_product", "dot_scores_loops", sdpa_lib.dot_product_scores, loops_case, DOT_SCORE_MISTAKES,
         forbidden=SCORE_FORBIDDEN, count=10),
    Task("ch03_dot_product", "dot_scores", sdpa_lib.dot_product_scores, batched_scores_case, DOT_SCORE_MISTAKES,
         forbidden=SCORE_FORBIDDEN, count=24),
    Task("ch03_dot_product", "cosine_scores", sdpa_lib.cosine_scores, cosine_case, COSINE_MISTAKES,
         forbidden=("cosine_scores",), quiet=True, count=15),
    Task("ch03_dot_product", "norms_and_cosine", reference_split, split_case, SPLIT_MISTAKES,
         forbidden=("cosine_scores",), output_names=("norm_product", "cosine"), count=12),
    Task("ch03_dot_product", "disagreeing_keys", disagreeing_keys, query_case, verdict=disagreeing_keys_problem, count=20),
)
