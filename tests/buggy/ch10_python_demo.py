"""Buggy submissions for chapter 10: the seed's demo rebuilt with the catalogued mistakes."""
from buggy import Bug

SEED_HEAD = '''def seed_attention(X, W_q, W_k, W_v):
    q, k, v = X @ W_q, X @ W_k, X @ W_v
'''
SEED_TAIL = '''    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ v, weights
'''
GUARDED_TAIL = '''    row_max = np.max(scores, axis=-1, keepdims=True)
    exps = np.exp(scores - np.where(np.isneginf(row_max), 0, row_max))
    total = np.sum(exps, axis=-1, keepdims=True)
    weights = np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)
    return weights @ v, weights
'''


def attention_with(scores_line: str, mask_line: str, tail: str = GUARDED_TAIL) -> str:
    """The source of an `attention` whose score and mask lines are given (8-space indented mask line)."""
    return f'''def attention(q, k, v, mask=None):
    scores = {scores_line}
    if mask is not None:
        {mask_line}
''' + tail


SWAPPED = "q @ np.swapaxes(k, -1, -2) / k.shape[-1] ** 0.5"
MASKED = "scores = np.where(mask, scores, -np.inf)"
PADDED_HEAD = '''def padded_causal_self_attention(X, lengths, W_q, W_k, W_v):
    L = X.shape[-2]
    causal = np.tril(np.ones((L, L), dtype=bool))
'''

BUGS = [
    Bug("seed_no_scale", "seed_attention", SEED_HEAD + "    scores = q @ k.T\n" + SEED_TAIL,
        "test_seed_attention", "forgot the scale"),
    Bug("seed_sqrt_d_model", "seed_attention", SEED_HEAD + "    scores = q @ k.T / np.sqrt(X.shape[1])\n" + SEED_TAIL,
        "test_seed_attention", "scaled by sqrt(d_model) instead of sqrt(d_k)"),
    Bug("k_transpose", "attention", attention_with("q @ k.T / k.shape[-1] ** 0.5", MASKED),
        "test_attention", "k.T reverses every axis"),
    Bug("no_max_subtraction", "attention", attention_with(SWAPPED, MASKED, '''    exps = np.exp(scores)
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ v, weights
'''), "test_attention", "softmax without max subtraction"),
    Bug("mask_ignored", "attention", attention_with(SWAPPED, "pass"), "test_attention", "mask ignored"),
    Bug("mask_flipped", "attention", attention_with(SWAPPED, "scores = np.where(mask, -np.inf, scores)"),
        "test_attention", "mask sign flipped"),
    Bug("masked_row_nan", "attention", attention_with(SWAPPED, MASKED, '''    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ v, weights
'''), "test_attention", "a fully masked row gives NaN"),
    Bug("padding_on_queries", "padded_causal_self_attention", PADDED_HEAD + '''    real_queries = (np.arange(L) < lengths[:, None])[:, :, None]
    return attention(X @ W_q, X @ W_k, X @ W_v, causal & real_queries)[0]
''', "test_padded_causal_self_attention", "padding mask on the queries"),
    Bug("causal_ignored", "padded_causal_self_attention", PADDED_HEAD + '''    real_keys = (np.arange(L) < lengths[:, None])[:, None, :]
    return attention(X @ W_q, X @ W_k, X @ W_v, real_keys)[0]
''', "test_padded_causal_self_attention", "causal mask ignored"),
    # Not catalogued: what the grader says from the outputs alone.
    Bug("seed_unshifted_softmax", "seed_attention", SEED_HEAD + '''    scores = q @ k.T / np.sqrt(W_k.shape[1])
    weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    return weights @ v, weights
''', "test_seed_attention", "sdpa_course.replay("),  # only hidden sentences have scores that overflow exp
    Bug("large_negative_fill", "attention", attention_with(SWAPPED, "scores = np.where(mask, scores, -1e9)"),
        "test_attention", "What differs: your output is right except in the"),
]
