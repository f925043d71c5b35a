"""Buggy submissions for chapter 9: the catalogued retrieval, next-token and alignment mistakes."""
from buggy import Bug

RETRIEVE_HEAD = '''def retrieve(queries, documents, k):
    scores = queries @ documents.T / np.sqrt(queries.shape[-1])  # (M, N)
'''
NEXT_HEAD = '''def next_token_probs(x, w_q, w_k, w_v, temperature=1.0):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
'''

BUGS = [
    Bug("ascending", "retrieve", RETRIEVE_HEAD + "    return np.argsort(scores, axis=-1, kind='stable')[:, :k]\n",
        "test_retrieve", "ascending order"),
    Bug("reversed_ties", "retrieve", RETRIEVE_HEAD + "    return np.argsort(scores, axis=-1)[:, ::-1][:, :k]\n",
        "test_retrieve", "ties broken by the larger index"),
    Bug("cosine", "retrieve", '''def retrieve(queries, documents, k):
    unit_q = queries / np.linalg.norm(queries, axis=-1, keepdims=True)
    unit_d = documents / np.linalg.norm(documents, axis=-1, keepdims=True)
    return np.argsort(-(unit_q @ unit_d.T), axis=-1, kind='stable')[:, :k]
''', "test_retrieve", "cosine instead of the dot product"),
    Bug("argsort_axis0", "retrieve", RETRIEVE_HEAD + "    return np.argsort(-scores, axis=0, kind='stable')[:, :k]\n",
        "test_retrieve", "argsort over the wrong axis"),
    Bug("no_causal_mask", "next_token_probs", NEXT_HEAD + '''    logits = sdpa_lib.scaled_dot_product_attention(q, k, v)
    return sdpa_lib.softmax(logits / temperature)
''', "test_next_token_probs", "no causal mask"),
    Bug("temperature_times", "next_token_probs", NEXT_HEAD + '''    logits = sdpa_lib.scaled_dot_product_attention(q, k, v, is_causal=True)
    return sdpa_lib.softmax(logits * temperature)
''', "test_next_token_probs", "temperature multiplied instead of divided"),
    Bug("temperature_unshifted", "next_token_probs", NEXT_HEAD + '''    logits = sdpa_lib.scaled_dot_product_attention(q, k, v, is_causal=True) / temperature
    return np.exp(logits) / np.sum(np.exp(logits), axis=-1, keepdims=True)
''', "test_next_token_probs", "NaN"),
    Bug("argmax_queries", "read_alignment", '''def read_alignment(weights, threshold=0.0):
    return np.where(np.max(weights, axis=-2) >= threshold, np.argmax(weights, axis=-2), -1)
''', "test_read_alignment", "argmax over the queries axis"),
    Bug("threshold_ignored", "read_alignment", '''def read_alignment(weights, threshold=0.0):
    return np.argmax(weights, axis=-1)
''', "test_read_alignment", "threshold ignored"),
    # Not catalogued: what the grader says from the outputs or the error alone.
    Bug("last_of_ties", "read_alignment", '''def read_alignment(weights, threshold=0.0):
    best = np.argsort(weights, axis=-1)[..., -1]  # the largest weight comes last
    return np.where(np.max(weights, axis=-1) >= threshold, best, -1)
''', "test_read_alignment", "sdpa_course.replay("),  # only hidden rows tie: the last of the tied indices wins
    Bug("max_without_keepdims", "next_token_probs", NEXT_HEAD + '''    logits = sdpa_lib.scaled_dot_product_attention(q, k, v, is_causal=True) / temperature
    shifted = logits - np.max(logits, axis=-1)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=-1, keepdims=True)
''', "test_next_token_probs", "Likely cause: a sum or max along an axis drops that axis"),
]
