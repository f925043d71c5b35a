"""The graded functions of every assignment: one module per assignment (``ch05_softmax``), each defining ``TASKS``.

:func:`task` finds one by chapter (``"ch05"`` or ``"ch05_softmax"``) and function name; the
grade cells of the exercise notebooks and :func:`sdpa_course.replay` both use it.
"""
from __future__ import annotations

import importlib
import pkgutil

from ...i18n.messages import _
from ..task import Task


def assignment_modules() -> list[str]:
    """The assignment modules of this package, by name (``ch05_softmax``, ...)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name.startswith("ch"))


def tasks(chapter: str) -> dict[str, Task]:
    """``{function name: Task}`` of the assignment ``chapter`` (``"ch05"`` or ``"ch05_softmax"``)."""
    matches = [name for name in assignment_modules() if name == chapter or name.split("_")[0] == chapter]
    if not matches:
        raise LookupError(_("no graded exercise for chapter {chapter!r}; the chapters with one are {chapters}").format(
            chapter=chapter, chapters=", ".join(name.split("_")[0] for name in assignment_modules())))
    module = importlib.import_module(f"{__name__}.{matches[0]}")
    return {t.name: t for t in module.TASKS}


def task(chapter: str, name: str) -> Task:
    """The :class:`~sdpa_course.grading.task.Task` for function ``name`` of ``chapter``."""
    found = tasks(chapter)
    if name not in found:
        raise LookupError(_("chapter {chapter!r} grades no function {name!r}; it grades {names}").format(
            chapter=chapter, name=name, names=", ".join(sorted(found))))
    return found[name]


def all_tasks() -> list[Task]:
    return [t for module in assignment_modules() for t in tasks(module).values()]
