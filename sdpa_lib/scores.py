"""From tokens to scores: the Q/K/V projections and the three ways to compare q with k."""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_generator, check_positive_int, check_query_key, check_scale


def project_qkv(x, w_q, w_k, w_v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Project the same tokens into queries, keys and values: :math:`Q = XW^Q,\ K = XW^K,\ V = XW^V`.

    Parameters
    ----------
    x : array_like, shape ``(..., L, D)``
        One row per token, ``D = d_model`` features.
    w_q, w_k : array_like, shape ``(D, E)``
    w_v : array_like, shape ``(D, Ev)``

    Returns
    -------
    q, k : ndarray, shape ``(..., L, E)``
    v : ndarray, shape ``(..., L, Ev)``

    Raises
    ------
    ValueError
        If a weight is not 2-D, its first axis is not ``D``, or ``w_q`` and ``w_k`` differ in E.

    Examples
    --------
    >>> x = np.ones((3, 4)); w = np.ones((4, 2))
    >>> [a.shape for a in project_qkv(x, w, w, np.ones((4, 5)))]
    [(3, 2), (3, 2), (3, 5)]
    """
    x = as_float_array(x, "x", min_ndim=2, legend="(..., L, D)")
    weights = {name: as_float_array(w, name, min_ndim=2, legend="(D, E)")
               for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v))}
    for name, w in weights.items():
        if w.ndim != 2 or w.shape[0] != x.shape[-1]:
            raise ValueError(f"{name} must have shape (D, E) with D = x.shape[-1] = {x.shape[-1]}; "
                             f"got {name}.shape={w.shape}")
    if weights["w_q"].shape[1] != weights["w_k"].shape[1]:
        raise ValueError(f"w_q and w_k must give the same E so that q . k is defined; "
                         f"got w_q.shape={weights['w_q'].shape}, w_k.shape={weights['w_k'].shape}")
    # (..., L, D) @ (D, E) -> (..., L, E), once per role
    return tuple(x @ weights[name] for name in ("w_q", "w_k", "w_v"))


def init_projection(d_model: int, d_out: int, rng: np.random.Generator, dtype=np.float64) -> np.ndarray:
    r"""A projection matrix ``(d_model, d_out)`` drawn from :math:`N(0, 1/d_{model})`.

    The variance ``1/d_model`` (LeCun / Xavier-style fan-in scaling) keeps each output
    component at the variance of an input component, so ``q . k`` starts with variance
    about ``E`` and the ``1/sqrt(E)`` scale brings it to about 1.

    Examples
    --------
    >>> w = init_projection(512, 64, np.random.default_rng(0))
    >>> w.shape, bool(abs(w.var() * 512 - 1) < 0.05)
    ((512, 64), True)
    """
    d_model = check_positive_int(d_model, "d_model")
    d_out = check_positive_int(d_out, "d_out")
    return check_generator(rng, "rng").normal(0.0, 1.0 / np.sqrt(d_model), size=(d_model, d_out)).astype(dtype)


def dot_product_scores(query, key) -> np.ndarray:
    r"""Raw scores :math:`s_{ij} = q_i \cdot k_j`, all pairs at once: :math:`QK^\top`.

    Parameters
    ----------
    query : array_like, shape ``(..., L, E)``
    key : array_like, shape ``(..., S, E)``

    Returns
    -------
    ndarray, shape ``(..., L, S)``

    Raises
    ------
    ValueError
        "query has E=64 but key has E=32" when the feature sizes differ.

    Examples
    --------
    >>> dot_product_scores(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0], [1.0, 0.0]]))
    array([[11.,  1.]])
    """
    query = as_float_array(query, "query", min_ndim=2)
    key = as_float_array(key, "key", min_ndim=2, legend="(..., S, E)")
    check_query_key(query, key)
    return query @ np.swapaxes(key, -1, -2)  # (..., L, E) @ (..., E, S) -> (..., L, S)


def cosine_scores(query, key, eps: float = 1e-12) -> np.ndarray:
    r"""Cosine similarity :math:`\cos\theta_{ij} = \frac{q_i \cdot k_j}{\|q_i\|\|k_j\|}`, in [-1, 1].

    A zero vector has cosine 0 with everything (``eps`` guards the division).

    Examples
    --------
    >>> cosine_scores(np.array([[1.0, 0.0]]), np.array([[5.0, 0.0], [0.0, 2.0]]))
    array([[1., 0.]])
    """
    query = as_float_array(query, "query", min_ndim=2)
    key = as_float_array(key, "key", min_ndim=2, legend="(..., S, E)")
    check_query_key(query, key)
    q_unit = query / np.maximum(np.linalg.norm(query, axis=-1, keepdims=True), eps)  # (..., L, E)
    k_unit = key / np.maximum(np.linalg.norm(key, axis=-1, keepdims=True), eps)  # (..., S, E)
    return q_unit @ np.swapaxes(k_unit, -1, -2)  # (..., L, E) @ (..., E, S) -> (..., L, S)


def default_scale(e: int) -> float:
    """The paper's scale ``1 / sqrt(E)``."""
    return 1.0 / np.sqrt(e)


def scaled_scores(query, key, scale: float | None = None) -> np.ndarray:
    r"""Scaled scores :math:`QK^\top \cdot \text{scale}`, by default :math:`QK^\top/\sqrt{E}`.

    With unit-variance, independent components, ``Var(q . k) = E``; the default scale
    brings the variance back to 1 whatever E is.

    Examples
    --------
    >>> scaled_scores(np.ones((1, 4)), np.ones((2, 4)))
    array([[2., 2.]])
    """
    scores = dot_product_scores(query, key)  # (..., L, S)
    return scores * _scale_factor(scale, scores.dtype, np.shape(key)[-1])


def _scale_factor(scale, dtype, E: int):
    """``scale``, or ``1/sqrt(E)`` if it is None, checked, as a scalar of ``dtype`` (float32 stays float32)."""
    check_scale(scale)
    return np.dtype(dtype).type(default_scale(E) if scale is None else scale)
