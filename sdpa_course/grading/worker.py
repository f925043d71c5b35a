"""The bounded grading process: nbgrader's steps for one student run in it, and it reports the result as data.

:func:`~sdpa_course.grading.autograde.grade_student` starts ``python -m
sdpa_course.grading.worker JOB`` under the memory and time limits of one student.  In that one
process nbgrader runs through its Python API (``NbGraderAPI``, the one formgrader uses), with the
same configuration files as the ``nbgrader`` command: the assignment is generated first if the job
asks for it (from a cache of generated gradebooks, see :func:`generated_gradebook`), then a copy of
the student's submission is repaired for editing accidents (a pasted or renamed graded cell,
:mod:`~sdpa_course.grading.repair`) and autograded, and the scores, failed tests and notes are
read back from the gradebook and the autograded notebooks; the course's ``submitted/`` is only
read.  One worker grades a batch of students one after another; each result goes to a file of
the job's ``results`` folder as soon as it is known, which the student's kernel cannot reach (it
runs in its sandbox; the folder is the parent's).

Starting nbgrader once instead of once per step matters: importing it takes seconds.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import nbformat

from ..i18n.messages import _
from ..json_file import write_atomically
from .autograde import GRADED, UNGRADABLE, FailedTest, StudentResult, last_error, reason_in_log
from .gradebook import autograde_record, gradebook_url, submission_scores
from .repair import NOTE_TITLE, repair_submission

HIDDEN_TESTS = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)


# --- nbgrader in this process ----------------------------------------------------------------------

def alembic_head() -> str:
    """The gradebook schema's newest revision, asked of alembic in this process.

    nbgrader stamps a new gradebook with it, and finds it by running the ``alembic`` command, a
    new Python process that imports nbgrader again (seconds); :func:`nbgrader_api` puts this in its place.
    """
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini
    with _temp_alembic_ini("sqlite:///gradebook.db") as ini:
        return ScriptDirectory.from_config(Config(ini)).get_current_head()


def course_config(course: Path):
    """The configuration the ``nbgrader`` command would load in ``course`` (jupyter and nbgrader config files)."""
    from nbgrader.apps.baseapp import NbGrader
    app = NbGrader()
    with working_folder(course):  # where the command finds the course's nbgrader_config.py
        app.load_config_file()
    return app.config


def nbgrader_api(course: Path, options: dict):
    """nbgrader's API with the configuration the ``nbgrader`` command would load in ``course``, plus ``options``.

    ``options`` maps ``"Class.trait"`` to a value, as ``--Class.trait=value`` on the command line.
    """
    import nbgrader.api
    from nbgrader.apps import NbGraderAPI
    nbgrader.api.get_alembic_version = alembic_head
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    config = Config(course_config(course))
    for key, value in options.items():
        section, _, trait = key.rpartition(".")
        config[section][trait] = value
    config.CourseDirectory.root = str(course)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


@contextlib.contextmanager
def working_folder(folder: Path):
    """Within the block, ``folder`` is the working folder (``contextlib.chdir`` from Python 3.11 on)."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def generated_gradebook(course: Path, assignment: str, api, cache: Path | None) -> dict:
    """Generate ``assignment`` in ``course``'s (empty) gradebook, or copy it from ``cache`` if generated before.

    A cached gradebook is keyed by everything generation reads: the source folder's files,
    the course's ``nbgrader_config.py`` and nbgrader's version; the cache keeps the latest one
    of each assignment.  Returns nbgrader's answer
    (``success``, ``log``, ``error``).
    """
    gradebook = course / "gradebook.db"
    cached = cache / f"{assignment}-{generation_key(course, assignment)}.db" if cache else None
    if cached is not None and cached.is_file():
        shutil.copyfile(cached, gradebook)
        return {"success": True, "log": f"gradebook of {assignment} from {cached}"}
    result = api.generate_assignment(assignment, force=True)
    if result["success"] and cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        for older in cached.parent.glob(f"{assignment}-*.db"):  # one per assignment: an edited source replaces it
            older.unlink(missing_ok=True)
        with gradebook.open("rb") as source:  # another check running at the same time sees the whole file or none
            write_atomically(cached, lambda file: shutil.copyfileobj(source, file), mode=0o644)
    return result


def generation_key(course: Path, assignment: str) -> str:
    """A digest of the assignment's source files (names and bytes), the course config and nbgrader's version.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
    ...     for folder in (one, two):
    ...         Path(folder, "solutions", "a").mkdir(parents=True)
    ...         _ = Path(folder, "nbgrader_config.py").write_text(f"c.CourseDirectory.root = {folder!r}")
    ...     same = generation_key(Path(one), "a") == generation_key(Path(two), "a")
    ...     _ = Path(two, "solutions", "a", "a.ipynb").write_text("{}")
    ...     same, generation_key(Path(one), "a") == generation_key(Path(two), "a")
    (True, False)
    """
    import nbgrader
    digest = hashlib.sha256(nbgrader.__version__.encode())
    config = (course / "nbgrader_config.py").read_text(encoding="utf-8")
    digest.update(config.replace(str(course), "<course>").encode())  # a scratch course's own path is no difference
    source = course / "solutions" / assignment
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:20]


# --- the gradebook and the autograded notebooks ----------------------------------------------------

def error_message(cell) -> str:
    """What a graded cell's error said (``ename: evalue``), or what it printed last if it failed silently."""
    errors = [output for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    if errors:
        return f"{errors[-1].get('ename', 'Error')}: {errors[-1].get('evalue', '')}".strip()
    return _("no error shown (partial credit)")


def errors_outside_tests(autograded: Path) -> list[str]:
    """The errors of cells that are not tests (a solution cell that timed out, ran out of memory, raised).

    A cell is named by its id, or by its position in the submitted notebook (1 = the top; the
    note :mod:`.repair` puts on top of a repaired notebook does not count).
    """
    notes = []
    for path in sorted(autograded.glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        noted = 1 if cells and cells[0].cell_type == "markdown" and cells[0].source.startswith(_(NOTE_TITLE)) else 0
        for index, cell in enumerate(cells[noted:], start=1):
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and not meta.get("grade") and any(
                    output.get("output_type") == "error" for output in cell.get("outputs", [])):
                notes.append(_("{notebook} cell {cell}: {error}").format(
                    notebook=path.stem, cell=meta.get("grade_id", index), error=error_message(cell)[:200]))
    return notes


def visible_lines(source: str) -> list[str]:
    """A cell's non-blank lines outside its hidden tests: what a release shows of it."""
    return [line.rstrip() for line in HIDDEN_TESTS.sub("", source).splitlines() if line.strip()]


def tampered_cells(submission: Path, url: str, assignment: str) -> list[str]:
    """Locked cells (tests, context) that the submission in ``submission`` (a folder) deleted or edited; nbgrader
    grades the originals."""
    from nbgrader.api import Gradebook
    notes = []
    with Gradebook(url) as gradebook:
        for source_notebook in gradebook.find_assignment(assignment).notebooks:
            path = submission / f"{source_notebook.name}.ipynb"
            submitted = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell.source
                         for cell in nbformat.read(path, as_version=4).cells} if path.exists() else {}
            tests = {cell.name for cell in source_notebook.grade_cells}
            for cell in (c for c in source_notebook.source_cells if c.locked):
                test = cell.name in tests
                if cell.name not in submitted:
                    deleted = _("test cell {name} was deleted (restored for grading)") if test else \
                        _("locked cell {name} was deleted")
                    notes.append(deleted.format(name=cell.name))
                elif visible_lines(submitted[cell.name]) != visible_lines(cell.source):
                    edited = _("test cell {name} was edited (graded as the original)") if test else \
                        _("locked cell {name} was edited (graded as the original)")
                    notes.append(edited.format(name=cell.name))
    return notes


def failed_tests(autograded: Path, scores: dict) -> list[FailedTest]:
    """Every grade cell below full points, in notebook order, with its error message from the autograded notebook."""
    failed = []
    for notebook_name in sorted({notebook for notebook, _ in scores}):
        path = autograded / f"{notebook_name}.ipynb"
        for cell in nbformat.read(path, as_version=4).cells:
            score, max_score = scores.get((notebook_name, cell.metadata.get("nbgrader", {}).get("grade_id")), (1, 1))
            if score < max_score and cell.cell_type == "code":  # written answers wait for formgrader
                grade_id = cell.metadata.nbgrader.grade_id
                failed.append(FailedTest(notebook_name, grade_id, score, max_score, error_message(cell)))
    return failed


# --- one job ---------------------------------------------------------------------------------------

def repaired_submission(course: Path, copies: Path, url: str, assignment: str, student: str) -> tuple[Path, list[str]]:
    """Copy the student's submission into ``copies`` (a submitted folder of grading's own) and repair the copy.

    The course's ``submitted/`` keeps what the student handed in, byte for byte (nbgrader
    matches feedback to it, and it is the record); nbgrader grades the copy, which is
    repaired for editing accidents (:mod:`.repair`).  Returns the copy's folder and the repairs.
    """
    source, copy = course / "submitted" / student / assignment, copies / student / assignment
    if copy.exists():
        shutil.rmtree(copy)
    if not source.is_dir():
        return copy, []
    shutil.copytree(source, copy, symlinks=True)  # links stay links: nbgrader reads the copy as it would the original
    return copy, repair_submission(copy, url, assignment)


def grade(course: Path, assignment: str, student: str, options: dict, *, generate: bool = False,
          cache: Path | None = None, private: Path | None = None) -> StudentResult:
    """(Generate the assignment, then) autograde one student's submission, here.

    nbgrader grades a repaired copy of the submission (:func:`repaired_submission`), in
    ``private/submitted`` or a temporary folder.  With ``private``, nbgrader writes a copy of
    the gradebook there (``private/gradebook.db``, which the caller made), the autograded
    notebooks to ``private/autograded`` and the student's feedback to ``private/feedback``, and
    the result carries the :func:`~.gradebook.autograde_record` for the caller to merge; the
    course itself is only read.  The feedback counts the hand grades of the gradebook copy, so it
    is the feedback the course's gradebook gives once the record is merged.
    """
    with tempfile.TemporaryDirectory(prefix="sdpa-submitted-") as scratch:
        copies = (private if private is not None else Path(scratch)) / "submitted"
        options = {**options, "CourseDirectory.submitted_directory": str(copies)}
        if private is not None:
            options.update({"CourseDirectory.db_url": gradebook_url(private),
                            "CourseDirectory.autograded_directory": str(private / "autograded"),
                            "CourseDirectory.feedback_directory": str(private / "feedback")})
        books = private if private is not None else course
        url = gradebook_url(books)
        api = nbgrader_api(course, options)
        if generate:
            made = generated_gradebook(course, assignment, api, cache)
            if not made["success"]:
                return StudentResult(student, assignment, UNGRADABLE,
                                     reason=_("the assignment could not be generated: {error}").format(
                                         error=made.get("error", "")[-500:]))
        submission, repairs = repaired_submission(course, copies, url, assignment, student)
        graded = api.autograde(assignment, student, force=True, create=True)
        if not graded["success"]:
            log = f"{graded.get('log', '')}\n{graded.get('error', '')}"
            reason = reason_in_log(log) or _("nbgrader could not grade it: {error}").format(error=last_error(log))
            return StudentResult(student, assignment, UNGRADABLE, reason="; ".join([*repairs, reason]))
        notes = repairs + tampered_cells(submission, url, assignment)
    autograded = books / "autograded" / student / assignment
    scores = submission_scores(books, assignment, student)
    notes += errors_outside_tests(autograded)
    if private is not None:
        feedback = api.generate_feedback(assignment, student, force=True)
        if not feedback["success"]:
            notes.append(_("no feedback: {error}").format(
                error=last_error(feedback.get("log", "") + feedback.get("error", ""))))
    return StudentResult(student, assignment, GRADED, score=sum(s for s, unused in scores.values()),
                         max_score=sum(m for unused, m in scores.values()), reason="; ".join(notes),
                         failed=failed_tests(autograded, scores), notes=notes,
                         record=autograde_record(private, assignment, student) if private is not None else None)


def main(argv: list[str]) -> int:
    """Run the job in the JSON file ``argv[0]``: each of its students in turn, each result to ``results/<index>.json``."""
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    folder = {key: Path(job[key]) if job.get(key) else None for key in ("cache", "private")}
    for index, student in enumerate(job["students"]):
        result = grade(Path(job["course"]), job["assignment"], student, job.get("options", {}),
                       generate=job.get("generate", False) and index == 0, **folder)
        text = json.dumps(asdict(result)).encode("utf-8")  # the parent counts finished students by these files
        write_atomically(Path(job["results"]) / f"{index}.json", lambda file: file.write(text), mode=0o644)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
