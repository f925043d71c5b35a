"""Buggy submissions for chapter 4: each catalogued scaling mistake, and the usual measuring and entropy slips."""
from buggy import Bug


def variance_with(statistic: str) -> str:
    return f'''
def measure_score_variance(d_k, n_samples, rng):
    q, k = rng.normal(size=(n_samples, d_k)), rng.normal(size=(n_samples, d_k))
    return float({statistic})
'''


def weights_with(scores: str, after: str = "") -> str:
    return f'''
def scaled_attention_weights(x, w_q, w_k):
    q, k = x @ w_q, x @ w_k
    scores = {scores}
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True){after}
'''


RAW = "q @ np.swapaxes(k, -1, -2)"
ENTROPY_IN_BITS = '''
def max_weight_and_entropy(query, key, scaled=True):
    scores = query @ np.swapaxes(key, -1, -2) / (np.sqrt(query.shape[-1]) if scaled else 1.0)
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = exps / exps.sum(axis=-1, keepdims=True)
    return weights.max(axis=-1), -np.sum(weights * np.log2(np.where(weights > 0, weights, 1.0)), axis=-1)
'''

BUGS = [
    Bug("std_not_var", "measure_score_variance", variance_with("np.std(np.sum(q * k, axis=-1))"),
        "test_measure_score_variance", "known mistake: standard deviation instead of variance"),
    Bug("measured_scaled", "measure_score_variance", variance_with("np.var(np.sum(q * k, axis=-1) / np.sqrt(d_k))"),
        "test_measure_score_variance", "known mistake: variance of the scaled score"),
    Bug("forgot_scale", "scaled_attention_weights", weights_with(RAW), "test_scaled_attention_weights",
        "known mistake: forgot the scale"),
    Bug("scaled_by_d_k", "scaled_attention_weights", weights_with(f"{RAW} / w_q.shape[-1]"),
        "test_scaled_attention_weights", "known mistake: scaled by d_k, not sqrt(d_k)"),
    Bug("scaled_by_d_model", "scaled_attention_weights", weights_with(f"{RAW} / np.sqrt(x.shape[-1])"),
        "test_scaled_attention_weights", "known mistake: scaled by sqrt(d_model)"),
    Bug("scaled_after_softmax", "scaled_attention_weights", weights_with(RAW, " / np.sqrt(w_q.shape[-1])"),
        "test_scaled_attention_weights", "known mistake: scaled after softmax"),
    Bug("entropy_in_bits", "max_weight_and_entropy", ENTROPY_IN_BITS, "test_max_weight_and_entropy",
        "known mistake: entropy in bits"),
]

SWAPPED_CURVES = '''
def saturation_curve(d_ks, rng, n_queries=200, n_keys=16):
    curves = [[max_weight_and_entropy(rng.normal(size=(n_queries, d)), rng.normal(size=(n_keys, d)), scaled=s)[0].mean()
               for s in (True, False)] for d in d_ks]
    return tuple(np.array(curves).T)
'''
UNSCALED_CURVES = SWAPPED_CURVES.replace("for s in (True, False)", "for s in (False, False)")
BUGS += [
    Bug("curves_swapped", "saturation_curve", SWAPPED_CURVES, "test_saturation_curve", "in that order"),
    Bug("curves_both_unscaled", "saturation_curve", UNSCALED_CURVES, "test_saturation_curve",
        "should stay near"),
]

# Not catalogued: what the new feedback says about them (what differs, the case that replays it).
MAX_OVER_QUERIES = ENTROPY_IN_BITS.replace("np.log2", "np.log").replace("weights.max(axis=-1)", "weights.max(axis=-2)")
BUGS += [
    Bug("scaled_by_shape_1", "scaled_attention_weights", weights_with(f"{RAW} / np.sqrt(q.shape[1])"),
        "test_scaled_attention_weights", "sdpa_course.replay("),
    Bug("max_over_queries", "max_weight_and_entropy", MAX_OVER_QUERIES, "test_max_weight_and_entropy",
        "What differs: axis -1 of your output has length 4"),
]

# The notebook asks for the curves drawn from rng: np.random gives other curves for the same seed.
BUGS += [Bug("curves_from_np_random", "saturation_curve",
             SWAPPED_CURVES.replace("for s in (True, False)", "for s in (False, True)").replace("rng.normal", "np.random.normal"),
             "test_saturation_curve", "the same seed gave two different curves")]
