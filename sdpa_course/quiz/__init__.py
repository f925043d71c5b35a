"""Interview review: the question bank, the quiz engine and the wrong-answer book (错题本).

In a notebook::

    from sdpa_course.quiz import check_yourself, coding_drill, quiz_widget
    check_yourself(4)                # three questions of chapter 4
    quiz_widget("mock", n=10)        # a timed mock interview
    d = coding_drill("causal-sdpa")  # a timed coding drill; then d.submit(causal_sdpa)

In a terminal: ``sdpa-quiz --help``.  The bank lives in ``bank/chNN_<slug>.yaml`` (schema
in :mod:`sdpa_course.quiz.schema`); answers and the book in one JSON file
(:mod:`sdpa_course.quiz.store`).  ``sdpa-quiz --export-anki FILE.apkg`` writes the bank as an
Anki deck (:mod:`sdpa_course.quiz.anki`).
"""
from .bank import load_bank, select
from .engine import QuizSession, feedback, grade, parse_answer, present
from .schema import BankError, Question
from .store import AnswerStore, default_store_path

def __getattr__(name: str):
    """``check_yourself``, ``quiz_widget`` and ``coding_drill`` load ipywidgets and matplotlib: import them on
    first use, so that the ``sdpa-quiz`` console command starts fast."""
    if name in ("check_yourself", "quiz_widget"):
        from . import widget
        return getattr(widget, name)
    if name == "coding_drill":
        from .drill_notebook import coding_drill
        return coding_drill
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["AnswerStore", "BankError", "Question", "QuizSession", "check_yourself", "coding_drill",
           "default_store_path", "feedback", "grade", "load_bank", "parse_answer", "present", "quiz_widget", "select"]
