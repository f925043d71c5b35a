"""The graded functions of the coding drills that no chapter's exercise grades: causal SDPA from scratch.

The other drills are graded by the exercises' own tasks (:mod:`sdpa_course.grading.exercises`).
Causal SDPA reuses what they are made of: the attention cases of chapter 6 and the mistake
catalogues of attention, masked attention and the causal mask, each wrong mask applied the way
the drill applies its own.  These tasks belong to the pseudo-assignment ``"drills"``, so a
failure's replay line reads ``sdpa_course.replay("drills", "causal_sdpa", seed=..., size=...)``
(:func:`sdpa_course.replay` finds them through :func:`drill_task`).
"""
from __future__ import annotations

import sdpa_lib
from ..grading.catalogue.attention import ATTENTION_MISTAKES
from ..grading.catalogue.masks import CAUSAL_MASK_MISTAKES, MASKED_ATTENTION_MISTAKES
from ..grading.exercises.ch06_weighted_sum import output_case
from ..grading.mistakes import Mistake
from ..grading.task import Task
from ..i18n.messages import _

DRILLS = "drills"  # the assignment of these tasks, as replay names it

SOFTMAX_FUNCTIONS = ("softmax", "log_softmax", "logsumexp")
ATTENTION_FUNCTIONS = ("scaled_dot_product_attention", "scaled_dot_product_attention_backward", "attention_weights",
                       "tiled_attention", "decode_step", "MultiHeadAttention")
"""Every sdpa_lib function and class whose result holds attention weights or outputs (the backward's value
gradient is weights^T @ grad_output), so none of them can stand in for a drill's own attention."""
FAST_PATH = ("attention_output",)
"""The same from :mod:`sdpa_lib.fast_attention`, which the package does not export: absent from the kernel's copy
(:attr:`~sdpa_course.quiz.drills.Drill.also_absent`), not in a task's ``forbidden`` (those are ``sdpa_lib.<name>``)."""


def causal_sdpa(query, key, value):
    """softmax(Q K^T / sqrt(E) + causal mask) V, the mask aligned top-left: query i sees keys j <= i."""
    return sdpa_lib.scaled_dot_product_attention(query, key, value, is_causal=True)


def _with_mask(mistake: Mistake, mask_of) -> Mistake:
    """``mistake`` of masked attention, ``compute(query, key, value, mask)``, given the mask ``mask_of(L, S)``."""
    def compute(query, key, value):
        return mistake.compute(query, key, value, mask_of(query.shape[-2], key.shape[-2]))
    return Mistake(mistake.name, compute, mistake.hint)


def _wrong_mask(mistake: Mistake) -> Mistake:
    """A mistake of the causal mask ``compute(L, S)``, as the attention it gives."""
    def compute(query, key, value):
        return sdpa_lib.scaled_dot_product_attention(query, key, value,
                                                     mistake.compute(query.shape[-2], key.shape[-2]))
    return Mistake(mistake.name, compute, mistake.hint)


NO_MASK = Mistake("causal mask forgotten", lambda query, key, value: sdpa_lib.scaled_dot_product_attention(
    query, key, value),
    "Query i may see only keys j <= i (itself and the past): before the softmax, set the scores above the diagonal "
    "to -inf, np.where(np.tril(np.ones((L, S), dtype=bool)), scores, -np.inf).")

CAUSAL_SDPA_MISTAKES = (
    NO_MASK,
    *(_wrong_mask(m) for m in CAUSAL_MASK_MISTAKES),
    *(_with_mask(m, sdpa_lib.causal_mask) for m in MASKED_ATTENTION_MISTAKES),
    *(_with_mask(m, sdpa_lib.causal_mask) for m in ATTENTION_MISTAKES),
)

CAUSAL_SDPA_FORBIDDEN = (*ATTENTION_FUNCTIONS, *SOFTMAX_FUNCTIONS, "causal_mask", "sliding_window_mask")

TASKS = (
    Task(DRILLS, "causal_sdpa", causal_sdpa, output_case, CAUSAL_SDPA_MISTAKES, forbidden=CAUSAL_SDPA_FORBIDDEN,
         count=60),
)


def drill_task(name: str) -> Task:
    """The drill task graded as function ``name`` (``"causal_sdpa"``); ``LookupError`` naming the others."""
    found = {t.name: t for t in TASKS}
    if name not in found:
        raise LookupError(_("the drills grade no function {name!r} of their own; they grade {names}").format(
            name=name, names=", ".join(sorted(found))))
    return found[name]


__all__ = ["ATTENTION_FUNCTIONS", "CAUSAL_SDPA_MISTAKES", "DRILLS", "FAST_PATH", "SOFTMAX_FUNCTIONS", "TASKS",
           "causal_sdpa", "drill_task"]
