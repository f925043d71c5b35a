"""Buggy ch05_softmax submissions: each catalogued mistake written as a student would."""
from . import Bug

_SOFTMAX = '''
def softmax(x, axis=-1):
    {body}
'''

BUGS = [
    Bug("naive-softmax", "softmax", _SOFTMAX.format(body="exps = np.exp(x)\n    return exps / exps.sum(axis=axis, keepdims=True)"),
        "test_softmax", "no max subtraction"),
    Bug("nan-on-masked-row", "softmax", _SOFTMAX.format(
        body="exps = np.exp(x - x.max(axis=axis, keepdims=True))\n    return exps / exps.sum(axis=axis, keepdims=True)"),
        "test_softmax", "an all -inf row gives NaN"),
    Bug("ignores-axis", "softmax", _SOFTMAX.format(
        body="top = np.max(x, axis=-1, keepdims=True)\n    exps = np.exp(x - np.where(np.isneginf(top), 0, top))\n"
             "    total = exps.sum(axis=-1, keepdims=True)\n"
             "    return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)"),
        "test_softmax", "wrong axis"),
    Bug("divided-by-max", "softmax", _SOFTMAX.format(body="return np.exp(x - x.max(axis=axis, keepdims=True))"),
        "test_softmax", "not divided by the sum"),
    Bug("jacobian-diagonal-only", "softmax_jacobian",
        "def softmax_jacobian(p):\n    return p[..., None, :] * np.eye(p.shape[-1])\n",
        "test_softmax_jacobian", "missing the outer product"),
    Bug("jacobian-plus-outer", "softmax_jacobian",
        "def softmax_jacobian(p):\n    return np.einsum('...i,ij->...ij', p, np.eye(p.shape[-1])) + p[..., :, None] * p[..., None, :]\n",
        "test_softmax_jacobian", "outer product added instead of subtracted"),
    Bug("backward-no-inner", "softmax_backward", "def softmax_backward(p, grad_p):\n    return p * grad_p\n",
        "test_softmax_backward", "without the <g, p> term"),
    Bug("backward-mean", "softmax_backward",
        "def softmax_backward(p, grad_p):\n    return p * (grad_p - grad_p.mean(axis=-1, keepdims=True))\n",
        "test_softmax_backward", "mean of g instead of <g, p>"),
    # Not caught by the visible checks; the hidden ones must name it, shrunk, with the line that replays it.
    Bug("global-max", "softmax", _SOFTMAX.format(
        body="top = np.max(x)\n    exps = np.exp(x - (0 if np.isneginf(top) else top))\n"
             "    total = exps.sum(axis=axis, keepdims=True)\n"
             "    return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)"),
        "test_softmax", "sdpa_course.replay(\"ch05\", \"softmax\""),
    Bug("float64-output", "softmax", _SOFTMAX.format(
        body="top = np.max(x, axis=axis, keepdims=True)\n    exps = np.exp(x - np.where(np.isneginf(top), 0, top))\n"
             "    total = exps.sum(axis=axis, keepdims=True)\n"
             "    return np.divide(exps, total, out=np.zeros(exps.shape), where=total != 0)"),
        "test_softmax", "keep the input's dtype"),
    Bug("nan-to-num-warns", "softmax", _SOFTMAX.format(
        body="exps = np.exp(x - x.max(axis=axis, keepdims=True))\n"
             "    return np.nan_to_num(exps / exps.sum(axis=axis, keepdims=True))"),
        "test_softmax", "the notebook asks for no warning"),
    Bug("outer-on-a-batch", "softmax_jacobian", "def softmax_jacobian(p):\n    return np.diagflat(p) - np.outer(p, p)\n",
        "test_softmax_jacobian", "something flattened a batched input"),
    Bug("sum-without-keepdims", "softmax_backward",
        "def softmax_backward(p, grad_p):\n    inner = np.sum(grad_p * p, axis=-1)\n    return p * (grad_p - inner)\n",
        "test_softmax_backward", "pass keepdims=True"),
]
