"""The coding drills: what each drill is, grading from source text in a kernel of its own, the terminal and notebook
flows, the answer store's record, and the countdown on a fake clock.

Tests marked ``slow`` start kernels (about two seconds each); the others run no learner code.
The answers graded here are data in tests/buggy/drills.py.
"""
from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import sdpa_lib
from buggy.drills import BUGS, RIGHT
from sdpa_course.grading.student_lib import build_student_library
from sdpa_course.quiz.cli import main
from sdpa_course.quiz.countdown import Countdown, CountdownLabel, format_seconds, read_line, remaining
from sdpa_course.quiz.drill_attempts import chosen_text, record_attempt, time_line
from sdpa_course.quiz.drill_grading import (COULD_NOT_GRADE, MISSING, NOT_IMPLEMENTED, PASSED, RAISED_ON_LOAD, SYNTAX,
                                            TIMEOUT, WRONG, DrillResult, grade_drill)
from sdpa_course.quiz.drill_tasks import CAUSAL_SDPA_MISTAKES, causal_sdpa
from sdpa_course.quiz.drill_terminal import drill_table, prepare_file, run_drill
from sdpa_course.quiz.drills import all_drills, drill
from sdpa_course.quiz.modes import book_in_bank
from sdpa_course.quiz.store import AnswerStore

REPO = Path(__file__).resolve().parents[1]
DRILL_NAMES = [d.name for d in all_drills()]
slow = pytest.mark.slow


class FakeClock:
    """Seconds that move only when a test moves them."""

    def __init__(self, start: float = 1000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


def store_at(path: Path) -> AnswerStore:
    return AnswerStore(path, report=lambda message: None)


def rows(path: Path) -> list[dict]:
    return json.loads(path.read_text())["answers"] if path.exists() else []


# --- what a drill is ----------------------------------------------------------------------------------

def test_there_are_the_six_drills_of_the_issue():
    """Are the six drills of issue 16 there, each 5 to 12 minutes, with the store id drill-<name>?"""
    assert DRILL_NAMES == ["causal-sdpa", "split-merge-heads", "stable-softmax", "decode-step", "online-softmax",
                           "padding-mask"]
    for item in all_drills():
        assert 5 * 60 <= item.budget_seconds <= 12 * 60, item.name
        assert item.id == f"drill-{item.name}" and item.filename == f"drill_{item.name.replace('-', '_')}.py"


@pytest.mark.parametrize("name", DRILL_NAMES)
def test_each_template_defines_the_functions_with_a_docstring_and_the_stub(name):
    """Does each template compile, define every function the drill grades (docstring, NotImplementedError), and does
    the prompt give each signature and the shapes?"""
    item = drill(name)
    tree = ast.parse(item.template)
    defined = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert tuple(defined) == item.functions == tuple(t.name for t in item.tasks)
    for function in defined.values():
        assert ast.get_docstring(function) and isinstance(function.body[-1], ast.Raise)
        assert f"{function.name}(" in item.prompt
    assert "(..." in item.prompt or "(B" in item.prompt


@pytest.mark.parametrize("name", DRILL_NAMES)
def test_every_absent_name_is_an_sdpa_lib_function_and_covers_the_answer(name, tmp_path):
    """Can the student library remove every absent name (it refuses unknown ones), is the function the drill asks
    for among them, and is every task's forbidden name one that local grading can disable (sdpa_lib.<name>)?"""
    item = drill(name)
    build_student_library(tmp_path, item.absent)
    assert {function for function in item.functions if hasattr(sdpa_lib, function)} <= set(item.absent)
    assert all(hasattr(sdpa_lib, forbidden) for graded in item.tasks for forbidden in graded.forbidden)


def test_drill_lookup_accepts_the_store_id_and_underscores_and_lists_the_names_when_unknown():
    assert drill("drill-causal-sdpa") is drill("causal_sdpa") is drill(" Causal-SDPA ")
    with pytest.raises(LookupError, match="the drills are causal-sdpa, split-merge-heads"):
        drill("flash")


def test_the_causal_task_is_sdpa_with_a_top_left_causal_mask_and_its_mistakes_differ_from_it():
    """Does the causal reference ignore future keys (a loop spec), and does each mask mistake change some output?"""
    rng = np.random.default_rng(0)
    query, key, value = rng.normal(size=(5, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 6))
    expected = np.stack([sdpa_lib.scaled_dot_product_attention(query[i:i + 1], key[:i + 1], value[:i + 1])[0]
                         for i in range(5)])
    np.testing.assert_allclose(causal_sdpa(query, key, value), expected, rtol=1e-12)
    square = query, key[:5], value[:5]
    answer = causal_sdpa(*square)
    named = ["causal mask forgotten", "causal mask transposed (upper triangle)", "mask transposed",
             "causal mask without the diagonal", "forgot the scale", "weights transposed (W^T V)"]
    for mistake in (m for m in CAUSAL_SDPA_MISTAKES if m.name in named):
        assert not np.allclose(mistake.compute(*square), answer), mistake.name


# --- grading without a kernel ------------------------------------------------------------------------

def test_a_syntax_error_is_reported_with_its_line_and_a_caret_and_nothing_runs():
    started = time.monotonic()
    result = grade_drill(drill("stable-softmax"), "import numpy as np\ndef softmax(x, axis=-1)\n    return x\n")
    assert not result.passed and result.problem == SYNTAX
    assert "drill_stable_softmax.py, line 2" in result.message and "^" in result.message
    assert time.monotonic() - started < 1.5, "no kernel is started for code that does not compile"


def test_text_that_is_not_source_is_refused_without_a_crash():
    assert not grade_drill(drill("padding-mask"), b"def padding_mask(): pass").passed


# --- grading in a kernel --------------------------------------------------------------------------------

@slow
@pytest.mark.parametrize("name", DRILL_NAMES)
def test_the_right_source_passes(name):
    result = grade_drill(drill(name), RIGHT[name])
    assert result.passed and result.problem == PASSED, result.message
    assert result.cases >= 30 and f"all {result.cases} random cases" in result.message and "graded in" in result.message


@slow
@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: f"{bug.drill}-{bug.id}")
def test_a_classic_slip_fails_with_the_catalogues_message(bug):
    result = grade_drill(drill(bug.drill), bug.source)
    assert not result.passed and bug.hint in result.message, result.message
    assert "This looks like a known mistake" in result.message and "Replay it" in result.message


@slow
@pytest.mark.parametrize("name", ["causal-sdpa", "split-merge-heads"])
def test_the_untouched_template_is_not_implemented(name):
    result = grade_drill(drill(name), drill(name).template)
    assert result.problem == NOT_IMPLEMENTED and "still raises NotImplementedError" in result.message


@slow
def test_an_endless_loop_is_stopped_at_the_time_limit():
    source = "def padding_mask(lengths, S):\n    while True:\n        try:\n            pass\n" \
             "        except BaseException:\n            pass\n"
    started = time.monotonic()
    result = grade_drill(drill("padding-mask"), source, timeout=2)
    assert result.problem == TIMEOUT and "did not finish within 2 s" in result.message
    assert time.monotonic() - started < 15


@slow
def test_a_missing_function_is_named():
    renamed = RIGHT["split-merge-heads"].replace("def merge_heads", "def merge")
    missing = grade_drill(drill("split-merge-heads"), renamed)
    assert missing.problem == MISSING and "defines no merge_heads" in missing.message


@slow
def test_an_error_when_the_file_runs_and_an_error_in_a_call_are_told_apart():
    """Does an error at the top of the file quote the learner's line, and one raised by the function come back as the
    grading engine explains errors (the function, its line, the inputs)?"""
    loading = grade_drill(drill("padding-mask"), "import numpy as np\nLIMIT = 1 / 0\n")
    assert loading.problem == RAISED_ON_LOAD and "ZeroDivisionError" in loading.message
    assert "drill_padding_mask.py:2" in loading.message and "LIMIT = 1 / 0" in loading.message
    calling = grade_drill(drill("padding-mask"), "def padding_mask(lengths, S):\n    raise ValueError('no mask')\n")
    assert calling.problem == WRONG and "your padding_mask raised ValueError" in calling.message
    assert "raise ValueError('no mask')" in calling.message


@slow
def test_without_the_sandbox_a_note_says_which_protections_are_off(monkeypatch):
    """Where bubblewrap cannot sandbox, the drill is still graded (in an unsandboxed kernel) and says so, never
    silently."""
    from sdpa_course.grading import sandbox
    off = sandbox.SandboxStatus(False, None, "no bwrap here",
                                (sandbox.FILE_SYSTEM_ISOLATION, sandbox.NETWORK_ISOLATION))
    monkeypatch.setattr(sandbox, "sandbox_status", lambda bwrap="bwrap": off)
    result = grade_drill(drill("padding-mask"), RIGHT["padding-mask"])
    assert result.passed, result.message
    assert "no bwrap here" in result.note and "file-system isolation" in result.note
    assert "decided outside your code" in result.note


CHEATS = {
    # numpy patched in the kernel: the comparison runs in the grading process, with its own numpy.
    "patched-allclose": "import numpy as np\nnp.allclose = lambda *a, **k: True\nnp.isclose = lambda *a, **k: True\n"
                        "np.testing.assert_allclose = lambda *a, **k: None\n"
                        "def padding_mask(lengths, S):\n    return np.zeros((len(lengths), 1, S), dtype=bool)\n",
    # the reference imported: its code is not in the kernel's sdpa_lib.
    "imported-reference": "from sdpa_lib import padding_mask\n",
    # the grader's agent replaced so that every call "returns" its first argument.
    "tampered-agent": textwrap.dedent('''
        import json, sys
        agent = sys.modules["_sdpa_grader"]
        real = agent.handle
        def fake(text):
            request = json.loads(text)
            if request["op"] != "call":
                return real(text)
            cases = agent.decode(request["args"])
            agent._publish({"id": request["id"], "ok": True, "results": [
                {"ok": True, "value": agent.encode(args[0]), "warnings": [], "peak_bytes": None} for args, _ in cases]})
        agent.handle = fake
        def padding_mask(lengths, S):
            return lengths
        '''),
}


@slow
@pytest.mark.parametrize("cheat", CHEATS)
def test_a_cheat_does_not_pass(cheat):
    result = grade_drill(drill("padding-mask"), CHEATS[cheat])
    assert not result.passed, result.message


@slow
@pytest.mark.parametrize("source", [
    f"exec(open({str(REPO / 'sdpa_lib' / 'masks.py')!r}).read())\n",  # the reference's file, read and run
    "from sdpa_course.grading.exercises import task\npadding_mask = task('ch08', 'padding_mask').reference\n",
], ids=["read-the-file", "import-the-course"])
def test_the_sandbox_keeps_the_reference_out_of_reach(source, require_sandbox):
    result = grade_drill(drill("padding-mask"), source)
    assert not result.passed and ("FileNotFoundError" in result.message or "ModuleNotFoundError" in result.message)


# --- the store and the record of an attempt ---------------------------------------------------------------

def test_record_keeps_the_seconds_and_late(tmp_path):
    store = store_at(tmp_path / "quiz.json")
    store.record("drill-causal-sdpa", False, "passed (late)", seconds=612.5, late=True)
    store.record("ch04-sqrt-128", True, "B")
    first, second = rows(tmp_path / "quiz.json")
    assert (first["seconds"], first["late"]) == (612.5, True) and ("seconds" in second, "late" in second) == (False, False)
    assert len(store.answers()) == 2


def test_a_pass_past_the_budget_is_recorded_late_and_not_right(tmp_path):
    store, item = store_at(tmp_path / "quiz.json"), drill("padding-mask")
    passed = DrillResult(True, PASSED, "passed: right on all 30 random cases (padding_mask 30), graded in 1.2 s.", 30)
    assert record_attempt(store, item, passed, item.budget_seconds + 1, print)
    assert record_attempt(store, item, passed, 42.0, print)
    late, in_time = rows(tmp_path / "quiz.json")
    assert (late["correct"], late["late"], late["chosen"]) == (False, True, "passed (late)")
    assert (in_time["correct"], in_time.get("late", False), in_time["seconds"]) == (True, False, 42.0)
    assert "recorded as late" in time_line(item, item.budget_seconds + 1)
    assert time_line(item, 42) == "Time: 42 s of 5 min."
    assert not record_attempt(store, item, DrillResult(False, COULD_NOT_GRADE, "grading could not run: ..."), 9, print)
    assert len(rows(tmp_path / "quiz.json")) == 2


def test_the_chosen_text_names_the_mistake():
    wrong = DrillResult(False, "wrong", "padding_mask: wrong answer on ...\nThis looks like a known mistake: padding "
                                        "mask sign flipped (True = padding). True means may attend")
    assert chosen_text(wrong, late=False) == "wrong: padding mask sign flipped (True = padding)"


def test_drill_answers_are_not_stale_questions_and_the_list_marks_the_book(tmp_path):
    store = store_at(tmp_path / "quiz.json")
    store.record("drill-padding-mask", False, "wrong: ...")
    assert book_in_bank(store) == ([], 0)
    assert "padding-mask" in drill_table(store) and "(due for review)" in drill_table(store)


def test_replay_finds_the_drills_own_task():
    import sdpa_course
    namespace = {}
    exec(RIGHT["causal-sdpa"], namespace)  # noqa: S102  (the test's own answer)
    replayed = sdpa_course.replay("drills", "causal_sdpa", seed=3, size=1, student=namespace["causal_sdpa"])
    assert replayed.failure is None and replayed.answer.shape == replayed.yours.shape


# --- the terminal ---------------------------------------------------------------------------------------

def test_the_list_and_an_unknown_drill(tmp_path, capsys):
    assert main(["--drills", "--store", str(tmp_path / "quiz.json")]) == 0
    assert "online-softmax" in capsys.readouterr().out
    assert main(["--drill", "list", "--store", str(tmp_path / "quiz.json")]) == 0
    assert main(["--drill", "flash", "--store", str(tmp_path / "quiz.json")]) == 2
    assert "the drills are causal-sdpa" in capsys.readouterr().err
    assert main(["--drill-file", str(tmp_path / "d.py"), "--store", str(tmp_path / "quiz.json")]) == 2
    assert "--drill-file needs --drill NAME" in capsys.readouterr().err


def test_the_template_is_written_once_then_reused(tmp_path):
    item = drill("causal-sdpa")
    path, existed = prepare_file(item, tmp_path / "mine.py")
    assert not existed and path.read_text() == item.template
    path.write_text("# my work\n")
    assert prepare_file(item, tmp_path / "mine.py") == (path, True) and path.read_text() == "# my work\n"


def test_stopping_before_grading_records_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    store = store_at(tmp_path / "quiz.json")
    answers = iter(["q"])
    status = run_drill("padding-mask", store, file=str(tmp_path / "d.py"), read=lambda prompt, countdown: next(answers))
    assert status == 1 and rows(tmp_path / "quiz.json") == []


EDITOR = '''\
import pathlib, sys
sys.path.insert(0, {tests!r})
from buggy.drills import BUGS, RIGHT
count = pathlib.Path(sys.argv[1]).with_suffix(".count")
attempt = int(count.read_text()) if count.exists() else 0
count.write_text(str(attempt + 1))
slip = next(bug for bug in BUGS if bug.drill == "padding-mask")
pathlib.Path(sys.argv[1]).write_text(slip.source if attempt == 0 else RIGHT["padding-mask"])
'''


@slow
def test_the_cli_with_a_fake_editor_records_each_attempt(tmp_path):
    """An editor that writes a slip, then (after Enter) the right answer: two attempts recorded, the second right."""
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR.format(tests=str(REPO / "tests")))
    environment = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "VISUAL": "",
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    finished = subprocess.run([sys.executable, "-m", "sdpa_course.quiz.cli", "--drill", "padding-mask", "--store",
                               str(tmp_path / "quiz.json")], input="\n", text=True, capture_output=True,
                              cwd=tmp_path, env=environment, timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert (tmp_path / "drill_padding_mask.py").read_text() == RIGHT["padding-mask"]
    assert "padding mask sign flipped" in finished.stdout and "passed: right on all" in finished.stdout
    first, second = rows(tmp_path / "quiz.json")
    assert first["id"] == second["id"] == "drill-padding-mask"
    assert (first["correct"], second["correct"], "late" in first, "late" in second) == (False, True, False, False)
    assert 0 < first["seconds"] <= second["seconds"]


@slow
def test_a_reused_file_graded_past_the_budget_is_late(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    (tmp_path / "d.py").write_text(RIGHT["padding-mask"])
    clock, store = FakeClock(), store_at(tmp_path / "quiz.json")

    def read(prompt, countdown):
        clock.now += 6 * 60  # the learner took six minutes of the five
        return ""

    assert run_drill("padding-mask", store, file=str(tmp_path / "d.py"), clock=clock, read=read) == 1
    out = capsys.readouterr().out
    assert "exists already: it is reused" in out and "recorded as late" in out
    (row,) = rows(tmp_path / "quiz.json")
    assert (row["correct"], row["late"], row["seconds"]) == (False, True, 360.0)


# --- the notebook ---------------------------------------------------------------------------------------

def right_softmax(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    exps = np.exp(x - np.where(np.isneginf(top), 0, top))  # an all -inf slice is shifted by 0
    total = exps.sum(axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)


@slow
def test_the_notebook_drill_grades_a_function_by_its_source_and_records_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SDPA_HEADLESS", "1")
    from sdpa_course.quiz import coding_drill
    clock = FakeClock()
    d = coding_drill("stable-softmax", store=tmp_path / "quiz.json", clock=clock)
    assert "def softmax(x, axis=-1)" in capsys.readouterr().out
    right_softmax.__name__ = "softmax"  # the source is graded, so the name in it counts
    missing = d.submit(right_softmax)
    assert missing.problem == MISSING
    clock.now += 30
    result = d.submit_source(RIGHT["stable-softmax"])
    assert result.passed and "Time: 30 s of 6 min." in capsys.readouterr().out
    assert [(row["correct"], row["seconds"]) for row in rows(tmp_path / "quiz.json")] == [(False, 0.0), (True, 30.0)]
    d.close()


def test_the_notebook_drill_shows_its_widgets_and_its_clock_ticks(tmp_path, monkeypatch):
    monkeypatch.delenv("SDPA_HEADLESS", raising=False)
    from sdpa_course.quiz.drill_notebook import NotebookDrill
    clock = FakeClock()
    d = NotebookDrill(drill("padding-mask"), store=None, clock=clock, tick=0.01, show=False)
    assert "padding_mask(lengths, S)" in d.box.children[0].value and d.label.running
    clock.now += 301
    deadline = time.monotonic() + 2
    while d.label.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not d.label.running and "time is up" in d.label.label.value and "late" in d.status.value


# --- the countdown --------------------------------------------------------------------------------------

def test_remaining_and_format():
    assert remaining(100.0, 40.0) == 60.0 and remaining(100.0, 101.0) == 0.0
    assert [format_seconds(s) for s in (0, 0.2, 59.5, 61, 3600)] == ["00:00", "00:01", "01:00", "01:01", "1:00:00"]
    clock = FakeClock()
    countdown = Countdown(90, clock=clock)
    clock.now += 100
    assert countdown.expired and countdown.status() == "time is up (+00:10)" and countdown.elapsed() == 100
    with pytest.raises(ValueError, match="positive budget"):
        Countdown(0)


def test_read_line_warns_at_60_30_10_and_when_time_is_up_on_a_fake_clock():
    clock, out = FakeClock(), io.StringIO()
    countdown = Countdown(90, clock=clock)
    waits = []

    def ready(timeout):  # nothing is typed until the clock passes 95 s
        waits.append(timeout)
        if timeout is None:
            return True
        clock.now += timeout
        return False

    line = read_line("Press Enter: ", countdown, stream=io.StringIO("done\n"), out=out, ready=ready)
    assert line == "done" and waits == [30.0, 30.0, 20.0, 10.0, None]
    text = out.getvalue()
    assert text.startswith("[01:30 left] Press Enter: ")
    assert [w for w in ("[60 s left]", "[30 s left]", "[10 s left]", "[time is up") if w in text] == [
        "[60 s left]", "[30 s left]", "[10 s left]", "[time is up"]


def test_read_line_without_a_terminal_just_reads_and_raises_eof_at_the_end():
    countdown, out = Countdown(60, clock=FakeClock()), io.StringIO()
    assert read_line("go: ", countdown, stream=io.StringIO("a line\n"), out=out) == "a line"
    assert "left]" not in out.getvalue().split("go: ", 1)[1]
    with pytest.raises(EOFError):
        read_line("go: ", countdown, stream=io.StringIO(""), out=out)


def test_the_countdown_label_calls_back_once_when_the_time_runs_out():
    clock, expired = FakeClock(), []
    label = CountdownLabel(Countdown(10, clock=clock), on_expire=lambda: expired.append(True), tick=0.01)
    assert label.refresh() and label.label.value == "Time: 00:10 left"
    label.start()
    clock.now += 11
    done = threading.Event()
    for _ in range(200):
        if expired:
            done.set()
            break
        time.sleep(0.01)
    assert done.is_set() and expired == [True]
    assert not label.refresh() and expired == [True], "called back once only"
    label.stop()
