"""(1) scaled_dot_product_attention against the two bare matmuls it cannot beat, and PyTorch if present.

float32, B*H = 16, L = S = 1024, E = Ev = 64.  The baseline is ``(Q @ K^T) @ V`` with
nothing else: the softmax's passes over the (L, S) scores are the overhead being measured.
Also measured, as the evidence for the library's choices: the size of the batch chunks the
scores are processed in (``sdpa_lib.fast_attention._CHUNK_BYTES``) and the path that returns
the weights.  Run alone: ``.venv/bin/python benchmarks/bench_sdpa.py [--repeats N]``.
"""
from __future__ import annotations

import os

import numpy as np

from timing import header, interleaved_medians, parse_repeats, row, verdict
from sdpa_lib import fast_attention, scaled_dot_product_attention

BH, L, E = 16, 1024, 64
TARGET_VS_MATMULS = 1.3
TARGET_VS_TORCH = 1.0
CHUNK_SIZES_MIB = (1, 16, 1024)  # beside the default; 1024 MiB = the whole batch at once
DEFAULT = f"sdpa_lib, default chunks ({fast_attention._CHUNK_BYTES / 2**20:g} MiB)"


def make_inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((BH, L, E), dtype=np.float32) for _ in range(3))


def with_chunk_bytes(nbytes: int, q, k, v):
    """A callable running the library with its score chunks set to ``nbytes``."""
    def run():
        saved, fast_attention._CHUNK_BYTES = fast_attention._CHUNK_BYTES, nbytes
        try:
            return scaled_dot_product_attention(q, k, v)
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


def library_variants(q, k, v) -> dict:
    k_t = np.swapaxes(k, -1, -2)  # (BH, S, E) -> (BH, E, S), a view
    found = {
        "two bare matmuls (baseline)": lambda: (q @ k_t) @ v,  # (BH, L, E) @ (BH, E, S) @ (BH, S, Ev)
        DEFAULT: lambda: scaled_dot_product_attention(q, k, v),
        "sdpa_lib, return_weights=True": lambda: scaled_dot_product_attention(q, k, v, return_weights=True),
    }
    for mib in CHUNK_SIZES_MIB:
        found[f"sdpa_lib, chunks of {mib} MiB"] = with_chunk_bytes(mib * 2**20, q, k, v)
    return found


def compare_with_torch(q, k, v, repeats: int) -> None:
    """A second interleaved group, so torch's threads never run beside the numpy-only group."""
    torch_run = torch_variant(q, k, v)
    if torch_run is None:
        row("sdpa_lib / torch", "skipped: torch is not installed (optional, see README)")
        return
    medians = interleaved_medians({DEFAULT: lambda: scaled_dot_product_attention(q, k, v),
                                   "torch": torch_run}, repeats)
    ratio = medians[DEFAULT] / medians["torch"]
    row("sdpa_lib / torch.nn.functional.sdpa",
        f"{ratio:5.2f}x ({medians[DEFAULT] * 1e3:.1f} / {medians['torch'] * 1e3:.1f} ms)",
        f"<= {TARGET_VS_TORCH}x", verdict(ratio, TARGET_VS_TORCH))


def main(argv=None) -> None:
    repeats = parse_repeats(__doc__, 15, argv)
    header(f"(1) scaled_dot_product_attention, float32, (B*H, L, E) = ({BH}, {L}, {E}), "
           f"median of {repeats} interleaved runs")
    q, k, v = make_inputs()
    medians = interleaved_medians(library_variants(q, k, v), repeats)
    baseline = medians["two bare matmuls (baseline)"]
    for name, seconds in medians.items():
        target, outcome = "", ""
        if name == DEFAULT:
            target, outcome = f"<= {TARGET_VS_MATMULS}x", verdict(seconds / baseline, TARGET_VS_MATMULS)
        row(name, f"{seconds * 1e3:7.1f} ms = {seconds / baseline:5.2f}x matmuls", target, outcome)
    compare_with_torch(q, k, v, repeats)


if __name__ == "__main__":
    main()
