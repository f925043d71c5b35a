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
    rows = [("now", counts["now"])]
    rows += [(("today (later)" if offset == 0 else (today + timedelta(days=offset)).strftime("%a %Y-%m-%d")),
              counts[today + timedelta(days=offset)]) for offset in range(days)]
    return rows


def _share(right: int, asked: int) -> str:
    return f"{right / asked:.0%} of {asked}" if asked else "none yet"


def stats_report(store: AnswerStore) -> str:
    """The whole report as text: totals, retention, the book, due this week, and by chapter."""
    now, renamed = store.clock(), aliases()
    bank = {q.id: q for q in load_bank()}
    items = store.schedule(renamed)
    questions = [item for item in items.values() if item.id in bank]
    drills = [item for item in items.values() if is_drill(item.id)]
    if not questions and not drills:
        return f"No answers yet in {store.path}: start with sdpa-quiz --chapter 1 (or --mock 10)."
    scheduled = questions + drills
    answers = sum(len(item.history) for item in scheduled)
    first = min(review.time for item in scheduled for review in item.history).astimezone(now.tzinfo).date()
    recalled, asked = retention(scheduled, now)
    states = Counter(_state_name(item) for item in scheduled)
    lines = [f"Review statistics ({store.path}), FSRS aiming at {DESIRED_RETENTION:.0%} recall:",
             f"  answered {len(questions)} of {len(bank)} questions and {len(drills)} coding drill(s): "
             f"{answers} answers since {first.isoformat()}",
             f"  retention over the last {RETENTION_DAYS} days: {_share(recalled, asked)} reviews recalled",
             f"  known (FSRS expects 3+ weeks): {states['known']}, reviewing: {states['reviewing']}, "
             f"learning: {states['learning']}, relearning after a lapse: {states['relearning']}",
             f"  wrong-answer book: {sum(item.in_book for item in scheduled)} (missed at least once, not yet known)",
             "", "Due for review:"]
    week = due_by_day(scheduled, now)
    lines += [f"  {label:<16} {count}" for label, count in week]
    lines += [f"  {'this week':<16} {sum(count for _, count in week)}", "", _chapter_table(questions, bank, now)]
    return "\n".join(lines)


def _state_name(item: Item) -> str:
    if item.known:
        return "known"
    return {State.Learning: "learning", State.Review: "reviewing", State.Relearning: "relearning"}[item.card.state]


def _chapter_table(items: list[Item], bank: dict, now: datetime) -> str:
    """Per chapter: questions answered of the bank's, share right of all answers, retention, due this week, in book."""
    week_end = now + timedelta(days=WEEK_DAYS)
    rows = [f"  {'chapter':<8} {'answered':>9} {'right':>13} {'retention':>13} {'due 7 d':>8} {'book':>5}"]
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
        rows.append(f"  ch{chapter.number:02d}     {len(mine):>4}/{total:<4} {right:>13} {kept:>13} {due:>8} "
                    f"{sum(item.in_book for item in mine):>5}")
    return "By chapter:\n" + "\n".join(rows)
