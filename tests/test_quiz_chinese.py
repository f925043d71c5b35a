"""The quiz's own messages in Chinese (``SDPA_LANG=zh``, catalog ``sdpa_course/locale/zh_CN/messages.po``).

Each message is checked both ways: in Chinese it is the catalog's translation, and in English it is,
byte for byte, the text the quiz printed before its messages were marked for translation (written
out here as the old f-strings).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from sdpa_course.i18n import messages
from sdpa_course.quiz.bank import load_bank
from sdpa_course.quiz.countdown import Countdown, format_duration
from sdpa_course.quiz.engine import (AnswerError, QuizSession, answer_hint, describe, feedback, format_question,
                                     late_feedback, late_note, parse_answer, present, right_answer)
from sdpa_course.quiz.modes import NothingToAsk, choose_questions, review_questions
from sdpa_course.quiz.stats import stats_report
from sdpa_course.quiz.store import AnswerStore

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
QUESTION = "ch01-batched-weight-shape"  # single choice, four options, the right one is not the first
START = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)


@pytest.fixture(params=["en", "zh"])
def language(request, monkeypatch):
    """Each test runs in English and in Chinese; the catalog is read afresh."""
    monkeypatch.setenv("SDPA_LANG", request.param)
    messages._translations.cache_clear()
    yield request.param
    messages._translations.cache_clear()


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("SDPA_LANG", "zh")
    messages._translations.cache_clear()
    yield
    messages._translations.cache_clear()


def question(identifier=QUESTION):
    return next(q for q in load_bank() if q.id == identifier)


def first_of_type(kind):
    return next(q for q in load_bank() if q.type == kind)


def wrong_letter(presented):
    return next(letter for letter, i in zip(presented.labels, presented.order)
                if not presented.question.options[i].correct)


def test_the_wrong_answer_feedback_is_translated(language):
    """Does a wrong answer's verdict, answer, explanation and 'not X' line come out in the learner's language?"""
    presented = present(question())
    letter = wrong_letter(presented)
    answer = parse_answer(presented, letter)
    text = feedback(presented, answer)
    q = presented.question
    if language == "zh":
        assert text.startswith(f"回答错误：你的答案是 {letter} (")
        assert f"\n正确答案：{right_answer(presented)}\n解析：{q.explanation}" in text
        assert f"\n为什么不选 {letter}：" in text
        assert CJK.search(q.explanation)  # the question itself is the Chinese bank's
        assert "Wrong" not in text and "Why" not in text
    else:
        wrong = sorted(i for i in answer if not q.options[i].correct and q.options[i].why)
        old = (f"Wrong: you answered {describe(presented, answer)}.\nAnswer: {right_answer(presented)}\n"
               f"Why: {q.explanation}" + "".join(f"\nNot {presented.letter_of(i)}: {q.options[i].why}" for i in wrong))
        assert text == old


def test_the_right_answer_late_answer_and_open_question_feedback(language):
    """Are 'Right.', the late verdict and the open question's self-grading in the learner's language?"""
    presented = present(question())
    right = feedback(presented, presented.question.correct_options)
    late = late_feedback(presented, late_note(189.4, 180))
    opened = present(first_of_type("open"))
    missed = feedback(opened, False)
    if language == "zh":
        assert right.startswith("回答正确。\n正确答案：")
        assert late.startswith("太晚了（超时：用时 189 秒，限时 180 秒）：这次回答算作答错。\n正确答案：")
        assert missed.startswith("已标记为没答上：这道题记入错题本。\n解析：")
    else:
        assert right.startswith("Right.\nAnswer: ")
        assert late == (f"Too late (late: 189 s of 180 s): this answer counts as wrong.\n"
                        f"Answer: {right_answer(presented)}\nWhy: {presented.question.explanation}")
        assert missed == f"Marked as missed: it goes into the wrong-answer book.\nWhy: {opened.question.explanation}"


def test_the_answer_hint_and_answer_errors(language):
    """Do the hint for each kind of question, and the message for an unreadable answer, speak the language?"""
    presented = present(question())
    hints = {kind: answer_hint(present(first_of_type(kind))) for kind in ("multiple", "true_false", "numeric", "open")}
    with pytest.raises(AnswerError) as not_an_option:
        parse_answer(presented, "Z")
    with pytest.raises(AnswerError) as two_letters:
        parse_answer(presented, "AB")
    with pytest.raises(AnswerError) as nothing:
        parse_answer(presented, "  ")
    if language == "zh":
        assert answer_hint(presented) == "一个字母，A-D"
        assert hints["true_false"] == "t（对）或 f（错）" and hints["numeric"] == "一个数"
        assert hints["multiple"].startswith("所有正确的字母，例如 A")
        assert str(not_an_option.value) == "Z 不是选项；请回答：一个字母，A-D"
        assert str(two_letters.value) == "这是单选题；请回答：一个字母，A-D"
        assert str(nothing.value) == "没有给出答案；请输入：一个字母，A-D"
    else:
        assert answer_hint(presented) == "one letter, A-D"
        assert hints["true_false"] == "t (true) or f (false)" and hints["numeric"] == "a number"
        assert hints["open"] == "y if your answer matched the model answer, n if not"
        assert hints["multiple"].startswith("every correct letter, e.g. A")
        assert str(not_an_option.value) == "Z is not an option; answer with one letter, A-D"
        assert str(two_letters.value) == "this is a single-choice question; answer with one letter, A-D"
        assert str(nothing.value) == "no answer given; type one letter, A-D"


def test_the_question_header(language):
    """Is the header's chapter, difficulty and kind in the learner's language (the id as it is)?"""
    q = question()
    header = format_question(present(q), 1).splitlines()[0]
    if language == "zh":
        assert header == f"1. [{QUESTION} | 第 1 章 | 中等 | 单选题]" and q.difficulty == "mid"
    else:
        assert header == f"1. [{QUESTION} | chapter 1 | {q.difficulty} | single choice]"


def test_nothing_to_ask(language, tmp_path):
    """Does an empty review (nothing answered yet) say so in the learner's language?"""
    store = AnswerStore(tmp_path / "quiz.json")
    with pytest.raises(NothingToAsk) as empty:
        review_questions(store)
    with pytest.raises(ValueError) as combined:
        choose_questions(mock=3, review=True, store=store)
    if language == "zh":
        assert str(empty.value) == f"{store.path} 中没有到期需复习的题：还没有回答过任何题目"
        assert str(combined.value).startswith("--mock 与 --review 不能同时使用：模拟面试从整个题库抽题")
    else:
        assert str(empty.value) == f"nothing is due for review in {store.path}: no question answered yet"
        assert str(combined.value).startswith("--mock and --review cannot be combined: a mock interview draws")


def test_the_widget_buttons(language, monkeypatch, tmp_path):
    """Are the card's and the runner's buttons, inputs and countdown in the learner's language?"""
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv("SDPA_HEADLESS", "0")
    from sdpa_course.quiz.widget import QuestionCard, QuizRunner
    card = QuestionCard(present(question()), None)
    opened = QuestionCard(present(first_of_type("open")), None)
    truth = QuestionCard(present(first_of_type("true_false")), None)
    now = [0.0]
    runner = QuizRunner([question()], None, np.random.default_rng(0), seconds_per_question=90, clock=lambda: now[0])
    labels = (card.check_button.description, opened.reveal_button.description, opened.got_button.description,
              opened.missed_button.description, runner.next_button.description, runner.progress.value,
              [label for label, _value in truth.inputs[0].options], runner.timer.label.value)
    runner.timer.stop()
    if language == "zh":
        assert labels == ("检查", "查看参考答案", "我答对了", "我没答上", "下一题", "第 1/1 题", ["对", "错"],
                          "本题剩余时间：剩余 01:30")
    else:
        assert labels == ("Check", "Show model answer", "I got it", "I missed it", "Next question", "Question 1/1",
                          ["True", "False"], "Time for this question: 01:30 left")


def test_the_mock_countdown_status(language):
    """Does the mock interview's countdown say the time left, and that the time is up, in the learner's language?"""
    now = [0.0]
    countdown = Countdown(90, clock=lambda: now[0])
    now[0] = 31.0
    running = countdown.status()
    now[0] = 100.0
    over = countdown.status()
    durations = format_duration(312.4), format_duration(40), format_duration(600)
    if language == "zh":
        assert (running, over) == ("剩余 00:59", "时间到（超出 00:10）")
        assert durations == ("5 分 12 秒", "40 秒", "10 分钟")
    else:
        assert (running, over) == ("00:59 left", "time is up (+00:10)")
        assert durations == ("5 min 12 s", "40 s", "10 min")


def test_the_stats_report_headings(language, tmp_path):
    """Are the --stats report's headings and labels in the learner's language, its numbers the same?"""
    now = [START]
    store = AnswerStore(tmp_path / "quiz.json", clock=lambda: now[0], report=lambda message: None)
    first, second = load_bank()[0].id, load_bank()[1].id
    store.record(first, False, "B")
    store.record(second, True, "A")
    now[0] += timedelta(minutes=10)
    lines = stats_report(store).splitlines()
    if language == "zh":
        assert lines[0] == f"复习统计（{store.path}），FSRS 的目标记忆保持率为 90%："
        assert lines[1].startswith("  已回答 ") and "以及 0 道编程练习：自 2026-03-02 起共 2 次回答" in lines[1]
        assert lines[2] == "  最近 30 天的记忆保持率（复习时记住的比例）：暂无"
        assert lines[4] == "  错题本：1（至少答错过一次，尚未掌握）"
        assert "到期复习：" in lines and "按章节：" in lines
        assert lines[lines.index("到期复习：") + 1].startswith("  现在 ")
        assert "周二 2026-03-03" in lines[lines.index("到期复习：") + 3]
        assert lines[lines.index("按章节：") + 1].split() == ["章节", "已答", "正确率", "记忆保持率", "7", "天到期",
                                                            "错题本"]
    else:
        assert lines[0] == f"Review statistics ({store.path}), FSRS aiming at 90% recall:"
        assert lines[2] == "  retention over the last 30 days: none yet reviews recalled"
        assert lines[4] == "  wrong-answer book: 1 (missed at least once, not yet known)"
        assert lines[lines.index("Due for review:") + 3] == f"  {'Tue 2026-03-03':<16} 0"
        header = f"  {'chapter':<8} {'answered':>9} {'right':>13} {'retention':>13} {'due 7 d':>8} {'book':>5}"
        assert lines[lines.index("By chapter:") + 1] == header


def test_the_score_by_chapter(language):
    """Is the end-of-quiz score table headed, titled and totalled in the learner's language, its columns aligned?"""
    session = QuizSession.start([question()])
    session.record(False)
    lines = session.summary().splitlines()
    if language == "zh":
        assert lines[0] == "各章得分："
        assert lines[1].startswith("  ch01 可视化演示 ") and lines[2].startswith("  合计 ")
        assert len(lines[1]) + len("可视化演示") == len(lines[2]) + len("合计")  # the same width on a terminal
    else:
        assert lines == ["Score by chapter:", f"  ch01 {'Visual demo: the whole pipeline':<45} 0/1",
                         f"  total{'':<46}0/1"]


def test_sdpa_quiz_speaks_chinese_with_lang_zh(tmp_path):
    """Does ``sdpa-quiz --lang zh --chapter 1 --limit 1`` ask the Chinese question and answer in Chinese?"""
    environment = {**os.environ, "SDPA_QUIZ_STORE": str(tmp_path / "quiz.json"), "PYTHONPATH": str(ROOT),
                   "SDPA_LANG": "en"}  # --lang wins over the environment
    chinese = {q.id: q for q in load_bank("zh")}
    rng = np.random.default_rng(7)  # as the command draws with --seed 7
    asked = QuizSession.start(choose_questions(chapter="1", rng=rng, limit=1), rng).current
    q = asked.question
    typed = {"single": lambda: wrong_letter(asked), "multiple": lambda: wrong_letter(asked),
             "true_false": lambda: "f" if q.answer else "t", "numeric": lambda: str(q.answer + q.tolerance + 1000),
             "open": lambda: "\nn"}[q.type]()
    result = subprocess.run([sys.executable, "-m", "sdpa_course.quiz.cli", "--lang", "zh", "--chapter", "1",
                             "--limit", "1", "--seed", "7"], input=typed + "\n", text=True, capture_output=True,
                            env=environment, timeout=60, cwd=tmp_path)
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert out.startswith(f"共 1 道题。回答保存在 {tmp_path / 'quiz.json'}。")
    assert chinese[q.id].prompt in out and "第 1 章" in out
    assert "你的答案（" in out and "；输入 q 退出）：" in out
    assert ("回答错误：你的答案是 " in out) or ("已标记为没答上" in out)
    assert "解析：" + chinese[q.id].explanation in out
    assert "各章得分：" in out and "已保存 1 条回答到 " in out and "错题本：1 道题。" in out
    assert not re.search(r"Your answer|Wrong:|Why:|Score by chapter|saved to", out)


def test_the_drill_time_line_and_table(language):
    """Do a coding drill's time line and the drills' table speak the learner's language?"""
    from sdpa_course.quiz.drill_attempts import time_line
    from sdpa_course.quiz.drill_terminal import drill_table
    from sdpa_course.quiz.drills import all_drills
    chosen = all_drills()[0]
    assert chosen.budget_seconds % 60 == 0
    minutes = chosen.budget_seconds // 60
    in_time, late = time_line(chosen, 312.4), time_line(chosen, chosen.budget_seconds + 1)
    table = drill_table().splitlines()
    if language == "zh":
        assert in_time == f"用时：5 分 12 秒，限时 {minutes} 分钟。"
        assert late.endswith("已超时，因此记为超时（即使通过也不算答对）。")
        assert table[0].split() == ["练习", "限时", "要写的函数"]
        assert table[-1] == "sdpa-quiz --drill NAME 开始一道练习（模板写入 ./drill_<name>.py）。"
    else:
        assert in_time == f"Time: 5 min 12 s of {minutes} min."
        assert late == (f"Time: {format_duration(chosen.budget_seconds + 1)} of {minutes} min: past the budget, so it "
                        f"is recorded as late (not right, even when it passes).")
        assert table[0] == f"{'drill':<18} {'budget':>7}  writes"
        assert table[-1] == "sdpa-quiz --drill NAME starts one (the template goes to ./drill_<name>.py)."


def test_a_drill_attempt_keeps_the_mistake_named_in_the_language_of_the_run(language):
    """The store keeps the mistake's name, found in the grading message whichever language it is written in."""
    from sdpa_course.grading.catalogue.masks import PADDING_MASK_MISTAKES
    from sdpa_course.quiz.drill_attempts import chosen_text
    from sdpa_course.quiz.drill_grading import DrillResult
    mistake = PADDING_MASK_MISTAKES[0]
    result = DrillResult(False, "wrong", "padding_mask: ...\n" + mistake.explanation())
    shown = messages._(mistake.name)
    assert chosen_text(result, late=False) == f"wrong: {shown}"
    assert (shown != mistake.name) == (language == "zh")
