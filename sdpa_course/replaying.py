"""Replay a failed hidden test case in the learner's notebook: ``sdpa_course.replay("ch05", "softmax", seed=..., size=...)``.

The feedback of a failed random case ends with that line.  Pasted into a cell of the
exercise notebook, it draws the same case again (same seed, same size level), runs the
learner's function of that name from the notebook on it, and shows the inputs, their
output beside the answer and what differs.  The returned :class:`Replay` keeps them all
(``.args``, ``.kwargs``, ``.yours``, ``.answer``), to step through the function by hand.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from .grading.checks import Outcome, local_outcome, show, side_by_side, verdict
from .grading.draw import FULL
from .grading.exercises import task as find_task
from .grading.isolation import correct_helpers
from .i18n.messages import _


@dataclass
class Replay:
    """One replayed case: its inputs, the learner's output (or error), the answer and the verdict."""
    function: str
    args: tuple
    kwargs: dict
    inputs: dict
    outcome: Outcome
    answer: object  # None for a function graded by a property (it has no one answer)
    failure: str | None  # the feedback, None when the learner's function now gets it right

    @property
    def yours(self):
        return self.outcome.value

    def __repr__(self) -> str:
        lines = [_("{function} on the replayed case:").format(function=self.function)]
        lines += [f"  {name} = {show(value)}".replace("\n", "\n    ") for name, value in self.inputs.items()]
        if self.outcome.error is None and self.answer is not None:
            lines += ["", side_by_side(self.yours, self.answer)]
        lines += ["", _("Right on this case now.") if self.failure is None else self.failure]
        lines += ["", _("Step through it: {function}(*r.args, **r.kwargs), with r the value replay returned.").format(
            function=self.function)]
        return "\n".join(lines)


def _task(chapter: str, function: str):
    """The task of ``chapter``'s ``function``; chapter ``"drills"`` holds the coding drills' own tasks."""
    from .quiz.drill_tasks import DRILLS, drill_task
    return drill_task(function) if chapter == DRILLS else find_task(chapter, function)


def replay(chapter: str, function: str, *, seed: int, size: int = FULL, student: Callable | None = None) -> Replay:
    """Draw case ``seed`` at level ``size`` of ``chapter``'s ``function`` and run the learner's function on it.

    ``student`` defaults to the function of that name in the caller's namespace (the notebook).
    """
    graded = _task(chapter, function)
    if student is None:
        caller = inspect.stack()[1].frame
        student = caller.f_locals.get(function, caller.f_globals.get(function))
        if not callable(student):
            raise NameError(_("this notebook defines no function {function!r}: run the cell that defines it first, "
                              "or pass it as student=...").format(function=function))
    case = graded.case(seed, size)
    comparison = graded.comparison
    with correct_helpers(student, **graded.helpers):
        outcome = local_outcome(student, case.args, case.kwargs, graded.forbidden)
    failed = comparison.failure(function, case.args, case.kwargs, outcome)
    answer = None if graded.verdict else comparison.expected(case.args, case.kwargs)
    return Replay(function, case.args, case.kwargs, comparison.inputs(case.args, case.kwargs), outcome, answer,
                  failed and f"{verdict(failed.kind)}: {failed.feedback}")
