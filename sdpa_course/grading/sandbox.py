"""Run the IPython kernel that grades an untrusted notebook inside a bubblewrap sandbox.

`SandboxedKernelManager` is a jupyter_client kernel manager: give it to nbclient as
``NotebookClient(..., kernel_manager_class=SandboxedKernelManager)`` and every kernel
it starts runs under ``bwrap`` (bubblewrap), where the student's code

* sees only: its working folder (the graded notebook's folder, read-only), a scratch
  tmpfs at ``/tmp`` of ``scratch_mb`` MiB (HOME and TMPDIR point there), the Python
  installation (``python_folders``, read-only), ``/usr`` and the ``/bin``, ``/lib*``
  links, ``/etc/ld.so.cache``, a fresh ``/proc`` and a minimal ``/dev``, the extra
  import folder (read-only, first on PYTHONPATH) and the kernel's own runtime folder
  (connection file and Unix sockets, at the same absolute path as on the host).
  Nothing else of the host is mounted: not the course folder with gradebook.db,
  solutions/ or other students' submissions, not /root or /home, not the repository
  of an editable install.  The root and /dev are remounted read-only;
  ``hidden_packages`` and ``hidden_paths`` inside the mounted folders are covered by
  empty read-only mounts;
* has no network: a new network namespace holds only its own loopback, so even
  127.0.0.1 of the host is out of reach.  The grader talks to the kernel over Unix
  sockets (jupyter_client transport ``ipc``) in the runtime folder;
* sees only its own processes (new PID, IPC, UTS and cgroup namespaces, new terminal
  session), so it cannot signal the grader;
* is bounded: RLIMIT_AS (``memory_mb``), RLIMIT_CPU (``cpu_seconds``: the kernel is
  killed when it is spent), RLIMIT_NPROC (``max_processes``, threads count too) and the
  tmpfs size of the scratch folder.  The limits are per process, so memory and CPU
  time of a whole sandbox are at most ``max_processes`` times those numbers;
* is torn down with the kernel: ``--die-with-parent`` kills the sandbox if bwrap or
  the grader dies, and on cleanup the manager kills the sandbox's PID 1 (through a
  pidfd, so never a recycled pid) and waits until it is gone, which ends every
  process of the namespace.

The user id.  RLIMIT_NPROC counts the processes of a real user id and is not enforced
for root, even inside a user namespace.  So:

* when the grader runs as root, bwrap runs as root without a user namespace (root can
  bind the Python installation even under a 0700 /root), keeps only CAP_SETUID and
  CAP_SETGID, and a small launcher inside switches to a uid of its own before it
  applies the limits and starts the kernel.  Each running kernel holds a different uid
  of ``sandbox_uid_base`` .. ``sandbox_uid_base + sandbox_uid_count - 1`` (claimed by
  a lock file), so a fork bomb in one sandbox never uses up the process count of
  another.  The runtime folder and the connection file belong to that uid; the
  working folder and the extra import folder must be readable by others (o+rx);
* otherwise bwrap makes a user namespace and the kernel keeps the grader's uid: the
  process count is then kept per user namespace (Linux 5.14 and later), again one
  count per sandbox.

When bwrap is missing or cannot make its namespaces here (`sandbox_status` tries it
once per process), the manager starts the kernel unsandboxed, with only the memory and
CPU-time limits, and warns once (`SandboxUnavailableWarning`) with the list of
protections that are off; with ``strict = True`` it raises `SandboxUnavailableError`.

Interrupts go to the kernel as ``interrupt_request`` messages, because a signal to
bwrap would not reach it.  Note that ``--die-with-parent`` follows the *thread* that
started the kernel: start kernels from a thread that outlives them (nbclient does).

nbgrader's ``Execute`` preprocessor passes ``kernel_manager_class=AsyncKernelManager``
to nbclient as a constructor argument, which wins over ``c.Execute.kernel_manager_class``
in a config file, so the course's :class:`~sdpa_course.grading.trusted_execute.TrustedExecute`
(an ``Execute``) sets this manager in its constructor.  The settings are traitlets:
``c.SandboxedKernelManager.memory_mb = 2048`` and so on.
"""
from __future__ import annotations

import dataclasses
import fcntl
import functools
import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, Dict, Int, List, Unicode

from ..i18n.messages import N_, _

__all__ = [
    "SandboxStatus",
    "SandboxUnavailableError",
    "SandboxUnavailableWarning",
    "SandboxedKernelManager",
    "sandbox_status",
]

SCRATCH_FOLDER = "/tmp"
"""Where the size-bounded scratch tmpfs is mounted inside the sandbox."""

NAMESPACE_OPTIONS = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                     "--unshare-cgroup-try", "--die-with-parent", "--new-session")
"""bwrap options that give the sandbox its own namespaces and tie its life to the grader."""

FILE_SYSTEM_ISOLATION = N_("file-system isolation")
NETWORK_ISOLATION = N_("network isolation")
PROCESS_ISOLATION = N_("process isolation")
PROCESS_COUNT_LIMIT = N_("the process-count limit")
SCRATCH_SIZE_LIMIT = N_("the scratch-size limit")
UNPRIVILEGED_USER = N_("an unprivileged user id")

SANDBOX_END_TIMEOUT = 10.0
"""Seconds to wait for the sandbox's processes to be gone after they were killed."""

# The kernel's first program, run by its interpreter as ``python -I -S -c`` (inside bwrap
# when it is usable): switch to the sandbox uid if one is given (>= 0), set the limits
# that are > 0, then become the kernel.
_LIMIT_THEN_EXEC_KERNEL = """\
import os, resource, sys
uid, memory_bytes, cpu_seconds, max_processes = (int(value) for value in sys.argv[1:5])
if uid >= 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
if memory_bytes > 0:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
if cpu_seconds > 0:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
if max_processes > 0:
    resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))
os.execv(sys.argv[5], sys.argv[5:])
"""


class SandboxUnavailableError(RuntimeError):
    """bubblewrap cannot sandbox the kernel here and ``strict`` forbids running it without."""


class SandboxUnavailableWarning(RuntimeWarning):
    """A kernel runs without the sandbox, so only its memory and CPU-time limits apply."""


@dataclasses.dataclass(frozen=True)
class SandboxStatus:
    """Whether bubblewrap can sandbox kernels on this machine.

    Attributes
    ----------
    usable : bool
        True when a trial ``bwrap ... true`` with the sandbox's namespaces succeeded.
    bwrap : str or None
        The bwrap executable found, or None.
    problem : str
        Why bwrap is not usable; empty when it is.
    protections_off : tuple of str
        What a kernel lacks when it runs here: empty when ``usable``.
    """

    usable: bool
    bwrap: str | None
    problem: str
    protections_off: tuple[str, ...]

    def fallback_sentence(self) -> str:
        """The warning given when kernels run without the sandbox."""
        *most, last = (_(protection) for protection in self.protections_off)
        return _("bubblewrap cannot sandbox the grading kernel here ({problem}), so it runs without {most} and "
                 "{last}; only the memory and CPU-time limits apply.").format(problem=self.problem,
                                                                             most=_(", ").join(most), last=last)


@functools.lru_cache(maxsize=None)
def sandbox_status(bwrap: str = "bwrap") -> SandboxStatus:
    """Find ``bwrap`` and try it once with the sandbox's namespaces (cached per argument).

    Parameters
    ----------
    bwrap : str
        Name on PATH or path of the bubblewrap executable.

    Returns
    -------
    SandboxStatus
    """
    executable = shutil.which(bwrap)
    if executable is None:
        problem = _("no bwrap executable {name!r} (Debian package: bubblewrap)").format(name=bwrap)
    else:
        trial = [executable, *_bwrap_namespace_options(), *_system_mount_options(),
                 "--proc", "/proc", "--dev", "/dev", "--size", str(1 << 20), "--tmpfs", SCRATCH_FOLDER,
                 "--", shutil.which("true") or "/bin/true"]
        try:
            result = subprocess.run(trial, capture_output=True, text=True, timeout=30, check=False)
            problem = "" if result.returncode == 0 else _("'bwrap ... true' failed with exit code {code}: {message}").format(
                code=result.returncode, message=result.stderr.strip())
        except (OSError, subprocess.TimeoutExpired) as error:
            problem = _("'bwrap ... true' could not run: {error}").format(error=error)
    if not problem:
        return SandboxStatus(usable=True, bwrap=executable, problem="", protections_off=())
    protections_off = [FILE_SYSTEM_ISOLATION, NETWORK_ISOLATION, PROCESS_ISOLATION,
                       PROCESS_COUNT_LIMIT, SCRATCH_SIZE_LIMIT]
    if os.geteuid() == 0:
        protections_off.append(UNPRIVILEGED_USER)
    return SandboxStatus(usable=False, bwrap=executable, problem=problem, protections_off=tuple(protections_off))


_fallback_warnings_given: set[str] = set()


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels run in a bubblewrap sandbox (see the module docstring)."""

    memory_mb = Int(2048, help="Address-space limit (RLIMIT_AS) of each sandboxed process, in MiB.").tag(config=True)
    cpu_seconds = Int(600, help="CPU-time limit (RLIMIT_CPU) of each sandboxed process, in seconds; "
                                "the kernel is killed when it has used them up.").tag(config=True)
    max_processes = Int(64, help="Process limit (RLIMIT_NPROC) of the sandbox, threads included.").tag(config=True)
    scratch_mb = Int(256, help="Size of the writable scratch tmpfs (HOME, TMPDIR), in MiB.").tag(config=True)
    workdir = Unicode("", help="The kernel's read-only working folder; empty: the cwd given to start_kernel "
                               "(nbclient gives the notebook's folder).").tag(config=True)
    extra_import_folder = Unicode("", help="A read-only folder put first on the kernel's PYTHONPATH, "
                                           "e.g. the student-side copy of sdpa_lib.").tag(config=True)
    python_folders = List(Unicode(), help="Read-only Python installation folders; empty: the grader's "
                                          "sys.base_prefix, sys.prefix and exec prefixes.").tag(config=True)
    hidden_packages = List(Unicode(), ["sdpa_lib", "sdpa_course"],
                           help="Top-level packages or modules whose copy installed in the Python folders "
                                "(found as the grader would import it) is covered by an empty mount; the "
                                "extra import folder comes first on the path anyway.").tag(config=True)
    hidden_paths = List(Unicode(), help="Further files or folders inside the mounted folders to cover "
                                        "with an empty mount.").tag(config=True)
    extra_env = Dict(Unicode(), help="Environment variables for the kernel besides PATH, HOME, TMPDIR, "
                                     "PYTHONPATH, LANG, MPLBACKEND and the BLAS thread counts.").tag(config=True)
    bwrap_path = Unicode("bwrap", help="Name or path of the bubblewrap executable.").tag(config=True)
    strict = Bool(False, help="Raise SandboxUnavailableError instead of running an unsandboxed kernel "
                              "when bwrap is not usable.").tag(config=True)
    runtime_root = Unicode("", help="Where each kernel's runtime folder (connection file, sockets) is "
                                    "made; empty: the system temporary folder.").tag(config=True)
    sandbox_uid_base = Int(1_900_000_000, help="First uid of the range the kernels run as when the grader "
                                               "is root; one uid per running kernel.").tag(config=True)
    sandbox_uid_count = Int(1000, help="Number of uids in that range: the most kernels running at once.").tag(
        config=True)

    _runtime_folder: Path | None = None
    _working_folder: Path | None = None
    _sandbox_uid: int | None = None
    _uid_lock_fd: int | None = None
    _sandbox_init_pidfd: int | None = None

    @property
    def sandboxed(self) -> bool:
        """Whether this manager's kernels run in the sandbox (bwrap is usable here)."""
        return sandbox_status(self.bwrap_path).usable

    @property
    def sandbox_uid(self) -> int | None:
        """The uid the running kernel has outside its namespaces, or None when it keeps the grader's."""
        return self._sandbox_uid

    @property
    def runtime_folder(self) -> Path | None:
        """The kernel's runtime folder (connection file and sockets), while it exists."""
        return self._runtime_folder

    async def _async_pre_start_kernel(self, **kw):
        """Check the sandbox, make the runtime folder, claim a uid, and put the connection file and sockets there.

        Parameters
        ----------
        **kw
            The arguments of ``start_kernel``; ``cwd`` is the working folder unless ``workdir`` is set.

        Returns
        -------
        tuple
            The kernel command and the launch arguments, as jupyter_client's method returns them.

        Raises
        ------
        SandboxUnavailableError
            When bwrap is not usable and ``strict`` is set.
        """
        status = sandbox_status(self.bwrap_path)
        if not status.usable:
            if self.strict:
                raise SandboxUnavailableError(_("bubblewrap cannot sandbox the grading kernel: {problem}").format(
                    problem=status.problem))
            sentence = status.fallback_sentence()
            if sentence not in _fallback_warnings_given:
                _fallback_warnings_given.add(sentence)
                warnings.warn(sentence, SandboxUnavailableWarning, stacklevel=2)
        self._working_folder = self._resolve_working_folder(kw.get("cwd"))
        if status.usable:
            self.kernel_spec.interrupt_mode = "message"
        try:
            if self._runtime_folder is None:
                self._make_runtime_folder(root_owned_sandbox=status.usable and os.geteuid() == 0)
            self.transport = "ipc"
            self.ip = str(self._runtime_folder / "kernel")
            self.connection_file = str(self._runtime_folder / "kernel.json")
            kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
            if self._sandbox_uid is not None:
                os.chown(self.connection_file, self._sandbox_uid, self._sandbox_uid)
        except BaseException:
            self._free_runtime_folder_and_uid()
            raise
        return kernel_cmd, kw

    pre_start_kernel = _async_pre_start_kernel

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        """Start ``kernel_cmd`` under the resource-limit launcher, inside bwrap when it is usable.

        On failure the runtime folder and the uid are freed before the error propagates,
        since nbclient does not clean up a kernel that did not start.
        """
        try:
            await self._launch_limited_kernel(kernel_cmd, **kw)
        except BaseException:
            self._end_sandbox()
            self._free_runtime_folder_and_uid()
            raise

    _launch_kernel = _async_launch_kernel

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        """Clean up as jupyter_client does, then end the sandbox and, unless restarting, free its folder and uid."""
        await super()._async_cleanup_resources(restart=restart)
        self._end_sandbox()
        if not restart:
            self._free_runtime_folder_and_uid()

    cleanup_resources = _async_cleanup_resources

    async def _launch_limited_kernel(self, kernel_cmd: list[str], **kw) -> None:
        """Start ``kernel_cmd`` through the limit launcher, in bwrap when it is usable; keep a pidfd of bwrap's init."""
        self._check_kernel_interpreter(kernel_cmd[0])
        limited_cmd = [kernel_cmd[0], "-I", "-S", "-c", _LIMIT_THEN_EXEC_KERNEL,
                       str(-1 if self._sandbox_uid is None else self._sandbox_uid),
                       str(self.memory_mb << 20), str(self.cpu_seconds),
                       str(self.max_processes if self.sandboxed else 0), *kernel_cmd]
        kw["cwd"] = str(self._working_folder)
        if not self.sandboxed:
            scratch = self._runtime_folder / "scratch"
            scratch.mkdir(exist_ok=True)
            kw["env"] = self._kernel_environment(kernel_cmd[0], str(scratch))
            await super()._async_launch_kernel(limited_cmd, **kw)
            return
        info_read, info_write = os.pipe()
        kw["env"] = {"PATH": os.defpath}
        kw["pass_fds"] = (info_write,)
        try:
            await super()._async_launch_kernel(
                self._bwrap_command(limited_cmd, info_fd=info_write), **kw)
        finally:
            os.close(info_write)
        with os.fdopen(info_read, "rb") as info:
            sandbox_info = info.read()
        if not sandbox_info:
            exit_code = self.provisioner.process.wait()
            raise RuntimeError(_("bwrap exited with code {code} before it started the sandbox; its message is on the "
                                 "grader's stderr").format(code=exit_code))
        self._sandbox_init_pidfd = os.pidfd_open(json.loads(sandbox_info)["child-pid"])

    def _free_runtime_folder_and_uid(self) -> None:
        """Remove the runtime folder and give the uid back to the pool."""
        if self._runtime_folder is not None:
            shutil.rmtree(self._runtime_folder, ignore_errors=True)
            self._runtime_folder = None
        if self._uid_lock_fd is not None:
            os.close(self._uid_lock_fd)
            self._uid_lock_fd = None
            self._sandbox_uid = None

    def _resolve_working_folder(self, cwd: str | None) -> Path:
        """The folder the kernel starts in: ``workdir``, else ``cwd``; it must exist."""
        folder = self.workdir or cwd
        if not folder:
            raise ValueError(_("SandboxedKernelManager has no working folder for the kernel: set "
                               "SandboxedKernelManager.workdir or start the kernel with cwd= (nbclient passes "
                               "resources['metadata']['path'])"))
        path = Path(folder).resolve()
        if not path.is_dir():
            raise FileNotFoundError(_("the kernel's working folder {path} is not a folder").format(path=path))
        return path

    def _make_runtime_folder(self, root_owned_sandbox: bool) -> None:
        """Make the kernel's runtime folder; when the grader is root, claim a uid and give the folder to it."""
        root = Path(self.runtime_root or tempfile.gettempdir())
        if root_owned_sandbox:
            for folder in filter(None, (self.extra_import_folder, self._working_folder)):
                if os.stat(folder).st_mode & 0o005 != 0o005:
                    raise PermissionError(_("{folder} must be readable by others (chmod o+rx): the kernel runs as an "
                                            "unprivileged uid").format(folder=folder))
            self._sandbox_uid, self._uid_lock_fd = _claim_sandbox_uid(
                self.sandbox_uid_base, self.sandbox_uid_count, root / "sdpa-sandbox-uids")
        self._runtime_folder = Path(tempfile.mkdtemp(prefix="sdpa-sandbox-", dir=root))
        if self._sandbox_uid is not None:
            os.chown(self._runtime_folder, self._sandbox_uid, self._sandbox_uid)

    def _check_kernel_interpreter(self, executable: str) -> None:
        """Raise when the kernel's interpreter would not be visible inside the sandbox."""
        if self.sandboxed and not any(_is_within(Path(executable), folder)
                                      for folder in [*self._python_folders(), Path("/usr")]):
            raise ValueError(_("the kernel's interpreter {executable} is outside the folders mounted in the sandbox; "
                               "add its installation to SandboxedKernelManager.python_folders").format(
                executable=executable))

    def _python_folders(self) -> list[Path]:
        """The Python installation folders to mount, without duplicates."""
        folders = self.python_folders or [sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix]
        return sorted({Path(folder).resolve() for folder in folders})

    def _kernel_environment(self, interpreter: str, scratch: str) -> dict[str, str]:
        """The kernel's whole environment: nothing of the grader's is passed on.

        JPY_PARENT_PID names the kernel's parent for ipykernel's parent poller: in the
        sandbox that is bwrap's PID 1, which ipykernel takes as "no poller needed".
        """
        environment = {
            "JPY_PARENT_PID": "1" if self.sandboxed else str(os.getpid()),
            "PATH": os.pathsep.join([str(Path(interpreter).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "PYTHONNOUSERSITE": "1",
            "MPLBACKEND": "Agg",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        if self.extra_import_folder:
            environment["PYTHONPATH"] = str(Path(self.extra_import_folder).resolve())
        environment.update(self.extra_env)
        return environment

    def _hidden_paths(self, read_only: list[Path]) -> list[Path]:
        """The ``hidden_paths`` inside ``read_only`` and the ``hidden_packages`` installed in the Python folders.

        A package is located as the grader would import it, without importing it.
        """
        def inside(path: Path, folders: list[Path]) -> bool:
            return path.exists() and any(_is_within(path, folder) for folder in folders)

        hidden = [Path(path).resolve() for path in self.hidden_paths]
        hidden = [path for path in hidden if inside(path, read_only)]
        for name in self.hidden_packages:
            spec = importlib.util.find_spec(name)
            if spec is None:
                continue
            locations = spec.submodule_search_locations or ([spec.origin] if spec.has_location else [])
            hidden += [path for path in (Path(location).resolve() for location in locations)
                       if inside(path, self._python_folders())]
        return hidden

    def _bwrap_command(self, limited_cmd: list[str], info_fd: int) -> list[str]:
        """The bwrap command line that runs ``limited_cmd`` in the sandbox."""
        read_only = [*self._python_folders(), self._working_folder]
        if self.extra_import_folder:
            read_only.append(Path(self.extra_import_folder).resolve())
        mount_points = [*read_only, self._runtime_folder]
        arguments = [sandbox_status(self.bwrap_path).bwrap, *_bwrap_namespace_options(),
                     "--info-fd", str(info_fd)]
        if self._sandbox_uid is not None:
            arguments += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        arguments += _system_mount_options()
        arguments += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
                      "--perms", "1777", "--size", str(self.scratch_mb << 20), "--tmpfs", SCRATCH_FOLDER]
        # bwrap 0.8 makes missing parent folders 0700, which an unprivileged uid cannot enter.
        for parent in _parents_to_create(mount_points):
            arguments += ["--perms", "0755", "--dir", str(parent)]
        for folder in read_only:
            arguments += ["--ro-bind", str(folder), str(folder)]
        arguments += ["--bind", str(self._runtime_folder), str(self._runtime_folder)]
        for hidden in self._hidden_paths(read_only):
            if hidden.is_dir():
                arguments += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
            else:
                arguments += ["--ro-bind", "/dev/null", str(hidden)]
        arguments += ["--remount-ro", "/", "--chdir", str(self._working_folder), "--clearenv"]
        for name, value in self._kernel_environment(limited_cmd[0], SCRATCH_FOLDER).items():
            arguments += ["--setenv", name, value]
        return [*arguments, "--", *limited_cmd]

    def _end_sandbox(self) -> None:
        """Kill the sandbox's PID 1, which ends all its processes, and wait until it is gone."""
        if self._sandbox_init_pidfd is None:
            return
        pidfd, self._sandbox_init_pidfd = self._sandbox_init_pidfd, None
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it has ended already
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        ended = poller.poll(SANDBOX_END_TIMEOUT * 1000)
        os.close(pidfd)
        if not ended:
            self.log.warning("the sandbox of kernel %s was killed but had not ended after %s s",
                             self.kernel_id, SANDBOX_END_TIMEOUT)


def _bwrap_namespace_options() -> list[str]:
    """Namespace options; without root, bwrap also needs a user namespace."""
    return [*NAMESPACE_OPTIONS, *([] if os.geteuid() == 0 else ["--unshare-user"])]


def _system_mount_options() -> list[str]:
    """Read-only /usr, the /bin, /sbin and /lib* links or folders, and the dynamic linker's cache."""
    options = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            options += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            options += ["--ro-bind", name, name]
    if os.path.exists("/etc/ld.so.cache"):
        options += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return options


def _parents_to_create(mount_points: list[Path]) -> list[Path]:
    """The folders above the mount points, outermost first, except / and /tmp (the scratch)."""
    parents = {parent for point in mount_points for parent in point.parents}
    return sorted(parents - {Path("/"), Path(SCRATCH_FOLDER)}, key=lambda path: len(path.parts))


def _is_within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies below it."""
    return path == folder or folder in path.parents


def _claim_sandbox_uid(first_uid: int, count: int, lock_folder: Path) -> tuple[int, int]:
    """Lock the first free uid of the range; return it and the lock's descriptor (close it to free the uid).

    A uid is free when no other kernel holds its lock file and no process runs as it
    (a sandbox left by an older grader would otherwise share the process count).
    """
    lock_folder.mkdir(mode=0o700, exist_ok=True)
    if lock_folder.stat().st_uid != os.geteuid():
        raise PermissionError(_("the sandbox uid lock folder {folder} belongs to another user").format(
            folder=lock_folder))
    busy_uids = _real_uids_of_processes()
    for uid in range(first_uid, first_uid + count):
        if uid in busy_uids:
            continue
        lock_fd = os.open(lock_folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            continue
        return uid, lock_fd
    raise RuntimeError(_("all {count} sandbox uids from {first} are held by running kernels or other processes; "
                         "raise SandboxedKernelManager.sandbox_uid_count").format(count=count, first=first_uid))


def _real_uids_of_processes() -> set[int]:
    """The real uids of the processes running now."""
    uids = set()
    for status_file in Path("/proc").glob("[0-9]*/status"):
        try:
            uid_line = next(line for line in status_file.read_text().splitlines() if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue  # the process ended meanwhile
        uids.add(int(uid_line.split()[1]))
    return uids
