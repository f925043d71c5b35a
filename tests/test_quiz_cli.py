"""``sdpa-quiz`` driven through a subprocess with scripted input, plus the quiz loop in-process."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sdpa_course.quiz import QuizSession, select
from sdpa_course.quiz.cli import run_quiz
from sdpa_course.quiz.modes import choose_questions


def quiz(tmp_path, *args, stdin="", env=None):
    """Run ``python -m sdpa_course.quiz.cli`` with ``stdin``; returns the finished process."""
    environment = {**os.environ, "SDPA_QUIZ_STORE": str(tmp_path / "quiz.json"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "sdpa_course.quiz.cli", *args], input=stdin, text=True,
                          capture_output=True, env=environment, timeout=60)


def saved(tmp_path):
    path = tmp_path / "quiz.json"
    return json.loads(path.read_text())["answers"] if path.exists() else []


def typed_answer(presented, right):
    """What to type to answer ``presented`` right (or wrong)."""
    question = presented.question
    if question.options:
        letters = [presented.letter_of(i) for i in range(len(question.options))
                   if (i in question.correct_options) is right]
        return "".join(sorted(letters)) if right else letters[0]
    if question.type == "true_false":
        return "t" if question.answer is right else "f"
    if question.type == "numeric":
        return repr(question.answer if right else question.answer + 2 * question.tolerance + 1)
    return "\ny" if right else "\nn"


def answers(seed, right=True, **filters):
    """The lines to type to answer ``sdpa-quiz --seed SEED <filters>`` all right (or all wrong)."""
    rng = np.random.default_rng(seed)
    session = QuizSession.start(choose_questions(rng=rng, **filters), rng)
    return [typed_answer(presented, right) for presented in session.items]


def seed_putting_first(question_id, **filters):
    return next(seed for seed in range(200)
                if choose_questions(rng=np.random.default_rng(seed), **filters)[0].id == question_id)


def test_all_right_after_invalid_input(tmp_path):
    """Invalid, empty and impossible answers re-prompt; the right answers then score full marks."""
    lines = answers(5, chapter=3)
    script = "Z\n\n" + "\n".join(lines) + "\n"
    result = quiz(tmp_path, "--chapter", "3", "--seed", "5", stdin=script)
    assert result.returncode == 0, result.stderr
    assert "Z is not an option" in result.stdout or "'Z' is not a number" in result.stdout
    assert "no answer given" in result.stdout
    assert f"total{'':<46}{len(lines)}/{len(lines)}" in result.stdout
    assert [a["correct"] for a in saved(tmp_path)] == [True] * len(lines)
    assert "Traceback" not in result.stdout + result.stderr


def test_end_of_input_stops_cleanly_and_keeps_answers(tmp_path):
    result = quiz(tmp_path, "--chapter", "4", "--seed", "0", stdin="1\n")
    assert result.returncode == 0 and "End of input: stopping the quiz." in result.stdout
    assert len(saved(tmp_path)) == 1 and "1 answer(s) saved" in result.stdout
    assert "Traceback" not in result.stderr


def test_wrong_answers_fill_the_book_and_review_asks_them(tmp_path):
    quiz(tmp_path, "--chapter", "5", "--limit", "2", "--seed", "3", stdin="q\n")
    assert saved(tmp_path) == []
    wrong = "\n".join(answers(0, right=False, tag="gqa")) + "\n"
    first = quiz(tmp_path, "--tag", "gqa", "--seed", "0", stdin=wrong)
    assert "Wrong-answer book: 2 question(s). Due for review now: 2" in first.stdout
    review = quiz(tmp_path, "--review", stdin="")
    assert "2 question(s)" in review.stdout and "ch06-gqa" in review.stdout


def test_review_of_an_empty_book(tmp_path):
    result = quiz(tmp_path, "--review")
    assert result.returncode == 0 and "nothing is due for review" in result.stdout
    assert "no question answered yet" in result.stdout


def test_the_schedule_through_the_command(tmp_path):
    """Wrong, then right at once in the review (a learning step), right again the next day: then due in days."""
    seed = seed_putting_first("ch03-dot-by-hand", chapter=3)
    for day, answer in (("2026-05-01", "7"), ("2026-05-01", "8"), ("2026-05-02", "8")):
        quiz(tmp_path, "--review" if answer == "8" else "--chapter=3", "--limit", "1", "--seed", str(seed),
             stdin=answer + "\n", env={"SDPA_QUIZ_TODAY": day})
    assert [a["correct"] for a in saved(tmp_path)] == [False, True, True]
    assert all(isinstance(a["seconds"], float) and a["rating"] in (1, 2, 3) for a in saved(tmp_path))
    after = quiz(tmp_path, "--review", env={"SDPA_QUIZ_TODAY": "2026-05-02"}).stdout
    assert "nothing is due for review" in after and "the next one is due on 2026-05-0" in after


@pytest.mark.parametrize("args, message", [
    (["--chapter", "99"], "sdpa-quiz: error: no chapter '99'"),
    (["--tag", "nonsense"], "sdpa-quiz: error: no question has tag 'nonsense'"),
    (["--mock", "0"], "sdpa-quiz: error: mock must be a positive whole number"),
])
def test_bad_options_give_a_clear_error(tmp_path, args, message):
    result = quiz(tmp_path, *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_corrupt_store_is_reported_and_the_quiz_goes_on(tmp_path):
    (tmp_path / "quiz.json").write_text('{\n "format": "sdpa-quiz-store",\n "answers": [ this is not json')
    result = quiz(tmp_path, "--chapter", "1", "--limit", "1", "--seed", "0",
                  stdin=answers(0, chapter=1, limit=1)[0] + "\n")
    assert "could not be read" in result.stderr and "corrupt-" in result.stderr
    assert result.returncode == 0 and len(saved(tmp_path)) == 1
    assert len(list(tmp_path.glob("quiz.json.corrupt-*"))) == 1


def start(tmp_path, *args):
    environment = {**os.environ, "SDPA_QUIZ_STORE": str(tmp_path / "quiz.json"), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "sdpa_course.quiz.cli", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)


def wait_for_answers(tmp_path, count, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(saved(tmp_path)) >= count:
                return
        except (json.JSONDecodeError, FileNotFoundError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"{count} answers were not saved within {timeout} s")


def test_ctrl_c_saves_and_exits_cleanly(tmp_path):
    process = start(tmp_path, "--chapter", "2", "--seed", "0")
    process.stdin.write(answers(0, chapter=2)[0] + "\n")
    process.stdin.flush()
    wait_for_answers(tmp_path, 1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130 and "Interrupted." in out and "1 answer(s) saved" in out
    assert "Traceback" not in err


def test_killed_mid_quiz_loses_no_earlier_answer(tmp_path):
    process = start(tmp_path, "--chapter", "2", "--seed", "0")
    process.stdin.write("\n".join(answers(0, chapter=2)[:2]) + "\n")
    process.stdin.flush()
    wait_for_answers(tmp_path, 2)
    process.kill()
    process.communicate(timeout=30)
    assert len(saved(tmp_path)) == 2


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("sdpa-quiz")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "--review" in result.stdout and "--mock N" in result.stdout


def scripted(lines):
    """A ``read`` function that answers from ``lines`` and then signals end of input."""
    feed = iter(lines)

    def read(prompt):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None
    return read


def timed_answers(now, script):
    """A ``timed_read`` for a fake clock: each answer of ``script`` is ``(seconds it takes, text)``."""
    feed = iter(script)

    def read(prompt, countdown):
        try:
            seconds, text = next(feed)
        except StopIteration:
            raise EOFError from None
        assert prompt.endswith("q quits): ") and countdown.left() == 90  # each question has its own clock
        now[0] += seconds
        return text
    return read


def test_mock_interview_gives_each_question_its_own_clock(capsys):
    """90 s a question: the second answer comes at 100 s and is late; the third, on a fresh clock, counts."""
    session = QuizSession.start(select(ids=["ch04-sqrt-128", "ch03-dot-by-hand", "ch08-causal-count"]))
    answers = [str(item.question.answer) for item in session.items]
    now, recorded = [0.0], []
    run_quiz(session, lambda presented, answer, correct, *late, **timing: recorded.append((correct, late)),
             seconds_per_question=90, clock=lambda: now[0],
             timed_read=timed_answers(now, [(30, answers[0]), (100, answers[1]), (10, answers[2])]))
    assert [correct for correct, _ in recorded] == [True, False, True]
    assert recorded[1][1] == ("late: 100 s of 90 s",) and "Too late" in capsys.readouterr().out
    assert "2/3" in session.summary()


def test_open_question_shows_the_model_answer_then_asks_for_a_verdict(capsys):
    session = QuizSession.start(select(ids=["ch12-exam-masks"]))
    recorded = []
    run_quiz(session, lambda *answer, **timing: recorded.append(answer), read=scripted(["my notes", "maybe", "n"]))
    out = capsys.readouterr().out
    assert "Model answer:" in out and "lower-triangular" in out and "'maybe' is not understood" in out
    assert session.results[0][1] is False and recorded[0][2] is False
