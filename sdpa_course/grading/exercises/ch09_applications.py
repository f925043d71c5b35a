"""Chapter 9: top-k retrieval, one causal next-word step, an alignment read from cross-attention."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from sdpa_course.lessons.applications import alignment_from_weights, top_k
from ..catalogue.applications import ALIGNMENT_MISTAKES, NEXT_TOKEN_MISTAKES, RETRIEVAL_MISTAKES
from ..draw import Draw
from ..task import Task


def retrieve(queries, documents, k):
    scores = sdpa_lib.scaled_scores(queries, documents)  # (M, N)
    return np.stack([top_k(row, k) for row in scores])  # (M, k)


def retrieve_case(d: Draw):
    """Small integer embeddings, so that many scores tie exactly; documents 1 to 3 times as long; float32 a third
    of the time."""
    M, N, E = d.size(1, 8), d.size(1, 8), d.size(1, 8)
    documents = d.rng.integers(-2, 3, size=(N, E)) * d.rng.integers(1, 4, size=(N, 1))  # (N, E)
    queries = d.rng.integers(-2, 3, size=(M, E))  # (M, E)
    dtype = d.choice([np.float64, np.float64, np.float32])
    return (queries.astype(dtype), documents.astype(dtype), d.size(1, N)), {}


def next_token_probs(x, w_q, w_k, w_v, temperature=1.0):
    logits = sdpa_lib.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, is_causal=True)  # (L, V)
    return sdpa_lib.softmax(logits / temperature, axis=-1)


def next_token_case(d: Draw):
    """One-hot or real-valued words, random projections and temperatures; 1 case in 9 has logits in the hundreds
    at temperature 0.05 (exp overflows unless the largest logit is subtracted first), 3 in 9 are float32."""
    kind = d.choice(["plain"] * 5 + ["overflowing"] + ["float32"] * 3)
    L, D, E, V = (d.size(1, 9) for _ in range(4))
    x = np.eye(D)[d.rng.integers(0, D, size=L)] if d.chance(0.5) else d.normal((L, D))  # (L, D)
    w_q, w_k, w_v = d.normal((D, E)), d.normal((D, E)), d.normal((D, V), scale=3.0)
    temperature = float(d.choice([0.3, 1.0, 2.5]))
    if kind == "overflowing":
        w_v, temperature = w_v * 300, 0.05
    dtype = np.float32 if kind == "float32" else np.float64
    return tuple(a.astype(dtype) for a in (x, w_q, w_k, w_v)), {"temperature": temperature}


def read_alignment(weights, threshold=0.0):
    return np.where(np.max(weights, axis=-1) >= threshold, alignment_from_weights(weights), -1)


def alignment_case(d: Draw):
    """Softmax rows of up to two batch axes, from flat (scale 0.1) to peaked (scale 8); L != S; float32 3 times in 8;
    1 in 4 from whole-number scores, so that a row's largest weights can tie (the smaller source index wins); 1 in 5
    with a threshold equal to some row's largest weight."""
    batch = d.batch()
    L, S = d.sizes(2, 1, 8)
    scores = d.normal((*batch, L, S), scale=d.choice([0.1, 2.0, 8.0]))  # (..., L, S)
    if d.chance(0.25):
        scores = np.round(scores)
    dtype = np.float32 if d.chance(3 / 8) else np.float64
    weights = sdpa_lib.softmax(scores).astype(dtype)
    threshold = float(d.choice([0.0, 0.3, 0.6]))
    if d.chance(0.2):  # a row whose largest weight is exactly the threshold: "at least" includes it
        threshold = float(np.max(weights.reshape(-1, S)[int(d.rng.integers(weights.size // S))]))
    return (weights,), {"threshold": threshold}


LESSONS = "sdpa_course.lessons.applications."
TASKS = (
    Task("ch09_applications", "retrieve", retrieve, retrieve_case, RETRIEVAL_MISTAKES,
         forbidden=(LESSONS + "top_k",), output_names=("indices",), count=90),
    Task("ch09_applications", "next_token_probs", next_token_probs, next_token_case, NEXT_TOKEN_MISTAKES,
         forbidden=(LESSONS + "ToyNextTokenModel",), output_names=("probabilities",), count=90),
    Task("ch09_applications", "read_alignment", read_alignment, alignment_case, ALIGNMENT_MISTAKES,
         forbidden=(LESSONS + "alignment_from_weights",), output_names=("alignment",), count=80),
)
