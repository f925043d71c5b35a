"""The graded tasks of chapters 9-11: the solutions pass, every size level draws valid cases, a wrong answer is shrunk.

In process and fast (no nbgrader): each solution function comes from its cell of the
solutions notebook, executed with the notebook's imports.
"""
from __future__ import annotations

import ast
import functools
import re

import nbformat
import numpy as np
import pytest
from exercise_harness import SOLUTIONS

import sdpa_lib
from sdpa_course.grading import GradingError
from sdpa_course.grading.draw import FULL, LEVELS
from sdpa_course.grading.exercises import tasks
from sdpa_course import replay
from sdpa_course.grading.student_lib import absent_names

ASSIGNMENTS = ("ch09_applications", "ch10_python_demo", "ch11_misconceptions")
TASKS = [t for assignment in ASSIGNMENTS for t in tasks(assignment).values()]
each_task = pytest.mark.parametrize("graded", TASKS, ids=[f"{t.chapter}-{t.name}" for t in TASKS])


def notebook(assignment: str):
    return nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)


@functools.cache
def solutions(assignment: str) -> dict:
    """The namespace of the notebook's imports and solution cells, run in order (part 3 of ch10 calls part 2)."""
    namespace: dict = {}
    for cell in notebook(assignment).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade_id") == "imports"):
            exec(compile(cell.source, meta["grade_id"], "exec"), namespace)
    return namespace


def solution(graded):
    return solutions(graded.assignment)[graded.name]


@each_task
def test_solution_passes_the_random_cases(graded):
    """Does the solution pass every case drawn at the full level?"""
    assert graded.check_random(solution(graded), rng=np.random.default_rng(2024)) == graded.count


@each_task
def test_every_level_draws_cases_the_solution_gets_right(graded):
    """Does the draw work at every size level, the reference run on it, the solution get it right, and a
    lower level draw smaller cases (a shrunk case is one the learner must be able to trust)?"""
    mean_entries = {}
    for level in LEVELS:
        cases = [graded.case(seed, level) for seed in range(40)]
        if graded.verdict is None:
            assert all(graded.comparison.expected(case.args, case.kwargs) is not None for case in cases)
        assert graded.check(solution(graded), [(case.args, case.kwargs) for case in cases]) == len(cases), level
        mean_entries[level] = np.mean([case.entries() for case in cases])
    assert mean_entries[0] < mean_entries[FULL], mean_entries


def wrong_retrieve(queries, documents, k):
    scores = queries @ documents.T  # (M, N)
    return np.argsort(-scores, axis=-1, kind="stable")[:, :k][:, ::-1]  # the k best, worst of them first


def wrong_next_token_probs(x, w_q, w_k, w_v, temperature=1.0):
    logits = sdpa_lib.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, is_causal=True) / temperature
    return np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)  # no shift: overflows


def wrong_read_alignment(weights, threshold=0.0):
    return np.where(np.max(weights, axis=-1) >= threshold, np.argsort(weights, axis=-1)[..., -1], -1)  # last of ties


def wrong_seed_attention(X, W_q, W_k, W_v):
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    exps = np.exp(q @ k.T / np.sqrt(k.shape[-1]))  # (L, L), no shift: overflows
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def wrong_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-1])  # (..., L, S)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)  # a fully masked row gets uniform weights
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def wrong_padded_causal_self_attention(X, lengths, W_q, W_k, W_v):
    L = X.shape[-2]
    mask = np.tri(L, dtype=bool) & (np.arange(L) <= lengths[:, None])[:, None, :]  # one padded key too many
    return wrong_attention(X @ W_q, X @ W_k, X @ W_v, mask)[0]


def wrong_disagreeing_keys(q):
    u = q / np.linalg.norm(q)
    w = np.zeros_like(u)
    w[0], w[1] = -u[1], u[0]  # zero when q lies along a later axis
    return 2 * u + 10 * w, u


def wrong_share_outside_unit_interval(q, k):
    scores = np.sum(q * k, axis=-1) / np.sqrt(q.shape[-1])
    return float(np.mean(np.abs(scores) > 1))  # forgets the scores between -1 and 0


def wrong_mean_max_weight(query, key, scaled=True):
    scores = query @ np.swapaxes(key, -1, -2) / (np.sqrt(query.shape[-1]) if scaled else 1.0)
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return float(np.max(exps / exps.sum(axis=-1, keepdims=True)))  # the largest weight of all, not the mean


def wrong_misleading_values(weights):
    return np.eye(len(weights))  # every value apart: the top token matters most


@each_task
def test_a_wrong_function_gets_a_shrunk_case_that_replays(graded):
    """Does a wrong function fail with the smallest failing case found and a replay line, and does that line
    draw the same case again and fail it the same way?"""
    wrong = globals()[f"wrong_{graded.name}"]
    with pytest.raises(GradingError) as failed:
        graded.check_random(wrong, rng=np.random.default_rng(7))
    message = str(failed.value)
    assert "the smallest failing case found" in message and "sdpa_course.replay(" in message, message
    chapter, name, seed, size = re.search(r'replay\("(\w+)", "(\w+)", seed=(\d+), size=(\d+)\)', message).groups()
    assert (chapter, name) == (graded.chapter, graded.name) and int(size) < FULL, message
    replayed = replay(chapter, name, seed=int(seed), size=int(size), student=wrong)
    assert replayed.failure is not None, repr(replayed)


@pytest.mark.parametrize(("q", "k", "share"), [
    ([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [-1.0, 0.0], [2.0, 2.0]], 2 / 3),  # 0.707, -0.707, 2.83
    ([[2.0, 0.0, 0.0, 0.0]], [[1.5, 0.0, 0.0, 0.0]], 1.0),  # 3 / sqrt(4) = 1.5
    ([[1.0, 1.0, 1.0, 1.0]], [[0.6, 0.6, 0.0, 0.0]], 0.0),  # 1.2 / sqrt(4) = 0.6: inside
])
def test_share_reference_gives_the_shares_worked_out_by_hand(q, k, share):
    """Does ch11's reference give the share each visible case states (they were checked against these numbers)?"""
    reference = tasks("ch11")["share_outside_unit_interval"].reference
    assert reference(np.array(q), np.array(k)) == pytest.approx(share, abs=1e-12)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_task_is_graded_by_one_cell_that_names_it_literally(assignment):
    """Does each task appear in exactly one grade cell as task("chNN", "name"), so that the sandboxed kernel's
    sdpa_lib lacks its forbidden functions (student_lib.absent_names reads only that literal form)?"""
    chapter = assignment.split("_")[0]
    named = []
    for cell in notebook(assignment).cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
            here = [tuple(a.value for a in node.args) for node in ast.walk(ast.parse(cell.source))
                    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "task"]
            plain = {n for _, name in here for n in tasks(assignment)[name].forbidden if "." not in n}
            assert plain <= absent_names([cell.source]), (here, plain)
            named += here
    assert sorted(named) == sorted((chapter, name) for name in tasks(assignment)), named
