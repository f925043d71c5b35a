"""Grade submissions with nbgrader's own autograder, each student in a bounded worker process.

Grading runs student code.  :func:`grade_students` starts a worker, ``python -m
sdpa_course.grading.worker`` (:mod:`~sdpa_course.grading.worker`), in which nbgrader autogrades
a batch of submissions one after another; the worker runs in its own session, so the kernels it
starts are stopped with it, under the limits a process can set on itself:

* ``RLIMIT_AS``: the address space of the worker and of the kernel (each) is capped, so a
  memory hog gets ``MemoryError`` or dies instead of taking the machine down;
* ``RLIMIT_CPU``: CPU seconds, the wall-clock timeout per student of the batch;
* a wall-clock timeout per student: when no result has come for that long, the whole process
  group is killed, and the students it had not finished are graded again, one per worker.

The per-cell timeout (``Execute.timeout`` with ``interrupt_on_timeout``) is nbgrader's, set in
``nbgrader_config.py``.  Inside the worker the verdict is decided outside the student's
kernel (:mod:`~sdpa_course.grading.trusted_execute`), and the kernel runs in a bubblewrap
sandbox with its own memory, CPU-time and process limits (:mod:`~sdpa_course.grading.sandbox`);
``Limits.memory_mb`` and ``Limits.timeout`` are passed on to it, and ``Limits.strict``
refuses to grade where the sandbox is not available.

:func:`grade_class` grades several students at once, each worker in a private folder with a
snapshot of the gradebook; only the calling process writes the course's gradebook, merging each
result with the hand grades kept (:mod:`~sdpa_course.grading.gradebook`).  A submission that
cannot be graded (the kernel died, the notebook can't be read, the time ran out) is reported as
``ungradable`` with the reason, never as a silent 0, and the gradebook keeps what it had.
"""
from __future__ import annotations

import contextlib
import html
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..i18n.language import spoken_language
from ..i18n.messages import N_, _

GRADED, UNGRADABLE = N_("graded"), N_("ungradable")  # a status is data (export, gradebook): translated where shown
# Kernels and nbgrader reserve address space per BLAS thread; one thread keeps the memory cap meaningful.
SINGLE_THREADED = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
# What nbgrader's log says when a notebook could not be graded, and the reason we report (first match wins).
FAILURE_REASONS = (
    (r"DeadKernelError|Kernel died|kernel died", N_("the kernel died while running the notebook "
                                                    "(it exited, crashed, or hit the memory limit)")),
    (r"NotJSONError|Notebook does not appear to be JSON|Unreadable Notebook|JSONDecodeError|ValidationError",
     N_("the notebook file cannot be read (it is not a valid notebook)")),
    (r"MemoryError|Cannot allocate memory", N_("grading ran out of memory (the memory limit)")),
    (r"Missing grade cell", N_("test cells are missing and nbgrader could not put them back: the notebook is not "
                               "the released one (start again from the release, keep its cells)")),
    (r"SandboxUnavailableError", N_("the sandbox is not available here and --strict refuses to grade without it")),
    (r"UnresponsiveKernelError|TimeoutError", N_("the kernel stopped responding")),
)

BATCH = 8  # the most students one worker grades (its start, importing nbgrader, takes seconds)
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
    record: dict | None = None  # what autograding wrote, for the gradebook (see gradebook.merge_records)


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


def _status_text(status: int | None, limits: Limits) -> str:
    if status is None:
        return _("grading took longer than {seconds:g} s and was stopped").format(seconds=limits.timeout)
    if status < 0:
        name = signal.Signals(-status).name
        if name == "SIGXCPU":
            return _("nbgrader was killed by {signal} (the CPU time limit)").format(signal=name)
        if name == "SIGKILL":
            return _("nbgrader was killed by {signal} (the memory limit?)").format(signal=name)
        return _("nbgrader was killed by {signal}").format(signal=name)
    return _("nbgrader exited with status {status}").format(status=status)


def failure_reason(status: int | None, output: str, limits: Limits) -> str:
    """Why a submission could not be graded, in one sentence, from the grading process's exit status and log."""
    if status is None or status < 0:
        return _status_text(status, limits)
    known = reason_in_log(output)
    return known if known else _("{status}: {error}").format(status=_status_text(status, limits),
                                                             error=last_error(output))


def reason_in_log(log: str) -> str | None:
    """The reason for the first known failure that nbgrader's log shows (see ``FAILURE_REASONS``), or None."""
    return next((_(reason) for pattern, reason in FAILURE_REASONS if re.search(pattern, log)), None)


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
    return (raised or errors or [_("see its log")])[-1]


# --- grading ---------------------------------------------------------------------------------------

def kernel_limits(limits: Limits) -> dict:
    """nbgrader options (``{"Class.trait": value}``) that give the sandboxed kernel the same limits and strictness."""
    return {"SandboxedKernelManager.memory_mb": limits.memory_mb,
            "SandboxedKernelManager.cpu_seconds": max(1, int(limits.timeout)),
            "SandboxedKernelManager.strict": limits.strict}


def grade_student(course: Path, assignment: str, student: str, limits: Limits = Limits(), *,
                  generate: bool = False, cache: Path | None = None, private: Path | None = None) -> StudentResult:
    """Autograde one student's submission in a bounded process (:mod:`.worker`).

    With ``generate`` the worker first generates the assignment into the course's gradebook
    (from ``cache`` when the same source was generated before).  With ``private`` it writes only
    there (a gradebook copy the caller put in it, ``autograded/`` and ``feedback/``), not in the course.
    """
    return grade_students(course, assignment, [student], limits, generate=generate, cache=cache,
                          private=private)[student]


def grade_students(course: Path, assignment: str, students: list[str], limits: Limits = Limits(), *,
                   generate: bool = False, cache: Path | None = None,
                   private: Path | None = None) -> dict[str, StudentResult]:
    """Autograde several students one after another in one bounded worker process: ``{student: result}``.

    Starting nbgrader takes seconds, so a worker grades a batch.  Each student still has the whole
    ``limits.timeout``: the worker is stopped when no student's result has come for that long, and
    the students it had not finished are graded again one per process, so that a submission that
    hangs or kills its worker is reported on its own.
    """
    course = Path(course).resolve()
    with tempfile.TemporaryDirectory(prefix="sdpa-job-") as folder:  # the parent's: no kernel can reach it
        job, results = Path(folder) / "job.json", Path(folder) / "results"
        results.mkdir()
        job.write_text(json.dumps({"course": str(course), "assignment": assignment, "students": students,
                                   "options": kernel_limits(limits), "generate": generate, "results": str(results),
                                   "cache": str(cache) if cache else None,
                                   "private": str(private) if private else None}))
        status, output = run_batch([sys.executable, "-m", "sdpa_course.grading.worker", str(job)], course, limits,
                                   results, len(students))
        answers = {}
        for index, student in enumerate(students):
            path = results / f"{index}.json"
            if path.is_file():
                answer = json.loads(path.read_text(encoding="utf-8"))
                answer["failed"] = [FailedTest(**test) for test in answer["failed"]]
                answers[student] = StudentResult(**answer)
    unfinished = [student for student in students if student not in answers]
    if len(students) == 1 and unfinished:
        answers[students[0]] = StudentResult(students[0], assignment, UNGRADABLE,
                                             reason=failure_reason(status, output, limits))
    else:
        for student in unfinished:
            answers[student] = grade_student(course, assignment, student, limits, generate=generate, cache=cache,
                                             private=private)
    return answers


def run_batch(command: Sequence[str], cwd: Path, limits: Limits, results: Path,
              count: int) -> tuple[int | None, str]:
    """Run a worker for ``count`` students; stop it when no new file appears in ``results`` for ``limits.timeout``.

    Returns (exit status, output), status None if it was stopped.  The CPU-time cap is
    ``limits.timeout`` per student.
    """
    batch = Limits(memory_mb=limits.memory_mb, timeout=limits.timeout * count, strict=limits.strict)
    with tempfile.TemporaryFile(mode="w+", errors="replace") as log:
        process = subprocess.Popen(command, cwd=cwd, env=child_environment(), stdout=log, stderr=subprocess.STDOUT,
                                   text=True, start_new_session=True, preexec_fn=_set_limits(batch))
        done, since, stopped = 0, time.monotonic(), False
        while process.poll() is None:
            finished = len(list(results.glob("*.json")))
            if finished > done:
                done, since = finished, time.monotonic()
            elif time.monotonic() - since > limits.timeout:
                kill_tree(process.pid)
                process.wait()
                stopped = True
            time.sleep(0.2)
        log.seek(0)
        return None if stopped else process.returncode, log.read()


def submitted_students(course: Path, assignment: str) -> list[str]:
    """Students with a folder ``submitted/<student>/<assignment>``, sorted."""
    return sorted(p.parent.name for p in (Path(course) / "submitted").glob(f"*/{assignment}") if p.is_dir())


def batches(students: list[str], jobs: int) -> list[list[str]]:
    """The students in consecutive batches, about two per job and at most :data:`BATCH` students each.

    Examples
    --------
    >>> [len(b) for b in batches([f"s{i}" for i in range(20)], 2)]
    [5, 5, 5, 5]
    >>> batches(["a", "b", "c"], 8)
    [['a'], ['b'], ['c']]
    """
    size = max(1, min(BATCH, math.ceil(len(students) / (2 * max(1, jobs)))))
    return [students[start:start + size] for start in range(0, len(students), size)]


def grade_class(course: Path, assignment: str, limits: Limits = Limits(), *, students: Iterable[str] | None = None,
                jobs: int = 1, progress: bool = True) -> list[StudentResult]:
    """Grade the students (every submitted one by default), ``jobs`` workers at a time; one failure stops nobody.

    Each worker grades a batch of students (:func:`batches`, :func:`grade_students`) on a snapshot
    of the gradebook, in a private folder; this process alone writes the course: it merges each
    result into the gradebook (hand grades kept, see :func:`.gradebook.merge_records`) and moves the
    autograded notebooks and feedback in.  A student whose grading fails keeps what the gradebook
    had.  Results come in student order.
    """
    from tqdm import tqdm
    course = Path(course).resolve()
    students = list(students) if students is not None else submitted_students(course, assignment)
    results = {}
    with tempfile.TemporaryDirectory(prefix="sdpa-class-") as folder, \
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool, \
            tqdm(total=len(students), desc=_("grading {assignment}").format(assignment=assignment), unit=_("student"),
                 disable=not progress) as bar:
        os.chmod(folder, 0o755)  # a sandboxed kernel runs as a user of its own in its autograded folder
        snapshot = Path(folder) / "gradebook.db"
        shutil.copy2(course / "gradebook.db", snapshot)
        running = {pool.submit(_grade_privately, course, assignment, batch, limits, snapshot,
                               Path(folder) / f"batch-{index}"): batch
                   for index, batch in enumerate(batches(students, jobs))}
        for done in as_completed(running):
            graded, private = done.result()
            results.update(_land(course, graded, private))
            bar.update(len(graded))
    return [results[student] for student in students]


def _grade_privately(course: Path, assignment: str, students: list[str], limits: Limits, snapshot: Path,
                     private: Path) -> tuple[dict[str, StudentResult], Path]:
    private.mkdir()
    os.chmod(private, 0o755)
    shutil.copy2(snapshot, private / "gradebook.db")
    os.chmod(private / "gradebook.db", 0o600)
    return grade_students(course, assignment, students, limits, private=private), private


def _land(course: Path, results: dict[str, StudentResult], private: Path) -> dict[str, StudentResult]:
    """Merge a batch's private grading into the course (gradebook, autograded/, feedback/); the scores are then
    the gradebook's (hand grades count)."""
    from .gradebook import class_scores, merge_records
    graded = {student: result for student, result in results.items() if result.status == GRADED}
    if not graded:
        return results
    assignment = next(iter(graded.values())).assignment
    merge_records(course, assignment, {student: result.record for student, result in graded.items()})
    for student in graded:
        for step in ("autograded", "feedback"):
            made, target = (folder / step / student / assignment for folder in (private, course))
            if target.exists():
                shutil.rmtree(target)
            if made.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(made, target)
    scores = class_scores(course, assignment, graded)
    landed = dict(results)
    for student, result in graded.items():
        mine = scores[student]
        failed = [t for t in result.failed if mine.get((t.notebook, t.grade_id), (0, 1))[0] < t.max_score]
        landed[student] = replace(result, score=sum(s for s, _ in mine.values()),
                                  max_score=sum(m for _, m in mine.values()), failed=failed, record=None)
    return landed


UNGRADABLE_PAGE = """<!DOCTYPE html>
<html lang="{language}"><head><meta charset="utf-8"><title>{title}</title></head>
<body><h1>{heading}</h1>
<p>{reason}</p>
<p>{advice}</p></body></html>
"""
HTML_LANGUAGES = {"en": "en", "zh": "zh-CN"}


def write_ungradable_feedback(course: Path, result: StudentResult) -> Path:
    """A feedback page for a submission that could not be graded, saying why (nbgrader makes none for it)."""
    folder = Path(course) / "feedback" / result.student / result.assignment
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "not_graded.html"
    assignment = html.escape(result.assignment)
    page.write_text(UNGRADABLE_PAGE.format(
        language=HTML_LANGUAGES[spoken_language()],
        title=_("{assignment}: not graded").format(assignment=assignment),
        heading=_("{assignment}: your submission could not be graded").format(assignment=assignment),
        reason=html.escape(result.reason),
        advice=_("Nothing of it was scored. Start again from the released notebook if its cells were changed, check "
                 "that it runs top to bottom (Kernel, Restart and Run All), and submit again; or ask your "
                 "instructor.")), encoding="utf-8")
    return page


def generate_class_feedback(course: Path, results: Iterable[StudentResult]) -> None:
    """A feedback page saying why for each student whose submission could not be graded.

    A graded student's feedback comes from their worker (see :func:`grade_class`).
    """
    for result in results:
        if result.status != GRADED:
            write_ungradable_feedback(course, result)
