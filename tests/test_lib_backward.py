"""scaled_dot_product_attention_backward: the chain-rule loop spec and central finite differences."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loops import B, E, Ev, H, L, S, attention_backward_loop, randn, random_bool_mask
from sdpa_lib import scaled_dot_product_attention, scaled_dot_product_attention_backward

pytestmark = pytest.mark.filterwarnings("error")

# (query, key, value shapes, mask shape or None, is_causal, scale)
CASES = {
    "2-D": ((L, E), (S, E), (S, Ev), None, False, None),
    "heads": ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), None, False, None),
    "shared keys are summed over the batch": ((B, L, E), (S, E), (S, Ev), None, False, None),
    "size-1 axes": ((B, 1, L, E), (1, H, S, E), (1, H, S, Ev), None, False, 0.7),
    "bool mask": ((B, L, E), (B, S, E), (B, S, Ev), (B, L, S), False, None),
    "causal, L > S": ((B, S, E), (B, L, E), (B, L, Ev), None, True, None),
}


def make_case(name, dtype=np.float64):
    q_shape, k_shape, v_shape, mask_shape, is_causal, scale = CASES[name]
    rng = np.random.default_rng(30)
    q, k, v = randn(rng, q_shape, dtype), randn(rng, k_shape, dtype), randn(rng, v_shape, dtype)
    mask = None if mask_shape is None else random_bool_mask(rng, mask_shape, 0.6)
    out_shape = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal, scale=scale).shape
    grad_out = randn(rng, out_shape, dtype)
    return (q, k, v, grad_out), dict(attn_mask=mask, is_causal=is_causal, scale=scale)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-11), (np.float32, 1e-4)])
def test_backward_matches_loop(name, dtype, tol):
    """Do dq, dk, dv agree with the entry-by-entry chain rule, with the inputs' shapes and dtype?"""
    args, options = make_case(name, dtype)
    grads = scaled_dot_product_attention_backward(*args, **options)
    specs = attention_backward_loop(*args, **options)
    for grad, spec, x in zip(grads, specs, args):
        assert grad.shape == x.shape and grad.dtype == dtype
        np.testing.assert_allclose(grad, spec, rtol=tol, atol=tol)


def finite_difference(loss, x, h=1e-6):
    """Central differences of the scalar ``loss()`` with respect to every entry of ``x`` (edited in place)."""
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        saved = x[index]
        x[index] = saved + h
        up = loss()
        x[index] = saved - h
        down = loss()
        x[index] = saved
        grad[index] = (up - down) / (2 * h)
    return grad


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 5), n_keys=st.integers(1, 6),
       masked=st.booleans(), is_causal=st.booleans(), scale=st.sampled_from([None, 0.5]))
def test_backward_agrees_with_central_differences(seed, n_rows, n_keys, masked, is_causal, scale):
    """Is the analytic gradient of sum(grad_out * attention(q, k, v)) the numerical one, masks included?"""
    rng = np.random.default_rng(seed)
    q, k, v = randn(rng, (2, n_rows, 3)), randn(rng, (2, n_keys, 3)), randn(rng, (2, n_keys, 2))
    grad_out = randn(rng, (2, n_rows, 2))
    mask = random_bool_mask(rng, (n_rows, n_keys), 0.6) if masked and not is_causal else None
    options = dict(is_causal=is_causal, scale=scale)

    def loss():
        return float(np.sum(grad_out * scaled_dot_product_attention(q, k, v, mask, **options)))

    analytic = scaled_dot_product_attention_backward(q, k, v, grad_out, mask, **options)
    for x, grad in zip((q, k, v), analytic):
        np.testing.assert_allclose(grad, finite_difference(loss, x), atol=1e-7)


def test_fully_masked_rows_have_zero_gradient():
    """A query row that sees no key contributes nothing: its dq row is 0 and it adds nothing to dk, dv."""
    (q, k, v, g), _ = make_case("2-D")
    mask = np.ones((L, S), dtype=bool)
    mask[2] = False
    dq, dk, dv = scaled_dot_product_attention_backward(q, k, v, g, mask)
    np.testing.assert_array_equal(dq[2], 0.0)
    g_without_row = g.copy()
    g_without_row[2] = 123.0  # the gradient arriving at the dead row must not matter
    _, dk2, dv2 = scaled_dot_product_attention_backward(q, k, v, g_without_row, mask)
    np.testing.assert_allclose(dk2, dk, atol=1e-14)
    np.testing.assert_allclose(dv2, dv, atol=1e-14)
