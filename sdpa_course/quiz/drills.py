"""The coding drills: timed "write it from scratch" tasks of the interview review, each graded by the course's tasks.

A :class:`Drill` is what the learner is asked (a prompt with the signature and the shapes), how
long it should take, the template they start from (the signature, a docstring and
``raise NotImplementedError()``), and the :class:`~sdpa_course.grading.task.Task` of each
function they write: its reference, its random cases and its mistake catalogue.  While a drill
is graded, the ``sdpa_lib`` functions in :attr:`Drill.absent` have no code
(:mod:`~sdpa_course.grading.student_lib`), so the reference cannot be called in its place.
Grading is :func:`sdpa_course.quiz.drill_grading.grade_drill`; the answer store records an
attempt as ``drill-<name>``.

Shape legend (as in ``sdpa_lib``): ``...`` leading axes, ``L`` query length, ``S`` key length,
``E`` query/key features, ``Ev`` value features, ``H`` heads, ``D = H * Dh`` model width, ``B`` batch.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..grading.exercises import task
from ..grading.task import Task
from ..i18n.messages import _, N_
from .drill_tasks import ATTENTION_FUNCTIONS, FAST_PATH, SOFTMAX_FUNCTIONS, drill_task
from .modes import DRILL_PREFIX as ID_PREFIX  # the answer store's ids: drill-<name>


@dataclass(frozen=True)
class Drill:
    """One coding drill: ``functions`` the learner writes from ``template``, each graded by the task of that name."""
    name: str  # "causal-sdpa": the command line's and the notebook's name
    title: str  # English, marked: _(title) is what the learner reads
    prompt: str  # English, marked (_(prompt)): the signature, the shapes, the rules the grading holds it to
    budget_seconds: int
    functions: tuple[str, ...]
    template: str
    tasks: tuple[Task, ...]  # one per function, in the same order
    also_absent: tuple[str, ...] = ()  # sdpa_lib names absent while graded besides the tasks' forbidden ones

    def __post_init__(self):
        if tuple(t.name for t in self.tasks) != self.functions:
            raise ValueError(f"drill {self.name}: the tasks grade {[t.name for t in self.tasks]}, but the learner "
                             f"writes {list(self.functions)}")

    @property
    def id(self) -> str:
        """The answer store's question id: ``drill-causal-sdpa``."""
        return f"{ID_PREFIX}{self.name}"

    @property
    def filename(self) -> str:
        """The file the terminal writes the template to: ``drill_causal_sdpa.py``."""
        return f"drill_{self.name.replace('-', '_')}.py"

    @property
    def absent(self) -> tuple[str, ...]:
        """The plain ``sdpa_lib`` names whose code is removed while the drill is graded, sorted."""
        names = {name for t in self.tasks for name in t.forbidden} | set(self.also_absent)
        return tuple(sorted(name for name in names if "." not in name))

    @property
    def budget(self) -> str:
        """The time budget as the learner reads it: ``8 min``."""
        minutes, seconds = divmod(self.budget_seconds, 60)
        if seconds:
            return _("{minutes} min {seconds} s").format(minutes=minutes, seconds=seconds)
        return _("{minutes} min").format(minutes=minutes)

    def describe(self) -> str:
        """The title, the budget and the prompt in the learner's language, as shown before the clock starts."""
        return f"{_(self.title)} ({self.budget})\n\n{_(self.prompt)}"


def _template(*functions: str) -> str:
    return "import numpy as np\n\n\n" + "\n\n\n".join(f.strip("\n") + "\n    raise NotImplementedError()\n"
                                                 for f in functions)


CAUSAL_SDPA = Drill(
    "causal-sdpa", N_("Causal scaled dot-product attention"), N_("""\
Write causal_sdpa(query, key, value): softmax(Q K^T / sqrt(E) + causal mask) V.
  query (..., L, E), key (..., S, E), value (..., S, Ev) -> output (..., L, Ev); the leading axes broadcast.
  Causal, aligned top-left: query i attends to keys j <= i (itself and the past), also when L != S.
  Float64 and float32 inputs; scores can be near 1000, so the softmax must be stable.
  numpy only: sdpa_lib's attention, softmax and masks are not available while it is graded."""),
    8 * 60, ("causal_sdpa",), _template('''
def causal_sdpa(query, key, value):
    """Causal attention: query i sees keys 0 .. i.

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev).
    """'''), (drill_task("causal_sdpa"),), also_absent=FAST_PATH)

SPLIT_MERGE_HEADS = Drill(
    "split-merge-heads", N_("Multi-head split and merge"), N_("""\
Write split_heads(x, num_heads) and merge_heads(x), its inverse.
  split_heads: x (..., L, D) with D = H * Dh -> (..., H, L, Dh); head h takes features h*Dh .. (h+1)*Dh - 1.
  merge_heads: x (..., H, L, Dh) -> (..., L, H * Dh), so merge_heads(split_heads(x, H)) == x.
  Keep the dtype; any number of leading axes.
  numpy only: sdpa_lib's split_heads, merge_heads and MultiHeadAttention are not available while it is graded."""),
    6 * 60, ("split_heads", "merge_heads"), _template('''
def split_heads(x, num_heads):
    """(..., L, H * Dh) -> (..., H, L, Dh): head h takes the h-th block of Dh features."""''', '''
def merge_heads(x):
    """(..., H, L, Dh) -> (..., L, H * Dh): the inverse of split_heads."""'''),
    (task("ch06", "split_heads"), task("ch06", "merge_heads")))

STABLE_SOFTMAX = Drill(
    "stable-softmax", N_("Numerically stable softmax"), N_("""\
Write softmax(x, axis=-1): exp(x) / sum(exp(x)) along `axis`.
  x (..., N) of any shape, any axis (negative too) -> the same shape, each slice along `axis` summing to 1.
  Stable: entries near 1000 (or -inf, a masked score) must not overflow or give NaN.
  A slice that is all -inf (a query with every key masked) gives zeros, not NaN.
  Keep the dtype (float32 stays float32) and emit no numpy warning.
  numpy only: sdpa_lib's softmax, log_softmax, logsumexp and attention are not available while it is graded."""),
    6 * 60, ("softmax",), _template('''
def softmax(x, axis=-1):
    """softmax along `axis`: each slice sums to 1 (an all -inf slice is all zeros)."""'''),
    (task("ch05", "softmax"),), also_absent=(*ATTENTION_FUNCTIONS, *FAST_PATH))

DECODE_STEP = Drill(
    "decode-step", N_("One KV-cache decode step (with RoPE)"), N_("""\
Write decode_step(query, key_cache, value_cache, new_key, new_value) -> (output, key_cache, value_cache).
  The new token: query (..., 1, E), new_key (..., 1, E), new_value (..., 1, Ev), not rotated yet.
  The cache: key_cache (..., S, E) (keys rotated already), value_cache (..., S, Ev); S may be 0.
  The new token is position S: rotate its query and key there with apply_rope(x, [S]), append the key and
  value to the caches, attend from the query over all S + 1 keys (scaled by 1/sqrt(E)), and return the output
  (..., 1, Ev) with the grown caches (..., S + 1, E) and (..., S + 1, Ev).
  apply_rope(x, positions) is given (import it as the template does); the rest is numpy."""),
    10 * 60, ("decode_step",), '''\
import numpy as np
from sdpa_lib import apply_rope  # given: rotates x (..., T, E) at positions (T,)


def decode_step(query, key_cache, value_cache, new_key, new_value):
    """Append the new token (position S = key_cache.shape[-2]) to the KV cache and attend from its query.

    Returns output (..., 1, Ev), key_cache (..., S + 1, E), value_cache (..., S + 1, Ev).
    """
    raise NotImplementedError()
''', (task("ch13", "decode_step"),), also_absent=(*ATTENTION_FUNCTIONS, *FAST_PATH, *SOFTMAX_FUNCTIONS))

ONLINE_SOFTMAX = Drill(
    "online-softmax", N_("Attention with an online softmax over key blocks"), N_("""\
Write online_softmax_attention(query, key, value, block_size): softmax(Q K^T / sqrt(E)) V, one block of keys
at a time, as FlashAttention does.
  query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev); block_size need not divide S.
  Keep per query a running maximum m, a running sum l of exp(s - m) and a running output acc; when a block
  raises the maximum, rescale l and acc by exp(m_old - m_new); divide once at the end.
  Scores can be near 1000. (The point is never to hold the (L, S) scores; this drill checks the values.)
  numpy only: sdpa_lib's attention and softmax are not available while it is graded."""),
    12 * 60, ("online_softmax_attention",), _template('''
def online_softmax_attention(query, key, value, block_size):
    """softmax(Q K^T / sqrt(E)) V over blocks of block_size keys, with a running max and sum.

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev).
    """'''), (task("ch07", "online_softmax_attention"),),
    also_absent=(*ATTENTION_FUNCTIONS, *FAST_PATH, *SOFTMAX_FUNCTIONS))

PADDING_MASK = Drill(
    "padding-mask", N_("Key-padding mask"), N_("""\
Write padding_mask(lengths, S): the bool mask of a batch of padded sequences.
  lengths (B,) integers in 0 .. S -> mask (B, 1, S), True where key j is a real token (j < lengths[b]).
  True = may attend (as PyTorch SDPA and JAX); the axis of size 1 broadcasts over the L queries.
  numpy only: sdpa_lib's padding_mask is not available while it is graded."""),
    5 * 60, ("padding_mask",), _template('''
def padding_mask(lengths, S):
    """lengths (B,) -> bool (B, 1, S): True for the first lengths[b] keys of sequence b."""'''),
    (task("ch08", "padding_mask"),))

DRILLS = (CAUSAL_SDPA, SPLIT_MERGE_HEADS, STABLE_SOFTMAX, DECODE_STEP, ONLINE_SOFTMAX, PADDING_MASK)


def all_drills() -> list[Drill]:
    """Every drill, in the order they are listed."""
    return list(DRILLS)


def drill(name: str) -> Drill:
    """The drill called ``name`` (``"causal-sdpa"``; ``drill-causal-sdpa`` and ``causal_sdpa`` work too).

    Raises ``LookupError`` listing the drills' names.
    """
    key = str(name).strip().lower().removeprefix(ID_PREFIX).replace("_", "-")
    for candidate in DRILLS:
        if candidate.name == key:
            return candidate
    raise LookupError(_("no coding drill {name}; the drills are {drills}").format(
        name=repr(name), drills=", ".join(d.name for d in DRILLS)))


__all__ = ["DRILLS", "Drill", "all_drills", "drill"]
