"""Checks used by visible and hidden test cells: each failure says what is wrong and how to think about it.

A :class:`Comparison` judges one case: it runs the reference, compares the student's
output (its shape, values, dtype and the warnings it raised, by the rules the notebook
states), and on a difference writes the feedback: the catalogued mistake it matches, or
else the kind of difference (:mod:`~sdpa_course.grading.differences`); a Python error of
the student's function becomes one short paragraph (:mod:`~sdpa_course.grading.student_errors`).
:func:`check_against_reference` runs a list of cases through it and raises
:class:`GradingError` on the first that fails.
"""
from __future__ import annotations

import copy
import inspect
import itertools
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, NamedTuple, Sequence

import numpy as np

from .differences import describe_difference
from ..i18n.messages import C_, _
from .errors import ForbiddenCallError, GradingError
from .forbid import unavailable
from .integrity import check_environment
from .mistakes import Mistake, matching
from .remote import RemoteFunction, StudentError
from .student_errors import explain_error, frames_of

SMALL = 40  # an array with at most this many entries is printed in full in feedback
TOLERANCES = {np.dtype(np.float16): (1e-2, 1e-3), np.dtype(np.float32): (1e-4, 1e-5)}  # else (1e-6, 1e-8)


def describe_case(args: Sequence, kwargs: dict) -> str:
    """Short description of a test case: array shapes/dtypes and small values."""
    def one(value):
        if isinstance(value, np.ndarray):
            return f"array{value.shape} {value.dtype}" if value.size > 6 else np.array2string(value, precision=3)
        return repr(value)
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def show(value) -> str:
    """A value as feedback prints it: a small array in full (4 significant digits), a large one by shape."""
    if isinstance(value, np.ndarray):
        if value.size > SMALL:
            return _("array of shape {shape}, {dtype}").format(shape=value.shape, dtype=value.dtype)
        text = np.array2string(value, precision=4, separator=", ", suppress_small=True)
        return text if value.dtype in (np.float64, np.bool_) else f"{text} ({value.dtype})"
    return repr(value)


def side_by_side(yours, answer) -> str:
    """Two small arrays in two columns, headed "yours" and "answer"."""
    left, right = show(np.asarray(yours)).splitlines(), show(np.asarray(answer)).splitlines()
    heading = _("yours")
    width = max(len(heading), *(len(line) for line in left))
    rows = [f"{heading.ljust(width)}   {C_('the correct value', 'answer')}"] + [f"{a.ljust(width)}   {b}" for a, b in
                                                  zip(left + [""] * (len(right) - len(left)), right + [""] * (len(left) - len(right)))]
    return "\n".join(rows)


class WrongShape(GradingError):
    """A graded output of the wrong shape (or not an array at all)."""


def expect_shape(actual, expected_shape: tuple, what: str | None = None, legend: str = "") -> None:
    """Fail with both shapes (and the legend, e.g. ``(..., L, Ev)``) if they differ.

    ``what`` names the output (translated text, "your output" by default).
    """
    shape = np.shape(actual)
    if tuple(shape) != tuple(expected_shape):
        what = _("your output") if what is None else what
        message = (_("{what} has shape {shape} but should have shape {expected} = {legend}") if legend else
                   _("{what} has shape {shape} but should have shape {expected}"))
        raise WrongShape(message.format(what=what, shape=tuple(shape), expected=tuple(expected_shape), legend=legend))


def expect_close(actual, expected, what: str | None = None, *, rtol: float = 1e-6, atol: float = 1e-8,
                 hint: str = "") -> None:
    """Fail with the shape, the largest error and where it is, if ``actual`` is not close to ``expected``.

    ``what`` names the output (translated text, "your output" by default).
    """
    what = _("your output") if what is None else what
    expected = np.asarray(expected)
    if not isinstance(actual, (np.ndarray, np.generic, float, int, list, tuple)):
        raise WrongShape(_("{what} is a {type}; expected a numpy array of shape {shape}").format(
            what=what, type=type(actual).__name__, shape=expected.shape))
    actual = np.asarray(actual)
    expect_shape(actual, expected.shape, what)
    if not np.issubdtype(actual.dtype, np.number) and actual.dtype != np.bool_:
        raise GradingError(_("{what} has dtype {dtype}; expected numbers").format(what=what, dtype=actual.dtype))
    bad_nan = np.isnan(actual) & ~np.isnan(expected)
    if bad_nan.any():
        where = np.argwhere(bad_nan)[0]
        raise GradingError(_("{what} has NaN at {index} where the answer is {answer!r}. {hint}").format(
            what=what, index=where.tolist(), answer=expected[tuple(where)].item(), hint=hint).strip())
    if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        with np.errstate(invalid="ignore"):
            error = np.where(np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True), 0,
                             np.abs(actual.astype(float) - expected.astype(float)))
        error = np.nan_to_num(error, nan=np.inf)
        where = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
        message = (_("{what} differs from the correct answer: at index {index} you have {yours!r}, the answer is "
                     "{answer!r}. {hint}") if error.ndim else
                   _("{what} differs from the correct answer: you have {yours!r}, the answer is {answer!r}. {hint}"))
        raise GradingError(message.format(what=what, index=[int(i) for i in where], yours=actual[where].item(),
                                          answer=expected[where].item(), hint=hint).strip())


def expect_rows_sum_to_one(weights, what: str | None = None, axis: int = -1, *, allow_zero_rows: bool = False) -> None:
    """Fail with the offending sum, e.g. "rows of the weights sum to 1.37, not 1: normalise along the last axis".

    ``what`` names the array (translated text, "the weights" by default).
    """
    sums = np.sum(np.asarray(weights, dtype=float), axis=axis)
    good = np.isclose(sums, 1.0, atol=1e-6) | (allow_zero_rows & np.isclose(sums, 0.0, atol=1e-12))
    if not np.all(good):
        worst = sums[~good].flat[0]
        raise GradingError(_("rows of {what} sum to {total:.4g}, not 1: normalise along the last axis (the keys), so "
                             "that each query's weights form a probability distribution").format(
            what=_("the weights") if what is None else what, total=worst))


class Outcome(NamedTuple):
    """What one call of the student's function gave: its value, or the error it raised; and its warnings."""
    value: object = None
    error: tuple[str, str, list] | None = None  # (name, message, frames) of what it raised
    warnings: tuple[tuple[str, str], ...] = ()  # (category name, message)


def local_outcome(student: Callable, args, kwargs, forbidden: Iterable[str]) -> Outcome:
    """Run a local student function (the learner's own kernel) on copies of the inputs, the reference unavailable."""
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    with unavailable(forbidden, student), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = student(*args, **kwargs)
        except (NotImplementedError, ForbiddenCallError, GradingError):
            raise
        except Exception as error:
            return Outcome(error=(type(error).__name__, str(error), frames_of(error)),
                           warnings=tuple((w.category.__name__, str(w.message)) for w in caught))
    return Outcome(value, None, tuple((w.category.__name__, str(w.message)) for w in caught))


def student_outcomes(student: Callable, cases: list, forbidden: Iterable[str]) -> Iterator[Outcome]:
    """One :class:`Outcome` per case, in order, ending after the first case that raised.

    A :class:`~sdpa_course.grading.remote.RemoteFunction` runs every case in the student's kernel in
    one round trip (on encoded copies of the inputs, with an ``sdpa_lib`` that lacks the forbidden
    functions already); a local function runs each case as the iterator reaches it.
    """
    if isinstance(student, RemoteFunction):
        for result in student.call_many(cases):
            try:
                value = result.value()
            except StudentError as error:
                yield Outcome(error=(error.ename, error.evalue, error.frames), warnings=tuple(result.warnings))
                return
            yield Outcome(value, None, tuple(result.warnings))
        return
    for args, kwargs in cases:
        outcome = local_outcome(student, args, kwargs, forbidden)
        yield outcome
        if outcome.error:
            return


@dataclass(frozen=True)
class Comparison:
    """How a student's function is judged against ``reference`` on one case, by the rules its notebook states.

    ``rtol``/``atol`` left as None follow the inputs' dtype (float32: 1e-4/1e-5, float16:
    1e-2/1e-3, else 1e-6/1e-8); ``keep_dtype`` fails an output whose dtype is not the
    reference's; ``quiet`` fails a call that emits a RuntimeWarning.  With a ``verdict``, the
    output is judged by a property instead of the reference: ``verdict(*args, answer)`` says
    what is wrong with it, or returns None (the reference then only names the arguments).
    An ``invariant(answer, *args, **kwargs)`` is a property checked before the reference comparison
    (what is wrong, or None).
    """
    reference: Callable
    mistakes: Sequence[Mistake] = ()
    output_names: Sequence[str] = ("output",)
    rtol: float | None = None
    atol: float | None = None
    keep_dtype: bool = False
    quiet: bool = False
    verdict: Callable | None = None
    invariant: Callable | None = None

    def tolerance(self, args, kwargs) -> tuple[float, float]:
        floats = [np.asarray(v).dtype for v in (*args, *kwargs.values())
                  if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating)]
        default = max((TOLERANCES.get(dtype, (1e-6, 1e-8)) for dtype in floats), default=(1e-6, 1e-8))
        return (default[0] if self.rtol is None else self.rtol, default[1] if self.atol is None else self.atol)

    def expected(self, args, kwargs):
        return self.reference(*copy.deepcopy(args), **copy.deepcopy(kwargs))

    def inputs(self, args, kwargs) -> dict:
        """``{argument name: value}`` by the reference's signature (``arg0``, ... when it has none to bind)."""
        try:
            return dict(inspect.signature(self.reference).bind(*args, **kwargs).arguments)
        except (TypeError, ValueError):
            return {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}

    def failure(self, name: str, args, kwargs, outcome: Outcome, *, named: Sequence[str] | None = None) -> Failure | None:
        """The :class:`Failure` of this outcome on this case, or None when it is right.

        The feedback names the first catalogued mistake that reproduces the output, or, when
        ``named`` is given, the first of those names that does (none if ``named`` is empty).
        """
        inputs = self.inputs(args, kwargs)
        if outcome.error:
            ename, evalue, frames = outcome.error
            return Failure(f"raised {ename}", explain_error(name, ename, evalue, frames, inputs))
        if self.verdict is not None:
            problem = self.verdict(*copy.deepcopy(args), outcome.value)
            return Failure("property", str(problem)) if problem else None
        problem = self.invariant and self.invariant(outcome.value, *copy.deepcopy(args), **copy.deepcopy(kwargs))
        if problem:
            return Failure("property", str(problem))
        expected = self.expected(args, kwargs)
        rtol, atol = self.tolerance(args, kwargs)
        try:
            _compare_outputs(outcome.value, expected, self.output_names, rtol, atol)
        except GradingError as failure:
            return self._explained(outcome, expected, failure, args, kwargs, inputs, named, (rtol, atol))
        dtype = _dtype_change(outcome.value, expected) if self.keep_dtype else None
        if dtype:
            return Failure("dtype", dtype)
        warned = [message for category, message in outcome.warnings if category == "RuntimeWarning"]
        if self.quiet and warned:
            return Failure("warning", _("numpy warned \"{warning}\" while your {name} ran: the notebook asks for no "
                                        "warning. A warning means an inf or NaN was computed on the way, even if it "
                                        "was replaced later (np.nan_to_num, or np.where choosing after both branches "
                                        "were computed): avoid computing it.").format(warning=warned[0], name=name))
        return None

    def _explained(self, outcome: Outcome, expected, failure: GradingError, args, kwargs, inputs, named,
                   tolerance) -> Failure:
        lines = [str(failure)]
        rtol, atol = tolerance  # a float32 mistake reproduces the output only that closely
        found = tuple(m.name for m in matching(outcome.value, self.mistakes, args, kwargs,
                                               rtol=max(rtol, 1e-5), atol=max(atol, 1e-8)))
        chosen = next((m for m in self.mistakes if m.name in found and (named is None or m.name in named)), None)
        kind = "shape" if isinstance(failure, WrongShape) else "values"
        if chosen is not None:
            lines.append(chosen.explanation())
        elif _reordered(outcome.value, expected):
            lines.append(_("What differs: you return the right values in another order; return them as "
                           "({outputs}).").format(outputs=", ".join(self.output_names)))
            kind = f"{kind}: outputs reordered"
        else:
            yours, answer = _first_differing(outcome.value, expected, self.output_names)
            difference = describe_difference(yours, answer, inputs)
            if difference:
                lines.append(_("What differs: {difference}").format(difference=difference.text))
                kind = f"{kind}: {difference.kind}"
            changed = _dtype_change(yours, answer) if self.keep_dtype else None
            if changed:
                lines.append(changed)
        warned = [message for _category, message in outcome.warnings]
        if warned:
            lines.append(_("numpy warned while your code ran: {warning}").format(warning=warned[0]))
        return Failure(kind, "\n".join(lines), found)


class Failure(NamedTuple):
    """A failed case: the kind of check it failed, the feedback, and every catalogued mistake that reproduces it.

    The kind is "raised ValueError" (the error's name), "shape" or "values" (followed by the kind of
    difference when no catalogued mistake names it: "shape: flattened"), "dtype", "warning" or
    "property".
    """
    kind: str
    feedback: str
    mistakes: tuple[str, ...] = ()


def _dtype_change(actual, expected) -> str | None:
    """What is wrong with the output's dtype, or None: a bool answer wants bool, an integer one any integers,
    a float one the very dtype (float32 stays float32)."""
    if isinstance(expected, tuple):
        return next(filter(None, (_dtype_change(a, e) for a, e in zip(actual, expected))), None)
    if not isinstance(expected, (np.ndarray, np.generic)) or not isinstance(actual, (np.ndarray, np.generic)):
        return None
    yours, answer = np.asarray(actual).dtype, np.asarray(expected).dtype
    if answer == np.bool_:
        return None if yours == np.bool_ else _(
            "your output is {dtype} where the answer is bool: return a bool array of True/False (True = may attend), "
            "e.g. np.tril(np.ones((L, S), dtype=bool)); a 0/1 float mask would be added to the scores, not "
            "applied.").format(dtype=yours)
    if np.issubdtype(answer, np.integer):
        return None if np.issubdtype(yours, np.integer) else _(
            "your output is {dtype} where the answer holds integers (indices): return ints, e.g. with np.argmax or "
            ".astype(int).").format(dtype=yours)
    if yours == answer:
        return None
    return _("your output is {dtype} where the answer is {expected}: keep the input's dtype (float32 stays float32). "
             "np.zeros(shape) and np.ones(shape) without dtype=, float64 constant arrays and astype(float) promote it; "
             "np.zeros_like(x) and x.dtype keep it.").format(dtype=yours, expected=answer)


def _reordered(actual, expected) -> bool:
    """Whether ``actual`` holds the several outputs of ``expected`` in another order."""
    if not isinstance(expected, tuple) or not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
        return False
    try:
        return any(all(np.shape(a) == np.shape(e) and np.allclose(a, e, equal_nan=True) for a, e in zip(order, expected))
                   for order in itertools.permutations(actual) if list(order) != list(actual))
    except (TypeError, ValueError):  # outputs that are not numbers cannot be reordered answers
        return False


def _first_differing(actual, expected, names: Sequence[str]):
    """The first (yours, answer) pair of outputs that differ (the whole outputs for a single one)."""
    if isinstance(expected, tuple) and isinstance(actual, (tuple, list)) and len(actual) == len(expected):
        for value, answer in zip(actual, expected):
            if np.shape(value) != np.shape(answer) or not np.allclose(value, answer, equal_nan=True):
                return value, answer
    return actual, expected


def _compare_outputs(actual, expected, names: Sequence[str], rtol, atol) -> None:
    if isinstance(expected, tuple):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise GradingError(_("your function should return {count} values ({outputs}); it returned {type}").format(
                count=len(expected), outputs=", ".join(names), type=type(actual).__name__))
        for value, answer, name in zip(actual, expected, names):
            expect_close(value, answer, _("your {output}").format(output=name), rtol=rtol, atol=atol)
    else:
        expect_close(actual, expected, rtol=rtol, atol=atol)


def first_failure(student: Callable, comparison: Comparison, cases: list,
                  forbidden: Iterable[str]) -> tuple[int, Failure] | None:
    """``(index, failure)`` of the first case the student's function fails, or None if it passes all."""
    for index, ((args, kwargs), outcome) in enumerate(zip(cases, student_outcomes(student, cases, tuple(forbidden)))):
        failed = comparison.failure(student.__name__, args, kwargs, outcome)
        if failed:
            return index, failed
    return None


def verdict(kind: str) -> str:
    """How a failure of this kind opens its feedback (translated): "an error" or "wrong answer"."""
    return _("an error") if kind.startswith("raised ") else _("wrong answer")


def check_student(student) -> None:
    """Refuse a patched numpy in the learner's own kernel, and a name that is no longer a function."""
    if not isinstance(student, RemoteFunction):
        check_environment()
    if not callable(student):
        raise GradingError(_("expected a function to grade, got {type}: did you overwrite its name?").format(
            type=type(student).__name__))
