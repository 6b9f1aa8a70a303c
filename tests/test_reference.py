"""posenc_core against independent implementations used in the field.

Hugging Face transformers (with PyTorch) is the reference here: its XLM and
Marian sinusoidal tables, GPT-J and LLaMA rotary embeddings, T5 buckets,
BLOOM's ALiBi slopes and its RoPE scaling functions. These are required test
dependencies (requirements-test.txt): a missing package fails, never skips.
"""

import numpy as np
import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama
from transformers.models.marian.modeling_marian import (
    MarianSinusoidalPositionalEmbedding,
)
from transformers.models.t5.modeling_t5 import T5Attention
from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

import posenc_core as pc


def test_reference_versions_are_the_pinned_ones():
    # The comparisons below were written against these releases.
    assert transformers.__version__.startswith("5.")
    assert torch.__version__.startswith("2.")


@pytest.mark.parametrize("n, d", [(50, 16), (1000, 512), (7, 2)])
def test_sinusoidal_interleaved_matches_xlm(n, d):
    ref = create_sinusoidal_embeddings(n, d, torch.empty(n, d)).numpy()
    np.testing.assert_allclose(pc.sinusoidal_encoding(n, d), ref, atol=1e-6)


@pytest.mark.parametrize("n, d", [(50, 16), (1000, 512)])
def test_sinusoidal_concat_matches_marian(n, d):
    ref = MarianSinusoidalPositionalEmbedding(n, d).create_weight().numpy()
    got = pc.sinusoidal_encoding(n, d, layout="concat")
    np.testing.assert_allclose(got, ref, atol=1e-6)


def _angles(n, d, base=10000.0):
    pos = torch.arange(n, dtype=torch.float64)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    return pos[:, None] * base ** (-i / d)[None, :]


@pytest.mark.parametrize("n, d, base", [(9, 8, 10000.0), (64, 128, 500000.0)])
def test_rope_half_matches_llama(n, d, base):
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, 3, n, d))  # (batch, heads, n, d)
    emb = torch.cat([_angles(n, d, base)] * 2, dim=-1)[None]
    ref_q, ref_k = modeling_llama.apply_rotary_pos_emb(
        torch.tensor(q), torch.tensor(k), emb.cos(), emb.sin())
    for x, ref in ((q, ref_q), (k, ref_k)):
        got = pc.apply_rope(x, n, base=base, layout="half")
        np.testing.assert_allclose(got, ref.numpy(), atol=1e-12)


@pytest.mark.parametrize("n, d", [(9, 8), (64, 64)])
def test_rope_interleaved_matches_gptj(n, d):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, n, 4, d))  # GPT-J: (batch, n, heads, d)
    ang = _angles(n, d)[None].expand(2, n, d // 2)
    ref = modeling_gptj.apply_rotary_pos_emb(
        torch.tensor(x), ang.sin(), ang.cos()).numpy()
    got = pc.apply_rope(np.swapaxes(x, 1, 2), n)  # ours: (..., n, d)
    np.testing.assert_allclose(np.swapaxes(got, 1, 2), ref, atol=1e-12)


def test_gptj_table_is_our_concat_encoding():
    ref = modeling_gptj.create_sinusoidal_positions(100, 64).numpy()
    got = pc.sinusoidal_encoding(100, 64, layout="concat")
    np.testing.assert_allclose(got, ref, atol=1e-5)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(
    "num_buckets, max_distance", [(32, 128), (16, 64), (64, 256), (8, 20)])
def test_t5_buckets_match_transformers(bidirectional, num_buckets,
                                       max_distance):
    rel = np.arange(-3000, 3001)
    ref = T5Attention._relative_position_bucket(
        torch.tensor(rel), bidirectional=bidirectional,
        num_buckets=num_buckets, max_distance=max_distance).numpy()
    got = pc.t5_relative_position_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets,
        max_distance=max_distance)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("n_heads", [1, 2, 3, 5, 6, 8, 12, 16, 20, 32, 40, 64])
def test_alibi_slopes_match_bloom(n_heads):
    ref = _get_alibi_slopes(n_heads, "cpu").numpy()
    np.testing.assert_allclose(pc.alibi_slopes(n_heads), ref, rtol=1e-6)


def _config(head_dim, base, params):
    return transformers.LlamaConfig(
        hidden_size=head_dim * 4, num_attention_heads=4, head_dim=head_dim,
        max_position_embeddings=131072,
        rope_parameters={"rope_theta": base, **params})


SCALINGS = [
    (128, 500000.0, {"rope_type": "llama3", "factor": 8.0,
                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192}),
    (64, 10000.0, {"rope_type": "llama3", "factor": 4.0,
                   "low_freq_factor": 2.0, "high_freq_factor": 8.0,
                   "original_max_position_embeddings": 2048}),
    (128, 10000.0, {"rope_type": "yarn", "factor": 16.0,
                    "original_max_position_embeddings": 4096,
                    "beta_fast": 32.0, "beta_slow": 1.0}),
    (64, 10000.0, {"rope_type": "yarn", "factor": 4.0,
                   "original_max_position_embeddings": 2048,
                   "beta_fast": 16.0, "beta_slow": 2.0}),
    (128, 10000.0, {"rope_type": "linear", "factor": 4.0}),
]


@pytest.mark.parametrize("head_dim, base, params", SCALINGS)
def test_rope_scaling_matches_transformers(head_dim, base, params):
    ref, _ = ROPE_INIT_FUNCTIONS[params["rope_type"]](
        _config(head_dim, base, params), "cpu")
    got = pc.rope_frequencies(head_dim, base=base, scaling=params)
    np.testing.assert_allclose(got, ref.numpy(), rtol=2e-6)


@pytest.mark.parametrize("factor", [1.0, 2.0, 16.0, 40.0])
def test_yarn_attention_scale_matches_transformers(factor):
    params = {"rope_type": "yarn", "factor": factor,
              "original_max_position_embeddings": 4096}
    _, ref = ROPE_INIT_FUNCTIONS["yarn"](_config(128, 10000.0, params), "cpu")
    assert pc.yarn_attention_scale(factor) == pytest.approx(ref, rel=1e-12)


def test_ntk_matches_dynamic_ntk_at_its_target_length():
    # transformers' "dynamic" NTK scaling changes the base to
    # base * (f * seq_len / L - (f - 1)) ** (d / (d - 2)); with f = 1 this is
    # our NTK-aware base * s ** (d / (d - 2)) for s = seq_len / L.
    params = {"rope_type": "dynamic", "factor": 1.0}
    config = _config(128, 10000.0, params)
    config.max_position_embeddings = 2048
    ref, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=4 * 2048)
    got = pc.rope_frequencies(128, scaling={"type": "ntk", "factor": 4.0})
    np.testing.assert_allclose(got, ref.numpy(), rtol=2e-6)
