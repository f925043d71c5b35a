"""The nbgrader assignments: releases in sync and leak-free, solutions score full marks, bugs lose points.

Generic over every folder in solutions/ (see exercise_harness.py); buggy submissions are
data in tests/buggy/<assignment>.py.  One autograde run per assignment grades every
student at once: "solution", "blank" (the untouched release) and one per catalogued bug.
"""
from __future__ import annotations

import ast
import os
import re

import pytest

import exercise_harness as harness
from buggy import bugs_for
from nbrun import execute_notebook
from sdpa_course.chapters import CHAPTERS
from sdpa_course.grading.exercises import all_tasks
from sdpa_course.i18n import catalogs
from sdpa_course.i18n.book import LANGUAGES, Source

ASSIGNMENTS = harness.assignments()
MIN_BUGS = 2
CHINESE = re.compile(r"[\u4e00-\u9fff]")
slow = pytest.mark.slow
each_assignment = pytest.mark.parametrize("assignment", ASSIGNMENTS)
# Each edition of the course: (language, its solutions/, its exercises/); a Chinese assignment is graded exactly
# as the English is, so the same checks run on every translated one.
EDITIONS = [("en", harness.SOLUTIONS, harness.EXERCISES)] + [
    (language, course / "solutions", course / "exercises") for language, course in harness.TRANSLATED_COURSES.items()]
each_edition = pytest.mark.parametrize("language, solutions, exercises, assignment", [
    pytest.param(language, solutions, exercises, assignment, id=f"{language}-{assignment}")
    for language, solutions, exercises in EDITIONS for assignment in ASSIGNMENTS if (solutions / assignment).is_dir()])


def solution_notebooks(assignment: str) -> list:
    return harness.notebooks(harness.SOLUTIONS / assignment)


def release_notebooks(assignment: str) -> list:
    return harness.notebooks(harness.EXERCISES / assignment)


# The longest test first, so that xdist starts the autograde runs early and the workers finish together.
@slow
@pytest.mark.filterwarnings(r"ignore:Object of type <Submitted\w+> not in session")  # nbgrader's own SQLAlchemy use
@each_edition
def test_generate_then_autograde_solution_blank_and_bugs(language, solutions, exercises, assignment, tmp_path,
                                                         monkeypatch):
    """Does `nbgrader generate_assignment` reproduce exercises/ (zh/exercises/), and autograding in one run give
    full marks to the solution, 0 to the blank release, and catch each bug with its hint, in every language?

    An edition is graded in its language, as its nbgrader_config.py sets it: the scores are the same, and the
    feedback is in that language."""
    monkeypatch.setenv("SDPA_LANG", language)
    course = harness.make_course(tmp_path, assignment, solutions)
    problems = [f"{exercises.relative_to(harness.ROOT)}/ is out of date (run `make exercises`): {difference}"
                for difference in harness.release_differences(harness.release_folder(course, assignment),
                                                              exercises / assignment)]
    solutions = {path.name: harness.read(path) for path in harness.notebooks(solutions / assignment)}
    release = {path.name: harness.read(path) for path in harness.notebooks(harness.release_folder(course, assignment))}
    bugs = bugs_for(assignment)
    harness.submit(course, assignment, "solution", solutions)
    harness.submit(course, assignment, "blank", release)
    for bug in bugs:
        harness.submit(course, assignment, harness.student_id(bug), harness.buggy_submission(solutions, bug))
    harness.autograde(course, assignment)

    for name in solutions:
        notebook = name.removesuffix(".ipynb")
        auto = {gid: g for gid, g in harness.grades(course, assignment, "solution", notebook).items() if g[2] == "code"}
        assert auto, f"{name} has no auto-graded cells"
        problems += [f"solution scores {score}/{points} on {gid}" for gid, (score, points, _) in auto.items()
                     if score != points]
        problems += [f"blank release scores {score} on {gid}"
                     for gid, (score, _, _) in harness.grades(course, assignment, "blank", notebook).items() if score]
    for bug in bugs:
        problems += bug_problems(course, assignment, bug, solutions, language)
    assert not problems, "\n".join(problems)


def bug_problems(course, assignment: str, bug, solutions: dict, language: str) -> list[str]:
    """Why the buggy submission was not caught as it should be ([] if it was)."""
    student = harness.student_id(bug)
    for name in solutions:
        scores = harness.grades(course, assignment, student, name.removesuffix(".ipynb"))
        if bug.test_cell in scores:
            score, points, _unused = scores[bug.test_cell]
            output = harness.cell_output(course, assignment, student, name, bug.test_cell)
            missing = hint_problem(bug, harness.SOLUTIONS / assignment / name, output, language)
            return ([f"bug {bug.id}: {bug.test_cell} still scores {score}/{points}"] if score >= points else []) + \
                ([f"bug {bug.id}: {missing} in the feedback of {bug.test_cell}:\n{output[-1500:]}"] if missing else [])
    return [f"bug {bug.id}: no grade cell {bug.test_cell}"]


def hint_problem(bug, english_notebook, output: str, language: str) -> str | None:
    """What of a bug's (English) hint the feedback lacks in ``language``, or None.

    In English the hint itself.  In another language: the translated name of the catalogued mistake the hint
    quotes; where the hint is part of a string its grade cell writes (``raise GradingError("...")``), the longest
    fixed piece of that string's translation; a hint in code (``sdpa_course.replay(...)``) as it is; any other
    hint quotes English prose, of which the feedback must show the translation: it must not hold the English,
    and hold the language's own text.
    """
    hint = bug.hint
    if language == "en":
        return None if hint in output else f"hint {hint!r} not"
    if not re.search(r"[a-z] [a-z]", hint):  # code or a value ("NaN", "sdpa_course.replay("): the same in any language
        return None if hint in output else f"hint {hint!r} not"
    from sdpa_course.i18n.messages import _
    quoted = hint.removeprefix("known mistake: ")
    names = sorted({_(m.name) for t in all_tasks() for m in t.mistakes if quoted in m.name})
    if names:
        return None if any(name in output for name in names) else f"the translated mistake name {names} not"
    piece = _translated_piece(bug, english_notebook, language)
    if piece is not None:
        return None if piece in output else f"the translation {piece!r} of hint {hint!r} not"
    return None if hint not in output and CHINESE.search(output) else f"the translation of hint {hint!r} not"


def _translated_piece(bug, english_notebook, language: str) -> str | None:
    """The longest fixed piece of the translation of the grade cell's literal that holds the bug's hint, if one does."""
    cell_id = harness.cells_by_id(harness.read(english_notebook))[bug.test_cell].id
    catalog = catalogs.load(Source(harness.ROOT, english_notebook, language).catalog, LANGUAGES[language])
    for entry in catalog:
        if entry.msgctxt == cell_id and entry.msgstr and bug.hint in entry.msgid:
            literal = ast.parse(f"(\n{entry.msgstr}\n)", mode="eval").body
            pieces = [literal] if isinstance(literal, ast.Constant) else literal.values
            return max((piece.value for piece in pieces if isinstance(piece, ast.Constant)), key=len)
    return None


@each_assignment
def test_assignment_is_a_chapter_with_a_release(assignment):
    """Is every solutions/ folder one of the twelve chapters, with its release committed in exercises/?"""
    assert assignment in {chapter.assignment for chapter in CHAPTERS}, f"{assignment} is not a chapter assignment"
    assert release_notebooks(assignment), f"exercises/{assignment} is missing: run `make exercises`"


@each_edition
def test_release_leaks_no_solution_or_hidden_test(language, solutions, exercises, assignment):
    """Does no line of a solution region or hidden test, and no marker, reach exercises/ (zh/exercises/)?"""
    assert harness.notebooks(exercises / assignment), f"{exercises.relative_to(harness.ROOT)}/{assignment} is missing"
    problems = [f"{path.name}: {leak}" for path in harness.notebooks(solutions / assignment)
                for leak in harness.leaks(path, exercises / assignment / path.name)]
    assert not problems, "\n".join(problems)


def test_every_translated_solution_has_its_release():
    """A Chinese solution generated from its catalog and no Chinese release, or the other way round, is a stale tree."""
    for language, solutions, exercises in EDITIONS[1:]:
        mine = {p.name for p in solutions.glob("*") if p.is_dir()}
        released = {p.name for p in exercises.glob("*") if p.is_dir()}
        assert mine == released, f"{language}: solutions {sorted(mine - released)} without a release, " \
                                 f"releases {sorted(released - mine)} without a solution (run `make exercises`)"


@each_assignment
def test_every_chapter_has_catalogued_bugs(assignment):
    """Does each assignment have at least two buggy submissions, each aimed at a real solution and grade cell?"""
    bugs = bugs_for(assignment)
    assert len(bugs) >= MIN_BUGS, f"tests/buggy/{assignment}.py should define at least {MIN_BUGS} BUGS"
    assert len({bug.id for bug in bugs}) == len(bugs), "bug ids must be unique"
    cells = {gid: cell for path in solution_notebooks(assignment) for gid, cell in harness.cells_by_id(harness.read(path)).items()}
    roles = {gid: harness.grader_meta(cell) for gid, cell in cells.items()}
    for bug in bugs:
        assert roles.get(bug.function_or_cell, {}).get("solution"), f"bug {bug.id}: {bug.function_or_cell!r} is not a solution cell"
        assert roles.get(bug.test_cell, {}).get("grade"), f"bug {bug.id}: {bug.test_cell!r} is not a grade cell"
        assert bug.source.strip() != cells[bug.function_or_cell].source.strip(), f"bug {bug.id} changes nothing"


def ends_with_a_value(source: str) -> bool:
    """Does the cell's last statement display a value (nbgrader would read it as partial credit)?"""
    body = ast.parse(source).body
    if not body or not isinstance(body[-1], ast.Expr):
        return False
    value = body[-1].value  # a call may return a value (a check returns its number of cases); print returns None
    return not isinstance(value, ast.Call) or getattr(value.func, "id", "") != "print"


@each_assignment
def test_grade_cells_end_without_a_value(assignment):
    """Does no grade cell end with a value, which nbgrader would take as the cell's score?"""
    cells = [(path.name, gid) for path in solution_notebooks(assignment)
             for gid, cell in harness.cells_by_id(harness.read(path)).items()
             if cell.cell_type == "code" and harness.grader_meta(cell).get("grade") and ends_with_a_value(cell.source)]
    assert not cells, f"these grade cells end with a value (assign it, e.g. `_ = task.check(...)`, or print): {cells}"


@slow
@each_assignment
def test_solution_runs_cleanly_and_validates(assignment, tmp_path):
    """Does every solution notebook run top to bottom without an error, and pass `nbgrader validate`?"""
    for path in solution_notebooks(assignment):
        notebook, _ = execute_notebook(path)
        assert harness.validation(notebook, tmp_path / path.name) == {}, f"{path.name}: the solution fails validation"


@slow
@each_assignment
def test_release_fails_only_with_not_implemented_and_every_test_fails(assignment, tmp_path):
    """Does the untouched release run top to bottom failing only with NotImplementedError, and does
    `nbgrader validate --invert` pass (no test passes before the student writes code)?"""
    for path in release_notebooks(assignment):
        notebook, _ = execute_notebook(path, allow_errors=True)
        errors = [(index, output.ename, output.evalue) for index, cell in enumerate(notebook.cells)
                  for output in cell.get("outputs", []) if output.output_type == "error"]
        assert errors, f"{path.name}: nothing raised NotImplementedError in the blank release"
        assert all(ename == "NotImplementedError" for _, ename, _ in errors), f"{path.name}: {errors}"
        assert harness.validation(notebook, tmp_path / path.name, invert=True) == {}, \
            f"{path.name}: a test passes on the blank release"


def test_the_chinese_course_is_configured_as_the_english_one(monkeypatch):
    """zh/nbgrader_config.py is the course's configuration (trusted grading included), rooted in zh/, and it grades
    in Chinese."""
    from traitlets.config.loader import PyFileConfigLoader
    monkeypatch.setenv("SDPA_LANG", "en")  # the Chinese configuration sets the process's language: undone after
    english = PyFileConfigLoader("nbgrader_config.py", path=str(harness.ROOT)).load_config()
    chinese = PyFileConfigLoader("nbgrader_config.py", path=str(harness.ROOT / "zh")).load_config()
    assert os.environ["SDPA_LANG"] == "zh"
    assert chinese.CourseDirectory.root == str(harness.ROOT / "zh")
    assert chinese.Autograde.autograde_preprocessors == english.Autograde.autograde_preprocessors
    assert chinese.CourseDirectory.ignore == english.CourseDirectory.ignore
