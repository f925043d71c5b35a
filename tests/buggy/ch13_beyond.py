"""Buggy ch13_beyond submissions: the classic slips of RoPE, decoding with a cache, cache sizes and sliding windows,
as a student would write them; the int32 overflow passes every visible check and only the hidden cases catch it."""
from . import Bug

_ROPE = '''
def apply_rope(x, positions, base=10000.0):
    half = x.shape[-1] // 2
    theta = base ** (-np.arange(0, x.shape[-1], 2) / x.shape[-1])
    angles = np.asarray(positions)[:, None] * theta
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    {body}
'''

_DECODE = '''
def decode_step(query, key_cache, value_cache, new_key, new_value):
    position = [key_cache.shape[-2]]
    {body}
    scores = query @ np.swapaxes(keys, -1, -2) / np.sqrt(query.shape[-1])
    return sdpa_lib.softmax(scores, axis=-1) @ values, keys, values
'''

_CACHE = '''
def gqa_cache_bytes(layers, num_heads, num_kv_heads, head_dim, tokens, batch=1, bytes_per_number=2):
    return {body}
'''

_WINDOW = '''
def sliding_window_mask(L, S, window):
    offset = np.arange(L)[:, None] - np.arange(S)[None, :]
    return {body}
'''

BUGS = [
    Bug("rope-interleaved", "apply_rope", _ROPE.format(body="first, second = x[..., 0::2], x[..., 1::2]\n"
        "    return np.stack([first * cos - second * sin, first * sin + second * cos], axis=-1).reshape(x.shape)"),
        "test_apply_rope", "interleaved pairs (2i, 2i + 1) instead of rotate-half"),
    # Not a rotation at all: each feature scaled by cos + sin of its pair's angle. The property check says so.
    Bug("rope-not-a-rotation", "apply_rope", _ROPE.format(body="return x * np.concatenate([cos + sin, cos + sin], axis=-1)"),
        "test_apply_rope", "q . k depends on where the tokens are, not only on how far apart"),
    Bug("decode-rotates-value", "decode_step", _DECODE.format(
        body="query, new_key, new_value = (apply_rope(a, position) for a in (query, new_key, new_value))\n"
             "    keys = np.concatenate([key_cache, new_key], axis=-2)\n"
             "    values = np.concatenate([value_cache, new_value], axis=-2)"), "test_decode_step", "value rotated too"),
    Bug("decode-rerotates-cache", "decode_step", _DECODE.format(
        body="query = apply_rope(query, position)\n"
             "    keys = apply_rope(np.concatenate([key_cache, new_key], axis=-2), np.arange(position[0] + 1))\n"
             "    values = np.concatenate([value_cache, new_value], axis=-2)"), "test_decode_step",
        "cached keys rotated again"),
    Bug("decode-unrotated-key", "decode_step", _DECODE.format(
        body="query = apply_rope(query, position)\n"
             "    keys = np.concatenate([key_cache, new_key], axis=-2)\n"
             "    values = np.concatenate([value_cache, new_value], axis=-2)"), "test_decode_step",
        "new key cached without rotation"),
    Bug("cache-query-heads", "gqa_cache_bytes", _CACHE.format(body="2 * layers * num_heads * head_dim * tokens * batch * bytes_per_number"),
        "test_gqa_cache_bytes", "query heads counted instead of key/value heads"),
    Bug("cache-keys-only", "gqa_cache_bytes", _CACHE.format(body="layers * num_kv_heads * head_dim * tokens * batch * bytes_per_number"),
        "test_gqa_cache_bytes", "keys only (values forgotten)"),
    Bug("cache-float", "gqa_cache_bytes", _CACHE.format(body="2.0 * layers * num_kv_heads * head_dim * tokens * batch * bytes_per_number"),
        "test_gqa_cache_bytes", "a number of bytes is a whole number"),
    # Right on every visible case (all below 2**31 bytes); the hidden long contexts overflow int32. (On Windows with
    # numpy < 2, np.prod of Python ints is int32 without saying so; here the dtype is written out to do the same.)
    Bug("cache-int32", "gqa_cache_bytes", _CACHE.format(
        body="np.prod([2, layers, num_kv_heads, head_dim, tokens, batch, bytes_per_number], dtype=np.int32)"),
        "test_gqa_cache_bytes", 'sdpa_course.replay("ch13", "gqa_cache_bytes"'),
    Bug("window-plus-one", "sliding_window_mask", _WINDOW.format(body="(offset >= 0) & (offset <= window)"),
        "test_sliding_window_mask", "window off by one (window + 1 keys)"),
    Bug("window-not-causal", "sliding_window_mask", _WINDOW.format(body="np.abs(offset) < window"),
        "test_sliding_window_mask", "window not causal"),
    Bug("window-float", "sliding_window_mask", _WINDOW.format(body="((offset >= 0) & (offset < window)).astype(float)"),
        "test_sliding_window_mask", "return a bool array"),
]
