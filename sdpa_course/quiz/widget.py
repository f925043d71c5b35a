"""The quiz in a notebook: ``check_yourself`` after a lecture section, ``quiz_widget`` for chapter 12.

Both show ipywidgets cards wired to plain methods (``QuestionCard.check``,
``QuestionCard.reveal``, ``QuestionCard.self_grade``, ``QuizRunner.next``) that tests call
directly.  With ``SDPA_HEADLESS=1`` (tests, nbconvert) they print the questions with their
options as text, without the answers, and return the list of questions.
"""
from __future__ import annotations

import html
import time
from typing import Callable

import numpy as np

from ..chapters import chapter as find_chapter
from ..i18n.messages import N_, _
from ..widgets import is_headless
from .bank import select
from .engine import (AnswerError, Presented, QuizSession, describe, feedback, format_question, grade,
                     late_feedback, late_note, parse_answer, present)
from .modes import MOCK_SECONDS_PER_QUESTION, NothingToAsk, choose_questions
from .schema import Question
from .countdown import Countdown, CountdownLabel
from .schedule import answer_rating
from .store import AnswerStore, StoreError

# The quiz's modes, and what a learner reads for each.
MODE_NAMES = {"chapter": N_("one chapter"), "tag": N_("one topic"), "difficulty": N_("one difficulty"),
              "mock": N_("mock interview"), "review": N_("review")}
MODES = tuple(MODE_NAMES)


def _as_html(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def print_questions(title: str, questions: list[Question]) -> None:
    """The headless form: the questions and options as text, no answers."""
    print(title)
    for number, question in enumerate(questions, 1):
        print()
        print(format_question(present(question), number))


class QuestionCard:
    """One question as a widget card: an input, a Check button and the explanation.

    ``on_answer(question, correct)`` is called once the question is answered.  ``late()``, if
    given, says whether an answer now is too late (a mock interview's clock): it returns a note
    like ``"late: 189 s of 180 s"`` and the answer is then recorded as late and wrong, or None.
    """

    def __init__(self, presented: Presented, store: AnswerStore | None,
                 on_answer: Callable[[Question, bool], None] | None = None,
                 late: Callable[[], str | None] | None = None, clock: Callable[[], float] = time.monotonic):
        import ipywidgets as widgets

        self.presented, self.store, self.on_answer, self.late = presented, store, on_answer, late
        self.clock, self.shown_at = clock, clock()  # the seconds an answer took go with it into the schedule
        self.answered = False
        question = presented.question
        self.prompt = widgets.HTML(f"<b>{_as_html(question.prompt)}</b>")
        self.feedback = widgets.HTML("")
        self.inputs = self._inputs(widgets)
        if question.type == "open":
            self.notes = widgets.Textarea(placeholder=_("Write your answer here, then show the model answer."))
            self.reveal_button = widgets.Button(description=_("Show model answer"))
            self.reveal_button.on_click(lambda button: self.reveal())
            self.got_button = widgets.Button(description=_("I got it"), disabled=True)
            self.missed_button = widgets.Button(description=_("I missed it"), disabled=True)
            self.got_button.on_click(lambda button: self.self_grade(True))
            self.missed_button.on_click(lambda button: self.self_grade(False))
            controls = [self.notes, widgets.HBox([self.reveal_button, self.got_button, self.missed_button])]
        else:
            self.check_button = widgets.Button(description=_("Check"), button_style="primary")
            self.check_button.on_click(lambda button: self.check())
            controls = [*self.inputs, self.check_button]
        self.box = widgets.VBox([self.prompt, *controls, self.feedback],
                                layout=widgets.Layout(border="1px solid #ccc", padding="6px", margin="4px 0"))

    def _inputs(self, widgets) -> list:
        question, labels = self.presented.question, self.presented.labels
        if question.type == "single":
            options = [(f"{letter}. {question.options[i].text}", letter)
                       for letter, i in zip(labels, self.presented.order)]
            return [widgets.RadioButtons(options=options, value=None, layout=widgets.Layout(width="auto"))]
        if question.type == "multiple":
            return [widgets.Checkbox(description=f"{letter}. {question.options[i].text}", indent=False,
                                     layout=widgets.Layout(width="auto"))
                    for letter, i in zip(labels, self.presented.order)]
        if question.type == "true_false":
            return [widgets.RadioButtons(options=[(_("True"), "true"), (_("False"), "false")], value=None)]
        if question.type == "numeric":
            return [widgets.Text(placeholder=_("a number, e.g. 11.31"))]
        return []

    def answer_text(self) -> str:
        """The current input as the text the console would read."""
        kind = self.presented.question.type
        if kind == "multiple":
            return "".join(letter for letter, box in zip(self.presented.labels, self.inputs) if box.value)
        return self.inputs[0].value or "" if self.inputs else ""

    def check(self) -> bool | None:
        """Grade the current input; returns whether it was right (None if it could not be read)."""
        if self.answered:
            return None
        try:
            answer = parse_answer(self.presented, self.answer_text())
        except AnswerError as error:
            self.feedback.value = f"<b>{_as_html(str(error))}</b>"
            return None
        return self._finish(answer)

    def reveal(self) -> None:
        """Open question: show the model answer and enable the self-grading buttons."""
        model = self.presented.question.model_answer
        self.feedback.value = (f"<b>{_as_html(_('Model answer'))}</b><br>{_as_html(model)}"
                               f"<br><i>{_as_html(_('Did your answer cover it?'))}</i>")
        self.reveal_button.disabled = True
        self.got_button.disabled = self.missed_button.disabled = False

    def self_grade(self, got_it: bool) -> bool | None:
        """Open question: the learner's verdict on their own answer."""
        if self.answered:
            return None
        self.reveal_button.disabled = self.got_button.disabled = self.missed_button.disabled = True
        return self._finish(got_it)

    def _finish(self, answer) -> bool:
        question = self.presented.question
        late = self.late() if self.late is not None else None
        correct = grade(question, answer) and late is None
        self.answered = True
        text = feedback(self.presented, answer) if late is None else late_feedback(self.presented, late)
        if question.type == "open":
            text = _("Model answer: {answer}").format(answer=question.model_answer) + f"\n{text}"
        self.feedback.value = f"<div style='white-space: normal'>{_as_html(text)}</div>"
        for control in self.inputs:
            control.disabled = True
        if hasattr(self, "check_button"):
            self.check_button.disabled = True
        self._record(correct, describe(self.presented, answer) + (f" ({late})" if late else ""), late is not None)
        if self.on_answer is not None:
            self.on_answer(question, correct)
        return correct

    def _record(self, correct: bool, chosen: str, late: bool) -> None:
        if self.store is None:
            return
        seconds = self.clock() - self.shown_at
        rating = answer_rating(self.presented.question.type, correct, seconds)
        try:
            self.store.record(self.presented.question.id, correct, chosen, seconds=seconds, late=late, rating=int(rating))
        except StoreError as error:
            self.feedback.value += f"<br><i>{_as_html(_('Not saved: {error}').format(error=error))}</i>"


def _store(store) -> AnswerStore:
    return store if isinstance(store, AnswerStore) else AnswerStore(store)


def _chapter_questions(chapter, n: int, ids, rng) -> list[Question]:
    number = find_chapter(chapter).number
    if ids is not None:
        questions = select(ids=list(ids))
        strays = [q.id for q in questions if q.chapter != number]
        if strays:
            raise ValueError(_("question(s) {ids} are not in chapter {number}").format(ids=strays, number=number))
        return questions
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(_("{name} must be a positive whole number of questions; got {value}").format(
            name="n", value=repr(n)))
    pool = select(chapter=number)
    return [pool[i] for i in sorted(rng.choice(len(pool), size=min(n, len(pool)), replace=False))]


def check_yourself(chapter, n: int = 3, ids=None, *, seed=None, store=None):
    """A few questions of ``chapter`` as a small quiz; wrong answers go into the wrong-answer book.

    Parameters
    ----------
    chapter : int or str
        Chapter number or slug (see :func:`sdpa_lib.chapter`).
    n : int
        How many questions, drawn at random from the chapter (all if it has fewer).
    ids : list of str, optional
        Ask exactly these questions (ids of this chapter) instead.
    seed : int, optional
        Seeds the draw and the option order.
    store : path or AnswerStore, optional
        Where answers are saved (default: ``$SDPA_QUIZ_STORE`` or the user data dir).

    Returns
    -------
    The list of questions when headless; otherwise the ``VBox`` of cards (``.cards`` holds them).
    """
    try:
        title = find_chapter(chapter).shown_title
    except KeyError as error:
        raise ValueError(error.args[0]) from None
    rng = np.random.default_rng(seed)
    questions = _chapter_questions(chapter, n, ids, rng)
    if is_headless():
        print_questions(_("Check yourself: {title}").format(title=title), questions)
        return questions
    import ipywidgets as widgets
    from IPython.display import display

    answer_store = _store(store)
    cards = [QuestionCard(present(q, rng), answer_store) for q in questions]
    box = widgets.VBox([widgets.HTML(f"<h4>{html.escape(_('Check yourself: {title}').format(title=title))}</h4>"),
                        *[card.box for card in cards]])
    box.cards = cards
    display(box)
    return box


class QuizRunner:
    """A full quiz, one card at a time, with the score by chapter at the end (``.box`` is the widget).

    With ``seconds_per_question`` (a mock interview) each card has a countdown that ticks beside it;
    an answer after its time is recorded as late and wrong, and every question counts in the total.
    """

    def __init__(self, questions, store: AnswerStore | None, rng, *, seconds_per_question: float | None = None,
                 clock: Callable[[], float] = time.monotonic, tick: float = 1.0):
        import ipywidgets as widgets

        self.session = QuizSession.start(questions, rng)
        self.store, self.seconds_per_question, self.clock, self.tick = store, seconds_per_question, clock, tick
        self.countdown: Countdown | None = None
        self.timer: CountdownLabel | None = None
        self.progress = widgets.HTML()
        self.clock_slot = widgets.HBox()
        self.slot = widgets.VBox()
        self.next_button = widgets.Button(description=_("Next question"), disabled=True)
        self.next_button.on_click(lambda button: self.next())
        self.summary = widgets.HTML()
        self.box = widgets.VBox([self.progress, self.clock_slot, self.slot, self.next_button, self.summary])
        self._show_current()

    def _late(self) -> str | None:
        """A note if an answer now comes after this question's time, else None."""
        if not self.countdown.expired:
            return None
        return late_note(self.countdown.elapsed(), self.seconds_per_question)

    def _time_is_up(self) -> None:
        """The countdown ran out before an answer: say that an answer now counts as late (from the timer's thread)."""
        self.timer.label.value = _("Time is up for this question: an answer now is recorded as late and counts as "
                                   "wrong.")

    def _show_current(self) -> None:
        timed = self.seconds_per_question is not None
        if timed:
            self.countdown = Countdown(self.seconds_per_question, clock=self.clock)
            self.timer = CountdownLabel(self.countdown, on_expire=self._time_is_up, tick=self.tick,
                                        prefix=_("Time for this question: "))
            self.clock_slot.children = [self.timer.label]
        self.card = QuestionCard(self.session.current, self.store, self._answered, self._late if timed else None,
                                 clock=self.clock)
        self.slot.children = [self.card.box]
        self.next_button.disabled = True
        self.progress.value = _("Question {number}/{count}").format(number=self.session.position + 1,
                                                                    count=len(self.session.items))
        if timed:
            self.timer.start()

    def _answered(self, question: Question, correct: bool) -> None:
        if self.timer is not None:
            self.timer.stop()
        self.session.record(correct)
        self.next_button.disabled = False

    def next(self) -> None:
        """Move to the next question, or show the summary when the quiz is over."""
        if self.session.done:
            self.next_button.disabled = True
            if self.seconds_per_question is not None:  # a mock interview: every question counts in the total
                self.session.close()
            self.summary.value = f"<pre>{html.escape(self.session.summary())}</pre>"
            return
        self._show_current()


def quiz_widget(mode: str = "chapter", *, chapter=None, tag=None, difficulty=None, n: int = 10,
                seed=None, store=None):
    """The full quiz of chapter 12: one question at a time, then the score by chapter.

    ``mode`` is ``"chapter"``, ``"tag"``, ``"difficulty"`` (each needs its filter),
    ``"mock"`` (``n`` questions from the whole bank, 90 s each) or ``"review"`` (the
    wrong-answer book, due questions first).  Headless: prints the questions and returns them.
    An empty wrong-answer book prints a note and returns an empty list.
    """
    if mode not in MODES:
        raise ValueError(_("mode must be one of {modes}; got {mode}").format(modes=", ".join(MODES), mode=repr(mode)))
    needed = {"chapter": chapter, "tag": tag, "difficulty": difficulty}
    if mode in needed and needed[mode] is None:
        raise ValueError(_("mode={mode} needs {name}=...").format(mode=repr(mode), name=mode))
    rng = np.random.default_rng(seed)
    answer_store = _store(store)
    try:
        questions = choose_questions(chapter=chapter, tag=tag, difficulty=difficulty, rng=rng,
                                     mock=n if mode == "mock" else None, review=mode == "review",
                                     store=answer_store, limit=None if mode == "mock" else n)
    except NothingToAsk as message:  # an empty wrong-answer book is good news, not an error
        print(_("{message}.").format(message=message))
        return []
    if is_headless():
        print_questions(_("Quiz ({mode}): {count} questions").format(mode=_(MODE_NAMES[mode]), count=len(questions)),
                        questions)
        return questions
    from IPython.display import display

    per_question = MOCK_SECONDS_PER_QUESTION if mode == "mock" else None
    runner = QuizRunner(questions, answer_store, rng, seconds_per_question=per_question)
    display(runner.box)
    return runner
