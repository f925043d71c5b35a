"""Bad input raises ValueError/TypeError whose message names the argument, the shapes and the fix."""
import numpy as np
import pytest

from loops import E, Ev, L, S
from sdpa_lib import (MultiHeadAttention, attention_flops, attention_memory_bytes, attention_weights,
                      causal_mask, combine_masks, cosine_scores, dot_product_scores, entropy, init_projection,
                      mask_to_bias, merge_heads, padding_mask, project_qkv, scaled_dot_product_attention,
                      scaled_dot_product_attention_backward, scaled_scores, softmax, softmax_backward,
                      split_heads, tiled_attention)
from sdpa_lib._checks import check_generator

pytestmark = pytest.mark.filterwarnings("error")

q, k, v = np.ones((L, E)), np.ones((S, E)), np.ones((S, Ev))
ATTENTION = {  # every entry point that takes (query, key, value, attn_mask, ...)
    "sdpa": scaled_dot_product_attention,
    "tiled": tiled_attention,
    "weights": lambda query, key, value, *a, **kw: attention_weights(query, key, *a, **kw),
    "backward": lambda query, key, value, *a, **kw: scaled_dot_product_attention_backward(
        query, key, value, np.ones(np.shape(query)[:-1] + np.shape(value)[-1:]), *a, **kw),
}

# name: (arguments, keyword arguments, exception, message pattern)
ATTENTION_CASES = {
    "query rank 1": ((np.ones(E), k, v), {}, ValueError, r"query must have at least 2 axes \(\.\.\., L, E\); got query.shape=\(4,\)"),
    "key rank 1": ((q, np.ones(E), v), {}, ValueError, r"key must have at least 2 axes \(\.\.\., S, E\)"),
    "mismatched E": ((np.ones((L, 64)), np.ones((S, 32)), v), {}, ValueError, r"query has E=64 but key has E=32"),
    "batch axes": ((np.ones((2, L, E)), np.ones((3, S, E)), np.ones((3, S, Ev))), {}, ValueError,
                   r"leading \(batch\) axes do not broadcast: query batch axes \(2,\), key batch axes \(3,\)"),
    "no keys": ((q, np.ones((0, E)), np.ones((0, Ev))), {}, ValueError, r"key has S=0"),
    "integer query": ((np.ones((L, E), dtype=int), k, v), {}, TypeError, r"query must have dtype float32 or float64; got int64"),
    "bool key": ((q, np.ones((S, E), dtype=bool), v), {}, TypeError, r"key must have dtype float32 or float64; got bool"),
    "complex query": ((q + 1j, k, v), {}, TypeError, r"query must be real .* complex"),
    "float16 query": ((q.astype(np.float16), k, v), {}, TypeError, r"query has dtype float16.*astype\(np.float32\)"),
    "mask too wide": ((q, k, v, np.ones((L, S + 1), bool)), {}, ValueError,
                      r"attn_mask with shape \(5, 8\) does not broadcast to the scores' shape \(\.\.\., L, S\)=\(5, 7\)"),
    "mask stretches L": ((np.ones((1, E)), k, v, np.ones((L, S), bool)), {}, ValueError,
                         r"attn_mask with shape \(5, 7\) does not broadcast .*\(1 or 1, 7 or 1\)"),
    "mask rank 1": ((q, k, v, np.ones(S, bool)), {}, ValueError, r"attn_mask must have at least 2 axes \(\.\.\., L, S\)"),
    "integer mask": ((q, k, v, np.ones((L, S), int)), {}, TypeError, r"attn_mask must be bool .* or float .*astype\(bool\)"),
    "causal and mask": ((q, k, v, np.ones((L, S), bool)), {"is_causal": True}, ValueError,
                        r"either attn_mask or is_causal=True, not both"),
    "scale 0": ((q, k, v), {"scale": 0.0}, ValueError, r"scale must be a positive finite number or None \(meaning 1/sqrt\(E\)\); got 0.0"),
    "scale -1": ((q, k, v), {"scale": -1}, ValueError, r"scale must be a positive finite number"),
    "scale nan": ((q, k, v), {"scale": float("nan")}, ValueError, r"scale must be a positive finite number"),
    "scale inf": ((q, k, v), {"scale": np.inf}, ValueError, r"scale must be a positive finite number"),
    "scale str": ((q, k, v), {"scale": "0.5"}, ValueError, r"scale must be a positive finite number.*got '0.5'"),
    "scale bool": ((q, k, v), {"scale": True}, ValueError, r"scale must be a positive finite number.*got True"),
}
VALUE_CASES = {  # need a value (not attention_weights)
    "key/value lengths": ((q, k, np.ones((S - 1, Ev))), {}, ValueError,
                          r"key and value must share S \(axis -2\); got key.shape=\(7, 4\), value.shape=\(6, 6\)"),
    "value rank 1": ((q, k, np.ones(S)), {}, ValueError, r"value must have at least 2 axes \(\.\.\., S, Ev\)"),
    "integer value": ((q, k, np.ones((S, Ev), dtype=np.int32)), {}, TypeError, r"value must have dtype .* got int32"),
}


def params(cases, functions):
    return [pytest.param(functions[f], *case, id=f"{f}: {name}")
            for name, case in cases.items() for f in functions]


@pytest.mark.parametrize("function, args, kwargs, error, pattern",
                         params(ATTENTION_CASES, ATTENTION)
                         + params(VALUE_CASES, {f: ATTENTION[f] for f in ("sdpa", "tiled", "backward")}))
def test_attention_entry_points_refuse_bad_input(function, args, kwargs, error, pattern):
    """Every attention entry point raises the same clear error for the same bad input."""
    with pytest.raises(error, match=pattern):
        function(*args, **kwargs)


@pytest.mark.parametrize("dropout_p", [-0.1, 1.0, 1.5, float("nan"), None, "0.1", True])
def test_dropout_p_outside_unit_interval(dropout_p):
    """dropout_p must be a number in [0, 1): 1 would drop everything and divide by 0."""
    with pytest.raises(ValueError, match=r"dropout_p must be a number in \[0, 1\); got"):
        scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)


@pytest.mark.parametrize("rng", [3, "seed", np.random.RandomState(0)])
def test_rng_that_is_not_a_generator(rng):
    """rng must be a numpy Generator: an int seed or a legacy RandomState is refused by name."""
    with pytest.raises(TypeError, match=r"rng must be a numpy Generator .*; got (int|str|RandomState)"):
        scaled_dot_product_attention(q, k, v, dropout_p=0.1, rng=rng)


@pytest.mark.parametrize("allow_none", [False, True])
def test_check_generator_names_the_argument(allow_none):
    """check_generator passes a Generator through, names the argument, and takes None only where allowed."""
    generator = np.random.default_rng(0)
    assert check_generator(generator, "noise_rng", allow_none=allow_none) is generator
    with pytest.raises(TypeError, match=r"^noise_rng must be a numpy Generator such as np.random.default_rng\(0\)"
                                        + (r", or None" if allow_none else r"") + r"; got RandomState$"):
        check_generator(np.random.RandomState(0), "noise_rng", allow_none=allow_none)
    if allow_none:
        assert check_generator(None, allow_none=True) is None
    else:
        with pytest.raises(TypeError, match=r"^rng must be a numpy Generator .*; got NoneType$"):
            check_generator(None)


def test_backward_grad_output_with_extra_batch_axes():
    """A grad_output with batch axes the output doesn't have is refused, not silently summed away."""
    with pytest.raises(ValueError, match=r"grad_output must have the output's shape \(\.\.\., L, Ev\) = \(5, 6\); "
                                         r"got grad_output.shape=\(3, 5, 6\)"):
        scaled_dot_product_attention_backward(q, k, v, np.ones((3, L, Ev)))


@pytest.mark.parametrize("block_size", [0, -3, 2.5, True, "8"])
def test_bad_block_size(block_size):
    """block_size must be a positive integer (or None, the default: see test_lib_tiled)."""
    with pytest.raises(ValueError, match=r"block_size must be a positive integer; got"):
        tiled_attention(q, k, v, block_size=block_size)


OTHER_CASES = {
    # heads
    "split_heads num_heads does not divide D": (lambda: split_heads(np.ones((L, 10)), 3), ValueError,
                                                r"num_heads=3 must divide D=10 .*among \[1, 2, 5, 10\]"),
    "split_heads num_heads 0": (lambda: split_heads(np.ones((L, 10)), 0), ValueError, r"num_heads must be a positive integer; got 0"),
    "merge_heads rank 2": (lambda: merge_heads(np.ones((L, E))), ValueError, r"x must have at least 3 axes \(\.\.\., H, L, Dh\)"),
    "MHA num_heads does not divide d_model": (lambda: MultiHeadAttention(10, 3, np.random.default_rng(0)), ValueError,
                                              r"num_heads=3 must divide d_model=10"),
    "MHA num_kv_heads does not divide num_heads": (
        lambda: MultiHeadAttention(12, 6, np.random.default_rng(0), num_kv_heads=4), ValueError,
        r"num_kv_heads=4 must divide num_heads=6"),
    "MHA input of the wrong width": (lambda: MultiHeadAttention(12, 4, np.random.default_rng(0))(np.ones((L, 8))),
                                     ValueError, r"x_query must have D=12 features; got x_query.shape=\(5, 8\)"),
    "MHA key input of the wrong width": (
        lambda: MultiHeadAttention(12, 4, np.random.default_rng(0))(np.ones((L, 12)), np.ones((S, 8))),
        ValueError, r"x_kv must have D=12 features; got x_kv.shape=\(7, 8\)"),
    # masks
    "padding length above S": (lambda: padding_mask([3, S + 1], S), ValueError, r"every length must lie in \[0, S=7\]; got lengths=\[3, 8\]"),
    "padding length negative": (lambda: padding_mask([-1], S), ValueError, r"every length must lie in \[0, S=7\]"),
    "padding float lengths": (lambda: padding_mask([2.5], S), ValueError, r"lengths must be a 1-D sequence of integers"),
    "padding 2-D lengths": (lambda: padding_mask([[1, 2]], S), ValueError, r"lengths must be a 1-D sequence of integers"),
    "causal_mask L=0": (lambda: causal_mask(0), ValueError, r"L must be a positive integer; got 0"),
    "causal_mask float S": (lambda: causal_mask(3, 2.0), ValueError, r"S must be a positive integer; got 2.0"),
    "combine no masks": (lambda: combine_masks(), ValueError, r"combine_masks needs at least one mask"),
    "combine float mask": (lambda: combine_masks(np.ones((2, 2), bool), np.ones((2, 2))), TypeError,
                           r"mask 1 must be bool .*got dtype float64"),
    "combine shapes": (lambda: combine_masks(np.ones((2, 3), bool), np.ones((4, 2), bool)), ValueError,
                       r"masks do not broadcast together: shapes \[\(2, 3\), \(4, 2\)\]"),
    "mask_to_bias int mask": (lambda: mask_to_bias(np.ones(3, int)), TypeError, r"mask must be bool"),
    "mask_to_bias int dtype": (lambda: mask_to_bias(np.ones(3, bool), np.int32), TypeError, r"dtype must be a float type; got int32"),
    # scores and projections
    "dot scores mismatched E": (lambda: dot_product_scores(np.ones((L, 64)), np.ones((S, 32))), ValueError,
                                r"query has E=64 but key has E=32"),
    "cosine scores rank 1": (lambda: cosine_scores(np.ones(E), k), ValueError, r"query must have at least 2 axes"),
    "scaled scores bad scale": (lambda: scaled_scores(q, k, scale=-2.0), ValueError, r"scale must be a positive finite number"),
    "project weight of the wrong D": (lambda: project_qkv(np.ones((L, 8)), np.ones((7, E)), np.ones((8, E)), np.ones((8, Ev))),
                                      ValueError, r"w_q must have shape \(D, E\) with D = x.shape\[-1\] = 8; got w_q.shape=\(7, 4\)"),
    "project w_q and w_k differ in E": (lambda: project_qkv(np.ones((L, 8)), np.ones((8, E)), np.ones((8, 3)), np.ones((8, Ev))),
                                        ValueError, r"w_q and w_k must give the same E"),
    "init_projection without a Generator": (lambda: init_projection(4, 2, 0), TypeError, r"rng must be a numpy Generator"),
    # softmax family
    "softmax integer input": (lambda: softmax(np.arange(3)), TypeError, r"x must have dtype float32 or float64; got int64"),
    "softmax 0-d input": (lambda: softmax(np.float64(1.0)), ValueError, r"x must have at least 1 axes"),
    "softmax_backward shapes": (lambda: softmax_backward(np.ones((2, 3)), np.ones((2, 4))), ValueError,
                                r"grad_p must have the shape of p; got p.shape=\(2, 3\), grad_p.shape=\(2, 4\)"),
    "entropy of integers": (lambda: entropy(np.ones(3, int)), TypeError, r"p must have dtype float32 or float64"),
    # backward and complexity
    "backward grad_output shape": (lambda: scaled_dot_product_attention_backward(q, k, v, np.ones((L, Ev + 1))), ValueError,
                                   r"grad_output must have the output's shape \(\.\.\., L, Ev\) = \(5, 6\); got grad_output.shape=\(5, 7\)"),
    "flops of zero length": (lambda: attention_flops(0, S, E, Ev), ValueError, r"L must be a positive integer; got 0"),
    "memory of a negative batch": (lambda: attention_memory_bytes(L, S, E, Ev, batch=-1), ValueError,
                                   r"batch must be a positive integer; got -1"),
}


@pytest.mark.parametrize("call, error, pattern", OTHER_CASES.values(), ids=OTHER_CASES.keys())
def test_other_functions_refuse_bad_input(call, error, pattern):
    """Heads, masks, scores, softmax, backward and complexity name the argument and the numbers."""
    with pytest.raises(error, match=pattern):
        call()


def test_python_lists_are_accepted_as_float64():
    """Plain Python numbers are not an error: a nested list of ints becomes float64."""
    out = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1.0], [2.0]])
    assert out.dtype == np.float64 and out.shape == (1, 1)
