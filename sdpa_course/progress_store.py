"""The scores ``sdpa-course check`` remembers for ``progress``: one course folder's, per assignment version.

Where they live.  In one file per user, ``check_scores.json`` in the user data folder (or
``$SDPA_COURSE_SCORES``), a JSON document kept as :mod:`~sdpa_course.json_file` keeps it
(locked, replaced whole, a damaged file set aside as ``<name>.corrupt-<time>`` and reported).
Each score is filed under the course folder it was checked in, by its resolved path, and
carries two digests taken before grading reads the files (:func:`snapshot`):

* the assignment version: the chapter's ``solutions/`` folder, what ``check`` grades against;
* the work: the chapter's ``exercises/`` notebooks, what ``check`` grades.

A notebook counts by its cells' types, sources and nbgrader metadata, not by its outputs or
execution counts (running a notebook is not changing it); any other file by its bytes.

Why not a file in the course folder: ``check`` leaves the learner's course as it was (a test
holds it to that), a course folder may be read-only (a shared or mounted copy), and a file in
the course would be committed and pushed with it, or copied with ``cp -r``, which would
bring an instructor's or another clone's marks along: the very bug this module exists to fix.
What the per-user file costs: a course folder that is moved or renamed starts with no scores
(check again); a clone made again at the same path finds the old scores, but marked as being
for other work (its exercises are not the ones checked).

What :meth:`ScoreStore.last_checks` gives ``progress`` for a chapter of its course:

* ``current``: the chapter and the exercises are the ones checked;
* ``edited``: the same chapter, but the exercises changed since the check;
* ``older``: the chapter itself changed since (its ``solutions/``, e.g. after a ``git pull``);
  the score is shown marked as being for an older version, never as the current one.

Scores of any other course folder are never given.  The digests are not
:func:`~sdpa_course.grading.worker.generation_key`, which names the generated gradebook: it
also hashes nbgrader's version and the course configuration (an nbgrader upgrade is not a new
version of a chapter), and it imports nbgrader, seconds that ``check`` and ``progress`` would
pay on every run.

Old files: before scores were kept per course, the file was ``{assignment: score}``, shared by
every course on the machine.  Those entries cannot be attributed to a course: they are never
shown, ``report`` says so each time such a file is read, and the next ``check`` keeps them
under ``"legacy"`` in the new file (so the note stops and nothing is lost).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from .i18n.messages import N_, _
from .json_file import JsonFile

if TYPE_CHECKING:
    from .grading.autograde import StudentResult

SCORES_ENV = "SDPA_COURSE_SCORES"
FORMAT = "sdpa-course-scores"
VERSION = 1
CURRENT, EDITED, OLDER = "current", "edited", "older"
ENTRY_KEYS = {"status", "score", "max_score", "when", "version", "work"}


def default_scores_path() -> Path:
    """``$SDPA_COURSE_SCORES`` if set, else ``check_scores.json`` in the user data directory."""
    if os.environ.get(SCORES_ENV):
        return Path(os.environ[SCORES_ENV]).expanduser()
    import platformdirs
    return platformdirs.user_data_path("sdpa-course", appauthor=False) / "check_scores.json"


def course_key(course: Path) -> str:
    """The course folder's identity in the file: its resolved path (links followed, case folded where the OS does)."""
    return os.path.normcase(str(Path(course).resolve()))


# --- what a score is for -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Snapshot:
    """What one check of a chapter graded: the assignment version and the learner's work, as digests."""
    version: str
    work: str


def snapshot(course: Path, assignment: str) -> Snapshot:
    """The digests of ``solutions/<assignment>`` (every file) and of ``exercises/<assignment>/*.ipynb``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     course = Path(folder)
    ...     (course / "exercises" / "a").mkdir(parents=True)
    ...     cell = {"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []}
    ...     _ = (course / "exercises" / "a" / "a.ipynb").write_text(json.dumps({"cells": [cell]}))
    ...     before = snapshot(course, "a")
    ...     cell["outputs"] = ["ran"]  # running the notebook
    ...     _ = (course / "exercises" / "a" / "a.ipynb").write_text(json.dumps({"cells": [cell]}))
    ...     ran = snapshot(course, "a")
    ...     cell["source"] = "x = 2"  # editing it
    ...     _ = (course / "exercises" / "a" / "a.ipynb").write_text(json.dumps({"cells": [cell]}))
    ...     ran == before, snapshot(course, "a").work == before.work, snapshot(course, "a").version == before.version
    (True, False, True)
    """
    source, work = Path(course) / "solutions" / assignment, Path(course) / "exercises" / assignment
    return Snapshot(version=folder_digest(source, sorted(p for p in source.rglob("*") if p.is_file())),
                    work=folder_digest(work, sorted(work.glob("*.ipynb"))))


def folder_digest(folder: Path, files: Iterable[Path]) -> str:
    """A digest of ``files`` (paths inside ``folder``): their names and what grading reads of them."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + graded_content(path) + b"\0")
    return digest.hexdigest()[:20]


def graded_content(path: Path) -> bytes:
    """A notebook's cells (type, source, nbgrader metadata) as JSON; any other file's bytes (or the error)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        return f"unreadable: {error.strerror}".encode()
    if path.suffix != ".ipynb":
        return data
    try:
        cells = [[cell["cell_type"], "".join(cell.get("source", "")), cell.get("metadata", {}).get("nbgrader")]
                 for cell in json.loads(data)["cells"]]
    except (ValueError, KeyError, TypeError, AttributeError):  # not a notebook nbformat can read: its bytes
        return data
    return json.dumps(cells, sort_keys=True).encode()


# --- the file ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LastCheck:
    """A chapter's last check in this course: its result, when, and whether it is for what is there now."""
    status: str  # graded or ungradable (see sdpa_course.grading.autograde)
    score: float | None
    max_score: float | None
    when: str  # ISO time of the check
    state: str  # CURRENT, EDITED (the exercises changed since) or OLDER (the chapter changed since)


@dataclass
class Document:
    """The file's content: scores by course key, then by assignment; the flat entries of an old file."""
    courses: dict
    legacy: dict
    old_format: bool = False  # read from a flat {assignment: score} file (not yet rewritten)


def parse(document) -> Document:
    """The :class:`Document` of a parsed file, new format or old; ``ValueError`` if it is neither."""
    if isinstance(document, dict) and "format" not in document:
        if not all(isinstance(entry, dict) and "status" in entry for entry in document.values()):
            raise ValueError(_("neither a {format} file nor the older {{assignment: score}} one").format(format=FORMAT))
        return Document(courses={}, legacy=document, old_format=bool(document))
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("version") != VERSION:
        raise ValueError(_("not a {format} file of version {version}").format(format=FORMAT, version=VERSION))
    courses, legacy = document.get("courses"), document.get("legacy", {})
    if not isinstance(courses, dict) or not isinstance(legacy, dict):
        raise ValueError(_("'courses' and 'legacy' must be objects"))
    for scores in courses.values():
        if not isinstance(scores, dict) or not all(isinstance(e, dict) and ENTRY_KEYS <= set(e) for e in scores.values()):
            raise ValueError(_("each course must map assignments to {{{keys}}}").format(keys=", ".join(sorted(ENTRY_KEYS))))
    return Document(courses=courses, legacy=legacy)


class ScoreStore:
    """The last check of each chapter, per course folder, in one JSON file; see the module docstring.

    Parameters
    ----------
    path : path-like, optional
        The file; default :func:`default_scores_path`.
    report : callable taking a message, optional
        Where problems (a damaged file set aside, an old file's scores not shown) are said; default: print.

    Raises
    ------
    sdpa_course.json_file.StoreError
        From :meth:`record` and :meth:`last_checks`, when the file cannot be opened or written; the message names it.
    """

    def __init__(self, path=None, *, report: Callable[[str], None] = print):
        self.path = Path(path).expanduser() if path is not None else default_scores_path()
        self.report = report
        self.file = JsonFile(self.path, N_("the check scores file"), report)

    def _read(self) -> Document:
        document = self.file.read(parse, lambda: Document(courses={}, legacy={}))
        if document.old_format:
            self.report(_("{path} holds {count} score(s) from an older sdpa-course, which kept one score per chapter for "
                          "every course on this machine; they cannot be attributed to a course, so they are not shown "
                          '(the next `sdpa-course check` keeps them in the file, under "legacy"). Check a chapter again '
                          "to see its score here.").format(path=self.path, count=len(document.legacy)))
        return document

    def record(self, course: Path, checks: Iterable[tuple[Snapshot, StudentResult]]) -> None:
        """Remember each check's result as the chapter's last one in ``course`` (read, update, replace under the lock).

        Each :class:`Snapshot` should be taken before the check reads the files, so that work
        edited while it runs is not taken for the work it graded.
        """
        when = datetime.now().isoformat(timespec="seconds")
        with self.file.locked():
            document = self._read()
            scores = document.courses.setdefault(course_key(course), {})
            for seen, result in checks:
                scores[result.assignment] = {"status": result.status, "score": result.score,
                                             "max_score": result.max_score, "when": when,
                                             "version": seen.version, "work": seen.work}
            self.file.write({"format": FORMAT, "version": VERSION, "courses": document.courses,
                             "legacy": document.legacy})

    def last_checks(self, course: Path) -> dict[str, LastCheck]:
        """The last check of each chapter checked in ``course``, by assignment, each compared with the files now."""
        with self.file.locked():
            scores = self._read().courses.get(course_key(course), {})
        last = {}
        for assignment, entry in scores.items():
            now = snapshot(course, assignment)
            state = OLDER if now.version != entry["version"] else EDITED if now.work != entry["work"] else CURRENT
            last[assignment] = LastCheck(entry["status"], entry["score"], entry["max_score"], entry["when"], state)
        return last
