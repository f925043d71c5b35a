"""A coding drill in a notebook: ``d = coding_drill("causal-sdpa")``, then ``d.submit(causal_sdpa)``.

``coding_drill`` shows the prompt, the template to paste into a cell and a countdown label that
ticks (:class:`~sdpa_course.quiz.countdown.CountdownLabel`).  ``d.submit(f, ...)`` reads the
source of the functions given with ``inspect.getsource`` (IPython keeps every cell's source, so
this works for functions defined in the notebook), puts the template's imports before them and
grades the text through :func:`~sdpa_course.quiz.drill_grading.grade_drill`, the terminal's path:
the functions run in a kernel of their own, not in this notebook's, and the verdict is computed
here.  ``d.submit_source(text)`` grades a text as it is.  Every attempt is recorded in the answer
store as ``drill-<name>`` (right only when passed within the budget).  With ``SDPA_HEADLESS=1``
everything is printed as text instead.
"""
from __future__ import annotations

import html
import inspect
import sys
import textwrap
import time
from typing import Callable

from ..i18n.messages import _
from ..widgets import is_headless
from .countdown import Clock, Countdown, CountdownLabel
from .drill_attempts import record_attempt, time_line
from .drill_grading import DEFAULT_TIMEOUT, NOT_GRADED, DrillResult, grade_drill
from .drills import Drill, drill
from .store import AnswerStore

CELL = "<your cell>"  # the file name the graded source's lines are quoted under


def preamble(chosen: Drill) -> str:
    """The template's lines before its first ``def``: the imports every submitted function may rely on."""
    lines = chosen.template.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("def ")), len(lines))
    return "\n".join(lines[:first]).strip() + "\n"


class NotebookDrill:
    """One drill in a notebook: its clock, its widgets, and the attempts graded so far (:attr:`attempts`)."""

    def __init__(self, chosen: Drill, *, store: AnswerStore | None, clock: Clock = time.monotonic,
                 timeout: float = DEFAULT_TIMEOUT, tick: float = 1.0, show: bool = True):
        self.drill, self.store, self.timeout = chosen, store, timeout
        self.countdown = Countdown(chosen.budget_seconds, clock=clock)
        self.attempts: list[DrillResult] = []
        self.label: CountdownLabel | None = None
        self.box = None
        if is_headless():
            if show:
                call = f"d.submit({', '.join(chosen.functions)})"
                print(_("Coding drill: {drill}").format(drill=chosen.describe()) + "\n\n"
                      + _("Paste this template into a cell:") + f"\n\n{chosen.template}\n"
                      + f"[{self.countdown.status()}] " + _("Then: {call}").format(call=call))
            return
        import ipywidgets as widgets
        self.label = CountdownLabel(self.countdown, on_expire=self._expired, tick=tick, prefix=_("Time left: "))
        self.status = widgets.HTML("")
        self.box = widgets.VBox([
            widgets.HTML(_("<b>Coding drill: {title}</b> ({budget})").format(
                             title=html.escape(_(chosen.title)), budget=html.escape(chosen.budget))
                         + f"<pre>{html.escape(_(chosen.prompt))}</pre>"
                         + _("Paste this template into a cell, write the function(s), run the cell, then "
                             "<code>{call}</code>:").format(call=f"d.submit({', '.join(chosen.functions)})")
                         + f"<pre>{html.escape(chosen.template)}</pre>"),
            self.label.label, self.status])
        if show:
            from IPython.display import display
            display(self.box)
        self.label.start()

    def _expired(self) -> None:
        if self.box is not None:
            self.status.value = "<i>" + _("Time is up: submit anyway; the attempt is recorded as late.") + "</i>"

    def submit(self, *functions: Callable) -> DrillResult:
        """Grade the source of ``functions`` (the drill's functions, and any helper they call), the template's
        imports first; show the result and record it."""
        try:
            sources = [textwrap.dedent(inspect.getsource(function)) for function in functions]
        except (OSError, TypeError) as error:
            return self._show(DrillResult(False, NOT_GRADED, _(
                "the source of what was given is not available ({error}): pass the functions defined in this "
                "notebook, or their text to d.submit_source(text)").format(error=error)))
        if not functions:
            return self._show(DrillResult(False, NOT_GRADED, _("give the function(s) to grade: {call}").format(
                call=f"d.submit({', '.join(self.drill.functions)})")))
        return self.submit_source(preamble(self.drill) + "\n\n" + "\n\n".join(sources))

    def submit_source(self, text: str) -> DrillResult:
        """Grade ``text`` (a whole cell or file, imports included) as it is; show the result and record it."""
        result = grade_drill(self.drill, text, timeout=self.timeout, filename=CELL)
        seconds = self.countdown.elapsed()
        saved = record_attempt(self.store, self.drill, result, seconds, lambda message: print(message, file=sys.stderr))
        self.attempts.append(result)
        return self._show(result, seconds, saved)

    def _show(self, result: DrillResult, seconds: float | None = None, saved: bool = False) -> DrillResult:
        lines = [_("note: {note}").format(note=result.note)] if result.note else []
        lines.append(result.message)
        if seconds is not None:
            lines.append(time_line(self.drill, seconds))
        if saved:
            lines.append(_("Attempt {number} saved as {id}.").format(number=len(self.attempts), id=self.drill.id))
        if result.passed and self.label is not None:
            self.label.stop()
        if self.box is not None:
            verdict = _("passed") if result.passed else _("not yet: fix it and submit again")
            self.status.value = "<b>" + html.escape(_("Attempt {number}: {verdict}").format(
                number=len(self.attempts), verdict=verdict)) + "</b>"
        print("\n".join(lines))
        return result

    def close(self) -> None:
        """Stop the countdown's thread."""
        if self.label is not None:
            self.label.stop()


def coding_drill(name: str, *, store=None, clock: Clock = time.monotonic, timeout: float = DEFAULT_TIMEOUT,
                 tick: float = 1.0) -> NotebookDrill:
    """Start drill ``name`` (``sdpa_course.quiz.drills.all_drills()`` lists them): show it, start its clock.

    ``store`` is an :class:`~sdpa_course.quiz.store.AnswerStore` or its path (default: the quiz's
    store, as ``sdpa-quiz`` uses).
    """
    chosen = drill(name)
    if not isinstance(store, AnswerStore):
        store = AnswerStore(store)
    return NotebookDrill(chosen, store=store, clock=clock, timeout=timeout, tick=tick)


__all__ = ["NotebookDrill", "coding_drill", "preamble"]
