"""Case parts shared by the attention exercises of chapters 6 to 8: the special lengths and the scales they draw."""
from __future__ import annotations

import numpy as np

from ..draw import Draw

FLOATS = (np.float64, np.float32)


def special_lengths(d: Draw, *, one_query: float, square: float, high: int) -> dict[str, int]:
    """Lengths to fix: ``L = 1`` with probability ``one_query``, ``L = S`` (2..``high``) with ``square``, else none.

    A single query makes every mistake along the queries' axis visible in one row; with
    ``L = S`` a transposed weight matrix has the right shape and must be caught by its values.
    """
    u = d.rng.random()
    if u < one_query:
        return {"L": 1}
    if u < one_query + square:
        n = d.size(2, high)
        return {"L": n, "S": n}
    return {}


def attention_scale(d: Draw, dtype, scales: tuple[float, ...]) -> float:
    """One of ``scales`` for float64 inputs (30 or 40 give scores near 1000), 1 for float32, as the hidden tests drew.

    Scores near 1000 rounded to float32 move the weights by more than the float32 tolerance.
    """
    return float(d.choice(scales)) if dtype == np.float64 else 1.0
