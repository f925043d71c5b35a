"""Toy data for chapter 8: the seed's two masking examples, built by hand and small enough to check.

* :func:`apple_in_context`: 苹果 (apple) next to 公司 (company) or next to 红 (red) and 吃 (eat).
  One encoder self-attention step, no mask but padding, turns the *same* input vector of 苹果 into
  different outputs, which is what the seed means by BERT telling 苹果公司 from 红苹果.
* :data:`CAUSAL_TOKENS`: the seed's 我 爱 北京, for the causal mask.

Shape legend as in the library: ``L`` tokens, ``E`` features.
"""
from __future__ import annotations

import numpy as np

from sdpa_lib.attention import scaled_dot_product_attention

from ..i18n.messages import _

#: The axes of the toy meaning space.
SENSES = ("fruit", "company", "product", "eat", "person", "colour")

#: The seed's causal example, one token per word.
CAUSAL_TOKENS = ("我", "爱", "北京")

# Meaning of each word as weights on SENSES.  苹果 is ambiguous: half fruit, half company.
_WORDS = {"苹果": {"fruit": 1.0, "company": 1.0}, "公司": {"company": 1.0}, "发布": {"company": 0.5, "product": 1.0},
          "手机": {"product": 1.0, "company": 0.3}, "我": {"person": 1.0}, "吃": {"eat": 1.0, "fruit": 0.5},
          "红": {"colour": 1.0, "fruit": 0.7}}


def embed_words(tokens) -> np.ndarray:
    """Context-free embeddings ``(L, E)`` of ``tokens`` over :data:`SENSES` (one fixed row per word).

    Raises
    ------
    ValueError
        For a word outside the toy vocabulary, naming the words it knows.
    """
    unknown = [t for t in tokens if t not in _WORDS]
    if unknown:
        raise ValueError(_("unknown word(s) {words}; the toy vocabulary is {vocabulary}").format(
            words=unknown, vocabulary=sorted(_WORDS)))
    rows = np.zeros((len(tokens), len(SENSES)))
    for i, token in enumerate(tokens):
        for sense, weight in _WORDS[token].items():
            rows[i, SENSES.index(sense)] = weight
    return rows


def apple_in_context(tokens, *, gain: float = 2.0) -> dict:
    r"""Self-attention over ``tokens`` and what it does to 苹果: its input, its output, its reading.

    Queries and keys are the embeddings times ``gain`` (:math:`W^Q = W^K = \sqrt{g}\,I` up to the
    square-root scaling), values the embeddings themselves, so each output row is a weighted
    average of the words' meanings.  ``sense`` is the output's company component minus its fruit
    component: positive reads "the company", negative "the fruit".

    Returns
    -------
    dict with ``input`` ``(E,)`` (the same in every sentence), ``output`` ``(E,)``,
    ``weights`` ``(L,)`` (苹果's row) and ``sense`` (float)

    Examples
    --------
    >>> apple_in_context(["苹果", "公司"])["sense"] > 0 > apple_in_context(["吃", "红", "苹果"])["sense"]
    True
    """
    tokens = list(tokens)
    if "苹果" not in tokens:
        raise ValueError(_("the sentence must contain 苹果; got {tokens}").format(tokens=tokens))
    x = embed_words(tokens)  # (L, E)
    out, weights = scaled_dot_product_attention(x * gain, x * gain, x, return_weights=True)  # (L, E), (L, L)
    i = tokens.index("苹果")
    company, fruit = SENSES.index("company"), SENSES.index("fruit")
    return {"input": x[i], "output": out[i], "weights": weights[i], "sense": float(out[i, company] - out[i, fruit])}
