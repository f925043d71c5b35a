"""The graded functions of chapters 6-8 as tasks: solutions pass, every size level draws valid cases, failures shrink.

In process, without nbgrader: each solution cell of solutions/<assignment> is executed in
one namespace (as the notebook would), and the tasks of sdpa_course.grading.exercises grade
the functions it defines, or wrong ones written here.  A cell is registered with linecache
under a file name of its own, as IPython does, so that a Python error names the student's line.
"""
from __future__ import annotations

import linecache
import os
import re
import subprocess
import sys
import warnings

import nbformat
import numpy as np
import pytest
from exercise_harness import ROOT, SOLUTIONS, cells_by_id, grader_meta

import sdpa_lib
from buggy import bugs_for
from sdpa_course.grading import GradingError
from sdpa_course.grading.draw import FULL, LEVELS
from sdpa_course.grading.exercises import tasks
from sdpa_course import replay

ASSIGNMENTS = ("ch06_weighted_sum", "ch07_parallelism", "ch08_masking")
TASKS = [(assignment, name) for assignment in ASSIGNMENTS for name in tasks(assignment)]
SEEDS = range(40)


def run_cell(namespace: dict, name: str, source: str) -> None:
    filename = f"/tmp/ipykernel_0/{name}.py"  # outside sdpa_course and site-packages: the student's own code
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def notebook_namespace(assignment: str, replaced: dict[str, str] | None = None) -> dict:
    """The namespace after running every code cell but the grade cells, cells in ``replaced`` by their new source."""
    notebook = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
    namespace = {"__name__": "__main__"}
    for cell in notebook.cells:
        meta = grader_meta(cell)
        if cell.cell_type == "code" and not meta.get("grade"):
            grade_id = meta.get("grade_id", "setup")
            run_cell(namespace, grade_id, (replaced or {}).get(grade_id, cell.source))
    return namespace


def grade_cell(assignment: str, grade_id: str) -> str:
    notebook = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
    return cells_by_id(notebook)[grade_id].source


def entries(args, kwargs) -> int:
    """How big a case is: array entries, plus integer arguments (lengths and counts)."""
    values = (*args, *kwargs.values())
    return sum(np.size(v) for v in values if isinstance(v, np.ndarray)) + sum(v for v in values if type(v) is int)


# How many random cases the hidden tests drew before they became tasks (all dtypes and special cases together).
HIDDEN_COUNTS = {"attention_output": 74, "split_heads": 40, "merge_heads": 40, "multi_head_attention": 50,
                 "attention_row_by_row": 52, "attention_flop_count": 30, "score_matrix_bytes": 30,
                 "online_softmax_attention": 65, "causal_mask": 31, "padding_mask": 30, "masked_attention": 64,
                 "cross_attention": 50}


@pytest.mark.parametrize("assignment, name", TASKS)
def test_solution_passes_as_many_hidden_cases_as_before(assignment, name):
    """Does the solution's function pass its task's random cases, as many as the hidden test drew before?"""
    task = tasks(assignment)[name]
    assert task.check_random(notebook_namespace(assignment)[name], rng=np.random.default_rng(0)) == HIDDEN_COUNTS[name]


@pytest.mark.parametrize("assignment, name", TASKS)
def test_every_level_draws_valid_cases_that_grow_with_the_level(assignment, name):
    """Does the draw work at every level, the reference run on it without a warning, and level 0 draw smaller cases?"""
    task = tasks(assignment)[name]
    sizes = {}
    for level in LEVELS:
        sizes[level] = []
        for seed in SEEDS:
            case = task.case(seed, level)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                task.comparison.expected(case.args, case.kwargs)
            sizes[level].append(entries(case.args, case.kwargs))
    assert np.mean(sizes[0]) < np.mean(sizes[FULL]), sizes
    assert max(sizes[0]) <= max(sizes[FULL]), sizes


# Wrong answers that show on small inputs: each must be reported on a shrunk case (size 0 to 3).
def attention(query, key, value, attn_mask=None, scale=None):
    """Attention written out (the reference is unavailable while a function is graded); ``scale`` replaceable."""
    scale = 1 / np.sqrt(query.shape[-1]) if scale is None else scale
    scores = query @ np.swapaxes(key, -1, -2) * scale  # (..., L, E) @ (..., E, S) -> (..., L, S)
    scores = scores if attn_mask is None else np.where(attn_mask, scores, -np.inf)
    return sdpa_lib.softmax(scores) @ value  # (..., L, S) @ (..., S, Ev) -> (..., L, Ev)


def attention_output(query, key, value):
    return attention(query, key, value, scale=1.0)  # no 1/sqrt(E)


def split_heads(x, num_heads):
    *batch, length, d_model = x.shape
    return x.reshape(*batch, num_heads, length, d_model // num_heads)  # no transpose


def merge_heads(x):
    *batch, num_heads, length, head_dim = x.shape
    return x.reshape(*batch, length, num_heads * head_dim)  # no transpose


def multi_head_attention(x_query, x_kv, w_q, w_k, w_v, w_o, num_heads):
    q, k, v = (split_heads(x @ w, num_heads) for x, w in ((x_query, w_q), (x_kv, w_k), (x_kv, w_v)))
    return merge_heads(attention_output(q, k, v))  # no W_O


def attention_row_by_row(query, key, value):
    return attention(query, key, value)[..., ::-1, :]  # the rows written in reverse order


def attention_flop_count(L, S, E, Ev):
    return 2 * L * S * E + 2 * L * L * Ev  # L x L for the second product


def score_matrix_bytes(L, S, batch=1, heads=1, dtype=np.float32):
    return batch * L * S * np.dtype(dtype).itemsize  # no heads


def online_softmax_attention(query, key, value, block_size):
    stop = key.shape[-2] - key.shape[-2] % block_size  # the last partial block dropped
    if not stop:
        return np.zeros((*query.shape[:-1], value.shape[-1]))
    return attention(query, key[..., :stop, :], value[..., :stop, :])


def causal_mask(L, S=None):
    return np.triu(np.ones((L, L if S is None else S), dtype=bool))


def padding_mask(lengths, S):
    return np.arange(S) >= np.asarray(lengths)[:, None, None]


def masked_attention(query, key, value, attn_mask):
    return attention(query, key, value)  # the mask ignored


def cross_attention(x_dec, x_enc, w_q, w_k, w_v, enc_lengths):
    return masked_attention(x_dec @ w_q, x_enc @ w_k, x_enc @ w_v, None)  # the padding not masked


WRONG = {name: globals()[name] for _, name in TASKS}


def replay_level(message: str, chapter: str, name: str) -> int:
    found = re.search(rf'sdpa_course\.replay\("{chapter}", "{name}", seed=(\d+), size=(\d)\)', message)
    assert found, message
    return int(found.group(2))


@pytest.mark.parametrize("assignment, name", TASKS)
def test_a_wrong_function_is_shown_on_a_shrunk_case_that_replays(assignment, name):
    """Is a wrong function shown failing on the smallest case found (size 0..3), with a line that replays it?"""
    task = tasks(assignment)[name]
    with pytest.raises(GradingError) as failed:
        task.check_random(WRONG[name], rng=np.random.default_rng(1))
    message = str(failed.value)
    assert "the smallest failing case found" in message and "The inputs:" in message, message
    assert replay_level(message, task.chapter, name) < FULL, message
    seed = int(re.search(r"seed=(\d+)", message).group(1))
    replayed = replay(task.chapter, name, seed=seed, size=replay_level(message, task.chapter, name),
                                  student=WRONG[name])
    assert replayed.failure, f"the replayed case passes:\n{replayed!r}"


# The new buggy submissions of tests/buggy (mistakes from issue 14 and uncatalogued ones): all their feedback.
def bug(assignment: str, bug_id: str):
    return next(b for b in bugs_for(assignment) if b.id == bug_id)


def feedback(assignment: str, bug_id: str) -> str:
    """What the grade cell of the buggy submission says (the GradingError), its grading seed fixed."""
    submission = bug(assignment, bug_id)
    namespace = notebook_namespace(assignment, {submission.function_or_cell: submission.source})
    source = grade_cell(assignment, submission.test_cell)
    source = source.replace(".check_random(", ".check_random(rng=np.random.default_rng(7), student=")
    with pytest.raises(GradingError) as failed:
        run_cell(namespace, submission.test_cell, source)
    return str(failed.value)


HIDDEN_BUGS = [  # (assignment, bug id, what the feedback must also say)
    ("ch06_weighted_sum", "split-unpacks-three-axes", "Likely cause: unpacking x.shape into a fixed number of names"),
    ("ch07_parallelism", "rows-exp-without-max", "What differs: your output has NaN"),
    ("ch08_masking", "mask-after-softmax-renormalised",
     "This looks like a known mistake: masked after the softmax, then renormalised"),
]


@pytest.mark.parametrize("assignment, bug_id, says", HIDDEN_BUGS, ids=[row[1] for row in HIDDEN_BUGS])
def test_a_hidden_only_bug_is_named_and_replayable(assignment, bug_id, says):
    """Does a bug that only the hidden cases catch get feedback that says what is wrong and how to replay it?"""
    message = feedback(assignment, bug_id)
    assert says in message, message
    assert "sdpa_course.replay(" in message and bug(assignment, bug_id).hint in message, message


def test_renormalising_after_the_softmax_is_shown_small():
    """Is masking after the softmax and renormalising shown on a shrunk case, beside the answer?"""
    message = feedback("ch08_masking", "mask-after-softmax-renormalised")
    assert "the smallest failing case found" in message and "yours" in message and "answer" in message, message
    assert replay_level(message, "ch08", "masked_attention") < FULL, message


VISIBLE_BUGS = [
    ("ch06_weighted_sum", "key-dot-T", "on line 3 of its cell, `scores = query @ key.T"),
    ("ch07_parallelism", "rows-output-like-query", "could not broadcast input array from shape (2,) into shape (4,)"),
    ("ch08_masking", "padding-axis-last", "your output has shape (2, 4, 1) but should have shape (2, 1, 4)"),
    ("ch08_masking", "nan-to-num", 'numpy warned "invalid value encountered in subtract"'),
]


@pytest.mark.parametrize("assignment, bug_id, says", VISIBLE_BUGS, ids=[row[1] for row in VISIBLE_BUGS])
def test_a_visible_bug_gets_its_hint_in_one_paragraph(assignment, bug_id, says):
    """Does a bug caught by the visible checks get its hint and its details, with no traceback into the grader?"""
    message = feedback(assignment, bug_id)
    assert says in message and bug(assignment, bug_id).hint in message, message
    assert "Traceback" not in message and "sdpa_course/grading" not in message, message


def test_replay_stays_callable_after_its_first_use():
    """In a fresh interpreter, as in a learner's notebook, is sdpa_course.replay still the function on a second call?

    (The function lives in the module sdpa_course.replaying: a module named like the function would
    rebind the package's name to the module on first import.)
    """
    code = ("import sdpa_course\n"
            "def causal_mask(L, S=None):\n    return None\n"
            "for _ in range(2):\n    assert sdpa_course.replay('ch08', 'causal_mask', seed=3, size=0).failure\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
