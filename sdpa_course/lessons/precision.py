"""Chapter 13, precision: float16 and bfloat16 in numpy, and attention weights computed in them as scores grow.

numpy has float16 but no bfloat16, so :func:`to_bfloat16` rounds float32 to bfloat16's 8 bits of
mantissa (round to nearest, ties to even, as hardware converts) and keeps the result in float32.
:func:`attention_weights_in` then emulates a kernel that stores its scores and runs its softmax in a
given format; :func:`precision_sweep` compares the recipes of the chapter on scores that grow: all in
float16, all in bfloat16, bfloat16 inputs with the scores and softmax in float32 (what fused kernels
do), QK-norm, and logit soft-capping.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.softmax import softmax

from ..i18n.messages import _

FORMATS = ("float16", "bfloat16", "float32")
SOFT_CAP = 50.0  # Gemma 2's cap on attention logits (Gemma Team 2024, "Gemma 2", section 2)


def to_bfloat16(x) -> np.ndarray:
    """``x`` rounded to the nearest bfloat16 (ties to even), as float32; overflow gives inf, NaN stays NaN.

    bfloat16 is float32's upper 16 bits: the same 8 exponent bits (the same range) and 7 of its 23
    mantissa bits.

    Examples
    --------
    >>> to_bfloat16(np.array([1.0, 1.00390625, 1.01171875, 3.0e38, 3.4e38])).tolist()
    [1.0, 1.0, 1.015625, 3.00405527047391e+38, inf]
    """
    single = np.asarray(x, dtype=np.float32)
    bits = single.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round the low 16 bits away, ties to even
    result = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(single), np.float32(np.nan), result)


def round_to(x, fmt: str) -> np.ndarray:
    """``x`` stored in ``fmt`` ("float16", "bfloat16" or "float32") and read back as float32."""
    if fmt == "float16":
        with np.errstate(over="ignore"):
            return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)
    if fmt == "bfloat16":
        return to_bfloat16(x)
    if fmt == "float32":
        return np.asarray(x, dtype=np.float32)
    raise ValueError(_("fmt must be one of {formats}; got {fmt}").format(formats=FORMATS, fmt=repr(fmt)))


def format_facts(fmt: str) -> dict:
    """``max`` (largest finite), ``tiny`` (smallest normal) and ``eps`` (spacing above 1) of ``fmt``, computed.

    Examples
    --------
    >>> format_facts("float16")["max"], format_facts("bfloat16")["eps"]
    (65504.0, 0.0078125)
    """
    if fmt == "bfloat16":  # float32's bit patterns with the low 16 bits zero
        largest, smallest, one_up = (np.array([bits], dtype=np.uint32).view(np.float32)[0]
                                     for bits in (0x7F7F0000, 0x00800000, 0x3F810000))
        return {"max": float(largest), "tiny": float(smallest), "eps": float(one_up) - 1.0}
    info = np.finfo(np.float16 if fmt == "float16" else np.float32)
    return {"max": float(info.max), "tiny": float(info.tiny), "eps": float(info.eps)}


def running_sum(x, fmt: str) -> np.ndarray:
    """The sum along the last axis, one term at a time, the running total stored in ``fmt`` after each addition.

    This is how a loop over the keys accumulates.  In float16 a total of 2048 has a spacing of 2, so
    every term below 1 is lost from there on: the sum stalls.

    Examples
    --------
    >>> running_sum(np.full(4096, 0.9), "float16").item(), running_sum(np.full(4096, 0.9), "float32").item()
    (2048.0, 3686.26...)
    """
    x = round_to(x, fmt)
    if fmt == "float32":
        return np.cumsum(x, axis=-1, dtype=np.float32)[..., -1]
    total = np.zeros(x.shape[:-1], dtype=np.float32)
    with np.errstate(invalid="ignore"):  # inf + (-inf) in a NaN row
        for column in np.moveaxis(x, -1, 0):
            total = round_to(total + column, fmt)
    return total


def _softmax_in(scores, fmt: str) -> np.ndarray:
    """Softmax along the last axis with every intermediate (shifted scores, exps, running sum, quotient) in ``fmt``."""
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = round_to(scores - scores.max(axis=-1, keepdims=True), fmt)  # inf - inf = NaN, as a kernel gets
        exps = round_to(np.exp(shifted), fmt)
        return round_to(exps / running_sum(exps, fmt)[..., None], fmt)


def attention_weights_in(query, key, fmt: str, *, softmax_fmt: str | None = None, qk_norm: bool = False,
                         soft_cap: float | None = None) -> np.ndarray:
    r"""Weights :math:`\operatorname{softmax}(q k^\top / \sqrt{E})` as a kernel storing them in ``fmt`` computes them.

    ``query (L, E)`` and ``key (S, E)`` are rounded to ``fmt``; the products are summed exactly (as
    tensor cores accumulate in float32) and the scores stored in ``softmax_fmt`` (default ``fmt``),
    where the softmax runs too.  ``qk_norm`` divides every query and key by its RMS first (RMSNorm with
    unit gain, as QK-norm does), so ``|score| <= sqrt(E)``; ``soft_cap`` replaces each score ``s`` by
    ``c tanh(s / c)``, so ``|score| < c``.  Returns float32 weights ``(L, S)``.

    Examples
    --------
    >>> q = np.full((1, 4), 200.0)
    >>> bool(np.isnan(attention_weights_in(q, q, "float16")).all())  # q . k / 2 = 80000 > 65504
    True
    >>> attention_weights_in(q, q, "float16", softmax_fmt="float32").tolist()
    [[1.0]]
    """
    query, key = round_to(query, fmt), round_to(key, fmt)
    if qk_norm:
        query, key = (round_to(x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True)), fmt)
                      for x in (query, key))
    scores = (query.astype(np.float64) @ key.astype(np.float64).T) / np.sqrt(query.shape[-1])  # (L, E) @ (E, S) -> (L, S)
    scores = round_to(scores, softmax_fmt or fmt)
    if soft_cap is not None:
        scores = round_to(soft_cap * np.tanh(scores / soft_cap), softmax_fmt or fmt)
    return _softmax_in(scores, softmax_fmt or fmt)


RECIPES = {
    "float16": {"fmt": "float16"},
    "bfloat16": {"fmt": "bfloat16"},
    "bf16 in, fp32 softmax": {"fmt": "bfloat16", "softmax_fmt": "float32"},
    "fp16 + QK-norm": {"fmt": "float16", "qk_norm": True},
    "fp16 + soft-cap 50": {"fmt": "float16", "soft_cap": SOFT_CAP},
}


def _exact(query, key, *, qk_norm: bool = False, soft_cap: float | None = None) -> np.ndarray:
    """The float64 weights of the same recipe: the answer each format is compared with."""
    if qk_norm:
        query, key = (x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True)) for x in (query, key))
    scores = query @ key.T / np.sqrt(query.shape[-1])  # (L, S)
    if soft_cap is not None:
        scores = soft_cap * np.tanh(scores / soft_cap)
    return softmax(scores)


def precision_sweep(growths, *, L: int = 8, S: int = 32, E: int = 64, seed: int = 0) -> dict:
    """For queries and keys of size ``g`` times a unit normal, the worst weight error of every recipe.

    The raw scores then spread like ``g^2`` (their standard deviation is ``g^2`` after the
    ``1/sqrt(E)``).  Each recipe is compared with the float64 weights of the same recipe (QK-norm and
    soft-capping change the model, not only its rounding); NaN means the weights came out NaN.

    Returns
    -------
    dict with ``growths``, ``largest_score`` (the float64 ``max |q . k| / sqrt(E)`` at each ``g``) and,
    per name of :data:`RECIPES`, an array of the largest ``|w - w_exact|``
    """
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(L, E)), rng.normal(size=(S, E))
    result = {"growths": np.asarray(growths, dtype=float),
              "largest_score": np.array([np.abs(g * q @ (g * k).T).max() / np.sqrt(E) for g in growths])}
    for name, recipe in RECIPES.items():
        extra = {key: recipe[key] for key in ("qk_norm", "soft_cap") if key in recipe}
        errors = []
        for g in growths:
            weights = attention_weights_in(g * q, g * k, **recipe)
            errors.append(np.nan if np.isnan(weights).any() else float(np.abs(weights - _exact(g * q, g * k, **extra)).max()))
        result[name] = np.array(errors)
    return result
