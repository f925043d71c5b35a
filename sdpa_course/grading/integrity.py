"""Refuse to grade when the submission has replaced numpy or sdpa_lib functions the checks rely on."""
from __future__ import annotations

import importlib
import os
import sys
import types

import numpy as np

from ..i18n.messages import _
from .errors import GradingError

# The functions the graders call; a submission that swaps one (np.allclose = lambda *a, **k: True)
# could pass every check, so each must still come from the numpy / sdpa_lib files on disk.
WATCHED = {
    "numpy": ("allclose", "isclose", "asarray", "array_equal", "abs", "max", "sum", "shape", "isnan"),
    "numpy.random": ("default_rng", "Generator"),
    "numpy.testing": ("assert_allclose",),
}


def _defined_in(function, package_dir: str) -> bool:
    """True if ``function`` belongs to numpy: its module is numpy's and any Python code lives under ``package_dir``."""
    module = getattr(function, "__module__", None) or ""
    if isinstance(function, np.ufunc):
        return True
    # Compiled (C, Cython) callables can't come from a notebook; Python functions must live in numpy's files.
    in_numpy_files = (not isinstance(function, types.FunctionType)
                      or os.path.realpath(function.__code__.co_filename).startswith(package_dir))
    return module.split(".")[0] == "numpy" and in_numpy_files


def check_environment() -> None:
    """Raise :class:`GradingError` if a watched function or the sdpa_lib package is not the genuine one."""
    numpy_dir = os.path.realpath(os.path.dirname(np.__file__))
    for module_name, names in WATCHED.items():
        module = importlib.import_module(module_name)
        for name in names:
            if not _defined_in(getattr(module, name), numpy_dir):
                raise GradingError(_("{function} was replaced by code in the submission; the graders rely on it, so "
                                     "this test cannot be graded. Remove the reassignment and resubmit.").format(
                    function=f"{module_name}.{name}"))
    # sdpa_lib is installed beside sdpa_course (one distribution): <folder>/sdpa_course/grading/ -> <folder>/sdpa_lib/
    sdpa_dir = os.path.join(os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))), "sdpa_lib")
    package = sys.modules.get("sdpa_lib")
    if package is None or os.path.dirname(os.path.realpath(package.__file__)) != sdpa_dir:
        raise GradingError(_("sdpa_lib is not the course's library (found {file}): a file in the submission shadows "
                             "it. Remove it and resubmit.").format(file=getattr(package, "__file__", None)))
