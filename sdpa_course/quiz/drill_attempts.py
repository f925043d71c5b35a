"""One attempt at a coding drill: what the answer store keeps of it, and how its time reads.

The terminal (:mod:`~sdpa_course.quiz.drill_terminal`) and the notebook
(:mod:`~sdpa_course.quiz.drill_notebook`) record every graded attempt the same way: as question
``drill-<name>``, right only when it passed within the drill's budget, with the seconds taken
and ``late`` when past the budget.
"""
from __future__ import annotations

import re
from typing import Callable

from ..grading.mistakes import EXPLANATION
from ..i18n.messages import _
from .countdown import format_duration
from .drill_grading import COULD_NOT_GRADE, DrillResult
from .drills import Drill
from .store import AnswerStore, StoreError

def named_mistake(message: str) -> str | None:
    """The name of the catalogued mistake a grading message names (:meth:`Mistake.explanation`, in the language
    of the run), or None."""
    before, _field, rest = _(EXPLANATION).partition("{name}")
    found = re.search(re.escape(before) + "(.+?)" + re.escape(rest.partition("{hint}")[0]), message)
    return found.group(1) if found else None


def chosen_text(result: DrillResult, late: bool) -> str:
    """What the store keeps as the attempt's answer: ``passed``, or the kind of failure and the mistake named
    (else the message's first line)."""
    first = named_mistake(result.message) or (result.message.splitlines() or [""])[0]
    text = "passed" if result.passed else f"{result.problem}: {first}"
    return (text[:200] + ("..." if len(text) > 200 else "")) + (" (late)" if late else "")


def record_attempt(store: AnswerStore | None, chosen: Drill, result: DrillResult, seconds: float,
                   report: Callable[[str], None]) -> bool:
    """Record one graded attempt (right = passed in time); False, after saying why, when it was not saved.

    A result whose grading itself failed (:data:`~sdpa_course.quiz.drill_grading.COULD_NOT_GRADE`) is no attempt
    of the learner's and is not recorded.
    """
    if store is None:
        return False
    if result.problem == COULD_NOT_GRADE:
        report(_("The attempt was not saved: grading could not run, so it says nothing about your code."))
        return False
    late = seconds > chosen.budget_seconds
    try:
        store.record(chosen.id, result.passed and not late, chosen_text(result, late), seconds=round(seconds, 1),
                     late=late)
    except StoreError as error:
        report(_("Warning: {error}. The attempt was not saved.").format(error=error))
        return False
    return True


def time_line(chosen: Drill, seconds: float) -> str:
    """``Time: 5 min 12 s of 8 min.``, or that it is past the budget and counts as late."""
    used, budget = format_duration(seconds), chosen.budget
    if seconds > chosen.budget_seconds:
        return _("Time: {used} of {budget}: past the budget, so it is recorded as late (not right, even when it "
                 "passes).").format(used=used, budget=budget)
    return _("Time: {used} of {budget}.").format(used=used, budget=budget)


__all__ = ["chosen_text", "record_attempt", "time_line"]
