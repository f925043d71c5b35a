"""causal_mask, padding_mask, combine_masks and mask_to_bias: True = may attend."""
import numpy as np
import pytest

from loops import B, L, S, causal_mask_loop, padding_mask_loop, random_bool_mask, sliding_window_loop
from sdpa_lib import block_diagonal_mask, causal_mask, combine_masks, mask_to_bias, padding_mask, sliding_window_mask

pytestmark = pytest.mark.filterwarnings("error")


@pytest.mark.parametrize("n_rows, n_cols", [(L, None), (L, S), (S, L), (1, S), (S, 1), (1, 1)])
def test_causal_mask_matches_loop(n_rows, n_cols):
    """Is the causal mask lower-triangular and top-left aligned (row i sees keys 0..i) for any L, S?"""
    mask = causal_mask(n_rows, n_cols)
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, causal_mask_loop(n_rows, n_cols))


def test_causal_mask_top_left_alignment_by_hand():
    """L=2, S=4: row 0 sees key 0 only, row 1 keys 0-1; the last two keys are seen by nobody."""
    np.testing.assert_array_equal(causal_mask(2, 4), [[True, False, False, False], [True, True, False, False]])


@pytest.mark.parametrize("lengths", [[0, S], [3, 5], [1], [S, S, 2, 0]])
def test_padding_mask_matches_loop(lengths):
    """Does sequence b attend to its first lengths[b] keys only, shaped (B, 1, S)?"""
    mask = padding_mask(lengths, S)
    assert mask.shape == (len(lengths), 1, S)
    np.testing.assert_array_equal(mask, padding_mask_loop(lengths, S))
    np.testing.assert_array_equal(padding_mask(np.array(lengths, dtype=np.int32), S), mask)


def test_combine_masks_is_logical_and_with_broadcasting():
    """Does combine_masks keep a key only where every mask allows it, broadcasting (L, S) with (B, 1, S)?"""
    rng = np.random.default_rng(20)
    a, b = random_bool_mask(rng, (L, S)), padding_mask([3, 6], S)
    combined = combine_masks(a, b)
    assert combined.shape == (B, L, S)
    for batch in range(B):
        for i in range(L):
            for j in range(S):
                assert combined[batch, i, j] == (a[i, j] and b[batch, 0, j])
    np.testing.assert_array_equal(combine_masks(a), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mask_to_bias(dtype):
    """Is the bias exactly 0 where True and -inf where False, in the asked dtype?"""
    mask = random_bool_mask(np.random.default_rng(21), (B, L, S))
    bias = mask_to_bias(mask, dtype)
    assert bias.dtype == dtype and bias.shape == mask.shape
    assert np.all(bias[mask] == 0) and np.all(np.isneginf(bias[~mask]))


@pytest.mark.parametrize("n_rows, n_cols, window, sinks", [(L, S, 3, 0), (S, L, 2, 0), (L, L, 1, 0), (L, S, S + 4, 0),
                                                           (S, S, 2, 1), (S, S, 3, 4), (1, 1, 1, 0)])
def test_sliding_window_mask_matches_loop(n_rows, n_cols, window, sinks):
    """Does query i see keys i - window < j <= i (and the first `sinks` keys it has reached), top-left aligned?"""
    mask = sliding_window_mask(n_rows, n_cols, window, sinks=sinks)
    assert mask.dtype == np.bool_ and mask.shape == (n_rows, n_cols)
    np.testing.assert_array_equal(mask, sliding_window_loop(n_rows, n_cols, window, sinks))


def test_a_window_as_long_as_the_keys_is_the_causal_mask():
    np.testing.assert_array_equal(sliding_window_mask(L, S, S), causal_mask(L, S))


@pytest.mark.parametrize("bad, message", [({"window": 0}, "window must be a positive integer"),
                                          ({"window": 2.0}, "window must be a positive integer"),
                                          ({"window": 2, "sinks": -1}, "sinks must be a non-negative integer")])
def test_sliding_window_mask_bad_arguments(bad, message):
    with pytest.raises(ValueError, match=message):
        sliding_window_mask(L, S, **bad)


@pytest.mark.parametrize("n_rows, n_cols", [(2, 5), (5, 2), (3, 3)])
def test_bottom_right_causal_mask_puts_the_queries_at_the_end(n_rows, n_cols):
    """With align='bottom_right', is query i the token at position S - L + i?"""
    expected = [[j <= n_cols - n_rows + i for j in range(n_cols)] for i in range(n_rows)]
    np.testing.assert_array_equal(causal_mask(n_rows, n_cols, align="bottom_right"), expected)
    with pytest.raises(ValueError, match="align must be 'top_left' or 'bottom_right'"):
        causal_mask(n_rows, n_cols, align="bottom-right")


def test_block_diagonal_mask_keeps_packed_sequences_apart():
    """Does each token see exactly the tokens of its own packed sequence?"""
    lengths = [3, 1, 2]
    mask = block_diagonal_mask(lengths)
    owner = [0, 0, 0, 1, 2, 2]
    np.testing.assert_array_equal(mask, [[a == b for b in owner] for a in owner])
    with pytest.raises(ValueError, match="positive integers"):
        block_diagonal_mask([2, 0])
