"""The quiz engine: reading typed answers, grading, explaining, and picking questions by mode."""
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from sdpa_course.quiz import QuizSession, feedback, grade, parse_answer, present, select
from sdpa_course.quiz.engine import AnswerError, Presented, describe, format_question
from sdpa_course.quiz.modes import NothingToAsk, choose_questions
from sdpa_course.quiz.schema import Option, Question
from sdpa_course.quiz.store import AnswerStore


def make(kind, **fields):
    base = dict(id=f"t-{kind}", chapter=3, type=kind, difficulty="easy", tags=("t",), prompt="p?",
                explanation="because")
    return Question(**{**base, **fields})


OPTIONS = (Option("right one", True), Option("wrong one", False), Option("also right", True), Option("nope", False))
SINGLE = make("single", options=(Option("a", False), Option("b", True), Option("c", False)))
MULTIPLE = make("multiple", options=OPTIONS)
TRUE_FALSE = make("true_false", answer=False)
NUMERIC = make("numeric", answer=11.31, tolerance=0.01)
OPEN = make("open", model_answer="the model answer")


def unshuffled(question):
    return present(question)  # options in bank order: A is option 0


READ = [  # (question, typed, parsed)
    (SINGLE, "b", frozenset({1})),
    (SINGLE, " B ", frozenset({1})),
    (MULTIPLE, "AC", frozenset({0, 2})),
    (MULTIPLE, "c, a", frozenset({0, 2})),
    (MULTIPLE, "a c", frozenset({0, 2})),
    (TRUE_FALSE, "f", False),
    (TRUE_FALSE, "True", True),
    (NUMERIC, "11.3", 11.3),
    (NUMERIC, "1.131e1", 11.31),
    (OPEN, "y", True),
    (OPEN, "no", False),
]


@pytest.mark.parametrize("question, typed, parsed", READ)
def test_parse_answer(question, typed, parsed):
    assert parse_answer(unshuffled(question), typed) == parsed


BAD = [
    (SINGLE, "", "no answer given; type one letter, A-C"),
    (SINGLE, "   ", "no answer given"),
    (SINGLE, "E", "E is not an option; answer with one letter, A-C"),
    (SINGLE, "AB", "this is a single-choice question"),
    (MULTIPLE, "AA", "a letter is repeated"),
    (MULTIPLE, "AX", "X is not an option"),
    (TRUE_FALSE, "maybe", "'maybe' is not understood; answer with t \\(true\\) or f \\(false\\)"),
    (NUMERIC, "eleven", "'eleven' is not a number"),
    (NUMERIC, "nan", "is not a finite number"),
    (OPEN, "perhaps", "'perhaps' is not understood"),
]


@pytest.mark.parametrize("question, typed, message", BAD)
def test_unreadable_answers_say_what_to_type(question, typed, message):
    with pytest.raises(AnswerError, match=message):
        parse_answer(unshuffled(question), typed)


GRADES = [
    (SINGLE, frozenset({1}), True), (SINGLE, frozenset({0}), False),
    (MULTIPLE, frozenset({0, 2}), True), (MULTIPLE, frozenset({0}), False), (MULTIPLE, frozenset({0, 1, 2}), False),
    (TRUE_FALSE, False, True), (TRUE_FALSE, True, False),
    (NUMERIC, 11.305, True), (NUMERIC, 11.3, True), (NUMERIC, 11.2, False),
    (OPEN, True, True), (OPEN, False, False),
]


@pytest.mark.parametrize("question, answer, right", GRADES)
def test_grade(question, answer, right):
    assert grade(question, answer) is right


def test_shuffled_letters_map_back_to_the_right_option():
    """Whatever the shuffle, typing the letter shown next to the right option is graded right."""
    for seed in range(10):
        presented = present(SINGLE, np.random.default_rng(seed))
        letter = presented.letter_of(1)
        assert grade(SINGLE, parse_answer(presented, letter))
        assert f"{letter}. b" in format_question(presented)


def test_shuffling_changes_the_order():
    orders = {present(MULTIPLE, np.random.default_rng(seed)).order for seed in range(20)}
    assert len(orders) > 1 and all(sorted(order) == [0, 1, 2, 3] for order in orders)


def test_question_text_gives_nothing_away():
    text = format_question(unshuffled(MULTIPLE), 1)
    assert "right one" in text and "correct" not in text.lower().replace("pick every correct option", "")


def test_feedback_explains_a_wrong_answer():
    presented = Presented(MULTIPLE, (3, 2, 1, 0))  # A = "nope", B = "also right", C = "wrong one", D = "right one"
    text = feedback(presented, frozenset({3}))
    assert text.splitlines() == ["Wrong: you answered A (nope).", "Answer: B (also right), D (right one)",
                                 "Why: because"]
    assert feedback(unshuffled(NUMERIC), 11.31).startswith("Right.")
    assert describe(unshuffled(TRUE_FALSE), True) == "true"


def test_session_scores_by_chapter():
    questions = select(chapter=4)[:2] + select(chapter=3)[:1]
    session = QuizSession.start(questions)
    session.record(True)
    session.record(False)
    session.record(True)
    assert session.done and session.score_by_chapter() == {3: (1, 1), 4: (1, 2)}
    assert "ch04 The scaling factor" in session.summary() and "2/3" in session.summary()
    with pytest.raises(IndexError, match="the quiz is over"):
        session.current


def test_choose_questions_filters_and_limits():
    assert {q.chapter for q in choose_questions(chapter="scaling")} == {4}
    assert all("masks" in q.tags for q in choose_questions(tag="MASKS"))
    assert {q.difficulty for q in choose_questions(difficulty="hard", limit=3)} == {"hard"}
    mock = choose_questions(mock=6, rng=np.random.default_rng(1))
    assert len(mock) == 6 and len({q.chapter for q in mock}) > 1


@pytest.mark.parametrize("filters, message", [
    ({"chapter": 14}, "no chapter 14"),
    ({"tag": "nonsense"}, "no question has tag 'nonsense'; tags are: "),
    ({"difficulty": "brutal"}, "difficulty must be one of easy, mid, hard"),
    ({"mock": 0}, "mock must be a positive whole number"),
    ({"chapter": 1, "tag": "flashattention"}, "no question has tag"),
])
def test_choose_questions_rejects_bad_filters(filters, message):
    with pytest.raises(ValueError, match=message):
        choose_questions(**filters)


def test_review_asks_what_is_due_the_most_forgotten_first(tmp_path):
    now = [datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)]
    store = AnswerStore(tmp_path / "quiz.json", clock=lambda: now[0])
    with pytest.raises(NothingToAsk, match="nothing is due for review .*: no question answered yet"):
        choose_questions(review=True, store=store)
    store.record("ch04-sqrt-128", True, "11.31")
    now[0] += timedelta(minutes=10)
    store.record("ch04-sqrt-128", True, "11.31")  # learnt: due in days
    store.record("ch03-dot-by-hand", False, "7")  # due again in a minute
    store.record("no-longer-in-bank", False, "A")
    assert [q.id for q in choose_questions(review=True, store=store)] == ["ch03-dot-by-hand"]
    now[0] += timedelta(days=5)
    assert [q.id for q in choose_questions(review=True, store=store)] == ["ch03-dot-by-hand", "ch04-sqrt-128"]


def test_a_wrong_option_picked_says_which_mistake_it_is():
    question = Question("x", 1, "multiple", "easy", ("t",), "?", "the reason", options=(
        Option("right", True), Option("slip one", False, "the first slip"), Option("slip two", False, "the second slip")))
    presented = present(question)
    wrong = feedback(presented, frozenset({0, 2}))
    assert "Not C: the second slip" in wrong and "the first slip" not in wrong
    assert "Not " not in feedback(presented, frozenset({0}))


@pytest.mark.parametrize("text, expected", [("对", True), ("是", True), ("错", False), ("否", False), ("正确", True)])
def test_chinese_true_false_words(text, expected):
    assert parse_answer(present(type_filter("true_false")[0]), text) is expected


def type_filter(kind):
    from sdpa_course.quiz import load_bank
    return [q for q in load_bank() if q.type == kind]


def test_full_width_letters_digits_and_chinese_separators():
    multiple = present(type_filter("multiple")[0])
    assert parse_answer(multiple, "Ａ，Ｃ") == parse_answer(multiple, "A,C") == parse_answer(multiple, "a、c")
    assert parse_answer(present(type_filter("numeric")[0]), "１１．３１") == 11.31
    with pytest.raises(AnswerError, match="is not understood"):
        parse_answer(present(type_filter("true_false")[0]), "也许")
