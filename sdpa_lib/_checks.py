"""Input validation at the library boundary, kept apart so the math stays readable.

Every check raises ``ValueError`` (shapes, values) or ``TypeError`` (dtypes) with a
message that names the argument, the expected shape in legend letters and the shape
that arrived.  Legend: ``L`` query length, ``S`` key/value length, ``E`` query/key
features, ``Ev`` value features, ``...`` any leading axes.
"""
from __future__ import annotations

import numpy as np

FLOAT_DTYPES = (np.float32, np.float64)


def as_float_array(x, name: str, min_ndim: int = 1, legend: str = "(..., L, E)") -> np.ndarray:
    """Return ``x`` as a float32/float64 array of at least ``min_ndim`` axes.

    Python lists and ints of Python floats become float64.  Integer, bool and complex
    arrays are refused: silently casting them hides bugs (an int mask passed as query).
    """
    if isinstance(x, np.ndarray):
        array = x
    else:
        array = np.asarray(x)
        if array.dtype.kind in "iu" and not isinstance(x, np.generic):
            array = array.astype(np.float64)  # plain Python numbers in a list
    if array.dtype.kind == "c":
        raise TypeError(f"{name} must be real (float32 or float64); got complex dtype {array.dtype}")
    if array.dtype.type not in FLOAT_DTYPES:
        if array.dtype == np.float16:
            raise TypeError(f"{name} has dtype float16, which numpy computes poorly; "
                            f"cast it with {name}.astype(np.float32)")
        raise TypeError(f"{name} must have dtype float32 or float64; got {array.dtype}. "
                        f"Cast it first, e.g. {name}.astype(np.float64)")
    if array.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} axes {legend}; "
                         f"got {name}.shape={array.shape}")
    return array


def result_dtype(*arrays: np.ndarray) -> np.dtype:
    """float64 if any input is float64, else float32."""
    return np.result_type(*[a.dtype for a in arrays])


def check_query_key(query: np.ndarray, key: np.ndarray) -> None:
    """Query ``(..., L, E)`` and key ``(..., S, E)`` share E and broadcast on ``...``."""
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query has E={query.shape[-1]} but key has E={key.shape[-1]}: "
                         f"q . k needs vectors of the same length; got query.shape={query.shape}, "
                         f"key.shape={key.shape}")
    if key.shape[-2] == 0:
        raise ValueError(f"key has S=0 positions: there is nothing to attend to; got key.shape={key.shape}")
    check_batch_broadcast(("query", query.shape[:-2]), ("key", key.shape[:-2]))


def check_key_value(key: np.ndarray, value: np.ndarray) -> None:
    """Key ``(..., S, E)`` and value ``(..., S, Ev)`` share S."""
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(f"key and value must share S (axis -2); got key.shape={key.shape}, "
                         f"value.shape={value.shape}")
    check_batch_broadcast(("key", key.shape[:-2]), ("value", value.shape[:-2]))


def check_attention_inputs(query, key, value=None) -> list[np.ndarray]:
    """Query ``(..., L, E)``, key ``(..., S, E)`` and value ``(..., S, Ev)`` checked and cast to one dtype."""
    query = as_float_array(query, "query", min_ndim=2)
    key = as_float_array(key, "key", min_ndim=2, legend="(..., S, E)")
    check_query_key(query, key)
    arrays = [query, key]
    if value is not None:
        value = as_float_array(value, "value", min_ndim=2, legend="(..., S, Ev)")
        check_key_value(key, value)
        check_batch_broadcast(("query", query.shape[:-2]), ("value", value.shape[:-2]))
        arrays.append(value)
    dtype = np.result_type(*arrays)
    return [a.astype(dtype, copy=False) for a in arrays]


def check_batch_broadcast(*named_shapes: tuple[str, tuple]) -> tuple:
    """The leading ``...`` axes of the named arrays broadcast together."""
    try:
        return np.broadcast_shapes(*[shape for _, shape in named_shapes])
    except ValueError:
        listing = ", ".join(f"{name} batch axes {shape}" for name, shape in named_shapes)
        raise ValueError(f"leading (batch) axes do not broadcast: {listing}") from None


def check_mask(attn_mask, scores_shape: tuple, name: str = "attn_mask") -> np.ndarray:
    """A bool or float mask that broadcasts to the scores' shape ``(..., L, S)``."""
    mask = np.asarray(attn_mask)
    if mask.dtype != np.bool_ and mask.dtype.type not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be bool (True = may attend) or float (added to the scores); "
                        f"got dtype {mask.dtype}. An int 0/1 mask is ambiguous: use mask.astype(bool)")
    if mask.ndim < 2:
        raise ValueError(f"{name} must have at least 2 axes (..., L, S); got {name}.shape={mask.shape}")
    try:
        full_shape = np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError:
        full_shape = None
    # The mask may add batch axes, but never stretch L or S: a (5, 7) mask for one query
    # row would otherwise silently turn a (1, 7) score matrix into (5, 7).
    if full_shape is None or full_shape[-2:] != tuple(scores_shape[-2:]):
        raise ValueError(f"{name} with shape {mask.shape} does not broadcast to the scores' "
                         f"shape (..., L, S)={scores_shape}; its last two axes must be "
                         f"(L or 1, S or 1) = ({scores_shape[-2]} or 1, {scores_shape[-1]} or 1)")
    return mask


def check_scale(scale) -> None:
    """``scale`` is None (meaning ``1/sqrt(E)``) or a positive finite real number (not a bool)."""
    if scale is None:
        return
    is_real = isinstance(scale, (int, float, np.integer, np.floating)) and not isinstance(scale, (bool, np.bool_))
    if not (is_real and np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number or None (meaning 1/sqrt(E)); got {scale!r}")


def check_generator(rng, name: str = "rng", *, allow_none: bool = False) -> np.random.Generator | None:
    """``rng`` itself if it is a ``numpy.random.Generator`` (or None, where ``allow_none``); else ``TypeError``.

    An int seed or a legacy ``np.random.RandomState`` is refused, not converted, so that a
    seed passed where a generator belongs is caught where it is passed.  ``name`` is the
    argument's name as the caller spells it, for the message.
    """
    if isinstance(rng, np.random.Generator) or (allow_none and rng is None):
        return rng
    alternative = ", or None" if allow_none else ""
    raise TypeError(f"{name} must be a numpy Generator such as np.random.default_rng(0){alternative}; "
                    f"got {type(rng).__name__}")


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def check_probabilities(p, name: str = "p") -> np.ndarray:
    """A float array of probabilities along the last axis (not checked to sum to 1)."""
    return as_float_array(p, name, min_ndim=1, legend="(..., N)")
