"""The ``sdpa_lib`` a student's code sees while it is graded: the reference without the functions the assignment asks for.

The grade cells name what a student must write themselves (``forbidden=("softmax", ...)``
in their checks); :func:`absent_names` reads those names from the instructor's grade
cells.  :func:`build_student_library` writes a copy of ``sdpa_lib`` in which each of them
keeps its signature and docstring but its body is gone: calling it raises
``ForbiddenCallError`` with a message that names it (written into the copy in the course's
language, since the kernel cannot read the course's catalogs).  The code is removed from the copy,
not hidden, so no import, reload, ``__code__`` clone or reading of the file brings it
back.  The grader puts the copy first on the kernel's import path (and, in the sandbox,
it is the only ``sdpa_lib`` there is).
"""
from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from ..i18n.messages import _

STUDENT_LIBRARY = "student-lib"  # the kernel's import folder: the student-side sdpa_lib
REQUESTS = "grader-requests"  # in it, the grader's requests and helper sockets (a name no import can reach)
# Large arrays always come from mmap and go back to the system when freed, so a kernel's
# resident memory follows what its code holds; widgets and plots draw headless.
KERNEL_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": "65536", "SDPA_HEADLESS": "1"}

# The module the copy's gutted functions call; {message!r} is filled with the message in the learner's language.
ERROR_MODULE = '''"""The error raised by the functions removed from this copy of sdpa_lib while your work is graded."""


class ForbiddenCallError(RuntimeError):
    """Raised when graded code calls a reference function that the assignment asks you to write."""


MESSAGE = {message!r}


def absent(name):
    raise ForbiddenCallError(MESSAGE.format(name=name))
'''


def error_module() -> str:
    """The source of the copy's ``_absent`` module, its message in the learner's language."""
    return ERROR_MODULE.format(message=_(
        "sdpa_lib.{name} is not available while your work is graded: this assignment asks you to write it yourself "
        "(numpy and the other sdpa_lib functions are allowed)"))


def absent_names(grade_sources: Iterable[str]) -> set[str]:
    """The plain ``sdpa_lib`` names in every ``forbidden=(...)`` argument of the given grade-cell sources.

    Dotted names (``"sdpa_course.lessons.applications.top_k"``) are left out: the course
    package is not on a graded kernel's path at all.

    Examples
    --------
    A call ``task("ch05", "softmax")`` (see :mod:`~sdpa_course.grading.exercises`) brings in
    that task's ``forbidden`` names.

    >>> sorted(absent_names(['check(f, g, cases, forbidden=("softmax", "logsumexp"))', 'x = 1']))
    ['logsumexp', 'softmax']
    >>> sorted(absent_names(['t = task("ch05", "softmax_backward")']))
    ['softmax_backward', 'softmax_jacobian']
    """
    names = set()
    for source in grade_sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "forbidden":
                names.update(_literal_names(node.value))
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FORBIDDEN"
                                                      for t in node.targets):
                names.update(_literal_names(node.value))
            elif _is_task_call(node):
                from .exercises import task
                names.update(task(*(argument.value for argument in node.args)).forbidden)
    return {name for name in names if "." not in name}


def _is_task_call(node: ast.AST) -> bool:
    """``task("ch05", "softmax")`` with two string literals."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "task"
            and len(node.args) == 2 and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args))


def _literal_names(node: ast.AST) -> set[str]:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return set()
    return {item for item in value if isinstance(item, str)} if isinstance(value, (tuple, list, set)) else set()


def reference_folder() -> Path:
    """The folder of the installed ``sdpa_lib`` package (found without importing anything of the student's)."""
    spec = importlib.util.find_spec("sdpa_lib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(_("the sdpa_lib package is not installed"))
    return Path(next(iter(spec.submodule_search_locations)))


def build_student_library(destination: Path, absent: Iterable[str]) -> Path:
    """Write ``destination/sdpa_lib/``: the reference with ``absent`` functions and classes gutted; return ``destination``.

    Raises
    ------
    ValueError
        If a name in ``absent`` is not a top-level function or class of any ``sdpa_lib`` module.
    """
    absent, removed = set(absent), set()
    package = Path(destination) / "sdpa_lib"
    package.mkdir(parents=True, exist_ok=True)
    for source_path in sorted(reference_folder().glob("*.py")):
        tree = ast.parse(source_path.read_text(encoding="utf-8"), str(source_path))
        gutted = _gut(tree, absent)
        removed |= gutted
        if gutted:
            tree.body.insert(_after_docstring(tree), ast.parse("from ._absent import absent as _absent").body[0])
        (package / source_path.name).write_text(ast.unparse(ast.fix_missing_locations(tree)) + "\n", encoding="utf-8")
    (package / "_absent.py").write_text(error_module(), encoding="utf-8")
    unknown = absent - removed
    if unknown:
        raise ValueError(_("cannot make {names} absent: no sdpa_lib module defines them").format(names=sorted(unknown)))
    return Path(destination)


@contextlib.contextmanager
def student_runtime(absent: Iterable[str], parent: str | None = None) -> Iterator[tuple[Path, Path]]:
    """While the block runs, ``(library, requests)``: a student-side ``sdpa_lib`` without ``absent``, its requests folder.

    ``library`` is the kernel's import folder (:func:`build_student_library`); ``requests``, inside it,
    is where the grader writes its requests and makes its helper sockets
    (:class:`~sdpa_course.grading.remote.StudentKernel`).  Both are readable by others: a sandboxed
    kernel runs as a user of its own.  They live in a temporary folder of ``parent`` (the default
    temporary folder if None), removed afterwards.
    """
    runtime = Path(tempfile.mkdtemp(prefix="sdpa-grading-", dir=parent or None))
    try:
        os.chmod(runtime, 0o755)
        library = build_student_library(runtime / STUDENT_LIBRARY, absent)
        requests = library / REQUESTS
        requests.mkdir()
        os.chmod(requests, 0o755)
        yield library, requests
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def use_student_library(manager, library: Path) -> None:
    """Give a :class:`~sdpa_course.grading.sandbox.SandboxedKernelManager` ``library`` as its kernel's import folder."""
    manager.extra_import_folder = str(library)
    manager.extra_env = {**KERNEL_ENVIRONMENT, **manager.extra_env}


def _after_docstring(tree: ast.Module) -> int:
    """Index after the module docstring and ``from __future__`` imports (where a new import may go)."""
    index = 0
    for node in tree.body:
        is_docstring = isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (is_docstring and index == 0 or is_future):
            break
        index += 1
    return index


def _gut(tree: ast.Module, absent: set[str]) -> set[str]:
    """Replace the body of each absent top-level function (each absent class by a stub); return the names done."""
    done = set()
    for index, node in enumerate(tree.body):
        if getattr(node, "name", None) not in absent:
            continue
        docstring = node.body[:1] if ast.get_docstring(node, clean=False) is not None else []
        raise_it = ast.parse(f"_absent({node.name!r})").body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = docstring + raise_it
            node.decorator_list = []
        elif isinstance(node, ast.ClassDef):
            stub = ast.parse(f"class {node.name}:\n    def __init__(self, *args, **kwargs):\n"
                             f"        _absent({node.name!r})").body[0]
            stub.body[:0] = docstring
            tree.body[index] = stub
        done.add(node.name)
    return done
