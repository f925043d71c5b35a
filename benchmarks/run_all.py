"""Every benchmark, one after another, each in its own process (what ``make bench`` runs).

Each prints its figures as ratios against a baseline measured in the same run, with the
target and PASS/MISS; the lines with a verdict or a skip are repeated at the end.
Run: ``.venv/bin/python benchmarks/run_all.py [name ...]`` (names: sdpa tiled loop notebooks widgets grading).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ("sdpa", "tiled", "loop", "notebooks", "widgets", "grading")
SUMMARY_WORDS = ("PASS", "MISS", "skipped", "ERROR")
NOISE = ("Kernel is running over TCP without encryption",)  # every nbclient kernel says it; harmless on localhost


def run(name: str) -> list[str]:
    """Run benchmarks/bench_<name>.py, echoing its output; return the lines worth summarising."""
    process = subprocess.Popen([sys.executable, str(HERE / f"bench_{name}.py")], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=HERE.parent)
    kept = []
    for line in process.stdout:
        if any(noise in line for noise in NOISE):
            continue
        print(line, end="", flush=True)
        if line.startswith("=="):
            kept.append(line.strip())
        elif any(word in line for word in SUMMARY_WORDS):
            kept.append(line.rstrip())
    if process.wait() != 0:
        kept.append(f"  ERROR: bench_{name}.py exited with code {process.returncode}")
    return kept


def main() -> None:
    names = sys.argv[1:] or BENCHMARKS
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        sys.exit(f"unknown benchmark(s) {unknown}; choose from {', '.join(BENCHMARKS)}")
    summary = [line for name in names for line in run(name)]
    print("\n== summary\n" + "\n".join(summary))


if __name__ == "__main__":
    main()
