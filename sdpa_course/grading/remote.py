"""The student's code, seen from the grading process: functions that run in the student's kernel and return data.

A grade cell runs in the grader's own process (see :mod:`~sdpa_course.grading.trusted_execute`).
The names it uses that the student defined are bound to what :func:`student_bindings`
fetches from the kernel: a variable arrives as a decoded value, a function as a
:class:`RemoteFunction`, which sends its arguments into the kernel as data, lets the
student's function run there, and rebuilds the result from the answer the kernel
publishes.  The checks, the reference, the mistake catalogue and the verdict never run
where the student's code does.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import json
import os
import socket
import struct
import threading
import uuid
import warnings
from pathlib import Path
from typing import Callable, Iterable


from ..i18n.messages import _
from . import codec, kernel_side
from .errors import ForbiddenCallError, GradingError

RESULT_MIME = kernel_side.RESULT_MIME
AGENT_SOURCES = ((codec, "<sdpa grader codec>"), (kernel_side, "<sdpa grader agent>"))
_WARNING_CLASSES = {cls.__name__: cls for cls in (RuntimeWarning, UserWarning, DeprecationWarning, FutureWarning,
                                                   SyntaxWarning, ResourceWarning)}


class StudentError(Exception):
    """The student's function raised ``ename: evalue`` in its kernel; ``frames`` are its traceback outside the agent."""

    def __init__(self, ename: str, evalue: str, frames: list):
        super().__init__(f"{ename}: {evalue}" if evalue else ename)
        self.ename, self.evalue, self.frames = ename, evalue, frames


class StudentTimeout(StudentError):
    """The student's function did not return within the time a cell may take."""


class KernelAnswerError(GradingError):
    """The kernel gave no usable answer (none, several, or one that is not data)."""


def _code_cell(source: str):
    """A notebook code cell (nbformat is imported here: it takes seconds, and the command line needs it rarely)."""
    from nbformat.v4 import new_code_cell
    return new_code_cell(source)


def agent_installation() -> str:
    """Code that installs the grader's agent as the module ``_sdpa_grader`` without binding any name of the student's.

    The codec's messages go with it in the learner's language (:data:`.codec.TRANSLATED`): the kernel cannot
    read the course's catalogs.
    """
    sources = [(Path(module.__file__).read_text(encoding="utf-8"), name) for module, name in AGENT_SOURCES]
    translated = {text: _(text) for text in codec.UNSUPPORTED.values()}
    return ("def __sdpa_install(sources, translated):\n"
            "    import sys, types\n"
            "    module = types.ModuleType('_sdpa_grader')\n"
            "    for source, name in sources:\n"
            "        exec(compile(source, name, 'exec'), module.__dict__)\n"
            "    module.TRANSLATED.update(translated)\n"
            "    sys.modules['_sdpa_grader'] = module\n"
            f"__sdpa_install({sources!r}, {translated!r})\n"
            "del __sdpa_install\n")


class StudentKernel:
    """Requests to the grader's agent in the student's kernel, run through a notebook client's ``execute_cell``.

    Parameters
    ----------
    execute : callable
        ``execute(cell)`` runs a code cell in the kernel and fills its outputs
        (nbclient's ``execute_cell`` with a fixed index).
    folder : path
        Where requests are written and the Unix socket for helper calls is made; the kernel
        must be able to read it (it need not write there).
    kernel_pid : callable, optional
        Returns the host pid of the kernel process (or None): then a call made with
        ``measure_memory`` also reports the kernel's peak resident memory, measured from
        outside through ``/proc`` (which the student's code cannot tamper with).
    """

    def __init__(self, execute: Callable, folder: Path, kernel_pid: Callable[[], int | None] | None = None):
        self._execute, self._folder, self._kernel_pid = execute, Path(folder), kernel_pid

    def install(self) -> None:
        cell = _code_cell(agent_installation())
        self._execute(cell)
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if errors:
            raise GradingError(_("the grader could not start its agent in the kernel: {error}: {message}").format(
                error=errors[0].get("ename"), message=errors[0].get("evalue")))

    def request(self, op: str, *, args=None, helpers: dict | None = None, measure_memory: bool = False,
                **fields) -> dict:
        """Send one request (``op`` and its ``fields``, see :func:`.kernel_side.handle`) and return the decoded answer.

        ``args`` (the cases of a call) travel encoded by the codec.
        """
        request = {"id": uuid.uuid4().hex, "op": op, **fields, "measure_memory": measure_memory}
        if args is not None:
            request["args"] = codec.encode(args)
        what = fields.get("name") or ", ".join(fields.get("names", ())) or op
        # The request travels as a file (arguments can be many megabytes), the answer as a display_data message.
        path = self._folder / f"request-{request['id']}.json"
        with self._helper_server(helpers or {}) as socket_path:
            if helpers:
                request["helpers"] = {"socket": socket_path, "names": sorted(helpers)}
            path.write_text(json.dumps(request), encoding="utf-8")
            os.chmod(path, 0o644)  # the kernel may run as another user in its sandbox
            cell = _code_cell(f"__import__('_sdpa_grader').handle_file({str(path)!r})")
            pid = self._kernel_pid() if measure_memory and self._kernel_pid else None
            start = _reset_resident_peak(pid) if pid else None
            try:
                self._execute(cell)
            finally:
                path.unlink(missing_ok=True)
        answer = self._answer(cell, request["id"], what)
        if start is not None:
            answer["resident_peak_bytes"] = max(0, _status_bytes(pid, "VmHWM") - start)
        return answer

    def _answer(self, cell, request_id: str, name: str) -> dict:
        answers = []
        for output in cell.outputs:
            text = output.get("data", {}).get(RESULT_MIME) if output.get("output_type") == "display_data" else None
            if text is None:
                continue
            try:
                answer = json.loads(text) if isinstance(text, str) else text
            except ValueError:
                raise KernelAnswerError(_("the answer for {name} is not valid data").format(name=name)) from None
            if isinstance(answer, dict) and answer.get("id") == request_id:
                answers.append(answer)
        if len(answers) != 1:
            timeout = [o for o in cell.outputs if o.get("output_type") == "error" and "Timeout" in o.get("ename", "")]
            if timeout and not answers:
                raise StudentTimeout("TimeoutError", _("{name} did not finish within the time a cell may take").format(
                    name=name), [])
            raise KernelAnswerError(_("grading got {count} answers for {name} where it expects one: the kernel's "
                                      "output was tampered with, or the code stopped the kernel's agent").format(
                count=len(answers), name=name))
        return answers[0]

    @contextlib.contextmanager
    def _helper_server(self, helpers: dict):
        """While the block runs, answer the kernel's helper calls on a Unix socket with the functions in ``helpers``."""
        if not helpers:
            yield None
            return
        path = str(self._folder / f"helpers-{uuid.uuid4().hex[:12]}.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o777)  # the kernel may run as another user in its sandbox
        server.listen(4)
        stop = threading.Event()
        thread = threading.Thread(target=_serve_helpers, args=(server, helpers, stop), daemon=True)
        thread.start()
        try:
            yield path
        finally:
            stop.set()
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the serving thread
            server.close()
            thread.join(timeout=5)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def _status_bytes(pid: int, field: str) -> int:
    """A memory figure of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise ValueError(f"/proc/{pid}/status has no {field}")


def _reset_resident_peak(pid: int) -> int | None:
    """Reset the process's peak resident memory to its current one (``clear_refs`` 5); return that, or None."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return _status_bytes(pid, "VmRSS")
    except (OSError, ValueError):
        return None


def _serve_helpers(server: socket.socket, helpers: dict, stop: threading.Event) -> None:
    server.settimeout(0.2)
    while not stop.is_set():
        try:
            connection, _address = server.accept()
        except (socket.timeout, OSError):
            continue
        with connection:
            connection.settimeout(60)
            name = "helper"  # until the request names it
            try:
                size = struct.unpack("!Q", kernel_side._read(connection, 8))[0]
                if size > codec.MAX_BYTES:
                    raise ValueError("request too large")
                request = json.loads(kernel_side._read(connection, size))
                name = str(request["name"])
                function = helpers[name]
                args, kwargs = codec.decode(request["args"])
                answer = {"ok": True, "value": codec.encode(function(*args, **kwargs))}
            except Exception as error:  # the student's inputs to the helper were bad: tell the kernel, keep serving
                answer = {"ok": False, "error": _("the course's {name} (used while grading your code) failed: "
                                                  "{error}").format(name=name, error=f"{type(error).__name__}: {error}")}
            with contextlib.suppress(OSError):
                message = json.dumps(answer).encode()
                connection.sendall(struct.pack("!Q", len(message)) + message)


class CallResult:
    """What one call of a student's function in the kernel gave: its value or the error it raised, and its warnings."""

    def __init__(self, name: str, answer: dict):
        self.name, self._answer = name, answer
        self.warnings = [(str(category), str(message)) for category, message in answer.get("warnings") or []]

    def value(self):
        """The returned value, decoded; or raise what the function raised (see :func:`_student_exception`)."""
        if "error" in self._answer:
            raise _student_exception(self._answer["error"])
        if not self._answer.get("ok"):
            raise GradingError(_("your {name} returned something that is not data: {reason}").format(
                name=self.name, reason=self._answer.get("unsupported")))
        return _decoded(self._answer.get("value"), self.name)

    def reemit_warnings(self) -> None:
        """Emit here the warnings the call emitted in the kernel."""
        for category, message in self.warnings:
            warnings.warn(message, _WARNING_CLASSES.get(category, UserWarning), stacklevel=3)


class RemoteFunction:
    """A function the student defined, called in the student's kernel on data: ``f(*args, **kwargs)`` as if local.

    The warnings it emitted are re-emitted here; the error it raised is raised here as
    :class:`StudentError` (``NotImplementedError`` and ``ForbiddenCallError`` keep their
    type, so a stub and a call to the absent reference are reported as such).
    :meth:`call_many` runs many cases in one round trip to the kernel.
    """

    def __init__(self, kernel: StudentKernel, name: str):
        self.kernel, self.__name__, self.__qualname__ = kernel, name, name
        self.helpers: dict[str, Callable] = {}
        self.last_peak_bytes: int | None = None  # of the last call with measure_memory (see call)

    def __repr__(self) -> str:
        return f"<student function {self.__name__} (in the student's kernel)>"

    def __call__(self, *args, **kwargs):
        return self.call(args, kwargs)

    def source(self) -> str:
        """The source of the student's function, as the kernel reports it (``OSError`` if it has none)."""
        answer = self.kernel.request("source", name=self.__name__)
        if not answer.get("ok"):
            raise OSError(_("the source of {name} is not available ({reason})").format(
                name=self.__name__, reason=answer.get("unsupported", "")))
        source = _decoded(answer.get("value"), self.__name__)
        if not isinstance(source, str):
            raise KernelAnswerError(_("the source of {name} came back as a {type}").format(
                name=self.__name__, type=type(source).__name__))
        return source

    def call(self, args: tuple, kwargs: dict, *, measure_memory: bool = False):
        """``f(*args, **kwargs)`` in the kernel; with ``measure_memory``, its peak is kept in ``last_peak_bytes``."""
        outcome = self.call_many([(args, kwargs)], measure_memory=measure_memory)[0]
        outcome.reemit_warnings()
        return outcome.value()

    def call_many(self, cases, *, measure_memory: bool = False) -> list[CallResult]:
        """One :class:`CallResult` per ``(args, kwargs)`` case, in order, all run in one request.

        The kernel stops at the first case that raises, so the list ends there.
        """
        cases = [(tuple(args), dict(kwargs)) for args, kwargs in cases]
        try:
            answer = self.kernel.request("call", name=self.__name__, args=cases, helpers=self.helpers,
                                         measure_memory=measure_memory)
        except codec.UnsupportedValue as error:
            raise GradingError(_("the grader could not send these inputs to your {name}: {reason}").format(
                name=self.__name__, reason=error)) from None
        if answer.get("missing"):
            raise NameError(_("name {name!r} is no longer defined in your notebook").format(name=self.__name__))
        results = answer.get("results")
        complete = isinstance(results, list) and all(isinstance(r, dict) for r in results) and (
            len(results) == len(cases) or (0 < len(results) < len(cases) and "error" in results[-1]))
        if not complete:
            raise KernelAnswerError(_("the kernel's answer for {name} does not cover the {count} cases sent: its "
                                      "output was tampered with, or the code stopped the kernel's agent").format(
                name=self.__name__, count=len(cases)))
        if measure_memory:  # measured from outside when possible (resident memory), else the kernel's tracemalloc
            self.last_peak_bytes = answer.get("resident_peak_bytes", results[-1].get("peak_bytes"))
        return [CallResult(self.__name__, result) for result in results]


def _decoded(payload, name: str):
    try:
        return codec.decode(payload)
    except ValueError as error:
        raise KernelAnswerError(_("the answer for {name} could not be read: {reason}").format(
            name=name, reason=error)) from None


def _student_exception(error: dict) -> Exception:
    ename, evalue = str(error.get("ename", "Exception")), str(error.get("evalue", ""))
    if ename == "NotImplementedError":
        return NotImplementedError(evalue)
    if ename == "ForbiddenCallError":
        return ForbiddenCallError(evalue)
    return StudentError(ename, evalue, list(error.get("frames") or []))


# --- which names of a grade cell are the student's -------------------------------------------------

def cell_names(source: str) -> tuple[set[str], set[str]]:
    r"""(names a cell reads but never binds anywhere in it, other than builtins; names it binds).

    Examples
    --------
    >>> read, bound = cell_names("import numpy as np\ndef check(x):\n    return softmax(x) + y\ncheck(np.ones(2))")
    >>> sorted(read), sorted(bound)
    (['softmax', 'y'], ['check', 'np', 'x'])
    """
    tree = ast.parse(source)
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound - set(dir(builtins)), bound


def student_bindings(kernel: StudentKernel, names: Iterable[str]) -> dict:
    """``{name: value or RemoteFunction}`` for each name the student's kernel defines (absent names are left out).

    One request asks for all of them.
    """
    names = sorted(names)
    if not names:
        return {}
    values = kernel.request("get", names=names).get("values")
    if not isinstance(values, dict):
        raise KernelAnswerError(_("the kernel's answer about the notebook's names is not data"))
    bindings = {}
    for name in names:
        answer = values.get(name)
        if not isinstance(answer, dict):
            continue
        if answer.get("callable"):
            bindings[name] = RemoteFunction(kernel, name)
        elif answer.get("ok"):
            bindings[name] = _decoded(answer.get("value"), name)
        else:
            bindings[name] = _Unsendable(name, answer.get("unsupported", ""))
    return bindings


class _Unsendable:
    """Stands for a student variable that is not data; using it in a check fails with the reason."""

    def __init__(self, name: str, reason: str):
        self.name, self.reason = name, reason

    def __repr__(self) -> str:
        return f"<{self.name}: not data ({self.reason})>"

    def __getattr__(self, attribute):
        raise GradingError(_("{name} in your notebook is not something grading can read: {reason}").format(
            name=self.name, reason=self.reason))


def source_of(function) -> str:
    """The source code of a student's function: asked of the kernel for a :class:`RemoteFunction`, else ``inspect``."""
    return function.source() if isinstance(function, RemoteFunction) else inspect.getsource(function)
