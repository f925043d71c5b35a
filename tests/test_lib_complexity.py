"""attention_flops and attention_memory_bytes: hand counts and the sizes of the real arrays."""
import numpy as np
import pytest

from loops import E, Ev, L, S, randn
from sdpa_lib import attention_flops, attention_memory_bytes, attention_weights, scaled_dot_product_attention
from sdpa_lib.tiled import default_block_size

pytestmark = pytest.mark.filterwarnings("error")


@pytest.mark.parametrize("sizes, flops", [
    ((1024, 1024, 64, 64), 4 * 1024 * 1024 * 64),  # the FlashAttention-paper count 4 L S E
    ((L, S, E, Ev), 2 * L * S * E + 2 * L * S * Ev),
    ((1, 1, 1, 1), 4),  # one multiply-add for q.k and one for p*v
])
def test_flops_by_hand(sizes, flops):
    """Is a multiply-add 2 operations, QK^T 2LSE and PV 2LSEv?"""
    assert attention_flops(*sizes) == flops
    assert attention_flops(*sizes, include_softmax=True) == flops + 5 * sizes[0] * sizes[1]


def test_flops_grow_quadratically_in_length():
    """Doubling L and S quadruples the work; doubling E doubles the QK^T part only."""
    assert attention_flops(2 * L, 2 * S, E, Ev) == 4 * attention_flops(L, S, E, Ev)
    assert attention_flops(L, S, 2 * E, Ev) - attention_flops(L, S, E, Ev) == 2 * L * S * E


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [1, 3])
def test_memory_matches_the_arrays_the_library_allocates(dtype, batch):
    """Do inputs, output and the L x S intermediate equal the nbytes of the real numpy arrays?"""
    rng = np.random.default_rng(60)
    q, k, v = randn(rng, (batch, L, E), dtype), randn(rng, (batch, S, E), dtype), randn(rng, (batch, S, Ev), dtype)
    sizes = attention_memory_bytes(L, S, E, Ev, dtype=dtype, batch=batch)
    assert sizes["inputs"] == q.nbytes + k.nbytes + v.nbytes
    assert sizes["output"] == scaled_dot_product_attention(q, k, v).nbytes
    assert sizes["intermediate"] == attention_weights(q, k).nbytes
    assert sizes["total"] == sizes["inputs"] + sizes["output"] + sizes["intermediate"]


def test_tiled_memory_is_independent_of_length():
    """The tiled intermediate is one block x block tile plus running output, max and sum: flat in L, S."""
    small = attention_memory_bytes(1024, 1024, 64, 64, tiled=True, block_size=128)
    large = attention_memory_bytes(8192, 8192, 64, 64, tiled=True, block_size=128)
    assert small["intermediate"] == large["intermediate"] == (128 * 128 + 128 * (64 + 2)) * 4
    assert attention_memory_bytes(8192, 8192, 64, 64)["intermediate"] == 8192 * 8192 * 4
    # a block larger than the matrix: the tile is min(b, L) x min(b, S), the whole (L, S) matrix here
    assert attention_memory_bytes(L, S, E, Ev, tiled=True, block_size=256)["intermediate"] == (L * S + L * (Ev + 2)) * 4


@pytest.mark.parametrize("sizes", [(1024, 1024), (16384, 16384), (1, 4096), (300, 5000)])
@pytest.mark.parametrize("dtype, batch", [(np.float32, 1), (np.float64, 1), (np.float32, 16)])
def test_tiled_memory_uses_the_tiled_default_block(sizes, dtype, batch):
    """Without block_size, is the tiled memory the one of tiled_attention's default block for the same L, S, dtype, batch?"""
    n_rows, n_keys = sizes
    block = default_block_size(n_rows, n_keys, itemsize=np.dtype(dtype).itemsize, batch=batch)
    assert (attention_memory_bytes(n_rows, n_keys, 64, 64, dtype=dtype, batch=batch, tiled=True)
            == attention_memory_bytes(n_rows, n_keys, 64, 64, dtype=dtype, batch=batch, tiled=True, block_size=block))
