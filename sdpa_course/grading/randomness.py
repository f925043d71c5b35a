"""Random test cases drawn when grading runs, immune to the student's own seeding."""
from __future__ import annotations

import numpy as np


def grading_rng(seed: int | None = None) -> np.random.Generator:
    """A generator seeded from the OS (not from ``np.random.seed``), so cases can't be hard-coded.

    Pass ``seed`` only to reproduce a failure.
    """
    return np.random.default_rng(seed)


def random_attention_inputs(rng: np.random.Generator, *, batch=(), L=None, S=None, E=None, Ev=None,
                            dtype=np.float64, scale: float = 1.0):
    """Random ``query (..., L, E)``, ``key (..., S, E)``, ``value (..., S, Ev)``; unset sizes drawn in 1..9.

    Sizes are drawn distinct where possible so a transposed axis can't pass by accident.
    """
    sizes = dict(L=L, S=S, E=E, Ev=Ev)
    taken = {v for v in sizes.values() if v is not None}
    for name, value in sizes.items():
        if value is None:
            choices = [n for n in range(1, 10) if n not in taken] or list(range(1, 10))
            sizes[name] = int(rng.choice(choices))
            taken.add(sizes[name])
    batch = tuple(batch)
    shapes = [(*batch, sizes["L"], sizes["E"]), (*batch, sizes["S"], sizes["E"]), (*batch, sizes["S"], sizes["Ev"])]
    return tuple((rng.normal(size=shape) * scale).astype(dtype) for shape in shapes)
