"""Named wrong answers: when a student's output matches one, say which mistake it is."""
from __future__ import annotations

import warnings
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ..i18n.messages import N_, _

EXPLANATION = N_("This looks like a known mistake: {name}. {hint}")  # what a learner reads when one matches


class Mistake(NamedTuple):
    """A catalogued wrong answer: ``compute(*args, **kwargs)`` gives what that mistake outputs.

    ``name`` is also its identity (the English, whatever the learner's language); :meth:`explanation` is
    what the learner reads.
    """
    name: str  # e.g. "softmax over the wrong axis"
    compute: Callable
    hint: str  # what to think about to fix it

    def explanation(self) -> str:
        """"This looks like a known mistake: <name>. <hint>", in the learner's language."""
        return _(EXPLANATION).format(name=_(self.name), hint=_(self.hint))


def _quietly(function: Callable, args, kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return function(*args, **kwargs)
        except Exception:  # a wrong answer that crashes on this case cannot match
            return None


def _same(actual, candidate, rtol: float, atol: float) -> bool:
    if isinstance(candidate, tuple):  # several outputs (of different shapes, maybe): all must agree
        return (isinstance(actual, (tuple, list)) and len(actual) == len(candidate)
                and all(_same(a, c, rtol, atol) for a, c in zip(actual, candidate)))
    try:
        actual, candidate = np.asarray(actual, dtype=float), np.asarray(candidate, dtype=float)
    except (TypeError, ValueError):
        return False
    return actual.shape == candidate.shape and np.allclose(actual, candidate, rtol=rtol, atol=atol, equal_nan=True)


def matching(actual, mistakes: Sequence[Mistake], args=(), kwargs=None, *, rtol=1e-5, atol=1e-8) -> list[Mistake]:
    """Every catalogued mistake whose output equals ``actual`` on these inputs, in catalogue order.

    On a small or degenerate case several mistakes can give the same output (an all -inf row
    is NaN for most wrong softmaxes); :meth:`~sdpa_course.grading.task.Task.check_random`
    names the one that explains every failing case it saw.
    """
    kwargs = kwargs or {}
    return [m for m in mistakes if _same(actual, _quietly(m.compute, args, kwargs), rtol, atol)]


def diagnose(actual, mistakes: Sequence[Mistake], args=(), kwargs=None, *, rtol=1e-5, atol=1e-8) -> Mistake | None:
    """The first catalogued mistake whose output equals ``actual`` on these inputs, else None."""
    found = matching(actual, mistakes, args, kwargs, rtol=rtol, atol=atol)
    return found[0] if found else None
