"""The toy worlds of chapter 9: alignment, next-token step, retrieval."""
from __future__ import annotations

import numpy as np
import pytest

from sdpa_lib import cosine_scores, entropy, scaled_dot_product_attention, softmax
from sdpa_course.lessons.applications import (DOCUMENTS, VOCAB, ToyNextTokenModel, alignment_accuracy,
                                   alignment_from_weights, document_embeddings, embed_text,
                                   toy_alignment_example, tokenize, top_k)


# ------------------------------------------------------------------ alignment
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cross_attention_recovers_the_gold_alignment(seed):
    """With the projections, does every target word with a counterpart attend most to it?"""
    example = toy_alignment_example(seed=seed)
    output, weights = example.cross_attention()
    assert output.shape == (len(example.target), example.w_v.shape[1])
    assert alignment_accuracy(alignment_from_weights(weights), example.gold) == 1.0
    np.testing.assert_allclose(weights.sum(-1), 1.0)


def test_raw_embeddings_do_not_align():
    """Without W_Q and W_K (each language in its own rotation) is the alignment lost?"""
    example = toy_alignment_example()
    _, weights = example.cross_attention(use_projections=False)
    assert alignment_accuracy(alignment_from_weights(weights), example.gold) < 1.0


def test_unaligned_word_spreads_its_weight():
    """Does the article "a", which has no source word, get a nearly uniform row?"""
    example = toy_alignment_example()
    _, weights = example.cross_attention()
    row = example.target.index("a")
    assert entropy(weights[row]) > 0.95 * np.log(len(example.source))
    assert entropy(weights[example.target.index("Apple")]) < 0.5 * np.log(len(example.source))


def test_released_draws_on_the_tense_particle():
    """Is 了 (the past-tense particle) the second source for "released"?"""
    example = toy_alignment_example()
    _, weights = example.cross_attention()
    ranking = np.argsort(-weights[example.target.index("released")])
    assert [example.source[i] for i in ranking[:2]] == ["发布", "了"]


def test_alignment_accuracy_refuses_empty_gold():
    with pytest.raises(ValueError, match="no aligned word"):
        alignment_accuracy([0, 1], (None, None))


# ------------------------------------------------------------------ next token
@pytest.mark.parametrize("sentence, expected", [
    ("<s> outside the window it began to", "rain"),
    ("<s> on the stage she began to", "sing"),
])
def test_next_word_follows_the_scene(sentence, expected):
    """Does the greedy next word depend on the scene word that "to" attends to?"""
    assert ToyNextTokenModel().predict_next(sentence.split()) == expected


def test_causal_logits_ignore_the_future():
    """Are the logits at position t unchanged when later tokens change?"""
    model = ToyNextTokenModel()
    a = "<s> outside the window it began to".split()
    b = a[:4] + ["she", "to", "."]
    logits_a, _ = model.forward(a)
    logits_b, _ = model.forward(b)
    np.testing.assert_allclose(logits_a[:4], logits_b[:4])
    assert not np.allclose(logits_a[4:], logits_b[4:])


def test_one_masked_pass_equals_prefix_by_prefix():
    """Does one causal pass over the sentence give what L separate prefix runs give (training = generation)?"""
    model = ToyNextTokenModel()
    tokens = "<s> on the stage she began to".split()
    logits, _ = model.forward(tokens)
    stepwise = np.stack([model.forward(tokens[:t + 1])[0][-1] for t in range(len(tokens))])
    np.testing.assert_allclose(logits, stepwise)


def test_next_token_probs_is_a_distribution_and_temperature_sharpens():
    model = ToyNextTokenModel()
    tokens = "<s> outside the window it began to".split()
    warm, cold = model.next_token_probs(tokens), model.next_token_probs(tokens, temperature=0.25)
    assert warm.shape == (len(VOCAB),)
    np.testing.assert_allclose([warm.sum(), cold.sum()], 1.0)
    assert cold.max() > warm.max() and np.argmax(cold) == np.argmax(warm)


@pytest.mark.parametrize("tokens, message", [(["coffee"], "not in the vocabulary"), ([], "at least one")])
def test_encode_rejects_bad_tokens(tokens, message):
    with pytest.raises(ValueError, match=message):
        ToyNextTokenModel().encode(tokens)


def test_model_matches_the_formula():
    """Is forward() softmax((XWq)(XWk)^T / sqrt(E) + M) X Wv?"""
    model = ToyNextTokenModel()
    tokens = "<s> outside the window".split()
    x = model.encode(tokens)
    expected = scaled_dot_product_attention(x @ model.w_q, x @ model.w_k, x @ model.w_v, is_causal=True)
    np.testing.assert_allclose(model.forward(tokens)[0], expected)


# ------------------------------------------------------------------ retrieval
def test_synonyms_embed_alike_and_unknown_words_are_deterministic():
    np.testing.assert_allclose(embed_text("Bitter coffee!"), embed_text("harsh espresso"))
    np.testing.assert_array_equal(embed_text("zebra", 16), embed_text("zebra", 16))
    assert embed_text("zebra", 16).shape == (16,)
    assert tokenize("Pour-over, coffee.") == ["pour-over", "coffee"]


@pytest.mark.parametrize("constant", [1e-3, 0.125, 1.0, np.sqrt(64), 1e3])
def test_dividing_scores_by_a_constant_keeps_the_ranking(constant):
    """Can dividing every score by the same positive constant change a top-k list? (It cannot.)"""
    docs = document_embeddings()
    for query in ("how to make coffee less bitter", "server crashed", "tea temperature"):
        scores = docs @ embed_text(query)  # (N, dim) @ (dim,) -> (N,)
        np.testing.assert_array_equal(top_k(scores / constant, 5), top_k(scores, 5))


def test_softmax_of_scaled_scores_changes_the_weights_not_the_order():
    docs = document_embeddings()
    scores = docs @ embed_text("how to make coffee less bitter")
    raw, scaled = softmax(scores), softmax(scores / np.sqrt(docs.shape[1]))
    np.testing.assert_array_equal(np.argsort(-raw, kind="stable"), np.argsort(-scaled, kind="stable"))
    assert entropy(scaled) > entropy(raw)


def test_long_repetitive_document_wins_by_dot_but_not_by_cosine():
    """Does the norm, not the dimension, distort the dot-product ranking?"""
    docs = document_embeddings()
    query = embed_text("how to make coffee less bitter")
    spam = len(DOCUMENTS) - 1
    assert top_k(docs @ query, 1)[0] == spam
    assert top_k(cosine_scores(query[None], docs)[0], 1)[0] == 0


def test_top_k_orders_ties_by_index_and_checks_k():
    assert top_k([1.0, 3.0, 3.0, 2.0], 4).tolist() == [1, 2, 3, 0]
    with pytest.raises(ValueError, match="k <= N"):
        top_k([1.0, 2.0], 3)
