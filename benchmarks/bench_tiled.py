"""(2) tiled_attention (online softmax) against the direct form: time and peak memory, per block size.

float32, one head (B*H = 1), E = Ev = 64, L = S = 4096 and 16384.  The baseline is
``scaled_dot_product_attention`` on the same inputs, which holds the whole (L, S) score
matrix (1 GiB at L = 16384).  Peak memory is what tracemalloc sees numpy allocate during
the call, inputs excluded.  The targets apply at L = 16384; the block size that meets the
memory target fastest there is the one to use as ``tiled.DEFAULT_BLOCK_SIZE``.
Run alone: ``.venv/bin/python benchmarks/bench_tiled.py [--lengths 4096 16384] [--repeats N]``.
"""
from __future__ import annotations

import argparse

import numpy as np

from timing import header, interleaved_medians, peak_bytes, row, verdict
from sdpa_lib import scaled_dot_product_attention, tiled_attention
from sdpa_lib.tiled import DEFAULT_BLOCK_SIZE

E = 64
BLOCK_SIZES = (256, 512, 1024, 2048)  # 128 and below: Python overhead per tile dominates
TARGET_LENGTH = 16384
TARGET_MEMORY = 0.05
TARGET_TIME = 1.5
DIRECT = "direct"


def make_inputs(length: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((length, E), dtype=np.float32) for _ in range(3))


def variants(q, k, v) -> dict:
    found = {DIRECT: lambda: scaled_dot_product_attention(q, k, v)}
    for block in BLOCK_SIZES:
        found[block] = lambda block=block: tiled_attention(q, k, v, block_size=block)
    return found


def measure_length(length: int, repeats: int) -> dict:
    """Rows ``{block: (time ratio, memory ratio)}`` for one length, printed as they come."""
    q, k, v = make_inputs(length)
    runs = variants(q, k, v)
    np.testing.assert_allclose(runs[BLOCK_SIZES[0]](), runs[DIRECT](), atol=1e-5)
    peaks = {name: peak_bytes(fn) for name, fn in runs.items()}
    medians = interleaved_medians(runs, repeats, warmup=0)  # the peak_bytes runs were the warm-up
    gated = length == TARGET_LENGTH
    print(f"  L = S = {length}: direct {medians[DIRECT]:.2f} s, peak {peaks[DIRECT] / 2**20:.0f} MiB"
          f"{'' if gated else ' (targets apply at L = %d)' % TARGET_LENGTH}", flush=True)
    ratios = {}
    for block in BLOCK_SIZES:
        time_ratio, memory_ratio = medians[block] / medians[DIRECT], peaks[block] / peaks[DIRECT]
        ratios[block] = (time_ratio, memory_ratio)
        row(f"block_size={block}: time / direct", f"{time_ratio:5.2f}x ({medians[block]:.2f} s)",
            f"<= {TARGET_TIME}x" if gated else "", verdict(time_ratio, TARGET_TIME) if gated else "")
        row(f"block_size={block}: peak memory / direct", f"{memory_ratio:6.2%} ({peaks[block] / 2**20:.1f} MiB)",
            f"<= {TARGET_MEMORY:.0%}" if gated else "", verdict(memory_ratio, TARGET_MEMORY) if gated else "")
    return ratios


def best_block(ratios: dict) -> int | None:
    """The fastest block size within the memory target, or None if none is."""
    within = [block for block, (_, memory) in ratios.items() if memory <= TARGET_MEMORY]
    return min(within, key=lambda block: ratios[block][0]) if within else None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096, TARGET_LENGTH])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    header(f"(2) tiled_attention vs the direct form, float32, B*H = 1, E = {E}, "
           f"median of {args.repeats} interleaved runs")
    for length in args.lengths:
        ratios = measure_length(length, args.repeats)
        if length == TARGET_LENGTH:
            best = best_block(ratios)
            row("fastest block_size within the memory target", str(best),
                f"default: {DEFAULT_BLOCK_SIZE}", "" if best == DEFAULT_BLOCK_SIZE else "differs from the default")


if __name__ == "__main__":
    main()
