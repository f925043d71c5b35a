"""(3) Attention one query at a time (a Python loop) against the vectorised library: the speed-up the course quotes.

float64, one head, E = Ev = 64, L = S in LENGTHS.  The loop is chapter 7's
``sdpa_course.lessons.cost.attention_query_by_query``; the baseline is the vectorised
``scaled_dot_product_attention`` on the same inputs, so the figure is loop time / vectorised time.
Run alone: ``.venv/bin/python benchmarks/bench_loop.py [--repeats N]``.
"""
from __future__ import annotations


import numpy as np

from timing import header, interleaved_medians, parse_repeats, row
from sdpa_lib import scaled_dot_product_attention

E = 64
LENGTHS = (128, 512, 2048)


def loop_version():
    """The course's loop-per-query attention, or None while chapter 7's module does not exist yet."""
    try:
        from sdpa_course.lessons.cost import attention_query_by_query
    except ImportError:
        return None
    return attention_query_by_query


def main(argv=None) -> None:
    repeats = parse_repeats(__doc__, 7, argv)
    header(f"(3) loop per query vs vectorised, float64, one head, E = {E}, median of {repeats} interleaved runs")
    loop = loop_version()
    if loop is None:
        row("loop / vectorised", "skipped: sdpa_course.lessons.cost.attention_query_by_query does not exist yet")
        return
    rng = np.random.default_rng(0)
    for length in LENGTHS:
        q, k, v = (rng.standard_normal((length, E)) for _ in range(3))
        np.testing.assert_allclose(loop(q, k, v), scaled_dot_product_attention(q, k, v), atol=1e-10)
        medians = interleaved_medians({"loop": lambda: loop(q, k, v),
                                       "vectorised": lambda: scaled_dot_product_attention(q, k, v)}, repeats)
        row(f"L = S = {length}: loop / vectorised", f"{medians['loop'] / medians['vectorised']:6.1f}x "
            f"({medians['loop'] * 1e3:.1f} / {medians['vectorised'] * 1e3:.2f} ms)", "no target")


if __name__ == "__main__":
    main()
