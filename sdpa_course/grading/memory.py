"""Check that a function never holds the (L, S) score matrix: its peak allocation, measured with tracemalloc."""
from __future__ import annotations

import copy
import math
from typing import Callable, Iterable

import numpy as np

from ..profiling import traced_peak
from ..i18n.messages import _
from .errors import GradingError
from .forbid import unavailable
from .remote import RemoteFunction


def peak_allocation(function: Callable, args: tuple, *, forbidden: Iterable[str] = ()) -> tuple[object, int]:
    """``function(*args)`` (on copies of the inputs) and the peak bytes it allocated meanwhile, numpy arrays included."""
    args = copy.deepcopy(args)
    if isinstance(function, RemoteFunction):  # measured in the student's kernel
        result = function.call(args, {}, measure_memory=True)
        return result, function.last_peak_bytes or 0
    with unavailable(forbidden, function):
        return traced_peak(function, *args)


def expect_no_score_matrix(student: Callable, query, key, value, *extra, forbidden: Iterable[str] = ()) -> int:
    """Fail if ``student(query, key, value, *extra)`` allocates half an ``(..., L, S)`` matrix or more; return its peak.

    Call it with a large ``L`` and ``S`` and small ``E``, ``Ev``, so that the inputs and
    the output are small next to the score matrix.
    """
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    L, S = query.shape[-2], key.shape[-2]
    matrix = math.prod(batch) * L * S * np.result_type(query, key).itemsize
    _result, peak = peak_allocation(student, (query, key, value, *extra), forbidden=forbidden)
    if peak >= matrix // 2:
        raise GradingError(_(
            "your {function} allocated {peak_mib:.1f} MiB at its peak on query {query_shape}, key {key_shape}: that is "
            "at least half the {matrix_mib:.1f} MiB of the (L, S) = ({L}, {S}) score matrix, so it (or a copy the size "
            "of it) was built. Work on one block of keys (or one query) at a time, keeping only small running "
            "quantities per query.").format(function=student.__name__, peak_mib=peak / 2**20, query_shape=query.shape,
                                             key_shape=key.shape, matrix_mib=matrix / 2**20, L=L, S=S))
    return peak
