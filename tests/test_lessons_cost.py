"""sdpa_course.lessons.cost (chapter 7 measurements) and lessons.two_heads (chapter 6's two-head task)."""
import numpy as np
import pytest

from sdpa_lib import MultiHeadAttention, scaled_dot_product_attention, tiled_attention
from sdpa_course.lessons import cost
from sdpa_course.profiling import peak_bytes
from sdpa_course.lessons.two_heads import (best_one_head_error, convex_hull_2d, copy_two_task, inside_convex_hull,
                              relative_error, two_head_solution)


@pytest.mark.parametrize("exponent, prefactor", [(1.0, 2.0), (2.0, 0.5), (0.5, 7.0)])
def test_fit_exponent_recovers_power_laws(exponent, prefactor):
    """Does the log-log fit return the exponent and prefactor of an exact power law?"""
    sizes = np.array([16, 32, 64, 128])
    p, c = cost.fit_exponent(sizes, prefactor * sizes ** exponent)
    assert p == pytest.approx(exponent) and c == pytest.approx(prefactor)


@pytest.mark.parametrize("sizes, values", [([1], [1]), ([1, 2], [1, 0]), ([1, 2], [1, 2, 3])])
def test_fit_exponent_refuses_unusable_data(sizes, values):
    """Are too few, non-positive or mismatched points a ValueError?"""
    with pytest.raises(ValueError, match="positive"):
        cost.fit_exponent(sizes, values)


def test_query_by_query_loop_equals_library():
    """Does the one-query-at-a-time loop give the library's numbers (L != S, E != Ev)?"""
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(5, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 6))
    np.testing.assert_allclose(cost.attention_query_by_query(q, k, v), scaled_dot_product_attention(q, k, v))


def test_toy_rnn_matches_its_recurrence():
    """Is every hidden state tanh(x_t W_x + h_{t-1} W_h), batched over leading axes?"""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 3))
    w_x, w_h = cost.rnn_weights(3)
    states = cost.toy_rnn(x, w_x, w_h)
    hidden = np.zeros((2, 3))
    for t in range(5):
        hidden = np.tanh(x[:, t] @ w_x + hidden @ w_h)
        np.testing.assert_allclose(states[:, t], hidden)


@pytest.mark.parametrize("L", [2, 5, 40])
def test_path_length_rnn_is_l_minus_1_attention_is_1(L):
    """Does token 0 reach the last position in L-1 recurrent hops but in one attention call?"""
    assert cost.steps_until_first_reaches_last("rnn", L) == L - 1
    assert cost.steps_until_first_reaches_last("attention", L) == 1
    with pytest.raises(ValueError, match="kind must be"):
        cost.steps_until_first_reaches_last("cnn", L)


def test_layer_flops_cross_at_n_equals_d():
    """Is attention cheaper than the recurrence exactly when L < E?"""
    assert cost.layer_flops("attention", 32, 64) < cost.layer_flops("rnn", 32, 64)
    assert cost.layer_flops("attention", 128, 64) > cost.layer_flops("rnn", 128, 64)
    with pytest.raises(ValueError):
        cost.layer_flops("cnn", 1, 1)


def test_peak_memory_sees_the_score_matrix_and_tiles_avoid_it():
    """Does tracemalloc see the L x S score matrix of the explicit formula, and much less when tiled?"""
    q, k, v = cost.random_qkv(512, 16)
    explicit = peak_bytes(scaled_dot_product_attention, q, k, v)
    tiled = peak_bytes(tiled_attention, q, k, v, block_size=32)
    assert explicit >= 512 * 512 * 8
    assert tiled < explicit / 4


def test_sweep_fits_an_exact_law():
    """Does a sweep return one value per length and the fitted exponent of an exact law?"""
    result = cost.sweep([2, 4, 8], lambda n: 3.0 * n ** 2)
    assert result["values"].shape == (3,) and result["exponent"] == pytest.approx(2.0)


def test_block_size_sweep_memory_grows_with_block():
    """Does a larger block hold more memory, and is the explicit formula's peak reported too?"""
    result = cost.block_size_sweep(256, 8, [16, 256], repeats=1)
    assert result["peak_bytes"][0] < result["peak_bytes"][1]
    assert result["explicit_peak_bytes"] >= 256 * 256 * 8


def test_h200_reference_is_found_and_parsed(tmp_path, monkeypatch):
    """Is the CSV found from anywhere, with explicit OOM at L = 65536 (fwd, E = 64) and flash up to 131072?"""
    monkeypatch.chdir(tmp_path)
    rows = cost.load_h200_reference()
    explicit = cost.h200_series(rows, method="explicit", E=64, pass_="fwd")
    flash = cost.h200_series(rows, method="flash", E=64, pass_="fwd")
    assert explicit["oom_L"] == 65536 and flash["oom_L"] is None and flash["L"].max() == 131072
    assert cost.fit_exponent(explicit["L"], explicit["values"])[0] == pytest.approx(2.0, abs=0.1)
    with pytest.raises(ValueError, match="no rows"):
        cost.h200_series(rows, method="nope")


def test_h200_reference_reads_a_given_file(tmp_path):
    """Does an explicit path replace the package's copy (same parsing, NaN where a run did not finish)?"""
    packaged = cost.load_h200_reference()
    header = "device,dtype,B,H,L,E,pass,method,status,ms,peak_extra_MiB,tflops\n"
    (tmp_path / "mine.csv").write_text(header + "NVIDIA H200,bfloat16,1,16,1024,64,fwd,explicit,OOM,,,\n")
    rows = cost.load_h200_reference(tmp_path / "mine.csv")
    assert len(rows) == 1 < len(packaged) and rows[0]["L"] == 1024 and np.isnan(rows[0]["ms"])


# --- toy task: one head versus two -----------------------------------------------------------

def test_two_heads_solve_the_copy_two_task():
    """Do the hand-set two-head weights reproduce [c_{i-1}, c_0] almost exactly?"""
    x, target = copy_two_task(50, 6, np.random.default_rng(0))
    assert x.shape == target.shape == (50, 6, 12)
    assert relative_error(two_head_solution(6)(x), target) < 1e-8


@pytest.mark.parametrize("mix", [0.0, 0.3, 0.5, 1.0])
def test_one_head_cannot_beat_half_the_variance(mix):
    """Does every single-distribution read-out leave about half the target variance unexplained?"""
    x, target = copy_two_task(400, 6, np.random.default_rng(1))
    assert best_one_head_error(x, target, mix) > 0.4


def test_one_and_two_heads_have_the_same_parameter_count():
    """Splitting d_model into heads costs no parameters: same count for 1, 2 and 4 heads?"""
    counts = {MultiHeadAttention(16, h, np.random.default_rng(0)).parameter_count() for h in (1, 2, 4)}
    assert counts == {4 * 16 * 16}


def test_convex_hull_of_a_square_with_inner_points():
    """Are the hull corners the square's four corners, and inner/outer points classified right?"""
    rng = np.random.default_rng(3)
    square = np.array([[0, 0], [2, 0], [2, 2], [0, 2]], dtype=float)
    hull = convex_hull_2d(np.vstack([square, rng.uniform(0.1, 1.9, size=(20, 2))]))
    assert sorted(map(tuple, hull)) == sorted(map(tuple, square))
    np.testing.assert_array_equal(inside_convex_hull([[1, 1], [3, 1], [2, 2]], hull), [True, False, True])
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        convex_hull_2d([[0, 0], [1, 1]])


@pytest.mark.parametrize("D", [64, 512, 4096])
def test_layer_parts_add_up_and_attention_matches_the_library(D):
    """Do the parts of a layer's FLOPs add to the total, with attention the library's 4 L^2 D?"""
    from sdpa_lib import attention_flops
    parts = cost.transformer_layer_flops(3 * D, D)
    assert parts["total"] == parts["projections"] + parts["attention"] + parts["ffn"]
    assert parts["attention"] == attention_flops(3 * D, 3 * D, D, D)
    assert parts["projections"] == 8 * 3 * D * D**2 and parts["ffn"] == 16 * 3 * D * D**2


@pytest.mark.parametrize("D, against, others", [
    (256, "projections", lambda p: p["projections"]),
    (256, "layer", lambda p: p["projections"] + p["ffn"]),
    (1000, "layer", lambda p: p["projections"] + p["ffn"]),
])
def test_crossover_is_where_attention_equals_the_rest(D, against, others):
    """Is attention's L^2 term equal to the rest exactly at the crossover, smaller below, larger above?"""
    L = cost.attention_crossover_length(D, against=against)
    assert cost.transformer_layer_flops(L, D)["attention"] == others(cost.transformer_layer_flops(L, D))
    below, above = cost.transformer_layer_flops(L - 1, D), cost.transformer_layer_flops(L + 1, D)
    assert below["attention"] < others(below) and above["attention"] > others(above)


def test_crossover_refuses_an_unknown_comparison():
    with pytest.raises(ValueError, match="against must be"):
        cost.attention_crossover_length(64, against="rnn")


def test_kv_cache_bytes_counts_keys_and_values_of_every_layer_head_and_token():
    """Does the cache formula match the bytes of actual K and V arrays (2 layers, G = 3, batch 2)?"""
    layers, G, head_dim, tokens, batch = 2, 3, 5, 7, 2
    arrays = [np.zeros((batch, G, tokens, head_dim), dtype=np.float16) for _ in range(2 * layers)]  # K, V per layer
    assert cost.kv_cache_bytes(layers=layers, kv_heads=G, head_dim=head_dim, tokens=tokens, batch=batch) == \
        sum(a.nbytes for a in arrays)


def test_tokens_where_cache_equals_weights_is_the_break_even_point():
    """At that many tokens is the cache as large as the weights (and larger with more)?"""
    shape = dict(layers=80, kv_heads=8, head_dim=128)
    tokens = cost.tokens_where_cache_equals_weights(70e9, **shape)
    assert cost.kv_cache_bytes(tokens=int(tokens) + 1, **shape) > 70e9 * 2 > cost.kv_cache_bytes(tokens=int(tokens), **shape)
    with pytest.raises(ValueError, match="parameters must be positive"):
        cost.tokens_where_cache_equals_weights(0, **shape)
