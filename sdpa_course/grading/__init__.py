"""Grading helpers for the nbgrader exercises: they grade the student's code, and teach.

A grade cell typically reads::

    from sdpa_course.grading.exercises import task

    softmax_task = task("ch05", "softmax")          # the reference, case generator, catalogue, rules
    softmax_task.check(softmax, [((x,), {})])        # visible: hand-written (args, kwargs) cases
    ### BEGIN HIDDEN TESTS
    softmax_task.check_random(softmax)               # hidden: cases drawn when grading runs
    ### END HIDDEN TESTS

On a failure the GradingError names the case and what differs: the catalogued mistake it
matches, or the kind of difference computed from the two outputs, or, for a Python error,
the student's line and its likely cause.  A failed random case is shrunk to the smallest
that fails the same way and ends with the line that replays it (:func:`sdpa_course.replay`).
"""
from .checks import expect_close, expect_rows_sum_to_one, expect_shape
from .errors import ForbiddenCallError, GradingError
from .forbid import unavailable
from .integrity import check_environment
from .mistakes import Mistake, diagnose
from .randomness import grading_rng, random_attention_inputs
from .remote import source_of

__all__ = [
    "ForbiddenCallError", "GradingError", "Mistake", "check_environment", "diagnose", "expect_close",
    "expect_rows_sum_to_one", "expect_shape", "grading_rng", "random_attention_inputs", "source_of", "unavailable",
]
