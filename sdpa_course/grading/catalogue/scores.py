"""Named mistakes for chapter 3: raw dot-product scores, cosine scores, the norms x cosine split.

``query (..., L, E)``, ``key (..., S, E)``; scores ``(..., L, S)``.
"""
from __future__ import annotations

import numpy as np

from ..mistakes import Mistake
from ...i18n.messages import N_


def _t(a):
    return np.swapaxes(np.asarray(a), -1, -2)


def _unit(a):
    a = np.asarray(a, dtype=float)
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


DOT_SCORE_MISTAKES = (
    Mistake("keys compared with queries (K Q^T)", lambda query, key: np.asarray(key) @ _t(query),
            "row i of the scores belongs to query i: Q (..., L, E) @ K^T (..., E, S) -> (..., L, S)"),
    Mistake("summed over the pairs instead of the features",
            lambda query, key: np.einsum("...le,...se->...e", query, key),
            "a dot product multiplies matching features and sums over the feature axis E, once per (query, key) pair"),
)

COSINE_MISTAKES = (
    Mistake("no normalisation (that is the dot product)", lambda query, key: np.asarray(query) @ _t(key),
            "cosine divides q . k by |q| |k|, so only the angle counts"),
    Mistake("only the queries normalised", lambda query, key: _unit(query) @ _t(key),
            "divide by the key's norm too: cos = q . k / (|q| |k|)"),
    Mistake("only the keys normalised", lambda query, key: np.asarray(query) @ _t(_unit(key)),
            "divide by the query's norm too: cos = q . k / (|q| |k|)"),
    Mistake("squared norms", lambda query, key: (np.asarray(query) @ _t(key))
            / (np.sum(np.square(query), -1)[..., :, None] * np.sum(np.square(key), -1)[..., None, :]),
            "|q| is the square root of q . q: use np.linalg.norm(q, axis=-1)"),
)

# norms_and_cosine(q, k) -> (|q| |k|, cos): q, k (..., E), both outputs (...).
SPLIT_MISTAKES = (
    Mistake("squared norms", lambda q, k: (np.sum(np.square(q), -1) * np.sum(np.square(k), -1),
                                           np.sum(np.multiply(q, k), -1)
                                           / (np.sum(np.square(q), -1) * np.sum(np.square(k), -1))),
            "|q| is the square root of q . q: use np.linalg.norm(q, axis=-1)"),
    Mistake("norms summed instead of multiplied", lambda q, k: (np.linalg.norm(q, axis=-1) + np.linalg.norm(k, axis=-1),
                                                              np.sum(np.multiply(q, k), -1)
                                                              / (np.linalg.norm(q, axis=-1) + np.linalg.norm(k, axis=-1))),
            "q . k = |q| |k| cos(theta): the product of the norms"),
)

# Hints for a pair of keys that should disagree (dot ranks k1 first, cosine ranks k2 first).
DISAGREEING_PAIR_HINTS = {
    "same direction": N_("k1 and k2 point the same way, so their cosines are equal: cosine cannot rank them. "
                         "Make one key long but at an angle to q, the other short but along q"),
    "reversed": N_("your pair disagrees the other way round: k1 must win by dot product and k2 by cosine"),
    "no disagreement": N_("dot and cosine rank your keys the same way. The dot product also rewards length: "
                          "a long key at an angle can beat a short key that points exactly along q"),
}
