"""``sdpa-quiz --stats``: how well the reviews hold, and what falls due this week, from the answer log.

Retention is counted as Anki counts it ("true retention"): over the answers given to a
question that was due after a real interval (its FSRS card in the review state), the share
that were right.  Answers given while a question is still being learnt (first sight, the
minutes-long steps after a lapse) say little about memory and are left out of it.
"""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from fsrs import State

from ..chapters import CHAPTERS
from ..i18n.columns import padded
from ..i18n.messages import _
from .bank import aliases, load_bank
from .modes import is_drill
from .schedule import DESIRED_RETENTION, LEARN_AHEAD, Item
from .store import AnswerStore

RETENTION_DAYS = 30  # the window retention is measured over
WEEK_DAYS = 7


def retention(items, now: datetime, days: int = RETENTION_DAYS) -> tuple[int, int]:
    """``(recalled, asked)`` over the answers of the last ``days`` days to questions due after an interval."""
    since = now - timedelta(days=days)
    reviews = [review for item in items for review in item.history
               if review.state_before == State.Review and review.time >= since]
    return sum(review.correct for review in reviews), len(reviews)


def due_by_day(items, now: datetime, days: int = WEEK_DAYS) -> list[tuple[str, int]]:
    """How many are due now (overdue, or a step due within ``LEARN_AHEAD``, as the review asks them) and on each of
    the next ``days`` local days."""
    today = now.date()
    counts = Counter()
    for item in items:
        local = item.due.astimezone(now.tzinfo)
        counts["now" if local <= now + LEARN_AHEAD else local.date()] += 1
    rows = [(_("now"), counts["now"])]
    rows += [((_("today (later)") if offset == 0 else _day(today + timedelta(days=offset))),
              counts[today + timedelta(days=offset)]) for offset in range(days)]
    return rows


def _day(day) -> str:
    """``Mon 2026-12-07``: the weekday's short name (in the learner's language) and the date."""
    names = (_("Mon"), _("Tue"), _("Wed"), _("Thu"), _("Fri"), _("Sat"), _("Sun"))
    return f"{names[day.weekday()]} {day.isoformat()}"


def _share(right: int, asked: int) -> str:
    return _("{share} of {asked}").format(share=f"{right / asked:.0%}", asked=asked) if asked else _("none yet")


def stats_report(store: AnswerStore) -> str:
    """The whole report as text: totals, retention, the book, due this week, and by chapter."""
    now, renamed = store.clock(), aliases()
    bank = {q.id: q for q in load_bank()}
    items = store.schedule(renamed)
    questions = [item for item in items.values() if item.id in bank]
    drills = [item for item in items.values() if is_drill(item.id)]
    if not questions and not drills:
        return _("No answers yet in {store}: start with sdpa-quiz --chapter 1 (or --mock 10).").format(store=store.path)
    scheduled = questions + drills
    answers = sum(len(item.history) for item in scheduled)
    first = min(review.time for item in scheduled for review in item.history).astimezone(now.tzinfo).date()
    recalled, asked = retention(scheduled, now)
    states = Counter(_state_name(item) for item in scheduled)
    lines = [_("Review statistics ({store}), FSRS aiming at {retention} recall:").format(
                 store=store.path, retention=f"{DESIRED_RETENTION:.0%}"),
             "  " + _("answered {answered} of {bank} questions and {drills} coding drill(s): "
                      "{answers} answers since {first}").format(answered=len(questions), bank=len(bank),
                                                                drills=len(drills), answers=answers,
                                                                first=first.isoformat()),
             "  " + _("retention over the last {days} days: {share} reviews recalled").format(
                 days=RETENTION_DAYS, share=_share(recalled, asked)),
             "  " + _("known (FSRS expects 3+ weeks): {known}, reviewing: {reviewing}, "
                      "learning: {learning}, relearning after a lapse: {relearning}").format(
                 **{state: states[state] for state in ("known", "reviewing", "learning", "relearning")}),
             "  " + _("wrong-answer book: {count} (missed at least once, not yet known)").format(
                 count=sum(item.in_book for item in scheduled)),
             "", _("Due for review:")]
    week = due_by_day(scheduled, now)
    lines += [f"  {padded(label, 16)} {count}" for label, count in week]
    lines += [f"  {padded(_('this week'), 16)} {sum(count for _label, count in week)}", "",
              _chapter_table(questions, bank, now)]
    return "\n".join(lines)


def _state_name(item: Item) -> str:
    if item.known:
        return "known"
    return {State.Learning: "learning", State.Review: "reviewing", State.Relearning: "relearning"}[item.card.state]


def _chapter_table(items: list[Item], bank: dict, now: datetime) -> str:
    """Per chapter: questions answered of the bank's, share right of all answers, retention, due this week, in book."""
    week_end = now + timedelta(days=WEEK_DAYS)
    rows = [f"  {padded(_('chapter'), 8)} {padded(_('answered'), 9, right=True)} {padded(_('right'), 13, right=True)} "
            f"{padded(_('retention'), 13, right=True)} {padded(_('due 7 d'), 8, right=True)} "
            f"{padded(_('book'), 5, right=True)}"]
    for chapter in CHAPTERS:
        mine = [item for item in items if bank[item.id].chapter == chapter.number]
        total = sum(q.chapter == chapter.number for q in bank.values())
        if not mine:
            rows.append(f"  ch{chapter.number:02d}     {0:>4}/{total:<4} {'':>13} {'':>13} {'':>8} {'':>5}")
            continue
        answers = [review for item in mine for review in item.history]
        right = _share(sum(r.correct for r in answers), len(answers))
        kept = _share(*retention(mine, now))
        due = sum(item.due <= week_end for item in mine)
        rows.append(f"  ch{chapter.number:02d}     {len(mine):>4}/{total:<4} {padded(right, 13, right=True)} "
                    f"{padded(kept, 13, right=True)} {due:>8} "
                    f"{sum(item.in_book for item in mine):>5}")
    return _("By chapter:") + "\n" + "\n".join(rows)
