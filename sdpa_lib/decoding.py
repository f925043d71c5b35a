r"""Generating with a KV cache: each step appends the new tokens' keys and values and attends from their queries.

A decoder writes one token at a time.  The keys and values of the tokens before it do not
change, so they are kept (the *KV cache*) instead of recomputed: a step computes the new
token's query, key and value, appends the key and value to the cache, and attends from the
new query over the whole cache.  The result is the last row of causal attention over the
whole sequence, at ``O(S E)`` work per step instead of ``O(S^2 E)``.

Shape legend: ``...`` leading axes (batch, heads), ``S`` cached tokens, ``T`` new tokens
(1 when decoding, the whole prompt when prefilling an empty cache), ``E`` query/key
features, ``Ev`` value features.
"""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array
from .attention import scaled_dot_product_attention
from .masks import causal_mask


def _check_step(query, key_cache, value_cache, new_key, new_value) -> list[np.ndarray]:
    """The five arrays checked: shapes as :func:`decode_step` documents, one float dtype."""
    named = {"query": (query, "(..., T, E)"), "key_cache": (key_cache, "(..., S, E)"),
             "value_cache": (value_cache, "(..., S, Ev)"), "new_key": (new_key, "(..., T, E)"),
             "new_value": (new_value, "(..., T, Ev)")}
    arrays = {name: as_float_array(a, name, min_ndim=2, legend=legend) for name, (a, legend) in named.items()}
    shapes = ", ".join(f"{name}.shape={a.shape}" for name, a in arrays.items())
    q, kc, vc, k, v = arrays.values()
    if not (q.shape[-2] == k.shape[-2] == v.shape[-2]) or q.shape[-2] == 0:
        raise ValueError(f"query, new_key and new_value must share T >= 1, the new tokens (axis -2); got {shapes}")
    if kc.shape[-2] != vc.shape[-2]:
        raise ValueError(f"key_cache and value_cache must share S, the cached tokens (axis -2); got {shapes}")
    if not (q.shape[-1] == kc.shape[-1] == k.shape[-1]) or vc.shape[-1] != v.shape[-1]:
        raise ValueError(f"query, key_cache and new_key must share E, value_cache and new_value Ev (axis -1); "
                         f"got {shapes}")
    if not (kc.shape[:-2] == k.shape[:-2] and vc.shape[:-2] == v.shape[:-2] == k.shape[:-2]):
        raise ValueError(f"the caches and the new keys and values must have the same leading axes (...), since "
                         f"the new rows are appended to the cache; got {shapes}")
    dtype = np.result_type(*arrays.values())
    return [a.astype(dtype, copy=False) for a in arrays.values()]


def decode_step(query, key_cache, value_cache, new_key, new_value, *, scale=None):
    r"""Append ``T`` new tokens to the KV cache and attend from their queries over the grown cache.

    .. math:: K' = [K_{cache};\,K_{new}],\quad V' = [V_{cache};\,V_{new}],\quad
              \text{out} = \operatorname{softmax}\!\big(Q K'^\top \cdot \text{scale} + M\big)\,V'

    where ``M`` is the bottom-right causal mask (new token ``t`` is position ``S + t``: it
    sees the cache and the new tokens up to itself).  With ``T = 1`` every key is visible.

    Parameters
    ----------
    query : array_like, shape ``(..., T, E)``
        The new tokens' queries (rotated already, if the model uses RoPE).
    key_cache : array_like, shape ``(..., S, E)``; ``S`` may be 0
    value_cache : array_like, shape ``(..., S, Ev)``
    new_key : array_like, shape ``(..., T, E)``
    new_value : array_like, shape ``(..., T, Ev)``
        Leading axes must equal the caches' (rows are appended); ``query``'s broadcast with them.
    scale : float, optional
        Defaults to :math:`1/\sqrt{E}`.

    Returns
    -------
    output : ndarray, shape ``(..., T, Ev)``
        Equal to the last ``T`` rows of causal attention over all ``S + T`` tokens.
    key_cache : ndarray, shape ``(..., S + T, E)``
    value_cache : ndarray, shape ``(..., S + T, Ev)``
        The caches with the new rows appended after the old ones (new arrays; the inputs are
        not changed).

    Raises
    ------
    ValueError
        T that differs between ``query``, ``new_key`` and ``new_value``; S between the caches;
        E or Ev mismatches; leading axes of the caches and the new rows that differ.
    TypeError
        Inputs that are not float32 or float64.

    Notes
    -----
    A real server preallocates the cache and writes into it (PyTorch's ``StaticCache``,
    vLLM's paged blocks) rather than concatenating; the numbers are the same.  Appending
    costs ``O(S)`` copies here, which is fine for teaching and wrong for a server.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    >>> out, k_cache, v_cache = decode_step(q[4:], k[:4], v[:4], k[4:], v[4:])
    >>> out.shape, k_cache.shape
    ((1, 3), (5, 4))
    >>> bool(np.allclose(out, scaled_dot_product_attention(q, k, v, is_causal=True)[4:]))
    True
    """
    query, key_cache, value_cache, new_key, new_value = _check_step(query, key_cache, value_cache, new_key, new_value)
    keys = np.concatenate([key_cache, new_key], axis=-2)  # (..., S, E) ++ (..., T, E) -> (..., S+T, E)
    values = np.concatenate([value_cache, new_value], axis=-2)  # (..., S+T, Ev)
    T, total = query.shape[-2], keys.shape[-2]
    mask = causal_mask(T, total, align="bottom_right")  # (T, S+T): new token t is position S + t
    output = scaled_dot_product_attention(query, keys, values, mask, scale=scale)  # (..., T, Ev)
    return output, keys, values
