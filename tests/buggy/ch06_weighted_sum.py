"""Buggy ch06_weighted_sum submissions: each catalogued mistake written as a student would, then mistakes no
catalogue names, whose feedback is the Python-error paragraph (its "Likely cause")."""
from . import Bug

_OUTPUT = '''
def attention_output(query, key, value):
    scores = query @ np.swapaxes(key, -1, -2){scale}
    weights = {weights}
    return {product}
'''


def _output(scale=" / np.sqrt(query.shape[-1])", weights="sdpa_lib.softmax(scores, axis=-1)", product="weights @ value"):
    return _OUTPUT.format(scale=scale, weights=weights, product=product)


_SPLIT = '''
def split_heads(x, num_heads):
    *batch, length, d_model = x.shape
    return {body}
'''

_MERGE_NO_TRANSPOSE = '''
def merge_heads(x):
    *batch, num_heads, length, head_dim = x.shape
    return x.reshape(*batch, length, num_heads * head_dim)
'''

_MHA_NO_W_O = '''
def multi_head_attention(x_query, x_kv, w_q, w_k, w_v, w_o, num_heads):
    q, k, v = (split_heads(x @ w, num_heads) for x, w in ((x_query, w_q), (x_kv, w_k), (x_kv, w_v)))
    return merge_heads(attention_output(q, k, v))
'''

_MHA_WRONG_SCALE = '''
def multi_head_attention(x_query, x_kv, w_q, w_k, w_v, w_o, num_heads):
    q, k, v = (split_heads(x @ w, num_heads) for x, w in ((x_query, w_q), (x_kv, w_k), (x_kv, w_v)))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(x_query.shape[-1])
    return merge_heads(sdpa_lib.softmax(scores) @ v) @ w_o
'''

# `.T` reverses every axis: right for one (S, E) key, wrong for a batch (the visible batched case raises).
_OUTPUT_KEY_T = '''
def attention_output(query, key, value):
    scores = query @ key.T / np.sqrt(query.shape[-1])  # (L, E) @ (E, S) -> (L, S)
    weights = sdpa_lib.softmax(scores, axis=-1)
    return weights @ value
'''

# Written for (L, D) and (B, L, D), as the visible checks are; a hidden input with two batch axes raises.
_SPLIT_THREE_AXES = '''
def split_heads(x, num_heads):
    if x.ndim == 2:  # no batch: add one and take it off again
        return split_heads(x[None], num_heads)[0]
    B, L, D = x.shape
    return x.reshape(B, L, num_heads, D // num_heads).transpose(0, 2, 1, 3)
'''

BUGS = [
    Bug("no-scale", "attention_output", _output(scale=""), "test_attention_output", "forgot the scale"),
    Bug("scale-by-d", "attention_output", _output(scale=" / query.shape[-1]"), "test_attention_output",
        "scaled by E instead of sqrt(E)"),
    Bug("softmax-over-queries", "attention_output", _output(weights="sdpa_lib.softmax(scores, axis=-2)"),
        "test_attention_output", "softmax over the queries"),
    Bug("not-normalised", "attention_output",
        _output(weights="np.exp(scores - scores.max(axis=-1, keepdims=True))"), "test_attention_output",
        "weights not normalised"),
    Bug("v-times-w-transposed", "attention_output",
        _output(product="np.swapaxes(value, -1, -2) @ np.swapaxes(weights, -1, -2)"), "test_attention_output",
        "output transposed"),
    Bug("split-reshape-only", "split_heads",
        _SPLIT.format(body="x.reshape(*batch, num_heads, length, d_model // num_heads)"), "test_split_heads",
        "heads split in the wrong order"),
    Bug("split-interleaved", "split_heads",
        _SPLIT.format(body="np.moveaxis(x.reshape(*batch, length, d_model // num_heads, num_heads), -1, -3)"),
        "test_split_heads", "heads interleaved"),
    Bug("merge-reshape-only", "merge_heads", _MERGE_NO_TRANSPOSE, "test_merge_heads", "heads merged in the wrong order"),
    Bug("mha-no-w-o", "multi_head_attention", _MHA_NO_W_O, "test_multi_head_attention", "forgot the output projection"),
    Bug("mha-scale-sqrt-d", "multi_head_attention", _MHA_WRONG_SCALE, "test_multi_head_attention",
        "scaled by sqrt(D) instead of sqrt(D/H)"),
    Bug("key-dot-T", "attention_output", _OUTPUT_KEY_T, "test_attention_output",
        "x.T reverses every axis of a batched array"),
    Bug("split-unpacks-three-axes", "split_heads", _SPLIT_THREE_AXES, "test_split_heads",
        "Likely cause: unpacking x.shape into a fixed number of names"),
]
