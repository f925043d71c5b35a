"""A countdown for timed practice (coding drills, the mock interview): time arithmetic, a terminal reader, a label.

Three parts, each on an injectable clock (a function returning seconds, ``time.monotonic`` by
default), so tests run on a fake one:

* :class:`Countdown`, :func:`remaining` and :func:`format_seconds`: how much time is left, as
  numbers and as ``07:59``; nothing here sleeps or prints;
* :func:`read_line`: wait for a line of input while the time runs.  On a terminal (POSIX) it
  prints a warning on a line of its own at 60, 30 and 10 seconds left and when the time is up,
  then prompts again; whatever the learner was typing stays in the terminal's line buffer, so a
  warning never loses it.  When stdin is not a terminal (a pipe, a test) it just reads the line;
* :class:`CountdownLabel`: an ipywidgets ``Label`` that ticks in a background thread and calls
  back once when the time runs out.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable, TextIO

from ..i18n.messages import _

Clock = Callable[[], float]
WARNINGS = (60, 30, 10)  # seconds left at which read_line warns on a terminal


def remaining(deadline: float, now: float) -> float:
    """Seconds from ``now`` to ``deadline``, never below 0.

    >>> remaining(100.0, 40.5), remaining(100.0, 130.0)
    (59.5, 0.0)
    """
    return max(0.0, deadline - now)


def format_seconds(seconds: float) -> str:
    """``mm:ss`` (``h:mm:ss`` from an hour), rounded up while time is left, so 00:00 means the time is up.

    >>> format_seconds(479.2), format_seconds(0.4), format_seconds(0), format_seconds(3725)
    ('08:00', '00:01', '00:00', '1:02:05')
    """
    whole = int(-(-max(0.0, seconds) // 1))  # ceil
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def format_duration(seconds: float) -> str:
    """A duration as a learner reads it: ``5 min 12 s``, ``40 s``.

    >>> format_duration(312.4), format_duration(40), format_duration(600)
    ('5 min 12 s', '40 s', '10 min')
    """
    minutes, secs = divmod(int(round(max(0.0, seconds))), 60)
    if not minutes:
        return _("{seconds} s").format(seconds=secs)
    if not secs:
        return _("{minutes} min").format(minutes=minutes)
    return _("{minutes} min {seconds} s").format(minutes=minutes, seconds=secs)


class Countdown:
    """``budget`` seconds from the moment it is made, on ``clock``.

    >>> now = [0.0]
    >>> countdown = Countdown(90, clock=lambda: now[0])
    >>> now[0] = 31.0
    >>> countdown.left(), countdown.elapsed(), countdown.expired, countdown.status()
    (59.0, 31.0, False, '00:59 left')
    >>> now[0] = 100.0
    >>> countdown.expired, countdown.status()
    (True, 'time is up (+00:10)')
    """

    def __init__(self, budget: float, *, clock: Clock = time.monotonic):
        if not budget > 0:
            raise ValueError(_("a countdown needs a positive budget in seconds; got {budget}").format(
                budget=repr(budget)))
        self.budget, self.clock = float(budget), clock
        self.started = clock()
        self.deadline = self.started + self.budget

    def left(self) -> float:
        return remaining(self.deadline, self.clock())

    def elapsed(self) -> float:
        return self.clock() - self.started

    @property
    def expired(self) -> bool:
        return self.clock() >= self.deadline

    def status(self) -> str:
        """``07:59 left``, or ``time is up (+01:02)`` with the time past the budget."""
        over = self.clock() - self.deadline
        if over >= 0:
            return _("time is up (+{over})").format(over=format_seconds(over))
        return _("{left} left").format(left=format_seconds(-over))


def _stdin_ready(stream: TextIO) -> Callable[[float | None], bool]:
    """``ready(timeout)``: whether a line can be read from ``stream`` within ``timeout`` seconds (None: wait)."""
    import select

    def ready(timeout: float | None) -> bool:
        readable, _writable, _failed = select.select([stream], [], [], timeout)
        return bool(readable)
    return ready


def read_line(prompt: str, countdown: Countdown, *, stream: TextIO | None = None, out: TextIO | None = None,
              ready: Callable[[float | None], bool] | None = None, marks: tuple[int, ...] = WARNINGS) -> str:
    """Prompt with the time left and return the line typed (without its newline); ``EOFError`` at end of input.

    Parameters
    ----------
    prompt : str
        Shown after ``[07:59 left]``.
    countdown : Countdown
    stream, out : text files, optional
        Where the line is read and the prompt and warnings written; default stdin and stdout.
    ready : callable, optional
        ``ready(timeout)`` says whether a line can be read within ``timeout`` seconds (None: wait
        as long as it takes).  Default: ``select`` on ``stream`` when it is a terminal on POSIX;
        otherwise no warnings, the line is just read.  Tests pass a fake that moves a fake clock.
    marks : tuple of int
        Seconds left at which a warning is printed (each once, and "time is up" at 0).
    """
    stream, out = stream or sys.stdin, out or sys.stdout
    if ready is None and os.name == "posix" and _isatty(stream):
        ready = _stdin_ready(stream)
    out.write(f"[{countdown.status()}] {prompt}")
    out.flush()
    if ready is not None:
        left = countdown.left()
        pending = sorted((mark for mark in (*marks, 0) if mark < left), reverse=True)
        while True:
            wait = countdown.left() - pending[0] if pending else None
            if ready(None if wait is None else max(0.0, wait)):
                break
            reached = [mark for mark in pending if countdown.left() <= mark]
            if not reached:
                continue
            pending = [mark for mark in pending if mark not in reached]
            warning = (_("time is up: finish anyway and grade it; it is recorded as late") if min(reached) == 0
                       else _("{seconds} s left").format(seconds=min(reached)))
            out.write(f"\n[{warning}]\n[{countdown.status()}] {prompt}")
            out.flush()
    line = stream.readline()
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or fake stream
        return False


class CountdownLabel:
    """An ipywidgets ``Label`` showing ``countdown.status()``, refreshed every ``tick`` seconds by a background thread.

    ``on_expire()`` is called once, from that thread, when the time runs out; the thread
    then stops.  :meth:`refresh` is the whole of one tick (tests call it directly);
    :meth:`stop` ends the thread (a submitted drill's clock stops).
    """

    def __init__(self, countdown: Countdown, *, on_expire: Callable[[], None] | None = None, tick: float = 1.0,
                 prefix: str | None = None):
        import ipywidgets as widgets

        self.countdown, self.on_expire, self.tick = countdown, on_expire, tick
        self.prefix = _("Time: ") if prefix is None else prefix
        self.label = widgets.Label(value=self._text())
        self._stopped = threading.Event()
        self._expired_called = False
        self._thread: threading.Thread | None = None

    def _text(self) -> str:
        return f"{self.prefix}{self.countdown.status()}"

    def refresh(self) -> bool:
        """Show the time left now; on expiry call ``on_expire`` once.  Returns whether it should keep ticking."""
        self.label.value = self._text()
        if self.countdown.expired and not self._expired_called:
            self._expired_called = True
            if self.on_expire is not None:
                self.on_expire()
        return not self._expired_called and not self._stopped.is_set()

    def start(self) -> CountdownLabel:
        """Start ticking in a daemon thread (once); return self."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sdpa-countdown", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while self.refresh():
            if self._stopped.wait(self.tick):
                return

    def stop(self) -> None:
        """Stop ticking; the label keeps its last text."""
        self._stopped.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


__all__ = ["Countdown", "CountdownLabel", "WARNINGS", "format_duration", "format_seconds", "read_line", "remaining"]
