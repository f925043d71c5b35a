"""Grade one function at a time: while it runs, the student's helper functions are replaced by correct ones."""
from __future__ import annotations

import contextlib
import functools
from typing import Callable

from .remote import RemoteFunction


@contextlib.contextmanager
def correct_helpers(student: Callable, **helpers: Callable):
    """Within the block, each name in ``helpers`` refers, in the student's namespace, to the given function.

    A mistake in ``split_heads`` then costs points in its own test only, not again in the
    test of ``multi_head_attention`` that calls it.  The helpers are wrapped in
    ``functools.partial`` so that :func:`~sdpa_course.grading.unavailable` (which disables
    every name bound to a forbidden original) leaves them working.

    Examples
    --------
    >>> import sdpa_lib
    >>> def mine(x):
    ...     return helper(x)
    >>> with correct_helpers(mine, helper=sdpa_lib.softmax):
    ...     mine([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """
    if isinstance(student, RemoteFunction):  # the kernel asks the grader for each helper's result
        student.helpers = dict(helpers)
        try:
            yield
        finally:
            student.helpers = {}
        return
    namespace = student.__globals__
    saved = {name: namespace[name] for name in helpers if name in namespace}
    namespace.update({name: functools.partial(function) for name, function in helpers.items()})
    try:
        yield
    finally:
        for name in helpers:
            namespace.pop(name, None)
        namespace.update(saved)
