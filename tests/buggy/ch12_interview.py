"""Buggy submissions for chapter 12: the source's own single answer to Q5, the classic slips on Q4 and Q8, a malformed answer."""
from buggy import Bug


def answer(number: int, letters: str) -> str:
    return f'def answer_q{number}():\n    return "{letters}"\n'


BUGS = [
    Bug("q5_single_choice", "answer_q5", answer(5, "A"), "test_q5", "the answer is A, B, D"),
    Bug("q4_standard_deviation", "answer_q4", answer(4, "B"), "test_q4", "the standard deviation is 8"),
    Bug("q8_gradients_solved", "answer_q8", answer(8, "ABC"), "test_q8", "scaling only mitigates gradient problems"),
    Bug("q1_not_a_letter", "answer_q1", answer(1, "E"), "test_q1", "exactly one letter among A, B, C, D"),
]
