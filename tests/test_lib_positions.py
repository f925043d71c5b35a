"""apply_rope, rope_frequencies, alibi_slopes and alibi_bias: positions put into the scores."""
import numpy as np
import pytest

from loops import B, H, L, S, randn, rope_loop
from sdpa_lib import alibi_bias, alibi_slopes, apply_rope, rope_frequencies, scaled_dot_product_attention

pytestmark = pytest.mark.filterwarnings("error")
E = 8  # RoPE needs an even E; the legend's E = 4 would leave only two pairs


@pytest.mark.parametrize("shape, positions", [((L, E), np.arange(L)), ((B, H, L, E), np.arange(L) + 40),
                                              ((B, L, E), np.arange(B * L).reshape(B, L)), ((1, 2), [7])])
def test_rope_matches_the_loop_spec(shape, positions):
    """Is every pair (i, i + E/2) turned by position * base^(-2i/E), whatever the leading axes?"""
    x = randn(np.random.default_rng(1), shape)
    np.testing.assert_allclose(apply_rope(x, positions), rope_loop(x, positions), atol=1e-12)
    np.testing.assert_allclose(apply_rope(x, positions, base=50.0), rope_loop(x, positions, 50.0), atol=1e-12)


def test_rope_is_a_rotation_and_the_identity_at_position_0():
    """Does each pair keep its length, and does position 0 change nothing?"""
    x = randn(np.random.default_rng(2), (L, E))
    y = apply_rope(x, np.arange(L) * 1000)
    half = E // 2
    np.testing.assert_allclose(np.hypot(y[:, :half], y[:, half:]), np.hypot(x[:, :half], x[:, half:]))
    np.testing.assert_array_equal(apply_rope(x, np.zeros(L, dtype=int)), x)


@pytest.mark.parametrize("shift", [1, 17, 1000, -3])
def test_rope_scores_depend_only_on_the_offset(shift):
    """Is q_m . k_n after rotation the same when both positions move by the same amount (the relative property)?"""
    rng = np.random.default_rng(3)
    q, k = randn(rng, (L, E)), randn(rng, (S, E))
    m, n = rng.integers(0, 50, size=L), rng.integers(0, 50, size=S)
    scores = apply_rope(q, m) @ apply_rope(k, n).T  # (L, S)
    shifted = apply_rope(q, m + shift) @ apply_rope(k, n + shift).T
    np.testing.assert_allclose(scores, shifted, atol=1e-12)
    np.testing.assert_allclose(scores, np.einsum("le,lse->ls", q, apply_rope(np.broadcast_to(k, (L, S, E)),
                                                                         n[None, :] - m[:, None])), atol=1e-12)


def test_interleaved_layout_is_the_same_rotation_with_permuted_features():
    """Is the interleaved layout rotate-half applied to the features reordered evens-then-odds, as the Notes say?"""
    x = randn(np.random.default_rng(4), (L, E))
    order = np.r_[0:E:2, 1:E:2]  # P: even features, then odd ones
    back = np.argsort(order)  # P^-1
    np.testing.assert_allclose(apply_rope(x[:, order], np.arange(L))[:, back],
                               rope_loop(x, np.arange(L), interleaved=True), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rope_keeps_the_dtype_and_far_positions_stay_accurate(dtype):
    """Does float32 stay float32, and is position 100000 rotated as accurately as the dtype allows?"""
    x = randn(np.random.default_rng(5), (L, E), dtype)
    y = apply_rope(x, np.arange(L) + 100_000)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, rope_loop(x, np.arange(L) + 100_000), rtol=1e-5, atol=1e-5)


def test_rope_frequencies_by_hand():
    """theta_i = base^(-2i/E): E = 6, base 64 gives 1, 1/4, 1/16."""
    np.testing.assert_allclose(rope_frequencies(6, base=64.0), [1.0, 0.25, 0.0625])


@pytest.mark.parametrize("call, error, message", [
    (lambda: apply_rope(np.ones((L, 5)), np.arange(L)), ValueError, r"E must be even; got E=5"),
    (lambda: apply_rope(np.ones((L, E)), np.arange(L + 1)), ValueError,
     r"positions must broadcast to x's \(\.\.\., L\) = \(5,\).*got positions.shape=\(6,\)"),
    (lambda: apply_rope(np.ones((L, E)), np.ones(L, bool)), TypeError, r"positions must hold integers.*bool"),
    (lambda: apply_rope(np.ones((L, E)), np.full(L, np.nan)), ValueError, r"positions must be finite"),
    (lambda: apply_rope(np.ones((L, E)), np.arange(L), base=1.0), ValueError, r"base must be a finite number greater than 1"),
    (lambda: apply_rope(np.ones((L, E), int), np.arange(L)), TypeError, r"x must have dtype float32 or float64"),
])
def test_rope_bad_input_names_the_argument(call, error, message):
    """Is an odd E, a wrong number of positions, bool or NaN positions, a base <= 1 or int x refused by name?"""
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("heads", [1, 2, 3, 5, 8, 12, 16])
def test_alibi_slopes_follow_press_et_al(heads):
    """Powers of two: 2^(-8h/H); others: the power of two below, then every other slope of twice that."""
    def reference(n):  # the paper's code (ofirpress/attention_with_linear_biases), written out
        start = 2 ** (-2 ** -(np.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    below = 2 ** int(np.floor(np.log2(heads)))
    expected = reference(below) + reference(2 * below)[0::2][:heads - below]
    np.testing.assert_allclose(alibi_slopes(heads), expected)


def test_alibi_bias_is_minus_slope_times_distance_and_leaves_the_diagonal_alone():
    """Is the bias -m_h |i - j| of shape (H, L, S), exactly 0 on the diagonal, and usable as a float attn_mask?"""
    bias = alibi_bias(L, S, num_heads=H)
    assert bias.shape == (H, L, S)
    i, j = np.indices((L, S))
    np.testing.assert_allclose(bias, -alibi_slopes(H)[:, None, None] * np.abs(i - j))
    assert (np.diagonal(bias, axis1=1, axis2=2) == 0).all()
    rng = np.random.default_rng(6)
    q, k, v = randn(rng, (H, L, 4)), randn(rng, (H, S, 4)), randn(rng, (H, S, 3))
    assert scaled_dot_product_attention(q, k, v, bias).shape == (H, L, 3)
