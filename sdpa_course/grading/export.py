"""The class's grades as they are: one row per student and assignment, from the gradebook when the export runs.

Two sources, read together:

* the nbgrader gradebook: auto and manual scores, late penalties, whether a hand grade is pending,
  and the roster (names, emails, LMS ids, as ``nbgrader db student import`` loaded them);
* ``grades/status.json``, which ``sdpa-course grade`` writes: the outcome of the last grading of
  each submission, so that a submission that could not be graded says why instead of showing 0.

:func:`write_exports` writes ``grades/grades.csv`` (every row, every column), one
``grades/<assignment>.csv`` per assignment (the same rows) and ``grades/canvas.csv`` in the
layout Canvas's gradebook import reads.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable

from ..i18n.messages import N_, _
from ..json_file import write_atomically
from .autograde import GRADED, UNGRADABLE, StudentResult
from .gradebook import gradebook_url

MISSING, NEEDS_MANUAL = N_("missing"), N_("needs manual grading")  # data in the export: translated where shown
STATUS_FILE = Path("grades") / "status.json"
COLUMNS = ("student", "first_name", "last_name", "email", "lms_user_id", "assignment", "status", "auto_score",
           "manual_score", "late_penalty", "score", "max_score", "reason", "failed_tests")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


# --- the outcome of the last grading of each submission ------------------------------------------

def load_status(course: Path) -> dict:
    """``{assignment: {student: {"status", "reason", "when"}}}`` from ``grades/status.json`` ({} if absent)."""
    path = Path(course) / STATUS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as error:
        raise ValueError(_("{path} is not valid JSON ({error}); move it aside and grade again to rebuild it").format(
            path=path, error=error)) from None


def record_status(course: Path, results: Iterable[StudentResult]) -> Path:
    """Remember how each student's last grading ended (written to a temporary file, then moved over the old one)."""
    status, when = load_status(course), datetime.now().isoformat(timespec="seconds")
    for r in results:
        status.setdefault(r.assignment, {})[r.student] = {"status": r.status, "reason": r.reason, "when": when}
    path = Path(course) / STATUS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(status, indent=1, sort_keys=True).encode("utf-8")
    write_atomically(path, lambda file: file.write(text), mode=0o644)
    return path


# --- rows ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One student's standing on one assignment (scores are None where there are none)."""
    student: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    assignment: str
    status: str
    auto_score: float | None
    manual_score: float | None
    late_penalty: float | None
    score: float | None  # the total after the late penalty, as nbgrader's own export counts it
    max_score: float
    reason: str
    failed_tests: str


def class_rows(course: Path, assignments: Iterable[str] | None = None) -> list[Row]:
    """Every (student, assignment) pair of the gradebook's roster and of the last gradings, sorted."""
    from nbgrader.api import Gradebook, MissingEntry
    status = load_status(course)
    rows = []
    with Gradebook(gradebook_url(course)) as gradebook:
        chosen = list(assignments) if assignments is not None else [a.name for a in gradebook.assignments]
        roster = {student.id: student for student in gradebook.students}
        for name in chosen:
            assignment = gradebook.find_assignment(name)
            last = status.get(name, {})
            for student_id in sorted(set(roster) | set(last)):
                try:
                    submission = gradebook.find_submission(name, student_id)
                except MissingEntry:
                    submission = None
                rows.append(_row(roster.get(student_id), student_id, assignment, submission, last.get(student_id)))
    return rows


def _row(student, student_id: str, assignment, submission, last: dict | None) -> Row:
    identity = dict(student=student_id, first_name=getattr(student, "first_name", None) or "",
                    last_name=getattr(student, "last_name", None) or "", email=getattr(student, "email", None) or "",
                    lms_user_id=getattr(student, "lms_user_id", None) or "", assignment=assignment.name,
                    max_score=assignment.max_score)
    if last is not None and last["status"] == UNGRADABLE:
        kept = _(" (the gradebook keeps an earlier grading of it)") if submission is not None else ""
        return Row(**identity, status=UNGRADABLE, auto_score=None, manual_score=None, late_penalty=None, score=None,
                   reason=f"{last['reason']}{kept}", failed_tests="")
    if submission is None:
        return Row(**identity, status=MISSING, auto_score=None, manual_score=None, late_penalty=None, score=None,
                   reason=_("no submission graded"), failed_tests="")
    grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
    manual = [grade.manual_score for grade in grades if grade.manual_score is not None]
    failed = [grade.name for grade in grades if grade.cell_type == "code" and grade.score < grade.max_score]
    penalty = submission.late_submission_penalty or 0.0
    return Row(**identity, status=NEEDS_MANUAL if submission.needs_manual_grade else GRADED,
               auto_score=sum(grade.auto_score or 0.0 for grade in grades), manual_score=sum(manual) if manual else None,
               late_penalty=penalty, score=max(0.0, submission.score - penalty),
               reason=(last or {}).get("reason", ""), failed_tests=" ".join(failed))


# --- files -----------------------------------------------------------------------------------------

def _cell(value) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def write_rows(rows: list[Row], destination: Path) -> Path:
    """Our CSV: :data:`COLUMNS`, one line per row."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    with open(destination, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_cell(getattr(row, column)) for column in COLUMNS])
    return destination


def write_canvas(rows: list[Row], destination: Path) -> Path:
    """Canvas's gradebook import layout: a student per line, an assignment per column, then "Points Possible".

    The student column is "last, first"; Canvas's own user id goes to ``ID`` when the roster has it
    (``lms_user_id``), the course's student id to ``SIS User ID``.  Only a graded total is written:
    a cell is empty for a missing, ungradable or not yet hand-graded submission, and Canvas leaves an
    empty cell's grade as it was.
    """
    assignments = sorted({row.assignment for row in rows})
    maxima = {row.assignment: row.max_score for row in rows}
    students: dict[str, dict] = {}
    for row in rows:
        line = students.setdefault(row.student, {"Student": f"{row.last_name}, {row.first_name}".strip(", ")
                                                 or row.student, "ID": row.lms_user_id, "SIS User ID": row.student,
                                                 "SIS Login ID": "", "Section": ""})
        line[row.assignment] = _cell(row.score) if row.status == GRADED else ""
    destination.parent.mkdir(parents=True, exist_ok=True)
    with open(destination, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*CANVAS_IDENTITY, *assignments])
        writer.writerow(["Points Possible", "", "", "", "", *(_cell(maxima[a]) for a in assignments)])
        for student in sorted(students):
            writer.writerow([students[student].get(column, "") for column in (*CANVAS_IDENTITY, *assignments)])
    return destination


def write_exports(course: Path) -> list[Path]:
    """``grades/grades.csv``, ``grades/<assignment>.csv`` for each assignment and ``grades/canvas.csv``."""
    folder = Path(course) / "grades"
    rows = class_rows(course)
    written = [write_rows(rows, folder / "grades.csv")]
    for assignment in sorted({row.assignment for row in rows}):
        written.append(write_rows([row for row in rows if row.assignment == assignment], folder / f"{assignment}.csv"))
    written.append(write_canvas(rows, folder / "canvas.csv"))
    return written
