"""The defects of issue 16, one test each: bad input, odd store files, filters and the mock clock."""
import json
import os
import subprocess
import sys
from datetime import datetime, timezone

import numpy as np
import pytest

from sdpa_course.quiz import AnswerStore, QuizSession, present, select
from sdpa_course.quiz.cli import run_quiz
from sdpa_course.quiz.engine import AnswerError, parse_answer
from sdpa_course.quiz.modes import choose_questions
from sdpa_course.quiz.store import StoreError

from test_quiz_cli import answers, quiz, saved, scripted


def run_bytes(tmp_path, *args, stdin: bytes, env=None):
    environment = {**os.environ, "SDPA_QUIZ_STORE": str(tmp_path / "quiz.json"), "PYTHONIOENCODING": "utf-8:strict", **(env or {})}
    return subprocess.run([sys.executable, "-m", "sdpa_course.quiz.cli", *args], input=stdin,
                          capture_output=True, env=environment, timeout=60)


def test_non_utf8_stdin_is_reported_and_answers_kept(tmp_path):
    """1. A byte that is not UTF-8 is 'not readable', asked again; the answers given are saved."""
    lines = answers(0, chapter=4)[:2]
    script = (lines[0] + "\n").encode() + b"\xff\xfe\n" + (lines[1] + "\n").encode()
    result = run_bytes(tmp_path, "--chapter", "4", "--seed", "0", stdin=script)
    out, err = result.stdout.decode(), result.stderr.decode()
    assert "Traceback" not in err and result.returncode == 0, err
    assert "not readable" in out
    assert [a["correct"] for a in saved(tmp_path)] == [True, True]


def fresh(path, reports=None):
    return AnswerStore(path, clock=lambda: datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc),
                       report=(reports if reports is not None else []).append)


@pytest.mark.parametrize("make", ["folder", "readme", "json", "binary"])
def test_a_file_that_is_not_a_store_is_refused_and_never_moved(tmp_path, make):
    """2. --store at a folder or at a file the quiz did not write: a clear error, nothing moved."""
    target = tmp_path / "README.md"
    if make == "folder":
        target.mkdir()
    elif make == "readme":
        target.write_text("# My notes\n")
    elif make == "json":
        target.write_text('{"name": "package"}')
    else:
        target.write_bytes(b"\xff\xfe binary")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(StoreError, match=f"{target}.*(folder|does not look like the quiz store)"):
        fresh(target).record("q1", True, "A")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # not even a .lock file left beside it
    result = quiz(tmp_path, "--store", str(target), "--chapter", "1", stdin="A\n")
    assert result.returncode == 2 and str(target) in result.stderr and "Traceback" not in result.stderr
    assert "Your answer" not in result.stdout  # refused before the first question
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_a_damaged_store_the_quiz_wrote_is_still_set_aside(tmp_path):
    path = tmp_path / "quiz.json"
    path.write_text('{\n "format": "sdpa-quiz-store",\n "version": 1,\n "answers": [\n  {"id"')
    reports = []
    fresh(path, reports).record("q1", True, "A")
    assert len(list(tmp_path.glob("quiz.json.corrupt-*"))) == 1 and "could not be read" in reports[0]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_an_unreadable_store_is_reported_not_moved_chmod(tmp_path):
    """3. (real permissions) cannot read <path>: permission denied; nothing moved."""
    path = tmp_path / "quiz.json"
    fresh(path).record("q1", True, "A")
    path.chmod(0)
    try:
        with pytest.raises(StoreError, match=f"cannot read {path}: permission denied"):
            fresh(path).answers()
    finally:
        path.chmod(0o600)
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_an_unreadable_store_is_reported_not_moved(tmp_path, monkeypatch):
    """3. (simulated, so it runs as root too) a PermissionError stops, it does not set the file aside."""
    path = tmp_path / "quiz.json"
    fresh(path).record("q1", True, "A")
    real = type(path).read_bytes

    def denied(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(path), "read_bytes", denied)
    with pytest.raises(StoreError, match=f"cannot read {path}: permission denied"):
        fresh(path).answers()
    monkeypatch.undo()
    assert not list(tmp_path.glob("*.corrupt-*")) and len(fresh(path).answers()) == 1


def test_invalid_rows_are_skipped_with_one_warning(tmp_path):
    """4. A row with an id list or a string 'false' is skipped (never counted right), warned once."""
    path = tmp_path / "quiz.json"
    good = {"id": "ch04-sqrt-128", "correct": False, "chosen": "1", "time": "2026-03-02T09:00:00+00:00",
            "day": "2026-03-02"}
    rows = [good, {**good, "id": ["x"]}, {**good, "id": "ch03-dot-by-hand", "correct": "false"},
            {**good, "day": "yesterday"}]
    path.write_text(json.dumps({"format": "sdpa-quiz-store", "version": 1, "answers": rows}))
    reports = []
    store = fresh(path, reports)
    assert store.answers() == [good]
    assert [e.id for e in store.book()] == ["ch04-sqrt-128"]
    store.record("q1", True, "A")
    assert len(reports) == 1 and "3 answer row(s)" in reports[0] and "'correct'" in reports[0]
    assert len(json.loads(path.read_text())["answers"]) == 5  # skipped rows are kept in the file, not lost


def test_summary_and_review_agree_on_questions_gone_from_the_bank(tmp_path):
    """5. An answer for a question no longer in the bank: the book count and --review agree, said once."""
    store = fresh(tmp_path / "quiz.json")
    store.record("ch99-gone", False, "A")
    store.record("ch99-gone", False, "B")
    store.record("ch04-sqrt-128", False, "1")
    result = quiz(tmp_path, "--review", stdin="")
    assert "1 question(s)" in result.stdout and "Wrong-answer book: 1 question(s)" in result.stdout
    assert (result.stdout + result.stderr).count("2 answer(s) are for questions no longer in the bank") == 1


def test_widget_and_terminal_share_one_clock(tmp_path, monkeypatch):
    """6. SDPA_QUIZ_TODAY moves the notebook's day as it moves the terminal's."""
    pytest.importorskip("ipywidgets")
    from sdpa_course.quiz.widget import QuestionCard
    monkeypatch.setenv("SDPA_QUIZ_TODAY", "2026-01-31")
    store = AnswerStore(tmp_path / "quiz.json")
    card = QuestionCard(present(select(ids=["ch04-sqrt-128"])[0]), store)
    card.inputs[0].value = "11.31"
    card.check()
    assert store.answers()[0]["day"] == "2026-01-31"


def test_review_keeps_the_filters_and_mock_keeps_the_limit(tmp_path):
    """7. --review --chapter 8 asks chapter 8 only; --mock 3 --limit 1 asks one question."""
    store = fresh(tmp_path / "quiz.json")
    store.record("ch04-sqrt-128", False, "1")
    store.record("ch08-causal-count", False, "1")
    assert [q.id for q in choose_questions(review=True, chapter=8, store=store)] == ["ch08-causal-count"]
    assert len(choose_questions(mock=3, limit=1, rng=np.random.default_rng(0))) == 1
    result = quiz(tmp_path, "--mock", "3", "--limit", "1", "--seed", "0", stdin="")
    assert "1 question(s)" in result.stdout
    result = quiz(tmp_path, "--mock", "3", "--review")
    assert result.returncode == 2 and "--mock and --review" in result.stderr


def test_late_mock_answer_counts_wrong_and_unanswered_count_in_total(capsys):
    """8. An answer at 95 s of 90 s is recorded late and wrong; the one never answered still counts."""
    from test_quiz_cli import timed_answers
    session = QuizSession.start(select(ids=["ch04-sqrt-128", "ch03-dot-by-hand", "ch08-causal-count"]))
    right = [str(item.question.answer) for item in session.items]
    now, recorded = [0.0], []
    run_quiz(session, lambda p, answer, correct, *late, **timing: recorded.append((p.question.id, correct, late)),
             seconds_per_question=90, clock=lambda: now[0], timed_read=timed_answers(now, [(20, right[0]), (95, right[1])]))
    out = capsys.readouterr().out
    assert [(qid, correct) for qid, correct, _ in recorded] == [("ch04-sqrt-128", True), ("ch03-dot-by-hand", False)]
    assert recorded[1][2] == ("late: 95 s of 90 s",) and "too late" in out.lower()
    assert "1/3" in session.summary() and "1 unanswered" in session.summary()


def test_late_mock_answer_is_saved_as_late(tmp_path):
    from sdpa_course.quiz.cli import Recorder
    from test_quiz_cli import timed_answers
    store = fresh(tmp_path / "quiz.json")
    session = QuizSession.start(select(ids=["ch04-sqrt-128"]))
    now = [0.0]
    run_quiz(session, Recorder(store), seconds_per_question=90, clock=lambda: now[0],
             timed_read=timed_answers(now, [(95, "11.31")]))
    answer, = store.answers()
    assert answer["correct"] is False and answer["late"] is True and "late: 95 s of 90 s" in answer["chosen"]


def test_symlinked_store_is_written_through(tmp_path):
    """9. A store reached by a symlink stays a symlink; the file it points to gets the answer."""
    real = tmp_path / "real" / "quiz.json"
    real.parent.mkdir()
    fresh(real).record("q1", True, "A")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    fresh(link).record("q2", False, "B")
    assert link.is_symlink() and [a["id"] for a in json.loads(real.read_text())["answers"]] == ["q1", "q2"]


@pytest.mark.parametrize("text", [",", " , ;", "/"])
def test_empty_selection_is_asked_again(text):
    """10. ',' on a multiple-choice question is no answer, not '(none)'."""
    presented = present(select(ids=["ch12-seed-q5"])[0])
    with pytest.raises(AnswerError, match="no option"):
        parse_answer(presented, text)


def test_a_huge_line_is_not_echoed_whole():
    """11. A 1 MB line is cut to 200 characters when echoed."""
    for qid in ("ch04-sqrt-128", "ch12-seed-q5", "ch12-exam-masks"):
        presented = present(select(ids=[qid])[0])
        with pytest.raises(AnswerError) as error:
            parse_answer(presented, "x" * 1_000_000 + "é" * 1000)
        assert len(str(error.value)) < 400
