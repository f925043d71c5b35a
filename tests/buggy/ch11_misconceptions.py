"""Buggy submissions for chapter 11: counterexamples that do not refute, measurements with catalogued mistakes."""
from buggy import Bug

SHARE_HEAD = '''def share_outside_unit_interval(q, k):
    scores = np.sum(q * k, axis=-1)
'''
SAT_HEAD = '''def mean_max_weight(query, key, scaled=True):
    scores = query @ np.swapaxes(key, -1, -2)
'''
SAT_TAIL = '''    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return float(np.mean(np.max(weights, axis=-1)))
'''

BUGS = [
    Bug("same_direction", "disagreeing_keys", '''def disagreeing_keys(q):
    return 2 * q, q
''', "test_disagreeing_keys", "point the same way"),
    Bug("reversed_pair", "disagreeing_keys", '''def disagreeing_keys(q):
    u = q / np.linalg.norm(q)
    e = np.eye(len(q))[np.argmin(np.abs(u))]
    w = e - (e @ u) * u
    return u, 2 * u + 10 * w / np.linalg.norm(w)
''', "test_disagreeing_keys", "the other way round"),
    Bug("share_no_scale", "share_outside_unit_interval", SHARE_HEAD + '''    return float(np.mean((scores < 0) | (scores > 1)))
''', "test_share_outside_unit_interval", "forgot the scale"),
    Bug("share_inside", "share_outside_unit_interval", SHARE_HEAD + '''    scores = scores / np.sqrt(q.shape[-1])
    return float(np.mean((scores >= 0) & (scores <= 1)))
''', "test_share_outside_unit_interval", "share inside [0, 1] instead of outside"),
    Bug("saturation_scaled_by_E", "mean_max_weight", SAT_HEAD + '''    if scaled:
        scores = scores / query.shape[-1]
''' + SAT_TAIL, "test_mean_max_weight", "scaled by E instead of sqrt(E)"),
    Bug("saturation_flag_inverted", "mean_max_weight", SAT_HEAD + '''    if not scaled:
        scores = scores / np.sqrt(query.shape[-1])
''' + SAT_TAIL, "test_mean_max_weight", "scaled flag inverted"),
    Bug("one_hot_values", "misleading_values", '''def misleading_values(weights):
    return np.eye(len(weights))
''', "test_misleading_values", "so here the weights do rank importance"),
    Bug("top_value_zero", "misleading_values", '''def misleading_values(weights):
    values = np.eye(len(weights))
    values[np.argmax(weights)] = 0.0
    return values
''', "test_misleading_values", "Give the top token the value the other tokens average to"),
    # Not catalogued: what the grader says from the property or the outputs alone.
    Bug("rotate_first_two", "disagreeing_keys", '''def disagreeing_keys(q):
    u = q / np.linalg.norm(q)
    w = np.zeros_like(u)
    w[0], w[1] = -u[1], u[0]  # u turned by 90 degrees in its first two coordinates
    return 2 * u + 10 * w, u
''', "test_disagreeing_keys", "sdpa_course.replay("),  # zero when q lies along a later axis: hidden queries only
    Bug("rotate_in_2d", "disagreeing_keys", '''def disagreeing_keys(q):
    u = q / np.linalg.norm(q)
    w = np.array([-u[1], u[0]])  # u turned by 90 degrees
    return 2 * u + 10 * w, u
''', "test_disagreeing_keys", "Likely cause: broadcasting lines shapes up from the right"),  # E = 4 breaks it
]
