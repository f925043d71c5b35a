"""Named wrong answers for causal, padding and sliding-window masks, masked attention and cross-attention (chapters 8, 13).

Masks are bool with True = may attend.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.attention import scaled_dot_product_attention as _attention
from sdpa_lib.masks import causal_mask as _causal
from sdpa_lib.masks import padding_mask as _padding
from sdpa_lib.softmax import softmax as _softmax
from ..mistakes import Mistake
from .attention import masked, scores, weights


def _ones(L, S):
    return np.ones((L, L if S is None else S), dtype=bool)


CAUSAL_MASK_MISTAKES = (
    Mistake("causal mask transposed (upper triangle)", lambda L, S=None: np.triu(_ones(L, S)),
            "Query i may attend to keys j <= i, the past: that is the lower triangle, np.tril. The upper "
            "triangle lets every query see the future."),
    Mistake("causal mask without the diagonal", lambda L, S=None: np.tril(_ones(L, S), k=-1),
            "A token may attend to itself (j = i); excluding the diagonal leaves the first query with no key."),
    Mistake("causal mask aligned bottom-right", lambda L, S=None: np.tril(_ones(L, S), k=(L if S is None else S) - L),
            "This course (like PyTorch's is_causal) aligns the mask top-left: row i sees keys 0 .. i whatever "
            "S is, so np.tril(np.ones((L, S), bool)) with no offset."),
    Mistake("mask sign flipped (True = blocked)", lambda L, S=None: ~np.tril(_ones(L, S)),
            "The convention is True = may attend (as PyTorch SDPA and JAX): the allowed keys j <= i are True."),
)

def _band(L, S, low, high):
    """True where ``low <= i - j <= high`` (key j counted back from query i)."""
    offset = np.arange(L)[:, None] - np.arange(S)[None, :]  # (L, 1) - (1, S) -> (L, S): i - j
    return (offset >= low) & (offset <= high)


SLIDING_WINDOW_MISTAKES = (
    Mistake("window off by one (window + 1 keys)", lambda L, S, window: _band(L, S, 0, window),
            "window counts the query's own key: query i sees i - window < j <= i, that is window keys, so "
            "i - j < window (not <=)."),
    Mistake("window off by one (window - 1 keys)", lambda L, S, window: _band(L, S, 0, window - 2),
            "window counts the query's own key: query i sees keys i - window + 1 .. i, window of them."),
    Mistake("window not causal (looks ahead too)", lambda L, S, window: _band(L, S, 1 - window, window - 1),
            "A decoder's window lies behind the query: combine the band with the causal mask, j <= i. "
            "|i - j| < window also lets the query see window - 1 future keys."),
    Mistake("window without the query itself", lambda L, S, window: _band(L, S, 1, window),
            "A token attends to itself (j = i) as in every causal mask; the window ends at the query, not before it."),
    Mistake("window aligned bottom-right", lambda L, S, window: _band(L, S, L - S, L - S + window - 1),
            "This course aligns masks top-left, like causal_mask: row i is position i whatever S is."),
    Mistake("mask sign flipped (True = blocked)", lambda L, S, window: ~_band(L, S, 0, window - 1),
            "The convention is True = may attend: the keys inside the window are True."),
)

PADDING_MASK_MISTAKES = (
    Mistake("padding mask sign flipped (True = padding)", lambda lengths, S: ~_padding(lengths, S),
            "True means may attend: the first lengths[b] keys (the real tokens) are True, the padding False. "
            "(torch.nn.MultiheadAttention's key_padding_mask uses the opposite meaning: don't copy it.)"),
    Mistake("padding mask without the query axis (B, S)", lambda lengths, S: _padding(lengths, S)[:, 0],
            "Return shape (B, 1, S): the middle axis of size 1 broadcasts over the L queries of the "
            "(B, L, S) scores; a (B, S) mask would be matched against (L, S) instead."),
    Mistake("padding mask off by one", lambda lengths, S: np.arange(S) <= np.asarray(lengths)[:, None, None],
            "Keys 0 .. lengths[b] - 1 are real: compare np.arange(S) < length, not <=."),
)


def _softmax_then_mask(query, key, value, attn_mask):
    return (_softmax(scores(query, key)) * attn_mask) @ value


def _softmax_mask_renormalise(query, key, value, attn_mask):
    kept = _softmax(scores(query, key)) * attn_mask  # (..., L, S): the softmax ran over the masked keys too
    total = kept.sum(axis=-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0) @ value


def _large_negative(query, key, value, attn_mask):
    return _softmax(masked(scores(query, key), attn_mask, fill=-1e9)) @ value


def _unguarded(query, key, value, attn_mask):
    shifted = masked(scores(query, key), attn_mask)
    exps = np.exp(shifted - shifted.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True) @ value


MASKED_ATTENTION_MISTAKES = (
    Mistake("mask sign flipped (True treated as blocked)",
            lambda query, key, value, attn_mask: weights(query, key, ~np.asarray(attn_mask)) @ value,
            "True = may attend: set the scores to -inf where the mask is False, np.where(mask, scores, -np.inf)."),
    Mistake("masked after the softmax", _softmax_then_mask,
            "Zeroing weights after the softmax leaves rows that no longer sum to 1. Mask the scores before "
            "the softmax (-inf where the mask is False), so exp gives exactly 0 and the rest renormalises."),
    Mistake("filled with -1e9 instead of -inf", _large_negative,
            "A query whose keys are all masked then gets uniform weights over keys it may not see (and -1e9 "
            "overflows float16). Fill with -np.inf and give all -inf rows zero weights (no NaN)."),
    Mistake("mask multiplied into the scores", lambda query, key, value, attn_mask:
            _softmax(scores(query, key) * attn_mask) @ value,
            "A score of 0 still gets weight exp(0) = 1 relative to the others; masked keys need -inf "
            "(weight exactly 0)."),
    Mistake("fully masked rows give NaN", _unguarded,
            "-inf - (-inf) is NaN: for a row whose keys are all masked, shift by 0 and divide only where the "
            "row sum is nonzero, so that row's weights and output are zeros."),
    Mistake("mask transposed", lambda query, key, value, attn_mask:
            weights(query, key, np.swapaxes(attn_mask, -1, -2)) @ value,
            "The mask is indexed [query i, key j] like the (L, S) scores: mask[i, j] says whether query i may "
            "see key j."),
    Mistake("masked after the softmax, then renormalised", _softmax_mask_renormalise,
            "Renormalising is right in exact arithmetic, but the softmax has already run over every key, the "
            "masked ones too: its maximum can be a masked key's score. When that score is far above the visible "
            "keys' (scores near 1000), exp underflows their weights to 0 before you renormalise, and the query "
            "loses what it may see. Mask the scores first (-inf where the mask is False), so that the softmax "
            "shifts by the largest visible score."),
)


def _projections(x_dec, x_enc, w_q, w_k, w_v):
    return x_dec @ w_q, x_enc @ w_k, x_enc @ w_v  # (B, L, E), (B, S, E), (B, S, Ev)


def _cross(x_dec, x_enc, w_q, w_k, w_v, enc_lengths, *, mask="padding"):
    q, k, v = _projections(x_dec, x_enc, w_q, w_k, w_v)
    L, S = q.shape[-2], k.shape[-2]
    masks = {"padding": _padding(enc_lengths, S), "none": None, "flipped": ~_padding(enc_lengths, S),
             "causal": _causal(L, S)}
    return _attention(q, k, v, masks[mask])


CROSS_ATTENTION_MISTAKES = (
    Mistake("padding mask ignored", lambda *args: _cross(*args, mask="none"),
            "Padded encoder positions are not tokens: mask them (True for the first enc_lengths[b] keys) so "
            "no query attends to them."),
    Mistake("padding mask sign flipped", lambda *args: _cross(*args, mask="flipped"),
            "True = may attend: the real tokens (the first enc_lengths[b]) are True."),
    Mistake("causal mask in cross-attention", lambda *args: _cross(*args, mask="causal"),
            "The decoder may read the whole source sentence: cross-attention masks only the encoder's padding, "
            "never the future (the encoder's tokens are all known)."),
    Mistake("queries from the encoder, keys and values from the decoder",
            lambda x_dec, x_enc, w_q, w_k, w_v, enc_lengths: _attention(x_enc @ w_q, x_dec @ w_k, x_dec @ w_v),
            "In cross-attention the decoder asks (Q = x_dec @ w_q) and the encoder answers "
            "(K = x_enc @ w_k, V = x_enc @ w_v): the output has one row per decoder position."),
    Mistake("self-attention over the decoder instead of cross-attention",
            lambda x_dec, x_enc, w_q, w_k, w_v, enc_lengths: _attention(x_dec @ w_q, x_dec @ w_k, x_dec @ w_v),
            "Keys and values come from the encoder's sequence x_enc (length S), not from the decoder."),
)
