"""Buggy submissions, as data: each module ``buggy/<assignment>.py`` defines ``BUGS``.

A :class:`Bug` is a catalogued mistake written the way a student would write it: the
whole source of one solution cell, the grade cell that must lose points for it, and a
piece of text that must appear in that grade cell's feedback (usually the mistake's
name from ``sdpa_course.grading.catalogue``).  ``tests/test_exercises.py`` builds each
submission from the solution notebook by replacing that cell, autogrades it with
nbgrader and checks both.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import NamedTuple


class Bug(NamedTuple):
    id: str  # short, unique within the assignment; becomes part of the nbgrader student id
    function_or_cell: str  # grade_id of the solution cell whose source is replaced
    source: str  # the whole wrong cell source
    test_cell: str  # grade_id of the grade cell that must score less than its points
    hint: str  # text that must appear in that grade cell's output (error or printed feedback)


def bugs_for(assignment: str) -> list[Bug]:
    """The BUGS of ``buggy/<assignment>.py``, or [] when there is no such module."""
    name = f"{__name__}.{assignment}"
    if importlib.util.find_spec(name) is None:
        return []
    return list(importlib.import_module(name).BUGS)
