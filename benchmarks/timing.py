"""The benchmarks' shared helpers: the machine header and one verdict format.

Timings and peaks come from :mod:`sdpa_course.profiling` (interleaved medians, tracemalloc
peaks), the same rule the notebooks use.  Figures are printed as ratios against a baseline
measured in the same run, beside the target and a verdict.
"""
from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np

from sdpa_course.profiling import interleaved_medians, interleaved_timings, peak_bytes  # noqa: F401  (the benchmarks' timing rule)

ROOT = Path(__file__).resolve().parents[1]


def parse_repeats(description: str, default: int, argv=None) -> int:
    """The ``--repeats N`` option every timing benchmark takes."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=default, help=f"timed runs per variant (default {default})")
    return parser.parse_args(argv).repeats


def times_per_run(variants: dict, runs: int, warmup: int = 1) -> dict[str, list[float]]:
    """Wall seconds of each variant in each of ``runs`` interleaved runs (A B C, A B C, ...), after ``warmup`` runs."""
    times = {name: [] for name in variants}
    for run in range(warmup + runs):
        seconds = interleaved_medians(variants, 1, warmup=0)  # one run: every variant once, in turn
        for name in times if run >= warmup else ():
            times[name].append(seconds[name])
    return times


def ratio_spread(times: list[float], baseline: list[float]) -> tuple[float, str]:
    """The per-run ratios ``times / baseline`` (same run, so the same load): their median, and that median with the range."""
    ratios = [t / b for t, b in zip(times, baseline)]
    median = float(np.median(ratios))
    return median, f"{median:5.2f}x (runs {min(ratios):.2f}-{max(ratios):.2f})"


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
