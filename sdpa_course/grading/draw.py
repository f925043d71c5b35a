"""Random test cases that come in sizes, so a failure can be shown on the smallest input that still fails.

A task's case generator (see :mod:`~sdpa_course.grading.tasks`) draws every size, axis and
value through a :class:`Draw`.  At the full level it draws what the hidden tests always
drew; at lower levels the same generator gives fewer axes, shorter ones and values with
one decimal, the way hypothesis shrinks towards simple examples.  A case is named by
its seed and level alone, so one line replays it anywhere (:func:`sdpa_course.replay`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..i18n.messages import _

FULL = 4  # the level the hidden tests draw at; 0 is the smallest
LEVELS = range(FULL + 1)


class Draw:
    """A generator of case parts at a size ``level`` (0 = smallest, :data:`FULL` = what grading draws).

    Below the full level, lengths drawn with :meth:`size` are capped at ``low + 1 + level``;
    :meth:`batch` gives no batch axis below level 2 and at most one below the full level;
    :meth:`normal` rounds values to one decimal, so a small failing case prints readably.
    """

    def __init__(self, seed: int, level: int = FULL):
        if level not in LEVELS:
            raise ValueError(_("level must be one of {levels}; got {level!r}").format(levels=list(LEVELS), level=level))
        self.seed, self.level = int(seed), int(level)
        self.rng = np.random.default_rng(self.seed)

    def _top(self, low: int, high: int) -> int:
        return high if self.level == FULL else min(high, low + 1 + self.level)

    def size(self, low: int = 1, high: int = 9) -> int:
        """An integer in ``low..high`` (inclusive), capped by the level."""
        return int(self.rng.integers(low, self._top(low, high) + 1))

    def sizes(self, count: int, low: int = 1, high: int = 9) -> tuple[int, ...]:
        """``count`` sizes in ``low..high``, distinct while the cap allows, so a transposed axis cannot pass."""
        pool = list(range(low, self._top(low, high) + 1))
        chosen: list[int] = []
        for _draw in range(count):
            free = [n for n in pool if n not in chosen] or pool
            chosen.append(int(self.rng.choice(free)))
        return tuple(chosen)

    def batch(self, max_axes: int = 2, high: int = 3) -> tuple[int, ...]:
        """Leading batch axes: up to ``max_axes`` of them (fewer at low levels), each of length 1..``high``."""
        allowed = min(max_axes, 0 if self.level < 2 else 1 if self.level < FULL else max_axes)
        return tuple(self.size(1, high) for _ in range(int(self.rng.integers(0, allowed + 1))))

    def choice(self, options: Sequence):
        """One of ``options``, uniformly (a Python value, not a numpy scalar, when the option is one)."""
        return options[int(self.rng.integers(len(options)))]

    def chance(self, probability: float) -> bool:
        return bool(self.rng.random() < probability)

    def normal(self, shape, *, scale: float = 1.0, dtype=np.float64) -> np.ndarray:
        """Normal values of ``shape`` times ``scale``, in ``dtype``; one decimal below the full level."""
        values = self.rng.normal(size=shape)
        if self.level < FULL:
            values = np.round(values, 1)
        return (values * scale).astype(dtype)

    def attention_inputs(self, *, batch: tuple | None = None, dtype=np.float64, scale: float = 1.0,
                         **fixed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``query (..., L, E)``, ``key (..., S, E)``, ``value (..., S, Ev)``; sizes not in ``fixed`` drawn distinct."""
        batch = self.batch() if batch is None else tuple(batch)
        free = [name for name in ("L", "S", "E", "Ev") if name not in fixed]
        sizes = {**dict(zip(free, self.sizes(len(free)))), **fixed}
        L, S, E, Ev = (sizes[name] for name in ("L", "S", "E", "Ev"))
        return (self.normal((*batch, L, E), scale=scale, dtype=dtype), self.normal((*batch, S, E), scale=scale, dtype=dtype),
                self.normal((*batch, S, Ev), scale=scale, dtype=dtype))


def case_seeds(rng: np.random.Generator, count: int) -> list[int]:
    """``count`` seeds for cases, drawn from ``rng`` (the grading generator), short enough to quote."""
    return [int(seed) for seed in rng.integers(0, 2**32, size=count)]
