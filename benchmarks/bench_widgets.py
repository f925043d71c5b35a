"""(5) The widgets' redraw time: each draw function with its defaults, rendered to PNG as the inline backend does.

A redraw in the notebook is ``draw(**values)`` followed by ``plt.show()``, which renders the
figure to PNG; both are timed here, with matplotlib's Agg backend: wall time (the target) and
this process's CPU time (what a quiet machine would show; drawing is single-threaded).  The baseline is a
one-line plot rendered the same way, in the same run, so the ratio shows what each widget
adds to matplotlib's fixed cost.  Run alone: ``.venv/bin/python benchmarks/bench_widgets.py``.
"""
from __future__ import annotations

import importlib
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from timing import header, interleaved_timings, parse_repeats, row, verdict  # noqa: E402

TARGET_SECONDS = 0.1
DRAW_FUNCTIONS = ("sdpa_lib.widgets.pipeline.draw_pipeline_step", "sdpa_lib.widgets.saturation.draw_saturation",
                  "sdpa_lib.widgets.temperature.draw_temperature",
                  "sdpa_lib.widgets.mask_explorer.draw_mask_explorer")
BASELINE = "baseline: a one-line plot"


def render(figure) -> None:
    """What ``plt.show()`` costs under the inline backend: the figure to PNG bytes, then closed."""
    figure.savefig(io.BytesIO(), format="png")
    plt.close(figure)


def one_line_plot():
    figure, axes = plt.subplots()
    axes.plot([0, 1], [0, 1])
    return figure


def find(dotted: str):
    """The draw function at ``dotted``, or None if its module or name does not exist yet."""
    module_name, name = dotted.rsplit(".", 1)
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return None


def main(argv=None) -> None:
    repeats = parse_repeats(__doc__, 10, argv)
    header(f"(5) widget redraw (draw + PNG, Agg), median of {repeats} interleaved redraws")
    variants = {BASELINE: lambda: render(one_line_plot())}
    for dotted in DRAW_FUNCTIONS:
        draw = find(dotted)
        if draw is None:
            row(dotted.rsplit(".", 1)[1], "skipped: does not exist yet")
            continue
        variants[dotted.rsplit(".", 1)[1]] = lambda draw=draw: render(draw())
    timings = interleaved_timings(variants, repeats)
    baseline = timings[BASELINE][0]
    for name, (seconds, cpu) in timings.items():
        target = "" if name == BASELINE else f"< {TARGET_SECONDS * 1e3:.0f} ms"
        outcome = "" if name == BASELINE else verdict(seconds, TARGET_SECONDS)
        row(name, f"{seconds * 1e3:6.1f} ms (CPU {cpu * 1e3:5.1f}) = {seconds / baseline:4.1f}x", target, outcome)


if __name__ == "__main__":
    main()
