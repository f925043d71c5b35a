"""Named wrong answers for RoPE's rotation (chapter 13), and the property every rotation must keep.

Every ``compute`` takes ``(x, positions, base=10000.0)``, ``x (..., L, E)`` with E even and
``positions (L,)``, and returns what that mistake outputs.  Most of these slips still rotate
by an angle proportional to the position, so they keep the relative-offset property and
only the comparison with the reference catches them; :func:`rope_offset_problem` catches the
ones that do not rotate at all.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.positions import apply_rope as _rope
from ..mistakes import Mistake
from ...i18n.messages import _


def _rotate(x, angles, pairs: str = "half"):
    """Rotate feature pairs of ``x`` by ``angles (..., L, E/2)``; ``pairs`` "half" (i, i + E/2) or "interleaved"."""
    if pairs == "half":
        half = x.shape[-1] // 2
        first, second = x[..., :half], x[..., half:]
    else:
        first, second = x[..., 0::2], x[..., 1::2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = first * cos - second * sin, first * sin + second * cos
    if pairs == "half":
        return np.concatenate([a, b], axis=-1)
    return np.stack([a, b], axis=-1).reshape(x.shape)  # (..., L, E/2, 2) -> (..., L, E)


def _angles(x, positions, base, exponent=2.0):
    E = x.shape[-1]
    return np.asarray(positions, dtype=float)[:, None] * base ** (-exponent * np.arange(E // 2) / E)  # (L, E/2)


ROPE_MISTAKES = (
    Mistake("interleaved pairs (2i, 2i + 1) instead of rotate-half (i, i + E/2)",
            lambda x, positions, base=10000.0: _rotate(x, _angles(x, positions, base), "interleaved"),
            "Your rotation is valid RoPE in the other layout (the RoFormer paper's, GPT-J's), but this exercise, like "
            "sdpa_lib and Hugging Face's Llama, pairs feature i with feature i + E/2: first, second = x[..., :E//2], "
            "x[..., E//2:]. The two layouts differ by a fixed permutation of the features."),
    Mistake("frequencies base^(-i/E) instead of base^(-2i/E)",
            lambda x, positions, base=10000.0: _rotate(x, _angles(x, positions, base, exponent=1.0)),
            "Pair i turns at theta_i = base ** (-2 * i / E) for i = 0 .. E/2 - 1 (so the exponent runs over the even "
            "numbers 0, 2, 4 .. below E): np.arange(0, E, 2) / E, or 2 * np.arange(E // 2) / E."),
    Mistake("rotated the wrong way (sin with the opposite sign)",
            lambda x, positions, base=10000.0: _rope(x, -np.asarray(positions), base=base),
            "The rotation by angle a maps (x1, x2) to (x1 cos a - x2 sin a, x1 sin a + x2 cos a). Yours turns "
            "clockwise: the scores still depend on the offset alone, but with the sign of the offset reversed."),
    Mistake("positions off by one (position + 1)",
            lambda x, positions, base=10000.0: _rope(x, np.asarray(positions) + 1, base=base),
            "Rotate row l by positions[l] itself: the first token of a sequence (position 0) is not rotated at all."),
    Mistake("row index used instead of positions",
            lambda x, positions, base=10000.0: _rope(x, np.arange(x.shape[-2]), base=base),
            "Use the positions you are given, not 0 .. L-1: with a KV cache the new token's position is the number of "
            "tokens before it, and packed sequences restart at 0."),
    Mistake("base ignored (always 10000)",
            lambda x, positions, base=10000.0: _rope(x, positions),
            "Use the base argument: Llama 3 uses 500000, and changing the base is how context extension rescales "
            "the rotation speeds."),
)


def _structured(x, positions):
    """``(P, t)`` when ``x``'s rows repeat after P rows and the positions of the repeat are shifted by t, else None."""
    x, positions = np.asarray(x), np.asarray(positions)
    L = x.shape[-2]
    if L % 2 or positions.shape != (L,):
        return None
    P = L // 2
    shift = positions[P:] - positions[:P]
    if not (np.array_equal(x[..., :P, :], x[..., P:, :]) and np.all(shift == shift[0])):
        return None
    return P, int(shift[0])


def rope_offset_problem(answer, x, positions, base=10000.0):
    """Why ``answer`` (the rotated ``x``) breaks "q . k depends only on the offset", or None where it keeps it.

    Checked where it can be: when the rows of ``x`` repeat after P rows at positions shifted by t,
    every dot product between rows of the first P must equal the one between their repeats.

    Examples
    --------
    >>> x, positions = np.tile(np.eye(4)[:2], (2, 1)), np.array([0, 3, 5, 8])
    >>> rope_offset_problem(_rope(x, positions), x, positions) is None
    True
    >>> rope_offset_problem(x * np.cos(positions)[:, None], x, positions)[:54]
    'after your rotation, q . k depends on where the tokens'
    """
    found = _structured(x, positions)
    answer = np.asarray(answer) if isinstance(answer, np.ndarray) else None
    if found is None or answer is None or answer.shape != np.shape(x) or not np.issubdtype(answer.dtype, np.floating):
        return None  # nothing to check here; the comparison with the answer reports the rest
    P, shift = found
    first, again = answer[..., :P, :], answer[..., P:, :]
    before = first @ np.swapaxes(first, -1, -2)  # (..., P, E) @ (..., E, P) -> (..., P, P)
    after = again @ np.swapaxes(again, -1, -2)
    scale = np.max(np.abs(np.asarray(x, dtype=float))) ** 2 * x.shape[-1]
    tolerance = (1e-3 if answer.dtype == np.float32 else 1e-8) * max(scale, 1.0)
    wrong = np.abs(before - after) > tolerance
    if not np.any(wrong):
        return None
    *batch, i, j = np.argwhere(wrong)[0]
    index = (*batch, i, j)
    m, n = int(positions[i]), int(positions[j])
    return _("after your rotation, q . k depends on where the tokens are, not only on how far apart: rows {row_i} "
             "and {row_j} of x, at positions {position_i} and {position_j}, give {score:.6g}, and the same two rows at "
             "positions {shifted_i} and {shifted_j} (the offset is {offset} both times) give {shifted_score:.6g}. "
             "Rotate each pair (x_i, x_(i+E/2)) by the angle position * theta_i, a rotation of the plane: "
             "(x1 cos a - x2 sin a, x1 sin a + x2 cos a); then R_m q . R_n k = q . R_(n-m) k.").format(
        row_i=i, row_j=j, position_i=m, position_j=n, score=before[index], shifted_i=m + shift, shifted_j=n + shift,
        offset=n - m, shifted_score=after[index])
