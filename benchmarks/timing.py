"""The benchmarks' shared helpers: interleaved medians, tracemalloc peaks, one verdict format.

Timings on a shared machine are noisy, so every comparison is made inside one process:
the compared variants run in turns (A B C, A B C, ...) and each gets the median of its
repeats, so a burst of load from elsewhere hits all of them alike.  Figures are printed
as ratios against a baseline measured in the same run, beside the target and a verdict.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make sdpa_lib and tests.nbrun importable
    sys.path.insert(0, str(ROOT))


def interleaved_timings(variants: dict[str, Callable[[], object]], repeats: int,
                        warmup: int = 1) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each variant, the variants run in turns ``repeats`` times after ``warmup`` rounds.

    CPU seconds are this process's (all its threads): when other work shares the cores, the
    wall time grows but the CPU time of single-threaded code stays close to a quiet run's.
    """
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


def parse_repeats(description: str, default: int, argv=None) -> int:
    """The ``--repeats N`` option every timing benchmark takes."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=default, help=f"timed runs per variant (default {default})")
    return parser.parse_args(argv).repeats


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes traced by tracemalloc (numpy reports its arrays to it) while ``fn()`` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def verdict(value: float, target: float) -> str:
    """``PASS`` with the margin left, or ``MISS`` with how far over the target ``value`` is (lower is better)."""
    if value <= target:
        return f"PASS (margin {1 - value / target:.0%})"
    return f"MISS by {value / target - 1:.0%}"


def row(label: str, figure: str, target: str = "", outcome: str = "") -> None:
    """One aligned line of a benchmark table."""
    print(f"  {label:<44} {figure:<34} {target:<16} {outcome}".rstrip(), flush=True)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def blas_name() -> str:
    """The BLAS numpy was built against, from ``np.show_config``."""
    blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()


def machine() -> str:
    return (f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, BLAS {blas_name()}")


def header(title: str) -> None:
    """The benchmark's title, the machine, and the load on it (other work on 2 cores skews every figure)."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n== {title}\n   machine: {machine()}; load average {load} at start", flush=True)
