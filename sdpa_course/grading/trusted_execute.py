"""nbgrader's Execute step with the verdict taken out of the student's process.

nbgrader's own model runs every cell, test cells included, in the student's kernel, and a
test passes when it raises nothing there, so a submission can patch the checks, print a
pass, or read the hidden tests.  :class:`TrustedExecute` takes the place of ``Execute`` in
``Autograde.autograde_preprocessors`` (see ``nbgrader_config.py``) and splits the work:

* the student's cells run in the student's kernel, as before (in the sandbox of
  :mod:`~sdpa_course.grading.sandbox` where it is available), with an ``sdpa_lib`` in which
  the functions the assignment asks for are absent (:mod:`~sdpa_course.grading.student_lib`);
* each grade cell runs here, in the grading process.  Its source is the instructor's, read
  from the gradebook by its ``grade_id``, never the notebook's text.  The names it uses that
  the student defined are fetched from the kernel as data, or bound to
  :class:`~sdpa_course.grading.remote.RemoteFunction` proxies that call the student's
  function in the kernel on arguments chosen here (:mod:`~sdpa_course.grading.remote`);
* locked context cells (imports) run in both places, from the gradebook's source.

The grade cell's outputs are written by this process: what its checks printed, and the
``ename: evalue`` of the check that failed.  nbgrader's SaveAutoGrades then scores them as
usual, so the gradebook, formgrader, feedback and points are nbgrader's own.  A cell that
claims to be a grade cell but is unknown to the gradebook is the student's: it runs in
the kernel and its grade metadata is removed.
"""
from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Unicode

from ..i18n.messages import _
from .autograde import descendants
from .remote import StudentKernel, cell_names, student_bindings
from .sandbox import SandboxedKernelManager
from .student_lib import (KERNEL_ENVIRONMENT, REQUESTS, STUDENT_LIBRARY, absent_names,  # noqa: F401 (re-exported)
                          student_runtime, use_student_library)


class TrustedExecute(Execute):
    """Run the student's cells in their kernel and the grade cells in the grading process."""

    runtime_parent = Unicode("", help="Folder for the per-notebook grading files (the default temporary folder if "
                                      "empty).").tag(config=True)

    def __init__(self, **kwargs):
        # nbgrader's Execute passes its own kernel manager class as an argument, which beats the config.
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(**kwargs)

    def preprocess(self, nb, resources=None, km=None):
        self._trusted_sources = trusted_sources(resources)
        grade_sources = [source for kind, source in self._trusted_sources.values() if kind == "grade"]
        with student_runtime(absent_names(grade_sources), self.runtime_parent) as (self._library, requests):
            self._kernel = StudentKernel(self._execute_request, requests, self._kernel_pid)
            self._namespace = {"__name__": "__grading__", "__builtins__": __builtins__}
            self._trusted_names: set[str] = set()
            self._agent_ready = False
            return super().preprocess(nb, resources, km)

    def create_kernel_manager(self):
        """The kernel manager, with the student-side ``sdpa_lib`` as the kernel's import folder."""
        manager = super().create_kernel_manager()
        if isinstance(manager, SandboxedKernelManager):
            use_student_library(manager, self._library)
        return manager

    def _kernel_pid(self) -> int | None:
        """The host pid of the kernel: the first process, from the launched one down, that runs ipykernel itself.

        bwrap's own command line names the kernel too (skipped by its program name); processes the
        student's code forks come below the kernel, so the first match, breadth first, is the kernel.
        """
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        if process is None:
            return None
        for pid in (process.pid, *descendants(process.pid)):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"ipykernel" in b" ".join(argv) and Path(os.fsdecode(argv[0])).name != "bwrap":
                return pid
        return None

    def _execute_request(self, request_cell):
        """Run a request of the grader's in the kernel; nbclient files it at an index, so put the real cell back."""
        try:
            return self.execute_cell(request_cell, self._index, store_history=False)
        finally:
            self.nb.cells[self._index] = self._cell

    def preprocess_cell(self, cell, resources, index):
        self._index, self._cell = index, cell
        if not self._agent_ready:
            self._kernel.install()
            self._agent_ready = True
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code":
            return cell, resources
        trusted = self._trusted_sources.get(meta.get("grade_id"))
        if meta.get("grade") and (trusted is None or trusted[0] != "grade"):
            cell.metadata["nbgrader"] = {k: v for k, v in meta.items() if k not in ("grade", "points", "grade_id")}
            self.log.warning("cell %s claims to be a test but the gradebook has no such test: run as the student's",
                             meta.get("grade_id"))
            return super().preprocess_cell(cell, resources, index)
        if trusted is not None and trusted[0] == "grade":
            cell.source = trusted[1]
            cell.outputs = self._run_here(trusted[1], meta.get("grade_id", index))
            return cell, resources
        if trusted is not None and trusted[0] == "context":
            cell.source = trusted[1]
            self._run_here(trusted[1], meta.get("grade_id", index), fetch_student_names=False)
        return super().preprocess_cell(cell, resources, index)

    def _run_here(self, source: str, name, *, fetch_student_names: bool = True) -> list:
        """Run instructor code in the grading namespace; return the cell outputs it produced."""
        loaded, bound = cell_names(source)
        if fetch_student_names:
            wanted = loaded - self._trusted_names
            found = student_bindings(self._kernel, wanted)
            for missing in wanted - set(found):
                self._namespace.pop(missing, None)
            self._namespace.update(found)
        printed = io.StringIO()
        outputs = []
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), \
                    warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                exec(compile(source, f"<grade cell {name}>", "exec"), self._namespace)  # noqa: S102  (instructor code)
        except DeadKernelError:
            raise
        except Exception as error:
            outputs.append(nbformat.v4.new_output("error", ename=getattr(error, "ename", type(error).__name__),
                                                  evalue=str(getattr(error, "evalue", error)),
                                                  traceback=[f"{type(error).__name__}: {error}"]))
        finally:
            self._trusted_names |= bound
        if printed.getvalue():
            outputs.insert(0, nbformat.v4.new_output("stream", name="stdout", text=printed.getvalue()))
        return outputs


def trusted_sources(resources: dict | None) -> dict[str, tuple[str, str]]:
    """``{grade_id: ("grade" | "context", source)}`` of the notebook's test cells and locked code cells, from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry
    info = (resources or {}).get("nbgrader", {})
    if not info.get("db_url"):
        raise RuntimeError(_("TrustedExecute runs inside nbgrader autograde (it reads the tests from the gradebook)"))
    with Gradebook(info["db_url"]) as gradebook:
        try:
            notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
        except MissingEntry:
            raise RuntimeError(_("the gradebook has no notebook {notebook} in {assignment}: run nbgrader "
                                 "generate_assignment first").format(notebook=info["notebook"],
                                                                     assignment=info["assignment"])) from None
        answers = {cell.name for cell in notebook.solution_cells}  # graded by hand: the student's own code
        tests = {cell.name for cell in notebook.grade_cells if cell.cell_type == "code"} - answers
        return {cell.name: ("grade" if cell.name in tests else "context", cell.source)
                for cell in notebook.source_cells
                if cell.cell_type == "code" and cell.name not in answers and (cell.name in tests or cell.locked)}
