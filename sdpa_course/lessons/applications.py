"""Toy data for chapter 9: attention at work in translation, generation and retrieval.

Everything here is built by hand or from a seeded generator: no downloads, no network,
the same numbers on every machine.  Three small worlds, one per application:

* :func:`toy_alignment_example`: a Chinese source sentence, its English translation and
  projections under which decoder-to-encoder cross-attention recovers the word alignment.
* :class:`ToyNextTokenModel`: a one-layer, attention-only next-token predictor over a
  fourteen-word vocabulary, run with a causal mask.
* :data:`DOCUMENTS`, :func:`embed_text`, :func:`top_k`: a document set embedded
  through a tiny synonym lexicon, for retrieval by dot product.

Shape legend as in the rest of the library: ``L`` query (target) length, ``S`` key
(source) length, ``D`` model features, ``E`` query/key features, ``V`` vocabulary size,
``N`` documents.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import numpy as np

from sdpa_lib._checks import as_float_array, check_positive_int
from sdpa_lib.attention import scaled_dot_product_attention

from ..i18n.messages import _

# ------------------------------------------------------------------ translation alignment
#: The meanings both sentences are built from; one axis of the shared space each.
CONCEPTS = ("apple", "release", "past", "new", "phone", "article", "spare_1", "spare_2")

#: 苹果发布了新款手机 ("Apple released a new phone"), one token per word or particle.
SOURCE_TOKENS = ("苹果", "发布", "了", "新款", "手机")
TARGET_TOKENS = ("Apple", "released", "a", "new", "phone")
#: Pinyin of SOURCE_TOKENS, for figure labels (matplotlib's default font has no Chinese glyphs).
SOURCE_PINYIN = ("pingguo", "fabu", "le", "xinkuan", "shouji")

# Meaning of each token as weights on CONCEPTS.  "released" carries the past tense that
# Chinese marks with the particle 了; the article "a" has no Chinese counterpart.
_SOURCE_MEANING = ({"apple": 1.0}, {"release": 1.0}, {"past": 1.0}, {"new": 1.0}, {"phone": 1.0})
_TARGET_MEANING = ({"apple": 1.0}, {"release": 1.0, "past": 0.6}, {"article": 1.0}, {"new": 1.0},
                   {"phone": 1.0})

#: For each target word, the source word it translates (None: no counterpart).
GOLD_ALIGNMENT = (0, 1, None, 3, 4)


@dataclass(frozen=True)
class AlignmentExample:
    """One sentence pair with embeddings and cross-attention projections.

    Attributes
    ----------
    source, target : tuple of str
        ``S`` source tokens (Chinese, the encoder side), ``L`` target tokens (English, the decoder side).
    x_source : ndarray ``(S, D)``;  x_target : ndarray ``(L, D)``
        Word embeddings; each language lives in its own randomly rotated copy of the concept space.
    w_q, w_k, w_v : ndarray ``(D, E)``
        Cross-attention projections: queries from the target, keys and values from the source.
    gold : tuple of int or None
        ``gold[i]`` is the source index that target word ``i`` translates, or None.
    """

    source: tuple
    target: tuple
    x_source: np.ndarray
    x_target: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    gold: tuple

    def cross_attention(self, *, use_projections: bool = True):
        """Decoder queries attend to encoder keys: returns ``output (L, E)`` and ``weights (L, S)``.

        With ``use_projections=False`` the raw embeddings are compared directly (no W_Q, W_K, W_V).
        """
        if use_projections:
            q = self.x_target @ self.w_q  # (L, D) @ (D, E) -> (L, E)
            k = self.x_source @ self.w_k  # (S, D) @ (D, E) -> (S, E)
            v = self.x_source @ self.w_v  # (S, D) @ (D, E) -> (S, E)
        else:
            q, k, v = self.x_target, self.x_source, self.x_source
        return scaled_dot_product_attention(q, k, v, return_weights=True)


def _meaning_matrix(meanings) -> np.ndarray:
    """Rows of concept weights ``(tokens, len(CONCEPTS))``."""
    matrix = np.zeros((len(meanings), len(CONCEPTS)))
    for row, meaning in enumerate(meanings):
        for concept, weight in meaning.items():
            matrix[row, CONCEPTS.index(concept)] = weight
    return matrix


def _random_rotation(size: int, rng: np.random.Generator) -> np.ndarray:
    """A random orthogonal ``(size, size)`` matrix (QR of a Gaussian matrix, signs fixed)."""
    q, r = np.linalg.qr(rng.normal(size=(size, size)))
    return q * np.sign(np.diag(r))


def toy_alignment_example(*, seed: int = 0, gain: float = 10.0, noise: float = 0.05) -> AlignmentExample:
    r"""A sentence pair whose cross-attention weights recover the word alignment.

    Each token's meaning is a vector ``c`` over :data:`CONCEPTS`.  Each language embeds
    it with its own random rotation plus a little noise, :math:`x = c R_{lang} + \varepsilon`,
    so the raw embeddings of a word and of its translation look unrelated.  The
    projections undo the rotations, :math:`W^Q = g R_{en}^\top`, :math:`W^K = W^V = R_{zh}^\top`,
    which is what training would have to discover: a space where ``q . k`` compares
    meanings.  Then :math:`q_i \cdot k_j \approx g\, c_i \cdot c_j`.

    Parameters
    ----------
    seed : int
        Seeds the rotations and the noise.
    gain : float
        Length of the queries; larger gives sharper weights.
    noise : float
        Standard deviation of the embedding noise.

    Returns
    -------
    AlignmentExample
        ``S = L = 5``, ``D = E = 8``.

    Examples
    --------
    >>> example = toy_alignment_example()
    >>> out, w = example.cross_attention()
    >>> out.shape, w.shape, alignment_accuracy(alignment_from_weights(w), example.gold)
    ((5, 8), (5, 5), 1.0)
    """
    rng = np.random.default_rng(seed)
    size = len(CONCEPTS)
    rotation_zh, rotation_en = _random_rotation(size, rng), _random_rotation(size, rng)
    c_source, c_target = _meaning_matrix(_SOURCE_MEANING), _meaning_matrix(_TARGET_MEANING)  # (S, D), (L, D)
    x_source = c_source @ rotation_zh + noise * rng.normal(size=c_source.shape)  # (S, D) @ (D, D) -> (S, D)
    x_target = c_target @ rotation_en + noise * rng.normal(size=c_target.shape)  # (L, D) @ (D, D) -> (L, D)
    return AlignmentExample(SOURCE_TOKENS, TARGET_TOKENS, x_source, x_target,
                            w_q=gain * rotation_en.T, w_k=rotation_zh.T, w_v=rotation_zh.T, gold=GOLD_ALIGNMENT)


def alignment_from_weights(weights) -> np.ndarray:
    """Read a hard alignment off attention weights: the source index with the largest weight per target row.

    Parameters
    ----------
    weights : array_like, shape ``(L, S)``

    Returns
    -------
    ndarray of int, shape ``(L,)``

    Examples
    --------
    >>> alignment_from_weights([[0.1, 0.9], [0.7, 0.3]]).tolist()
    [1, 0]
    """
    weights = as_float_array(weights, "weights", min_ndim=2, legend="(L, S)")
    return np.argmax(weights, axis=-1)


def alignment_accuracy(predicted, gold) -> float:
    """Share of target words with a counterpart (``gold[i]`` not None) whose predicted source index is right.

    Examples
    --------
    >>> alignment_accuracy([0, 1, 4, 3], (0, 2, None, 3))
    0.6666666666666666
    """
    pairs = [(int(p), g) for p, g in zip(predicted, gold) if g is not None]
    if not pairs:
        raise ValueError(_("gold has no aligned word (every entry is None); accuracy is undefined"))
    return sum(p == g for p, g in pairs) / len(pairs)


# ------------------------------------------------------------------ causal next-token step
#: The toy vocabulary; the embedding of a word is its one-hot row, so D = V = 14.
VOCAB = ("<s>", "outside", "the", "window", "it", "began", "to", "rain", "snow",
         "on", "stage", "she", "sing", ".")

# Key features: what a word offers to a query that looks for context.
_KEY_FEATURES = ("weather_scene", "stage_scene", "verb", "function_word")
_KEYS = {"outside": {"weather_scene": 0.6}, "window": {"weather_scene": 1.0}, "stage": {"stage_scene": 1.0},
         "began": {"verb": 1.0}, "<s>": {"function_word": 1.0}, "the": {"function_word": 1.0},
         "it": {"function_word": 1.0}, "to": {"function_word": 1.0}, "on": {"function_word": 1.0},
         "she": {"function_word": 1.0}, ".": {"function_word": 1.0}}
# Queries: "to" asks "which scene am I in?"; the other words ask for the previous function word.
_QUERIES = {"to": {"weather_scene": 1.0, "stage_scene": 1.0, "verb": 0.3}}
_DEFAULT_QUERY = {"function_word": 1.0}
# Values: what each word, once attended to, votes for as the next word (logits over VOCAB).
_VALUES = {"window": {"rain": 3.0, "snow": 2.4}, "outside": {"rain": 2.0, "snow": 2.0},
           "stage": {"sing": 3.5}, "began": {"rain": 1.0, "snow": 1.0, "sing": 1.0, "to": 2.0},
           "the": {"window": 1.0, "stage": 1.0}, "it": {"began": 1.0}, "she": {"began": 1.0},
           "<s>": {"outside": 1.0, "on": 1.0}, "on": {"the": 1.0}, "to": {"rain": 0.5, "sing": 0.5}}


def _table(rows: dict, columns: tuple, default: dict | None = None) -> np.ndarray:
    """A ``(V, len(columns))`` matrix from {word: {column: value}}; unlisted words get ``default``."""
    matrix = np.zeros((len(VOCAB), len(columns)))
    for index, word in enumerate(VOCAB):
        for column, value in rows.get(word, default or {}).items():
            matrix[index, columns.index(column)] = value
    return matrix


class ToyNextTokenModel:
    r"""A one-layer, attention-only next-token predictor with hand-set weights.

    .. math:: \text{logits} = \operatorname{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{E}} + M\right) X W^V

    ``X`` is one-hot ``(L, V)``, ``M`` the causal mask, ``W^V`` ``(V, V)`` maps each
    attended word straight to votes over the vocabulary (no separate unembedding).
    The word "to" looks for the *scene* of the sentence (a window or a stage); the
    scene word's value votes for "rain" or "sing".  The candidates for the next word
    are never attended to: attention mixes the context, the vocabulary comes from W^V.

    Parameters
    ----------
    gain : float
        Length of the queries (sharpness of the attention).

    Examples
    --------
    >>> model = ToyNextTokenModel()
    >>> model.predict_next("<s> outside the window it began to".split())
    'rain'
    >>> model.predict_next("<s> on the stage she began to".split())
    'sing'
    """

    def __init__(self, gain: float = 6.0):
        self.vocab = VOCAB
        self.w_q = gain * _table(_QUERIES, _KEY_FEATURES, _DEFAULT_QUERY)  # (V, E), E = 4
        self.w_k = _table(_KEYS, _KEY_FEATURES)  # (V, E)
        self.w_v = _table(_VALUES, VOCAB)  # (V, V)

    def encode(self, tokens) -> np.ndarray:
        """One-hot rows ``(L, V)`` for a list of words from :data:`VOCAB`."""
        unknown = [t for t in tokens if t not in self.vocab]
        if unknown:
            raise ValueError(_("tokens {tokens} are not in the vocabulary {vocabulary}").format(
                tokens=unknown, vocabulary=list(self.vocab)))
        if not tokens:
            raise ValueError(_("tokens must hold at least one word"))
        return np.eye(len(self.vocab))[[self.vocab.index(t) for t in tokens]]

    def forward(self, tokens, *, causal: bool = True):
        """Logits for the next word at every position ``(L, V)`` and the attention weights ``(L, L)``."""
        x = self.encode(tokens)  # (L, V)
        q, k, v = x @ self.w_q, x @ self.w_k, x @ self.w_v  # (L, V) @ (V, E|E|V) -> (L, E), (L, E), (L, V)
        return scaled_dot_product_attention(q, k, v, is_causal=causal, return_weights=True)

    def next_token_probs(self, tokens, *, temperature: float = 1.0) -> np.ndarray:
        """Distribution ``(V,)`` over the word that follows ``tokens`` (softmax of the last row's logits)."""
        if not temperature > 0:
            raise ValueError(_("temperature must be positive; got {temperature}").format(temperature=repr(temperature)))
        logits = self.forward(tokens)[0]  # (L, V)
        shifted = logits[-1] / temperature - np.max(logits[-1] / temperature)
        return np.exp(shifted) / np.exp(shifted).sum()

    def predict_next(self, tokens) -> str:
        """Greedy choice: the most probable next word."""
        return self.vocab[int(np.argmax(self.next_token_probs(tokens)))]


# ------------------------------------------------------------------ retrieval
#: A small knowledge base; the last entry is long and says "coffee" often but answers nothing.
DOCUMENTS = (
    "Why coffee tastes bitter and what to do about it",
    "Brewing tea at the right temperature",
    "How to troubleshoot a server that is down",
    "Pour-over coffee equipment for beginners",
    "Reducing bitterness: grind size, water temperature and roast",
    "Quarterly sales report for the coffee shop",
    "Restarting a crashed database server safely",
    "Coffee coffee coffee: our coffee menu, coffee beans, coffee mugs and coffee gifts",
)

# Words that mean the same thing share a concept; that is all the "semantics" of this toy.
_LEXICON = {
    "coffee": "coffee", "espresso": "coffee", "roast": "coffee", "grind": "coffee", "beans": "coffee",
    "bitter": "bitter", "bitterness": "bitter", "harsh": "bitter",
    "reduce": "fix", "reducing": "fix", "less": "fix", "fix": "fix", "troubleshoot": "fix",
    "restart": "fix", "restarting": "fix", "do": "fix",
    "server": "server", "database": "server", "down": "outage", "crashed": "outage", "outage": "outage",
    "tea": "tea", "temperature": "temperature", "water": "temperature",
    "brew": "brew", "brewing": "brew", "pour-over": "brew", "equipment": "brew",
    "sales": "business", "report": "business", "menu": "business", "gifts": "business", "mugs": "business",
}
_CONCEPT_NAMES = tuple(sorted(set(_LEXICON.values())))
#: Weight of words outside the lexicon (each gets its own fixed pseudo-random direction).
OTHER_WORD_WEIGHT = 0.3


def _direction(name: str, dim: int) -> np.ndarray:
    """A fixed unit vector for ``name``: seeded by a CRC32 of the name, so the same on every run."""
    vector = np.random.default_rng(zlib.crc32(name.encode("utf-8"))).normal(size=dim)
    return vector / np.linalg.norm(vector)


def tokenize(text: str) -> list[str]:
    """Lower-case words, hyphens kept ("pour-over"), punctuation dropped."""
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower())


def embed_text(text: str, dim: int = 64) -> np.ndarray:
    """Embed ``text`` as a ``(dim,)`` vector: the sum of its words' concept directions.

    A word in the lexicon adds the unit direction of its concept (synonyms add the same
    direction); any other word adds ``OTHER_WORD_WEIGHT`` times a direction of its own.
    Nothing is normalised, so a text that repeats a concept gets a longer vector: as in
    real embeddings, the norm carries information and dot product and cosine can disagree.

    Examples
    --------
    >>> a, b = embed_text("bitter coffee"), embed_text("harsh espresso")
    >>> a.shape, bool(np.allclose(a, b))
    ((64,), True)
    """
    dim = check_positive_int(dim, "dim")
    vector = np.zeros(dim)
    for word in tokenize(text):
        concept = _LEXICON.get(word)
        vector += _direction(concept, dim) if concept else OTHER_WORD_WEIGHT * _direction(f"word:{word}", dim)
    return vector


def document_embeddings(documents=DOCUMENTS, dim: int = 64) -> np.ndarray:
    """Stack :func:`embed_text` of every document: ``(N, dim)``."""
    return np.stack([embed_text(doc, dim) for doc in documents])


def top_k(scores, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first; equal scores keep their original order.

    Parameters
    ----------
    scores : array_like, shape ``(N,)``
    k : int, 1 <= k <= N

    Examples
    --------
    >>> top_k([0.2, 0.9, 0.5, 0.9], 3).tolist()
    [1, 3, 2]
    """
    scores = as_float_array(scores, "scores", min_ndim=1, legend="(N,)")
    k = check_positive_int(k, "k")
    if scores.ndim != 1 or k > scores.shape[0]:
        raise ValueError(_("scores must be 1-D (N,) with k <= N; got scores.shape={shape}, k={k}").format(
            shape=scores.shape, k=k))
    return np.argsort(-scores, kind="stable")[:k]
