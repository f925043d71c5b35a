"""Grade submissions with nbgrader's own autograder, one student at a time, each in a bounded process.

Grading runs student code.  For every student :func:`grade_student` starts
``nbgrader autograde ASSIGNMENT --student=ID`` as a separate process (its own session, so
the kernel it starts is stopped with it) with the limits a process can set on itself:

* ``RLIMIT_AS``: the address space of nbgrader and of the kernel (each) is capped, so a
  memory hog gets ``MemoryError`` or dies instead of taking the machine down;
* ``RLIMIT_CPU``: CPU seconds, the same number as the wall-clock timeout;
* a wall-clock timeout, after which the whole process group is killed.

The per-cell timeout (``Execute.timeout`` with ``interrupt_on_timeout``) is nbgrader's, set in
``nbgrader_config.py``.  Inside that process the verdict is decided outside the student's
kernel (:mod:`~sdpa_course.grading.trusted_execute`), and the kernel runs in a bubblewrap
sandbox with its own memory, CPU-time and process limits (:mod:`~sdpa_course.grading.sandbox`);
``Limits.memory_mb`` and ``Limits.timeout`` are passed on to it, and ``Limits.strict``
refuses to grade where the sandbox is not available.

A submission that cannot be graded (the kernel died, the notebook can't be read, the time
ran out) is reported as ``ungradable`` with the reason, never as a silent 0; before
grading, the student's previous grades are removed so a regrade starts from clean scores.
"""
from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

GRADED, UNGRADABLE = "graded", "ungradable"
# Kernels and nbgrader reserve address space per BLAS thread; one thread keeps the memory cap meaningful.
SINGLE_THREADED = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
# What nbgrader's log says when a notebook could not be graded, and the reason we report (first match wins).
FAILURE_REASONS = (
    (r"DeadKernelError|Kernel died|kernel died", "the kernel died while running the notebook "
                                                 "(it exited, crashed, or hit the memory limit)"),
    (r"NotJSONError|Notebook does not appear to be JSON|Unreadable Notebook|JSONDecodeError|ValidationError",
     "the notebook file cannot be read (it is not a valid notebook)"),
    (r"MemoryError|Cannot allocate memory", "grading ran out of memory (the memory limit)"),
    (r"Missing grade cell", "test cells are missing and nbgrader could not put them back: the notebook is not "
                            "the released one (start again from the release, keep its cells)"),
    (r"SandboxUnavailableError", "the sandbox is not available here and --strict refuses to grade without it"),
    (r"UnresponsiveKernelError|TimeoutError", "the kernel stopped responding"),
)

EXCEPTION_LINE = re.compile(r"[\w.]*(Error|Exception|Exit|Interrupt): ")


@dataclass(frozen=True)
class Limits:
    """What one student's grading may use: address space per process (MiB), seconds (wall clock and CPU), and
    whether grading without the sandbox is refused (``strict``)."""
    memory_mb: int = 4096
    timeout: float = 900.0
    strict: bool = False


@dataclass(frozen=True)
class FailedTest:
    """A grade cell that did not get full points, with the message its error showed."""
    notebook: str
    grade_id: str
    score: float
    max_score: float
    message: str


@dataclass
class StudentResult:
    """One student's grading: ``graded`` with a score, or ``ungradable`` with the reason (and no score)."""
    student: str
    assignment: str
    status: str
    score: float | None = None
    max_score: float | None = None
    reason: str = ""
    failed: list[FailedTest] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # errors outside the tests, test cells nbgrader restored


# --- running nbgrader ------------------------------------------------------------------------------

def interpreter_path(path: str | None = None) -> str:
    """``PATH`` with this interpreter's bin folder first: nbgrader runs ``alembic`` (and jupyter its tools) by name."""
    rest = os.environ.get("PATH", "") if path is None else path
    return f"{Path(sys.executable).parent}{os.pathsep}{rest}"


def child_environment() -> dict:
    """The environment of nbgrader runs: this interpreter's bin first, headless, one thread."""
    return {**os.environ, "PATH": interpreter_path(), "SDPA_HEADLESS": "1", "MPLBACKEND": "Agg", **SINGLE_THREADED}


def nbgrader_command(*args: str) -> list[str]:
    """nbgrader run by this interpreter."""
    return [sys.executable, "-m", "nbgrader", *args]


def _set_limits(limits: Limits):
    """A ``preexec_fn`` capping the address space and the CPU time of the child (and of what it starts)."""
    memory, cpu = limits.memory_mb * 2**20, max(1, int(limits.timeout))

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    return apply


def run_limited(command: Sequence[str], cwd: Path, limits: Limits) -> tuple[int | None, str]:
    """Run ``command`` under ``limits``; return (exit status, output), status None if the time ran out."""
    process = subprocess.Popen(command, cwd=cwd, env=child_environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True,
                               preexec_fn=_set_limits(limits))
    try:
        output, _ = process.communicate(timeout=limits.timeout)
        return process.returncode, output
    except subprocess.TimeoutExpired:
        kill_tree(process.pid)
        output, _ = process.communicate()
        return None, output


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, read from /proc (empty where there is no /proc)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):  # the process ended meanwhile
            continue
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def kill_tree(pid: int) -> None:
    """Kill nbgrader's process group and every descendant: the kernel runs in a session of its own."""
    for child in descendants(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def run_nbgrader(course: Path, *args: str, limits: Limits = Limits()) -> str:
    """Run ``nbgrader <args>`` in the course folder; raise RuntimeError with its log if it fails."""
    status, output = run_limited(nbgrader_command(*args), course, limits)
    if status != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({_status_text(status, limits)}):\n{output}")
    return output


def _status_text(status: int | None, limits: Limits) -> str:
    if status is None:
        return f"grading took longer than {limits.timeout:g} s and was stopped"
    if status < 0:
        name = signal.Signals(-status).name
        cpu = " (the CPU time limit)" if name == "SIGXCPU" else " (the memory limit?)" if name == "SIGKILL" else ""
        return f"nbgrader was killed by {name}{cpu}"
    return f"nbgrader exited with status {status}"


def failure_reason(status: int | None, output: str, limits: Limits) -> str:
    """Why a submission could not be graded, in one sentence, from the grading process's exit status and log."""
    if status is None or status < 0:
        return _status_text(status, limits)
    known = reason_in_log(output)
    return known if known else f"{_status_text(status, limits)}: {last_error(output)}"


def reason_in_log(log: str) -> str | None:
    """The reason for the first known failure that nbgrader's log shows (see ``FAILURE_REASONS``), or None."""
    return next((reason for pattern, reason in FAILURE_REASONS if re.search(pattern, log)), None)


def last_error(log: str) -> str:
    r"""The last exception a log names (``RuntimeError: ...``), past nbgrader's own "see the traceback" line.

    Examples
    --------
    >>> last_error("Traceback ...\n    RuntimeError: Inconsistent checksums for cell t1\n"
    ...            "[ERROR] Please see the the above traceback for details\n"
    ...            "NbGraderException: Please see the the above traceback for details")
    'RuntimeError: Inconsistent checksums for cell t1'
    """
    lines = [line.strip() for line in log.splitlines()]
    raised = [line for line in lines if EXCEPTION_LINE.match(line) and "Please see the" not in line]
    errors = [line for line in lines if "[ERROR]" in line or "Error" in line]
    return (raised or errors or ["see its log"])[-1]


# --- the gradebook ---------------------------------------------------------------------------------

def has_assignment(course: Path, assignment: str) -> bool:
    """True if ``nbgrader generate_assignment`` has recorded the assignment (its tests) in the course's gradebook."""
    from nbgrader.api import Gradebook, MissingEntry
    if not (Path(course) / "gradebook.db").exists():
        return False
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gradebook:
        try:
            gradebook.find_assignment(assignment)
            return True
        except MissingEntry:
            return False


# --- grading ---------------------------------------------------------------------------------------

def kernel_limits(limits: Limits) -> dict:
    """nbgrader options (``{"Class.trait": value}``) that give the sandboxed kernel the same limits and strictness."""
    return {"SandboxedKernelManager.memory_mb": limits.memory_mb,
            "SandboxedKernelManager.cpu_seconds": max(1, int(limits.timeout)),
            "SandboxedKernelManager.strict": limits.strict}


def grade_student(course: Path, assignment: str, student: str, limits: Limits = Limits(), *,
                  generate: bool = False, cache: Path | None = None) -> StudentResult:
    """Autograde one student's submission from clean scores in a bounded process (:mod:`.worker`).

    With ``generate`` the worker first generates the assignment into the course's gradebook
    (from ``cache`` when the same source was generated before).
    """
    course = Path(course).resolve()
    with tempfile.TemporaryDirectory(prefix="sdpa-job-") as folder:  # the parent's: no kernel can reach it
        job, result = Path(folder) / "job.json", Path(folder) / "result.json"
        job.write_text(json.dumps({"course": str(course), "assignment": assignment, "student": student,
                                   "options": kernel_limits(limits), "generate": generate,
                                   "cache": str(cache) if cache else None, "result": str(result)}))
        status, output = run_limited([sys.executable, "-m", "sdpa_course.grading.worker", str(job)], course, limits)
        if status != 0 or not result.is_file():
            return StudentResult(student, assignment, UNGRADABLE, reason=failure_reason(status, output, limits))
        answer = json.loads(result.read_text(encoding="utf-8"))
    answer["failed"] = [FailedTest(**test) for test in answer["failed"]]
    return StudentResult(**answer)


def submitted_students(course: Path, assignment: str) -> list[str]:
    """Students with a folder ``submitted/<student>/<assignment>``, sorted."""
    return sorted(p.parent.name for p in (Path(course) / "submitted").glob(f"*/{assignment}") if p.is_dir())


def grade_class(course: Path, assignment: str, limits: Limits = Limits(), *, students: Iterable[str] | None = None,
                progress: bool = True) -> list[StudentResult]:
    """Grade every submitted student (one bounded process each) with a progress bar; one failure stops nobody."""
    from tqdm import tqdm
    students = list(students) if students is not None else submitted_students(course, assignment)
    results = []
    for student in tqdm(students, desc=f"grading {assignment}", unit="student", disable=not progress):
        results.append(grade_student(course, assignment, student, limits))
    return results


def generate_feedback(course: Path, result: StudentResult, limits: Limits = Limits()) -> Path:
    """``nbgrader generate_feedback`` for one graded student; return the feedback folder."""
    run_nbgrader(Path(course), "generate_feedback", result.assignment, f"--student={result.student}", "--force",
                 limits=limits)
    return Path(course) / "feedback" / result.student / result.assignment


def export_grades(course: Path, destination: Path, limits: Limits = Limits()) -> Path:
    """nbgrader's own CSV export of the whole gradebook (ungradable submissions appear there as 0: see ours)."""
    run_nbgrader(Path(course), "export", f"--CsvExportPlugin.to={destination}", limits=limits)
    return destination


STATUS_COLUMNS = ("student", "assignment", "status", "score", "max_score", "reason", "failed_tests")


def write_status_csv(results: Iterable[StudentResult], destination: Path) -> Path:
    """Our grades CSV: one row per student with a status column; an ungradable row has no score, only its reason."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    with open(destination, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(STATUS_COLUMNS)
        for r in results:
            writer.writerow([r.student, r.assignment, r.status, "" if r.score is None else r.score,
                             "" if r.max_score is None else r.max_score, r.reason,
                             " ".join(f"{t.grade_id}" for t in r.failed)])
    return destination


def generate_class_feedback(course: Path, results: Iterable[StudentResult], limits: Limits = Limits()) -> list[str]:
    """Feedback for every graded student (one nbgrader run, or one per student if that fails); return problems."""
    graded = [r for r in results if r.status == GRADED]
    if not graded:
        return []
    try:
        run_nbgrader(Path(course), "generate_feedback", graded[0].assignment, "--force", limits=limits)
        return []
    except RuntimeError:
        problems = []
        for result in graded:
            try:
                generate_feedback(course, result, limits)
            except RuntimeError as error:
                problems.append(f"{result.student}: no feedback ({str(error).splitlines()[0]})")
        return problems
