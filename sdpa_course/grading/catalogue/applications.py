"""Named mistakes for chapters 9-11: retrieval, next-token step, alignment; the seed's demo; misconceptions.

Each ``compute`` takes the graded function's arguments and returns what that mistake outputs.
Chapter 11's counterexamples have no single right answer: their tasks are graded by a verdict
(:func:`disagreeing_keys_problem`, :func:`misleading_values_problem`) that checks the property
they must have and says what is missing.
Shapes: ``queries (M, E)``, ``documents (N, E)``; ``x (L, D)``; weights ``(..., L, S)``.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.masks import causal_mask
from sdpa_lib.scores import cosine_scores
from sdpa_lib.softmax import softmax
from ...i18n.messages import _
from ..mistakes import Mistake
from .attention import masked, scores
from .scores import DISAGREEING_PAIR_HINTS

# ------------------------------------------------------------------ chapter 9: applications


def _ranked(score_matrix, k, *, axis=-1, descending=True):
    """First ``k`` indices of a stable sort of each row (``axis=0``: of each column, the mistake)."""
    return np.argsort(-score_matrix if descending else score_matrix, axis=axis, kind="stable")[..., :k]


RETRIEVAL_MISTAKES = (
    Mistake("ascending order (the k worst documents)",
            lambda queries, documents, k: _ranked(scores(queries, documents), k, descending=False),
            "np.argsort sorts from small to large: sort -scores (not scores[::-1], which also reverses ties)."),
    Mistake("ties broken by the larger index (reversed an ascending sort)",
            lambda queries, documents, k: np.argsort(scores(queries, documents), axis=-1, kind="stable")[..., ::-1][..., :k],
            "reversing an ascending sort puts equal scores in reverse order; sort -scores with kind='stable' "
            "so equal scores keep the smaller index first."),
    Mistake("cosine instead of the dot product",
            lambda queries, documents, k: _ranked(cosine_scores(queries, documents), k),
            "cosine divides out the document norms; retrieval by attention scores uses q . d / sqrt(E), where a "
            "longer document vector scores higher."),
    Mistake("argsort over the wrong axis (the queries)",
            lambda queries, documents, k: _ranked(scores(queries, documents), k, axis=0),
            "the scores are (M, N), one row per query: rank along the last axis, the documents."),
)


def _next_token_logits(x, w_q, w_k, w_v, attn_mask):
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (L, D) @ (D, E|E|V) -> (L, E), (L, E), (L, V)
    return softmax(masked(scores(q, k), attn_mask)) @ v  # (L, L) @ (L, V) -> (L, V)


def _probs(logits, temperature, axis=-1):
    return softmax(logits / temperature, axis=axis)


NEXT_TOKEN_MISTAKES = (
    Mistake("no causal mask (later words leak into earlier rows)",
            lambda x, w_q, w_k, w_v, temperature=1.0: _probs(_next_token_logits(x, w_q, w_k, w_v, None), temperature),
            "row t predicts word t + 1, so it may only attend to words 0..t: pass a causal mask "
            "(sdpa_lib.causal_mask(L), or is_causal=True)."),
    Mistake("causal mask transposed (attends to the future)",
            lambda x, w_q, w_k, w_v, temperature=1.0: _probs(
                _next_token_logits(x, w_q, w_k, w_v, causal_mask(len(x)).T), temperature),
            "True = may attend, and query t may see keys 0..t: the lower triangle, np.tril, not np.triu."),
    Mistake("softmax over the positions instead of the vocabulary",
            lambda x, w_q, w_k, w_v, temperature=1.0: _probs(
                _next_token_logits(x, w_q, w_k, w_v, causal_mask(len(x))), temperature, axis=0),
            "each row is a distribution over the V words of the vocabulary: softmax along the last axis."),
    Mistake("temperature multiplied instead of divided",
            lambda x, w_q, w_k, w_v, temperature=1.0: _probs(
                _next_token_logits(x, w_q, w_k, w_v, causal_mask(len(x))), 1 / temperature),
            "divide the logits by the temperature: T > 1 flattens the distribution, T < 1 sharpens it."),
)


def _aligned(weights, threshold, axis):
    weights = np.asarray(weights)
    return np.where(weights.max(axis=axis) >= threshold, np.argmax(weights, axis=axis), -1)


ALIGNMENT_MISTAKES = (
    Mistake("argmax over the queries axis (-2)", lambda weights, threshold=0.0: _aligned(weights, threshold, -2),
            "weights[..., i, j] is how much target word i looks at source word j: for each target word (row), "
            "take the argmax over the source words, axis=-1."),
    Mistake("threshold ignored", lambda weights, threshold=0.0: np.argmax(weights, axis=-1),
            "a target word whose largest weight is below the threshold has no counterpart: give it -1."),
)

# ------------------------------------------------------------------ chapter 10: the seed's demo


def _seed_attention(X, W_q, W_k, W_v, *, scale=None, axis=-1):
    q, k, v = X @ W_q, X @ W_k, X @ W_v  # (L, D) @ (D, E|E|Ev)
    weights = softmax(scores(q, k, scale), axis=axis)  # (L, S)
    return weights @ v, weights


SEED_DEMO_MISTAKES = (
    Mistake("forgot the scale", lambda X, W_q, W_k, W_v: _seed_attention(X, W_q, W_k, W_v, scale=1.0),
            "divide the scores by sqrt(d_k) before the softmax."),
    Mistake("scaled by sqrt(d_model) instead of sqrt(d_k)",
            lambda X, W_q, W_k, W_v: _seed_attention(X, W_q, W_k, W_v, scale=1 / np.sqrt(np.shape(X)[-1])),
            "in the seed d_model = d_k = 4, so the two are easy to confuse: d_k is the length of a query/key "
            "vector, W_k.shape[1], not X.shape[1]."),
    Mistake("softmax over the queries (axis 0)", lambda X, W_q, W_k, W_v: _seed_attention(X, W_q, W_k, W_v, axis=0),
            "each query's weights over the keys form one row: softmax along the last axis."),
)


def _naive_softmax(x):
    exps = np.exp(x)
    return exps / exps.sum(axis=-1, keepdims=True)


def _batched(q, k, v, mask, *, key_t=None, normalise=softmax, flip=False):
    raw = q @ key_t / np.sqrt(k.shape[-1]) if key_t is not None else scores(q, k)  # (..., L, S)
    attn_mask = ~np.asarray(mask) if flip and mask is not None else mask
    weights = normalise(masked(raw, attn_mask))
    return weights @ v, weights  # (..., L, S) @ (..., S, Ev) -> (..., L, Ev)


def _unguarded_softmax(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


BATCHED_MISTAKES = (
    Mistake("k.T reverses every axis", lambda q, k, v, mask=None: _batched(q, k, v, mask, key_t=np.asarray(k).T),
            "for a batch (B, S, E), k.T is (E, S, B), not (B, E, S); it only runs when the sizes coincide, and then "
            "gives wrong numbers. Swap the last two axes only: np.swapaxes(k, -1, -2)."),
    Mistake("a fully masked row gives NaN", lambda q, k, v, mask=None: _batched(q, k, v, mask, normalise=_unguarded_softmax),
            "a query that may see no key has max = -inf and -inf - (-inf) = NaN: shift such rows by 0 and divide "
            "only where the row sum is nonzero, so the row's weights and output are 0."),
    Mistake("softmax without max subtraction", lambda q, k, v, mask=None: _batched(q, k, v, mask, normalise=_naive_softmax),
            "exp of a large score overflows to inf and inf / inf is NaN: subtract each row's maximum first."),
    Mistake("mask ignored", lambda q, k, v, mask=None: _batched(q, k, v, None),
            "set the scores to -inf where the mask is False (np.where(mask, scores, -np.inf)) before the softmax."),
    Mistake("mask sign flipped", lambda q, k, v, mask=None: _batched(q, k, v, mask, flip=True),
            "True = may attend: keep the scores where the mask is True and put -inf where it is False."),
)


def _padded(X, lengths, W_q, W_k, W_v, *, causal=True, padding="keys"):
    L = np.shape(X)[-2]
    real = np.arange(L) < np.asarray(lengths)[:, None]  # (B, L): True for real tokens
    mask = causal_mask(L) if causal else np.ones((L, L), dtype=bool)  # (L, L)
    if padding == "keys":
        mask = mask & real[:, None, :]  # (L, L) & (B, 1, S) -> (B, L, S)
    elif padding == "queries":
        mask = mask & real[:, :, None]  # (L, L) & (B, L, 1) -> (B, L, S)
    return _batched(X @ W_q, X @ W_k, X @ W_v, mask)[0]


PADDED_MISTAKES = (
    Mistake("padding mask on the queries (rows) instead of the keys",
            lambda X, lengths, W_q, W_k, W_v: _padded(X, lengths, W_q, W_k, W_v, padding="queries"),
            "padding hides keys: for sentence b, key j may be attended only if j < lengths[b], so the padding "
            "mask has shape (B, 1, S) and masks columns."),
    Mistake("padding ignored", lambda X, lengths, W_q, W_k, W_v: _padded(X, lengths, W_q, W_k, W_v, padding=None),
            "the padded positions are not words: combine the causal mask with key j < lengths[b]."),
    Mistake("causal mask ignored", lambda X, lengths, W_q, W_k, W_v: _padded(X, lengths, W_q, W_k, W_v, causal=False),
            "query i may only see keys 0..i: combine the padding mask with np.tril(np.ones((L, L), bool))."),
)

# ------------------------------------------------------------------ chapter 11: misconceptions


def _share_outside(q, k, scale):
    s = np.sum(np.multiply(q, k), axis=-1) * scale(np.shape(q)[-1])  # (n,)
    return np.mean((s < 0) | (s > 1))


SHARE_OUTSIDE_MISTAKES = (
    Mistake("forgot the scale", lambda q, k: _share_outside(q, k, lambda e: 1.0),
            "divide each q . k by sqrt(E): the claim is about the scaled scores."),
    Mistake("divided by E instead of sqrt(E)", lambda q, k: _share_outside(q, k, lambda e: 1 / e),
            "the scale is 1/sqrt(E)."),
    Mistake("share inside [0, 1] instead of outside",
            lambda q, k: 1 - _share_outside(q, k, lambda e: 1 / np.sqrt(e)),
            "count the scores below 0 or above 1."),
)


def _mean_max(query, key, scale, axis=-1):
    return np.mean(np.max(softmax(scores(query, key, scale), axis=axis), axis=axis))


MEAN_MAX_MISTAKES = (
    Mistake("scaled flag inverted",
            lambda query, key, scaled=True: _mean_max(query, key, None if not scaled else 1.0),
            "scaled=True divides the scores by sqrt(E); scaled=False leaves them raw."),
    Mistake("scaled by E instead of sqrt(E)",
            lambda query, key, scaled=True: _mean_max(query, key, 1 / np.shape(query)[-1] if scaled else 1.0),
            "the scale is 1/sqrt(E)."),
    Mistake("softmax and max over the queries axis",
            lambda query, key, scaled=True: _mean_max(query, key, None if scaled else 1.0, axis=-2),
            "each query's weights are one row of (..., L, S): softmax and max along the last axis."),
)


def removal_effects(weights, values):
    r"""How far the output moves when each token is removed and the rest renormalised: ``(S,)``.

    With :math:`o = \sum_i w_i v_i`, removing token j gives :math:`o_{-j} = (o - w_j v_j)/(1 - w_j)`,
    so :math:`o - o_{-j} = \frac{w_j}{1 - w_j}(v_j - o)`: weight times distance from the output.
    """
    weights, values = np.asarray(weights, dtype=float), np.asarray(values, dtype=float)
    output = weights @ values  # (S,) @ (S, Ev) -> (Ev,)
    change = (weights / (1 - weights))[:, None] * (values - output)  # (S, 1) * (S, Ev) -> (S, Ev)
    return np.linalg.norm(change, axis=-1)


# Counterexamples (chapters 3 and 11) are graded by their properties: a verdict returns what is wrong, or None
# (see sdpa_course.grading.exercises.ch03_dot_product and ch11_misconceptions).

def _vectors(answer, count: int, shape: tuple, names: str):
    """``answer`` as ``count`` finite float arrays of ``shape``, or a string saying why not."""
    if not isinstance(answer, (tuple, list)) or len(answer) != count:
        return _("return {count} arrays ({names}); got {type_name}").format(count=count, names=names,
                                                                         type_name=type(answer).__name__)
    arrays = [np.asarray(a, dtype=float) for a in answer]
    if any(a.shape != shape for a in arrays) or not all(np.all(np.isfinite(a)) for a in arrays):
        return _("{names} must be finite arrays of shape {shape}; got shapes {shapes}").format(
            names=names, shape=shape, shapes=[a.shape for a in arrays])
    return arrays


def disagreeing_keys_problem(q, answer):
    """Why ``(k1, k2)`` does not show dot ranking k1 first and cosine ranking k2 first (None if it does).

    Examples
    --------
    >>> q = np.array([1.0, 0.0])
    >>> disagreeing_keys_problem(q, (np.array([2.0, 5.0]), q)) is None
    True
    >>> disagreeing_keys_problem(q, (2 * q, q))[-27:]
    'the other short but along q'
    """
    keys = _vectors(answer, 2, np.shape(q), "k1, k2")
    if isinstance(keys, str):
        return keys
    q = np.asarray(q, dtype=float)
    norms = [np.linalg.norm(k) for k in keys]
    if min(norms) == 0:
        return _("a zero key has no direction, so its cosine is undefined")
    dots = [float(q @ k) for k in keys]
    cosines = [d / (np.linalg.norm(q) * n) for d, n in zip(dots, norms)]
    numbers = _("q . k1 = {dot1:.4g}, q . k2 = {dot2:.4g}; cos(q, k1) = {cosine1:.4g}, cos(q, k2) = {cosine2:.4g}. "
                ).format(dot1=dots[0], dot2=dots[1], cosine1=cosines[0], cosine2=cosines[1])
    margin = 1e-9 * np.linalg.norm(q) * max(norms)
    if abs(cosines[0] - cosines[1]) <= 1e-9:
        return numbers + _(DISAGREEING_PAIR_HINTS["same direction"])
    if dots[0] < dots[1] - margin and cosines[0] > cosines[1]:
        return numbers + _(DISAGREEING_PAIR_HINTS["reversed"])
    if not (dots[0] > dots[1] + margin and cosines[1] > cosines[0] + 1e-9):
        return numbers + _(DISAGREEING_PAIR_HINTS["no disagreement"])
    return None


def misleading_values_problem(weights, answer):
    """Why ``values`` does not make a lower-weighted token matter more than the top one (None if it does).

    Examples
    --------
    >>> weights = np.array([0.5, 0.3, 0.2])
    >>> misleading_values_problem(weights, np.array([[0.6], [1.0], [0.0]])) is None  # v_top = o = 0.6
    True
    >>> misleading_values_problem(weights, np.eye(3))[:45]
    'removing the token with the largest weight (0'
    """
    weights = np.asarray(weights, dtype=float)
    values = np.asarray(answer, dtype=float) if isinstance(answer, (np.ndarray, list, tuple)) else None
    if values is None or values.ndim != 2 or values.shape[0] != weights.shape[0] or not np.all(np.isfinite(values)):
        return _("return finite values of shape (S, Ev) with S = {rows} rows, one per token; got {type_name} "
                 "{shape}").format(rows=weights.shape[0], type_name=type(answer).__name__, shape=np.shape(answer))
    effects = removal_effects(weights, values)  # (S,)
    top = int(np.argmax(weights))
    others = np.delete(effects, top)
    if others.max() > effects[top] + 1e-9 * (1 + np.abs(values).max()):
        return None
    return _("removing the token with the largest weight ({top_weight:.3g}) moves the output by {top_change:.4g}, "
             "at least as much as removing any other token (at most {other_change:.4g}), so here the weights do rank "
             "importance. Removing token j moves the output by w_j / (1 - w_j) * |v_j - o|: a big weight on a value "
             "close to the output o changes little. Give the top token the value the other tokens average to."
             ).format(top_weight=weights[top], top_change=effects[top], other_change=others.max())
