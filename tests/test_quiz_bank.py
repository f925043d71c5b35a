"""The question bank: schema, coverage of the seed, and every numeric answer recomputed by code."""
import re
from dataclasses import replace
from collections import Counter
from functools import lru_cache

import numpy as np
import pytest
import yaml

from sdpa_course.chapters import CHAPTERS
from sdpa_lib import (MultiHeadAttention, attention_flops, attention_memory_bytes, attention_weights, causal_mask,
                      dot_product_scores, entropy, init_projection, padding_mask, scaled_scores, softmax, split_heads)
from sdpa_course.lessons.cost import kv_cache_bytes
from sdpa_course.quiz import BankError, grade, load_bank
from sdpa_course.quiz.schema import Option, Question
from sdpa_course.quiz.bank import BANK_DIR, load_questions

BANK = load_bank()
BY_ID = {q.id: q for q in BANK}


@lru_cache(maxsize=None)
def simulated_scores(d_k, samples=40_000, seed=0):
    """q . k for ``samples`` pairs of standard-normal vectors of length d_k."""
    q, k = np.random.default_rng(seed).standard_normal((2, samples, d_k), dtype=np.float32)
    return np.einsum("nd,nd->n", q, k)  # (N, d_k) . (N, d_k) -> (N,)


def seed_demo_weights():
    """The seed's Python demo (chapter 10), with sdpa_lib doing the attention."""
    x = np.array([[0.9, 0.1, 0.2, 0.3], [0.2, 0.8, 0.4, 0.1], [0.1, 0.3, 0.6, 0.9]])
    np.random.seed(0)
    w_q, w_k = np.random.randn(4, 4), np.random.randn(4, 4)
    return attention_weights(x @ w_q, x @ w_k)  # (3, 4) @ (4, 4) -> (3, 4) twice -> weights (3, 3)


def score_matrix_elements(length):
    return attention_memory_bytes(length, length, 64, 64, dtype=np.float32)["intermediate"] / 4


RNG = np.random.default_rng(0)
RECOMPUTE = {
    "ch01-weight-count": lambda: attention_weights(RNG.normal(size=(5, 8)), RNG.normal(size=(7, 8))).size,
    "ch02-qkv-parameters": lambda: sum(init_projection(512, 64, RNG).size for _ in "qkv"),
    "ch03-dot-by-hand": lambda: dot_product_scores(np.array([[1.0, 2, 3]]), np.array([[4.0, -1, 2]]))[0, 0],
    "ch03-dot-from-angle": lambda: np.dot([2.0, 0.0], 3 * np.array([np.cos(np.pi / 3), np.sin(np.pi / 3)])),
    "ch04-variance-dk64": lambda: simulated_scores(64).var(),
    "ch04-sqrt-128": lambda: np.sqrt(128),
    "ch04-std-dk256": lambda: simulated_scores(256, samples=30_000).std(),
    "ch04-saturation": lambda: softmax(np.array([0.0, 8.0])).max(),
    "ch04-divide-by-dk": lambda: (simulated_scores(64) / 64).var(),
    "ch01-demo-parameters": lambda: sum(init_projection(4, width, RNG).size for width in (2, 2, 4)),
    "ch01-demo-row-weight": lambda: softmax(np.array([1.0, 3, -1]) / np.sqrt(2)).max(),
    "ch02-score-matrix-rank": lambda: np.linalg.matrix_rank(init_projection(512, 64, RNG) @ init_projection(512, 64, RNG).T),
    "ch02-demo-parameters": lambda: sum(init_projection(12, width, RNG).size for width in (4, 4, 6)),
    "ch02-pytorch-mha-parameters": lambda: MultiHeadAttention(512, 8, RNG).parameter_count() + 4 * 512,
    "ch03-cosine-value": lambda: (lambda q, k: q @ k / (np.linalg.norm(q) * np.linalg.norm(k)))(
        np.array([1.0, 1, 1, 0]), np.array([3.0, 0, 0, 3])),
    "ch03-cosine-weight-ratio": lambda: (lambda w: w.max() / w.min())(softmax(np.array([1.0, -1.0]))),
    "ch03-score-multiplications": lambda: attention_flops(100, 200, 64, 64) / 4,  # 4 L S E with E = Ev; Q K^T is L S E multiplications
    "ch04-sigma-two": lambda: (4 * simulated_scores(64) / np.sqrt(64)).var(),  # components of std 2: q . k grows by 2 * 2
    "ch04-qk-norm-bound": lambda: (lambda v: scaled_scores(v, v)[0, 0])(
        (lambda x: x / np.sqrt((x ** 2).mean()))(RNG.normal(size=(1, 64)))),  # unit-RMS q = k: the Cauchy-Schwarz maximum
    "ch05-softmax-123": lambda: softmax(np.array([1.0, 2, 3])).max(),
    "ch05-large-equal-scores": lambda: softmax(np.array([1000.0, 1000, 1000]))[0],
    "ch05-uniform-entropy": lambda: entropy(np.full(8, 1 / 8)),
    "ch05-fp16-exp-overflow": lambda: np.log(np.finfo(np.float16).max),
    "ch05-bf16-running-sum": lambda: __import__("sdpa_course.lessons.precision", fromlist=["running_sum"])
                                     .running_sum(np.ones(4096), "bfloat16"),
    "ch05-logsumexp-value": lambda: __import__("sdpa_lib").logsumexp(np.full(4, 10.0)),
    "ch06-weighted-output": lambda: softmax(np.log([1.0, 3.0])) @ np.array([2.0, 6.0]),
    "ch06-head-dim": lambda: split_heads(np.zeros((1, 768)), 12).shape[-1],
    "ch06-mha-parameters": lambda: MultiHeadAttention(512, 8, RNG).parameter_count(),
    "ch06-gqa-parameters": lambda: MultiHeadAttention(512, 8, RNG, num_kv_heads=2).parameter_count(),
    "ch06-kv-cache-gqa-8k": lambda: kv_cache_bytes(layers=32, kv_heads=8, head_dim=128, tokens=8192) / 2**30,
    "ch06-cache-vs-weights": lambda: __import__("sdpa_course.lessons.cost", fromlist=["cost"])
                                     .tokens_where_cache_equals_weights(7.0e9, layers=32, kv_heads=32, head_dim=128) / 1000,
    "ch07-flops-4096": lambda: attention_flops(4096, 4096, 128, 128) / 1e9,
    "ch07-score-memory-32k": lambda: attention_memory_bytes(32768, 32768, 64, 64)["intermediate"] / 2**30,
    "ch07-double-length": lambda: score_matrix_elements(2048) / score_matrix_elements(1024),
    # old scores [2, 2 - ln 2] give m = 2 and l = 1.5; the new block is [3, 1]; l' = sum exp(s - 3) over all four
    "ch07-online-update-step": lambda: np.exp(np.array([2.0, 2 - np.log(2), 3.0, 1.0]) - 3).sum(),
    # five (L, S, E)-sized products in the backward (QK^T recomputed, dV, dP, dQ, dK) against the forward's two
    "ch07-backward-flops": lambda: 5 * (2 * 1024 * 1024 * 64) / attention_flops(1024, 1024, 64, 64),
    "ch07-causal-tiles": lambda: causal_mask(4096).reshape(32, 128, 32, 128).any(axis=(1, 3)).sum(),
    # chunk A: three keys of score 0 and value 2 (m 0, l 3, o 2); chunk B: one key of score 1 and value 5
    "ch07-combine-partials": lambda: softmax(np.array([0.0, 0, 0, 1])) @ np.array([2.0, 2, 2, 5]),
    "ch07-linear-flops-ratio": lambda: attention_flops(16384, 16384, 64, 64) / (2 * 64 * 16384 * 64 + 2 * 16384 * 64 * 64),
    "ch08-causal-count": lambda: causal_mask(6).sum(),
    "ch08-padding-count": lambda: (~padding_mask([3, 5], 5)).sum(),
    "ch08-sliding-window-reach": lambda: __import__("sdpa_course.lessons.positions", fromlist=["window_reach"])
                                         .window_reach(64, 8, 6),
    "ch08-packed-causal-count": lambda: (__import__("sdpa_lib").block_diagonal_mask([2, 3, 1]) & causal_mask(6)).sum(),
    "ch10-demo-weight-total": lambda: seed_demo_weights().sum(),
    "ch13-llama70b-cache-32k": lambda: kv_cache_bytes(layers=80, kv_heads=8, head_dim=128, tokens=32768) / 2**30,
    "ch10-scale-value": lambda: (scaled_scores(np.ones((1, 64)), np.ones((1, 64)))
                                 / dot_product_scores(np.ones((1, 64)), np.ones((1, 64))))[0, 0],
    "ch09-cross-attention-weights": lambda: attention_weights(RNG.normal(size=(8, 7, 16)), RNG.normal(size=(8, 9, 16))).size,
    "ch09-summary-cost": lambda: attention_flops(2000, 2000, 64, 64) / attention_flops(100, 2000, 64, 64),
    "ch10-forgotten-scale-weight": lambda: softmax(np.array([4.0, 0.0]))[0],
    "ch11-contribution-norm": lambda: np.linalg.norm(np.array([0.6, 0.3, 0.1])[:, None]
                                                     * np.array([[0.3, 0.4], [0.0, 2.0], [4.0, 0.0]]), axis=-1).max(),
    "ch13-rope-frequency": lambda: __import__("sdpa_lib").rope_frequencies(64)[16],
    "ch13-mqa-per-token": lambda: kv_cache_bytes(layers=80, kv_heads=1, head_dim=128, tokens=1) / 1024,
    "ch13-sliding-window-cache": lambda: kv_cache_bytes(layers=32, kv_heads=8, head_dim=128,
                                                        tokens=min(100_000, 4096)) / 2**30,
    "ch13-mla-per-token": lambda: __import__("sdpa_course.lessons.decoding", fromlist=["_"]).cache_per_token_bytes(
        __import__("sdpa_course.lessons.decoding", fromlist=["_"]).MODELS[1], family="MLA") / 1024,
    "ch13-gqa-decode-intensity": lambda: __import__("sdpa_course.lessons.decoding", fromlist=["_"]).arithmetic_intensity(
        "decode", tokens=1, context=4096, D=8192, kv_heads=8, heads=64)["attention"]["intensity"],
    "ch13-soft-cap": lambda: (lambda cap: cap * np.tanh(100 / cap))(
        __import__("sdpa_course.lessons.precision", fromlist=["_"]).SOFT_CAP),
    "ch13-window-reach": lambda: __import__("sdpa_course.lessons.positions", fromlist=["_"]).window_reach(64, 5, 6),
    "ch13-alibi-slope": lambda: __import__("sdpa_lib").alibi_slopes(8)[2],
    "ch13-fp16-running-sum": lambda: __import__("sdpa_course.lessons.precision", fromlist=["_"]).running_sum(
        np.full(4096, 0.9), "float16"),
    "ch13-fp16-exp-limit": lambda: np.log(np.finfo(np.float16).max),
}


def test_every_numeric_question_has_a_recomputation():
    """Is there code behind every numeric answer (and no recomputation for a question that is gone)?"""
    numeric = {q.id for q in BANK if q.type == "numeric"}
    assert numeric == set(RECOMPUTE)


@pytest.mark.parametrize("qid", sorted(RECOMPUTE))
def test_numeric_answer_matches_the_code(qid):
    """Does the bank's answer agree, within its tolerance, with the value computed by numpy/sdpa_lib?"""
    question, value = BY_ID[qid], float(RECOMPUTE[qid]())
    assert abs(value - question.answer) <= question.tolerance + 1e-9, f"bank {question.answer} vs code {value}"
    assert grade(question, value)


def test_the_bank_is_deep_enough():
    """At least 160 questions, and at least 8 in every chapter (chapter 13 included)."""
    counts = Counter(q.chapter for q in BANK)
    assert len(BANK) >= 160
    assert {c.number: counts[c.number] for c in CHAPTERS if counts[c.number] < 8} == {}


DEPTH_TOPICS = ["rope", "kv-cache", "prefill", "mla", "mqa", "flashattention", "online-softmax", "backward",
                "bfloat16", "float16", "precision", "qk-norm", "soft-capping", "sliding-window", "alibi",
                "attention-sinks", "linear-attention"]  # the depth list of the interview issue, as tags


def test_every_depth_topic_has_questions():
    tags = Counter(tag for q in BANK for tag in q.tags)
    assert [topic for topic in DEPTH_TOPICS if tags[topic] == 0] == []


def pick_score(question, pick) -> float:
    """What "always pick the longest (or shortest) option" scores on ``question``, ties split evenly."""
    lengths = [len(option.text) for option in question.options]
    tied = [i for i, length in enumerate(lengths) if length == pick(lengths)]
    return sum(question.options[i].correct for i in tied) / len(tied)


@pytest.mark.parametrize("pick", [max, min], ids=["longest", "shortest"])
def test_option_lengths_give_nothing_away(pick):
    """Picking the longest (or the shortest) option scores at most 35% of the single-choice questions."""
    single = [q for q in BANK if q.type == "single"]
    assert sum(pick_score(q, pick) for q in single) / len(single) <= 0.35


def test_pick_score_counts_ties_and_can_flag_a_give_away():
    give_away = Question("x", 1, "single", "easy", ("t",), "?", "why", options=(
        Option("the right one, the longest by far", True), Option("no", False), Option("na", False)))
    tie = replace(give_away, options=(Option("aa", True), Option("bb", False)))
    assert (pick_score(give_away, max), pick_score(give_away, min), pick_score(tie, max)) == (1.0, 0.0, 0.5)


def test_every_distractor_says_which_mistake_it_is():
    """Every wrong option of a choice question carries a ``why``: the real mistake it stands for."""
    missing = [(q.id, o.text) for q in BANK if q.type in ("single", "multiple") for o in q.options
               if not o.correct and not o.why]
    assert missing == []


def test_every_choice_question_is_well_formed():
    """Single choice: exactly one right option; multiple choice: at least one right and one wrong."""
    for question in BANK:
        right = len(question.correct_options)
        if question.type == "single":
            assert right == 1, question.id
        if question.type == "multiple":
            assert 1 <= right < len(question.options), question.id


def test_bank_holds_the_seed():
    """The ten interview questions (with their Chinese), the five exam points and the four misconceptions."""
    seed_questions = [BY_ID[f"ch12-seed-q{n}"] for n in range(1, 11)]
    assert all(q.zh and q.zh.startswith(f"Q{n}.") for n, q in enumerate(seed_questions, 1))
    exam_points = [q for q in BANK if q.source.startswith("exam point")]
    assert len(exam_points) == 5 and all(q.type == "open" and len(q.model_answer) > 600 for q in exam_points)
    misconceptions = [q for q in BANK if q.source.startswith("seed misconception")]
    assert len(misconceptions) == 4 and all(q.type == "true_false" and q.zh for q in misconceptions)
    assert len(BANK) - 19 >= 35


def test_seed_q5_is_corrected():
    """Q5 marked one of three true statements as the single answer; it is now multiple choice, flaw explained."""
    q5 = BY_ID["ch12-seed-q5"]
    assert q5.type == "multiple" and len(q5.correct_options) == 3
    assert "single choice" in q5.explanation


@pytest.mark.parametrize("qid, needed", [
    ("ch12-exam-why-sqrt-dk", ["Var(q . k) = d_k", "11.3", "diag(p) - p p^T"]),
    ("ch12-exam-complexity", ["O(n^2 d)", "O(n^2)", "O(n)", "FLOPs stay O(n^2 d)"]),
    ("ch12-exam-projection-shapes", ["d_model x d_k", "(B, L, h, d_k)", "(B, h, L, d_k)", "W_O"]),
    ("ch12-exam-masks", ["(B, 1, 1, S)", "-inf", "AND", "lower-triangular"]),
    ("ch12-exam-why-multi-head", ["subspace", "one weighted average", "n^2 d_model", "4 d_model^2"]),
])
def test_exam_point_model_answers_cover_the_essentials(qid, needed):
    missing = [phrase for phrase in needed if phrase not in BY_ID[qid].model_answer]
    assert missing == []


def test_explanations_do_not_name_option_letters():
    """Options are shuffled, so an explanation saying 'B is right' would point at the wrong option."""
    letter_talk = re.compile(r"\b(option|answer|choice)s? [A-E]\b|\b[A-E](, [A-E])*( and [A-E])? (is|are) "
                             r"(right|wrong|correct|true|false)")
    assert [q.id for q in BANK if q.options and letter_talk.search(q.explanation)] == []


def write_bank(tmp_path, files):
    for name, document in files.items():
        (tmp_path / name).write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return tmp_path


def single(qid="x-1", **changes):
    question = {"id": qid, "type": "single", "difficulty": "easy", "tags": ["t"], "prompt": "p?",
                "explanation": "because", "options": [{"text": "a", "correct": True}, {"text": "b"}]}
    return {**question, **changes}


BROKEN = [
    ("two right options", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(
        options=[{"text": "a", "correct": True}, {"text": "b", "correct": True}])]}},
     r"ch01_visual_demo.yaml question 'x-1': a single-choice question needs exactly one correct option; it has 2"),
    ("field of another type", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(answer=True)]}},
     r"question 'x-1': unknown field\(s\) \['answer'\] for type single"),
    ("unknown type", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(type="essay")]}},
     r"question 'x-1': 'type' must be one of"),
    ("bad difficulty", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(difficulty="hardest")]}},
     r"question 'x-1': 'difficulty' must be one of easy, mid, hard; got 'hardest'"),
    ("duplicate id", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single()]},
                      "ch02_qkv.yaml": {"chapter": 2, "questions": [single()]}},
     r"ch02_qkv.yaml: question id 'x-1' is already used in ch01_visual_demo.yaml"),
    ("file named after another chapter", {"ch03_dot_product.yaml": {"chapter": 1, "questions": [single()]}},
     r"ch03_dot_product.yaml: holds chapter 1, so it must be named ch01_visual_demo.yaml"),
    ("not YAML", {"ch01_visual_demo.yaml": "chapter: [1"}, r"ch01_visual_demo.yaml: not valid YAML"),
    ("no prompt", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(prompt="  ")]}},
     r"question 'x-1': 'prompt' must be a non-empty string"),
    ("a why on the right option", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(
        options=[{"text": "a", "correct": True, "why": "it is right"}, {"text": "b"}])]}},
     r"question 'x-1': option 1 is correct: its reasons belong in the explanation"),
    ("a former id in use", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(), single("x-2", formerly=["x-1"])]}},
     r"ch01_visual_demo.yaml: question id 'x-1' is already used"),
    ("formerly not a list", {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [single(formerly="x-0")]}},
     r"question 'x-1': 'formerly' must be a list of earlier ids"),
]


@pytest.mark.parametrize("case, files, message", BROKEN, ids=[case for case, _, _ in BROKEN])
def test_schema_errors_name_file_and_question(tmp_path, case, files, message):
    with pytest.raises(BankError, match=message):
        load_questions(write_bank(tmp_path, files))


def test_numeric_question_needs_a_tolerance(tmp_path):
    question = {k: v for k, v in single().items() if k != "options"} | {"type": "numeric", "answer": 3}
    files = {"ch01_visual_demo.yaml": {"chapter": 1, "questions": [question]}}
    with pytest.raises(BankError, match=r"question 'x-1': 'tolerance' must be a finite number; got None"):
        load_questions(write_bank(tmp_path, files))


def test_bank_files_are_named_after_their_chapters():
    assert sorted(p.name for p in BANK_DIR.glob("*.yaml")) == [f"{c.assignment}.yaml" for c in CHAPTERS]


def test_exam_point_2_crossover_numbers_match_the_counts():
    """Do the model answer's crossovers (2 and 6 d_model) and long-context shares agree with the FLOP counts?"""
    from sdpa_course.lessons import cost
    answer = BY_ID["ch12-exam-complexity"].model_answer
    assert "n = 2 d_model" in answer and "n = 6 d_model" in answer
    assert cost.attention_crossover_length(4096) == 2 * 4096
    assert cost.attention_crossover_length(4096, against="layer") == 6 * 4096
    low, high = map(int, re.search(r"about (\d+) to (\d+) percent", answer).groups())
    shares = [cost.transformer_layer_flops(131072, D) for D in (8192, 4096)]
    assert [round(100 * p["attention"] / p["total"]) for p in shares] == [low, high]
