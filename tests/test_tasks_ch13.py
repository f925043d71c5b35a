"""The graded functions of chapter 13 as tasks: the solutions pass, every size level draws valid cases, failures
shrink and replay, apply_rope is graded by its property before the answer, and the buggy submissions get their hints.

In process, without nbgrader, as tests/test_tasks_ch06_08.py does (its notebook runner and feedback helpers).
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from loops import rope_loop
from test_tasks_ch06_08 import bug, entries, feedback, notebook_namespace, replay_level

import sdpa_lib
from sdpa_course import replay
from sdpa_course.grading import GradingError
from sdpa_course.grading.catalogue.positions import rope_offset_problem
from sdpa_course.grading.draw import FULL, LEVELS
from sdpa_course.grading.exercises import tasks

ASSIGNMENT = "ch13_beyond"
TASKS = tasks(ASSIGNMENT)
each_task = pytest.mark.parametrize("name", sorted(TASKS))


@each_task
def test_solution_passes_every_hidden_case(name):
    """Does the solution's function pass all of its task's random cases?"""
    task = TASKS[name]
    assert task.check_random(notebook_namespace(ASSIGNMENT)[name], rng=np.random.default_rng(0)) == task.count


@each_task
def test_every_level_draws_valid_cases_that_grow_with_the_level(name):
    """Does the draw work at every level, the reference run on it without a warning, the solution get it right,
    and level 0 draw smaller cases?"""
    task, solution = TASKS[name], notebook_namespace(ASSIGNMENT)[name]
    sizes = {}
    for level in LEVELS:
        cases = [task.case(seed, level) for seed in range(40)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for case in cases:
                task.comparison.expected(case.args, case.kwargs)
        assert task.check(solution, [(case.args, case.kwargs) for case in cases]) == len(cases), level
        sizes[level] = [entries(case.args, case.kwargs) for case in cases]
    assert np.mean(sizes[0]) < np.mean(sizes[FULL]), sizes


def test_most_rope_cases_can_check_the_offset_property():
    """Do most drawn RoPE cases repeat their rows at shifted positions, so the property is graded on them?"""
    task = TASKS["apply_rope"]
    checkable = 0
    for seed in range(60):
        case = task.case(seed)
        x, positions = case.args
        uniform = x * 1.5  # not a rotation, but the scores scale by 2.25 at every position alike: no complaint
        by_position = x * (1.0 + positions)[:, None]  # scores that grow with the positions themselves
        checkable += rope_offset_problem(uniform, *case.args, **case.kwargs) is None and \
            rope_offset_problem(by_position, *case.args, **case.kwargs) is not None
    assert checkable >= 30, checkable


# Wrong answers that show on small inputs: each must be reported on a shrunk case (size 0 to 3).
def apply_rope(x, positions, base=10000.0):
    return rope_loop(x, np.asarray(positions) + 1, base).astype(x.dtype)  # positions off by one (the reference is unavailable)


def decode_step(query, key_cache, value_cache, new_key, new_value):
    keys = np.concatenate([key_cache, new_key], axis=-2)  # nothing rotated
    values = np.concatenate([value_cache, new_value], axis=-2)
    weights = sdpa_lib.softmax(query @ np.swapaxes(keys, -1, -2) / np.sqrt(query.shape[-1]))
    return weights @ values, keys, values


def gqa_cache_bytes(layers, num_heads, num_kv_heads, head_dim, tokens, batch=1, bytes_per_number=2):
    return 2 * layers * num_heads * head_dim * tokens * batch * bytes_per_number  # query heads


def sliding_window_mask(L, S, window):
    offset = np.arange(L)[:, None] - np.arange(S)[None, :]
    return (offset >= 0) & (offset <= window)  # window + 1 keys


WRONG = {name: globals()[name] for name in TASKS}


@each_task
def test_a_wrong_function_is_shown_on_a_shrunk_case_that_replays(name):
    """Is a wrong function shown failing on the smallest case found (size 0..3), with a line that replays it?"""
    task = TASKS[name]
    with pytest.raises(GradingError) as failed:
        task.check_random(WRONG[name], rng=np.random.default_rng(1))
    message = str(failed.value)
    assert "the smallest failing case found" in message and "The inputs:" in message, message
    level = replay_level(message, task.chapter, name)
    assert level < FULL, message
    seed = int(re.search(r"seed=(\d+)", message).group(1))
    assert replay(task.chapter, name, seed=seed, size=level, student=WRONG[name]).failure


def not_a_rotation(x, positions, base=10000.0):
    angles = np.asarray(positions, dtype=float)[:, None]  # (L, 1): one angle per row
    return x * (np.cos(angles) + np.sin(angles))


def test_a_rotation_that_breaks_the_offset_property_is_told_so_before_the_answer():
    """Is a function whose scores depend on absolute positions failed by the property, naming positions and offset?"""
    with pytest.raises(GradingError) as failed:
        TASKS["apply_rope"].check_random(not_a_rotation, rng=np.random.default_rng(2))
    message = str(failed.value)
    assert "depends on where the tokens are, not only on how far apart" in message, message
    assert re.search(r"at positions \d+ and \d+, give", message) and "the offset is" in message, message


def test_a_valid_rope_in_the_other_layout_keeps_the_property_and_is_named_by_the_answer():
    """Does the interleaved layout pass the property (it is RoPE) and then fail the answer, named?"""
    def interleaved(x, positions, base=10000.0):
        return rope_loop(x, positions, base, interleaved=True).astype(x.dtype)
    task = TASKS["apply_rope"]
    case = task.case(3)
    assert rope_offset_problem(interleaved(*case.args, **case.kwargs), *case.args, **case.kwargs) is None
    with pytest.raises(GradingError, match=r"interleaved pairs \(2i, 2i \+ 1\) instead of rotate-half"):
        task.check_random(interleaved, rng=np.random.default_rng(3))


HIDDEN_BUGS = [("cache-int32", "This looks like a known mistake: product overflowed 32-bit integers")]


@pytest.mark.parametrize("bug_id, says", HIDDEN_BUGS, ids=[row[0] for row in HIDDEN_BUGS])
def test_a_hidden_only_bug_is_named_and_replayable(bug_id, says):
    """Does a bug that passes every visible check get feedback that names it and a line that replays it?"""
    message = feedback(ASSIGNMENT, bug_id)
    assert says in message and "sdpa_course.replay(" in message and bug(ASSIGNMENT, bug_id).hint in message, message


VISIBLE_BUGS = ["rope-interleaved", "rope-not-a-rotation", "decode-rotates-value", "decode-rerotates-cache",
                "decode-unrotated-key", "cache-query-heads", "cache-keys-only", "cache-float", "window-plus-one",
                "window-not-causal", "window-float"]


@pytest.mark.parametrize("bug_id", VISIBLE_BUGS)
def test_a_visible_bug_gets_its_hint_in_one_paragraph(bug_id):
    """Does each buggy submission fail a visible check with its hint, and no traceback into the grader?"""
    message = feedback(ASSIGNMENT, bug_id)
    assert bug(ASSIGNMENT, bug_id).hint in message, message
    assert "Traceback" not in message and "sdpa_course/grading" not in message, message
