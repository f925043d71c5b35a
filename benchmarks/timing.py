"""The benchmarks' shared helpers: interleaved medians, tracemalloc peaks, one verdict format.

Timings on a shared machine are noisy, so every comparison is made inside one process:
the compared variants run in turns (A B C, A B C, ...) and each gets the median of its
repeats, so a burst of load from elsewhere hits all of them alike.  Figures are printed
as ratios against a baseline measured in the same run, beside the target and a verdict.
"""
from __future__ import annotations

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


def interleaved_medians(variants: dict[str, Callable[[], object]], repeats: int, warmup: int = 1) -> dict[str, float]:
    """Median seconds of each variant, the variants run in turns ``repeats`` times after ``warmup`` rounds."""
    times = {name: [] for name in variants}
    for round_ in range(warmup + repeats):
        for name, fn in variants.items():
            started = time.perf_counter()
            fn()
            if round_ >= warmup:
                times[name].append(time.perf_counter() - started)
    return {name: float(np.median(samples)) for name, samples in times.items()}


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
    print(f"\n== {title}\n   machine: {machine()}", flush=True)
