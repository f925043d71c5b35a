"""Attention masks.  Convention: boolean, **True = may attend** (as PyTorch SDPA and JAX).

Beware: ``torch.nn.MultiheadAttention(key_padding_mask=...)`` uses the opposite meaning
(True = ignore).  A float mask is a *bias* added to the scores: 0 keeps, ``-inf`` removes.
"""
from __future__ import annotations

import numpy as np

from ._checks import check_mask, check_positive_int


ALIGNMENTS = ("top_left", "bottom_right")


def causal_mask(L: int, S: int | None = None, *, align: str = "top_left") -> np.ndarray:
    """Lower-triangular mask ``(L, S)``: query ``i`` may attend to keys ``j <= i``.

    Top-left aligned by default when ``L != S`` (as PyTorch's ``is_causal``): row ``i`` sees
    keys ``0 .. i``, so with ``L > S`` the last rows see every key and with ``L < S`` the
    last keys are seen by nobody.  ``align="bottom_right"`` (PyTorch's ``causal_lower_right``)
    makes query ``i`` the token at position ``S - L + i``: what ``L`` new tokens appended
    after ``S - L`` cached ones need (:func:`~sdpa_lib.decoding.decode_step`).

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    >>> causal_mask(2, 3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0]])
    >>> causal_mask(2, 3, align="bottom_right").astype(int)
    array([[1, 1, 0],
           [1, 1, 1]])
    """
    L = check_positive_int(L, "L")
    S = L if S is None else check_positive_int(S, "S")
    if align not in ALIGNMENTS:
        raise ValueError(f"align must be 'top_left' or 'bottom_right'; got {align!r}")
    return np.tril(np.ones((L, S), dtype=bool), k=S - L if align == "bottom_right" else 0)


def sliding_window_mask(L: int, S: int, window: int, *, sinks: int = 0) -> np.ndarray:
    """Causal mask ``(L, S)`` that keeps only the last ``window`` keys: query ``i`` sees ``i - window < j <= i``.

    Top-left aligned like :func:`causal_mask` (row ``i`` is position ``i``); ``window`` counts
    the query's own key, so ``window=1`` is the diagonal and ``window >= S`` is the causal
    mask.  ``sinks`` keeps the first ``sinks`` keys visible to every query that has reached
    them as well (StreamingLLM's attention sinks), whatever the window.

    Examples
    --------
    >>> sliding_window_mask(4, 4, 2).astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    >>> sliding_window_mask(4, 4, 2, sinks=1)[:, 0].astype(int)
    array([1, 1, 1, 1])
    """
    L, S = check_positive_int(L, "L"), check_positive_int(S, "S")
    window = check_positive_int(window, "window")
    if isinstance(sinks, bool) or not isinstance(sinks, (int, np.integer)) or sinks < 0:
        raise ValueError(f"sinks must be a non-negative integer; got {sinks!r}")
    causal = causal_mask(L, S)  # j <= i
    recent = np.triu(np.ones((L, S), dtype=bool), k=1 - window)  # j >= i - window + 1
    return causal & (recent | (np.arange(S) < sinks))  # (L, S) & ((L, S) | (S,)) -> (L, S)


def block_diagonal_mask(lengths) -> np.ndarray:
    """Mask ``(L, L)`` for sequences packed into one row, ``L = sum(lengths)``: a token sees only its own sequence.

    Packing several short sequences into one row of a batch avoids padding; this mask keeps
    them apart.  Combine it with :func:`causal_mask` for a decoder:
    ``combine_masks(block_diagonal_mask(lengths), causal_mask(L))``.

    Examples
    --------
    >>> block_diagonal_mask([2, 1]).astype(int)
    array([[1, 1, 0],
           [1, 1, 0],
           [0, 0, 1]])
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.size == 0 or lengths.dtype.kind not in "iu" or np.any(lengths < 1):
        raise ValueError(f"lengths must be a non-empty 1-D sequence of positive integers (one per packed "
                         f"sequence); got {lengths!r}")
    segment = np.repeat(np.arange(lengths.size), lengths)  # (L,): which sequence each token belongs to
    return segment[:, None] == segment[None, :]  # (L, 1) == (1, L) -> (L, L)


def padding_mask(lengths, S: int) -> np.ndarray:
    """Key-padding mask ``(B, 1, S)``: in sequence ``b`` only the first ``lengths[b]`` keys are real.

    The middle axis of size 1 broadcasts over the queries, so the result can be passed
    as ``attn_mask`` for scores of shape ``(B, L, S)``; add an axis for heads:
    ``padding_mask(lengths, S)[:, None]`` is ``(B, 1, 1, S)``.

    Examples
    --------
    >>> padding_mask([2, 3], 4).astype(int)
    array([[[1, 1, 0, 0]],
    <BLANKLINE>
           [[1, 1, 1, 0]]])
    """
    S = check_positive_int(S, "S")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
        raise ValueError(f"lengths must be a 1-D sequence of integers (one per batch row); got {lengths!r}")
    if np.any(lengths < 0) or np.any(lengths > S):
        raise ValueError(f"every length must lie in [0, S={S}]; got lengths={lengths.tolist()}")
    return (np.arange(S) < lengths[:, None])[:, None, :]  # (B, 1) vs (S,) -> (B, S) -> (B, 1, S)


def combine_masks(*masks) -> np.ndarray:
    """Logical AND of boolean masks, broadcast together: a key is attended only if every mask allows it.

    Examples
    --------
    >>> combine_masks(causal_mask(3), padding_mask([2], 3))[0].astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 0]])
    """
    if not masks:
        raise ValueError("combine_masks needs at least one mask")
    arrays = [np.asarray(m) for m in masks]
    for position, mask in enumerate(arrays):
        if mask.dtype != np.bool_:
            raise TypeError(f"mask {position} must be bool (True = may attend); got dtype {mask.dtype}")
    try:
        return np.logical_and.reduce(np.broadcast_arrays(*arrays))
    except ValueError:
        raise ValueError(f"masks do not broadcast together: shapes {[m.shape for m in arrays]}") from None


def mask_to_bias(mask, dtype=np.float64) -> np.ndarray:
    """Turn a boolean mask into an additive bias: 0 where True, ``-inf`` where False.

    ``-inf`` (not a large negative constant such as ``-1e9``) is exact in every float
    type: ``exp(-inf) = 0``, while ``-1e9`` overflows float16 and leaves a tiny weight
    behind when the real scores are large.

    Examples
    --------
    >>> mask_to_bias(np.array([True, False]))
    array([  0., -inf])
    """
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"mask must be bool (True = may attend); got dtype {mask.dtype}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"dtype must be a float type; got {dtype}")
    return np.where(mask, dtype.type(0), dtype.type(-np.inf))


def check_causal_exclusive(attn_mask, is_causal: bool) -> None:
    """``is_causal`` and an explicit ``attn_mask`` are mutually exclusive (as in PyTorch)."""
    if is_causal and attn_mask is not None:
        raise ValueError("pass either attn_mask or is_causal=True, not both "
                         "(combine them first with combine_masks(causal_mask(L, S), mask))")


def _resolve_mask(attn_mask, is_causal: bool, scores_shape: tuple):
    """The mask that scores of shape ``(..., L, S)`` get: ``attn_mask`` checked, or the causal mask, or None."""
    check_causal_exclusive(attn_mask, is_causal)
    if is_causal:
        return causal_mask(*scores_shape[-2:])
    if attn_mask is None:
        return None
    return check_mask(attn_mask, scores_shape)


def _apply_mask(scores: np.ndarray, mask) -> np.ndarray:
    """``scores`` (in place when the shapes allow) with a bool mask's False set to -inf or a float mask added."""
    if mask is None:
        return scores
    full_shape = np.broadcast_shapes(scores.shape, mask.shape)
    if full_shape != scores.shape:
        scores = np.broadcast_to(scores, full_shape).copy()
    if mask.dtype == np.bool_:
        np.copyto(scores, scores.dtype.type(-np.inf), where=~mask)
    else:
        scores += mask.astype(scores.dtype, copy=False)
    return scores
