"""Interactive explorers for the lecture notebooks.

Each explorer is split in three: a pure ``*_state`` function (numbers only, unit-tested),
a ``draw_*`` function that renders a state onto a figure, and a ``*_explorer`` function
that wires ipywidgets controls to them with :func:`show_explorer`.
"""
from ._base import is_headless, show_explorer

__all__ = ["is_headless", "show_explorer"]
