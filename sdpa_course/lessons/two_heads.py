"""Chapter 6's small worlds: a task one attention head cannot solve and two heads can (exam
point 5), and the 2-D convex hull that every attention output lies in.

Every token carries random *content* ``c`` (``C`` numbers) and a one-hot *position*.
The target at position ``i`` is ``[c_{i-1}, c_0]``: the previous token's content beside
the first token's.  One head forms a single weighted average of the tokens, so its
output can only carry one mixture ``a c_{i-1} + b c_0 + ...``; no linear read-out can
pull two different contents back out of one sum.  Two heads attend in two different
ways at once and solve it exactly.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.heads import MultiHeadAttention

from ..i18n.messages import _


def copy_two_task(batch: int, length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``(B, L, 2L)`` = [content (L numbers), one-hot position (L)] and targets ``(B, L, 2L)`` = [c_{i-1}, c_0].

    The content size equals ``length`` so that ``d_model = 2 L`` splits into two heads of
    ``L`` features each.  Position 0 has no predecessor; its "previous" is itself.
    """
    content = rng.normal(size=(batch, length, length))  # (B, L, C), C = L
    positions = np.broadcast_to(np.eye(length), (batch, length, length))  # (B, L, L)
    x = np.concatenate([content, positions], axis=-1)  # (B, L, 2L)
    previous = content[:, np.maximum(np.arange(length) - 1, 0)]  # (B, L, C)
    first = np.broadcast_to(content[:, :1], content.shape)  # (B, L, C)
    return x, np.concatenate([previous, first], axis=-1)  # (B, L, 2C)


def two_head_solution(length: int, sharpness: float = 40.0) -> MultiHeadAttention:
    """Hand-set weights for :func:`copy_two_task`: head 1 looks one position back, head 2 at position 0.

    Queries and keys read only the one-hot positions.  Head 1's query at ``i`` is
    ``sharpness * e_{i-1}``, head 2's is ``sharpness * e_0``; every key is ``e_j``.  So
    the score is ``sharpness / sqrt(L)`` on the wanted key and 0 elsewhere, and the
    weights approach one-hot as ``sharpness`` grows.  Values copy the content, each head
    into its own half; ``W_O`` is the identity.
    """
    d_model = 2 * length
    mha = MultiHeadAttention(d_model, 2, np.random.default_rng(0))
    eye, zeros = np.eye(length), np.zeros((length, length))
    shift_back = np.eye(length, k=-1)  # row i has its 1 in column i-1: e_i -> e_{i-1}
    shift_back[0, 0] = 1.0  # position 0 looks at itself
    to_first = np.zeros((length, length))
    to_first[:, 0] = 1.0  # every position -> e_0
    # rows: [content; position] of the input, columns: [head 1 | head 2]
    mha.w_q = sharpness * np.block([[zeros, zeros], [shift_back, to_first]])  # (2L, 2L)
    mha.w_k = np.block([[zeros, zeros], [eye, eye]])  # (2L, 2L)
    mha.w_v = np.block([[eye, eye], [zeros, zeros]])  # (2L, 2L)
    mha.w_o = np.eye(d_model)  # (2L, 2L)
    return mha


def relative_error(prediction, target) -> float:
    """``mean((prediction - target)^2) / mean(target^2)``: 0 is perfect, 1 is no better than predicting 0."""
    return float(np.mean((prediction - target) ** 2) / np.mean(target ** 2))


def best_one_head_error(x, target, mix: float) -> float:
    """Best error of any linear read-out of one head whose weights split ``mix`` / ``1 - mix`` between the two tokens wanted.

    One head's output at ``i`` is ``W_O W_V`` applied to the average
    ``mix * x_{i-1} + (1 - mix) * x_0``: we build that average and fit the best linear
    map (with bias) to the targets by least squares, over positions ``i >= 2`` (where
    the two tokens differ).  Any other weighting only mixes in more unwanted content.
    """
    length = x.shape[1]
    rows = np.arange(2, length)
    mixture = mix * x[:, rows - 1] + (1 - mix) * x[:, :1]  # (B, L-2, 2L)
    features = mixture.reshape(-1, x.shape[-1])  # (B*(L-2), 2L)
    features = np.hstack([features, np.ones((features.shape[0], 1))])  # add a bias column
    wanted = target[:, rows].reshape(-1, target.shape[-1])  # (B*(L-2), 2C)
    # Least squares through the normal equations: two small products and a (2L+1)-square solve.
    # Same fit as lstsq on the tall matrix, but one LAPACK call on a tiny matrix instead of many
    # threaded BLAS calls on a tall one, which crawl when the machine is busy.
    gram = features.T @ features  # (2L+1, N) @ (N, 2L+1) -> (2L+1, 2L+1)
    moment = features.T @ wanted  # (2L+1, N) @ (N, 2C) -> (2L+1, 2C)
    readout, *_ = np.linalg.lstsq(gram, moment, rcond=None)  # (2L+1, 2C); lstsq copes with mix = 0 (rank-deficient)
    return relative_error(features @ readout, wanted)  # (N, 2L+1) @ (2L+1, 2C) -> (N, 2C)


def convex_hull_2d(points) -> np.ndarray:
    """Corners of the convex hull of 2-D ``points`` ``(N, 2)``, counter-clockwise (Andrew's monotone chain).

    Chapter 6 draws it around the value vectors: every attention output lies inside.

    Examples
    --------
    >>> convex_hull_2d([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]]).tolist()
    [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    """
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 2 or len(points) < 3:
        raise ValueError(_("points must have shape (N, 2) with N >= 3; got {shape}").format(shape=points.shape))
    ordered = sorted(map(tuple, points))

    def half(sequence):
        chain = []
        for p in sequence:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], p) <= 0:
                chain.pop()
            chain.append(p)
        return chain[:-1]

    return np.array(half(ordered) + half(reversed(ordered)))


def _cross(o, a, b) -> float:
    """z of (a - o) x (b - o): positive when o -> a -> b turns left."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def inside_convex_hull(points, hull, tol: float = 1e-9) -> np.ndarray:
    """For each of ``points`` ``(M, 2)``: is it inside (or on) the counter-clockwise ``hull`` ``(K, 2)``?"""
    points, hull = np.asarray(points, dtype=float), np.asarray(hull, dtype=float)
    edges = np.roll(hull, -1, axis=0) - hull  # (K, 2)
    offsets = points[:, None, :] - hull[None, :, :]  # (M, 1, 2) - (1, K, 2) -> (M, K, 2)
    cross = edges[None, :, 0] * offsets[..., 1] - edges[None, :, 1] * offsets[..., 0]  # (M, K)
    return np.all(cross >= -tol, axis=1)
