"""Named wrong answers for generating with a KV cache (chapter 13): one decode step with RoPE, and the cache's size.

``decode_step`` mistakes take ``(query, key_cache, value_cache, new_key, new_value)``: the new
token's unrotated query ``(..., 1, E)``, key ``(..., 1, E)`` and value ``(..., 1, Ev)``, and caches of
``S`` tokens whose keys are rotated already; the new token is position ``S``.  They return
``(output, key_cache, value_cache)``.  Cache-size mistakes take the keyword arguments of
``gqa_cache_bytes`` and return a number of bytes.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.attention import scaled_dot_product_attention as _attention
from sdpa_lib.positions import apply_rope as _rope
from ..mistakes import Mistake


def _step(query, key_cache, value_cache, new_key, new_value, *, position=None, rotate_query=True, rotate_key=True,
          rotate_value=False, rerotate_cache=False, append=True, front=False, mask=None, scale=None,
          return_old=False):
    """A decode step with one slip switched on (the defaults give the right answer)."""
    S = key_cache.shape[-2]
    at = [S if position is None else position]
    q = _rope(query, at) if rotate_query else query
    k = _rope(new_key, at) if rotate_key and not rerotate_cache else new_key
    v = _rope(new_value, at) if rotate_value else new_value
    parts = ((k, key_cache), (v, value_cache)) if front else ((key_cache, k), (value_cache, v))
    keys, values = (np.concatenate(pair, axis=-2) for pair in parts)  # (..., S+1, E), (..., S+1, Ev)
    if rerotate_cache:
        keys = _rope(keys, np.arange(S + 1))  # every key rotated now: the cached ones for the second time
    seen_keys, seen_values = (keys, values) if append else (key_cache, value_cache)
    masks = {"top_left": np.tril(np.ones((1, seen_keys.shape[-2]), dtype=bool))}
    output = _attention(q, seen_keys, seen_values, masks.get(mask), scale=scale)  # (..., 1, Ev)
    return (output, key_cache, value_cache) if return_old else (output, keys, values)


def _variant(**slip):
    return lambda query, key_cache, value_cache, new_key, new_value: _step(query, key_cache, value_cache, new_key,
                                                                           new_value, **slip)


DECODE_STEP_MISTAKES = (
    Mistake("value rotated too", _variant(rotate_value=True),
            "Rotate only the query and the key: RoPE makes the *scores* depend on the offset. A value is content that "
            "the weights average; rotating it writes the position into the output."),
    Mistake("new key cached without rotation", _variant(rotate_key=False),
            "Rotate the new key at its position before appending it: the cache holds rotated keys, so each key is "
            "turned once, when it is made, and never again."),
    Mistake("query not rotated", _variant(rotate_query=False),
            "The new query is rotated at its position too (the number of cached tokens); only then does "
            "q . k depend on the offset between the two tokens."),
    Mistake("position off by one (S + 1 instead of S)",
            lambda query, key_cache, *rest: _step(query, key_cache, *rest, position=key_cache.shape[-2] + 1),
            "Positions count from 0: after S cached tokens (positions 0 .. S-1) the new token is position S, "
            "key_cache.shape[-2]."),
    Mistake("position off by one (S - 1 instead of S)",
            lambda query, key_cache, *rest: _step(query, key_cache, *rest, position=key_cache.shape[-2] - 1),
            "Positions count from 0: after S cached tokens (positions 0 .. S-1) the new token is position S, "
            "key_cache.shape[-2], not the last cached one's."),
    Mistake("cached keys rotated again", _variant(rerotate_cache=True),
            "The keys in the cache were rotated when they were made: rotate only the new key, then append it. "
            "Rotating all the keys at positions 0 .. S again turns the old ones twice (and costs O(S) work a step)."),
    Mistake("attended before appending the new token", _variant(append=False),
            "Append the new key and value first: the new token may attend to itself, as row S of causal attention "
            "does."),
    Mistake("causal mask aligned top-left in the decode step", _variant(mask="top_left"),
            "The single new query is the *last* position: it may see every cached key and itself, so no mask is "
            "needed. A top-left causal mask of shape (1, S+1) lets it see key 0 only."),
    Mistake("appended in front of the cache", _variant(front=True),
            "Append after the cached tokens (np.concatenate([key_cache, new_key], axis=-2)): the cache is in position "
            "order. The output happens to be the same, but the next step's positions would be wrong."),
    Mistake("scores not scaled", _variant(scale=1.0),
            "Divide the scores by sqrt(E) as in every attention step."),
    Mistake("old caches returned", _variant(return_old=True),
            "Return the grown caches, with S + 1 rows: the next step needs the new token's key and value."),
)


def _cache_bytes(layers, num_heads, num_kv_heads, head_dim, tokens, batch, bytes_per_number, *, heads=None,
                 tensors=2, unit=1):
    heads = num_kv_heads if heads is None else heads
    return tensors * layers * heads * head_dim * tokens * batch * bytes_per_number * unit


def _cache_variant(**slip):
    def compute(layers, num_heads, num_kv_heads, head_dim, tokens, batch, bytes_per_number):
        arguments = dict(layers=layers, num_heads=num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim,
                         tokens=tokens, batch=batch, bytes_per_number=bytes_per_number)
        arguments.update({name: value(arguments) for name, value in slip.items() if name in arguments})
        extra = {name: value(arguments) for name, value in slip.items() if name not in arguments}
        return _cache_bytes(**arguments, **extra)
    return compute


CACHE_BYTES_MISTAKES = (
    Mistake("query heads counted instead of key/value heads", _cache_variant(heads=lambda a: a["num_heads"]),
            "The cache holds keys and values, and GQA has num_kv_heads of them per layer, shared by the "
            "num_heads // num_kv_heads query heads of a group: count num_kv_heads."),
    Mistake("keys only (values forgotten)", _cache_variant(tensors=lambda a: 1),
            "Both keys and values are cached: a factor 2."),
    Mistake("group size counted instead of key/value heads",
            _cache_variant(heads=lambda a: a["num_heads"] // a["num_kv_heads"]),
            "num_heads // num_kv_heads is how many query heads share one key/value head; the cache stores "
            "num_kv_heads heads per layer."),
    Mistake("bits instead of bytes", _cache_variant(unit=lambda a: 8),
            "bytes_per_number is already in bytes (2 for float16 and bfloat16): do not multiply by 8."),
    Mistake("one layer only", _cache_variant(layers=lambda a: 1),
            "Every layer keeps its own keys and values: multiply by the number of layers."),
    Mistake("one sequence only (batch forgotten)", _cache_variant(batch=lambda a: 1),
            "Each sequence of the batch has its own cache: multiply by batch."),
    Mistake("product overflowed 32-bit integers",
            lambda **sizes: int(np.prod([2, *(sizes[name] for name in ("layers", "num_kv_heads", "head_dim", "tokens",
                                                                         "batch", "bytes_per_number"))], dtype=np.int32)),
            "A cache of a long context passes 2**31 - 1 bytes (2 GiB), the largest 32-bit integer, and numpy wraps "
            "around silently when an int32 product overflows (numpy's default integer was 32 bits on Windows before "
            "numpy 2). Multiply Python ints, or give np.prod dtype=np.int64."),
)
