"""Chapter 13, positions and masks past causal: RoPE against added position vectors, and how far a window reaches.

* :func:`sinusoidal_positions`: the original Transformer's position vectors, added to the tokens;
* :func:`scores_at_offset`: ``q . k`` of the same two vectors placed ``offset`` apart at many positions,
  with RoPE or with added sinusoids;
* :func:`window_reach`: how many positions back information can come from after ``n`` layers of a
  sliding window.

Shape legend as in the library: ``L`` positions, ``E`` features.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib._checks import check_positive_int
from sdpa_lib.masks import sliding_window_mask
from sdpa_lib.positions import DEFAULT_BASE, apply_rope

from ..i18n.messages import _

METHODS = ("rope", "added")


def sinusoidal_positions(positions, E: int, *, base: float = DEFAULT_BASE) -> np.ndarray:
    r"""Vaswani et al.'s position vectors ``(L, E)``: :math:`\sin(p\,\theta_i)` in the first half, :math:`\cos` in the second.

    The same frequencies :math:`\theta_i = \text{base}^{-2i/E}` as RoPE (laid out in halves, not
    interleaved as in the paper), so the two methods differ only in *how* the position enters: added
    to the token, or as a rotation of q and k.

    Examples
    --------
    >>> sinusoidal_positions([0], 4)
    array([[0., 0., 1., 1.]])
    """
    E = check_positive_int(E, "E")
    angles = np.asarray(positions, dtype=float)[:, None] * base ** (-np.arange(0, E, 2) / E)  # (L, E/2)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)  # (L, E)


def scores_at_offset(q, k, offset: int, positions, *, method: str = "rope", base: float = DEFAULT_BASE) -> np.ndarray:
    """``q . k`` with ``q`` at position ``m`` and ``k`` at ``m + offset``, for every ``m`` in ``positions``: ``(M,)``.

    ``method="rope"`` rotates both (:func:`~sdpa_lib.positions.apply_rope`); ``"added"`` adds
    :func:`sinusoidal_positions` to both, as the original Transformer does to its tokens (with
    identity projections, to isolate the position's effect).  RoPE's scores are the same at every
    ``m``; the added vectors' are not.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.normal(size=8), rng.normal(size=8)
    >>> float(np.ptp(scores_at_offset(q, k, 3, np.arange(100)))) < 1e-12
    True
    >>> float(np.ptp(scores_at_offset(q, k, 3, np.arange(100), method="added"))) > 0.1
    True
    """
    if method not in METHODS:
        raise ValueError(_("method must be one of {methods}; got {method}").format(methods=METHODS,
                                                                                   method=repr(method)))
    m = np.asarray(positions)
    E = np.shape(q)[-1]
    queries, keys = np.broadcast_to(q, (m.size, E)), np.broadcast_to(k, (m.size, E))  # (M, E) each
    if method == "rope":
        queries, keys = apply_rope(queries, m, base=base), apply_rope(keys, m + offset, base=base)
    else:
        queries, keys = queries + sinusoidal_positions(m, E, base=base), keys + sinusoidal_positions(m + offset, E, base=base)
    return np.einsum("me,me->m", queries, keys)  # (M,)


def window_reach(L: int, window: int, layers: int) -> int:
    """How far back the last position's output can draw on after ``layers`` layers of a sliding ``window``.

    One layer sees ``window - 1`` positions back; each further layer another ``window - 1``, through
    the outputs of the positions it sees.  Computed from the masks (which positions reach which, a
    boolean matrix product per layer), not from that formula.

    Examples
    --------
    >>> [window_reach(64, 4, n) for n in (1, 2, 3)]
    [3, 6, 9]
    """
    L, layers = check_positive_int(L, "L"), check_positive_int(layers, "layers")
    mask = sliding_window_mask(L, L, window).astype(np.int64)  # (L, L): one layer
    reach = mask
    for _layer in range(layers - 1):
        reach = np.minimum(reach @ mask, 1)  # (L, L) @ (L, L): a path through one more layer
    return int(L - 1 - np.argmax(reach[-1] > 0))  # distance to the earliest position the last row reaches
