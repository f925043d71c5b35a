"""The Examples in every sdpa_lib and sdpa_course docstring run and print what they claim."""
import doctest
import importlib
import pkgutil

import pytest

import sdpa_course
import sdpa_lib

pytestmark = pytest.mark.filterwarnings("error")

MODULES = sorted(info.name for package in (sdpa_lib, sdpa_course)
                 for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")
                 if not info.name.rsplit(".", 1)[-1].startswith("__"))
# the core modules each document at least one example
CORE = {f"sdpa_lib.{name}" for name in ("softmax", "scores", "masks", "attention", "heads", "tiled", "complexity")}


def test_core_modules_are_found():
    """Does the module walk see the core modules (so the doctest run below is not empty)?"""
    assert CORE <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    """Do the module's docstring examples still print what they show?"""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name} (output above)"
    if name in CORE:
        assert result.attempted > 0, f"{name} has no docstring examples"
