"""A coding drill in the terminal: ``sdpa-quiz --drill NAME`` (and ``--drills`` to list them).

The template goes to a file (``./drill_<name>.py``, kept and reused when it exists, or
``--drill-file PATH``); ``$VISUAL`` or ``$EDITOR`` opens it when set, else the learner edits it
in any editor and presses Enter.  The clock starts when the drill is shown; the prompt shows
the time left (:func:`~sdpa_course.quiz.countdown.read_line`).  Each attempt is graded from the
file's text (:func:`~sdpa_course.quiz.drill_grading.grade_drill`) and recorded at once as
``drill-<name>``: right only when it passed within the budget, ``late`` when past it, with the
seconds taken.  After a failure the learner may fix the file and grade it again.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from ..i18n.messages import _
from .countdown import Clock, Countdown, read_line
from .drill_attempts import record_attempt, time_line
from .drill_grading import DEFAULT_TIMEOUT, grade_drill
from .drills import Drill, all_drills, drill
from .store import AnswerStore, StoreError



def replay_in_a_terminal(file) -> str:
    """How to replay a failing case outside a notebook (added to the grading engine's replay line)."""
    return _("(In a terminal: python -i {file}, then import sdpa_course and paste that line; in a notebook, "
             "paste it after the cell that defines your function.)").format(file=file)


def prepare_file(chosen: Drill, path: Path | None) -> tuple[Path, bool]:
    """The drill's file, written from the template unless it exists; and whether it existed (then it is reused)."""
    path = Path(path) if path is not None else Path.cwd() / chosen.filename
    if path.exists():
        if not path.is_file():
            raise OSError(_("{path} is not a file").format(path=path))
        return path, True
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(chosen.template, encoding="utf-8")
    return path, False


def editor_command() -> list[str] | None:
    """``$VISUAL`` or ``$EDITOR`` split into a command (None when neither is set)."""
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    return shlex.split(command) if command and command.strip() else None


def open_editor(command: list[str], path: Path, say: Callable[[str], None]) -> bool:
    """Run the editor on ``path`` and wait for it; False (after saying why) if it could not run."""
    say(_("Opening {file} with {editor}; save and close the editor to grade it.").format(file=path.name,
                                                                                        editor=" ".join(command)))
    try:
        finished = subprocess.run([*command, str(path)], check=False)
    except OSError as error:
        say(_("The editor could not start ({error}).").format(error=error))
        return False
    if finished.returncode != 0:
        say(_("The editor exited with status {status}; grading the file as it is.").format(status=finished.returncode))
    return True


def wait_for_edit(path: Path, countdown: Countdown, read, editor: list[str] | None, first: bool,
                  say: Callable[[str], None]) -> bool:
    """Let the learner edit the file (editor, or any editor then Enter); False when they stop (q, end of input)."""
    if editor is not None:
        if not first:
            try:
                answer = read(_("Press Enter to edit {file} again (q stops): ").format(file=path.name), countdown)
            except EOFError:
                return False
            if answer.strip().lower() in ("q", "quit", "n", "no"):
                return False
        if open_editor(editor, path, say):
            return True
    prompt = (_("Edit {path} in any editor, save it, then press Enter to grade (q stops): ") if first
              else _("Fix {path} in any editor, save it, then press Enter to grade (q stops): "))
    try:
        answer = read(prompt.format(path=path), countdown)
    except EOFError:
        return False
    return answer.strip().lower() not in ("q", "quit")


def run_drill(name: str, store: AnswerStore | None, *, file: str | None = None, timeout: float = DEFAULT_TIMEOUT,
              clock: Clock = time.monotonic, read=read_line, say: Callable[[str], None] = print) -> int:
    """The whole terminal drill; returns the exit status (0 passed in time, 1 not, 2 bad drill or file)."""
    try:
        chosen = drill(name)
        path, existed = prepare_file(chosen, Path(file) if file else None)
    except (LookupError, OSError) as error:
        print("sdpa-quiz: " + _("error: {problem}").format(problem=error), file=sys.stderr)
        return 2
    say(_("Coding drill: {drill}").format(drill=chosen.describe()) + "\n")
    if existed:
        say(_("{path} exists already: it is reused as it is (delete it to start again from the template).").format(
            path=path))
    else:
        say(_("The template is in {path}.").format(path=path))
    say(_("Time budget: {budget}. The clock starts now.").format(budget=chosen.budget))
    countdown, editor, first = Countdown(chosen.budget_seconds, clock=clock), editor_command(), True
    while wait_for_edit(path, countdown, read, editor, first, say):
        first = False
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            say(_("{path} could not be read ({error}); fix that and grade again.").format(path=path, error=error))
            continue
        say(_("Grading..."))
        result = grade_drill(chosen, source, timeout=timeout, filename=path.name)
        seconds = countdown.elapsed()
        if result.note:
            print(_("note: {note}").format(note=result.note), file=sys.stderr)
        message = result.message
        if "sdpa_course.replay(" in message:  # the grading engine's replay line, in any language
            message += "\n" + replay_in_a_terminal(path)
        say(f"\n{message}")
        say(time_line(chosen, seconds))
        if record_attempt(store, chosen, result, seconds, lambda text: print(text, file=sys.stderr)):
            say(_("Attempt saved to {store} as {id}.").format(store=store.path, id=chosen.id))
        if result.passed:
            return 0 if seconds <= chosen.budget_seconds else 1
    say("\n" + _("Drill stopped."))
    return 1


def drill_table(store: AnswerStore | None = None) -> str:
    """The drills, their budgets and functions; with a readable ``store``, which are in the wrong-answer book or due."""
    book = {}
    if store is not None:
        try:
            due = {item.id for item in store.due()}
            book = {item.id: item.id in due for item in store.schedule().values() if item.in_book or item.id in due}
        except StoreError:
            book = {}
    lines = [f"{_('drill'):<18} {_('budget'):>7}  {_('writes')}"]
    marks = {True: "  " + _("(due for review)"), False: "  " + _("(in your book)")}
    for item in all_drills():
        mark = marks.get(book.get(item.id), "")
        lines.append(f"{item.name:<18} {item.budget:>7}  {', '.join(item.functions)}{mark}")
    lines.append("\n" + _("sdpa-quiz --drill NAME starts one (the template goes to ./drill_<name>.py)."))
    return "\n".join(lines)


__all__ = ["drill_table", "run_drill"]
