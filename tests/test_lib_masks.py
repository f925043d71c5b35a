"""causal_mask, padding_mask, combine_masks and mask_to_bias: True = may attend."""
import numpy as np
import pytest

from loops import B, L, S, causal_mask_loop, padding_mask_loop, random_bool_mask
from sdpa_lib import causal_mask, combine_masks, mask_to_bias, padding_mask

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
