"""Do the hidden tests catch every slip that changes a graded function's answer? (issue 14)

Each graded function is a :class:`~sdpa_course.grading.task.Task`; its solution is the cell of
``solutions/<assignment>/*.ipynb`` whose grade_id is the task's name (else the one cell that
defines it).  Every mutant of that cell (tests/mutation.py: one student-like slip each) is
defined the way a learner's notebook defines it, after the notebook's earlier cells (the
imports, the other solutions), and graded by the hidden test, ``task.check_random``, with
fixed seeds.  It is killed when grading fails on every seed (a GradingError, or any error);
a mutant that passes one seed is a survivor, and every survivor must be listed in
:data:`EQUIVALENT` with the reason it gives the right answer on every valid input.  A
survivor that is not equivalent is a gap in the task's case generator: draw inputs on which
it is wrong.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import signal
from pathlib import Path
from typing import Callable, NamedTuple

import nbformat
import numpy as np
import pytest
from mutation import Mutant, mutants
from sdpa_course.grading.exercises import all_tasks
from sdpa_course.grading.task import Task

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
SEEDS = (2024, 14)  # the grading generators' seeds: fixed, so the verdicts are the same on every run
PROPERTY_SEEDS = range(100, 140)  # 40 more gradings for a survivor of a property-graded task
MAX_MUTANTS = 60  # per task, a stable sample when a solution has more (tests/mutation.py)
TIME_LIMIT = 10.0  # seconds per grading of a mutant; a mutant that runs longer is killed (grading times out)

# Survivors that give the right answer on every valid input: {task: {mutant: why it is equivalent}}.
DEFAULT_AXIS = "axis=-1 is softmax's default: the same call"
EQUIVALENT: dict[str, dict[str, str]] = {
    "ch06.attention_output": {"line 17: sdpa_lib.softmax(scores, axis=-1) -> sdpa_lib.softmax(scores)": DEFAULT_AXIS},
    "ch07.attention_row_by_row": {
        "line 19: sdpa_lib.softmax(scores, axis=-1) -> sdpa_lib.softmax(scores)": DEFAULT_AXIS,
        "line 16: np.empty((*batch, query.shape[-2], value.shape[-1]), dtype=np.result_type(query, key, value)) -> "
        "np.empty((*batch, query.shape[-2], value.shape[-1]))":
            "the same values in float64 for float32 inputs: the notebook states no dtype rule for it",
    },
    "ch08.masked_attention": {"line 18: sdpa_lib.softmax(scores, axis=-1) -> sdpa_lib.softmax(scores)": DEFAULT_AXIS},
    "ch13.decode_step": {"line 22: sdpa_lib.softmax(scores, axis=-1) -> sdpa_lib.softmax(scores)": DEFAULT_AXIS},
    "ch09.retrieve": {
        **{f"line 16: {before} -> {after}": "the ranking of a row is the same under any positive scale of its scores"
           for before, after in (
               ("queries @ documents.T / np.sqrt(queries.shape[-1])", "queries @ documents.T * np.sqrt(queries.shape[-1])"),
               ("queries @ documents.T / np.sqrt(queries.shape[-1])", "queries @ documents.T"),
               ("np.sqrt(queries.shape[-1])", "queries.shape[-1]"),
               ("queries.shape[-1]", "queries.shape[-2]"),
               ("queries.shape[-1]", "queries.shape[0]"))},
        "line 17: np.argsort(-scores, axis=-1, kind='stable') -> np.argsort(-scores, kind='stable')":
            "axis=-1 is argsort's default: the same call",
    },
    "ch10.attention": {
        "line 23: np.isneginf(row_max) -> np.isinf(row_max)":
            "a row's maximum is +inf only if the scores hold +inf, which no valid input gives",
        "line 23: np.where(np.isneginf(row_max), 0, row_max) -> np.where(np.isneginf(row_max), 1, row_max)":
            "an all -inf row may be shifted by any finite number: exp(-inf - 1) is 0 as exp(-inf - 0) is",
    },
    "ch11.share_outside_unit_interval": {
        "line 15: scores < 0 -> scores <= 0": "a score exactly 0 has probability 0, and float rounding would decide it",
        "line 15: scores > 1 -> scores >= 1": "a score exactly 1 has probability 0, and float rounding would decide it",
    },
    "ch08.padding_mask": {
        "line 4: lengths = np.asarray(lengths) -> (deleted)":
            "lengths arrive as an integer array (B,), as the docstring and every case give them",
    },
    "ch05.softmax": {
        "line 19: np.isneginf(row_max) -> np.isinf(row_max)":
            "a slice's maximum is +inf only if x holds +inf, which is no valid score (-inf marks the masked entries)",
        "line 19: np.where(np.isneginf(row_max), 0, row_max) -> np.where(np.isneginf(row_max), 1, row_max)":
            "an all -inf slice may be shifted by any finite number: exp(-inf - 1) is 0 as exp(-inf - 0) is",
    },
    "ch05.softmax_jacobian": {
        "line 15: p[..., None, :] -> p[..., :, None]":
            "scaling the identity's columns by p or its rows by p gives the same diagonal matrix diag(p)",
        "line 15: np.eye(p.shape[-1], dtype=p.dtype) -> np.eye(p.shape[-1])":
            "the same values in float64 for float32 p: the notebook states no dtype rule for the Jacobian, so the "
            "task does not grade it (keep_dtype=False)",
    },
}


def key(task: Task) -> str:
    return f"{task.chapter}.{task.name}"


TASKS = {key(task): task for task in all_tasks()}


# --- the solution in its notebook -------------------------------------------------------------------

class Solution(NamedTuple):
    """A task's solution cell and the notebook's cells before it that a learner's kernel has run (no grade cells)."""
    notebook: Path
    earlier: tuple[str, ...]
    source: str


def _grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _defines(source: str, name: str) -> bool:
    try:
        return any(isinstance(node, ast.FunctionDef) and node.name == name for node in ast.parse(source).body)
    except SyntaxError:
        return False


@functools.lru_cache(maxsize=None)
def solution(task_key: str) -> Solution:
    """The solution of the task: the cell with its grade_id, else the one code cell defining ``def <name>(``."""
    task = TASKS[task_key]
    found = []
    for path in sorted((SOLUTIONS / task.assignment).glob("*.ipynb")):
        cells = [cell for cell in nbformat.read(path, as_version=4).cells
                 if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade")]
        by_id = [i for i, cell in enumerate(cells) if _grade_id(cell) == task.name]
        for i in by_id or [i for i, cell in enumerate(cells) if _defines(cell.source, task.name)]:
            found.append(Solution(path, tuple(cell.source for cell in cells[:i]), cells[i].source))
    if len(found) != 1:
        raise LookupError(f"{task_key}: expected one solution cell in solutions/{task.assignment}/*.ipynb (grade_id "
                          f"{task.name!r}, else defining def {task.name}(...)); found {len(found)}")
    return found[0]


def defined(task: Task, define: Callable[[dict], None]) -> Callable:
    """The function ``task.name`` as a notebook defines it: the earlier cells run, then ``define(namespace)``."""
    namespace = {"__name__": "__main__"}
    for source in solution(key(task)).earlier:
        exec(compile(source, "<earlier cell>", "exec"), namespace)
    define(namespace)
    return namespace[task.name]


def _original(task: Task) -> Callable[[dict], None]:
    source = solution(key(task)).source
    return lambda namespace: exec(compile(source, "<solution>", "exec"), namespace)


def task_mutants(task: Task) -> list[Mutant]:
    return mutants(solution(key(task)).source, limit=MAX_MUTANTS)


# --- grading a mutant ------------------------------------------------------------------------------

class TimedOut(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise :class:`TimedOut` in the block after ``seconds`` (where SIGALRM exists; else no limit)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise TimedOut(f"ran longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def passes(task: Task, define: Callable[[dict], None], seed: int) -> bool:
    """Does the hidden test, drawing with ``seed``, pass the function that ``define`` defines?"""
    try:
        with time_limit(TIME_LIMIT):
            task.check_random(defined(task, define), rng=np.random.default_rng(seed))
    except Exception:  # GradingError, or an error defining or grading the mutant: caught
        return False
    return True


def survives(task: Task, mutant: Mutant) -> bool:
    """Does the mutant pass the hidden test with some seed (a student with this slip could score)?"""
    return any(passes(task, mutant.define, seed) for seed in SEEDS)


def another_right_answer(task: Task, mutant: Mutant) -> bool:
    """For a task graded by a property (a counterexample has no one answer): does the mutant keep it on many gradings?

    Such a mutant is a different right answer, not a gap: the property is the specification.
    """
    return task.verdict is not None and all(passes(task, mutant.define, seed) for seed in PROPERTY_SEEDS)


@pytest.fixture(autouse=True)
def no_shrinking(monkeypatch):
    """Keep the verdict of check_random, skip its search for the smallest failing case (feedback, not verdict)."""
    monkeypatch.setattr(Task, "smallest_failure", lambda self, student, case, failure: (case, failure, None))


# --- the tests --------------------------------------------------------------------------------------

@pytest.mark.slow  # about 1 to 5 s a task
@pytest.mark.parametrize("task_key", sorted(TASKS))
def test_hidden_tests_kill_every_non_equivalent_mutant(task_key):
    """Is every mutant of the solution that survives the hidden tests one that EQUIVALENT explains?"""
    task = TASKS[task_key]
    for seed in SEEDS:
        assert passes(task, _original(task), seed), f"{task_key}: the solution fails its own hidden test (seed {seed})"
    generated = task_mutants(task)  # none for a function that returns a constant (ch12's answer_q1)
    survivors = {m.description: m for m in generated if survives(task, m) and not another_right_answer(task, m)}
    allowed = EQUIVALENT.get(task_key, {})
    gaps = [m for description, m in survivors.items() if description not in allowed]
    stale = sorted(set(allowed) - set(survivors))
    message = [f"{task_key}: {len(generated)} mutants of {solution(task_key).notebook.name}, {len(survivors)} survive."]
    if gaps:
        message.append("These pass the hidden tests though (unless equivalent) they give wrong answers: draw cases "
                       f"where they are wrong (sdpa_course/grading/exercises/{task.assignment}.py), or, if one is "
                       "equivalent, list it in EQUIVALENT with the reason:")
        message += [f"  {m.description}" for m in gaps]
    if stale:
        message.append("EQUIVALENT lists these, but they are killed or no longer generated: remove them:")
        message += [f"  {description}" for description in stale]
    assert not gaps and not stale, "\n".join(message)


@pytest.mark.slow
def test_allowlist_is_current():
    """Does every mutant EQUIVALENT lists name an existing task, and is it still generated and still surviving?"""
    problems = []
    for task_key, allowed in EQUIVALENT.items():
        if task_key not in TASKS:
            problems.append(f"{task_key}: no such task (all_tasks() has {', '.join(sorted(TASKS))})")
            continue
        task = TASKS[task_key]
        generated = {m.description: m for m in task_mutants(task)}
        for description, reason in allowed.items():
            if not reason.strip():
                problems.append(f"{task_key}: {description}: give the reason it is equivalent")
            if description not in generated:
                problems.append(f"{task_key}: {description}: no longer generated")
            elif not survives(task, generated[description]):
                problems.append(f"{task_key}: {description}: now killed by the hidden tests")
    assert not problems, "\n".join(problems)


# --- the mutator ------------------------------------------------------------------------------------

TINY = '''\
def normalise(x, axis=-1):
    """Each slice along axis, minus its maximum, divided by its sum."""
    ### BEGIN SOLUTION
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    return (x - m) / np.sqrt(x.shape[-1])
    ### END SOLUTION
'''

TINY_MUTANTS = [
    "line 4: np.max(x, axis=axis, keepdims=True) -> np.max(x, keepdims=True)",
    "line 4: np.max(x, axis=axis, keepdims=True) -> np.max(x, axis=-1, keepdims=True)",
    "line 4: np.max(x, axis=axis, keepdims=True) -> np.max(x, axis=axis)",
    "line 4: np.max(x, axis=axis, keepdims=True) -> np.min(x, axis=axis, keepdims=True)",
    "line 4: np.max(x, axis=axis, keepdims=True) -> np.max(x, axis=axis, keepdims=False)",
    "line 5: m = np.where(np.isneginf(m), 0, m) -> (deleted)",
    "line 5: np.where(np.isneginf(m), 0, m) -> np.where(np.isneginf(m), m, 0)",
    "line 5: np.isneginf(m) -> np.isinf(m)",
    "line 5: np.where(np.isneginf(m), 0, m) -> np.where(np.isneginf(m), 1, m)",
    "line 6: (x - m) / np.sqrt(x.shape[-1]) -> (x - m) * np.sqrt(x.shape[-1])",
    "line 6: (x - m) / np.sqrt(x.shape[-1]) -> x - m",
    "line 6: (x - m) / np.sqrt(x.shape[-1]) -> np.sqrt(x.shape[-1]) / (x - m)",
    "line 6: x - m -> x + m",
    "line 6: x - m -> x",
    "line 6: x - m -> m - x",
    "line 6: np.sqrt(x.shape[-1]) -> x.shape[-1]",
    "line 6: x.shape[-1] -> x.shape[-2]",
    "line 6: x.shape[-1] -> x.shape[0]",
]


def test_mutator_makes_the_expected_mutants_of_a_tiny_function():
    """Does the mutator make each slip once, in the solution region only (not the default axis, not the docstring)?"""
    assert [m.description for m in mutants(TINY)] == TINY_MUTANTS


def test_each_mutant_is_a_different_program_that_defines_the_function():
    """Does every mutant compile, define the function and differ from the solution and from the others?"""
    found = mutants(TINY)
    assert len({m.source for m in found} | {ast.unparse(ast.parse(TINY))}) == len(found) + 1
    for m in found:
        namespace = {"np": np}
        m.define(namespace)
        assert callable(namespace["normalise"]), m.description


def test_a_limited_sample_is_stable():
    """With a limit, does a larger limit keep every mutant a smaller one keeps (a sample that does not jump about)?"""
    everything = [m.description for m in mutants(TINY)]
    few, more = ([m.description for m in mutants(TINY, limit=n)] for n in (5, 10))
    assert len(few) == 5 and set(few) <= set(more) <= set(everything)
    assert few == [d for d in everything if d in few]  # in source order
