"""The notebook quiz: headless text, and the widget callbacks called as plain methods (no front end)."""
import numpy as np
import pytest

from sdpa_course.quiz import AnswerStore, check_yourself, present, quiz_widget, select
from sdpa_course.quiz.widget import QuestionCard, QuizRunner


@pytest.fixture
def headless(monkeypatch):
    monkeypatch.setenv("SDPA_HEADLESS", "1")


@pytest.fixture
def live(monkeypatch, tmp_path):
    """A 'front end': widgets are built (display prints their repr); answers go to a temporary store."""
    monkeypatch.setenv("SDPA_HEADLESS", "0")
    monkeypatch.setenv("SDPA_QUIZ_STORE", str(tmp_path / "quiz.json"))
    return AnswerStore(tmp_path / "quiz.json")


def test_check_yourself_headless_prints_questions_without_answers(headless, capsys):
    questions = check_yourself(4, n=3, seed=0)
    out = capsys.readouterr().out
    assert len(questions) == 3 and {q.chapter for q in questions} == {4}
    assert out.startswith("Check yourself: The scaling factor")
    assert all(q.prompt in out for q in questions)
    for question in questions:
        assert question.explanation not in out
        assert all(f". {option.text}" in out for option in question.options)


def test_check_yourself_by_ids(headless, capsys):
    assert [q.id for q in check_yourself("masking", ids=["ch08-causal-count"])] == ["ch08-causal-count"]
    with pytest.raises(ValueError, match=r"\['ch04-sqrt-128'\] are not in chapter 8"):
        check_yourself(8, ids=["ch04-sqrt-128"])


@pytest.mark.parametrize("args, message", [((14,), "no chapter 14"), ((4, 0), "n must be a positive whole number"),
                                           ((4, 2, ["nope"]), r"unknown question id\(s\) \['nope'\]")])
def test_check_yourself_rejects_bad_arguments(headless, args, message):
    with pytest.raises(ValueError, match=message):
        check_yourself(*args)


def card_for(question_id, store, on_answer=None):
    return QuestionCard(present(select(ids=[question_id])[0], np.random.default_rng(1)), store, on_answer)


def test_right_choice_is_explained_and_saved(live):
    card = card_for("ch12-seed-q7", live)
    card.inputs[0].value = card.presented.letter_of(0)  # the causal-mask option
    assert card.check() is True
    assert "Right." in card.feedback.value and card.check_button.disabled and card.inputs[0].disabled
    assert [(a["id"], a["correct"]) for a in live.answers()] == [("ch12-seed-q7", True)]
    assert card.check() is None and len(live.answers()) == 1  # a second click changes nothing


def test_wrong_multiple_choice_goes_into_the_book(live):
    card = card_for("ch12-seed-q5", live)
    wrong = card.presented.letter_of(2)  # 'step by step in sequence order'
    for letter, box in zip(card.presented.labels, card.inputs):
        box.value = letter == wrong
    assert card.check() is False
    assert "Wrong: you answered" in card.feedback.value and "single choice" in card.feedback.value
    assert [e.id for e in live.book()] == ["ch12-seed-q5"]


def test_unreadable_numeric_input_asks_again(live):
    card = card_for("ch04-sqrt-128", live)
    card.inputs[0].value = "eleven"
    assert card.check() is None and "is not a number" in card.feedback.value and not card.answered
    card.inputs[0].value = "11.31"
    assert card.check() is True and live.answers()[0]["chosen"] == "11.31"


def test_open_question_reveal_then_self_grade(live):
    verdicts = []
    card = card_for("ch12-exam-why-multi-head", live, lambda q, correct: verdicts.append((q.id, correct)))
    assert card.got_button.disabled
    card.reveal()
    assert "one weighted average" in card.feedback.value and not card.got_button.disabled
    assert card.self_grade(False) is False
    assert verdicts == [("ch12-exam-why-multi-head", False)] and card.missed_button.disabled
    assert [e.id for e in live.book()] == ["ch12-exam-why-multi-head"]


def answer_right(card):
    question = card.presented.question
    if question.type == "open":
        card.reveal()
        return card.self_grade(True)
    if question.type == "multiple":
        for index, box in enumerate(card.inputs):
            box.value = card.presented.order[index] in question.correct_options
    elif question.type == "single":
        card.inputs[0].value = card.presented.letter_of(next(iter(question.correct_options)))
    elif question.type == "true_false":
        card.inputs[0].value = "true" if question.answer else "false"
    else:
        card.inputs[0].value = str(question.answer)
    return card.check()


def test_quiz_runner_walks_through_and_scores_by_chapter(live):
    runner = QuizRunner(select(ids=["ch03-dot-by-hand", "ch12-exam-masks", "ch11-dot-is-cosine"]), live,
                        np.random.default_rng(0))
    for _ in range(3):
        assert runner.next_button.disabled
        assert answer_right(runner.card) is True
        runner.next()
    assert "ch03" in runner.summary.value and "ch12" in runner.summary.value and "3/3" in runner.summary.value
    assert len(live.answers()) == 3 and live.book() == []


def test_mock_runner_gives_each_question_its_own_countdown(live):
    """90 s a question: a late answer is recorded late and wrong, the next question starts a fresh clock."""
    now = [0.0]
    runner = QuizRunner(select(chapter=4)[:3], live, None, seconds_per_question=90, clock=lambda: now[0], tick=3600)
    assert runner.timer.label.value == "Time for this question: 01:30 left"
    now[0] += 30
    assert answer_right(runner.card) is True
    runner.next()
    now[0] += 95
    runner.timer.refresh()  # one tick of the countdown's thread
    assert "Time is up for this question" in runner.timer.label.value
    assert answer_right(runner.card) is False and "Too late (late: 95 s of 90 s)" in runner.card.feedback.value
    runner.next()
    assert runner.timer.label.value == "Time for this question: 01:30 left"
    now[0] += 10
    assert answer_right(runner.card) is True
    runner.next()
    assert "2/3" in runner.summary.value
    late = live.answers()[1]
    assert late["correct"] is False and late["late"] is True and late["chosen"].endswith("(late: 95 s of 90 s)")


def test_a_mock_question_never_answered_counts_in_the_total(live):
    runner = QuizRunner(select(chapter=4)[:3], live, None, seconds_per_question=90, clock=lambda: 0.0, tick=3600)
    assert answer_right(runner.card) is True
    runner.session.close()  # the learner leaves the interview after one answer
    runner.next()
    assert "1/3" in runner.summary.value and "2 unanswered" in runner.summary.value


def test_quiz_widget_modes(headless, tmp_path, capsys):
    assert {q.difficulty for q in quiz_widget("difficulty", difficulty="hard", n=4)} == {"hard"}
    assert len(quiz_widget("mock", n=5, seed=2)) == 5
    store = AnswerStore(tmp_path / "quiz.json")
    assert quiz_widget("review", store=store) == [] and "nothing is due" in capsys.readouterr().out
    store.record("ch05-softmax-123", False, "0.5")
    assert [q.id for q in quiz_widget("review", store=store)] == ["ch05-softmax-123"]
    with pytest.raises(ValueError, match="mode must be one of chapter, tag, difficulty, mock, review"):
        quiz_widget("exam")
    with pytest.raises(ValueError, match=r"mode='tag' needs tag=\.\.\."):
        quiz_widget("tag")
