"""Wrong submissions written as students write them: each loses its check, and the feedback names the difference.

Every submission is graded in this process by the task's hidden check (``check_random``, a
fixed grading seed), the way a grade cell grades it.  For each, the feedback must name what
is wrong (the catalogued mistake, the kind of difference, or the Python error's likely
cause) and, for a random case, give the line that replays it; the replay line must then
reproduce the failure.  The kinds of difference that no chapter's catalogue covers are
graded against tasks made here from the reference, with no catalogue, so that only the
computed diagnosis can name them.
"""
from __future__ import annotations

import linecache
import re
import textwrap

import numpy as np
import pytest

import sdpa_course
import sdpa_lib
from sdpa_course.grading import GradingError
from sdpa_course.grading.differences import describe_difference
from sdpa_course.grading.draw import FULL, LEVELS, Draw
from sdpa_course.grading.exercises import all_tasks, task
from sdpa_course.grading.student_errors import explain_error
from sdpa_course.grading.task import Task

REPLAY = re.compile(r'sdpa_course\.replay\("(\w+)", "(\w+)", seed=(\d+), size=(\d)\)')


def student(source: str):
    """The function a student's cell defines (with numpy imported as the notebooks do).

    The source is registered with linecache under a cell-like file name, as IPython does, so
    a traceback through it shows the student's lines.
    """
    source = textwrap.dedent(source)
    filename = f"/tmp/ipykernel_0/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102  (the test's own submissions)
    return next(value for name, value in namespace.items() if callable(value) and name != "np"
                and getattr(value, "__module__", None) is None)


def hidden_feedback(graded: Task, function, seed: int = 2024) -> str:
    with pytest.raises(GradingError) as failure:
        graded.check_random(function, rng=np.random.default_rng(seed))
    return str(failure.value)


# --- tasks of the difference kinds no catalogue names ------------------------------------------------------

def _scores_case(d: Draw, square: bool = False):
    batch = d.batch()
    L, S, E = d.sizes(3, 2, 9)
    return (d.normal((*batch, L, E)), d.normal((*batch, S if not square else L, E))), {}


def _attention_case(d: Draw):
    query, key, value = d.attention_inputs(E=d.size(2, 9))
    return (query, key, value), {}


def _large_attention_case(d: Draw):
    return d.attention_inputs(scale=30.0), {}  # scores near 1000


def _masked_case(d: Draw):
    query, key, value = d.attention_inputs()
    mask = d.rng.random((query.shape[-2], key.shape[-2])) < 0.6
    mask[int(d.rng.integers(query.shape[-2])), :] = False  # a query with no key to attend to
    return (query, key, value, mask), {}


def _weights_case(d: Draw):
    batch = d.batch()
    L, S, E = d.sizes(3, 2, 9)
    return (d.normal((*batch, L, E)), d.normal((*batch, S, E))), {}


def _heads_case(d: Draw):
    heads, head_dim = d.size(1, 4), d.size(1, 4)
    return (d.normal((*d.batch(), d.size(1, 6), heads * head_dim)), heads), {}


SCORES = Task("test", "scaled_scores", sdpa_lib.scaled_scores, _scores_case, forbidden=("scaled_scores",))
SQUARE_SCORES = Task("test", "scaled_scores", sdpa_lib.scaled_scores, lambda d: _scores_case(d, square=True))
ATTENTION = Task("test", "attention", sdpa_lib.scaled_dot_product_attention, _attention_case)
LARGE_ATTENTION = Task("test", "attention", sdpa_lib.scaled_dot_product_attention, _large_attention_case)
MASKED = Task("test", "masked_attention", sdpa_lib.scaled_dot_product_attention, _masked_case)
WEIGHTS = Task("test", "attention_weights", sdpa_lib.attention_weights, _weights_case)
SOFTMAX_UNCATALOGUED = Task("test", "softmax", sdpa_lib.softmax, task("ch05", "softmax").draw)
SPLIT = Task("test", "split_heads", sdpa_lib.split_heads, _heads_case)

# (graded task, the student's cell, text the feedback must contain)
SUBMISSIONS = {
    # The issue's own: softmax with one maximum for the whole array passes the visible checks.
    "global max": (task("ch05", "softmax"), """
        def softmax(x, axis=-1):
            top = np.max(x)
            exps = np.exp(x - (0 if np.isneginf(top) else top))
            total = exps.sum(axis=axis, keepdims=True)
            return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)
        """, "one maximum for the whole array"),
    "np.outer on a batch": (task("ch05", "softmax_jacobian"), """
        def softmax_jacobian(p):
            return np.diagflat(p) - np.outer(p, p)
        """, "something flattened a batched input"),
    "sum without keepdims": (task("ch05", "softmax_backward"), """
        def softmax_backward(p, grad_p):
            inner = np.sum(grad_p * p, axis=-1)
            return p * (grad_p - inner)
        """, "pass keepdims=True"),
    "float64 for float32": (task("ch05", "softmax"), """
        def softmax(x, axis=-1):
            top = np.max(x, axis=axis, keepdims=True)
            exps = np.exp(x - np.where(np.isneginf(top), 0, top))
            total = exps.sum(axis=axis, keepdims=True)
            return np.divide(exps, total, out=np.zeros(exps.shape), where=total != 0)
        """, "keep the input's dtype"),
    "nan_to_num after a warning": (task("ch05", "softmax"), """
        def softmax(x, axis=-1):
            exps = np.exp(x - np.max(x, axis=axis, keepdims=True))
            return np.nan_to_num(exps / exps.sum(axis=axis, keepdims=True))
        """, "the notebook asks for no warning"),
    "key.T on a batched key": (SCORES, """
        def scaled_scores(query, key):
            return query @ key.T / np.sqrt(query.shape[-1])
        """, "swap only the last two"),
    "unpacking a 4-D shape": (SPLIT, """
        def split_heads(x, num_heads):
            B, L, D = x.shape
            return x.reshape(B, L, num_heads, D // num_heads).transpose(0, 2, 1, 3)
        """, "unpacking x.shape"),
    # One per kind of difference.
    "shape: transposed": (SCORES, """
        def scaled_scores(query, key):
            return key @ np.swapaxes(query, -1, -2) / np.sqrt(query.shape[-1])
        """, "last two axes swapped"),
    "values: transposed": (SQUARE_SCORES, """
        def scaled_scores(query, key):
            return key @ np.swapaxes(query, -1, -2) / np.sqrt(query.shape[-1])
        """, "the answer transposed"),
    "shape: an axis of the wrong length": (ATTENTION, """
        def attention(query, key, value):
            scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
            weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
            return weights / weights.sum(axis=-1, keepdims=True)
        """, "axis -1 of your output has length"),
    "constant factor": (SCORES, """
        def scaled_scores(query, key):
            return query @ np.swapaxes(key, -1, -2) / query.shape[-1]
        """, "from the length"),
    "permuted keys": (SCORES, """
        def scaled_scores(query, key):
            return query @ np.swapaxes(key[..., ::-1, :], -1, -2) / np.sqrt(query.shape[-1])
        """, "permuted"),
    "fully masked rows": (MASKED, """
        def masked_attention(query, key, value, mask):
            scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
            scores = np.where(mask, scores, -1e9)
            weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
            return weights / weights.sum(axis=-1, keepdims=True) @ value
        """, "where the answer is all zeros"),
    "NaN where the answer is finite": (LARGE_ATTENTION, """
        def attention(query, key, value):
            weights = np.exp(query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1]))
            return weights / weights.sum(axis=-1, keepdims=True) @ value
        """, "NaN in"),
    "an all -inf row": (SOFTMAX_UNCATALOGUED, """
        def softmax(x, axis=-1):
            exps = np.exp(x - np.max(x, axis=axis, keepdims=True))
            return exps / exps.sum(axis=axis, keepdims=True)
        """, "where the answer is all zeros"),
    "normalised along the queries": (WEIGHTS, """
        def attention_weights(query, key):
            scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
            weights = np.exp(scores - scores.max(axis=-2, keepdims=True))
            return weights / weights.sum(axis=-2, keepdims=True)
        """, "sums to 1 along axis -2"),
}


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_a_wrong_submission_loses_its_check_and_is_told_what_differs(name):
    graded, source, named = SUBMISSIONS[name]
    feedback = hidden_feedback(graded, student(source))
    assert named in feedback, feedback
    assert REPLAY.search(feedback), feedback
    assert "Traceback" not in feedback and "site-packages" not in feedback
    if "raised" in feedback.splitlines()[0]:
        assert "of its cell, `" in feedback, feedback  # the student's own line is named


@pytest.mark.parametrize("name", [n for n, (graded, _, _) in SUBMISSIONS.items() if graded.assignment != "test"])
def test_the_replay_line_reproduces_the_failure(name):
    """Pasted in the notebook (here: called with the student's function), the line shows the same failure."""
    graded, source, named = SUBMISSIONS[name]
    function = student(source)
    chapter, function_name, seed, size = REPLAY.search(hidden_feedback(graded, function)).groups()
    replayed = sdpa_course.replay(chapter, function_name, seed=int(seed), size=int(size), student=function)
    assert replayed.failure is not None and named in replayed.failure
    assert "Step through it" in repr(replayed)


def test_replay_finds_the_function_in_the_callers_namespace():
    softmax = student("def softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)\n")
    replayed = sdpa_course.replay("ch05", "softmax", seed=7, size=0)
    assert replayed.outcome.value is not None and softmax is not None
    with pytest.raises(NameError, match="defines no function 'softmax_backward'"):
        sdpa_course.replay("ch05", "softmax_backward", seed=7, size=0)


def test_a_shrunk_case_is_small_and_printed_in_full():
    """The global-max softmax fails first on a large case; the report shows a case of a few entries, in full."""
    graded, source, _ = SUBMISSIONS["global max"]
    feedback = hidden_feedback(graded, student(source))
    assert "the smallest failing case found" in feedback
    assert int(REPLAY.search(feedback).group(4)) < FULL
    assert "array of shape" not in feedback.split("The inputs:")[1]  # every input printed in full
    assert "yours" in feedback and "answer" in feedback


def test_a_mistake_is_named_only_when_it_explains_every_failing_case():
    """An all -inf row is NaN for most wrong softmaxes; the name must be the student's mistake, not the first match."""
    graded = task("ch05", "softmax")
    naive = student("def softmax(x, axis=-1):\n    exps = np.exp(x)\n    return exps / exps.sum(axis=axis, keepdims=True)\n")
    assert "no max subtraction" in hidden_feedback(graded, naive)
    assert "one maximum for the whole array" not in hidden_feedback(graded, naive)


def test_right_answers_in_other_styles_keep_full_marks():
    """An einsum attention and a loop softmax are right: no diagnosis may fail them."""
    loop_softmax = student("""
        def softmax(x, axis=-1):
            x = np.moveaxis(x, axis, -1)
            out = np.zeros_like(x)
            for index in np.ndindex(x.shape[:-1]):
                row = x[index]
                if np.all(np.isneginf(row)):
                    continue
                e = np.exp(row - row.max())
                out[index] = e / e.sum()
            return np.moveaxis(out, -1, axis)
        """)
    einsum_scores = student("""
        def scaled_scores(query, key):
            return np.einsum("...le,...se->...ls", query, key) / np.sqrt(query.shape[-1])
        """)
    assert task("ch05", "softmax").check_random(loop_softmax, rng=np.random.default_rng(1)) == 120
    assert SCORES.check_random(einsum_scores, rng=np.random.default_rng(1)) == SCORES.count


@pytest.mark.parametrize("graded", all_tasks(), ids=lambda t: f"{t.assignment}.{t.name}")
def test_every_task_draws_valid_cases_at_every_level(graded):
    """The reference runs on cases of every size level, and lower levels draw no more entries than the full one."""
    for level in LEVELS:
        for seed in range(5):
            case = graded.case(seed, level)
            graded.comparison.expected(case.args, case.kwargs) if graded.verdict is None else None
    small = max(graded.case(seed, 0).entries() for seed in range(20))
    full = max(graded.case(seed, FULL).entries() for seed in range(20))
    assert small <= full


def test_a_case_is_drawn_again_from_its_seed_and_level():
    graded = task("ch05", "softmax")
    first, again = graded.case(99, 2), graded.case(99, 2)
    assert np.array_equal(first.args[0], again.args[0]) and first.kwargs == again.kwargs


# --- the diagnosis and the error paragraph, unit by unit ---------------------------------------------------

def test_difference_kinds_on_plain_arrays():
    rng = np.random.default_rng(0)
    answer = rng.normal(size=(2, 3, 4))
    inputs = {"query": rng.normal(size=(2, 3, 4))}
    def text(actual, expected=answer, given=inputs):
        return describe_difference(actual, expected, given).text

    assert "times a constant, 2" in text(answer * 2)
    assert "1/sqrt(4)" in text(answer / 2)
    assert "lacks the leading batch axes" in text(answer[0])
    assert "extra axis of length 1" in text(answer[..., None])
    assert "permuted" in text(answer[..., ::-1])
    assert "only 1 of 6 rows" in text(np.where(np.arange(6).reshape(2, 3, 1) == 4, 0, answer))
    mask = np.tril(np.ones((3, 3), dtype=bool))
    assert "inverted" in text(~mask, mask, {})
    assert describe_difference(answer, answer + np.random.default_rng(1).normal(size=answer.shape), inputs) is None


def test_a_python_error_is_one_paragraph_naming_the_students_line():
    frames = [["/grading/sdpa_course/grading/checks.py", 10, "run", "value = student(*args)"],
              ["/tmp/ipykernel_7/123.py", 3, "softmax", "return exps / exps.sum(axis=-1)"],
              ["/venv/lib/python3.11/site-packages/numpy/core/_methods.py", 49, "_sum", "return umr_sum(a)"]]
    text = explain_error("softmax", "ValueError", "operands could not be broadcast together with shapes (2,3) (2,) ",
                         frames, {"x": np.zeros((2, 3))})
    assert "line 3 of its cell, `return exps / exps.sum(axis=-1)`" in text
    assert "x (2, 3) float64" in text and "keepdims=True" in text
    assert "checks.py" not in text and "_methods" not in text


def test_grading_errors_show_as_their_message_in_a_notebook():
    """IPython prints ``_render_traceback_`` instead of the frames of the grading code."""
    rendered = GradingError("wrong answer on inputs (x): ...")._render_traceback_()
    assert len(rendered) == 1 and "wrong answer on inputs (x): ..." in rendered[0]


def test_in_a_notebook_a_failed_check_is_its_message_and_the_replay_line_runs(tmp_path):
    """The learner's kernel: a visible check shows no traceback into grading; the pasted replay line runs there."""
    from nbrun import execute_notebook
    import nbformat
    cells = [
        "import numpy as np\nfrom sdpa_course.grading.exercises import task",
        "def softmax(x, axis=-1):\n    inner = np.exp(x - x.max(axis=axis))\n    return inner / inner.sum(axis=axis)",
        'task("ch05", "softmax").check(softmax, [((np.array([[1.0, 2.0, 0.0], [3.0, 5.0, 1.0]]),), {})])',
        'import sdpa_course\nsdpa_course.replay("ch05", "softmax", seed=3, size=1)',
    ]
    path = tmp_path / "learner.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    notebook, _ = execute_notebook(path, allow_errors=True)
    error = next(o for o in notebook.cells[2].outputs if o.output_type == "error")
    shown = "\n".join(error.traceback)
    assert "Likely cause" in shown and "line 2 of its cell" in shown
    assert "checks.py" not in shown and "task.py" not in shown
    replayed = "".join(o.get("data", {}).get("text/plain", "") for o in notebook.cells[3].outputs)
    assert "softmax on the replayed case" in replayed and "Step through it" in replayed
