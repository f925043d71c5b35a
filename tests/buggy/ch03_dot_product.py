"""Buggy submissions for chapter 3: catalogued score, cosine and split mistakes, and keys that fail to disagree."""
from buggy import Bug

REVERSED_PAIR = '''
def disagreeing_keys(query):
    q = np.asarray(query, dtype=float)
    other = np.zeros_like(q)
    other[np.argmin(np.abs(q))] = 1.0
    perpendicular = other - (other @ q) / (q @ q) * q
    return q, 2 * q + 2 * np.linalg.norm(q) * perpendicular / np.linalg.norm(perpendicular)
'''

BUGS = [
    Bug("loops_vectorised", "dot_scores_loops", "def dot_scores_loops(query, key):\n    return query @ key.T\n",
        "test_dot_scores_loops", "has no for loop"),
    Bug("keys_times_queries", "dot_scores", "def dot_scores(query, key):\n    return key @ np.swapaxes(query, -1, -2)\n",
        "test_dot_scores", "known mistake: keys compared with queries (K Q^T)"),
    Bug("only_queries_normalised", "cosine_scores",
        "def cosine_scores(query, key):\n    q = query / np.linalg.norm(query, axis=-1, keepdims=True)\n"
        "    return q @ np.swapaxes(key, -1, -2)\n",
        "test_cosine_scores", "known mistake: only the queries normalised"),
    Bug("squared_norms", "norms_and_cosine",
        "def norms_and_cosine(q, k):\n    n = np.sum(q * q, axis=-1) * np.sum(k * k, axis=-1)\n"
        "    return n, np.sum(q * k, axis=-1) / n\n",
        "test_norms_and_cosine", "known mistake: squared norms"),
    Bug("same_direction", "disagreeing_keys", "def disagreeing_keys(query):\n    return 2 * query, query\n",
        "test_disagreeing_keys", "cosine cannot rank them"),
    Bug("reversed_pair", "disagreeing_keys", REVERSED_PAIR, "test_disagreeing_keys", "disagrees the other way round"),
]

# Not catalogued: what the new feedback says about them (the Python error explained, what differs, the case that replays it).
UNGUARDED_COSINE = '''
def cosine_scores(query, key):
    q = query / np.linalg.norm(query, axis=-1, keepdims=True)
    k = key / np.linalg.norm(key, axis=-1, keepdims=True)
    return q @ np.swapaxes(k, -1, -2)
'''
NAN_REPLACED_COSINE = UNGUARDED_COSINE.replace("return q @ np.swapaxes(k, -1, -2)",
                                               "return np.nan_to_num(q @ np.swapaxes(k, -1, -2))")
BUGS += [
    Bug("transpose_with_T", "dot_scores", "def dot_scores(query, key):\n    return query @ key.T\n",
        "test_dot_scores", "sdpa_course.replay("),
    Bug("zero_key_nan", "cosine_scores", UNGUARDED_COSINE, "test_cosine_scores", "sdpa_course.replay("),
    Bug("zero_key_warning", "cosine_scores", NAN_REPLACED_COSINE, "test_cosine_scores", "sdpa_course.replay("),
    Bug("outputs_swapped", "norms_and_cosine",
        "def norms_and_cosine(q, k):\n    n = np.linalg.norm(q, axis=-1) * np.linalg.norm(k, axis=-1)\n"
        "    return np.sum(q * k, axis=-1) / n, n\n",
        "test_norms_and_cosine", "What differs:"),
]
