"""Chapter 13, generation: the KV cache of real model shapes, prefill against decode, MQA/GQA/MLA, and the GPU.

* :data:`MODELS`: the attention shapes of a few open models, each with its source;
* :func:`cache_per_token_bytes`: what each family (MHA, GQA, MQA, MLA) caches per token;
* :func:`arithmetic_intensity`: FLOPs per byte moved, of a prefill and of a decode step;
* :func:`matmul_rate`: measured FLOP rate of ``x @ W`` for one row (decode) and many rows (prefill);
* :class:`LatentKV`: MLA's low-rank latent on random weights, expanded per head or absorbed into the query;
* :func:`hbm_traffic_bytes`: main-memory traffic of explicit and fused (FlashAttention) attention.

The cache formula itself is :func:`~sdpa_course.lessons.cost.kv_cache_bytes` (chapter 6).
Shape legend as in the library: ``L`` tokens, ``D`` model width, ``H`` query heads, ``E`` head size.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sdpa_lib._checks import check_generator, check_positive_int
from sdpa_lib.attention import scaled_dot_product_attention
from sdpa_lib.heads import merge_heads, split_heads
from sdpa_lib.scores import init_projection

from ..profiling import median_seconds
from ..i18n.messages import _
from .cost import kv_cache_bytes

# NVIDIA's H200 SXM datasheet: 4.8 TB/s of HBM3e bandwidth, 989 TFLOPS dense bfloat16 on the tensor cores
# (1979 "with sparsity"); the card of sdpa_course/data/h200_sdpa_reference.csv.
H200_HBM_BYTES_PER_S = 4.8e12
H200_BF16_FLOPS = 989e12


class Model(NamedTuple):
    """The attention shape of a model: what its KV cache depends on, and where the numbers come from."""
    name: str
    layers: int
    heads: int  # query heads H
    kv_heads: int  # key/value heads: H for MHA, G for GQA, 1 for MQA
    head_dim: int
    source: str


MODELS = (
    Model("Llama-2-7B", 32, 32, 32, 128, "Touvron et al. 2023 (Llama 2), Table 1; config.json of meta-llama/Llama-2-7b-hf"),
    Model("Llama-2-70B", 80, 64, 8, 128, "Touvron et al. 2023 (Llama 2): GQA with 8 KV heads; config.json of "
                                         "meta-llama/Llama-2-70b-hf"),
    Model("Mistral-7B", 32, 32, 8, 128, "Jiang et al. 2023 (Mistral 7B), Table 1: n_kv_heads 8, window 4096"),
    Model("Llama-3-8B", 32, 32, 8, 128, "config.json of meta-llama/Meta-Llama-3-8B"),
    Model("Falcon-7B", 32, 71, 1, 64, "config.json of tiiuae/falcon-7b: multi_query, 71 heads of 64"),
)

# DeepSeek-V2's MLA (DeepSeek-AI 2024, section 2.1 and Table 1): per token and layer it caches the latent
# c^KV of d_c = 512 numbers and one shared RoPE key of d_h^R = 64, i.e. (d_c + d_h^R) = 4.5 d_h for d_h = 128.
MLA_LATENT, MLA_ROPE_DIM = 512, 64


def cache_per_token_bytes(model: Model, *, family: str | None = None, bytes_per_number: int = 2) -> int:
    """Bytes one token adds to ``model``'s cache over all layers, as it is (``family`` None) or as another family.

    ``family``: ``"MHA"`` (every query head its own K and V), ``"GQA"`` (the model's ``kv_heads``),
    ``"MQA"`` (one K and V head), or ``"MLA"`` (DeepSeek-V2's latent and RoPE key, the same per layer
    whatever the head count).

    Examples
    --------
    >>> llama = MODELS[1]
    >>> [cache_per_token_bytes(llama, family=f) // 1024 for f in ("MHA", "GQA", "MQA")]
    [2560, 320, 40]
    >>> cache_per_token_bytes(llama, family="MLA") // 1024
    90
    """
    if family == "MLA":
        return model.layers * (MLA_LATENT + MLA_ROPE_DIM) * bytes_per_number
    kv_heads = {None: model.kv_heads, "GQA": model.kv_heads, "MHA": model.heads, "MQA": 1}
    if family not in kv_heads:
        raise ValueError(_("family must be None, 'MHA', 'GQA', 'MQA' or 'MLA'; got {family}").format(
            family=repr(family)))
    return kv_cache_bytes(layers=model.layers, kv_heads=kv_heads[family], head_dim=model.head_dim, tokens=1,
                          bytes_per_number=bytes_per_number)


# --- prefill against decode ----------------------------------------------------------------------

def arithmetic_intensity(phase: str, *, tokens: int, context: int, D: int, E: int = 128, kv_heads: int,
                         heads: int, batch: int = 1, bytes_per_number: int = 2) -> dict:
    """FLOPs per byte read or written from main memory by one layer of a ``phase`` ("prefill" or "decode").

    ``prefill`` reads ``tokens`` prompt tokens at once (``context = tokens``); ``decode`` handles one new
    token per sequence against a cache of ``context`` tokens.  The weights are the four ``D x D``-sized
    projections (their K and V parts ``kv_heads / heads`` of it); attention is ``QK^T`` and ``PV``.
    Bytes count each weight, cached key and value and each activation read or written once (the
    best case: a fused kernel); FLOPs count a multiply-add as 2.

    Returns
    -------
    dict with ``flops``, ``bytes`` and ``intensity`` (their ratio) for ``"weights"``, ``"attention"``
    and ``"layer"`` (the two together)

    Examples
    --------
    >>> decode = arithmetic_intensity("decode", tokens=1, context=4096, D=8192, kv_heads=8, heads=64)
    >>> round(decode["weights"]["intensity"], 2), round(decode["attention"]["intensity"], 2)
    (1.0, 7.98)
    """
    if phase not in ("prefill", "decode"):
        raise ValueError(_("phase must be 'prefill' or 'decode'; got {phase}").format(phase=repr(phase)))
    tokens, context, D, E, kv_heads, heads, batch = (check_positive_int(v, n) for v, n in (
        (tokens, "tokens"), (context, "context"), (D, "D"), (E, "E"), (kv_heads, "kv_heads"), (heads, "heads"),
        (batch, "batch")))
    rows = batch * tokens  # token vectors going through the layer
    weights = D * D * (2 + 2 * kv_heads / heads)  # W_Q and W_O full, W_K and W_V narrowed by GQA
    kv_width = kv_heads * E
    weight_part = {"flops": 2 * rows * weights, "bytes": bytes_per_number * (weights + 2 * rows * D)}
    # Each of the `tokens` queries of a sequence sees the keys up to itself (prefill) or the whole cache (decode).
    pairs = tokens * (tokens + 1) / 2 if phase == "prefill" else tokens * context
    attention_part = {"flops": 4 * batch * heads * E * pairs,
                      "bytes": bytes_per_number * batch * (2 * context * kv_width + 2 * tokens * heads * E)}
    parts = {"weights": weight_part, "attention": attention_part,
             "layer": {key: weight_part[key] + attention_part[key] for key in ("flops", "bytes")}}
    for part in parts.values():
        part["intensity"] = part["flops"] / part["bytes"]
    return parts


def ridge_point(flops_per_s: float = H200_BF16_FLOPS, bytes_per_s: float = H200_HBM_BYTES_PER_S) -> float:
    """FLOPs per byte at which a chip's compute and its memory take the same time (the roofline's corner).

    Below it a kernel waits for memory (memory-bound); above it, for arithmetic (compute-bound).

    Examples
    --------
    >>> round(ridge_point())
    206
    """
    return flops_per_s / bytes_per_s


def matmul_rate(rows: int, D: int, *, repeats: int = 5, seed: int = 0, dtype=np.float32) -> float:
    """Measured FLOPs per second of ``x @ W`` with ``x (rows, D)`` and ``W (D, D)`` on this machine.

    ``rows = 1`` is a decode step's projection (every weight read for one multiply-add); many rows are
    a prefill's, which reuse each weight once per row.
    """
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(rows, D)).astype(dtype), rng.normal(size=(D, D)).astype(dtype)
    seconds = median_seconds(lambda: x @ w, repeats=repeats)  # (rows, D) @ (D, D) -> (rows, D)
    return 2 * rows * D * D / seconds


# --- MLA: a low-rank latent instead of keys and values ------------------------------------------------

class LatentKV:
    r"""Multi-head latent attention's cache on random weights: :math:`c = x W^{DKV}`, then per head
    :math:`K_h = c W^{UK}_h`, :math:`V_h = c W^{UV}_h` (DeepSeek-V2, without its decoupled RoPE key).

    Parameters
    ----------
    D : int
        Model width.
    heads, head_dim : int
        ``H`` query heads of ``E`` features.
    latent : int
        ``d_c``, the width of the cached vector (DeepSeek-V2: 512 for ``H E = 16384``).
    rng : numpy.random.Generator

    Examples
    --------
    >>> mla = LatentKV(64, 4, 16, 8, np.random.default_rng(0))
    >>> x = np.random.default_rng(1).normal(size=(5, 64))
    >>> mla.latent_of(x).shape, mla.keys_values(mla.latent_of(x))[0].shape
    ((5, 8), (4, 5, 16))
    """

    def __init__(self, D: int, heads: int, head_dim: int, latent: int, rng: np.random.Generator):
        D, self.heads, self.head_dim, latent = (check_positive_int(v, n) for v, n in (
            (D, "D"), (heads, "heads"), (head_dim, "head_dim"), (latent, "latent")))
        rng = check_generator(rng)
        self.w_dkv = init_projection(D, latent, rng)  # (D, d_c): down to the latent
        self.w_uk = init_projection(latent, heads * head_dim, rng)  # (d_c, H*E): up to every head's keys
        self.w_uv = init_projection(latent, heads * head_dim, rng)  # (d_c, H*E): and values
        self.w_q = init_projection(D, heads * head_dim, rng)  # (D, H*E)

    def latent_of(self, x) -> np.ndarray:
        """The cached vectors ``(L, d_c)`` of tokens ``x (L, D)``."""
        return x @ self.w_dkv  # (L, D) @ (D, d_c) -> (L, d_c)

    def keys_values(self, latent) -> tuple[np.ndarray, np.ndarray]:
        """Every head's keys and values ``(H, L, E)`` expanded from the latent ``(L, d_c)``."""
        return (split_heads(latent @ self.w_uk, self.heads),  # (L, d_c) @ (d_c, H*E) -> (H, L, E)
                split_heads(latent @ self.w_uv, self.heads))

    def attend_expanded(self, x_query, latent) -> np.ndarray:
        """Attention ``(L, H*E)`` of the queries of ``x_query (L, D)`` over keys and values expanded from ``latent``."""
        keys, values = self.keys_values(latent)
        queries = split_heads(x_query @ self.w_q, self.heads)  # (L, D) @ (D, H*E) -> (H, L, E)
        return merge_heads(scaled_dot_product_attention(queries, keys, values, is_causal=True))  # (L, H*E)

    def attend_absorbed(self, x_query, latent) -> np.ndarray:
        r"""The same attention without expanding the keys: :math:`q_h \cdot (c W^{UK}_h) = (q_h W^{UK\top}_h) \cdot c`.

        Each head's query is moved into the latent space once, and the scores are taken against the
        cached latents directly; the values are expanded after the weighted sum, ``(P c) W^{UV}_h``.
        """
        queries = split_heads(x_query @ self.w_q, self.heads)  # (H, L, E)
        up_k = split_heads(self.w_uk, self.heads)  # (d_c, H*E) -> (H, d_c, E)
        up_v = split_heads(self.w_uv, self.heads)  # (H, d_c, E)
        absorbed = queries @ np.swapaxes(up_k, -1, -2)  # (H, L, E) @ (H, E, d_c) -> (H, L, d_c)
        mixed = scaled_dot_product_attention(absorbed, latent, latent, is_causal=True,
                                             scale=1 / np.sqrt(self.head_dim))  # (H, L, d_c): P c
        return merge_heads(mixed @ up_v)  # (H, L, d_c) @ (H, d_c, E) -> (H, L, E) -> (L, H*E)


# --- FlashAttention: what moves between HBM and the chip ----------------------------------------------

def hbm_traffic_bytes(L: int, E: int, *, heads: int = 16, batch: int = 1, bytes_per_number: int = 2,
                      block_rows: int = 128, fused: bool) -> int:
    """Bytes one forward attention call reads from and writes to main memory (HBM), by a simple count.

    Explicit (``fused=False``): Q, K, V read, the ``L x L`` scores written and read back, the weights
    written and read back, the output written, ``(4 L E + 4 L^2)`` numbers per head.  Fused
    (FlashAttention): Q read and O written once, K and V read once per block of ``block_rows`` queries
    (each block streams all the keys through on-chip SRAM), ``(2 L E + 2 L E ceil(L / block_rows))``.
    Real kernels differ in the details (caches, the log-sum-exp they keep); the orders do not.

    Examples
    --------
    >>> round(hbm_traffic_bytes(4096, 64, fused=False) / hbm_traffic_bytes(4096, 64, fused=True), 2)
    3.94
    """
    L, E, heads, batch, block_rows = (check_positive_int(v, n) for v, n in (
        (L, "L"), (E, "E"), (heads, "heads"), (batch, "batch"), (block_rows, "block_rows")))
    if fused:
        numbers = 2 * L * E + 2 * L * E * -(-L // block_rows)
    else:
        numbers = 4 * L * E + 4 * L * L
    return numbers * heads * batch * bytes_per_number
