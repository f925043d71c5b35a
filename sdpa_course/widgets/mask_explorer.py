"""Mask explorer (chapter 8): padding versus causal versus both, on a batch of two sequences.

``mask_explorer_state`` builds the boolean mask (True = may attend) and the attention
weights it produces (pure, unit-tested); ``draw_mask_explorer`` draws them;
``mask_explorer`` wires the controls.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.attention import attention_weights
from sdpa_lib.masks import causal_mask, combine_masks, padding_mask
from ..i18n.messages import _, N_
from ._base import FigureView, Heatmap, show_explorer, view_of

MASK_KINDS = (N_("none"), N_("padding"), N_("causal"), N_("padding+causal"))  # the values; _(kind) their labels
PADDING_SIDES = ("right", "left")
SIDE_LABELS = {"right": N_("right padding"), "left": N_("left padding")}  # a bare "right" would read as "correct"


def key_padding_mask(lengths, S: int, side: str = "right") -> np.ndarray:
    """Key-padding mask ``(B, 1, S)`` with the real tokens at the start (right padding) or end (left).

    Left padding is what batched generation uses, so that every sequence ends at the
    last column; it is :func:`~sdpa_lib.masks.padding_mask` mirrored along the keys.

    Examples
    --------
    >>> key_padding_mask([2], 4, "left").astype(int)
    array([[[0, 0, 1, 1]]])
    """
    if side not in PADDING_SIDES:
        raise ValueError(f"side must be one of {PADDING_SIDES}; got {side!r}")
    mask = padding_mask(lengths, S)  # (B, 1, S)
    return mask[..., ::-1] if side == "left" else mask


def mask_explorer_state(kind: str = "padding", lengths=(5, 3), L: int = 5, S: int = 5, *,
                        side: str = "right", seed: int = 0) -> dict:
    """The mask of ``kind`` for a batch of ``len(lengths)`` sequences and the weights it gives.

    Parameters
    ----------
    kind : one of ``MASK_KINDS``
        ``"padding"`` hides padded keys, ``"causal"`` hides future keys (lower triangle,
        top-left aligned), ``"padding+causal"`` hides both, ``"none"`` hides nothing.
    lengths : sequence of int in ``[0, S]``
        Real (unpadded) keys per sequence.
    L, S : int
        Query and key lengths.
    side : ``"right"`` or ``"left"``
        Where the padding sits.
    seed : int
        Seeds the random queries and keys ``(B, L, 4)``, ``(B, S, 4)``.

    Returns
    -------
    dict
        ``mask`` (B, L, S) bool, ``weights`` (B, L, S) (masked entries exactly 0),
        ``fully_masked`` (B, L) bool: rows with no key left, whose weights and output are
        all zero, ``attended`` (B, L) number of keys each row may see.

    Examples
    --------
    >>> s = mask_explorer_state("padding+causal", lengths=(2,), L=3, S=3, side="left")
    >>> s["fully_masked"].astype(int)
    array([[1, 0, 0]])
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}; got {kind!r}")
    lengths = np.asarray(lengths, dtype=int)
    B = lengths.size
    rng = np.random.default_rng(seed)
    query, key = rng.normal(size=(B, L, 4)), rng.normal(size=(B, S, 4))  # (B, L, E), (B, S, E)
    parts = {"none": [], "padding": [key_padding_mask(lengths, S, side)], "causal": [causal_mask(L, S)]}
    parts["padding+causal"] = parts["padding"] + parts["causal"]
    pieces = parts[kind] or [np.ones((L, S), dtype=bool)]
    mask = np.broadcast_to(combine_masks(*pieces), (B, L, S))  # (B, L, S)
    weights = attention_weights(query, key, mask)  # (B, L, S)
    attended = mask.sum(axis=-1)  # (B, L)
    return {"kind": kind, "lengths": lengths, "side": side, "mask": mask, "weights": weights,
            "attended": attended, "fully_masked": attended == 0}


MAX_LENGTH = 8  # the explorer's sliders stop at L = S = 8: the figure is built once for that size


class _MaskView(FigureView):
    """Two sequences' mask and weight panels, built once for up to ``MAX_LENGTH`` x ``MAX_LENGTH`` cells.

    The mask panels are coloured, not numbered (green = 1, may attend); the weights carry
    their values, greyed where masked (the weight there is exactly 0), and each fully
    masked row a red note on the right.
    """

    def __init__(self, figure, key, size: int):
        axes = figure.subplots(2, 2, sharex=True, sharey=True)
        for ax in axes[0]:
            ax.tick_params(labelbottom=True)  # keys under the masks too; queries only on the left
        self.masks = [Heatmap(axes[0, b], size, size, cmap="Greens", vmin=0, vmax=1, annotate=False) for b in range(2)]
        self.weights = [Heatmap(axes[1, b], size, size, vmin=0, vmax=1) for b in range(2)]
        self.notes = [[axes[1, b].text(0, i, "", color="red", fontsize=7, va="center") for i in range(size)]
                      for b in range(2)]
        self.title = figure.suptitle("", fontsize=10)
        figure.subplots_adjust(left=0.08, right=0.85, bottom=0.06, top=0.9, hspace=0.3, wspace=0.5)
        # Ticks and limits follow L and S only (the background key); values, titles and notes every change,
        # one sequence's column at a time: moving one length redraws only that sequence's panels.
        columns = [[*self.masks[b].artists, self.masks[b].ax.title, *self.weights[b].artists, *self.notes[b]]
                   for b in range(2)]
        split = axes[0, 1].get_position().x0 - 0.01  # left of column 1's tick marks, right of column 0's notes
        self.parts = ((0, 0, split, 0.95), (split, 0, 1, 0.95), (0, 0.95, 1, 1))
        self.part_artists = (*columns, [self.title])
        self.dynamic = [artist for part in self.part_artists for artist in part]

    def update(self, state: dict) -> None:
        B, L, S = state["mask"].shape
        self.background_key = (L, S)
        rows, keys = [f"q{i}" for i in range(L)], [f"k{j}" for j in range(S)]
        for b in range(B):
            self.masks[b].update(state["mask"][b].astype(float), row_labels=rows, col_labels=keys,
                                 title=_("seq {sequence} (length {length}): mask, green = 1").format(
                                     sequence=b, length=state["lengths"][b]))
            self.weights[b].update(state["weights"][b], title=_("weights, grey = masked (exactly 0)"), row_labels=rows,
                                   col_labels=keys, blank=~state["mask"][b])
            for i, note in enumerate(self.notes[b]):
                note.set_visible(i < L and bool(state["fully_masked"][b, i]))
                note.set_text(" " + _("fully masked: zeros"))
                note.set_x(S - 0.4)
        self.title.set_text(_("{kind} mask, {side}: True = may attend").format(kind=_(state["kind"]),
                                                                                side=_(SIDE_LABELS[state["side"]])))
        self.signatures = (*((state["mask"][b].tobytes(), state["weights"][b].tobytes(), int(state["lengths"][b]))
                             for b in range(B)), self.title.get_text())


def draw_mask_explorer(kind: str = "padding", length_a: int = 5, length_b: int = 3, L: int = 5, S: int = 5,
                       side: str = "right", *, figure=None):
    """For each of two sequences: its mask (green = 1 = may attend) above its attention weights.

    Masked weights are grey (they are exactly 0); fully masked rows are marked in red on the right.  ``figure``: None draws a new pyplot
    figure; a figure this function drew before is updated in place (L and S up to
    ``MAX_LENGTH`` share one layout).  Returns the matplotlib Figure.
    """
    state = mask_explorer_state(kind, (min(length_a, S), min(length_b, S)), L, S, side=side)
    size = max(MAX_LENGTH, L, S)
    view = view_of(figure, _MaskView, size, (2.4 + 0.65 * size, 2 + 0.65 * size), size)
    view.update(state)
    return view.figure


def mask_explorer():
    """Dropdowns and sliders for kind, lengths, L, S and padding side (a static figure headless)."""
    import ipywidgets as widgets

    def slider(name, value, description):
        return widgets.IntSlider(value=value, min=0 if "length" in name else 1, max=MAX_LENGTH,
                                 description=description, continuous_update=False)

    controls = {"kind": widgets.Dropdown(options=[(_(kind), kind) for kind in MASK_KINDS], value="padding+causal",
                                         description=_("kind")),
                "length_a": slider("length_a", 5, _("length_a")), "length_b": slider("length_b", 3, _("length_b")),
                "L": slider("L", 5, "L"), "S": slider("S", 5, "S"),
                "side": widgets.ToggleButtons(options=[(_(SIDE_LABELS[side]), side) for side in PADDING_SIDES],
                                              description=_("padding"))}
    return show_explorer(controls, draw_mask_explorer)
