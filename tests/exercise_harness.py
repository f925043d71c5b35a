"""What tests/test_exercises.py does with nbgrader: build a throwaway course, generate, submit, autograde, read.

Every function works on any assignment folder in solutions/, so a new chapter is tested
as soon as it exists.  A course is a temporary directory holding a copy of the
repository's nbgrader_config.py (with CourseDirectory.root pointing at it) and of one
solutions/<assignment> folder; nbgrader runs in this process through its Python API.
"""
from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path

import nbformat
from buggy import Bug
from nbrun import HEADLESS_ENV, kernel_config
from sdpa_course.cli import temporary_course
from sdpa_course.grading.autograde import interpreter_path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
TRANSLATED_COURSES = {"zh": ROOT / "zh"}  # the Chinese edition: zh/solutions/ (generated) -> zh/exercises/
SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", re.S)
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
TRIVIAL_LINE_LENGTH = 12  # shorter lines ("return x", "pass", ")") may legitimately occur anywhere


def assignments() -> list[str]:
    """Every assignment folder in solutions/ that holds a notebook."""
    if not SOLUTIONS.is_dir():
        return []
    return sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def notebooks(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.ipynb"))


def read(path: Path):
    return nbformat.read(path, as_version=4)


def grader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def cells_by_id(notebook) -> dict:
    return {grader_meta(cell)["grade_id"]: cell for cell in notebook.cells if "grade_id" in grader_meta(cell)}


# --- running nbgrader ---------------------------------------------------------------------------

def nbgrader_api(course: Path):
    """nbgrader's Python API configured by the course's nbgrader_config.py (one process, no CLI start-up)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader
    os.environ["PATH"] = interpreter_path()  # nbgrader runs `alembic` by name to create the gradebook
    os.environ.update(HEADLESS_ENV)  # inherited by the kernels autograde starts
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.merge(kernel_config())  # the tests' kernel transport (tests/conftest.py)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def succeeded(result: dict, what: str) -> None:
    if not result["success"]:
        raise AssertionError(f"nbgrader {what} failed:\n{result.get('error', '')}\n{result.get('log', '')}")


def make_course(directory: Path, assignment: str, solutions: Path = SOLUTIONS) -> Path:
    """A course in ``directory`` with ``solutions``/<assignment> copied in and its release generated."""
    temporary_course(ROOT, directory)
    shutil.copytree(solutions / assignment, directory / "solutions" / assignment)
    succeeded(nbgrader_api(directory).generate_assignment(assignment, force=True), f"generate_assignment {assignment}")
    return directory


def validation(executed, path: Path, *, invert: bool = False) -> dict:
    """`nbgrader validate [--invert]`'s verdict ({} = passes) on a notebook executed already.

    The same checks as the command (cell metadata, checksums, grade cells' results) but
    without running the notebook a second time: the executed copy is saved at ``path``.
    """
    from nbgrader.preprocessors import CheckCellMetadata
    from nbgrader.validator import Validator
    nbformat.write(executed, path)
    return Validator(preprocessors=[CheckCellMetadata], invert=invert).validate(str(path))


def release_folder(course: Path, assignment: str) -> Path:
    """Where generate_assignment put the release in ``course`` (the configured release_directory)."""
    return course / "exercises" / assignment


def submit(course: Path, assignment: str, student: str, submission: dict) -> None:
    """Place ``{notebook file name: notebook}`` as student's submission of the assignment."""
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True)
    for name, notebook in submission.items():
        nbformat.write(notebook, folder / name)


def autograde(course: Path, assignment: str) -> None:
    """Autograde every submitted student of the assignment in one nbgrader run."""
    succeeded(nbgrader_api(course).autograde(assignment, "*", force=True, create=True), f"autograde {assignment}")


# --- a class of students: what each one writes -----------------------------------------------------

# ch05's partial student: a softmax Jacobian that keeps only its diagonal (a catalogued mistake).
WRONG_JACOBIAN = "def softmax_jacobian(p):\n    return p[..., None, :] * np.eye(p.shape[-1])  # the diagonal only\n"


def solution_cells(notebook) -> dict[str, str]:
    """``{grade_id: source}`` of the solution (code) cells."""
    return {gid: cell.source for gid, cell in cells_by_id(notebook).items()
            if cell.metadata.nbgrader.get("solution") and cell.cell_type == "code"}


def points_per_test(notebook) -> dict[str, float]:
    """``{grade_id: points}`` of the test (code) cells."""
    return {gid: cell.metadata.nbgrader["points"] for gid, cell in cells_by_id(notebook).items()
            if cell.metadata.nbgrader.get("grade") and cell.cell_type == "code"}


def work(notebook, answers: dict[str, str], student: str):
    """The fetched notebook with some solution cells answered and a line naming its author."""
    notebook = nbformat.from_dict(notebook)
    for grade_id, source in answers.items():
        cells_by_id(notebook)[grade_id].source = source
    notebook.cells.append(nbformat.v4.new_markdown_cell(f"Submitted by marker-{student}-end"))
    return notebook


def visible_text(page: str) -> str:
    """A feedback page's text as a reader sees it (tags removed, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


# --- comparing releases, finding leaks -------------------------------------------------------------

def cell_summary(cell) -> tuple:
    """What must agree between a generated and a committed release: type, source, nbgrader metadata."""
    return cell.cell_type, cell.source, grader_meta(cell)


def release_differences(generated: Path, committed: Path) -> list[str]:
    """Human-readable differences between two release folders of one assignment."""
    names = sorted({p.name for p in notebooks(generated)} | {p.name for p in notebooks(committed)})
    problems = []
    for name in names:
        if not (generated / name).exists() or not (committed / name).exists():
            problems.append(f"{name}: only in {'exercises/' if (committed / name).exists() else 'the generated release'}")
            continue
        ours, theirs = read(generated / name).cells, read(committed / name).cells
        if len(ours) != len(theirs):
            problems.append(f"{name}: {len(theirs)} cells committed, {len(ours)} generated")
        problems += [f"{name} cell {index}: committed {b!r}\n  generated {a!r}"
                     for index, (a, b) in enumerate(zip(map(cell_summary, ours), map(cell_summary, theirs))) if a != b]
    return problems


def region_lines(notebook, pattern: re.Pattern) -> set[str]:
    """Non-trivial stripped lines inside every ``pattern`` region of the notebook's cells."""
    lines = set()
    for cell in notebook.cells:
        for region in pattern.findall(cell.source):
            lines |= {line.strip() for line in region.splitlines() if len(line.strip()) >= TRIVIAL_LINE_LENGTH}
    return lines


def public_lines(notebook) -> set[str]:
    """Stripped lines of the solution notebook outside every solution and hidden-test region."""
    text = "\n".join(HIDDEN_REGION.sub("", SOLUTION_REGION.sub("", cell.source)) for cell in notebook.cells)
    return {line.strip() for line in text.splitlines()}


def leaks(solution: Path, release: Path) -> list[str]:
    """Secret lines of ``solution`` (not also public there) that occur in ``release``, and surviving markers."""
    source, released = read(solution), read(release)
    secret = (region_lines(source, SOLUTION_REGION) | region_lines(source, HIDDEN_REGION)) - public_lines(source)
    released_lines = {line.strip() for cell in released.cells for line in cell.source.splitlines()}
    found = [f"secret line in the release: {line!r}" for line in sorted(secret & released_lines)]
    found += [f"marker {marker!r} in the release" for marker in MARKERS
              if any(marker in cell.source for cell in released.cells)]
    return found


# --- buggy submissions and reading grades ---------------------------------------------------------

def buggy_submission(solutions: dict, bug: Bug) -> dict:
    """The solution notebooks with the cell ``bug.function_or_cell`` replaced by ``bug.source``."""
    submission = {name: nbformat.from_dict(notebook) for name, notebook in solutions.items()}
    for notebook in submission.values():
        cell = cells_by_id(notebook).get(bug.function_or_cell)
        if cell is not None:
            cell.source = bug.source
            return submission
    raise AssertionError(f"bug {bug.id}: no cell {bug.function_or_cell!r} in the solution")


def student_id(bug: Bug) -> str:
    return "bug_" + re.sub(r"\W", "_", bug.id)


def grades(course: Path, assignment: str, student: str, notebook: str) -> dict[str, tuple[float, float, str]]:
    """``{grade_id: (score, max_score, cell_type)}`` for one autograded notebook, from the gradebook."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(notebook, assignment, student)
        return {grade.name: (grade.score, grade.max_score, grade.cell.cell_type) for grade in submitted.grades}


def cell_output(course: Path, assignment: str, student: str, notebook_file: str, grade_id: str) -> str:
    """All text a cell of the autograded notebook printed or raised (stream, results, error and traceback)."""
    notebook = read(course / "autograded" / student / assignment / notebook_file)
    parts = []
    for output in cells_by_id(notebook)[grade_id].get("outputs", []):
        parts += [output.get("text", ""), output.get("data", {}).get("text/plain", ""),
                  output.get("ename", ""), output.get("evalue", ""), "\n".join(output.get("traceback", []))]
    return "\n".join(parts)
