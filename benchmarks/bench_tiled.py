"""(2) tiled_attention (online softmax) against the direct form: time and peak memory of its default block size.

float32, one head (B*H = 1), E = Ev = 64, L = S = 1024 .. 16384.  The direct form is
``scaled_dot_product_attention`` on the same inputs, which holds a whole (L, S) score matrix
(1 GiB at L = 16384).  Peak memory is what tracemalloc sees numpy allocate during one call,
inputs excluded; it is the same from run to run.  Times are compared run by run: each run calls
every variant once, in turn, and the figure is the median of the per-run ratios with their range.

For each length: the block size ``tiled.default_block_size`` chooses, its time over the direct
form's and its peak memory over the direct form's.  Targets: memory at most 25% at L = 1024 and
falling as L grows, at most 5% at L = 16384; time at most 1.5x at L = 16384.  At L = 16384 fixed
block sizes are measured too: the fastest one within the memory target is the evidence for the
default's 16 MiB tile budget, and should be the default's block.
Run alone: ``.venv/bin/python benchmarks/bench_tiled.py [--lengths 1024 ... 16384] [--runs N]``.
"""
from __future__ import annotations

import argparse

import numpy as np

from timing import header, peak_bytes, ratio_spread, row, times_per_run, verdict
from sdpa_lib import scaled_dot_product_attention, tiled_attention
from sdpa_lib.tiled import default_block_size

E = 64
LENGTHS = (1024, 2048, 4096, 8192, 16384)
BLOCK_SIZES = (512, 1024, 2048, 4096)  # at TARGET_LENGTH; 256 and below: Python overhead per tile dominates
TARGET_LENGTH = 16384
TARGET_MEMORY = 0.05
TARGET_MEMORY_FIRST = 0.25  # at the shortest length measured
TARGET_TIME = 1.5
DIRECT, DEFAULT = "direct", "default"


def make_inputs(length: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((length, E), dtype=np.float32) for _ in range(3))


def variants(q, k, v, block_sizes=()) -> dict:
    found = {DIRECT: lambda: scaled_dot_product_attention(q, k, v), DEFAULT: lambda: tiled_attention(q, k, v)}
    for block in block_sizes:
        found[block] = lambda block=block: tiled_attention(q, k, v, block_size=block)
    return found


def measure_length(length: int, runs: int) -> tuple[float, dict]:
    """Print one length's rows; return the default's memory ratio and ``{block: (time, memory ratio)}`` of the sweep."""
    q, k, v = make_inputs(length)
    gated = length == TARGET_LENGTH
    found = variants(q, k, v, BLOCK_SIZES if gated else ())
    np.testing.assert_allclose(found[DEFAULT](), found[DIRECT](), atol=1e-5)
    peaks = {name: peak_bytes(fn) for name, fn in found.items()}  # also the warm-up run
    times = times_per_run(found, runs, warmup=0)
    block = default_block_size(length, length)
    print(f"  L = S = {length}: direct {np.median(times[DIRECT]):.2f} s, peak {peaks[DIRECT] / 2**20:.0f} MiB; "
          f"default block_size = {block}", flush=True)
    ratios = {}
    for name in [name for name in found if name != DIRECT]:
        (time_ratio, time_figure), memory_ratio = ratio_spread(times[name], times[DIRECT]), peaks[name] / peaks[DIRECT]
        ratios[name] = (time_ratio, memory_ratio)
        label = f"default ({block})" if name == DEFAULT else f"block_size={name}"
        row(f"{label}: time / direct", time_figure,
            f"<= {TARGET_TIME}x" if gated else "", verdict(time_ratio, TARGET_TIME) if gated else "")
        row(f"{label}: peak memory / direct", f"{memory_ratio:6.2%} ({peaks[name] / 2**20:.1f} MiB)",
            f"<= {TARGET_MEMORY:.0%}" if gated else "", verdict(memory_ratio, TARGET_MEMORY) if gated else "")
    return ratios[DEFAULT][1], {b: ratios[b] for b in BLOCK_SIZES if b in ratios}


def best_block(ratios: dict) -> int | None:
    """The fastest block size within the memory target, or None if none is."""
    within = [block for block, (_, memory) in ratios.items() if memory <= TARGET_MEMORY]
    return min(within, key=lambda block: ratios[block][0]) if within else None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs per length (default 5)")
    args = parser.parse_args(argv)
    header(f"(2) tiled_attention vs the direct form, float32, B*H = 1, E = {E}, "
           f"median [range] of the per-run ratios over {args.runs} interleaved runs")
    memory = {}
    for length in sorted(args.lengths):
        memory[length], sweep = measure_length(length, args.runs)
        if sweep:
            best, default = best_block(sweep), default_block_size(length, length)
            row("fastest block_size within the memory target", str(best), f"default: {default}",
                "" if best == default else "differs from the default")
    shortest, ratios = min(memory), [memory[n] for n in sorted(memory)]
    row(f"default's peak memory / direct at L = {shortest}", f"{memory[shortest]:6.2%}",
        f"<= {TARGET_MEMORY_FIRST:.0%}", verdict(memory[shortest], TARGET_MEMORY_FIRST))
    falling = all(later <= earlier for earlier, later in zip(ratios, ratios[1:]))
    row("default's peak memory / direct falls with L", " > ".join(f"{r:.1%}" for r in ratios), "falling",
        "PASS" if falling else "MISS")


if __name__ == "__main__":
    main()
