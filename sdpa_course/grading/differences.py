"""What kind of difference a wrong output has, computed from the two outputs when no catalogued mistake matches.

:func:`describe_difference` compares the student's output with the answer and names the
first kind that fits: a shape that differs (which axis, flattened batch axes, a length-1
axis too many or too few, axes in another order), wrong only in the rows where every key
is masked, NaN or inf where the answer is finite, transposed, off by a constant factor
(named when it is a length of the inputs, its square root or their inverses), the answer
normalised along another axis, the right values in a permuted order, or wrong in only
some rows.  ``inputs`` maps the graded function's argument names to their values, so
that lengths can be told by name (``E = 4, the last axis of query``).
"""
from __future__ import annotations

from typing import Callable, Mapping, NamedTuple

import numpy as np

RTOL, ATOL = 1e-5, 1e-7


class Difference(NamedTuple):
    """A kind of difference (``"flattened"``, ``"constant factor"``, ...) and the sentences that explain it."""
    kind: str
    text: str


def describe_difference(actual, expected, inputs: Mapping[str, object]) -> Difference | None:
    """How ``actual`` differs from ``expected``: the first kind that fits, or None if none does."""
    try:
        actual, expected = np.asarray(actual), np.asarray(expected)
    except (TypeError, ValueError):
        return None
    if not (np.issubdtype(actual.dtype, np.number) or actual.dtype == np.bool_):
        return None
    if actual.shape != expected.shape:
        return _shape_difference(actual.shape, expected.shape, inputs)
    if actual.dtype == np.bool_ or expected.dtype == np.bool_:
        return _boolean_difference(actual, expected)
    actual, expected = actual.astype(float), expected.astype(float)
    for kind in _VALUE_KINDS:
        found = kind(actual, expected, inputs)
        if found:
            return found
    return None


# --- shapes ------------------------------------------------------------------------------------------------

def _lengths_named(inputs: Mapping[str, object]) -> dict[int, str]:
    """``{length: "axis -1 of query"}`` for the axes of the array inputs (the first input that has it)."""
    names: dict[int, str] = {}
    for name, value in inputs.items():
        shape = np.shape(value) if isinstance(value, np.ndarray) else ()
        for axis in range(-1, -len(shape) - 1, -1):
            names.setdefault(shape[axis], f"axis {axis} of {name}")
        if isinstance(value, np.ndarray) and value.ndim > 1:
            names.setdefault(value.size, f"all {value.size} entries of {name}")
    return names


def _shape_difference(actual: tuple, expected: tuple, inputs: Mapping[str, object]) -> Difference:
    named = _lengths_named(inputs)
    flattened = [n for n in actual if n not in expected and named.get(n, "").startswith("all ")]
    if flattened:
        return Difference("flattened", f"your output has an axis of length {flattened[0]}, {named[flattened[0]]}: "
                          f"something flattened a batched input (np.outer, np.diagflat, np.dot on a batch, .ravel() "
                          f"and .flatten() do). Keep the leading axes and work on the last ones, e.g. "
                          f"p[..., :, None] * p[..., None, :] for a batch of outer products.")
    if len(actual) >= 2 and actual == (*expected[:-2], expected[-1], expected[-2]):
        return Difference("transposed shape", "your shape is the answer's with the last two axes swapped: the result "
                          "is transposed (for example key @ query.T instead of query @ key.T, or a .T too many).")
    if sorted(actual) == sorted(expected):
        return Difference("axes order", f"your output has the answer's axes in another order ({actual} instead of "
                          f"{expected}): check every transpose and swapaxes, and that a reshape is not standing in for "
                          f"a transpose.")
    if len(actual) < len(expected) and expected[len(expected) - len(actual):] == actual:
        missing = expected[:len(expected) - len(actual)]
        return Difference("missing batch axes", f"your output lacks the leading batch axes {missing}: the code handles "
                          f"one example, but the input has batch axes in front. Index from the end (axis=-1, "
                          f"shape[-2:]) and let ... carry the rest.")
    for longer, shorter, verb in ((actual, expected, "has an extra"), (expected, actual, "lacks the")):
        if len(longer) == len(shorter) + 1:
            for position in range(len(longer)):
                if longer[position] == 1 and longer[:position] + longer[position + 1:] == shorter:
                    cause = ("a reduction with keepdims=True where the answer drops that axis, or a [..., None] too "
                             "many" if verb == "has an extra" else
                             "a reduction that dropped the axis: keepdims=True keeps it so that it broadcasts")
                    return Difference(f"length-1 axis ({verb})",
                                      f"your output {verb} axis of length 1 at position {position}: {cause}.")
    if len(actual) == len(expected):
        axis = next(a for a in range(-1, -len(actual) - 1, -1) if actual[a] != expected[a])
        yours = f" ({named[actual[axis]]})" if actual[axis] in named else ""
        answer = f" ({named[expected[axis]]})" if expected[axis] in named else ""
        return Difference(f"axis {axis} length", f"axis {axis} of your output has length {actual[axis]}{yours} where "
                          f"the answer's has {expected[axis]}{answer}.")
    return Difference("number of axes", f"your output has {len(actual)} axes, the answer {len(expected)}.")


# --- values ------------------------------------------------------------------------------------------------

def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))


def _not_finite(actual, expected, inputs) -> Difference | None:
    bad = ~np.isfinite(actual) & np.isfinite(expected)
    if not bad.any():
        return None
    what = "NaN" if np.isnan(actual[bad]).any() else "inf"
    where = [int(i) for i in np.argwhere(bad)[0]]
    return Difference("not finite", f"your output has {what} in {int(bad.sum())} of {actual.size} entries (the "
                      f"first at {where}) where the answer is finite. inf comes from exp of a large score or a "
                      f"division by 0; NaN from inf - inf, 0 / 0 or 0 * inf, which is what an all -inf row of scores "
                      f"gives when nothing guards it.")


def _rows(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1, array.shape[-1]) if array.ndim else array.reshape(1, 1)


def _masked_rows_only(actual, expected, inputs) -> Difference | None:
    if expected.ndim == 0:
        return None
    wrong = ~np.isclose(_rows(actual), _rows(expected), rtol=RTOL, atol=ATOL).all(axis=-1)
    zero_rows = (_rows(expected) == 0).all(axis=-1)
    if not wrong.any() or not zero_rows[wrong].all():
        return None
    return Difference("masked rows", f"your output is right except in the {int(wrong.sum())} row(s) where the "
                      f"answer is all zeros: a query with no key to attend to (every key masked). There the answer is "
                      f"0, not NaN and not the mean of the values: give such rows zero weights.")


def _transposed(actual, expected, inputs) -> Difference | None:
    if actual.ndim >= 2 and actual.shape[-1] == actual.shape[-2] > 1 and _close(actual, np.swapaxes(expected, -1, -2)):
        return Difference("transposed", "your output is the answer transposed (its last two axes swapped): the shapes "
                          "agree only because these axes have the same length. Check the order of the matmul operands "
                          "and every .T.")
    return None


def _named_factor(factor: float, inputs: Mapping[str, object]) -> str:
    for length, where in _lengths_named(inputs).items():
        if length < 2 or where.startswith("all "):
            continue
        for value, name in ((np.sqrt(length), f"sqrt({length})"), (float(length), f"{length}"),
                            (1 / np.sqrt(length), f"1/sqrt({length})"), (1 / length, f"1/{length}")):
            if np.isclose(factor, value, rtol=1e-4):
                return f" = {name}, from the length {length} of {where}"
    return ""


def _constant_factor(actual, expected, inputs) -> Difference | None:
    usable = np.abs(expected) > 1e-6
    if usable.sum() < 2:  # one number is always some multiple of another
        return None
    factor = float(np.median(actual[usable] / expected[usable]))
    if not np.isfinite(factor) or np.isclose(factor, 1.0, rtol=1e-4) or not _close(actual, factor * expected):
        return None
    named = _named_factor(factor, inputs)
    advice = " (divide the scores by sqrt(E) once)" if "sqrt" in named else ""
    return Difference("constant factor", f"your output is the answer times a constant, {factor:.6g}{named}: a factor "
                      f"applied twice, missing, or inverted{advice}.")


def _normalised_elsewhere(actual, expected, inputs) -> Difference | None:
    if actual.ndim < 2 or (actual < -ATOL).any():
        return None
    yours = [a for a in range(actual.ndim) if actual.shape[a] > 1 and np.allclose(actual.sum(axis=a), 1, atol=1e-6)]
    answer = [a for a in range(expected.ndim) if np.allclose(expected.sum(axis=a), 1, atol=1e-6)]
    if yours and answer and not set(yours) & set(answer):
        return Difference("normalised elsewhere", f"your output sums to 1 along axis {yours[0] - actual.ndim}, the "
                          f"answer along axis {answer[0] - expected.ndim}: normalise along the keys (the axis the "
                          f"scores of one query lie on).")
    return None


def _permuted(actual, expected, inputs) -> Difference | None:
    for axis in range(actual.ndim):
        length = actual.shape[axis]
        if length < 2:
            continue
        mine = np.moveaxis(actual, axis, -1).reshape(-1, length)
        theirs = np.moveaxis(expected, axis, -1).reshape(-1, length)
        order = []
        for j in range(length):
            match = [k for k in range(length) if k not in order and _close(mine[:, j], theirs[:, k])]
            if not match:
                break
            order.append(match[0])
        if len(order) == length and order != list(range(length)):
            shown = ", ".join(str(k) for k in order[:8]) + (", ..." if length > 8 else "")
            return Difference("permuted", f"your output holds the answer's values with axis {axis - actual.ndim} "
                              f"permuted: your index j holds the answer's [{shown}][j]. Check how keys, heads or "
                              f"positions are ordered (a reversed range, an interleaved split, a reshape in place of a "
                              f"transpose).")
    return None


def _some_rows(actual, expected, inputs) -> Difference | None:
    if expected.ndim < 2:
        return None
    wrong = ~np.isclose(_rows(actual), _rows(expected), rtol=RTOL, atol=ATOL).all(axis=-1)
    if wrong.all():
        return None
    first = [int(i) for i in np.unravel_index(int(np.argmax(wrong)), expected.shape[:-1])]
    return Difference("some rows", f"only {int(wrong.sum())} of {wrong.size} rows (along the last axis) are wrong, "
                      f"the first at {first}: look for what is special about them (a masked key, a very large score, "
                      f"a boundary).")


def _boolean_difference(actual, expected) -> Difference | None:
    if actual.dtype != expected.dtype:
        return None
    if actual.ndim >= 2 and _close(actual.astype(float), np.swapaxes(expected, -1, -2).astype(float)):
        return Difference("mask transposed", "your mask is the answer transposed: rows are queries (L), columns "
                          "keys (S).")
    if (actual == ~expected).all():
        return Difference("mask inverted", "your mask is the answer inverted: True means the key takes part (may be "
                          "attended to).")
    return None


_VALUE_KINDS: tuple[Callable, ...] = (_masked_rows_only, _not_finite, _transposed, _constant_factor,
                                      _normalised_elsewhere, _permuted, _some_rows)
