"""Plain-loop reference implementations (the "specs") that the sdpa_lib tests compare against.

Each spec does one scalar at a time in Python floats, straight from the formula, with no
broadcasting tricks and no numerical care beyond subtracting the row maximum: slow, but
easy to check by eye.  Shapes follow the library's legend: ``(..., L, E)`` query,
``(..., S, E)`` key, ``(..., S, Ev)`` value, ``(..., L, S)`` scores, weights and masks.
"""
from __future__ import annotations

import math

import numpy as np

# Every axis a different size, so a transposed axis cannot pass by accident.
B, H, L, S, E, Ev = 2, 3, 5, 7, 4, 6
NEG_INF = float("-inf")


def randn(rng: np.random.Generator, shape, dtype=np.float64) -> np.ndarray:
    """Standard normal test data of ``shape`` in ``dtype``."""
    return rng.normal(size=shape).astype(dtype)


def random_bool_mask(rng: np.random.Generator, shape, p_attend: float = 0.7) -> np.ndarray:
    """A bool mask, True = may attend, each entry True with probability ``p_attend``."""
    return rng.random(shape) < p_attend


# ---------------------------------------------------------------- softmax and friends
def softmax_row(row) -> list[float]:
    """softmax of a list of floats; an all -inf row gives all zeros, NaN spreads to the row."""
    row = [float(x) for x in row]
    if any(math.isnan(x) for x in row):
        return [math.nan] * len(row)
    top = max(row)
    if top == NEG_INF:
        return [0.0] * len(row)
    exps = [0.0 if x == NEG_INF else math.exp(x - top) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


def along_last_axis(function, x) -> np.ndarray:
    """Apply a row function (list -> list or float) to every last-axis row of ``x``."""
    x = np.asarray(x, dtype=np.float64)
    first = function(x.reshape(-1, x.shape[-1])[0]) if x.size else []
    out_shape = x.shape if isinstance(first, list) else x.shape[:-1]
    out = np.empty(out_shape)
    for index in np.ndindex(*x.shape[:-1]):
        out[index] = function(x[index])
    return out


def softmax_loop(x, axis: int = -1) -> np.ndarray:
    return np.moveaxis(along_last_axis(softmax_row, np.moveaxis(np.asarray(x), axis, -1)), -1, axis)


def logsumexp_row(row) -> float:
    top = max(float(x) for x in row)
    if top == NEG_INF:
        return NEG_INF
    return top + math.log(sum(math.exp(float(x) - top) for x in row))


def log_softmax_row(row) -> list[float]:
    total = logsumexp_row(row)
    return [float(x) - total for x in row]


def entropy_row(p) -> float:
    return -sum(float(pj) * math.log(float(pj)) for pj in p if pj > 0)


def softmax_jacobian_loop(p) -> np.ndarray:
    """J[..., i, j] = p_i (delta_ij - p_j)."""
    p = np.asarray(p, dtype=np.float64)
    n = p.shape[-1]
    out = np.empty((*p.shape, n))
    for index in np.ndindex(*p.shape[:-1]):
        for i in range(n):
            for j in range(n):
                out[index + (i, j)] = p[index + (i,)] * ((i == j) - p[index + (j,)])
    return out


def softmax_backward_loop(p, grad_p) -> np.ndarray:
    """dx_j = sum_i J[i, j] g_i, with J the softmax Jacobian at p."""
    jacobian = softmax_jacobian_loop(p)
    grad_p = np.asarray(grad_p, dtype=np.float64)
    out = np.empty(np.shape(p))
    n = out.shape[-1]
    for index in np.ndindex(*out.shape[:-1]):
        for j in range(n):
            out[index + (j,)] = sum(jacobian[index + (i, j)] * grad_p[index + (i,)] for i in range(n))
    return out


# ---------------------------------------------------------------- scores and projections
def dot(u, w) -> float:
    return sum(float(a) * float(b) for a, b in zip(u, w))


def batched(function, *arrays_and_cores):
    """Run ``function`` on every batch element: arrays broadcast on their leading axes.

    ``arrays_and_cores`` alternates an array and the number of trailing "core" axes it has.
    """
    arrays = [np.asarray(a) for a in arrays_and_cores[::2]]
    cores = arrays_and_cores[1::2]
    batch = np.broadcast_shapes(*[a.shape[:a.ndim - c] for a, c in zip(arrays, cores)])
    arrays = [np.broadcast_to(a, batch + a.shape[a.ndim - c:]) for a, c in zip(arrays, cores)]
    results = {index: function(*[a[index] for a in arrays]) for index in np.ndindex(*batch)}
    first = results[next(iter(results))]
    if isinstance(first, tuple):
        return tuple(np.stack([results[i][n] for i in results]).reshape(batch + first[n].shape)
                     for n in range(len(first)))
    return np.stack(list(results.values())).reshape(batch + first.shape)


def matmul_loop(a, b) -> np.ndarray:
    """(..., n, m) x (m, p) -> (..., n, p), one dot product per entry."""
    def core(a2):
        return np.array([[dot(row, b[:, c]) for c in range(b.shape[1])] for row in a2])
    return batched(core, a, 2)


def dot_scores_loop(query, key) -> np.ndarray:
    return batched(lambda q, k: np.array([[dot(qi, kj) for kj in k] for qi in q]), query, 2, key, 2)


def cosine_scores_loop(query, key) -> np.ndarray:
    def cos(u, w):
        nu, nw = math.sqrt(dot(u, u)), math.sqrt(dot(w, w))
        return 0.0 if nu == 0 or nw == 0 else dot(u, w) / (nu * nw)
    return batched(lambda q, k: np.array([[cos(qi, kj) for kj in k] for qi in q]), query, 2, key, 2)


# ---------------------------------------------------------------- masks
def causal_mask_loop(n_rows: int, n_cols: int | None = None) -> np.ndarray:
    n_cols = n_rows if n_cols is None else n_cols
    return np.array([[j <= i for j in range(n_cols)] for i in range(n_rows)], dtype=bool)


def padding_mask_loop(lengths, n_keys: int) -> np.ndarray:
    return np.array([[[j < length for j in range(n_keys)]] for length in lengths], dtype=bool)


# ---------------------------------------------------------------- attention
def attention_loop(query, key, value, attn_mask=None, *, is_causal=False, scale=None):
    """softmax(q . k * scale + mask) v, one query row and one key at a time.

    Returns ``(output, weights)`` in float64, shapes ``(..., L, Ev)`` and ``(..., L, S)``.
    A bool mask removes keys where it is False; a float mask is added to the scores.
    """
    query, key, value = (np.asarray(a, dtype=np.float64) for a in (query, key, value))
    n_rows, n_keys = query.shape[-2], key.shape[-2]
    if is_causal:
        attn_mask = causal_mask_loop(n_rows, n_keys)
    if attn_mask is None:
        attn_mask = np.ones((n_rows, n_keys), dtype=bool)
    attn_mask = np.asarray(attn_mask)
    c = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)

    def core(q, k, v, m):
        weights = np.empty((n_rows, n_keys))
        out = np.empty((n_rows, v.shape[-1]))
        for i in range(n_rows):
            scores = []
            for j in range(n_keys):
                s = c * dot(q[i], k[j])
                if m.dtype == np.bool_:
                    s = s if m[i, j] else NEG_INF
                else:
                    s = s + float(m[i, j])
                scores.append(s)
            weights[i] = softmax_row(scores)
            for col in range(v.shape[-1]):
                out[i, col] = sum(weights[i, j] * float(v[j, col]) for j in range(n_keys))
        return out, weights

    mask_full = np.broadcast_to(attn_mask, attn_mask.shape[:-2] + (n_rows, n_keys))
    return batched(core, query, 2, key, 2, value, 2, mask_full, 2)


def attention_backward_loop(query, key, value, grad_output, attn_mask=None, *, is_causal=False, scale=None):
    """(dq, dk, dv) from the chain rule, entry by entry, broadcast axes summed back.

    dv_j = sum_i P_ij dO_i;  dP_ij = dO_i . v_j;  dS_ij = P_ij (dP_ij - sum_l P_il dP_il);
    dq_i = c sum_j dS_ij k_j;  dk_j = c sum_i dS_ij q_i.
    """
    query, key, value, grad_output = (np.asarray(a, dtype=np.float64) for a in (query, key, value, grad_output))
    _, weights = attention_loop(query, key, value, attn_mask, is_causal=is_causal, scale=scale)
    c = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    n_rows, n_keys = weights.shape[-2:]

    def core(q, k, v, g, p):
        dp = np.array([[dot(g[i], v[j]) for j in range(n_keys)] for i in range(n_rows)])
        ds = np.array([[p[i, j] * (dp[i, j] - dot(p[i], dp[i])) for j in range(n_keys)] for i in range(n_rows)])
        dq = np.array([[c * sum(ds[i, j] * k[j, e] for j in range(n_keys)) for e in range(q.shape[1])]
                       for i in range(n_rows)])
        dk = np.array([[c * sum(ds[i, j] * q[i, e] for i in range(n_rows)) for e in range(q.shape[1])]
                       for j in range(n_keys)])
        dv = np.array([[sum(p[i, j] * g[i, col] for i in range(n_rows)) for col in range(v.shape[1])]
                       for j in range(n_keys)])
        return dq, dk, dv

    grads = batched(core, query, 2, key, 2, value, 2, grad_output, 2, weights, 2)
    return tuple(sum_to_shape(g, a.shape) for g, a in zip(grads, (query, key, value)))


def sum_to_shape(gradient: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a gradient of a broadcast result back to the input's shape (one axis at a time)."""
    while gradient.ndim > len(shape):
        gradient = gradient.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and gradient.shape[axis] != 1:
            gradient = gradient.sum(axis=axis, keepdims=True)
    return gradient


# ---------------------------------------------------------------- heads
def split_heads_loop(x, num_heads: int) -> np.ndarray:
    """out[..., h, l, d] = x[..., l, h * Dh + d]."""
    x = np.asarray(x)
    *batch, length, d_model = x.shape
    head_dim = d_model // num_heads
    out = np.empty((*batch, num_heads, length, head_dim), dtype=x.dtype)
    for index in np.ndindex(*batch):
        for h in range(num_heads):
            for l in range(length):
                for d in range(head_dim):
                    out[index + (h, l, d)] = x[index + (l, h * head_dim + d)]
    return out


def merge_heads_loop(x) -> np.ndarray:
    """out[..., l, h * Dh + d] = x[..., h, l, d]."""
    x = np.asarray(x)
    *batch, num_heads, length, head_dim = x.shape
    out = np.empty((*batch, length, num_heads * head_dim), dtype=x.dtype)
    for index in np.ndindex(*batch):
        for h in range(num_heads):
            for l in range(length):
                for d in range(head_dim):
                    out[index + (l, h * head_dim + d)] = x[index + (h, l, d)]
    return out


def multi_head_loop(mha, x_query, x_kv=None, attn_mask=None, *, is_causal=False, per_head=False):
    """Multi-head attention as a loop over heads using ``mha``'s weights.

    Query head h uses columns h*Dh..(h+1)*Dh of W_Q and key/value head g = h // (H / Hkv)
    of W_K and W_V; the heads' outputs are concatenated and multiplied by W_O.  With
    ``per_head``, head h uses the mask ``attn_mask[..., h, :, :]`` ``(..., H, L, S)``; else
    every head uses ``attn_mask``.
    """
    x_kv = x_query if x_kv is None else x_kv
    dh, group = mha.head_dim, mha.num_heads // mha.num_kv_heads
    heads = []
    for h in range(mha.num_heads):
        g = h // group
        q = x_query @ mha.w_q[:, h * dh:(h + 1) * dh]  # (..., L, Dh)
        k = x_kv @ mha.w_k[:, g * dh:(g + 1) * dh]  # (..., S, Dh)
        v = x_kv @ mha.w_v[:, g * dh:(g + 1) * dh]  # (..., S, Dh)
        mask = attn_mask[..., h, :, :] if per_head else attn_mask
        heads.append(attention_loop(q, k, v, mask, is_causal=is_causal)[0])
    return np.concatenate(heads, axis=-1) @ mha.w_o  # (..., L, H*Dh) @ (H*Dh, D) -> (..., L, D)


# ---------------------------------------------------------------- positions and windows
def rope_loop(x, positions, base: float = 10000.0, *, interleaved: bool = False) -> np.ndarray:
    """RoPE one pair at a time: pair i is features (i, i + E/2), or (2i, 2i + 1) when ``interleaved``."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    E = x.shape[-1]
    for index in np.ndindex(*x.shape[:-1]):
        position = float(np.broadcast_to(positions, x.shape[:-1])[index])
        for i in range(E // 2):
            a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + E // 2)
            angle = position * base ** (-2 * i / E)
            out[index + (a,)] = x[index + (a,)] * math.cos(angle) - x[index + (b,)] * math.sin(angle)
            out[index + (b,)] = x[index + (a,)] * math.sin(angle) + x[index + (b,)] * math.cos(angle)
    return out


def sliding_window_loop(n_rows: int, n_cols: int, window: int, sinks: int = 0) -> np.ndarray:
    """Query i sees key j when j <= i and (i - j < window or j < sinks)."""
    return np.array([[j <= i and (i - j < window or j < sinks) for j in range(n_cols)] for i in range(n_rows)])
