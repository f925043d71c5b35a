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
