"""One graded function of an exercise: its reference, how its random cases are drawn, and how failures are shown.

A grade cell reads::

    from sdpa_course.grading.exercises import task

    softmax_task = task("ch05", "softmax")
    softmax_task.check(softmax, [((np.array([0.0, np.log(3.0)]),), {})])  # visible: cases by hand
    ### BEGIN HIDDEN TESTS
    softmax_task.check_random(softmax)  # hidden: cases drawn when grading runs
    ### END HIDDEN TESTS

Every random case is drawn from a seed of its own through a :class:`~sdpa_course.grading.draw.Draw`.
When one fails, :meth:`Task.check_random` looks for a smaller case that fails the same way
(the same catalogued mistake, error or kind of check), drawn from the same generator at
lower size levels, and reports the smallest it finds: in full, with the student's output
beside the answer, and a line that replays it in the learner's notebook
(:func:`sdpa_course.replay`).  The case generators are part of the course, like the
reference: what grading keeps to itself is the seed, drawn when grading runs.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from .checks import (SMALL, Comparison, Failure, Outcome, check_student, describe_case, first_failure, show,
                     side_by_side, student_outcomes, verdict)
from .draw import FULL, Draw, case_seeds
from ..i18n.messages import _
from .errors import GradingError
from .isolation import correct_helpers
from .mistakes import Mistake
from .randomness import grading_rng

SHRINK_TRIALS = 30  # smaller cases tried per level below the full one
SHRINK_ROUNDS = 4  # round trips to the student's kernel while looking for them


@dataclass(frozen=True)
class Case:
    """A drawn case: its arguments and the seed and level that draw it again."""
    args: tuple
    kwargs: dict
    seed: int
    level: int

    def entries(self) -> int:
        return sum(np.size(v) for v in (*self.args, *self.kwargs.values()) if isinstance(v, np.ndarray))


@dataclass(frozen=True)
class Task:
    """A function of assignment ``assignment`` that the student writes as ``name``, graded against ``reference``.

    ``draw(d)`` returns one random ``(args, kwargs)`` case drawn with the :class:`Draw` ``d``;
    ``count`` of them are graded.  ``forbidden`` names the sdpa_lib functions unavailable while
    the student's code runs; ``helpers`` the student's functions replaced by correct ones
    meanwhile (see :func:`~sdpa_course.grading.isolation.correct_helpers`); ``exact`` asks for
    equality; ``keep_dtype`` and ``quiet`` grade the notebook's rules "keep the dtype" and
    "no warning".  A task graded by a property rather than an answer (a counterexample, say)
    gives ``verdict(*args, answer)``, which returns what is wrong or None; its ``reference``
    is then a function with the student's signature, used to name the arguments.  A task
    graded by a reference *and* a property gives ``invariant(answer, *args, **kwargs)`` too: it is
    checked first (a broken property is the more telling failure), then the reference.
    """
    assignment: str
    name: str
    reference: Callable
    draw: Callable[[Draw], tuple[tuple, dict]]
    mistakes: Sequence[Mistake] = ()
    forbidden: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ("output",)
    exact: bool = False
    keep_dtype: bool = False
    quiet: bool = False
    helpers: Mapping[str, Callable] = field(default_factory=dict)
    count: int = 60
    verdict: Callable | None = None
    invariant: Callable | None = None

    @property
    def chapter(self) -> str:
        """``"ch05"``: how learners name the assignment in :func:`sdpa_course.replay`."""
        return self.assignment.split("_")[0]

    @property
    def comparison(self) -> Comparison:
        tolerance = 0.0 if self.exact else None
        return Comparison(self.reference, self.mistakes, self.output_names, tolerance, tolerance,
                          self.keep_dtype, self.quiet, self.verdict, self.invariant)

    def case(self, seed: int, level: int = FULL) -> Case:
        args, kwargs = self.draw(Draw(seed, level))
        return Case(tuple(args), dict(kwargs), int(seed), int(level))

    def replay_line(self, case: Case) -> str:
        return f'sdpa_course.replay("{self.chapter}", "{self.name}", seed={case.seed}, size={case.level})'

    @contextlib.contextmanager
    def grading(self, student: Callable):
        """While the block runs, the student's helpers are the correct ones (the student is checked first)."""
        check_student(student)
        with correct_helpers(student, **self.helpers):
            yield

    def check(self, student: Callable, cases) -> int:
        """Grade ``student`` on hand-written ``(args, kwargs)`` cases; return their number."""
        cases = [(tuple(args), dict(kwargs)) for args, kwargs in cases]
        with self.grading(student):
            failed = first_failure(student, self.comparison, cases, self.forbidden)
        if failed:
            index, failure = failed
            raise GradingError(_("{verdict} on inputs {inputs}: {feedback}").format(
                verdict=verdict(failure.kind), inputs=describe_case(*cases[index]), feedback=failure.feedback))
        return len(cases)

    def check_random(self, student: Callable, count: int | None = None, rng: np.random.Generator | None = None) -> int:
        """Grade ``student`` on ``count`` cases drawn now; on a failure, report the smallest failing case found."""
        seeds = case_seeds(rng if rng is not None else grading_rng(), count or self.count)
        cases = [self.case(seed) for seed in seeds]
        with self.grading(student):
            failed = first_failure(student, self.comparison, [(c.args, c.kwargs) for c in cases], self.forbidden)
            if not failed:
                return len(cases)
            index, failure = failed
            case, failure, outcome = self.smallest_failure(student, cases[index], failure)
            report = self.report(student, case, failure, outcome, shrunk=case is not cases[index])
        raise GradingError(report)

    def smallest_failure(self, student: Callable, failing: Case, failure: Failure) -> tuple[Case, Failure, Outcome | None]:
        """The smallest case (lowest level, fewest entries) that fails as ``failing`` does, its failure and the
        student's outcome on it (None when that case is ``failing`` itself, whose outcome is not kept).

        Smaller cases are drawn from the same generator at every level below the full one.
        A catalogued mistake is named only if it reproduces every failing case seen that fails
        the same check (on a small case several mistakes often give the same output, and only
        one of them is the student's); the case shown is then, among the smallest, one that
        this mistake alone explains.  Otherwise no mistake is named (a case that happens to
        look like one is not evidence), and the case shown is the smallest with the same kind
        of difference as the first failure.
        """
        rng = np.random.default_rng(failing.seed)
        candidates = [self.case(seed, level) for level in range(FULL) for seed in case_seeds(rng, SHRINK_TRIALS)]
        candidates.sort(key=lambda c: (c.level, c.entries()))
        same_check = [(c, f, o) for c, f, o in self._failures(student, candidates) if _check(f.kind) == _check(failure.kind)]
        common = set(failure.mistakes)
        for _case, other, _outcome in same_check:
            common &= set(other.mistakes)
        named = tuple(m.name for m in self.mistakes if m.name in common)
        if named:
            for case, _failure, outcome in sorted(same_check, key=lambda found: len(found[1].mistakes)):
                return case, self.comparison.failure(self.name, case.args, case.kwargs, outcome, named=named), outcome
            return failing, failure, None
        first = self._unnamed(student, failing, failure)
        for case, other, outcome in same_check:
            other = self._unnamed(student, case, other, outcome)
            if other.kind == first.kind:
                return case, other, outcome
        return failing, first, None

    def _unnamed(self, student: Callable, case: Case, failure: Failure, outcome=None) -> Failure:
        """``failure`` explained without naming a catalogued mistake (by its kind of difference)."""
        if not failure.mistakes:
            return failure
        if outcome is None:
            outcome = next(iter(student_outcomes(student, [(case.args, case.kwargs)], self.forbidden)))
        return self.comparison.failure(self.name, case.args, case.kwargs, outcome, named=())

    def _failures(self, student: Callable, candidates: list[Case]):
        """``(case, failure, outcome)`` for each candidate the student fails, resuming after a case that raised."""
        start = 0
        for _round in range(SHRINK_ROUNDS):
            batch = candidates[start:]
            if not batch:
                return
            for case, outcome in zip(batch, student_outcomes(student, [(c.args, c.kwargs) for c in batch], self.forbidden)):
                start += 1
                failed = self.comparison.failure(student.__name__, case.args, case.kwargs, outcome)
                if failed:
                    yield case, failed, outcome

    def report(self, student: Callable, case: Case, failure: Failure, outcome: Outcome | None, *, shrunk: bool) -> str:
        """The feedback for a failing random case: what failed, the case in full when small, and how to replay it.

        ``outcome`` is the student's on ``case`` if already known; otherwise the function is run once more.
        """
        opening = (_("{verdict} on the smallest failing case found: {feedback}") if shrunk else
                   _("{verdict} on a case drawn when grading ran: {feedback}"))
        lines = [opening.format(verdict=verdict(failure.kind), feedback=failure.feedback), "", _("The inputs:")]
        inputs = self.comparison.inputs(case.args, case.kwargs)
        lines += [f"  {name} = {show(value)}".replace("\n", "\n    ") for name, value in inputs.items()]
        if not failure.kind.startswith("raised ") and self.verdict is None:
            with contextlib.suppress(Exception):
                if outcome is None:
                    outcome = next(iter(student_outcomes(student, [(case.args, case.kwargs)], self.forbidden)))
                expected = self.comparison.expected(case.args, case.kwargs)
                if _small(outcome.value) and _small(expected):
                    lines += ["", side_by_side(outcome.value, expected)]
        lines += ["", _("Replay it in a cell of your notebook: {line}").format(line=self.replay_line(case))]
        return "\n".join(lines)


def _check(kind: str) -> str:
    """The check a failure kind belongs to: "values: constant factor" -> "values"."""
    return kind.split(":")[0]


def _small(value) -> bool:
    return isinstance(value, np.ndarray) and value.size <= SMALL
