"""The plumbing every explorer shares: controls + output area, or a static figure headless."""
from __future__ import annotations

import os
from typing import Callable, Mapping

import matplotlib.pyplot as plt

HEADLESS_ENV = "SDPA_HEADLESS"


def is_headless() -> bool:
    """True when no front end will render widgets (tests, nbconvert): ``SDPA_HEADLESS=1``."""
    return os.environ.get(HEADLESS_ENV, "") not in ("", "0")


def show_explorer(controls: Mapping[str, "ipywidgets.Widget"], draw: Callable[..., "plt.Figure"],
                  *, layout: str = "vertical"):
    """Display ``controls`` wired to ``draw(**values)``; headless, display one static figure instead.

    ``draw`` receives the controls' current values as keyword arguments and returns the
    figure it drew.  Returns the widget box (or the static figure when headless) so a
    caller or a test can reach the controls.
    """
    if is_headless():
        figure = draw(**{name: control.value for name, control in controls.items()})
        plt.show()
        return figure
    import ipywidgets as widgets
    from IPython.display import display

    def redraw(**values):
        draw(**values)
        plt.show()

    output = widgets.interactive_output(redraw, dict(controls))
    box_type = widgets.HBox if layout == "horizontal" else widgets.VBox
    box = widgets.VBox([box_type(list(controls.values())), output])
    display(box)
    return box
