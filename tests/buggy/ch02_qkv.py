"""Buggy submissions for chapter 2: catalogued projection, initialisation and counting mistakes."""
from buggy import Bug

BUGS = [
    Bug("one_projection", "project_qkv", "def project_qkv(x, w_q, w_k, w_v):\n    q = x @ w_q\n    return q, q, q\n",
        "test_project_qkv", "known mistake: one projection for all three"),
    Bug("keys_values_swapped", "project_qkv", "def project_qkv(x, w_q, w_k, w_v):\n    return x @ w_q, x @ w_v, x @ w_k\n",
        "test_project_qkv", "known mistake: keys and values swapped"),
    Bug("unscaled_init", "init_projection",
        "def init_projection(d_model, d_out, rng):\n    return rng.normal(size=(d_model, d_out))\n",
        "test_init_projection", "known mistake: unscaled N(0, 1)"),
    Bug("std_one_over_d", "init_projection",
        "def init_projection(d_model, d_out, rng):\n    return rng.normal(0, 1 / d_model, size=(d_model, d_out))\n",
        "test_init_projection", "known mistake: 1/d_model used as the standard deviation"),
    Bug("global_rng", "init_projection",
        "def init_projection(d_model, d_out, rng):\n    return np.random.normal(0, d_model ** -0.5, size=(d_model, d_out))\n",
        "test_init_projection", "draw from the rng you are given"),
    Bug("forgot_biases", "qkv_parameter_count",
        "def qkv_parameter_count(d_model, d_k, d_v, bias=True):\n    return d_model * (2 * d_k + d_v)\n",
        "test_qkv_parameter_count", "known mistake: forgot the biases"),
]

# Not catalogued: what the new feedback says about them (what differs, the case that replays it).
BUGS += [
    Bug("values_with_w_k", "project_qkv", "def project_qkv(x, w_q, w_k, w_v):\n    return x @ w_q, x @ w_k, x @ w_k\n",
        "test_project_qkv", "What differs: axis -1 of your output has length 4"),
    Bug("unflattened_by_first_axis", "project_qkv",
        "def project_qkv(x, w_q, w_k, w_v):\n    tokens = x.reshape(-1, x.shape[-1])\n"
        "    return tuple((tokens @ w).reshape(x.shape[0], -1, w.shape[1]) for w in (w_q, w_k, w_v))\n",
        "test_project_qkv", "sdpa_course.replay("),
    Bug("one_bias_vector", "qkv_parameter_count",
        "def qkv_parameter_count(d_model, d_k, d_v, bias=True):\n    return d_model * (2 * d_k + d_v) + (d_k if bias else 0)\n",
        "test_qkv_parameter_count", "sdpa_course.replay("),
]

# sdpa_lib has an init_projection: it is unavailable while the notebook is graded.
BUGS += [Bug("library_init", "init_projection",
             "def init_projection(d_model, d_out, rng):\n    import sdpa_lib\n    return sdpa_lib.init_projection(d_model, d_out, rng)\n",
             "test_init_projection", "sdpa_lib.init_projection is not available while your work is graded")]
