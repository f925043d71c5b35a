"""Time and memory of a call: the one timing rule and the one peak-memory measure of the course.

Notebooks, graders and benchmarks all measure with these.  Timings on a shared machine are
noisy, so a comparison is made inside one process: the compared variants run in turns
(A B C, A B C, ...) and each gets the **median** of its repeats, so a burst of load from
elsewhere hits all of them alike and one lucky or unlucky run moves nothing.  Peak memory
is what ``tracemalloc`` sees (numpy reports its arrays to it) above the level at the start
of the call: the inputs are not counted, the result is.
"""
from __future__ import annotations

import time
import tracemalloc
from typing import Callable

import numpy as np

from .i18n.messages import _

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def interleaved_timings(variants: dict[str, Callable[[], object]], repeats: int,
                        warmup: int = 1) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each variant, the variants run in turns ``repeats`` times after ``warmup`` rounds.

    CPU seconds are this process's (all its threads): when other work shares the cores, the
    wall time grows but the CPU time of single-threaded code stays close to a quiet run's.

    Examples
    --------
    >>> timings = interleaved_timings({"sum": lambda: sum(range(100)), "max": lambda: max(range(100))}, repeats=3)
    >>> sorted(timings), all(wall >= 0 and cpu >= 0 for wall, cpu in timings.values())
    (['max', 'sum'], True)
    """
    if repeats < 1:
        raise ValueError(_("repeats must be at least 1; got repeats={repeats}").format(repeats=repeats))
    times = {name: [] for name in variants}
    for round_ in range(warmup + repeats):
        for name, fn in variants.items():
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            if round_ >= warmup:
                times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {name: tuple(np.median(samples, axis=0).tolist()) for name, samples in times.items()}


def interleaved_medians(variants: dict[str, Callable[[], object]], repeats: int, warmup: int = 1) -> dict[str, float]:
    """Median wall seconds of each variant, run in turns as :func:`interleaved_timings` does."""
    return {name: wall for name, (wall, _) in interleaved_timings(variants, repeats, warmup).items()}


def median_seconds(fn: Callable, *args, repeats: int = 5, clock: str = "wall", **kwargs) -> float:
    """Median time of ``fn(*args, **kwargs)`` over ``repeats`` calls, after one warm-up call.

    ``clock="wall"`` measures elapsed time (``time.perf_counter``); ``clock="cpu"`` the CPU
    time of this process, all its threads (``time.process_time``): the time the work itself
    took, which other programs on a busy machine barely disturb.

    Examples
    --------
    >>> median_seconds(sum, [1, 2, 3], repeats=3) < 1.0
    True
    >>> median_seconds(sum, [1, 2, 3], repeats=3, clock="cpu") < 1.0
    True
    """
    if clock not in CLOCKS:
        raise ValueError(_("clock must be one of {clocks}; got clock={clock!r}").format(clocks=sorted(CLOCKS), clock=clock))
    if repeats < 1:
        raise ValueError(_("repeats must be at least 1; got repeats={repeats}").format(repeats=repeats))
    now = CLOCKS[clock]
    fn(*args, **kwargs)
    times = []
    for unused_repeat in range(repeats):
        started = now()
        fn(*args, **kwargs)
        times.append(now() - started)
    return float(np.median(times))


def traced_peak(fn: Callable, *args, **kwargs) -> tuple[object, int]:
    """``fn(*args, **kwargs)`` and the peak bytes it allocated (Python and numpy) above the level at its start.

    Works whether or not ``tracemalloc`` is already tracing (it is left as it was).

    Examples
    --------
    >>> result, peak = traced_peak(np.zeros, 1_000_000)
    >>> result.shape, peak >= 8_000_000
    ((1000000,), True)
    """
    already = tracemalloc.is_tracing()
    if not already:
        tracemalloc.start()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    try:
        result = fn(*args, **kwargs)
        return result, tracemalloc.get_traced_memory()[1] - start
    finally:
        if not already:
            tracemalloc.stop()


def peak_bytes(fn: Callable, *args, **kwargs) -> int:
    """Peak bytes allocated while ``fn(*args, **kwargs)`` runs, as :func:`traced_peak` measures them.

    Examples
    --------
    >>> peak_bytes(np.zeros, 1_000_000) >= 8_000_000
    True
    """
    return traced_peak(fn, *args, **kwargs)[1]
