"""Make the sdpa_lib function a student re-implements unavailable while their code runs."""
from __future__ import annotations

import contextlib
import importlib
from typing import Callable, Iterable

from ..i18n.messages import _
from .errors import ForbiddenCallError


def _qualified(name: str) -> str:
    """``softmax`` -> ``sdpa_lib.softmax``; a dotted name is already a full path (``sdpa_course.lessons.applications.top_k``)."""
    return name if "." in name else f"sdpa_lib.{name}"


def _stub(name: str, student_name: str) -> Callable:
    def forbidden(*args, **kwargs):
        raise ForbiddenCallError(_(
            "{function} is unavailable while your {student_function} is graded: this exercise asks you to write it "
            "yourself (numpy and the other sdpa_lib helpers are allowed)").format(
            function=_qualified(name), student_function=student_name))
    forbidden.__name__ = name
    return forbidden


def _home(name: str) -> tuple[object, str]:
    """The module and attribute a name refers to: "softmax" -> (sdpa_lib, "softmax"), "a.b.top_k" -> (a.b, "top_k")."""
    module_path, _dot, attribute = _qualified(name).rpartition(".")
    return importlib.import_module(module_path), attribute


def _places_holding(original: object, name: str, student: Callable) -> list[tuple[object, str]]:
    """Every (namespace, attribute) through which graded code could reach ``original``.

    The package namespace, the module that defines it and the student's globals (which
    catch ``from sdpa_lib import softmax`` and aliases).  Other sdpa_lib modules keep
    their own references, so allowed helpers that use it internally still work.
    """
    home, attribute = _home(name)
    places = [(home, attribute)]
    for module in (importlib.import_module("sdpa_lib"), importlib.import_module(getattr(original, "__module__", "sdpa_lib"))):
        if getattr(module, attribute, None) is original and all(module is not place for place, _ in places):
            places.append((module, attribute))
    namespace = getattr(student, "__globals__", {})
    places += [(namespace, key) for key, value in list(namespace.items()) if value is original]
    return places


@contextlib.contextmanager
def unavailable(names: Iterable[str], student: Callable):
    """Within the block, calling any ``sdpa_lib.<name>`` raises :class:`ForbiddenCallError`.

    A plain name is an ``sdpa_lib`` function; a dotted name is a full path, such as
    ``"sdpa_course.lessons.applications.top_k"``.

    Examples
    --------
    >>> import sdpa_lib
    >>> def mine(x):
    ...     return sdpa_lib.softmax(x)
    >>> with unavailable(["softmax"], mine):  # doctest: +ELLIPSIS
    ...     mine([1.0])
    Traceback (most recent call last):
    ...
    sdpa_course.grading.errors.ForbiddenCallError: sdpa_lib.softmax is unavailable while your mine is graded: ...
    >>> from sdpa_course.lessons.applications import top_k
    >>> def best(scores):
    ...     return top_k(scores, 1)
    >>> with unavailable(["sdpa_course.lessons.applications.top_k"], best):  # doctest: +ELLIPSIS
    ...     best([1.0, 2.0])
    Traceback (most recent call last):
    ...
    sdpa_course.grading.errors.ForbiddenCallError: sdpa_course.lessons.applications.top_k is unavailable while your best is graded: ...
    >>> best([1.0, 2.0]).tolist()  # restored on leaving the block
    [1]
    """
    student_name = getattr(student, "__name__", "function")
    saved = []
    try:
        for name in names:
            original = getattr(*_home(name))
            stub = _stub(name, student_name)
            for place, key in _places_holding(original, name, student):
                saved.append((place, key, original))
                _set(place, key, stub)
        yield
    finally:
        for place, key, original in reversed(saved):
            _set(place, key, original)


def _set(place, key: str, value) -> None:
    if isinstance(place, dict):
        place[key] = value
    else:
        setattr(place, key, value)
