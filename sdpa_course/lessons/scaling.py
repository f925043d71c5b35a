r"""Measurements the lecture notebooks make, as plain tested functions.

Chapter 4 measures rather than asserts: how the variance of :math:`q \cdot k` grows with
``E`` (= d_k), and how softmax saturates and its gradient vanishes when the scores are not
scaled.  Every function takes a ``numpy.random.Generator`` so a notebook's numbers repeat.  Fit a
power law to what they return with :func:`sdpa_course.lessons.cost.fit_exponent`.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib._checks import check_generator, check_positive_int
from sdpa_lib.softmax import entropy, softmax, softmax_jacobian


def dot_product_samples(d_k: int, n_samples: int, rng: np.random.Generator, *, sigma: float = 1.0) -> np.ndarray:
    r"""``n_samples`` independent dot products :math:`q \cdot k` of vectors with i.i.d. N(0, sigma^2) components.

    Parameters
    ----------
    d_k : int
        Length ``E`` of each vector.
    n_samples : int
        How many (q, k) pairs to draw; memory is ``2 * n_samples * d_k`` floats.
    rng : numpy.random.Generator
    sigma : float
        Standard deviation of every component of q and of k.

    Returns
    -------
    ndarray, shape ``(n_samples,)``
        Mean about 0, variance about :math:`\sigma^4 d_k`.

    Examples
    --------
    >>> s = dot_product_samples(64, 20_000, np.random.default_rng(0))
    >>> s.shape, bool(60 < s.var() < 68)
    ((20000,), True)
    """
    d_k, n_samples = check_positive_int(d_k, "d_k"), check_positive_int(n_samples, "n_samples")
    q = check_generator(rng, "rng").normal(0.0, sigma, size=(n_samples, d_k))  # (N, E)
    k = rng.normal(0.0, sigma, size=(n_samples, d_k))  # (N, E)
    return np.einsum("ne,ne->n", q, k)  # (N, E) . (N, E) -> (N,)


def variance_table(d_ks, rng: np.random.Generator, *, n_samples: int = 4000, sigma: float = 1.0) -> dict:
    r"""Measured mean, variance and standard deviation of :math:`q \cdot k`, raw and divided by :math:`\sqrt{d_k}`.

    Returns
    -------
    dict of ndarrays, one entry per ``d_k``
        ``d_k``, ``mean``, ``variance``, ``std``, ``scaled_variance`` (variance of
        :math:`q \cdot k/\sqrt{d_k}`, which is ``variance / d_k``) and ``theory``
        (:math:`\sigma^4 d_k`).

    Examples
    --------
    >>> table = variance_table([1, 16], np.random.default_rng(0))
    >>> sorted(table), table["theory"].tolist()
    (['d_k', 'mean', 'scaled_variance', 'std', 'theory', 'variance'], [1.0, 16.0])
    """
    d_ks = np.asarray(d_ks, dtype=int)
    samples = [dot_product_samples(int(d), n_samples, rng, sigma=sigma) for d in d_ks]
    variance = np.array([s.var() for s in samples])
    return {"d_k": d_ks, "mean": np.array([s.mean() for s in samples]), "variance": variance,
            "std": np.sqrt(variance), "scaled_variance": variance / d_ks, "theory": sigma**4 * d_ks.astype(float)}


def softmax_saturation(scores) -> dict:
    r"""How saturated the softmax of each score row is, averaged over the rows.

    Parameters
    ----------
    scores : array_like, shape ``(..., L, S)``
        Softmax is taken along the last axis (the keys).

    Returns
    -------
    dict of floats
        ``max_weight``: mean of each row's largest weight (``1/S`` uniform ... 1 one-hot);
        ``entropy``: mean entropy in nats (``log S`` ... 0);
        ``jacobian_norm``: mean Frobenius norm of :math:`J = \operatorname{diag}(p) - pp^\top`,
        the factor every gradient crosses on its way back through softmax (0 one-hot).

    Examples
    --------
    >>> stats = softmax_saturation(np.array([[0.0, 0.0], [100.0, 0.0]]))
    >>> [round(stats[name], 3) for name in ("max_weight", "entropy", "jacobian_norm")]
    [0.75, 0.347, 0.25]
    """
    weights = softmax(scores)  # (..., L, S)
    jacobians = softmax_jacobian(weights)  # (..., L, S, S)
    return {"max_weight": float(weights.max(axis=-1).mean()),
            "entropy": float(entropy(weights).mean()),
            "jacobian_norm": float(np.linalg.norm(jacobians, axis=(-2, -1)).mean())}


def random_scores(d_k: int, rng: np.random.Generator, *, n_queries: int = 256, n_keys: int = 16,
                  scale_exponent: float = 0.5) -> np.ndarray:
    r"""Scores :math:`QK^\top / d_k^{\,a}` of standard-normal queries and keys, ``a = scale_exponent``.

    ``a = 0`` is no scaling, ``a = 0.5`` the paper's :math:`1/\sqrt{d_k}`, ``a = 1`` dividing by ``d_k``.

    Returns
    -------
    ndarray, shape ``(n_queries, n_keys)``
    """
    d_k = check_positive_int(d_k, "d_k")
    q = check_generator(rng, "rng").normal(size=(n_queries, d_k))  # (L, E)
    k = rng.normal(size=(n_keys, d_k))  # (S, E)
    return (q @ k.T) / d_k**scale_exponent  # (L, E) @ (E, S) -> (L, S)


def saturation_sweep(d_ks, rng: np.random.Generator, *, scale_exponent: float = 0.5,
                     n_queries: int = 256, n_keys: int = 16) -> dict:
    r""":func:`softmax_saturation` of :func:`random_scores` for each ``d_k``: how softmax behaves as d_k grows.

    Returns
    -------
    dict of ndarrays
        ``d_k``, ``max_weight``, ``entropy``, ``jacobian_norm``, one value per ``d_k``.

    Examples
    --------
    >>> sweep = saturation_sweep([4, 1024], np.random.default_rng(0), scale_exponent=0)
    >>> bool(sweep["jacobian_norm"][1] < sweep["jacobian_norm"][0])
    True
    """
    rows = [softmax_saturation(random_scores(int(d), rng, n_queries=n_queries, n_keys=n_keys,
                                             scale_exponent=scale_exponent)) for d in d_ks]
    return {"d_k": np.asarray(d_ks, dtype=int),
            **{name: np.array([row[name] for row in rows]) for name in ("max_weight", "entropy", "jacobian_norm")}}
