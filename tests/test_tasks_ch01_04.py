"""The graded functions of chapters 1-4 as tasks: the solutions pass, every size level draws valid cases, a wrong
function is shown its smallest failing case with a line that replays it.  In process, without nbgrader."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest

from sdpa_course.grading import GradingError
from sdpa_course.grading.checks import local_outcome
from sdpa_course.grading.draw import FULL, LEVELS
from sdpa_course.grading.exercises import task, tasks
from sdpa_course.grading.student_lib import absent_names
from sdpa_course import replay

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = {"ch01": "ch01_visual_demo", "ch02": "ch02_qkv", "ch03": "ch03_dot_product", "ch04": "ch04_scaling"}
TASKS = [(chapter, name) for chapter in ASSIGNMENTS for name in tasks(chapter)]
REPLAY = re.compile(r'sdpa_course\.replay\("(ch\d\d)", "(\w+)", seed=(\d+), size=(\d)\)')


def notebook(chapter: str):
    assignment = ASSIGNMENTS[chapter]
    return nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


def defined(source: str) -> dict:
    """The names a cell source defines, run with numpy imported as the notebooks do."""
    namespace = {"np": np}
    exec(source, namespace)  # noqa: S102  (the course's own solution cells, or a wrong answer written here)
    return namespace


def solutions(chapter: str) -> dict:
    """Every function of the chapter's solution cells, defined in one namespace (a solution may call another)."""
    namespace = {"np": np}
    for cell in notebook(chapter).cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            exec(cell.source, namespace)  # noqa: S102
    return namespace


SOLUTIONS = {chapter: solutions(chapter) for chapter in ASSIGNMENTS}


def magnitude(value) -> int:
    """How big a case is: the entries of its arrays and the lengths given as ints."""
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, (tuple, list)):
        return sum(magnitude(item) for item in value)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0

# One wrong answer per task, each wrong on small inputs already: (chapter, name) -> source.
WRONG = {
    ("ch01", "pipeline_shapes"): '''
def pipeline_shapes(batch, L, D, E, Ev):
    b = tuple(batch)
    return {"X": (*b, L, D), "W_Q": (D, E), "W_K": (D, E), "W_V": (D, Ev), "Q": (*b, L, E), "K": (*b, L, E),
            "V": (*b, L, Ev), "scores": (*b, L, E), "weights": (*b, L, E), "output": (*b, L, Ev)}
''',
    ("ch01", "self_attention"): '''
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ np.swapaxes(k, -1, -2)
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True) @ v
''',
    ("ch01", "most_attended"): '''
def most_attended(x, w_q, w_k):
    return np.argmax((x @ w_q) @ np.swapaxes(x @ w_k, -1, -2), axis=-2)
''',
    ("ch02", "project_qkv"): "def project_qkv(x, w_q, w_k, w_v):\n    return x @ w_q, x @ w_v, x @ w_k\n",
    ("ch02", "qkv_parameter_count"): "def qkv_parameter_count(d_model, d_k, d_v, bias=True):\n    return d_model * (2 * d_k + d_v)\n",
    ("ch03", "dot_scores_loops"): "def dot_scores_loops(query, key):\n    return key @ query.T\n",
    ("ch03", "dot_scores"): "def dot_scores(query, key):\n    return key @ np.swapaxes(query, -1, -2)\n",
    ("ch03", "cosine_scores"): '''
def cosine_scores(query, key):
    q = query / np.linalg.norm(query, axis=-1, keepdims=True)
    return q @ np.swapaxes(key / np.linalg.norm(key, axis=-1, keepdims=True), -1, -2)
''',
    ("ch03", "norms_and_cosine"): '''
def norms_and_cosine(q, k):
    n = np.sum(q * q, axis=-1) * np.sum(k * k, axis=-1)
    return n, np.sum(q * k, axis=-1) / n
''',
    ("ch03", "disagreeing_keys"): "def disagreeing_keys(query):\n    return 2 * query, query\n",
    ("ch04", "scaled_attention_weights"): '''
def scaled_attention_weights(x, w_q, w_k):
    scores = (x @ w_q) @ np.swapaxes(x @ w_k, -1, -2)
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)
''',
    ("ch04", "max_weight_and_entropy"): '''
def max_weight_and_entropy(query, key, scaled=True):
    scores = query @ np.swapaxes(key, -1, -2) / (np.sqrt(query.shape[-1]) if scaled else 1.0)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights.max(axis=-1), -np.sum(weights * np.log2(np.where(weights > 0, weights, 1.0)), axis=-1)
''',
}


def test_every_task_has_a_wrong_answer_here():
    """Does the table of wrong answers cover every task of chapters 1-4 (a new task needs one)?"""
    assert sorted(WRONG) == sorted(TASKS)


@pytest.mark.parametrize("chapter, name", TASKS)
def test_solution_passes_the_hidden_cases(chapter, name):
    """Does the solution notebook's function pass check_random, on cases from three grading seeds?"""
    graded = task(chapter, name)
    for seed in range(3):
        assert graded.check_random(SOLUTIONS[chapter][name], rng=np.random.default_rng(seed)) == graded.count


@pytest.mark.parametrize("chapter, name", TASKS)
def test_every_level_draws_valid_cases(chapter, name):
    """At every size level, does the reference run without a warning and the solution get every case right,
    and are the cases smaller below the full level?"""
    graded = task(chapter, name)
    entries = {}
    for level in LEVELS:
        cases = [graded.case(seed, level) for seed in range(40)]
        entries[level] = np.mean([magnitude((*case.args, *case.kwargs.values())) for case in cases])
        for case in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                if graded.verdict is None:
                    graded.comparison.expected(case.args, case.kwargs)
            outcome = local_outcome(SOLUTIONS[chapter][name], case.args, case.kwargs, graded.forbidden)
            failure = graded.comparison.failure(name, case.args, case.kwargs, outcome)
            assert failure is None, f"level {level}, seed {case.seed}: {failure.feedback}"
    assert entries[0] < entries[FULL], entries


@pytest.mark.parametrize("chapter, name", TASKS)
def test_wrong_answer_is_shown_its_smallest_case_and_how_to_replay_it(chapter, name):
    """Does a wrong function fail with a shrunk case (size 0..3) and a replay line that draws that case again?"""
    wrong = defined(WRONG[chapter, name])[name]
    with pytest.raises(GradingError) as failed:
        task(chapter, name).check_random(wrong, rng=np.random.default_rng(0))
    feedback = str(failed.value)
    assert "the smallest failing case found" in feedback, feedback
    found = REPLAY.search(feedback)
    assert found and found.group(1, 2) == (chapter, name), feedback
    seed, size = int(found.group(3)), int(found.group(4))
    assert size < FULL, feedback
    replayed = replay(chapter, name, seed=seed, size=size, student=wrong)
    assert replayed.failure is not None
    assert replay(chapter, name, seed=seed, size=size, student=SOLUTIONS[chapter][name]).failure is None


def test_pipeline_shapes_are_traced_at_any_length():
    """Are the shapes traced right for lengths no array could have, and does building the arrays fail there?"""
    from sdpa_course.grading.exercises.ch01_visual_demo import traced_shapes
    big = 2**32
    shapes = traced_shapes((2, 3), big + 1, big + 2, big + 3, big + 4)
    assert shapes["scores"] == (2, 3, big + 1, big + 1) and shapes["W_V"] == (big + 2, big + 4)
    shapes_task = task("ch01", "pipeline_shapes")
    assert shapes_task.check(SOLUTIONS["ch01"]["pipeline_shapes"], [(((), big + 1, big + 2, big + 3, big + 4), {})]) == 1
    building = defined('''
def pipeline_shapes(batch, L, D, E, Ev):
    x, w_q, w_v = np.zeros((*batch, L, D)), np.zeros((D, E)), np.zeros((D, Ev))
    q, v = x @ w_q, x @ w_v
    return {"X": x.shape, "W_Q": w_q.shape, "W_K": w_q.shape, "W_V": w_v.shape, "Q": q.shape, "K": q.shape,
            "V": v.shape, "scores": (*batch, L, L), "weights": (*batch, L, L), "output": v.shape}
''')["pipeline_shapes"]
    assert shapes_task.check(building, [(((2,), 5, 16, 4, 6), {})]) == 1  # right shapes ...
    with pytest.raises(GradingError, match="your pipeline_shapes raised ValueError"):  # ... built, not predicted
        shapes_task.check(building, [(((), big + 1, big + 2, big + 3, big + 4), {})])


def test_cosine_scores_must_not_warn_on_a_zero_key():
    """Is a cosine that divides by a zero norm and then replaces the NaN failed for its warning, as the notebook says?"""
    replaced = defined('''
def cosine_scores(query, key):
    q = query / np.linalg.norm(query, axis=-1, keepdims=True)
    k = key / np.linalg.norm(key, axis=-1, keepdims=True)
    return np.nan_to_num(q @ np.swapaxes(k, -1, -2))
''')["cosine_scores"]
    with pytest.raises(GradingError, match="the notebook asks for no warning") as failed:
        task("ch03", "cosine_scores").check_random(replaced, rng=np.random.default_rng(0))
    assert "sdpa_course.replay(" in str(failed.value)


@pytest.mark.parametrize("keys, problem", [
    ((np.array([2.0, 0.0]), np.array([1.0, 0.0])), "cosine cannot rank them"),
    ((np.array([1.0, 0.0]), np.array([2.0, 2.0])), "disagrees the other way round"),
    ((np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0])), "must be finite arrays of shape (2,)"),
    ((np.array([1.0, 0.0]),), "return 2 arrays (k1, k2)"),
    ((np.array([2.0, 2.0]), np.array([1.0, 0.0])), None),
])
def test_disagreement_verdict(keys, problem):
    """Does the verdict on a pair of keys for q = (1, 0) name what is wrong, and accept a pair that disagrees?"""
    from sdpa_course.grading.catalogue.applications import disagreeing_keys_problem
    found = disagreeing_keys_problem(np.array([1.0, 0.0]), keys)
    assert (found is None) if problem is None else (problem in found), found


def test_grade_cells_forbid_what_the_notebooks_say():
    """Do the grade cells take away sdpa_lib.softmax in chapter 1 (write it yourself) and init_projection in chapter 2?"""
    def forbidden(chapter):
        return absent_names([cell.source for cell in notebook(chapter).cells if cell.metadata.get("nbgrader", {}).get("grade")])
    assert {"softmax", "scaled_dot_product_attention", "attention_weights"} <= forbidden("ch01")
    assert {"project_qkv", "init_projection"} <= forbidden("ch02")
    assert {"dot_product_scores", "scaled_scores", "cosine_scores"} <= forbidden("ch03")
    assert {"attention_weights", "scaled_scores", "entropy"} <= forbidden("ch04")
