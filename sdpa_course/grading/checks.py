"""Checks used by visible and hidden test cells: each failure says what is wrong and how to think about it."""
from __future__ import annotations

import copy
import warnings
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from .errors import ForbiddenCallError, GradingError
from .forbid import unavailable
from .integrity import check_environment
from .mistakes import Mistake, diagnose
from .remote import RemoteFunction


def describe_case(args: Sequence, kwargs: dict) -> str:
    """Short description of a test case: array shapes/dtypes and small values."""
    def one(value):
        if isinstance(value, np.ndarray):
            return f"array{value.shape} {value.dtype}" if value.size > 6 else np.array2string(value, precision=3)
        return repr(value)
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def expect_shape(actual, expected_shape: tuple, what: str = "your output", legend: str = "") -> None:
    """Fail with both shapes (and the legend, e.g. ``(..., L, Ev)``) if they differ."""
    shape = np.shape(actual)
    if tuple(shape) != tuple(expected_shape):
        legend = f" = {legend}" if legend else ""
        raise GradingError(f"{what} has shape {tuple(shape)} but should have shape {tuple(expected_shape)}{legend}")


def expect_close(actual, expected, what: str = "your output", *, rtol: float = 1e-6, atol: float = 1e-8,
                 hint: str = "") -> None:
    """Fail with the shape, the largest error and where it is, if ``actual`` is not close to ``expected``."""
    expected = np.asarray(expected)
    if not isinstance(actual, (np.ndarray, np.generic, float, int, list, tuple)):
        raise GradingError(f"{what} is a {type(actual).__name__}; expected a numpy array of shape {expected.shape}")
    actual = np.asarray(actual)
    expect_shape(actual, expected.shape, what)
    if not np.issubdtype(actual.dtype, np.number) and actual.dtype != np.bool_:
        raise GradingError(f"{what} has dtype {actual.dtype}; expected numbers")
    bad_nan = np.isnan(actual) & ~np.isnan(expected)
    if bad_nan.any():
        raise GradingError(f"{what} has NaN at {np.argwhere(bad_nan)[0].tolist()} where the answer is "
                           f"{expected[tuple(np.argwhere(bad_nan)[0])].item()!r}. {hint}".strip())
    if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        with np.errstate(invalid="ignore"):
            error = np.where(np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True), 0,
                             np.abs(actual.astype(float) - expected.astype(float)))
        error = np.nan_to_num(error, nan=np.inf)
        where = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
        at = f"at index {[int(i) for i in where]} " if error.ndim else ""
        raise GradingError(f"{what} differs from the correct answer: {at}you have "
                           f"{actual[where].item()!r}, the answer is {expected[where].item()!r}. {hint}".strip())


def expect_rows_sum_to_one(weights, what: str = "the weights", axis: int = -1, *, allow_zero_rows: bool = False) -> None:
    """Fail with the offending sum, e.g. "rows of the weights sum to 1.37, not 1: normalise along the last axis"."""
    sums = np.sum(np.asarray(weights, dtype=float), axis=axis)
    good = np.isclose(sums, 1.0, atol=1e-6) | (allow_zero_rows & np.isclose(sums, 0.0, atol=1e-12))
    if not np.all(good):
        worst = sums[~good].flat[0]
        raise GradingError(f"rows of {what} sum to {worst:.4g}, not 1: normalise along the last axis (the keys), "
                           f"so that each query's weights form a probability distribution")


def _call_student(student: Callable, args, kwargs, forbidden: Iterable[str]):
    """Run a local student function (the learner's own kernel) on copies of the inputs, the reference unavailable."""
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    with unavailable(forbidden, student), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = student(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def _student_runs(student: Callable, cases: list, forbidden: Iterable[str]) -> Iterator[Callable[[], tuple]]:
    """For each case, a thunk giving ``(result, warning messages)`` or raising what the student's function raised.

    A :class:`~sdpa_course.grading.remote.RemoteFunction` runs every case in the student's kernel in
    one round trip (on encoded copies of the inputs, with an ``sdpa_lib`` that lacks the forbidden
    functions already); a local function runs each case when its thunk is called.
    """
    if isinstance(student, RemoteFunction):
        for outcome in student.call_many(cases):
            yield lambda outcome=outcome: (outcome.value(), [message for _, message in outcome.warnings])
    else:
        for args, kwargs in cases:
            yield lambda args=args, kwargs=kwargs: _call_student(student, args, kwargs, forbidden)


def _compare_outputs(actual, expected, names: Sequence[str], rtol, atol, hint: str) -> None:
    if isinstance(expected, tuple):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise GradingError(f"your function should return {len(expected)} values ({', '.join(names)}); "
                               f"it returned {type(actual).__name__}")
        for value, answer, name in zip(actual, expected, names):
            expect_close(value, answer, f"your {name}", rtol=rtol, atol=atol, hint=hint)
    else:
        expect_close(actual, expected, "your output", rtol=rtol, atol=atol, hint=hint)


def check_against_reference(student: Callable, reference: Callable, cases: Iterable[tuple[tuple, dict]], *,
                            forbidden: Iterable[str] = (), mistakes: Sequence[Mistake] = (),
                            output_names: Sequence[str] = ("output",), rtol: float = 1e-6, atol: float = 1e-8,
                            seed: int | None = None) -> int:
    """Compare ``student`` with ``reference`` on every ``(args, kwargs)`` case; return the number of cases.

    While the student's function runs, the sdpa_lib functions named in ``forbidden`` raise
    :class:`ForbiddenCallError`.  On the first failing case the :class:`GradingError` says
    which case, what differs and, if the output matches a catalogued mistake, its name and hint.
    ``seed`` (the grading generator's seed) is quoted so the case can be reproduced.
    """
    if not isinstance(student, RemoteFunction):  # in the learner's own kernel: refuse a patched numpy
        check_environment()
    if not callable(student):
        raise GradingError(f"expected a function to grade, got {type(student).__name__}: did you overwrite its name?")
    cases = list(cases)
    runs = _student_runs(student, cases, tuple(forbidden))
    for (args, kwargs), run in zip(cases, runs):
        expected = reference(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        case = describe_case(args, kwargs) + (f" [grading seed {seed}]" if seed is not None else "")
        try:
            actual, warned = run()
        except (NotImplementedError, ForbiddenCallError, GradingError):
            raise
        except Exception as error:  # a StudentError carries the name of what the student's code raised
            name, message = getattr(error, "ename", type(error).__name__), getattr(error, "evalue", error)
            raise GradingError(f"your {student.__name__} raised {name}: {message} on inputs {case}") from None
        try:
            _compare_outputs(actual, expected, output_names, rtol, atol, hint="")
        except GradingError as failure:
            raise GradingError(_feedback(failure, actual, mistakes, args, kwargs, case, warned)) from None
    return len(cases)


def _feedback(failure: GradingError, actual, mistakes, args, kwargs, case: str, warned: list[str]) -> str:
    lines = [f"wrong answer on inputs {case}: {failure}"]
    mistake = diagnose(actual, mistakes, args, kwargs) if mistakes else None
    if mistake is not None:
        lines.append(f"This looks like a known mistake: {mistake.name}. {mistake.hint}")
    if warned:
        lines.append(f"numpy warned while your code ran: {warned[0]}")
    return "\n".join(lines)
