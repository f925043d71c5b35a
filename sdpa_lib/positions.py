r"""Positions inside attention: RoPE rotates queries and keys, ALiBi adds a distance penalty to the scores.

Attention alone ignores order (permuting the keys permutes nothing in a query's output).
Both schemes here put the positions into the scores themselves, so that a score depends on
how far apart two tokens are rather than on where they stand:

* RoPE (Su et al. 2021, RoFormer) rotates pairs of features of ``q`` and ``k`` by angles
  proportional to the position; then :math:`\langle R_m q, R_n k\rangle = \langle q, R_{n-m} k\rangle`.
* ALiBi (Press et al. 2022, "Train short, test long") adds :math:`-m_h\,|i - j|` to the
  scores of head ``h``.

Shape legend as in the whole library: ``...`` leading axes, ``L`` positions, ``E`` features.
"""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_positive_int

DEFAULT_BASE = 10000.0  # the RoFormer paper's and Llama 2's; Llama 3 uses 500000


def rope_frequencies(E: int, *, base: float = DEFAULT_BASE) -> np.ndarray:
    r"""The ``E / 2`` rotation speeds :math:`\theta_i = \text{base}^{-2i/E}`, radians per position, float64.

    Pair 0 turns by 1 radian per position, the last pair by about ``1 / base``: fast pairs tell
    neighbours apart, slow ones keep far positions distinct.

    Examples
    --------
    >>> rope_frequencies(4, base=100.0)
    array([1. , 0.1])
    """
    E = check_positive_int(E, "E")
    if E % 2:
        raise ValueError(f"RoPE rotates pairs of features, so E must be even; got E={E}")
    if isinstance(base, bool) or not isinstance(base, (int, float, np.integer, np.floating)) \
            or not np.isfinite(base) or base <= 1:
        raise ValueError(f"base must be a finite number greater than 1; got {base!r}")
    return float(base) ** (-np.arange(0, E, 2) / E)  # (E/2,)


def _positions(positions, leading: tuple, name: str = "positions") -> np.ndarray:
    """``positions`` as float64 that broadcasts to ``leading`` = ``x.shape[:-1]`` = ``(..., L)``."""
    array = np.asarray(positions)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers (or floats, for interpolated positions); got dtype {array.dtype}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite; got {array!r}")
    try:
        full = np.broadcast_shapes(array.shape, leading)
    except ValueError:
        full = None
    if full != leading:
        raise ValueError(f"{name} must broadcast to x's (..., L) = {leading}, one position per row of x; "
                         f"got {name}.shape={array.shape}")
    return array.astype(np.float64)


def apply_rope(x, positions, *, base: float = DEFAULT_BASE) -> np.ndarray:
    r"""Rotary position embedding: rotate feature pairs of ``x`` by ``position * theta_i``.

    With :math:`h = E/2`, feature ``i`` and feature ``i + h`` form pair ``i`` (the
    *rotate-half* layout of GPT-NeoX and Hugging Face's Llama), turned by the angle
    :math:`p\,\theta_i`, :math:`\theta_i = \text{base}^{-2i/E}`:

    .. math:: y_i = x_i\cos p\theta_i - x_{i+h}\sin p\theta_i,\qquad
              y_{i+h} = x_i \sin p\theta_i + x_{i+h}\cos p\theta_i

    Parameters
    ----------
    x : array_like, float32 or float64, shape ``(..., L, E)``, E even
        Queries or keys of one head (never values: see Notes).
    positions : array_like of int (or float), broadcastable to ``(..., L)``
        The position of each row, usually ``np.arange(L)``, or ``S + np.arange(L)`` for
        tokens that follow ``S`` cached ones.
    base : float > 1
        Sets the slowest pair's speed, :func:`rope_frequencies`.

    Returns
    -------
    ndarray, shape and dtype of ``x``
        Every pair keeps its length (a rotation), and for one ``q`` and one ``k``,
        ``apply_rope(q, m) . apply_rope(k, n)`` depends on ``n - m`` only.

    Raises
    ------
    ValueError
        E odd, positions that do not broadcast to ``(..., L)`` or are not finite, ``base <= 1``.
    TypeError
        ``x`` not float32/float64, positions neither integers nor floats.

    Notes
    -----
    The other layout, *interleaved*, pairs features ``2i`` and ``2i + 1`` (the RoFormer
    paper, Meta's original Llama code as complex multiplication, GPT-J).  It is the same
    rotation with the features permuted: ``interleaved(x) = rotate_half(x[..., P])[..., P^-1]``
    where ``P`` lists the even features, then the odd ones.  Checkpoints converted between
    the two permute the columns of ``W_Q`` and ``W_K`` once, and the scores do not change.
    Only queries and keys are rotated: positions must shape *which* keys a query matches,
    while a value is content to be averaged, and a rotated value would carry its position
    into the output.  Angles are computed in float64 and rounded to ``x``'s dtype.

    Examples
    --------
    >>> y = apply_rope(np.array([[1.0, 0.0], [1.0, 0.0]]), [0, 1], base=100.0)
    >>> y.round(3)
    array([[1.   , 0.   ],
           [0.54 , 0.841]])
    >>> q, k = np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([[0.5, -1.0, 2.0, 0.0]])
    >>> near = apply_rope(q, [3]) @ apply_rope(k, [5]).T  # offset 2
    >>> far = apply_rope(q, [103]) @ apply_rope(k, [105]).T  # offset 2, 100 positions later
    >>> bool(np.allclose(near, far))
    True
    """
    x = as_float_array(x, "x", min_ndim=2, legend="(..., L, E)")
    frequencies = rope_frequencies(x.shape[-1], base=base)  # (E/2,)
    angles = _positions(positions, x.shape[:-1])[..., None] * frequencies  # (..., L, 1) * (E/2,) -> (..., L, E/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    half = x.shape[-1] // 2
    first, second = x[..., :half], x[..., half:]  # (..., L, E/2) each: pair i is (first[i], second[i])
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)  # (..., L, E)


def alibi_slopes(num_heads: int) -> np.ndarray:
    r"""ALiBi's per-head slopes ``(H,)``: :math:`m_h = 2^{-8(h+1)/H}` for ``H`` a power of two.

    For other ``H``, Press et al.'s recipe: the slopes of the nearest lower power of two ``n``,
    then every other slope of ``2n`` heads, up to ``H``.

    Examples
    --------
    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    >>> alibi_slopes(6).tolist()[4:]  # every other slope of 8 heads: 2^-1, 2^-3
    [0.5, 0.125]
    """
    H = check_positive_int(num_heads, "num_heads")
    n = 2 ** int(np.floor(np.log2(H)))
    slopes = 2.0 ** (-8.0 * np.arange(1, n + 1) / n)  # (n,)
    extra = 2.0 ** (-8.0 * np.arange(1, 2 * n + 1) / (2 * n))[0::2][:H - n]  # (H - n,): odd heads of 2n
    return np.concatenate([slopes, extra])


def alibi_bias(L: int, S: int | None = None, *, num_heads: int, dtype=np.float64) -> np.ndarray:
    r"""ALiBi's additive bias ``(H, L, S)``: :math:`-m_h\,|i - j|`, 0 on the diagonal, added to the scaled scores.

    Below the diagonal (``j <= i``) this is the paper's :math:`-m_h (i - j)`; above it a causal
    mask removes the entries anyway, and the symmetric form is what encoder variants use.
    Positions are top-left aligned, as in :func:`~sdpa_lib.masks.causal_mask`.

    Examples
    --------
    >>> alibi_bias(3, num_heads=2)[0]
    array([[ 0.    , -0.0625, -0.125 ],
           [-0.0625,  0.    , -0.0625],
           [-0.125 , -0.0625,  0.    ]])
    """
    L = check_positive_int(L, "L")
    S = L if S is None else check_positive_int(S, "S")
    distance = np.abs(np.arange(L)[:, None] - np.arange(S)[None, :])  # (L, 1) - (1, S) -> (L, S)
    return (alibi_slopes(num_heads)[:, None, None] * -distance).astype(dtype)  # (H, 1, 1) * (L, S) -> (H, L, S)
