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

from ..i18n.messages import _

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

class Length(NamedTuple):
    """Where a length of the inputs comes from: an axis of the input ``name``, or all its entries (``axis`` None)."""
    size: int
    name: str
    axis: int | None

    def __str__(self) -> str:
        if self.axis is None:
            return _("all {count} entries of {input}").format(count=self.size, input=self.name)
        return _("axis {axis} of {input}").format(axis=self.axis, input=self.name)


def _lengths_named(inputs: Mapping[str, object]) -> dict[int, Length]:
    """``{length: where it comes from}`` for the axes of the array inputs (the first input that has it)."""
    names: dict[int, Length] = {}
    for name, value in inputs.items():
        shape = np.shape(value) if isinstance(value, np.ndarray) else ()
        for axis in range(-1, -len(shape) - 1, -1):
            names.setdefault(shape[axis], Length(shape[axis], name, axis))
        if isinstance(value, np.ndarray) and value.ndim > 1:
            names.setdefault(value.size, Length(value.size, name, None))
    return names


def _shape_difference(actual: tuple, expected: tuple, inputs: Mapping[str, object]) -> Difference:
    named = _lengths_named(inputs)
    flattened = [n for n in actual if n not in expected and n in named and named[n].axis is None]
    if flattened:
        return Difference("flattened", _(
            "your output has an axis of length {length}, {where}: something flattened a batched input (np.outer, "
            "np.diagflat, np.dot on a batch, .ravel() and .flatten() do). Keep the leading axes and work on the last "
            "ones, e.g. p[..., :, None] * p[..., None, :] for a batch of outer products.").format(
            length=flattened[0], where=named[flattened[0]]))
    if len(actual) >= 2 and actual == (*expected[:-2], expected[-1], expected[-2]):
        return Difference("transposed shape", _(
            "your shape is the answer's with the last two axes swapped: the result is transposed (for example "
            "key @ query.T instead of query @ key.T, or a .T too many)."))
    if sorted(actual) == sorted(expected):
        return Difference("axes order", _(
            "your output has the answer's axes in another order ({yours} instead of {answer}): check every transpose "
            "and swapaxes, and that a reshape is not standing in for a transpose.").format(yours=actual, answer=expected))
    if len(actual) < len(expected) and expected[len(expected) - len(actual):] == actual:
        missing = expected[:len(expected) - len(actual)]
        return Difference("missing batch axes", _(
            "your output lacks the leading batch axes {missing}: the code handles one example, but the input has "
            "batch axes in front. Index from the end (axis=-1, shape[-2:]) and let ... carry the rest.").format(
            missing=missing))
    extra_axis = _("your output has an extra axis of length 1 at position {position}: a reduction with keepdims=True "
                   "where the answer drops that axis, or a [..., None] too many.")
    dropped_axis = _("your output lacks the axis of length 1 at position {position}: a reduction that dropped the "
                     "axis: keepdims=True keeps it so that it broadcasts.")
    for longer, shorter, verb, explained in ((actual, expected, "has an extra", extra_axis),
                                             (expected, actual, "lacks the", dropped_axis)):
        if len(longer) == len(shorter) + 1:
            for position in range(len(longer)):
                if longer[position] == 1 and longer[:position] + longer[position + 1:] == shorter:
                    return Difference(f"length-1 axis ({verb})", explained.format(position=position))
    if len(actual) == len(expected):
        axis = next(a for a in range(-1, -len(actual) - 1, -1) if actual[a] != expected[a])
        yours = _(" ({where})").format(where=named[actual[axis]]) if actual[axis] in named else ""
        answer = _(" ({where})").format(where=named[expected[axis]]) if expected[axis] in named else ""
        return Difference(f"axis {axis} length", _(
            "axis {axis} of your output has length {length}{where} where the answer's has {expected}"
            "{expected_where}.").format(axis=axis, length=actual[axis], where=yours, expected=expected[axis],
                                        expected_where=answer))
    return Difference("number of axes", _("your output has {count} axes, the answer {expected}.").format(
        count=len(actual), expected=len(expected)))


# --- values ------------------------------------------------------------------------------------------------

def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))


def _not_finite(actual, expected, inputs) -> Difference | None:
    bad = ~np.isfinite(actual) & np.isfinite(expected)
    if not bad.any():
        return None
    what = "NaN" if np.isnan(actual[bad]).any() else "inf"
    where = [int(i) for i in np.argwhere(bad)[0]]
    return Difference("not finite", _(
        "your output has {what} in {count} of {total} entries (the first at {index}) where the answer is finite. inf "
        "comes from exp of a large score or a division by 0; NaN from inf - inf, 0 / 0 or 0 * inf, which is what an "
        "all -inf row of scores gives when nothing guards it.").format(what=what, count=int(bad.sum()),
                                                                      total=actual.size, index=where))


def _rows(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1, array.shape[-1]) if array.ndim else array.reshape(1, 1)


def _masked_rows_only(actual, expected, inputs) -> Difference | None:
    if expected.ndim == 0:
        return None
    wrong = ~np.isclose(_rows(actual), _rows(expected), rtol=RTOL, atol=ATOL).all(axis=-1)
    zero_rows = (_rows(expected) == 0).all(axis=-1)
    if not wrong.any() or not zero_rows[wrong].all():
        return None
    return Difference("masked rows", _(
        "your output is right except in the {count} row(s) where the answer is all zeros: a query with no key to "
        "attend to (every key masked). There the answer is 0, not NaN and not the mean of the values: give such rows "
        "zero weights.").format(count=int(wrong.sum())))


def _transposed(actual, expected, inputs) -> Difference | None:
    if actual.ndim >= 2 and actual.shape[-1] == actual.shape[-2] > 1 and _close(actual, np.swapaxes(expected, -1, -2)):
        return Difference("transposed", _(
            "your output is the answer transposed (its last two axes swapped): the shapes agree only because these "
            "axes have the same length. Check the order of the matmul operands and every .T."))
    return None


def _named_factor(factor: float, inputs: Mapping[str, object]) -> tuple[str, bool]:
    """Which length of the inputs ``factor`` is, or its square root, or their inverses (text, whether a root)."""
    for length, where in _lengths_named(inputs).items():
        if length < 2 or where.axis is None:
            continue
        for value, name, root in ((np.sqrt(length), f"sqrt({length})", True), (float(length), f"{length}", False),
                                  (1 / np.sqrt(length), f"1/sqrt({length})", True), (1 / length, f"1/{length}", False)):
            if np.isclose(factor, value, rtol=1e-4):
                return _(" = {factor}, from the length {length} of {where}").format(
                    factor=name, length=length, where=where), root
    return "", False


def _constant_factor(actual, expected, inputs) -> Difference | None:
    usable = np.abs(expected) > 1e-6
    if usable.sum() < 2:  # one number is always some multiple of another
        return None
    factor = float(np.median(actual[usable] / expected[usable]))
    if not np.isfinite(factor) or np.isclose(factor, 1.0, rtol=1e-4) or not _close(actual, factor * expected):
        return None
    named, root = _named_factor(factor, inputs)
    advice = _(" (divide the scores by sqrt(E) once)") if root else ""
    return Difference("constant factor", _(
        "your output is the answer times a constant, {factor:.6g}{named}: a factor applied twice, missing, or "
        "inverted{advice}.").format(factor=factor, named=named, advice=advice))


def _normalised_elsewhere(actual, expected, inputs) -> Difference | None:
    if actual.ndim < 2 or (actual < -ATOL).any():
        return None
    yours = [a for a in range(actual.ndim) if actual.shape[a] > 1 and np.allclose(actual.sum(axis=a), 1, atol=1e-6)]
    answer = [a for a in range(expected.ndim) if np.allclose(expected.sum(axis=a), 1, atol=1e-6)]
    if yours and answer and not set(yours) & set(answer):
        return Difference("normalised elsewhere", _(
            "your output sums to 1 along axis {axis}, the answer along axis {expected}: normalise along the keys (the "
            "axis the scores of one query lie on).").format(axis=yours[0] - actual.ndim,
                                                            expected=answer[0] - expected.ndim))
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
            return Difference("permuted", _(
                "your output holds the answer's values with axis {axis} permuted: your index j holds the answer's "
                "[{order}][j]. Check how keys, heads or positions are ordered (a reversed range, an interleaved "
                "split, a reshape in place of a transpose).").format(axis=axis - actual.ndim, order=shown))
    return None


def _some_rows(actual, expected, inputs) -> Difference | None:
    if expected.ndim < 2:
        return None
    wrong = ~np.isclose(_rows(actual), _rows(expected), rtol=RTOL, atol=ATOL).all(axis=-1)
    if wrong.all():
        return None
    first = [int(i) for i in np.unravel_index(int(np.argmax(wrong)), expected.shape[:-1])]
    return Difference("some rows", _(
        "only {count} of {total} rows (along the last axis) are wrong, the first at {index}: look for what is special "
        "about them (a masked key, a very large score, a boundary).").format(count=int(wrong.sum()), total=wrong.size,
                                                                            index=first))


def _boolean_difference(actual, expected) -> Difference | None:
    if actual.dtype != expected.dtype:
        return None
    if actual.ndim >= 2 and _close(actual.astype(float), np.swapaxes(expected, -1, -2).astype(float)):
        return Difference("mask transposed", _(
            "your mask is the answer transposed: rows are queries (L), columns keys (S)."))
    if (actual == ~expected).all():
        return Difference("mask inverted", _(
            "your mask is the answer inverted: True means the key takes part (may be attended to)."))
    return None


_VALUE_KINDS: tuple[Callable, ...] = (_masked_rows_only, _not_finite, _transposed, _constant_factor,
                                      _normalised_elsewhere, _permuted, _some_rows)
