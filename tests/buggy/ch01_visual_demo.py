"""Buggy submissions for chapter 1 (the pipeline): wrong shapes, the scaling mistakes, the wrong argmax axis."""
from buggy import Bug

SHAPES_SCORES_BY_FEATURES = '''
def pipeline_shapes(batch, L, D, E, Ev):
    batch = tuple(batch)
    return {"X": (*batch, L, D), "W_Q": (D, E), "W_K": (D, E), "W_V": (D, Ev),
            "Q": (*batch, L, E), "K": (*batch, L, E), "V": (*batch, L, Ev),
            "scores": (*batch, L, E), "weights": (*batch, L, E), "output": (*batch, L, Ev)}
'''

SHAPES_BATCHED_WEIGHTS = '''
def pipeline_shapes(batch, L, D, E, Ev):
    batch = tuple(batch)
    return {"X": (*batch, L, D), "W_Q": (*batch, D, E), "W_K": (*batch, D, E), "W_V": (*batch, D, Ev),
            "Q": (*batch, L, E), "K": (*batch, L, E), "V": (*batch, L, Ev),
            "scores": (*batch, L, L), "weights": (*batch, L, L), "output": (*batch, L, Ev)}
'''


def self_attention_with(scores_line: str, softmax_axis: int = -1) -> str:
    return f'''
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = {scores_line}
    exps = np.exp(scores - scores.max(axis={softmax_axis}, keepdims=True))
    return exps / exps.sum(axis={softmax_axis}, keepdims=True) @ v
'''


UNSCALED = "q @ np.swapaxes(k, -1, -2)"
ARGMAX_OVER_QUERIES = '''
def most_attended(x, w_q, w_k):
    return np.argmax((x @ w_q) @ np.swapaxes(x @ w_k, -1, -2), axis=-2)
'''

BUGS = [
    Bug("scores_by_features", "pipeline_shapes", SHAPES_SCORES_BY_FEATURES, "test_pipeline_shapes",
        "scores compare every query with every key"),
    Bug("batched_weights", "pipeline_shapes", SHAPES_BATCHED_WEIGHTS, "test_pipeline_shapes",
        "shared by every token and every batch element"),
    Bug("forgot_scale", "self_attention", self_attention_with(UNSCALED), "test_self_attention",
        "known mistake: forgot the scale"),
    Bug("scaled_by_d_model", "self_attention", self_attention_with(f"{UNSCALED} / np.sqrt(x.shape[-1])"),
        "test_self_attention", "known mistake: scaled by sqrt(d_model)"),
    Bug("softmax_over_queries", "self_attention",
        self_attention_with(f"{UNSCALED} / np.sqrt(q.shape[-1])", softmax_axis=-2), "test_self_attention",
        "known mistake: softmax over the queries"),
    Bug("argmax_over_queries", "most_attended", ARGMAX_OVER_QUERIES, "test_most_attended",
        "known mistake: argmax over the queries"),
]

# Not catalogued: what the new feedback says about them (the Python error explained, the case that replays it).
TRACED_SHAPES = '''
def pipeline_shapes(batch, L, D, E, Ev):
    x = np.zeros((*batch, L, D))
    w_q, w_k, w_v = np.zeros((D, E)), np.zeros((D, E)), np.zeros((D, Ev))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ np.swapaxes(k, -1, -2)
    output = scores @ v
    return {"X": x.shape, "W_Q": w_q.shape, "W_K": w_k.shape, "W_V": w_v.shape, "Q": q.shape, "K": k.shape,
            "V": v.shape, "scores": scores.shape, "weights": scores.shape, "output": output.shape}
'''
BUGS += [
    Bug("builds_the_arrays", "pipeline_shapes", TRACED_SHAPES, "test_pipeline_shapes",
        "your pipeline_shapes raised ValueError"),
    Bug("transpose_with_T", "self_attention", self_attention_with("q @ k.T / np.sqrt(q.shape[-1])"),
        "test_self_attention", "sdpa_course.replay("),
]

# The notebook asks for a softmax written by hand: sdpa_lib's is unavailable while self_attention is graded.
LIBRARY_SOFTMAX = '''
def self_attention(x, w_q, w_k, w_v):
    import sdpa_lib
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return sdpa_lib.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v
'''
BUGS += [Bug("library_softmax", "self_attention", LIBRARY_SOFTMAX, "test_self_attention",
             "sdpa_lib.softmax is not available while your work is graded")]
