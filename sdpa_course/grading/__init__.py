"""Grading helpers for the nbgrader exercises: they grade the student's code, and teach.

A grade cell typically reads::

    from sdpa_course.grading import check_against_reference, random_attention_inputs
    from sdpa_course.grading.catalogue import SOFTMAX_MISTAKES
    import sdpa_lib

    check_against_reference(
        softmax, sdpa_lib.softmax,                       # the student's function, the reference
        cases=[((x,), {}) for x in some_inputs],          # (args, kwargs) pairs
        forbidden=("softmax",),                           # sdpa_lib names unavailable meanwhile
        mistakes=SOFTMAX_MISTAKES,                        # named wrong answers with hints
    )

On a mismatch the AssertionError names the case, the shapes, the largest error and,
when the student's output equals a catalogued wrong answer, that mistake and its hint.
"""
from .checks import check_against_reference, expect_close, expect_rows_sum_to_one, expect_shape
from .errors import ForbiddenCallError, GradingError
from .forbid import unavailable
from .integrity import check_environment
from .mistakes import Mistake, diagnose
from .randomness import grading_rng, random_attention_inputs, seed_of
from .remote import source_of

__all__ = [
    "ForbiddenCallError", "GradingError", "Mistake", "check_against_reference", "check_environment", "diagnose", "expect_close",
    "expect_rows_sum_to_one", "expect_shape", "grading_rng", "random_attention_inputs", "seed_of", "source_of", "unavailable",
]
