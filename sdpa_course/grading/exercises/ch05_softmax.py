"""Chapter 5: a stable softmax, its Jacobian and its backward pass."""
from __future__ import annotations

import numpy as np

import sdpa_lib
from ..catalogue.softmax import BACKWARD_MISTAKES, JACOBIAN_MISTAKES, SOFTMAX_MISTAKES
from ..draw import Draw
from ..task import Task

FLOATS = (np.float64, np.float32)


def softmax_case(d: Draw):
    """Scores of 1 to 4 axes, some -inf, sometimes a whole slice -inf, at scales up to 1000; any axis."""
    ndim = d.size(1, 4)
    shape = tuple(d.size(1, 7) for _ in range(ndim))
    x = d.normal(shape, scale=d.choice([1.0, 30.0, 1000.0]))
    x[d.rng.random(shape) < 0.2] = -np.inf
    axis = int(d.rng.integers(-ndim, ndim))
    if d.chance(0.3):  # one slice along `axis` entirely -inf: a query whose keys are all masked
        np.moveaxis(x, axis, -1)[(0,) * (ndim - 1)] = -np.inf
    return (x.astype(d.choice(FLOATS)),), {"axis": axis}


def probabilities(d: Draw, shape: tuple) -> np.ndarray:
    """Rows of probabilities of ``shape``, from flat (scale 0.5) to nearly one-hot (scale 50)."""
    return sdpa_lib.softmax(d.normal(shape, scale=d.choice([0.5, 3.0, 50.0])))


def jacobian_case(d: Draw):
    shape = tuple(d.size(1, 6) for _ in range(d.size(1, 3)))
    return (probabilities(d, shape).astype(d.choice(FLOATS)),), {}


def backward_case(d: Draw):
    shape = tuple(d.size(1, 6) for _ in range(d.size(1, 3)))
    dtype = d.choice(FLOATS)
    return (probabilities(d, shape).astype(dtype), d.normal(shape, dtype=dtype)), {}


TASKS = (
    Task("ch05_softmax", "softmax", sdpa_lib.softmax, softmax_case, SOFTMAX_MISTAKES,
         forbidden=("softmax", "log_softmax", "logsumexp"), keep_dtype=True, quiet=True, count=120),
    Task("ch05_softmax", "softmax_jacobian", sdpa_lib.softmax_jacobian, jacobian_case, JACOBIAN_MISTAKES,
         forbidden=("softmax_jacobian", "softmax_backward"), count=80),
    Task("ch05_softmax", "softmax_backward", sdpa_lib.softmax_backward, backward_case, BACKWARD_MISTAKES,
         forbidden=("softmax_backward", "softmax_jacobian"), count=80),
)
