"""Buggy ch08_masking submissions: each catalogued mistake written as a student would, then mistakes found in
use (issue 14) or no catalogue names, whose feedback says what differs, or which rule is broken."""
from . import Bug

_CAUSAL = '''
def causal_mask(L, S=None):
    S = L if S is None else S
    return {body}
'''

_PADDING = '''
def padding_mask(lengths, S):
    return {body}
'''

_MASKED = '''
def masked_attention(query, key, value, attn_mask):
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
    {body}
'''

_CROSS = '''
def cross_attention(x_dec, x_enc, w_q, w_k, w_v, enc_lengths):
    {body}
'''

BUGS = [
    Bug("causal-triu", "causal_mask", _CAUSAL.format(body="np.triu(np.ones((L, S), dtype=bool))"), "test_causal_mask",
        "causal mask transposed"),
    Bug("causal-strict", "causal_mask", _CAUSAL.format(body="np.tril(np.ones((L, S), dtype=bool), k=-1)"),
        "test_causal_mask", "without the diagonal"),
    Bug("causal-bottom-right", "causal_mask", _CAUSAL.format(body="np.tril(np.ones((L, S), dtype=bool), k=S - L)"),
        "test_causal_mask", "aligned bottom-right"),
    Bug("causal-float", "causal_mask", _CAUSAL.format(body="np.tril(np.ones((L, S)))"), "test_causal_mask",
        "return a bool array"),
    Bug("padding-flipped", "padding_mask",
        _PADDING.format(body="np.arange(S) >= np.asarray(lengths)[:, None, None]"), "test_padding_mask",
        "padding mask sign flipped"),
    Bug("padding-2d", "padding_mask", _PADDING.format(body="np.arange(S) < np.asarray(lengths)[:, None]"),
        "test_padding_mask", "without the query axis"),
    Bug("padding-axis-last", "padding_mask", _PADDING.format(body="(np.arange(S) < np.asarray(lengths)[:, None])[:, :, None]"),
        "test_padding_mask", "What differs: your shape is the answer's with the last two axes swapped"),
]

# (id, the body after the scores, hint)
_MASKED_BUGS = [
    ("mask-flipped", "return sdpa_lib.softmax(np.where(attn_mask, -np.inf, scores)) @ value", "mask sign flipped"),
    ("mask-after-softmax", "return (sdpa_lib.softmax(scores) * attn_mask) @ value", "masked after the softmax"),
    ("minus-1e9", "return sdpa_lib.softmax(np.where(attn_mask, scores, -1e9)) @ value", "-1e9 instead of -inf"),
    ("nan-rows", "scores = np.where(attn_mask, scores, -np.inf)\n    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
                 "    return exps / exps.sum(axis=-1, keepdims=True) @ value", "fully masked rows give NaN"),
    # Right on the visible cases; the hidden scores near 1000 underflow the visible keys' weights to 0.
    ("mask-after-softmax-renormalised",
     "weights = sdpa_lib.softmax(scores, axis=-1) * attn_mask  # drop the masked keys\n"
     "    total = weights.sum(axis=-1, keepdims=True)\n"
     "    weights = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)\n"
     "    return weights @ value", 'sdpa_course.replay("ch08", "masked_attention"'),
    # Right values (NaN replaced afterwards), but numpy warns on a fully masked row: the notebook asks for no warning.
    ("nan-to-num",
     "scores = np.where(attn_mask, scores, -np.inf)\n    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
     "    return np.nan_to_num(exps / exps.sum(axis=-1, keepdims=True)) @ value", "the notebook asks for no warning"),
]

# (id, the body, hint)
_CROSS_BUGS = [
    ("cross-no-padding", "return masked_attention(x_dec @ w_q, x_enc @ w_k, x_enc @ w_v, np.ones((1, 1), dtype=bool))",
     "padding mask ignored"),
    ("cross-causal", "mask = causal_mask(x_dec.shape[-2], x_enc.shape[-2])\n"
                     "    return masked_attention(x_dec @ w_q, x_enc @ w_k, x_enc @ w_v, mask)", "causal mask in cross-attention"),
    ("cross-swapped", "return masked_attention(x_enc @ w_q, x_dec @ w_k, x_dec @ w_v, np.ones((1, 1), dtype=bool))",
     "queries from the encoder"),
]

BUGS += [Bug(bug_id, "masked_attention", _MASKED.format(body=body), "test_masked_attention", hint)
         for bug_id, body, hint in _MASKED_BUGS]
BUGS += [Bug(bug_id, "cross_attention", _CROSS.format(body=body), "test_cross_attention", hint)
         for bug_id, body, hint in _CROSS_BUGS]
