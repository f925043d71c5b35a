"""Chapter 13's generation lesson: cache sizes of real shapes, prefill against decode, MLA's latent, HBM traffic."""
import numpy as np
import pytest

from sdpa_course.lessons import cost, decoding


def test_model_shapes_are_the_published_ones():
    """Do the shapes behind the chapter's cache table match the papers and configs they cite?"""
    shapes = {m.name: (m.layers, m.heads, m.kv_heads, m.head_dim) for m in decoding.MODELS}
    assert shapes["Llama-2-70B"] == (80, 64, 8, 128) and shapes["Llama-2-7B"] == (32, 32, 32, 128)
    assert shapes["Mistral-7B"] == (32, 32, 8, 128) and shapes["Falcon-7B"] == (32, 71, 1, 64)
    assert all(m.source for m in decoding.MODELS)


def test_cache_per_token_by_family_reuses_kv_cache_bytes_and_mla_is_the_latent_plus_rope_key():
    """Is each family's per-token cache the chapter 6 formula with its KV heads, and MLA's (512 + 64) per layer?"""
    llama = decoding.MODELS[1]
    for family, heads in (("MHA", 64), ("GQA", 8), ("MQA", 1), (None, 8)):
        assert decoding.cache_per_token_bytes(llama, family=family) == cost.kv_cache_bytes(
            layers=80, kv_heads=heads, head_dim=128, tokens=1)
    assert decoding.cache_per_token_bytes(llama, family="MLA") == 80 * 576 * 2
    with pytest.raises(ValueError, match="family must be"):
        decoding.cache_per_token_bytes(llama, family="MoE")


def test_decode_is_memory_bound_and_prefill_compute_bound_on_the_h200():
    """Is a decode step's intensity about the batch size (weights) and the group size (attention), a prefill's far above
    the ridge point?"""
    shape = dict(D=8192, heads=64, kv_heads=8, E=128, context=4096)
    decode = decoding.arithmetic_intensity("decode", tokens=1, **shape)
    batched = decoding.arithmetic_intensity("decode", tokens=1, batch=32, **shape)
    prefill = decoding.arithmetic_intensity("prefill", tokens=4096, **shape)
    ridge = decoding.ridge_point()
    assert decode["weights"]["intensity"] == pytest.approx(1.0, rel=1e-3)
    assert batched["weights"]["intensity"] == pytest.approx(32, rel=0.05)
    assert decode["attention"]["intensity"] == pytest.approx(8.0, rel=0.01) == batched["attention"]["intensity"]
    assert decode["layer"]["intensity"] < ridge < prefill["layer"]["intensity"]
    with pytest.raises(ValueError, match="phase must be"):
        decoding.arithmetic_intensity("train", tokens=1, **shape)


def test_latent_attention_expanded_equals_absorbed_and_keys_have_the_latent_rank():
    """Is attention over keys rebuilt from the latent the same as attention in the latent space, with rank <= d_c?"""
    mla = decoding.LatentKV(48, 4, 8, 6, np.random.default_rng(0))
    x = np.random.default_rng(1).normal(size=(20, 48))
    latent = mla.latent_of(x)
    keys, _ = mla.keys_values(latent)
    assert latent.shape == (20, 6) and keys.shape == (4, 20, 8)
    np.testing.assert_allclose(mla.attend_absorbed(x, latent), mla.attend_expanded(x, latent), atol=1e-12)
    assert np.linalg.matrix_rank(keys.transpose(1, 0, 2).reshape(20, -1)) == 6


def test_hbm_traffic_of_the_explicit_formula_grows_like_l_squared_and_the_fused_ratio_is_about_256_over_e():
    """Does the explicit count grow 4x when L doubles (L >> E), and is the explicit / fused ratio near 256 / E?"""
    ratio_l = decoding.hbm_traffic_bytes(32768, 64, fused=False) / decoding.hbm_traffic_bytes(16384, 64, fused=False)
    assert ratio_l == pytest.approx(4, rel=0.01)
    for E in (64, 128):
        ratio = decoding.hbm_traffic_bytes(16384, E, fused=False) / decoding.hbm_traffic_bytes(16384, E, fused=True)
        assert ratio == pytest.approx(256 / E, rel=0.05)


def test_matmul_rate_is_a_positive_rate():
    """Does the measurement return FLOPs per second for both shapes (its size is the machine's, not asserted)?"""
    assert decoding.matmul_rate(1, 64, repeats=1) > 0 and decoding.matmul_rate(8, 64, repeats=1) > 0
