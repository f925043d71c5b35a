"""The plumbing every explorer shares: controls + output area, or a static figure headless.

A redraw must feel instant (issue 7: under 100 ms), and matplotlib spends nearly all of a
redraw building artists, laying out text and encoding the PNG.  So an explorer builds each
figure once (a :class:`FigureView` keeps its artists), a slider move only updates those
artists in place (``set_data``, ``set_height``, ``set_text``), and :class:`CachedRedraw`
renders the parts that never change (axes, ticks, fixed curves, legends) once, then per
redraw pastes that background and draws only the artists the view lists as ``dynamic``.
"""
from __future__ import annotations

import io
import os
from collections import OrderedDict
from typing import Callable, Hashable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

HEADLESS_ENV = "SDPA_HEADLESS"
BACKGROUNDS_KEPT = 16  # static parts kept per figure: the mask explorer's (L, S) pairs, 2.2 MB each
PNG_COMPRESS_LEVEL = 1  # zlib level: 1 encodes a 1500 x 340 figure in 13 ms, the default (6) in 19 ms, for +1% bytes


def is_headless() -> bool:
    """True when no front end will render widgets (tests, nbconvert): ``SDPA_HEADLESS=1``."""
    return os.environ.get(HEADLESS_ENV, "") not in ("", "0")


class FigureView:
    """The artists of one explorer figure, built once and updated in place by :meth:`update`.

    A subclass builds its axes and artists in ``__init__`` (from the figure it is given) and
    lists in ``dynamic`` the artists :meth:`update` may change: whole ``Axes`` when their
    limits or ticks move, single artists (bars, lines, texts) otherwise; or else sets
    ``background_key`` to what the static part shows, so that a change of it re-renders that
    part once.  ``key`` names the layout: a figure is rebuilt only when the key a draw call
    asks for differs.
    """
    key: Hashable = None
    background_key: Hashable = None  # what the static part shows: a change re-renders it once
    dynamic: list
    # Optionally, regions of the figure redrawn only when their signature changes: ``parts`` are
    # (x0, y0, x1, y1) figure fractions that hold all of ``part_artists`` (lists of dynamic
    # artists, together all of them), and ``update`` sets ``signatures``, one per part.
    parts: tuple = ()
    part_artists: tuple = ()
    signatures: tuple = ()

    def update(self, state) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def view_of(figure, view_type: type, key: Hashable, figsize, *args):
    """The ``view_type`` view of ``figure`` for layout ``key``: the one it holds, or a new one.

    ``figure=None`` makes a new pyplot figure (what a notebook cell calling ``draw_*`` wants:
    ``plt.show()`` displays it).  A figure holding a view of another type or key is cleared
    and rebuilt at ``figsize``.
    """
    if figure is None:
        figure = plt.figure(figsize=figsize)
    view = getattr(figure, "_sdpa_view", None)
    if not isinstance(view, view_type) or view.key != key:
        figure.clear()
        figure.set_size_inches(figsize)
        view = view_type(figure, key, *args)
        view.key, view.figure = key, figure
        figure._sdpa_view = view
    return view


class CachedRedraw:
    """``draw(**values, figure=...)`` into a cached figure per layout, rendered to PNG bytes.

    This is the whole of an explorer's redraw, what the learner waits for after moving a
    slider (apart from sending the bytes to the browser), and what ``bench_widgets`` times.
    ``figure_key(values)`` picks the cached figure (one per pipeline step, say).  The first
    render of a figure (and of each ``background_key`` its view shows) draws everything
    except the view's ``dynamic`` artists and keeps the pixels (the last ``BACKGROUNDS_KEPT``
    keys' of each figure); every render pastes them back and draws the dynamic artists on top.  The PNG has
    the inline backend's settings (``figure.dpi``, white background); its bounding box is the
    figure's own, since every view lays its figure out with fixed margins.
    """

    def __init__(self, draw: Callable[..., Figure], figure_key: Callable[[dict], Hashable] = lambda values: None):
        self.draw, self.figure_key = draw, figure_key
        self.figures: dict = {}
        self._backgrounds: dict = {}  # id(figure) -> (view, {background_key: the static part's pixels})
        self._drawn: dict = {}  # id(figure) -> (view, background_key, signatures) of its last render

    def figure(self, **values) -> Figure:
        """Draw ``values`` into their cached figure (made here, outside pyplot, on first use) and return it."""
        key = self.figure_key(values)
        figure = self.figures.get(key)
        if figure is None:
            figure = self.figures[key] = Figure()
            FigureCanvasAgg(figure)
        return self.draw(**values, figure=figure)

    def png(self, **values) -> bytes:
        """The PNG bytes of the figure for ``values``."""
        figure = self.figure(**values)
        view, canvas = figure._sdpa_view, figure.canvas
        cached = self._backgrounds.get(id(figure))
        if cached is None or cached[0] is not view:  # a new or rebuilt figure
            cached = self._backgrounds[id(figure)] = (view, OrderedDict())
        backgrounds = cached[1]
        drawn, self._drawn[id(figure)] = self._drawn.get(id(figure)), (view, view.background_key, view.signatures)
        if view.background_key not in backgrounds:  # render the static part once
            for artist in view.dynamic:
                artist.set_animated(True)
            canvas.draw()
            backgrounds[view.background_key] = np.asarray(canvas.buffer_rgba()).copy()  # (H, W, 4), rows from the top
            while len(backgrounds) > BACKGROUNDS_KEPT:
                backgrounds.popitem(last=False)  # the least recently shown
        elif drawn is not None and drawn[:2] == (view, view.background_key) and view.parts:
            self._redraw_changed_parts(view, backgrounds[view.background_key], drawn[2])
            return encode_png(np.asarray(canvas.buffer_rgba()))
        else:
            backgrounds.move_to_end(view.background_key)
            np.asarray(canvas.buffer_rgba())[...] = backgrounds[view.background_key]
        for artist in view.dynamic:
            figure.draw_artist(artist)
        return encode_png(np.asarray(canvas.buffer_rgba()))

    @staticmethod
    def _redraw_changed_parts(view, background: np.ndarray, drawn_signatures) -> None:
        """Paste the background over each part whose signature changed since the last render, and redraw it."""
        pixels = np.asarray(view.figure.canvas.buffer_rgba())  # (H, W, 4), the last render's
        height, width = pixels.shape[:2]
        for (x0, y0, x1, y1), artists, signature, drawn in zip(view.parts, view.part_artists, view.signatures,
                                                                 drawn_signatures):
            if signature == drawn:
                continue
            rows = slice(int(height * (1 - y1)), int(np.ceil(height * (1 - y0))))
            cols = slice(int(width * x0), int(np.ceil(width * x1)))
            pixels[rows, cols] = background[rows, cols]
            for artist in artists:
                view.figure.draw_artist(artist)


def encode_png(rgba: np.ndarray) -> bytes:
    """``(H, W, 4)`` uint8 pixels as PNG bytes (RGB: the figures are opaque), compressed fast."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgba[..., :3]).save(buffer, format="png", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def show_explorer(controls: Mapping[str, "ipywidgets.Widget"], draw: Callable[..., Figure], *,
                  layout: str = "vertical", figure_key: Callable[[dict], Hashable] = lambda values: None,
                  warm: Sequence[Mapping] = ()):
    """Display ``controls`` wired to ``draw(**values, figure=...)``; headless, display one static figure instead.

    ``draw`` receives the controls' current values as keyword arguments, and ``figure``: None
    for a new pyplot figure, or a figure it drew before, to update in place; it returns the
    figure.  With a front end, each change redraws through a :class:`CachedRedraw` and shows
    the PNG in the output area.  ``warm``: values whose figures are built and rendered once
    right after the first one is shown (the other pipeline steps), so that no slider move
    has to build one.  Returns the widget box (or the static figure when headless) so a
    caller or a test can reach the controls.
    """
    if is_headless():
        figure = draw(**{name: control.value for name, control in controls.items()})
        plt.show()
        return figure
    import ipywidgets as widgets
    from IPython.display import Image, display

    redraw = CachedRedraw(draw, figure_key)
    output = widgets.interactive_output(lambda **values: display(Image(data=redraw.png(**values), format="png")),
                                        dict(controls))
    box_type = widgets.HBox if layout == "horizontal" else widgets.VBox
    box = widgets.VBox([box_type(list(controls.values())), output])
    box.redraw = redraw  # for tests and benchmarks: the figures behind the images
    display(box)
    for values in warm:
        redraw.png(**{**{name: control.value for name, control in controls.items()}, **values})
    return box


class Heatmap:
    """An annotated heatmap, as :func:`sdpa_course.plots.annotated_heatmap` draws it, that updates in place.

    Built once for at most ``max_rows x max_cols`` cells; :meth:`update` shows a matrix of
    any shape up to that (``set_data`` on the image, ``set_text`` on the cell labels, the
    rest hidden).  ``-inf`` cells are grey and labelled ``-inf``; the title carries the
    shape.  ``annotate=False`` leaves the cells unlabelled (their colour says it all), and
    ``update(..., blank=...)`` greys the cells it marks and leaves them unlabelled: each
    label costs about a millisecond per redraw.
    """

    def __init__(self, ax, max_rows: int, max_cols: int, *, cmap: str = "viridis", vmin=None, vmax=None,
                 fmt: str = "{:.2f}", annotate: bool = True):
        self.ax, self.fmt, self.autoscale = ax, fmt, vmin is None or vmax is None
        colours = plt.get_cmap(cmap).with_extremes(bad="lightgrey")
        self.image = ax.imshow(np.zeros((max_rows, max_cols)), cmap=colours, vmin=vmin, vmax=vmax, aspect="auto")
        self.texts = np.array([[ax.text(col, row, "", ha="center", va="center", fontsize=8)
                                for col in range(max_cols)] for row in range(max_rows)] if annotate else [[]], dtype=object)
        self.shape = None

    @property
    def artists(self) -> list:
        """The image, every cell label and the frame drawn over the image: what changes when the values do."""
        return [self.image, *self.texts.ravel(), *self.ax.spines.values()]

    def update(self, matrix, *, title: str = "", row_labels=None, col_labels=None, blank=None) -> None:
        matrix = np.asarray(matrix, dtype=float)
        rows, cols = matrix.shape
        shown = np.ones(matrix.shape, dtype=bool) if blank is None else ~np.asarray(blank, dtype=bool)  # (R, C)
        self.image.set_data(np.ma.masked_invalid(np.where(np.isfinite(matrix) & shown, matrix, np.nan)))
        if self.autoscale:
            self.image.autoscale()
        if (rows, cols) != self.shape:
            self.shape = (rows, cols)
            self.image.set_extent((-0.5, cols - 0.5, rows - 0.5, -0.5))
            self.ax.set(xlim=(-0.5, cols - 0.5), ylim=(rows - 0.5, -0.5))
            self.ax.set_yticks(range(rows), row_labels if row_labels is not None else map(str, range(rows)), fontsize=8)
            self.ax.set_xticks(range(cols), col_labels if col_labels is not None else map(str, range(cols)), fontsize=8)
        self.ax.set_title(f"{title} ({rows} x {cols})", fontsize=10)
        if self.texts.size:
            rgba = self.image.cmap(self.image.norm(matrix))  # (R, C, 4)
            light = rgba[..., :3] @ np.array([0.299, 0.587, 0.114]) > 0.5  # black text on light cells
            for (row, col), text in np.ndenumerate(self.texts):
                text.set_visible(row < rows and col < cols and shown[row, col])
                if text.get_visible():
                    value = matrix[row, col]
                    text.set_text("-inf" if np.isneginf(value) else self.fmt.format(value))
                    text.set_color("black" if light[row, col] or not np.isfinite(value) else "white")
