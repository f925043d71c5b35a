"""Each protection of sdpa_course.grading.sandbox.SandboxedKernelManager, proven by running student code in a kernel it starts.

The secret files these tests plant are world-readable on purpose: only the sandbox's
mounts, not file permissions, keep them from the student's code.
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pytest
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from sdpa_course.grading import sandbox
from sdpa_course.grading.sandbox import (SandboxedKernelManager, SandboxUnavailableError, SandboxUnavailableWarning,
                                         sandbox_status)
from sdpa_course.grading.trusted_execute import TrustedExecute

STUDENT_COPY_MARKER = "student-side copy of sdpa_lib"
MISSING_BWRAP = "/nonexistent/bwrap"


class SandboxedExecute(Execute):
    """nbgrader's Execute with the sandboxed kernel manager (the recipe of sandbox's docstring)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(**kwargs)


@pytest.fixture(scope="module", autouse=True)
def bwrap_works(require_sandbox):
    """Every test here needs a working bubblewrap (skipped without it, except in CI)."""


@pytest.fixture
def folders(tmp_path):
    """A course folder with a gradebook and another student's submission, beside the graded notebook's folder."""
    course = tmp_path / "course"
    workdir = course / "autograded" / "student" / "ps1"
    other_submission = course / "submitted" / "other" / "ps1" / "ps1.ipynb"
    extra = tmp_path / "extra"
    for folder in (workdir, other_submission.parent, extra / "sdpa_lib", extra / "private",
                   extra / "site" / "gradingpkg"):
        folder.mkdir(parents=True)
    (course / "gradebook.db").write_text("grades of every student")
    other_submission.write_text("another student's answers")
    (workdir / "ps1.ipynb").write_text("the notebook being graded")
    (extra / "sdpa_lib" / "__init__.py").write_text(f"MARKER = {STUDENT_COPY_MARKER!r}\n")
    (extra / "private" / "key.txt").write_text("instructor key")
    (extra / "answers.txt").write_text("instructor answers")
    (extra / "site" / "gradingpkg" / "__init__.py").write_text("SOLUTION = 42\n")
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return SimpleNamespace(course=course, workdir=workdir, gradebook=course / "gradebook.db",
                           other_submission=other_submission, extra=extra)


def execute(cells: list[str], workdir: Path, *, timeout: int = 30, allow_errors: bool = False,
            client_options: dict | None = None, **settings) -> nbformat.NotebookNode:
    """Run ``cells`` as a notebook in ``workdir`` through nbclient and the sandboxed manager."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(notebook, kernel_name="python3", kernel_manager_class=SandboxedKernelManager,
                   timeout=timeout, allow_errors=allow_errors, resources={"metadata": {"path": str(workdir)}},
                   config=Config({"SandboxedKernelManager": settings}), **(client_options or {})).execute()
    return notebook


def printed(cell) -> str:
    return "".join(output["text"] for output in cell.outputs if output.get("name") == "stdout")


def printed_json(cell):
    return json.loads(printed(cell).strip().splitlines()[-1])


async def start_kernel(workdir: Path, **settings) -> tuple[SandboxedKernelManager, object]:
    manager = SandboxedKernelManager(kernel_name="python3", config=Config({"SandboxedKernelManager": settings}))
    await manager.start_kernel(cwd=str(workdir))
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=30)
    return manager, client


async def run_code(client, code: str) -> str:
    outputs = []

    def keep_stdout(message):
        if message["msg_type"] == "stream":
            outputs.append(message["content"]["text"])

    reply = await client.execute_interactive(code, output_hook=keep_stdout, timeout=60)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(outputs)


def processes_with_uid(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue  # ended meanwhile
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), None)
        if uid_line and int(uid_line.split()[1]) == uid:
            pids.append(int(entry.name))
    return pids


def processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_numpy_runs_and_the_extra_folder_shadows_the_installed_sdpa_lib(folders):
    scores = [[0.5, -1.0, 2.0], [3.0, 3.0, 0.0]]
    notebook = execute([f"""
import json
import numpy as np
import sdpa_lib
scores = np.array({scores})
weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
weights /= weights.sum(axis=-1, keepdims=True)
print(json.dumps({{"weights": weights.tolist(), "marker": sdpa_lib.MARKER, "file": sdpa_lib.__file__}}))
"""], folders.workdir, extra_import_folder=str(folders.extra))
    facts = printed_json(notebook.cells[0])
    expected = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    assert np.allclose(facts["weights"], expected)
    assert facts["marker"] == STUDENT_COPY_MARKER
    assert facts["file"] == str(folders.extra / "sdpa_lib" / "__init__.py")
    host_sdpa_lib = importlib.util.find_spec("sdpa_lib")
    if host_sdpa_lib is not None:  # the grader's own sdpa_lib is another file
        assert host_sdpa_lib.origin != facts["file"]


def test_only_the_allowed_folders_are_visible(folders, monkeypatch):
    monkeypatch.syspath_prepend(str(folders.extra / "site"))  # the grader imports gradingpkg from there
    host_sdpa_lib = importlib.util.find_spec("sdpa_lib")
    repo_package = str(Path(host_sdpa_lib.origin).parent) if host_sdpa_lib and host_sdpa_lib.origin else "/nonexistent"
    notebook = execute([f"""
import errno, json, os, sys
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return errno.errorcode[error.errno]
facts = {{
    "gradebook": attempt(lambda: open({str(folders.gradebook)!r}).read()),
    "other_submission": attempt(lambda: open({str(folders.other_submission)!r}).read()),
    "course": sorted(os.listdir({str(folders.course)!r})),
    "top_level": sorted(os.listdir("/")),
    "root": sorted(os.listdir("/root")) if os.path.isdir("/root") else None,
    "home": os.path.exists("/home"),
    "repo_package": attempt(lambda: os.listdir({repo_package!r})),
    "own_notebook": attempt(lambda: open("ps1.ipynb").read()),
    "write_workdir": attempt(lambda: open("written.txt", "w").close()),
    "workdir_read_only": bool(os.statvfs(".").f_flag & os.ST_RDONLY),
    "write_scratch": attempt(lambda: open(os.path.join(os.environ["TMPDIR"], "notes.txt"), "w").close()),
    "home_and_tmpdir": [os.environ["HOME"], os.environ["TMPDIR"]],
    "hidden_folder": os.listdir({str(folders.extra / "private")!r}),
    "hidden_file": attempt(lambda: open({str(folders.extra / "answers.txt")!r}).read()),
    "hidden_package": os.listdir({str(folders.extra / "site" / "gradingpkg")!r}),
}}
sys.path.remove({str(folders.extra)!r})
sys.modules.pop("sdpa_lib", None)
try:
    import sdpa_lib
    facts["sdpa_lib_without_extra_folder"] = sdpa_lib.__file__
except ImportError as error:
    facts["sdpa_lib_without_extra_folder"] = type(error).__name__
print(json.dumps(facts))
"""], folders.workdir, extra_import_folder=str(folders.extra),
        hidden_paths=[str(folders.extra / "private"), str(folders.extra / "answers.txt")],
        hidden_packages=["gradingpkg"],
        python_folders=[sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix,
                        str(folders.extra / "site")])  # as if gradingpkg were installed there
    facts = printed_json(notebook.cells[0])
    assert facts["gradebook"] == "ENOENT"
    assert facts["other_submission"] == "ENOENT"
    assert facts["course"] == ["autograded"]  # only the way down to the working folder
    mounted = [sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix, folders.workdir, folders.extra]
    system = [name for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr") if os.path.lexists("/" + name)]
    assert set(facts["top_level"]) == (
        {Path(folder).resolve().parts[1] for folder in mounted} | set(system) | {"dev", "etc", "proc", "tmp"})
    python_under_root = {Path(folder).resolve().relative_to("/root").parts[0] for folder in mounted[:4]
                         if Path(folder).resolve().is_relative_to("/root")}
    assert facts["root"] == (sorted(python_under_root) if python_under_root else None)
    assert facts["home"] is False
    assert facts["repo_package"] == "ENOENT"
    assert facts["sdpa_lib_without_extra_folder"] in ("ModuleNotFoundError", "ImportError")
    assert facts["own_notebook"] == "ok"
    assert facts["write_workdir"] in ("EROFS", "EACCES") and facts["workdir_read_only"]
    assert facts["write_scratch"] == "ok" and facts["home_and_tmpdir"] == ["/tmp", "/tmp"]
    assert facts["hidden_folder"] == [] and facts["hidden_package"] == []
    assert facts["hidden_file"] == "EACCES"


def test_no_network_not_even_the_hosts_loopback(folders):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with listener:
        notebook = execute([f"""
import json, socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    outcome = "connected"
except OSError as error:
    outcome = type(error).__name__
print(json.dumps({{"outcome": outcome, "interfaces": [name for _, name in socket.if_nameindex()]}}))
"""], folders.workdir)
        facts = printed_json(notebook.cells[0])
        listener.settimeout(0.5)
        with pytest.raises(TimeoutError):
            listener.accept()
        with socket.create_connection(("127.0.0.1", port), timeout=3):  # the listener itself was reachable
            listener.accept()[0].close()
    assert facts["outcome"] == "ConnectionRefusedError"
    assert facts["interfaces"] == ["lo"]


def test_the_kernel_sees_and_reaches_only_its_own_processes(folders):
    notebook = execute([f"""
import json, os, signal
def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
        return "sent"
    except OSError as error:
        return type(error).__name__
pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
command_lines = [open(f"/proc/{{pid}}/cmdline", "rb").read().decode(errors="replace") for pid in pids]
print(json.dumps({{"pids": pids, "ppid": os.getppid(), "command_lines": command_lines,
                  "kill_grader": kill({os.getpid()}), "kill_parent": kill(os.getppid()), "kill_init": kill(1)}}))
""", "print('still running')"], folders.workdir)
    facts = printed_json(notebook.cells[0])
    assert facts["ppid"] == 1 and len(facts["pids"]) <= 3
    assert os.getpid() not in facts["pids"]
    own_command_line = Path("/proc/self/cmdline").read_bytes().decode(errors="replace")
    assert own_command_line not in facts["command_lines"]
    assert facts["kill_grader"] == "ProcessLookupError"
    if os.geteuid() == 0:  # the kernel runs as an unprivileged uid; bwrap's init stays root
        assert facts["kill_parent"] == facts["kill_init"] == "PermissionError"
    assert printed(notebook.cells[1]) == "still running\n"


def test_a_fork_bomb_is_stopped_and_its_sandbox_is_gone_after_shutdown(folders):
    async def scenario():
        bombed, bombed_client = await start_kernel(folders.workdir, max_processes=40)
        bombed_uid, bwrap_pid, runtime = bombed.sandbox_uid, bombed.provisioner.pid, str(bombed.runtime_folder)
        counts = json.loads(await run_code(bombed_client, """
import json, os, time
forked = failed = 0
for attempt in range(5000):
    try:
        pid = os.fork()
    except OSError:
        failed += 1
        continue
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    forked += 1
print(json.dumps({"forked": forked, "failed": failed}))
"""))
        bomb_processes = processes_with_uid(bombed_uid) if bombed_uid is not None else []
        other, other_client = await start_kernel(folders.workdir)
        other_answer = await run_code(other_client, "print(6 * 7)")
        other_uid = other.sandbox_uid
        for manager, client, now in ((bombed, bombed_client, True), (other, other_client, False)):
            client.stop_channels()
            await manager.shutdown_kernel(now=now)
        return counts, bomb_processes, other_answer, bombed_uid, other_uid, bwrap_pid, runtime

    started = time.monotonic()
    counts, bomb_processes, other_answer, bombed_uid, other_uid, bwrap_pid, runtime = asyncio.run(scenario())
    assert 0 < counts["forked"] < 40 and counts["failed"] == 5000 - counts["forked"]
    assert other_answer == "42\n"
    assert time.monotonic() - started < 30
    if os.geteuid() == 0:
        assert bombed_uid != other_uid
        assert len(bomb_processes) > counts["forked"]  # the check below can see sandbox processes
        assert processes_with_uid(bombed_uid) == [] and processes_with_uid(other_uid) == []
    assert not Path(f"/proc/{bwrap_pid}").exists()
    assert processes_mentioning(runtime) == []
    assert not Path(runtime).exists()


GRADER_THAT_CRASHES = """
import asyncio, json, sys, time
from sdpa_course.grading.sandbox import SandboxedKernelManager
manager = SandboxedKernelManager(kernel_name="python3")
asyncio.run(manager.start_kernel(cwd=sys.argv[1]))
print(json.dumps({"uid": manager.sandbox_uid, "runtime": str(manager.runtime_folder)}), flush=True)
time.sleep(60)
"""


def test_the_sandbox_dies_with_the_grader(folders):
    grader = subprocess.Popen([sys.executable, "-c", GRADER_THAT_CRASHES, str(folders.workdir)],
                              stdout=subprocess.PIPE, text=True)
    kernel = json.loads(grader.stdout.readline())
    try:
        deadline = time.monotonic() + 30
        while len(processes_mentioning(kernel["runtime"])) < 3:  # bwrap, the sandbox's init, the kernel
            assert time.monotonic() < deadline, "the kernel did not start"
            time.sleep(0.1)
        grader.kill()
        grader.wait()
        deadline = time.monotonic() + 5
        while processes_mentioning(kernel["runtime"]) or (kernel["uid"] is not None
                                                          and processes_with_uid(kernel["uid"])):
            assert time.monotonic() < deadline, "sandbox processes outlived the grader"
            time.sleep(0.1)
    finally:
        grader.kill()
        shutil.rmtree(kernel["runtime"], ignore_errors=True)  # the killed grader left it


def test_scratch_and_memory_are_bounded(folders):
    notebook = execute(["""
import errno, json, os, resource
try:
    with open("/tmp/big", "wb", buffering=0) as big:
        for megabyte in range(200):
            big.write(bytes(1 << 20))
    scratch = "wrote 200 MB"
except OSError as error:
    scratch = errno.errorcode[error.errno]
os.remove("/tmp/big")
try:
    block = bytearray(2 << 30)
    memory = "allocated 2 GiB"
except MemoryError:
    memory = "MemoryError"
print(json.dumps({"scratch": scratch, "memory": memory, "limit": resource.getrlimit(resource.RLIMIT_AS)[0]}))
""", "print('still running')"], folders.workdir, scratch_mb=64, memory_mb=1024)
    facts = printed_json(notebook.cells[0])
    assert facts == {"scratch": "ENOSPC", "memory": "MemoryError", "limit": 1024 << 20}
    assert printed(notebook.cells[1]) == "still running\n"


def test_a_busy_loop_beyond_the_cpu_limit_kills_the_kernel(folders):
    started = time.monotonic()
    with pytest.raises(DeadKernelError):
        execute(["while True:\n    pass"], folders.workdir, timeout=60, cpu_seconds=3)
    assert time.monotonic() - started < 20


def test_a_cell_past_its_timeout_is_interrupted(folders):
    started = time.monotonic()
    notebook = execute(["import time\ntime.sleep(30)", "print('after the interrupt')"], folders.workdir,
                       timeout=2, allow_errors=True,
                       client_options={"interrupt_on_timeout": True,
                                       "error_on_timeout": {"ename": "CellTimeoutError", "evalue": "",
                                                            "traceback": []}})
    assert printed(notebook.cells[1]) == "after the interrupt\n"
    assert time.monotonic() - started < 20


def test_a_kernel_that_cannot_start_leaves_nothing_behind(folders, tmp_path):
    runtime_root = tmp_path / "runtime"  # this test's own, so kernels of tests running beside it don't count
    runtime_root.mkdir()
    manager = SandboxedKernelManager(kernel_name="python3", python_folders=[str(folders.extra)],
                                     runtime_root=str(runtime_root))
    with pytest.raises(ValueError, match="python_folders"):
        asyncio.run(manager.start_kernel(cwd=str(folders.workdir)))
    assert manager.runtime_folder is None and manager.sandbox_uid is None
    assert not list(runtime_root.rglob("kernel.json"))


def test_without_bwrap_the_kernel_runs_with_its_limits_after_one_warning(folders, monkeypatch):
    monkeypatch.setattr(sandbox, "_fallback_warnings_given", set())
    status = sandbox_status(MISSING_BWRAP)
    assert not status.usable and MISSING_BWRAP in status.problem
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        notebooks = [execute(["import json, os, resource\nprint(json.dumps({'answer': 6 * 7, 'cwd': os.getcwd(), "
                              "'limits': [resource.getrlimit(resource.RLIMIT_AS)[0], "
                              "resource.getrlimit(resource.RLIMIT_CPU)[0]]}))"],
                             folders.workdir, bwrap_path=MISSING_BWRAP, memory_mb=1024, cpu_seconds=100)
                     for attempt in range(2)]
    fallback_warnings = [str(warning.message) for warning in caught
                         if issubclass(warning.category, SandboxUnavailableWarning)]
    assert len(fallback_warnings) == 1
    for protection in status.protections_off:
        assert protection in fallback_warnings[0]
    for protection in (sandbox.FILE_SYSTEM_ISOLATION, sandbox.NETWORK_ISOLATION, sandbox.PROCESS_ISOLATION):
        assert protection in status.protections_off
    for notebook in notebooks:
        assert printed_json(notebook.cells[0]) == {"answer": 42, "cwd": str(folders.workdir),
                                                   "limits": [1024 << 20, 100]}
    with pytest.raises(SandboxUnavailableError, match="no bwrap executable"):
        execute(["print('never runs')"], folders.workdir, bwrap_path=MISSING_BWRAP, strict=True)


def test_nbgrader_execute_grades_in_the_sandbox(folders):
    config = Config()
    config.SandboxedKernelManager.memory_mb = 1536
    config.SandboxedKernelManager.extra_import_folder = str(folders.extra)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import json, os, resource, sdpa_lib\n"
        "print(json.dumps({'marker': sdpa_lib.MARKER, 'uid': os.getuid(), "
        "'limit': resource.getrlimit(resource.RLIMIT_AS)[0], 'gradebook': os.path.exists(%r)}))"
        % str(folders.gradebook))])
    notebook, _ = SandboxedExecute(config=config).preprocess(notebook, {"metadata": {"path": str(folders.workdir)}})
    facts = printed_json(notebook.cells[0])
    assert facts["marker"] == STUDENT_COPY_MARKER and facts["limit"] == 1536 << 20 and not facts["gradebook"]
    if os.geteuid() == 0:
        base = SandboxedKernelManager.sandbox_uid_base.default_value
        assert base <= facts["uid"] < base + SandboxedKernelManager.sandbox_uid_count.default_value


def test_nbgrader_execute_overrides_kernel_manager_class_from_config():
    """Why SandboxedExecute exists: nbgrader 0.9 passes AsyncKernelManager as an argument, which beats config."""
    config = Config()
    config.Execute.kernel_manager_class = "sdpa_course.grading.sandbox.SandboxedKernelManager"
    assert Execute(config=config).kernel_manager_class is AsyncKernelManager
    assert SandboxedExecute(config=config).kernel_manager_class is SandboxedKernelManager
    assert TrustedExecute(config=config).kernel_manager_class is SandboxedKernelManager
