"""Chapter 13: RoPE's rotation (graded by the reference and by the relative-offset property), one decode step
with a KV cache and RoPE, the size of a GQA cache (exact integers), and a sliding-window mask (bool)."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ...i18n.messages import _
from ...lessons.cost import kv_cache_bytes
from ..catalogue.decoding import CACHE_BYTES_MISTAKES, DECODE_STEP_MISTAKES
from ..catalogue.masks import SLIDING_WINDOW_MISTAKES
from ..catalogue.positions import ROPE_MISTAKES, rope_offset_problem
from ..draw import FULL, Draw
from ..task import Task

DECODE_FORBIDDEN = ("decode_step", "apply_rope", "scaled_dot_product_attention", "attention_weights", "tiled_attention")


def reference_rope(x, positions, base=10000.0):
    return sdpa_lib.apply_rope(x, positions, base=base)


def _positions(d: Draw, count: int, high: int) -> np.ndarray:
    """``count`` positions in 0..``high`` (capped by the level), in no particular order, repeats allowed."""
    return np.array([d.size(0, high) for _ in range(count)])


def rope_case(d: Draw):
    """x (..., L, E), E even (2 to 16), positions (L,): in 3 cases of 4 the rows repeat after P rows at positions
    shifted by t, where the relative-offset property is checked; positions up to 5000 in float64, 60 in float32
    (float32 angles of larger positions differ from the float64 ones by more than its tolerance); base 100 or
    500000 in a third of the cases."""
    dtype = np.float32 if d.chance(0.25) else np.float64
    high = 5000 if dtype == np.float64 else 60
    E, batch = 2 * d.size(1, 8), d.batch()
    if d.chance(0.75):
        P = d.size(1, 6)
        rows = d.normal((*batch, P, E), dtype=dtype)
        x = np.concatenate([rows, rows], axis=-2)  # (..., 2P, E): the same vectors twice
        first = _positions(d, P, high)
        positions = np.concatenate([first, first + d.size(1, high)])  # the second time shifted by t
    else:
        L = d.size(1, 9)
        x, positions = d.normal((*batch, L, E), dtype=dtype), _positions(d, L, high)
    return (x, positions), ({"base": d.choice([100.0, 500000.0])} if d.chance(1 / 3) else {})


def reference_decode(query, key_cache, value_cache, new_key, new_value):
    """Rotate the new query and key at position S (the cached tokens), then one step of sdpa_lib.decode_step."""
    position = [key_cache.shape[-2]]
    return sdpa_lib.decode_step(sdpa_lib.apply_rope(query, position), key_cache, value_cache,
                                sdpa_lib.apply_rope(new_key, position), new_value)


def decode_case(d: Draw):
    """One new token (..., 1, E) over S = 0..12 cached tokens, E even (2 to 10), Ev even in 3 cases of 4 (a rotated
    value can then be named), float64 or float32 (a third)."""
    dtype = np.float32 if d.chance(1 / 3) else np.float64
    batch, S, E = d.batch(), d.size(0, 12), 2 * d.size(1, 5)
    Ev = 2 * d.size(1, 4) if d.chance(0.75) else 2 * d.size(1, 4) - 1
    return (d.normal((*batch, 1, E), dtype=dtype), d.normal((*batch, S, E), dtype=dtype),
            d.normal((*batch, S, Ev), dtype=dtype), d.normal((*batch, 1, E), dtype=dtype),
            d.normal((*batch, 1, Ev), dtype=dtype)), {}


def reference_cache_bytes(layers, num_heads, num_kv_heads, head_dim, tokens, batch, bytes_per_number):
    return kv_cache_bytes(layers=layers, kv_heads=num_kv_heads, head_dim=head_dim, tokens=tokens, batch=batch,
                          bytes_per_number=bytes_per_number)


def integer_problem(answer, *args, **kwargs):
    """A number of bytes is a whole number: what is wrong when ``answer`` is not an int, else None."""
    if isinstance(answer, (int, np.integer)) and not isinstance(answer, (bool, np.bool_)):
        return None
    return _("your function returned {answer!r}, a {type_name}: a number of bytes is a whole number, so return an "
             "int. Multiply the integers (no / and no float constants such as 2.0 or 1e3), or convert a product you "
             "are sure is whole with int(...)").format(answer=answer, type_name=type(answer).__name__)


def cache_case(d: Draw):
    """Model shapes around real ones: up to 96 layers, 1 to 8 KV heads serving groups of 2 to 8 query heads (MHA, a
    group of 1, in one case of 8), head_dim 32 to 256, up to 131072 tokens, batch up to 64, 1, 2 or 4 bytes a number."""
    group = 1 if d.chance(1 / 8) else d.size(2, 8)
    kv_heads = d.size(1, 8)
    head_dim = d.choice([32, 64, 80, 128, 256]) if d.level == FULL else d.size(1, 8)
    return (), {"layers": d.size(1, 96), "num_heads": kv_heads * group, "num_kv_heads": kv_heads, "head_dim": head_dim,
                "tokens": d.size(1, 131072), "batch": d.size(1, 64), "bytes_per_number": d.choice([1, 2, 4])}


def window_case(d: Draw):
    """L and S in 1..30 (equal in a case of 4), the window in 1..max(L, S) + 2: from the diagonal alone to causal."""
    L = d.size(1, 30)
    S = L if d.chance(0.25) else d.size(1, 30)
    return (L, S, d.size(1, max(L, S) + 2)), {}


TASKS = (
    Task("ch13_beyond", "apply_rope", reference_rope, rope_case, ROPE_MISTAKES, forbidden=("apply_rope",),
         keep_dtype=True, invariant=rope_offset_problem, count=60),
    Task("ch13_beyond", "decode_step", reference_decode, decode_case, DECODE_STEP_MISTAKES, forbidden=DECODE_FORBIDDEN,
         output_names=("output", "key_cache", "value_cache"), helpers={"apply_rope": sdpa_lib.apply_rope}, count=60),
    Task("ch13_beyond", "gqa_cache_bytes", reference_cache_bytes, cache_case, CACHE_BYTES_MISTAKES, exact=True,
         invariant=integer_problem, output_names=("bytes",), count=40),
    Task("ch13_beyond", "sliding_window_mask", sdpa_lib.sliding_window_mask, window_case, SLIDING_WINDOW_MISTAKES,
         forbidden=("sliding_window_mask",), exact=True, keep_dtype=True, count=40),
)
