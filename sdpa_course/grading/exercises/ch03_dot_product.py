"""Chapter 3: dot-product scores (with loops, then vectorised), cosine scores, their split, and keys they rank apart."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.scores import COSINE_MISTAKES, DISAGREEING_PAIR_HINTS, DOT_SCORE_MISTAKES, SPLIT_MISTAKES
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
    """The student's signature, naming the argument: the keys are judged by :func:`disagreement_problem`."""
    raise NotImplementedError("graded by a property, not by an answer")


def disagreement_problem(query, keys) -> str | None:
    """What is wrong with ``keys`` = (k1, k2) for ``query``: dot must rank k1 first and cosine k2; else None."""
    if not isinstance(keys, (tuple, list)) or len(keys) != 2:
        return f"return the pair (k1, k2); got {type(keys).__name__}"
    try:
        k1, k2 = (np.asarray(k, dtype=float) for k in keys)
    except (TypeError, ValueError):
        return f"k1 and k2 should be arrays of numbers shaped like the query {query.shape}; got {keys!r}"
    for name, k in (("k1", k1), ("k2", k2)):
        if k.shape != query.shape:
            return f"{name} has shape {k.shape} but should have shape {query.shape} = (E,), the query's"
        if not np.all(np.isfinite(k)) or not np.linalg.norm(k) > 0:
            return f"{name} = {k} for query {query}: a key needs a finite, nonzero length to have a direction"
    dots = query @ k1, query @ k2
    cosines = [dot / (np.linalg.norm(query) * np.linalg.norm(k)) for dot, k in zip(dots, (k1, k2))]
    margin = 1e-6 * np.linalg.norm(query) * max(np.linalg.norm(k1), np.linalg.norm(k2))
    if dots[0] > dots[1] + margin and cosines[1] > cosines[0] + 1e-6:
        return None
    if abs(cosines[0] - cosines[1]) <= 1e-6:
        problem = "same direction"
    else:
        problem = "reversed" if dots[1] > dots[0] and cosines[0] > cosines[1] else "no disagreement"
    return (f"for query {np.round(query, 3)}: q.k1 = {dots[0]:.4g}, q.k2 = {dots[1]:.4g}, "
            f"cos(q, k1) = {cosines[0]:.4g}, cos(q, k2) = {cosines[1]:.4g}. {DISAGREEING_PAIR_HINTS[problem]}")


def query_case(d: Draw):
    """A nonzero query (E,), E in 2..64, at scale 0.01, 1 or 100."""
    scale = d.choice([0.01, 1.0, 100.0])
    return (nonzero(d.normal((d.size(2, 64),), scale=scale), scale),), {}


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
    Task("ch03_dot_product", "disagreeing_keys", disagreeing_keys, query_case, verdict=disagreement_problem, count=20),
)
