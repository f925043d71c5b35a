"""Chapter 10: the seed's demo as one function, then batched and masked, then a batch of padded sentences."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from sdpa_lib import causal_mask, combine_masks, padding_mask
from ..catalogue.applications import BATCHED_MISTAKES, PADDED_MISTAKES, SEED_DEMO_MISTAKES
from ..draw import FULL, Draw
from ..task import Task

ATTENTION = ("scaled_dot_product_attention", "attention_weights", "tiled_attention")
SEED_ATTENTION = "sdpa_course.lessons.seed_code.scaled_dot_product_attention"


def seed_attention(X, W_q, W_k, W_v):
    return sdpa_lib.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, return_weights=True)


def seed_case(d: Draw):
    """One sentence, L, D, E, Ev distinct (so d_model != d_k); float32 3 times in 8; 1 in 8 has words 30 times
    longer, scores in the hundreds or more (float64: exp overflows unless each row's maximum is subtracted first)."""
    kind = d.choice(["plain"] * 4 + ["long words"] + ["float32"] * 3)
    L, D, E, Ev = d.sizes(4, 1, 9)
    X, W_q, W_k, W_v = d.normal((L, D)), d.normal((D, E)), d.normal((D, E)), d.normal((D, Ev))
    if kind == "long words":
        X = X * 30
    dtype = np.float32 if kind == "float32" else np.float64
    return tuple(a.astype(dtype) for a in (X, W_q, W_k, W_v)), {}


def attention(q, k, v, mask=None):
    return sdpa_lib.scaled_dot_product_attention(q, k, v, mask, return_weights=True)


def attention_case(d: Draw):
    """Up to two batch axes, L in {1, 2, 5, 7}, scores up to 30 times larger in float64 (4 in float32), and no mask,
    a causal one, a random (..., L, S) one or a sparse random (L, S) one (rows fully masked); float32 2 times in 5."""
    dtype = np.float32 if d.chance(0.4) else np.float64
    scales = [1.0, 4.0, 30.0] if dtype == np.float64 else [1.0, 4.0]  # float32 rounding grows with the scores
    scale = float(d.choice(scales))
    batch = d.batch()
    fixed = {"L": d.choice([1, 2, 5, 7])} if d.level == FULL else {}  # smaller cases draw L like the other sizes
    q, k, v = d.attention_inputs(batch=batch, dtype=dtype, scale=scale, **fixed)
    L, S = q.shape[-2], k.shape[-2]
    mask = d.choice([None, causal_mask(L, S), d.rng.random((*batch, L, S)) < 0.6, d.rng.random((L, S)) < 0.3])
    return (q, k, v), ({} if mask is None else {"mask": mask})


def padded_causal_self_attention(X, lengths, W_q, W_k, W_v):
    mask = combine_masks(causal_mask(X.shape[-2]), padding_mask(lengths, X.shape[-2]))  # (B, L, S)
    return sdpa_lib.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)


def padded_case(d: Draw):
    """B, L, D, E, Ev distinct; every sentence 1 to L words long; float32 3 times in 7."""
    B, L, D, E, Ev = d.sizes(5, 1, 9)
    dtype = np.float32 if d.chance(3 / 7) else np.float64
    X, W_q, W_k, W_v = (d.normal(shape, dtype=dtype) for shape in ((B, L, D), (D, E), (D, E), (D, Ev)))
    return (X, d.rng.integers(1, L + 1, size=B), W_q, W_k, W_v), {}


TASKS = (
    Task("ch10_python_demo", "seed_attention", seed_attention, seed_case, SEED_DEMO_MISTAKES,
         forbidden=(*ATTENTION, SEED_ATTENTION), output_names=("output", "weights"), count=80),
    Task("ch10_python_demo", "attention", attention, attention_case, BATCHED_MISTAKES,
         forbidden=(*ATTENTION, "softmax", "log_softmax", "logsumexp", SEED_ATTENTION),
         output_names=("output", "weights"), count=100),
    Task("ch10_python_demo", "padded_causal_self_attention", padded_causal_self_attention, padded_case,
         PADDED_MISTAKES, forbidden=(*ATTENTION, "MultiHeadAttention"), count=70),
)
