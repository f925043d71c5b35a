"""Figures shared by the notebooks and widgets (matplotlib only).

Every function draws on an ``Axes`` it is given (or a new one) and returns it, so a
widget can redraw into the same figure and a test can inspect what was drawn.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .i18n.messages import _


def annotated_heatmap(matrix, ax=None, *, title: str = "", row_labels=None, col_labels=None,
                      cmap: str = "viridis", fmt: str = "{:.2f}", vmin=None, vmax=None, show_shape: bool = True):
    """Draw a 2-D array as a heatmap with every value written in its cell and the shape in the title.

    ``-inf`` cells (masked scores) are drawn grey and labelled ``-inf``.

    Parameters
    ----------
    matrix : array_like, shape ``(R, C)``
    ax : matplotlib Axes, optional
    title : str
        Shown with `` (R x C)`` appended when ``show_shape``.
    row_labels, col_labels : sequence of str, optional
        Token names for the rows (queries) and columns (keys).

    Returns
    -------
    matplotlib Axes
    """
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(_("matrix must be 2-D (R, C); got shape {shape}").format(shape=matrix.shape))
    ax = ax if ax is not None else plt.subplots(figsize=(1 + 0.6 * matrix.shape[1], 1 + 0.5 * matrix.shape[0]))[1]
    finite = np.where(np.isfinite(matrix), matrix, np.nan)
    colours = plt.get_cmap(cmap).with_extremes(bad="lightgrey")
    image = ax.imshow(np.ma.masked_invalid(finite), cmap=colours, vmin=vmin, vmax=vmax, aspect="auto")
    for (row, col), value in np.ndenumerate(matrix):
        text = "-inf" if np.isneginf(value) else fmt.format(value)
        ax.text(col, row, text, ha="center", va="center", fontsize=8, color=_text_colour(image, value))
    shape = f" ({matrix.shape[0]} x {matrix.shape[1]})" if show_shape else ""
    ax.set_title(f"{title}{shape}", fontsize=10)
    _label_axis(ax.set_yticks, ax.set_yticklabels, row_labels, matrix.shape[0])
    _label_axis(ax.set_xticks, ax.set_xticklabels, col_labels, matrix.shape[1])
    return ax


def _label_axis(set_ticks, set_labels, labels, count: int) -> None:
    set_ticks(range(count))
    set_labels(labels if labels is not None else [str(i) for i in range(count)], fontsize=8)


def _text_colour(image, value: float) -> str:
    """Black text on light cells, white on dark ones."""
    if not np.isfinite(value):
        return "black"
    red, green, blue, unused_alpha = image.cmap(image.norm(value))
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
