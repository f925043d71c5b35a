"""(1) scaled_dot_product_attention against the numpy work it cannot avoid, and PyTorch if present.

float32, B*H = 16, L = S = 1024, E = Ev = 64.  Two baselines: the two bare matmuls
``(Q @ K^T) @ V``, and the numpy floor, those matmuls plus one ``exp`` pass over the (L, S)
scores (no softmax can do less).  Each figure is the median of the per-run ratios against a
baseline timed in the same run, with their range: each run calls every variant once, in turn.
Measured: the default (``implementation=None``, the fast path at this size) and the plain
formula (``implementation="reference"``) against both baselines; as evidence for the library's
choices, the size of the batch chunks the fast path works in
(``sdpa_lib.fast_attention._CHUNK_BYTES``), the path that returns the weights, and the fast path
against the formula on either side of the rule that ``implementation=None`` follows
(``sdpa_lib.fast_attention.is_faster``).
Run alone: ``.venv/bin/python benchmarks/bench_sdpa.py [--repeats N]`` (N runs, default 15).
"""
from __future__ import annotations

import os

import numpy as np

from timing import header, parse_repeats, ratio_spread, row, times_per_run, verdict
from sdpa_lib import fast_attention, scaled_dot_product_attention
from sdpa_lib.fast_attention import is_faster

BH, L, E = 16, 1024, 64
TARGET_VS_MATMULS = 1.3
TARGET_VS_TORCH = 1.0
CHUNK_SIZES_MIB = (1, 16, 1024)  # beside the default; 1024 MiB = the whole batch at once
MATMULS, FLOOR = "two bare matmuls (baseline)", "numpy floor: matmuls + one exp (baseline)"
DEFAULT = f"sdpa_lib default, fast path ({fast_attention._CHUNK_BYTES / 2**20:g} MiB chunks)"
REFERENCE = "sdpa_lib, implementation='reference'"
# (B*H, L, S) either side of is_faster at E = Ev = 64: short queries, long ones, one query row
RULE_SHAPES = ((16, 64, 1024), (16, 256, 1024), (1, 1, 16384), (1, 1024, 1024))


def make_inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((BH, L, E), dtype=np.float32) for _ in range(3))


def with_chunk_bytes(nbytes: int, q, k, v):
    """A callable running the library with its score chunks set to ``nbytes``."""
    def run():
        saved, fast_attention._CHUNK_BYTES = fast_attention._CHUNK_BYTES, nbytes
        try:
            return scaled_dot_product_attention(q, k, v, implementation="fast")
        finally:
            fast_attention._CHUNK_BYTES = saved
    return run


def torch_variant(q, k, v):
    """PyTorch's CPU SDPA on the same arrays and thread count, or None if torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(os.cpu_count())
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))  # shares memory with numpy: no copy

    def run():
        with torch.inference_mode():
            return torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    np.testing.assert_allclose(run().numpy(), scaled_dot_product_attention(q, k, v), atol=1e-4)
    return run


def numpy_floor(q, k_t, v) -> np.ndarray:
    """The least a softmax-weighted sum can cost in numpy: the two matmuls and one exp pass, no max, no division."""
    scores = q @ k_t  # (BH, L, E) @ (BH, E, S) -> (BH, L, S)
    return np.exp(scores, out=scores) @ v  # (BH, L, S) @ (BH, S, Ev) -> (BH, L, Ev)


def library_variants(q, k, v) -> dict:
    k_t = np.swapaxes(k, -1, -2)  # (BH, S, E) -> (BH, E, S), a view
    found = {
        MATMULS: lambda: (q @ k_t) @ v,  # (BH, L, E) @ (BH, E, S) @ (BH, S, Ev)
        FLOOR: lambda: numpy_floor(q, k_t, v),
        DEFAULT: lambda: scaled_dot_product_attention(q, k, v),
        REFERENCE: lambda: scaled_dot_product_attention(q, k, v, implementation="reference"),
        "sdpa_lib, return_weights=True": lambda: scaled_dot_product_attention(q, k, v, return_weights=True),
    }
    for mib in CHUNK_SIZES_MIB:
        found[f"sdpa_lib fast path, chunks of {mib} MiB"] = with_chunk_bytes(mib * 2**20, q, k, v)
    return found


def compare_with_baselines(q, k, v, runs: int) -> None:
    times = times_per_run(library_variants(q, k, v), runs)
    for name in [MATMULS, FLOOR, *(name for name in times if name not in (MATMULS, FLOOR))]:
        ratio, figure = ratio_spread(times[name], times[MATMULS])
        target, outcome = (f"<= {TARGET_VS_MATMULS}x", verdict(ratio, TARGET_VS_MATMULS)) if name == DEFAULT else ("", "")
        row(name, f"{np.median(times[name]) * 1e3:6.1f} ms, {figure} matmuls", target, outcome)
    for label, name in (("default", DEFAULT), ("implementation='reference'", REFERENCE)):
        row(f"{label} / numpy floor", ratio_spread(times[name], times[FLOOR])[1])


def compare_either_side_of_the_rule(runs: int) -> None:
    """The fast path's time over the formula's at (B*H, L, S) where implementation=None picks one or the other."""
    rng = np.random.default_rng(1)
    for bh, n_rows, n_keys in RULE_SHAPES:
        q, k, v = (rng.standard_normal((bh, n, E), dtype=np.float32) for n in (n_rows, n_keys, n_keys))
        times = times_per_run({name: lambda name=name: scaled_dot_product_attention(q, k, v, implementation=name)
                               for name in ("fast", "reference")}, runs)
        picked = "fast" if is_faster(n_rows, n_keys, E, E) else "reference"
        row(f"({bh}, {n_rows}, {n_keys}): fast / reference", ratio_spread(times["fast"], times["reference"])[1],
            f"None: {picked}")


def compare_with_torch(q, k, v, runs: int) -> None:
    """A second interleaved group, so torch's threads never run beside the numpy-only group."""
    torch_run = torch_variant(q, k, v)
    if torch_run is None:
        row("sdpa_lib / torch", "skipped: torch is not installed (optional, see README)")
        return
    times = times_per_run({DEFAULT: lambda: scaled_dot_product_attention(q, k, v), "torch": torch_run}, runs)
    ratio, figure = ratio_spread(times[DEFAULT], times["torch"])
    row("sdpa_lib / torch.nn.functional.sdpa", figure, f"<= {TARGET_VS_TORCH}x", verdict(ratio, TARGET_VS_TORCH))


def main(argv=None) -> None:
    runs = parse_repeats(__doc__, 15, argv)
    header(f"(1) scaled_dot_product_attention, float32, (B*H, L, E) = ({BH}, {L}, {E}), "
           f"median [range] of the per-run ratios over {runs} interleaved runs")
    q, k, v = make_inputs()
    compare_with_baselines(q, k, v, runs)
    compare_either_side_of_the_rule(runs)
    compare_with_torch(q, k, v, runs)


if __name__ == "__main__":
    main()
