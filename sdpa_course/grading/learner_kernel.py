"""A kernel of its own for code a learner hands in as source text (a coding drill), sandboxed where bubblewrap works.

nbgrader's path (:mod:`~sdpa_course.grading.trusted_execute`) grades a notebook; a drill is a
few functions in a file or in a cell.  :func:`learner_kernel` starts one kernel the same way:
through :class:`~sdpa_course.grading.sandbox.SandboxedKernelManager` (its fallback without
bwrap warns with the protections that are off), with the student-side ``sdpa_lib`` of
:mod:`~sdpa_course.grading.student_lib` (the absent functions' code removed) as its import
folder, and the grader's agent installed before any of the learner's code runs.
:meth:`LearnerKernel.run` then runs the source there, and :meth:`LearnerKernel.functions`
hands back :class:`~sdpa_course.grading.remote.RemoteFunction` proxies: the checks that use
them run in the calling process, never in the kernel.

A request that takes longer than ``timeout`` seconds (an endless loop in the source or in a
call) raises :class:`~sdpa_course.grading.remote.StudentTimeout`; the kernel is not
interrupted but killed when the block ends, since code that catches ``KeyboardInterrupt``
would survive an interrupt.  A kernel that died raises :class:`KernelDied`.
"""
from __future__ import annotations

import contextlib
import re
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from ..i18n.messages import _
from .errors import GradingError
from .remote import RemoteFunction, StudentError, StudentKernel, StudentTimeout, student_bindings
from .student_lib import student_runtime, use_student_library

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class KernelDied(GradingError):
    """The learner's kernel stopped (its code exited it, or it ran out of memory or CPU time)."""


class LearnerKernel:
    """The learner's kernel, seen from the grader: run source there, fetch its functions as remote proxies."""

    def __init__(self, client, requests: Path, timeout: float):
        self._client, self._timeout = client, timeout
        self.student = StudentKernel(self._execute, requests)

    def _execute(self, cell) -> None:
        from nbclient.exceptions import CellTimeoutError, DeadKernelError
        try:
            self._client.execute_cell(cell, 0, store_history=False)
        except CellTimeoutError:
            raise StudentTimeout("TimeoutError", _("it did not finish within {seconds:g} s").format(
                seconds=self._timeout), []) from None
        except DeadKernelError:
            raise KernelDied(_("the kernel running your code stopped (your code exited it, or it ran out of memory "
                               "or CPU time)")) from None

    def run(self, source: str, filename: str) -> StudentError | None:
        """Run ``source`` in the kernel's namespace as the file ``filename``; the error it raised, or None.

        The source is registered with ``linecache`` under ``filename`` in the kernel, so a
        traceback from a function it defines quotes the learner's line.
        """
        from nbformat.v4 import new_code_cell
        cell = new_code_cell(
            "import linecache as __sdpa_lines\n"
            f"__sdpa_source = {source!r}\n"
            f"__sdpa_lines.cache[{filename!r}] = (len(__sdpa_source), None, __sdpa_source.splitlines(True), "
            f"{filename!r})\n"
            "del __sdpa_lines\n"
            f"exec(compile(__sdpa_source, {filename!r}, 'exec'))\n")
        self._execute(cell)
        errors = [output for output in cell.outputs if output.get("output_type") == "error"]
        if not errors:
            return None
        error = errors[0]
        traceback = [ANSI.sub("", line) for line in error.get("traceback", [])]
        return StudentError(str(error.get("ename", "Exception")), str(error.get("evalue", "")), traceback)

    def functions(self, names: Iterable[str]) -> dict[str, object]:
        """``{name: RemoteFunction}`` for each of ``names`` the kernel defines as a function, other values as fetched"""
        return student_bindings(self.student, names)


@contextlib.contextmanager
def learner_kernel(absent: Iterable[str], *, timeout: float = 20.0, memory_mb: int = 2048,
                   cpu_seconds: int = 120, strict: bool = False) -> Iterator[LearnerKernel]:
    """While the block runs, a fresh kernel (sandboxed where possible) whose ``sdpa_lib`` lacks ``absent``.

    Parameters
    ----------
    absent : iterable of str
        The ``sdpa_lib`` functions and classes whose code is removed from the kernel's copy.
    timeout : float
        Seconds a request (the source, or one round of calls) may take.
    memory_mb, cpu_seconds : int
        The kernel's address-space and CPU-time limits.
    strict : bool
        Raise :class:`~sdpa_course.grading.sandbox.SandboxUnavailableError` where bwrap cannot sandbox.
    """
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    from .sandbox import SandboxedKernelManager

    with student_runtime(absent) as (library, requests), tempfile.TemporaryDirectory(prefix="sdpa-drill-") as work:
        Path(work).chmod(0o755)  # the kernel's (read-only) working folder; in the sandbox it runs as another user
        settings = {"memory_mb": memory_mb, "cpu_seconds": cpu_seconds, "strict": strict}
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
        client = NotebookClient(notebook, kernel_name="python3", kernel_manager_class=SandboxedKernelManager,
                                timeout=max(1, round(timeout)), allow_errors=True, interrupt_on_timeout=False,
                                shutdown_kernel="immediate", resources={"metadata": {"path": work}},
                                config=Config({"SandboxedKernelManager": settings}))
        client.km = client.create_kernel_manager()
        use_student_library(client.km, library)
        with client.setup_kernel():
            kernel = LearnerKernel(client, requests, timeout)
            kernel.student.install()
            yield kernel


__all__ = ["KernelDied", "LearnerKernel", "RemoteFunction", "learner_kernel"]
