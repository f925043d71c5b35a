"""Chapter 1: every shape of the self-attention pipeline, the pipeline itself, and who attends to whom."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ...i18n.messages import _
from ..catalogue.projections import PIPELINE_SHAPE_HINTS
from ..catalogue.scaling import ARGMAX_MISTAKES, SELF_ATTENTION_MISTAKES
from ..draw import FULL, Draw
from ..task import Task

FLOATS = (np.float64, np.float32)
DISTINGUISHING = (6, 10, 4, 3)  # L, D, E, Ev: D is neither E nor E**2, so each scaling mistake gives its own output


def traced_shapes(batch, L, D, E, Ev) -> dict[str, tuple]:
    """The shape of every intermediate, read off the real pipeline (sdpa_lib) run on zeros.

    The pipeline runs at stand-in lengths, a different small one for each length given, and
    each traced length is mapped back to the one it stands for: so lengths no array could
    have (2**32, say) trace too.
    """
    lengths = (*tuple(batch), L, D, E, Ev)
    stand_in = tuple(range(2, 2 + len(lengths)))  # all different: a traced length says which one it stands for
    *b, l, d, e, ev = stand_in
    arrays = {"X": np.zeros((*b, l, d)), "W_Q": np.zeros((d, e)), "W_K": np.zeros((d, e)), "W_V": np.zeros((d, ev))}
    arrays["Q"], arrays["K"], arrays["V"] = sdpa_lib.project_qkv(arrays["X"], arrays["W_Q"], arrays["W_K"], arrays["W_V"])
    arrays["scores"] = sdpa_lib.scaled_scores(arrays["Q"], arrays["K"])  # (..., L, E) @ (..., E, L) -> (..., L, L)
    arrays["weights"] = sdpa_lib.softmax(arrays["scores"])
    arrays["output"] = arrays["weights"] @ arrays["V"]  # (..., L, L) @ (..., L, Ev) -> (..., L, Ev)
    real = dict(zip(stand_in, lengths))
    return {name: tuple(real[n] for n in array.shape) for name, array in arrays.items()}


def shapes_problem(batch, L, D, E, Ev, predicted) -> str | None:
    """What is wrong with the predicted shapes (the right keys, then each shape against the traced one), or None."""
    if not isinstance(predicted, dict) or set(predicted) != set(PIPELINE_SHAPE_HINTS):
        return _("return a dict with exactly the keys {keys}; got {predicted!r}").format(
            keys=sorted(PIPELINE_SHAPE_HINTS), predicted=predicted)
    sizes = f"batch={tuple(batch)}, L={L}, D={D}, E={E}, Ev={Ev}"  # a formula, the same in every language
    for name, answer in traced_shapes(batch, L, D, E, Ev).items():
        try:
            yours = tuple(predicted[name])
        except TypeError:
            return _("for {sizes} you give {name} = {given!r}: a shape is a tuple of ints").format(
                sizes=sizes, name=name, given=predicted[name])
        if yours != answer:
            return _("for {sizes} you predict {name} has shape {yours}, it has shape {answer}: {hint}").format(
                sizes=sizes, name=name, yours=yours, answer=answer, hint=_(PIPELINE_SHAPE_HINTS[name]))
    return None


def shapes_case(d: Draw):
    """Up to two batch axes of length 1..4; L, D, E, Ev different, in 1..39."""
    return (d.batch(max_axes=2, high=4), *d.sizes(4, 1, 39)), {}


def reference_self_attention(x, w_q, w_k, w_v):
    return sdpa_lib.scaled_dot_product_attention(*sdpa_lib.project_qkv(x, w_q, w_k, w_v))


def self_attention_case(d: Draw):
    """Tokens with up to two batch axes, float64 or float32; L, D, E, Ev different in 1..11 (L = 1 included).

    One case in 13 (at the full size) has the sizes that tell the catalogued scaling mistakes apart.
    One in four has float64 tokens 30 times larger, scores in the thousands: there a softmax that
    does not subtract the row maximum (the notebook asks for it) overflows.  (Not in float32, where
    the rounding of such scores alone moves the weights by more than the tolerance.)
    """
    large = d.chance(0.25)
    dtype = np.float64 if large else d.choice(FLOATS)
    batch = d.batch(max_axes=2, high=3)
    L, D, E, Ev = DISTINGUISHING if d.chance(1 / 13) and d.level == FULL else d.sizes(4, 1, 11)
    x = d.normal((*batch, L, D), scale=30.0 if large else 1.0, dtype=dtype)
    return (x, *(d.normal((D, n), dtype=dtype) for n in (E, E, Ev))), {}


def reference_most_attended(x, w_q, w_k):
    return np.argmax(sdpa_lib.attention_weights(x @ w_q, x @ w_k), axis=-1)


def most_attended_case(d: Draw):
    """Tokens with up to two batch axes; L, D, E different in 2..11."""
    batch = d.batch(max_axes=2, high=3)
    L, D, E = d.sizes(3, 2, 11)
    return (d.normal((*batch, L, D)), d.normal((D, E)), d.normal((D, E))), {}


TASKS = (
    Task("ch01_visual_demo", "pipeline_shapes", traced_shapes, shapes_case, verdict=shapes_problem, count=25),
    Task("ch01_visual_demo", "self_attention", reference_self_attention, self_attention_case, SELF_ATTENTION_MISTAKES,
         forbidden=("scaled_dot_product_attention", "attention_weights", "softmax", "log_softmax", "logsumexp"),
         count=26),
    Task("ch01_visual_demo", "most_attended", reference_most_attended, most_attended_case, ARGMAX_MISTAKES,
         forbidden=("scaled_dot_product_attention", "attention_weights"), count=20),
)
