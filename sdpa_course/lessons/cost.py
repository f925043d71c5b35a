"""Measuring what attention costs (chapter 7): time and memory against length, fitted exponents,
a toy RNN to compare with, and the H200 GPU reference measurements.

Everything here measures on the machine it runs on; keep sizes small in notebooks.
Shape legend: ``L`` sequence length (``n`` in the paper), ``E`` features (``d``), ``B`` batch.
"""
from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np

from sdpa_lib._checks import check_positive_int
from sdpa_lib.attention import scaled_dot_product_attention
from sdpa_lib.complexity import attention_flops
from sdpa_lib.softmax import softmax
from sdpa_lib.tiled import tiled_attention

from ..profiling import median_seconds, peak_bytes
from ..i18n.messages import _

REFERENCE_CSV = "h200_sdpa_reference.csv"  # package data in sdpa_course/data, provenance in its README.md


# --- fitting -------------------------------------------------------------------------------

def fit_exponent(sizes, values) -> tuple[float, float]:
    r"""Least-squares fit of :math:`\text{value} = c \cdot \text{size}^p` on a log-log scale.

    Returns
    -------
    (p, c) : the exponent and the prefactor

    Examples
    --------
    >>> p, c = fit_exponent([10, 20, 40], [300, 1200, 4800])
    >>> round(p, 6), round(c, 6)
    (2.0, 3.0)
    """
    sizes, values = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    if sizes.shape != values.shape or sizes.size < 2 or np.any(sizes <= 0) or np.any(values <= 0):
        raise ValueError(_("need at least two positive (size, value) pairs of equal count; "
                           "got sizes={sizes}, values={values}").format(sizes=sizes.tolist(), values=values.tolist()))
    slope, intercept = np.polyfit(np.log(sizes), np.log(values), 1)
    return float(slope), float(np.exp(intercept))


def random_qkv(L: int, E: int, *, S: int | None = None, seed: int = 0, dtype=np.float64):
    """Standard-normal query ``(L, E)``, key and value ``(S, E)`` (``S = L`` by default)."""
    rng = np.random.default_rng(seed)
    S = L if S is None else S
    return (rng.normal(size=(L, E)).astype(dtype), rng.normal(size=(S, E)).astype(dtype),
            rng.normal(size=(S, E)).astype(dtype))


def sweep(lengths, measure: Callable[[int], float]) -> dict:
    """``measure(n)`` for every ``n`` in ``lengths`` and the fitted exponent.

    Returns
    -------
    dict with ``lengths`` (array), ``values`` (array), ``exponent`` and ``prefactor``
    """
    lengths = np.asarray(lengths)
    values = np.array([measure(int(n)) for n in lengths])
    exponent, prefactor = fit_exponent(lengths, values)
    return {"lengths": lengths, "values": values, "exponent": exponent, "prefactor": prefactor}


# --- one query at a time, and a recurrent network to compare with ----------------------------

def attention_query_by_query(query, key, value) -> np.ndarray:
    """The loop version of attention: one query row at a time, ``(L, E), (S, E), (S, Ev) -> (L, Ev)``.

    Gives the same numbers as :func:`~sdpa_lib.attention.scaled_dot_product_attention`;
    it exists to be timed against it.  The rows do not depend on each other, which is
    why the loop can be replaced by two matrix products.
    """
    output = np.empty((query.shape[0], value.shape[1]))
    for i in range(query.shape[0]):
        scores = key @ query[i] / np.sqrt(query.shape[1])  # (S, E) @ (E,) -> (S,)
        output[i] = softmax(scores) @ value  # (S,) @ (S, Ev) -> (Ev,)
    return output


def toy_rnn(x, w_x, w_h) -> np.ndarray:
    r"""An Elman RNN, :math:`h_t = \tanh(x_t W_x + h_{t-1} W_h)`, ``h_{-1} = 0``.

    Parameters
    ----------
    x : ndarray, shape ``(..., L, E)``
    w_x, w_h : ndarray, shape ``(E, E)``

    Returns
    -------
    ndarray, shape ``(..., L, E)``: every hidden state.  Step ``t`` needs step ``t - 1``:
    the ``L`` steps cannot run at the same time.

    Examples
    --------
    >>> toy_rnn(np.ones((3, 2)), np.eye(2), np.zeros((2, 2))).shape
    (3, 2)
    """
    hidden = np.zeros(x.shape[:-2] + x.shape[-1:])  # (..., E)
    states = np.empty(x.shape)
    for t in range(x.shape[-2]):
        hidden = np.tanh(x[..., t, :] @ w_x + hidden @ w_h)  # (..., E) @ (E, E) -> (..., E)
        states[..., t, :] = hidden
    return states


def rnn_weights(E: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``w_x, w_h`` of shape ``(E, E)`` drawn from N(0, 1/E) so the hidden state stays O(1)."""
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1 / np.sqrt(E), (E, E)), rng.normal(0, 1 / np.sqrt(E), (E, E))


def steps_until_first_reaches_last(kind: str, L: int, E: int = 8, seed: int = 0) -> int:
    """Measured path length: how many dependent hops carry token 0's input to the last output.

    Token 0's input is set to NaN, which poisons every value computed from it.  For
    ``"rnn"`` we count the recurrence steps that receive the poison through
    ``h_{t-1}`` (each is one hop); for ``"attention"`` one self-attention call is one hop.
    Returns the hop count once the last output is NaN (0 if it never is).

    Examples
    --------
    >>> steps_until_first_reaches_last("rnn", 10), steps_until_first_reaches_last("attention", 10)
    (9, 1)
    """
    x = np.random.default_rng(seed).normal(size=(L, E))  # (L, E)
    x[0] = np.nan
    if kind == "attention":
        last = scaled_dot_product_attention(x, x, x)[-1]  # one call: (L, E) -> (L, E), take row L-1
        return 1 if np.isnan(last).all() else 0
    if kind != "rnn":
        raise ValueError(_("kind must be 'rnn' or 'attention'; got {kind}").format(kind=repr(kind)))
    w_x, w_h = rnn_weights(E, seed)
    hidden, hops = np.zeros(E), 0
    for t in range(L):
        hops += int(np.isnan(hidden).any())  # step t gets token 0's information through h_{t-1}
        hidden = np.tanh(x[t] @ w_x + hidden @ w_h)  # (E,) @ (E, E) -> (E,)
    return hops if np.isnan(hidden).all() else 0


def layer_flops(kind: str, L: int, E: int) -> int:
    """Multiply-adds x 2 of one layer: self-attention ``4 L^2 E`` (QK^T and PV), RNN ``4 L E^2`` (x W_x and h W_h).

    Projections are left out on both sides: they cost ``O(L E^2)`` for either layer.

    Examples
    --------
    >>> layer_flops("attention", 64, 64) == layer_flops("rnn", 64, 64)
    True
    """
    if kind == "attention":
        return attention_flops(L, L, E, E)
    if kind == "rnn":
        return 4 * L * E * E
    raise ValueError(_("kind must be 'rnn' or 'attention'; got {kind}").format(kind=repr(kind)))


def transformer_layer_flops(L: int, D: int, *, ffn_multiplier: int = 4) -> dict:
    r"""Forward FLOPs of one Transformer layer on ``L`` tokens of width ``D = d_model``, by part.

    A multiply-add counts 2, as in :func:`~sdpa_lib.complexity.attention_flops`.

    * ``projections``: :math:`W^Q, W^K, W^V, W^O`, four ``(D, D)`` products, ``8 L D^2``;
    * ``attention``: :math:`QK^\top` and :math:`PV` summed over the heads, ``4 L^2 D``
      (``H`` heads of width ``D / H`` cost the same as one head of width ``D``);
    * ``ffn``: the feed-forward block, ``(D, m D)`` then ``(m D, D)``, ``4 m L D^2`` with
      ``m = ffn_multiplier`` (4 in the original Transformer).

    Softmax, normalisation and biases are ``O(L^2 H + L D)`` and left out.

    Returns
    -------
    dict with ``projections``, ``attention``, ``ffn`` and ``total`` (int FLOPs)

    Examples
    --------
    >>> parts = transformer_layer_flops(1024, 512)
    >>> parts["attention"] == 4 * 1024**2 * 512, parts["projections"] == 8 * 1024 * 512**2
    (True, True)
    """
    L, D, m = (check_positive_int(v, n) for v, n in ((L, "L"), (D, "D"), (ffn_multiplier, "ffn_multiplier")))
    parts = {"projections": 8 * L * D * D, "attention": attention_flops(L, L, D, D), "ffn": 4 * m * L * D * D}
    parts["total"] = sum(parts.values())
    return parts


def attention_crossover_length(D: int, *, against: str = "projections", ffn_multiplier: int = 4) -> int:
    """The length ``L`` at which the ``4 L^2 D`` of attention equals the rest it is compared with.

    ``against="projections"``: ``4 L^2 D = 8 L D^2`` at ``L = 2 D``;
    ``against="layer"``: projections and feed-forward, ``(8 + 4 m) L D^2``, at ``L = (2 + m) D``
    (``6 D`` for ``m = 4``).  Above it the ``L^2`` term is the larger part; below it, the smaller.

    Examples
    --------
    >>> attention_crossover_length(4096), attention_crossover_length(4096, against="layer")
    (8192, 24576)
    """
    D, m = check_positive_int(D, "D"), check_positive_int(ffn_multiplier, "ffn_multiplier")
    if against == "projections":
        return 2 * D
    if against == "layer":
        return (2 + m) * D
    raise ValueError(_("against must be 'projections' or 'layer'; got {against}").format(against=repr(against)))


# --- the KV cache against the weights (chapter 6) -------------------------------------------

def kv_cache_bytes(*, layers: int, kv_heads: int, head_dim: int, tokens: int, batch: int = 1,
                   bytes_per_number: int = 2) -> int:
    """Bytes of the keys and values a decoder keeps for ``batch`` sequences of ``tokens`` tokens.

    ``2 * layers * kv_heads * head_dim * tokens * batch * bytes_per_number``: one key and one value
    of ``head_dim`` numbers per layer, key/value head and token (``kv_heads = H`` for MHA,
    ``G`` for GQA, 1 for MQA).

    Examples
    --------
    >>> kv_cache_bytes(layers=80, kv_heads=8, head_dim=128, tokens=4096) / 2**30  # Llama-2-70B's shape
    1.25
    """
    counts = [check_positive_int(v, n) for v, n in ((layers, "layers"), (kv_heads, "kv_heads"),
                                                     (head_dim, "head_dim"), (tokens, "tokens"),
                                                     (batch, "batch"), (bytes_per_number, "bytes_per_number"))]
    return 2 * int(np.prod(counts, dtype=np.int64))


def tokens_where_cache_equals_weights(parameters: float, *, layers: int, kv_heads: int, head_dim: int,
                                      bytes_per_number: int = 2) -> float:
    """How many cached tokens (summed over the batch) take as much memory as the weights.

    ``parameters * bytes_per_number`` divided by the cache of one token.  Batch size times context
    length above this number: the cache is the larger; below it, the weights are.

    Examples
    --------
    >>> round(tokens_where_cache_equals_weights(70e9, layers=80, kv_heads=8, head_dim=128))
    427246
    """
    if not parameters > 0:
        raise ValueError(_("parameters must be positive; got {parameters}").format(parameters=repr(parameters)))
    per_token = kv_cache_bytes(layers=layers, kv_heads=kv_heads, head_dim=head_dim, tokens=1,
                               bytes_per_number=bytes_per_number)
    return parameters * bytes_per_number / per_token


# --- blocks: the FlashAttention idea ---------------------------------------------------------

def block_size_sweep(L: int, E: int, block_sizes, *, repeats: int = 3, seed: int = 0,
                     clock: str = "wall") -> dict:
    """Peak memory (tracemalloc) and best time of :func:`~sdpa_lib.tiled.tiled_attention` per block size.

    ``clock`` is passed to :func:`best_seconds` (``"wall"`` or ``"cpu"``).

    Returns
    -------
    dict with ``block_sizes``, ``peak_bytes``, ``seconds`` (arrays), and the explicit
    formula's ``explicit_peak_bytes`` and ``explicit_seconds`` for comparison
    """
    q, k, v = random_qkv(L, E, seed=seed)
    block_sizes = np.asarray(block_sizes)
    return {"block_sizes": block_sizes,
            "peak_bytes": np.array([peak_bytes(tiled_attention, q, k, v, block_size=int(b))
                                    for b in block_sizes]),
            "seconds": np.array([median_seconds(tiled_attention, q, k, v, block_size=int(b), repeats=repeats,
                                              clock=clock)
                                 for b in block_sizes]),
            "explicit_peak_bytes": peak_bytes(scaled_dot_product_attention, q, k, v),
            "explicit_seconds": median_seconds(scaled_dot_product_attention, q, k, v, repeats=repeats, clock=clock)}


# --- the H200 reference ----------------------------------------------------------------------

def load_h200_reference(path=None) -> list[dict]:
    """Rows of the H200 reference CSV (the package's ``data/h200_sdpa_reference.csv``, or ``path``), numbers parsed.

    ``L``, ``E``, ``B``, ``H`` become int; ``ms``, ``peak_extra_MiB``, ``tflops`` float
    (NaN where the run did not complete: ``status`` is ``OOM`` or ``skipped ...``).
    The provenance of the measurements is in ``sdpa_course/data/README.md``.
    """
    if path is None:
        text = (resources.files("sdpa_course") / "data" / REFERENCE_CSV).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for row in rows:
        for name in ("B", "H", "L", "E"):
            row[name] = int(row[name])
        for name in ("ms", "peak_extra_MiB", "tflops"):
            row[name] = float(row[name]) if row[name] else float("nan")
    return rows


def h200_series(rows: list[dict], *, method: str, E: int = 64, pass_: str = "fwd",
                column: str = "peak_extra_MiB") -> dict:
    """One curve of the reference: the completed ``L`` values and ``column``, and the first ``L`` that ran out of memory.

    Returns
    -------
    dict with ``L`` (array), ``values`` (array) and ``oom_L`` (int, or None if it never ran out)
    """
    chosen = [r for r in rows if r["method"] == method and r["E"] == E and r["pass"] == pass_]
    if not chosen:
        raise ValueError(_("no rows for method={method}, E={E}, pass_={pass_}; methods are {methods}, "
                           "E {sizes}").format(method=repr(method), E=E, pass_=repr(pass_),
                                               methods=sorted({r["method"] for r in rows}),
                                               sizes=sorted({r["E"] for r in rows})))
    done = [r for r in chosen if r["status"] == "ok"]
    oom = [r["L"] for r in chosen if r["status"] == "OOM"]
    return {"L": np.array([r["L"] for r in done]), "values": np.array([r[column] for r in done]),
            "oom_L": min(oom) if oom else None}
