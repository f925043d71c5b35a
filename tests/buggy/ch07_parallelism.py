"""Buggy ch07_parallelism submissions: each catalogued mistake written as a student would, then mistakes no
catalogue names, whose feedback says what differs or explains the Python error."""
from . import Bug

_ALL_AT_ONCE = '''
def attention_row_by_row(query, key, value):
    weights = sdpa_lib.softmax(query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1]))
    return weights @ value
'''

_ROWS_NO_SCALE = '''
def attention_row_by_row(query, key, value):
    output = np.empty((*np.broadcast_shapes(query.shape[:-2], key.shape[:-2]), query.shape[-2], value.shape[-1]))
    for i in range(query.shape[-2]):
        weights = sdpa_lib.softmax(np.einsum("...e,...se->...s", query[..., i, :], key))
        output[..., i, :] = np.einsum("...s,...sv->...v", weights, value)
    return output
'''

_ONLINE = '''
def online_softmax_attention(query, key, value, block_size):
    query = query / np.sqrt(query.shape[-1])
    running_max = np.full((*query.shape[:-1], 1), -np.inf)
    running_sum = np.zeros((*query.shape[:-1], 1))
    acc = np.zeros((*query.shape[:-1], value.shape[-1]))
    for start in range(0, {stop}, block_size):
        scores = query @ np.swapaxes(key[..., start:start + block_size, :], -1, -2)
        new_max = np.maximum(running_max, scores.max(axis=-1, keepdims=True))
        tile = np.exp(scores - new_max)
        rescale = np.exp(running_max - new_max)
        running_sum = running_sum{sum_rescale} + tile.sum(axis=-1, keepdims=True)
        acc = acc{acc_rescale} + tile @ value[..., start:start + block_size, :]
        running_max = new_max
    return acc / running_sum
'''


def _online(stop="key.shape[-2]", sum_rescale=" * rescale", acc_rescale=" * rescale"):
    return _ONLINE.format(stop=stop, sum_rescale=sum_rescale, acc_rescale=acc_rescale)


_ONLINE_FULL_MATRIX = '''
def online_softmax_attention(query, key, value, block_size):
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
    return sdpa_lib.softmax(scores) @ value
'''

# The output allocated like the query: (..., L, E), not (..., L, Ev); raises when E != Ev (the visible cases).
_ROWS_LIKE_QUERY = '''
def attention_row_by_row(query, key, value):
    output = np.zeros_like(query)
    for i in range(query.shape[-2]):
        scores = np.einsum("...e,...se->...s", query[..., i, :], key) / np.sqrt(query.shape[-1])
        output[..., i, :] = np.einsum("...s,...sv->...v", sdpa_lib.softmax(scores), value)
    return output
'''

# Its own softmax without the max subtraction: right on the visible cases, NaN on the hidden scores near 1000.
_ROWS_NO_MAX = '''
def attention_row_by_row(query, key, value):
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    output = np.empty((*batch, query.shape[-2], value.shape[-1]))
    for i in range(query.shape[-2]):
        scores = np.einsum("...e,...se->...s", query[..., i, :], key) / np.sqrt(query.shape[-1])  # (..., S)
        weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)  # softmax over the keys
        output[..., i, :] = np.einsum("...s,...sv->...v", weights, value)
    return output
'''

BUGS = [
    Bug("rows-all-at-once", "attention_row_by_row", _ALL_AT_ONCE, "test_attention_row_by_row", "score matrix"),
    Bug("rows-no-scale", "attention_row_by_row", _ROWS_NO_SCALE, "test_attention_row_by_row", "forgot the scale"),
    Bug("flops-one-per-madd", "attention_flop_count",
        "def attention_flop_count(L, S, E, Ev):\n    return L * S * E + L * S * Ev\n", "test_attention_flop_count",
        "counted a multiply-add as one operation"),
    Bug("flops-no-pv", "attention_flop_count", "def attention_flop_count(L, S, E, Ev):\n    return 2 * L * S * E\n",
        "test_attention_flop_count", "forgot the weights @ V product"),
    Bug("bytes-elements", "score_matrix_bytes",
        "def score_matrix_bytes(L, S, batch=1, heads=1, dtype=np.float32):\n    return batch * heads * L * S\n",
        "test_score_matrix_bytes", "counted elements, not bytes"),
    Bug("bytes-4", "score_matrix_bytes",
        "def score_matrix_bytes(L, S, batch=1, heads=1, dtype=np.float32):\n    return 4 * batch * heads * L * S\n",
        "test_score_matrix_bytes", "assumed 4 bytes per element"),
    Bug("online-sum-not-rescaled", "online_softmax_attention", _online(sum_rescale=""),
        "test_online_softmax_attention", "running sum not rescaled"),
    Bug("online-acc-not-rescaled", "online_softmax_attention", _online(acc_rescale=""),
        "test_online_softmax_attention", "running output not rescaled"),
    Bug("online-tail-dropped", "online_softmax_attention", _online(stop="key.shape[-2] - key.shape[-2] % block_size"),
        "test_online_softmax_attention", "last partial block dropped"),
    Bug("online-full-matrix", "online_softmax_attention", _ONLINE_FULL_MATRIX, "test_online_softmax_attention",
        "score matrix"),
    Bug("rows-output-like-query", "attention_row_by_row", _ROWS_LIKE_QUERY, "test_attention_row_by_row",
        "Likely cause: broadcasting lines shapes up from the right"),
    Bug("rows-exp-without-max", "attention_row_by_row", _ROWS_NO_MAX, "test_attention_row_by_row",
        'sdpa_course.replay("ch07", "attention_row_by_row"'),
]
