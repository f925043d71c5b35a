"""Make an edited notebook gradable again: each graded cell found once, under its own id, and each repair named.

nbgrader finds a notebook's graded cells by the ``grade_id`` in their metadata, and a notebook
whose ids are not the release's stops the whole assignment: a duplicated cell (JupyterLab's copy
and paste keeps the metadata) gives ``KeyError: 'grade_id'`` in ``OverwriteCells`` after
``DeduplicateIds`` empties the first copy's metadata; a renamed id is deleted by
``OverwriteCells`` and then gives the same ``KeyError``; a deleted ``grade_id`` key gives it in
``DeduplicateIds``; metadata that is no dictionary, or lacks a key, fails ``CheckCellMetadata``
("the nbgrader metadata may be corrupted").  :func:`repair` runs before nbgrader, on a copy of
the submission, and compares its cells with what the assignment expects (:class:`Expected`, from
the gradebook, or from the source notebook for ``sdpa-course validate``):

1. The cells that claim an expected id.  When several do, the one that looks like the expected
   cell (the same first line) and comes last keeps the id, as nbgrader's ``DeduplicateIds``
   keeps the last one; the others lose their nbgrader metadata and stay as the student's own
   cells.  Both copies of an answer still run, in order, as they do in the student's kernel (the
   later definition wins in Python), so the choice changes nothing of what runs.  A copy of a test
   becomes a raw cell, which does not run: the test runs once, from the gradebook, and its text in
   the student's kernel could only fail there (the kernel cannot import the grading code).  A written
   answer (markdown) keeps the id on the last copy that is not the blank stub, so an empty
   pasted copy does not hide the answer from the hand grader.  A copy that does not look like the
   cell it claims to be (two different cells with one id) goes on to step 2.
2. Cells whose id is unknown, missing or unreadable, and those of step 1, are matched to the
   expected cells that were not found: a cell of the same kind (answer, test, locked) with the
   same first line, or standing where the missing cell belongs (between its neighbours found
   in step 1), gets the expected cell's id back, when the match is one to one.  A cell that
   matches nothing loses its nbgrader metadata: it is the student's own, for no points (a copy
   of a test, by its first line, becomes a raw cell, as in step 1).
3. A cell found under its id keeps its metadata if nbgrader can read it and its kind and points
   are the release's; otherwise (and for every id put back) it gets the expected cell's metadata.
   A cell whose type changed (code and markdown) gets its type back, as ``OverwriteCells`` would.

Points cannot be gained this way: a test cell's text is never used (nbgrader puts the
gradebook's back and :mod:`.trusted_execute` runs the gradebook's source); a test cell that is
renamed is either found again (and graded from the gradebook) or stripped of its metadata, and
then nbgrader adds the missing test back from the gradebook (``OverwriteCells.add_missing_cells``);
a copy of a test carries no id, so no test is counted twice.  The repairs come back as sentences
that name the cell (its position, first line and id) and say what to do, for ``sdpa-course
check`` and ``validate`` to print and for the student's feedback (:func:`repair_submission`
puts them in a note at the top of the graded copy) and the instructor's export.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..i18n.messages import N_, _

# A kind is also what the messages call the cell ("the answer cell ..."): translated where it is said.
ANSWER, TEST, LOCKED, TASK = N_("answer cell"), N_("test cell"), N_("locked cell"), N_("task cell")
FLAGS = ("grade", "solution", "locked", "task")
NOTE_TITLE = N_("**Notes from grading.**")  # the note's first words, in the language of the grading


@dataclass(frozen=True)
class Expected:
    """A cell the assignment has (an answer, a test, a locked cell), as the gradebook or a notebook records it."""
    name: str
    cell_type: str
    grade: bool
    solution: bool
    locked: bool
    source: str
    points: float | None = None
    checksum: str | None = None
    task: bool = False

    @property
    def kind(self) -> str:
        return kind_of(self.grade, self.solution, self.locked, self.task)

    def metadata(self) -> dict:
        """The cell's nbgrader metadata as released (schema 3)."""
        meta = {"grade": self.grade, "grade_id": self.name, "locked": self.locked, "schema_version": 3,
                "solution": self.solution, "task": self.task, "cell_type": self.cell_type}
        if self.grade or self.task:
            meta["points"] = self.points
        if self.checksum:
            meta["checksum"] = self.checksum
        return meta


def kind_of(grade, solution, locked, task=False) -> str:
    """What nbgrader makes of a cell's flags: an answer (solution), a test (grade only), a locked or a task cell."""
    return TASK if task else ANSWER if solution else TEST if grade else LOCKED


# --- what the assignment expects -----------------------------------------------------------------

def expected_from_gradebook(url: str, assignment: str) -> dict[str, list[Expected]]:
    """``{notebook name: [Expected, ...]}`` of an assignment generated into the gradebook at ``url``, in notebook order.

    The gradebook keeps the cells in the order generation saved them, which is the notebook's
    (nbgrader's own ``OverwriteCells`` relies on it to put a deleted test back in its place).
    """
    from nbgrader.api import Gradebook
    expected = {}
    with Gradebook(url) as gradebook:
        for notebook in gradebook.find_assignment(assignment).notebooks:
            points = {cell.name: cell.max_score for cell in (*notebook.grade_cells, *notebook.task_cells)}
            answers = {cell.name for cell in notebook.solution_cells}
            tasks = {cell.name for cell in notebook.task_cells}
            expected[notebook.name] = [
                Expected(cell.name, cell.cell_type, grade=cell.name in points and cell.name not in tasks,
                         solution=cell.name in answers, locked=cell.locked, source=cell.source or "",
                         points=points.get(cell.name), checksum=cell.checksum, task=cell.name in tasks)
                for cell in notebook.source_cells]
    return expected


def expected_from_notebook(notebook) -> list[Expected]:
    """The graded, answer and locked cells of an assignment's notebook (the source or the release), in order.

    A source notebook has no checksums (generation computes them): a cell repaired from it keeps
    the checksum it had, if any.
    """
    expected = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") and any(meta.get(flag) for flag in FLAGS):
            expected.append(Expected(meta["grade_id"], cell.cell_type, grade=bool(meta.get("grade")),
                                     solution=bool(meta.get("solution")), locked=bool(meta.get("locked")),
                                     source=cell.source, points=meta.get("points"), checksum=meta.get("checksum"),
                                     task=bool(meta.get("task"))))
    return expected


# --- reading a cell's claim ------------------------------------------------------------------------

def claimed_id(cell) -> str | None:
    """The ``grade_id`` the cell's nbgrader metadata gives, or None (no metadata, no id, not a dictionary)."""
    meta = cell.metadata.get("nbgrader")
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) and grade_id else None


def claimed_kind(cell) -> str | None:
    """The kind the cell's flags make it, or None when they cannot be read (one is missing or not a bool)."""
    meta = cell.metadata.get("nbgrader")
    if not isinstance(meta, dict) or not all(isinstance(meta.get(flag), bool) for flag in FLAGS[:3]) \
            or not isinstance(meta.get("task", False), bool):
        return None
    return kind_of(*(meta.get(flag, False) for flag in FLAGS))


def first_line(source: str, width: int = 60) -> str:
    """The first line with text, cut to ``width`` characters."""
    line = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return line if len(line) <= width else line[:width - 3] + "..."


def looks_like(cell, expected: Expected) -> bool:
    """The cell starts as the expected one does (an answer's ``def`` line, a test's docstring, a heading)."""
    mine = first_line(cell.source, width=10**6)
    return bool(mine) and mine == first_line(expected.source, width=10**6)


def metadata_problems(cell, expected: Expected) -> list[str]:
    """How the cell's nbgrader metadata differs from the expected cell's, or is unreadable to nbgrader ([] if fine)."""
    from nbgrader.nbgraderformat.common import SchemaMismatchError, ValidationError
    meta = cell.metadata.get("nbgrader")
    if not isinstance(meta, dict):
        return [_("it is {type} {value!r}, not nbgrader's dictionary").format(type=type(meta).__name__,
                                                                             value=str(meta)[:40])]
    canonical = expected.metadata()
    changed = _('"{key}" is {value!r}, released {released!r}')
    problems = [changed.format(key=key, value=meta.get(key, False), released=canonical[key])
                for key in FLAGS if meta.get(key, False) != canonical[key]]
    if expected.grade and _number(meta.get("points")) != _number(expected.points):
        problems.append(changed.format(key="points", value=meta.get("points"), released=expected.points))
    if not problems:
        probe = nbformat.from_dict({**copy.deepcopy(cell), "cell_type": expected.cell_type})
        try:
            metadata_validator().validate_cell(probe)
        except (ValidationError, SchemaMismatchError, KeyError, TypeError) as error:
            problems.append(str(error).splitlines()[0][:120])
    return problems


@functools.lru_cache(maxsize=None)
def metadata_validator():
    """nbgrader's validator of cell metadata (it reads its JSON schema when made)."""
    from nbgrader.nbgraderformat import MetadataValidator
    return MetadataValidator()


def _number(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# --- the repair ----------------------------------------------------------------------------------

def repair(notebook, expected: list[Expected], name: str = "") -> list[str]:
    """Give each expected cell of ``notebook`` (changed in place) one cell carrying its id; return what was repaired.

    See the module's docstring for the rules.  Each message names the notebook, the cell's
    position (1 = the top), its first line and its id, and what the learner should do.
    """
    cells = notebook.cells
    known = {e.name: e for e in expected}
    claimants = [index for index, cell in enumerate(cells) if "nbgrader" in cell.metadata]
    found: dict[str, int] = {}  # expected id -> the cell that carries it
    copies: dict[int, str] = {}  # a second copy -> the id it copies
    loose = [i for i in claimants if claimed_id(cells[i]) not in known]  # no id, an unknown id, unreadable metadata
    for e in expected:
        group = [i for i in claimants if claimed_id(cells[i]) == e.name]
        if not group:
            continue
        if e.solution and e.cell_type == "markdown":  # a written answer: the copy that holds an answer (not the stub)
            alike = []
            pool = [i for i in group if cells[i].source.strip() != e.source.strip()] or group
        else:
            alike = [i for i in group if looks_like(cells[i], e) and claimed_kind(cells[i]) in (e.kind, None)]
            pool = alike or group
        found[e.name] = pool[-1]
        for i in group:
            if i != pool[-1]:
                if i in alike or not alike:
                    copies[i] = e.name
                else:
                    loose.append(i)
    matched = match_loose(cells, expected, found, sorted(loose))

    def where(i: int) -> str:
        return _("{notebook}: {cell}").format(notebook=name, cell=describe(cells[i], i)) if name else describe(cells[i], i)

    said = []  # (cell index, message): the messages come in the notebook's order
    for e in expected:
        if e.name in found:
            said += [(found[e.name], message) for message in
                     restore(cells, found[e.name], e, renamed=found[e.name] in matched, taken=known, where=where)]
    for i, grade_id in copies.items():
        kept, kind = found[grade_id], known[grade_id].kind
        said.append((i, _('{cell} and cell {kept} are both the {kind} "{grade_id}" (copy and paste keeps a cell\'s '
                          "nbgrader id, and only one cell may carry it): the id stays on cell {kept}; {consequence} "
                          "Delete the copy you do not want.").format(
            cell=where(i), kept=kept + 1, kind=_(kind), grade_id=grade_id,
            consequence=_(COPY_CONSEQUENCE[kind]).format(copy=i + 1, kept=kept + 1))))
        demote(cells, i, run=kind != TEST)
    for i in set(loose) - set(matched):
        test_copy = any(e.kind == TEST and looks_like(cells[i], e) for e in expected)
        kept = _("It is a copy of a test: it is not run, for no points.") if test_copy else \
            _("It is kept as a cell of your own, for no points.")
        said.append((i, _("{cell} {claim} {kept} If it is a released cell, set its grade_id back (or start from a "
                          "fresh copy of the released notebook and paste your work into it); if you added it, remove "
                          "its nbgrader metadata.").format(cell=where(i), claim=unknown_claim(cells[i], known, found),
                                                           kept=kept)))
        demote(cells, i, run=not test_copy)
    return [message for unused_index, message in sorted(said, key=lambda item: item[0])]


def demote(cells, index: int, *, run: bool) -> None:
    """Make a cell the student's own: no nbgrader metadata; a raw cell, which does not run, unless ``run``."""
    del cells[index].metadata["nbgrader"]
    if not run:
        cells[index] = with_type(cells[index], "raw")


COPY_CONSEQUENCE = {  # what grading does with the copy that lost the id ({copy}) and the cell that kept it ({kept})
    ANSWER: N_("both are graded as they run in your notebook, in order (the later definition wins)."),
    TEST: N_("the test is graded once, at cell {kept}, from the released test, and cell {copy} is not run."),
    LOCKED: N_("cell {copy} is kept as a cell of your own."),
    TASK: N_("cell {copy} is kept as a cell of your own."),
}


def match_loose(cells, expected: list[Expected], found: dict[str, int], loose: list[int]) -> dict[int, str]:
    """Give the expected cells not found the loose cells that match them one to one; ``{cell: id}`` (``found`` grows).

    A loose cell matches a missing expected cell when it :func:`fits` it, and no other loose cell
    fits that cell, nor does it fit another missing one; each match can change the places of the
    others, so the search goes on until nothing more matches.
    """
    matched: dict[int, str] = {}
    order = [e.name for e in expected]

    def candidates(e: Expected) -> list[int]:
        k = order.index(e.name)
        before = max((found[n] for n in order[:k] if n in found), default=-1)
        after = min((found[n] for n in order[k + 1:] if n in found), default=len(cells))
        return [i for i in loose if i not in matched and fits(cells[i], e, in_place=before < i < after)]

    progress = True
    while progress:
        progress = False
        missing = [e for e in expected if e.name not in found]
        options = {e.name: candidates(e) for e in missing}
        for e in missing:
            mine = options[e.name]
            if len(mine) == 1 and sum(mine[0] in theirs for theirs in options.values()) == 1:
                found[e.name], matched[mine[0]] = mine[0], e.name
                progress = True
                break  # the slots changed: look again
    return matched


def fits(cell, expected: Expected, *, in_place: bool) -> bool:
    """Whether a loose cell can be the missing ``expected`` one: the same kind and first line, or the same kind in its
    place.  A cell whose flags cannot be read must be of the same cell type and start the same."""
    kind = claimed_kind(cell)
    if kind is None:
        return cell.cell_type == expected.cell_type and looks_like(cell, expected)
    return kind == expected.kind and (in_place or looks_like(cell, expected))


def restore(cells, index: int, expected: Expected, *, renamed: bool, taken, where) -> list[str]:
    """Give the cell found for ``expected`` its id, metadata and type back as released; say what changed."""
    cell, messages = cells[index], []
    label = where(index)
    kind = _(expected.kind)
    graded_as = _(" (a test is graded from the released test, not from its text in your notebook)") \
        if expected.kind == TEST else ""
    if renamed:
        old = claimed_id(cell)
        had = (_('has the id "{old}" of another cell').format(old=old) if old in taken else
               _('has the id "{old}", which this notebook does not have').format(old=old) if old else
               _("has lost its grade_id") if isinstance(cell.metadata.get("nbgrader"), dict)
               else _("has nbgrader metadata that cannot be read"))
        messages.append(_('{cell} {had}; it is the {kind} "{grade_id}" and is graded as that{graded_as}. Restore its '
                          'id: set "grade_id" back to "{grade_id}" in the cell\'s metadata (Property Inspector, '
                          "Advanced Tools), or paste your work into a fresh copy of the released notebook.").format(
            cell=label, had=had, kind=kind, grade_id=expected.name, graded_as=graded_as))
        cell.metadata["nbgrader"] = metadata_for(cell, expected)
    else:
        problems = metadata_problems(cell, expected)
        if problems:
            messages.append(_('{cell}: the nbgrader metadata of the {kind} "{grade_id}" was changed ({problems}); it is '
                              "graded as released{graded_as}. Restore it: copy the cell's metadata from the released "
                              "notebook, or paste your work into a fresh copy of it.").format(
                cell=label, kind=kind, grade_id=expected.name, problems="; ".join(problems), graded_as=graded_as))
            cell.metadata["nbgrader"] = metadata_for(cell, expected)
    if cell.cell_type != expected.cell_type:
        messages.append(_('{cell}: the {kind} "{grade_id}" was changed from {released} to {now}; it is graded as '
                          "{released}, as released. Change it back (select the cell, press Esc, then {key}).").format(
            cell=label, kind=kind, grade_id=expected.name, released=expected.cell_type, now=cell.cell_type,
            key="Y" if expected.cell_type == "code" else "M"))
        cells[index] = with_type(cell, expected.cell_type)
    return messages


def metadata_for(cell, expected: Expected) -> dict:
    """The expected cell's nbgrader metadata, with the cell's own checksum where the expected one has none."""
    meta, old = expected.metadata(), cell.metadata.get("nbgrader")
    if "checksum" not in meta and isinstance(old, dict) and isinstance(old.get("checksum"), str):
        meta["checksum"] = old["checksum"]
    return meta


def with_type(cell, cell_type: str):
    """The cell as a ``cell_type`` cell (code, markdown, raw): the same id, source and metadata; a code cell has no
    outputs yet."""
    fields = {"cell_type": cell_type, "metadata": cell.metadata, "source": cell.source}
    if "id" in cell:
        fields["id"] = cell.id
    if cell_type == "code":
        fields.update(outputs=[], execution_count=None)
    return nbformat.from_dict(fields)


def describe(cell, index: int) -> str:
    """``cell 5 (`def softmax(x, axis=-1):`)``: where a learner finds the cell (1 = the top) and how it starts."""
    if cell.source.strip():
        return _("cell {number} (`{line}`)").format(number=index + 1, line=first_line(cell.source))
    return _("cell {number} (empty)").format(number=index + 1)


def unknown_claim(cell, known: dict[str, Expected], found: dict[str, int]) -> str:
    """What a loose cell claims to be, in words."""
    grade_id = claimed_id(cell)
    if grade_id in known:
        return _('carries the id "{grade_id}" of cell {cell}, and two cells cannot share an id; it does not look like '
                 'the {kind} "{grade_id}".').format(grade_id=grade_id, cell=found[grade_id] + 1,
                                                   kind=_(known[grade_id].kind))
    if grade_id:
        return _('has the nbgrader id "{grade_id}", which this notebook does not have, and matches no missing '
                 "cell.").format(grade_id=grade_id)
    if isinstance(cell.metadata.get("nbgrader"), dict):
        return _("has nbgrader metadata without a grade_id, and matches no missing cell.")
    return _("has nbgrader metadata that cannot be read, and matches no missing cell.")


# --- where the repairs are used: grading and validating ------------------------------------------------

def read_or_none(path: Path):
    """The notebook at ``path``, or None if nbformat cannot read it (nbgrader then says it cannot be read)."""
    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # not JSON, not a notebook, a missing key: many exception types; nbgrader reports it
        return None


def unique_cell_ids(notebook) -> None:
    """Give copied cells an nbformat cell id of their own (JupyterLab's paste usually does; a text editor doesn't)."""
    import uuid
    seen = set()
    for cell in notebook.cells:
        if "id" in cell and cell.id in seen:
            cell.id = uuid.uuid4().hex[:8]
        seen.add(cell.get("id"))


def repair_submission(folder: Path, url: str, assignment: str) -> list[str]:
    """Repair each notebook of the assignment in ``folder`` (a copy of the submission), in place, for grading.

    A notebook that needed repairs is rewritten with a markdown note at the top listing them,
    which reaches the autograded notebook and the student's feedback.  Returns the messages.
    """
    messages = []
    for notebook_name, expected in expected_from_gradebook(url, assignment).items():
        path = Path(folder) / f"{notebook_name}.ipynb"
        notebook = read_or_none(path) if path.is_file() else None
        if notebook is None:
            continue
        mine = repair(notebook, expected, notebook_name)
        if mine:
            notebook.cells.insert(0, nbformat.v4.new_markdown_cell(note_text(mine)))
            unique_cell_ids(notebook)
            nbformat.write(notebook, path)
            messages += mine
    return messages


def note_text(messages: list[str]) -> str:
    """The markdown note on top of a repaired notebook (the cell numbers are those of the submitted notebook)."""
    items = "\n".join(f"- {message}" for message in messages)
    return _("{title} Some graded cells of this notebook were not as released (a copied cell, or a changed id, type or "
             "metadata). Grading repaired a copy of it as said below, and graded the rest as usual; the notebook you "
             "submitted is kept as it was, and the cell numbers count from its top.").format(
        title=_(NOTE_TITLE)) + f"\n\n{items}"


def source_of(source_folder: Path, notebook_path: Path) -> Path | None:
    """The assignment's notebook of the same name in the course's source folder (``solutions/*/NAME.ipynb``), if any.

    The source, not the release: a self-learner works in the release folder (``exercises/``) itself.
    """
    matches = sorted(Path(source_folder).glob(f"*/{notebook_path.name}"))
    return matches[0] if matches else None


@contextlib.contextmanager
def validation_copy(notebook_path: Path, source_folder: Path):
    """Yield (the notebook to validate, the repairs): the notebook itself, or a repaired copy beside links to its files.

    The notebook is compared with the assignment's source notebook of the same name (:func:`source_of`).

    The copy lives in a temporary folder that links to everything else in the notebook's folder,
    so the notebook runs as it would in place; the learner's file is not changed.
    """
    source_path = source_of(source_folder, notebook_path)
    notebook = read_or_none(notebook_path)
    source = read_or_none(source_path) if source_path else None
    messages = repair(notebook, expected_from_notebook(source)) if notebook is not None and source else []
    if not messages:
        yield notebook_path, []
        return
    with tempfile.TemporaryDirectory(prefix="sdpa-validate-") as folder:
        for entry in notebook_path.parent.iterdir():
            if entry.name != notebook_path.name:
                (Path(folder) / entry.name).symlink_to(entry)
        unique_cell_ids(notebook)
        copy_path = Path(folder) / notebook_path.name
        nbformat.write(notebook, copy_path)
        yield copy_path, messages
