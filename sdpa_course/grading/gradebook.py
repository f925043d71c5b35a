"""The course's nbgrader gradebook as the class's grading uses it: one writer, hand grades kept, backups.

Each student is autograded by a worker process in a private course folder with a snapshot of the
gradebook (:mod:`~sdpa_course.grading.worker`); what nbgrader wrote there comes back as a
*record* (:func:`autograde_record`) and the grading command, the only process that writes the
course's gradebook, merges it with :func:`merge_records`.  The merge sets only what autograding
owns (auto scores, auto comments, the timestamp and late penalties): the manual scores, comments
and extra credit given in formgrader stay, and a test whose hand score now overrides a new
auto score is flagged for review, as nbgrader's own ``autograde --force`` does.
"""
from __future__ import annotations

import shutil
import warnings
from datetime import datetime
from pathlib import Path


def gradebook_url(course: Path) -> str:
    return f"sqlite:///{Path(course) / 'gradebook.db'}"


def _open(course: Path):
    from nbgrader.api import Gradebook
    return Gradebook(gradebook_url(course))


def submission_scores(course: Path, assignment: str, student: str) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(notebook, grade_id): (score, max_score)}`` of the student's graded submission (a hand score counts)."""
    return class_scores(course, assignment, [student])[student]


def class_scores(course: Path, assignment: str, students) -> dict[str, dict[tuple[str, str], tuple[float, float]]]:
    """:func:`submission_scores` of each student, read in one session."""
    with _open(course) as gradebook:
        return {student: {(notebook.name, grade.name): (grade.score, grade.max_score)
                          for notebook in gradebook.find_submission(assignment, student).notebooks
                          for grade in notebook.grades} for student in students}


def autograde_record(course: Path, assignment: str, student: str) -> dict:
    """What nbgrader's autograde wrote for one submission: ``timestamp`` and, per notebook, the late penalty,
    the auto score of each test (``grades``) and the auto comment of each answer (``comments``)."""
    with _open(course) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return {"timestamp": submission.timestamp.isoformat() if submission.timestamp else None,
                "notebooks": {notebook.name: {"late_penalty": notebook.late_submission_penalty,
                                              "grades": {grade.name: grade.auto_score for grade in notebook.grades},
                                              "comments": {comment.name: comment.auto_comment
                                                           for comment in notebook.comments}}
                              for notebook in submission.notebooks}}


def merge_records(course: Path, assignment: str, records: dict[str, dict]) -> None:
    """Write ``{student: autograde record}`` into the course's gradebook in one session, keeping every hand grade."""
    from sqlalchemy.exc import SAWarning
    with _open(course) as gradebook, warnings.catch_warnings():
        # nbgrader's update_or_create_submission warns about its own session's autoflush: noise, not ours to fix
        warnings.filterwarnings("ignore", category=SAWarning)
        for student, record in records.items():
            _merge(gradebook, assignment, student, record)
        gradebook.db.commit()


def _merge(gradebook, assignment: str, student: str, record: dict) -> None:
    gradebook.update_or_create_student(student)
    timestamp = datetime.fromisoformat(record["timestamp"]) if record.get("timestamp") else None
    gradebook.update_or_create_submission(assignment, student, timestamp=timestamp)
    for name, notebook in record["notebooks"].items():
        gradebook.find_submission_notebook(name, assignment, student).late_submission_penalty = \
            notebook["late_penalty"]
        for grade_id, auto_score in notebook["grades"].items():
            grade = gradebook.find_grade(grade_id, name, assignment, student)
            grade.auto_score = auto_score
            grade.needs_manual_grade = grade.manual_score is not None or auto_score is None
        for cell_id, auto_comment in notebook["comments"].items():
            gradebook.find_comment(cell_id, name, assignment, student).auto_comment = auto_comment


def hand_graded(course: Path, assignment: str) -> set[str]:
    """Students whose submission of ``assignment`` has a manual score, a grader's comment or extra credit."""
    from nbgrader.api import MissingEntry
    if not (Path(course) / "gradebook.db").exists():
        return set()
    with _open(course) as gradebook:
        try:
            submissions = gradebook.find_assignment(assignment).submissions
        except MissingEntry:
            return set()
        return {submission.student.id for submission in submissions
                if any(grade.manual_score is not None or grade.extra_credit for notebook in submission.notebooks
                       for grade in notebook.grades)
                or any(comment.manual_comment for notebook in submission.notebooks for comment in notebook.comments)}


def has_assignment(course: Path, assignment: str) -> bool:
    """True if ``nbgrader generate_assignment`` has recorded the assignment (its tests) in the course's gradebook."""
    from nbgrader.api import MissingEntry
    if not (Path(course) / "gradebook.db").exists():
        return False
    with _open(course) as gradebook:
        try:
            gradebook.find_assignment(assignment)
            return True
        except MissingEntry:
            return False


def graded_students(course: Path, assignment: str) -> set[str]:
    """Students whose submission of ``assignment`` is in the gradebook."""
    from nbgrader.api import MissingEntry
    with _open(course) as gradebook:
        try:
            return {submission.student.id for submission in gradebook.find_assignment(assignment).submissions}
        except MissingEntry:
            return set()


def remove_submissions(course: Path, assignment: str, students) -> None:
    """Remove the students' submissions of ``assignment`` and every grade of them (hand grades too)."""
    from nbgrader.api import MissingEntry
    with _open(course) as gradebook:
        for student in students:
            try:
                gradebook.remove_submission(assignment, student)
            except MissingEntry:
                continue


def back_up(course: Path) -> Path:
    """Copy ``gradebook.db`` to ``gradebook.db.backup-<date>T<time>`` beside it; return the copy."""
    source = Path(course) / "gradebook.db"
    copy = source.with_name(f"gradebook.db.backup-{datetime.now().strftime('%Y%m%dT%H%M%S')}")
    shutil.copy2(source, copy)
    return copy
