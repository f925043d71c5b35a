"""(5) The widgets' redraw time: what the learner waits for after moving a slider, as the explorer does it.

A redraw in JupyterLab is the explorer's callback: the state for the new values, the cached
figure's artists updated, the figure rendered to PNG bytes (``CachedRedraw.png``, the very
object the explorer calls; sending the bytes to the browser is not counted).  Each explorer
is walked the way a learner moves it: one control at a time, one stop at a time, through
every control's range and back; the median of those redraws is held to the target, and the
slowest move of one full walk is printed beside it (a move of the mask explorer's L or S
re-renders its static part, the first visit of a pipeline step builds that step's figure).

For comparison, in the same run: the explorer's first draw (when its cell runs: the figure
built and rendered whole), and a new figure per redraw rendered as the inline backend shows
it (``IPython.core.pylabtools.print_figure``: ``bbox_inches="tight"``, the figure's dpi),
which is what the explorers did before they cached their figures.  The baseline is a one-line
plot shown that way.  Wall time is the target; this process's CPU time is what a quiet machine
would show (drawing is single-threaded).  Run alone: ``.venv/bin/python benchmarks/bench_widgets.py``.
"""
from __future__ import annotations

import itertools
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402
from IPython.core.pylabtools import print_figure  # noqa: E402

from timing import header, interleaved_timings, parse_repeats, row, verdict  # noqa: E402

from sdpa_course.widgets._base import CachedRedraw  # noqa: E402
from sdpa_course.widgets.mask_explorer import MASK_KINDS, MAX_LENGTH, draw_mask_explorer  # noqa: E402
from sdpa_course.widgets.pipeline import STEPS, draw_pipeline_step  # noqa: E402
from sdpa_course.widgets.saturation import D_K_CHOICES, draw_saturation  # noqa: E402
from sdpa_course.widgets.temperature import TEMPERATURE_RANGE, draw_temperature  # noqa: E402

TARGET_SECONDS = 0.1
BASELINE = "baseline: a one-line plot, inline PNG"


def walk(defaults: dict, ranges: dict) -> list[dict]:
    """The values after each move: every control in turn through its range, one stop at a time, then back."""
    values, moves = dict(defaults), []
    for name, stops in ranges.items():
        start = stops.index(defaults[name])
        for stop in [*stops[start + 1:], *stops[::-1], *stops[1:start + 1]]:
            values[name] = stop
            moves.append(dict(values))
    return moves


def draw_temperature_default_scores(temperature, figure=None):
    return draw_temperature(temperature, None, figure=figure)


T_STOPS = [round(float(t), 4) for t in 10 ** np.arange(np.log10(TEMPERATURE_RANGE[0]), np.log10(TEMPERATURE_RANGE[1]), 0.05)]
EXPLORERS = {  # name: (draw, figure key, the walk), with each explorer's controls and defaults
    "pipeline": (draw_pipeline_step, lambda values: values["step"],
                 walk({"step": 5, "seed": 0}, {"step": list(range(len(STEPS))), "seed": list(range(4))})),
    # (pipeline_explorer builds every step's figure once when its cell runs: see first_draw)
    "saturation": (draw_saturation, lambda values: None,
                   walk({"d_k": 256, "scaled": False}, {"d_k": list(D_K_CHOICES), "scaled": [False, True]})),
    "temperature": (draw_temperature_default_scores, lambda values: None,
                    walk({"temperature": T_STOPS[26]}, {"temperature": T_STOPS})),
    "mask explorer": (draw_mask_explorer, lambda values: None,
                      walk({"kind": "padding+causal", "length_a": 5, "length_b": 3, "L": 5, "S": 5, "side": "right"},
                           {"kind": list(MASK_KINDS), "length_a": list(range(MAX_LENGTH + 1)),
                            "length_b": list(range(MAX_LENGTH + 1)), "L": list(range(1, MAX_LENGTH + 1)),
                            "S": list(range(1, MAX_LENGTH + 1)), "side": ["right", "left"]})),
}


def inline_png(figure) -> None:
    """What the inline backend does to show a figure: PNG bytes at its dpi, tight bounding box; then closed."""
    print_figure(figure, "png")
    plt.close(figure)


def one_line_plot():
    figure, axes = plt.subplots()
    axes.plot([0, 1], [0, 1])
    return figure


def first_draw(draw, figure_key, moves) -> CachedRedraw:
    """What the explorer's cell does: draw the figure of the start values (the walk ends there); the pipeline
    explorer then builds and renders every other step's figure too (``warm``), so no step's first visit builds one."""
    redraw = CachedRedraw(draw, figure_key)
    redraw.png(**moves[-1])
    if draw is draw_pipeline_step:
        for step in range(len(STEPS)):
            redraw.png(**{**moves[-1], "step": step})
    return redraw


def slowest_move(draw, figure_key, moves) -> tuple[float, dict]:
    """Wall seconds of the slowest redraw in one pass over ``moves`` (after the cell's first draw), and that move."""
    redraw = first_draw(draw, figure_key, moves)
    times = []
    for values in moves:
        start = time.perf_counter()
        redraw.png(**values)
        times.append(time.perf_counter() - start)
    return max(times), moves[int(np.argmax(times))]


def main(argv=None) -> None:
    repeats = parse_repeats(__doc__, 20, argv)
    header(f"(5) widget redraw (the explorer's callback: state, update, PNG), median of {repeats} interleaved redraws")
    variants = {BASELINE: lambda: inline_png(one_line_plot())}
    for name, (draw, figure_key, moves) in EXPLORERS.items():
        redraw, stops = first_draw(draw, figure_key, moves), itertools.cycle(moves)  # the cell ran
        variants[f"{name}: redraw"] = lambda redraw=redraw, stops=stops: redraw.png(**next(stops))
        variants[f"{name}: first draw"] = lambda draw=draw, figure_key=figure_key, moves=moves: (
            first_draw(draw, figure_key, moves))
        variants[f"{name}: new figure, inline PNG"] = lambda draw=draw, moves=moves: inline_png(draw(**moves[-1]))
    timings = interleaved_timings(variants, repeats)
    baseline = timings[BASELINE][0]
    for label, (seconds, cpu) in timings.items():
        measured = f"{seconds * 1e3:6.1f} ms (CPU {cpu * 1e3:5.1f}) = {seconds / baseline:4.1f}x"
        if label.endswith(": redraw"):
            row(label, measured, f"< {TARGET_SECONDS * 1e3:.0f} ms", verdict(seconds, TARGET_SECONDS))
        else:
            row(label, measured)
    for name, (draw, figure_key, moves) in EXPLORERS.items():
        seconds, values = slowest_move(draw, figure_key, moves)
        row(f"{name}: slowest of {len(moves)} moves", f"{seconds * 1e3:6.1f} ms", "", f"at {values}")


if __name__ == "__main__":
    main()
