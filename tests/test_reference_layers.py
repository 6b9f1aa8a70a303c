"""Chapter 10's core functions against transformers 5, built from tiny configs.

No weights are downloaded (HF_HUB_OFFLINE=1 is enough): each test builds a
config, or a rotary module or attention layer from one, and compares what
transformers computes with posenc_core.

transformers computes inverse frequencies in float32. To compare to 1e-12
relative, its own functions are also run in float64: the very same code
object, with a ``torch`` whose ``float``/``float32`` are float64
(``_float64``; and ``Tensor.float`` is ``Tensor.double`` for the length of
that call, which LongRoPE uses). Each such test checks the float32 run too
(to 2e-6), so the float64 run is known to be the same computation.
"""

import types

import numpy as np
import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gemma4 import modeling_gemma4
from transformers.models.glm import modeling_glm
from transformers.models.gpt_neox import modeling_gpt_neox
from transformers.models.llama4 import modeling_llama4

import posenc_core as pc


class _Torch64(types.ModuleType):
    """torch, except that float32 means float64."""

    float = torch.float64
    float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


_TORCH64 = _Torch64("torch")


def _float64(fn):
    """``fn``'s own code, run with :class:`_Torch64` as its ``torch``."""
    fn = getattr(fn, "__func__", fn)
    glob = dict(fn.__globals__, torch=_TORCH64)
    return types.FunctionType(fn.__code__, glob, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _both(fn, make_config, **kw):
    """(float32, float64) inverse frequencies and attention factors."""
    inv32, att32 = fn(make_config(), "cpu", **kw)
    # LongRoPE's exponents go through Tensor.float(): float64 there too,
    # for the length of the call
    to_float = torch.Tensor.float
    torch.Tensor.float = torch.Tensor.double
    try:
        inv64, att64 = _float64(fn)(make_config(), "cpu", **kw)
    finally:
        torch.Tensor.float = to_float
    assert inv32.dtype == torch.float32 and inv64.dtype == torch.float64
    return inv32.numpy(), inv64.numpy(), att32, att64


def test_reference_version():
    assert transformers.__version__ == "5.24.0"


def _neox(head_dim, base, fraction):
    return transformers.GPTNeoXConfig(
        hidden_size=head_dim * 2, num_attention_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": base,
                         "partial_rotary_factor": fraction})


PARTIAL = [(64, 1e4, 0.25), (128, 1e4, 0.5), (80, 1e4, 0.4),
           (256, 1e7, 0.25), (10, 100.0, 0.5), (64, 5e5, 1.0)]


@pytest.mark.parametrize("head_dim, base, fraction", PARTIAL)
def test_spread_is_gpt_neox_default_with_partial_factor(head_dim, base,
                                                        fraction):
    fn = modeling_gpt_neox.GPTNeoXRotaryEmbedding.compute_default_rope_parameters
    r32, r64, _, _ = _both(fn, lambda: _neox(head_dim, base, fraction))
    got = pc.partial_rope_frequencies(head_dim, fraction, base=base)
    n = r64.size
    np.testing.assert_allclose(got[:n], r64, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got[:n], r32, rtol=2e-6)
    np.testing.assert_array_equal(got[n:], 0.0)


def _gemma4(head_dim=32, global_head_dim=64, fraction=0.25,
            local_base=1e4, global_base=1e6, factor=None, n_layers=6,
            **extra):
    full = {"rope_type": "proportional", "rope_theta": global_base,
            "partial_rotary_factor": fraction}
    if factor is not None:
        full["factor"] = factor
    return transformers.Gemma4TextConfig(
        vocab_size=64, hidden_size=64, intermediate_size=64,
        num_hidden_layers=n_layers, num_attention_heads=2,
        num_key_value_heads=1, head_dim=head_dim,
        global_head_dim=global_head_dim, hidden_size_per_layer_input=8,
        vocab_size_per_layer_input=64,
        rope_parameters={"sliding_attention": {"rope_type": "default",
                                               "rope_theta": local_base},
                         "full_attention": full}, **extra)


@pytest.mark.parametrize("head_dim, base, fraction", PARTIAL)
def test_proportional_is_transformers_proportional(head_dim, base, fraction):
    def config():
        return _gemma4(global_head_dim=head_dim, global_base=base,
                       fraction=fraction)

    fn = ROPE_INIT_FUNCTIONS["proportional"]
    kw = {"layer_type": "full_attention"}
    r32, r64, att32, att64 = _both(fn, config, **kw)
    got = pc.partial_rope_frequencies(head_dim, fraction, base=base,
                                      convention="proportional")
    assert r64.shape == got.shape
    np.testing.assert_allclose(got, r64, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got, r32, rtol=2e-6)
    assert att32 == att64 == 1.0


def test_gemma4_rotary_module_has_both_layer_types():
    config = _gemma4()
    rope = modeling_gemma4.Gemma4TextRotaryEmbedding(config)
    local = rope.sliding_attention_inv_freq.numpy()
    glob = rope.full_attention_inv_freq.numpy()
    np.testing.assert_allclose(local, pc.rope_frequencies(32, base=1e4),
                               rtol=2e-6)
    np.testing.assert_allclose(
        glob, pc.partial_rope_frequencies(64, 0.25, base=1e6,
                                          convention="proportional"),
        rtol=2e-6)


def test_gemma4_rotation_is_apply_rope_half_with_the_zeros():
    # the docstring's claim: Gemma 4 rotates the whole head in the "half"
    # layout, pairs (i, i + d/2), the dropped pairs with frequency 0
    config = _gemma4()
    rope = modeling_gemma4.Gemma4TextRotaryEmbedding(config).double()
    n, d = 7, 64
    rng = np.random.default_rng(0)
    q = rng.normal(size=(1, 2, n, d))
    pos = torch.arange(n)[None]
    cos, sin = rope(torch.zeros(1, dtype=torch.float64), pos,
                    "full_attention")
    ref_q = modeling_gemma4.apply_rotary_pos_emb(
        torch.tensor(q), cos.double(), sin.double())
    omega = pc.partial_rope_frequencies(d, 0.25, base=1e6,
                                        convention="proportional")
    got = pc.apply_rope(q, n, layout="half", frequencies=omega)
    np.testing.assert_allclose(got, ref_q.numpy(), atol=1e-6)


def test_gpt_neox_rotation_is_apply_rope_half_on_the_slice():
    # transformers' partial rotation: "half" layout inside the first r dims
    d, f, n = 32, 0.25, 6
    config = _neox(d, 1e4, f)
    rope = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 1, 2, n, d))
    x = torch.zeros(1, dtype=torch.float64)
    cos, sin = rope(x, torch.arange(n)[None])
    ref_q, _ = modeling_gpt_neox.apply_rotary_pos_emb(
        torch.tensor(q), torch.tensor(k), cos.double(), sin.double())
    r = int(d * f)
    omega = pc.partial_rope_frequencies(d, f)
    got = np.concatenate(
        [pc.apply_rope(q[..., :r], n, layout="half",
                       frequencies=omega[:r // 2]), q[..., r:]], axis=-1)
    np.testing.assert_allclose(got, ref_q.numpy(), atol=1e-6)
    # and it is not apply_rope on the whole head with the zeros
    whole = pc.apply_rope(q, n, layout="half", frequencies=omega)
    assert not np.allclose(whole, ref_q.numpy(), atol=1e-3)


def test_glm_rotation_is_apply_rope_interleaved_on_the_slice():
    # GLM: interleaved pairs (2i, 2i+1) inside the first r dims, unlike
    # GPT-NeoX's "half" layout of the slice (same frequencies, "spread")
    d, f, n = 32, 0.5, 6
    config = transformers.GlmConfig(
        vocab_size=16, hidden_size=2 * d, intermediate_size=16,
        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
        head_dim=d, partial_rotary_factor=f, rope_theta=1e4)
    rope = modeling_glm.GlmRotaryEmbedding(config)
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(2, 1, 2, n, d))
    x = torch.zeros(1, dtype=torch.float64)
    cos, sin = rope(x, torch.arange(n)[None])
    ref_q, _ = modeling_glm.apply_rotary_pos_emb(
        torch.tensor(q), torch.tensor(k), cos.double(), sin.double())
    r = int(d * f)
    omega = pc.partial_rope_frequencies(d, f)
    got = np.concatenate(
        [pc.apply_rope(q[..., :r], n, frequencies=omega[:r // 2]),
         q[..., r:]], axis=-1)
    np.testing.assert_allclose(got, ref_q.numpy(), atol=1e-6)
    half = np.concatenate(
        [pc.apply_rope(q[..., :r], n, layout="half",
                       frequencies=omega[:r // 2]), q[..., r:]], axis=-1)
    assert not np.allclose(half, ref_q.numpy(), atol=1e-3)


# ------------------------------------------------- Llama 4's temperature


def _llama4_config(**kw):
    base = dict(vocab_size=64, hidden_size=32, intermediate_size=32,
                intermediate_size_mlp=32, num_hidden_layers=4,
                num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                num_local_experts=1, floor_scale=4, attn_scale=0.3)
    base.update(kw)
    config = transformers.Llama4TextConfig(**base)
    config._attn_implementation = "eager"
    return config


def _queries_seen_by_attention(config, layer_idx, n, monkeypatch,
                               cache=None):
    seen = {}

    def capture(module, query, key, value, attention_mask, **kwargs):
        seen["q"] = query.detach().clone()
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1],
                           query.shape[3], dtype=query.dtype), None

    monkeypatch.setattr(modeling_llama4, "eager_attention_forward", capture)
    torch.manual_seed(0)
    attn = modeling_llama4.Llama4TextAttention(config, layer_idx).double()
    h = torch.randn(1, n, config.hidden_size, dtype=torch.float64)
    emb = torch.polar(torch.ones(1, n, config.head_dim // 2),
                      torch.zeros(1, n, config.head_dim // 2))
    attn(h, emb, None, cache=cache)
    plain = attn.q_proj(h).view(1, n, -1, config.head_dim).transpose(1, 2)
    return seen["q"], plain.detach()


def test_llama4_nope_layer_scales_queries_by_the_temperature(monkeypatch):
    config = _llama4_config()
    assert config.no_rope_layers == [1, 1, 1, 0]  # every fourth is NoPE
    n = 23
    q, plain = _queries_seen_by_attention(config, 3, n, monkeypatch)
    tau = pc.nope_attention_temperature(n, floor_scale=4, attn_scale=0.3)
    assert len(set(tau.round(12))) == 6  # six steps in 23 tokens
    np.testing.assert_allclose(q.numpy(), plain.numpy()
                               * tau[None, None, :, None], rtol=1e-6)


def test_llama4_rope_layers_have_no_temperature(monkeypatch):
    config = _llama4_config(use_qk_norm=False)
    q, plain = _queries_seen_by_attention(config, 0, 23, monkeypatch)
    # a rotation by angle 0 (the positions' embedding given here) leaves q
    # (up to Llama 4's float32 complex product); the temperature would
    # multiply the last queries by 1 + 0.3 ln 6
    np.testing.assert_allclose(q.numpy(), plain.numpy(), rtol=1e-6)


def test_llama4_temperature_can_be_switched_off(monkeypatch):
    config = _llama4_config(attn_temperature_tuning=False)
    q, plain = _queries_seen_by_attention(config, 3, 23, monkeypatch)
    np.testing.assert_allclose(q.numpy(), plain.numpy(), rtol=1e-12)


# ---------------------------- every RoPE initialisation of transformers

_RNG = np.random.default_rng(27)
#: LongRoPE stretches, as Phi-3's: near 1 (short) and up to ~60 (long)
_SHORT48, _LONG48 = (1 + 0.1 * _RNG.random(48)).tolist(), np.sort(
    1 + 60 * _RNG.random(48)).tolist()
_SHORT32, _LONG32 = (1 + 0.1 * _RNG.random(32)).tolist(), np.sort(
    1 + 30 * _RNG.random(32)).tolist()

#: (rope_type, head_dim, base, max_position_embeddings, rope parameters,
#: seq_len given to the init function)
INITS = [
    ("linear", 128, 1e4, 8192, {"factor": 4.0}, None),
    ("linear", 128, 1e4, 8192, {"factor": 4.0,
                                "partial_rotary_factor": 0.5}, None),
    ("dynamic", 128, 1e4, 4096, {"factor": 2.0}, None),
    ("dynamic", 128, 1e4, 4096, {"factor": 2.0}, 2048),
    ("dynamic", 128, 1e4, 4096, {"factor": 2.0}, 20000),
    ("dynamic", 64, 1e4, 4096, {"factor": 4.0,
                                "partial_rotary_factor": 0.25}, 10000),
    # gpt-oss: head 64, base 150000, YaRN 32 from 4096, truncate false
    ("yarn", 64, 150000.0, 131072, {
        "factor": 32.0, "original_max_position_embeddings": 4096,
        "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}, None),
    # DeepSeek-V3: rotated head 64, YaRN 40 from 4096, mscale 1 and 1
    ("yarn", 64, 10000.0, 163840, {
        "factor": 40.0, "original_max_position_embeddings": 4096,
        "beta_fast": 32, "beta_slow": 1, "mscale": 1.0,
        "mscale_all_dim": 1.0}, None),
    ("yarn", 128, 1e6, 131072, {
        "factor": 4.0, "original_max_position_embeddings": 32768}, None),
    ("yarn", 256, 1e7, 1048576, {
        "factor": 4.0, "original_max_position_embeddings": 262144,
        "partial_rotary_factor": 0.25}, None),
    ("yarn", 128, 1e4, 16384, {
        "factor": 8.0, "original_max_position_embeddings": 2048,
        "attention_factor": 0.9, "mscale": 0.7, "mscale_all_dim": 1.0},
     None),
    # Phi-3 mini 128k: head 96, LongRoPE from 4096 to 131072
    ("longrope", 96, 1e4, 131072, {
        "short_factor": _SHORT48, "long_factor": _LONG48,
        "original_max_position_embeddings": 4096}, None),
    ("longrope", 96, 1e4, 131072, {
        "short_factor": _SHORT48, "long_factor": _LONG48,
        "original_max_position_embeddings": 4096}, 8192),
    ("longrope", 128, 1e4, 65536, {
        "short_factor": _SHORT32, "long_factor": _LONG32, "factor": 16.0,
        "original_max_position_embeddings": 4096,
        "partial_rotary_factor": 0.5}, 4096),
    ("llama3", 128, 500000.0, 131072, {
        "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192}, None),
    ("llama3", 128, 500000.0, 131072, {
        "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "partial_rotary_factor": 0.5}, None),
    ("proportional", 256, 1e6, 131072, {"partial_rotary_factor": 0.25,
                                        "factor": 8.0}, None),
    ("proportional", 512, 1e6, 131072, {"partial_rotary_factor": 0.25},
     None),
]


def _ours(rope_type, max_pos, params, seq_len):
    """The scaling dict of posenc_core for a transformers rope_parameters."""
    ours = {"type": rope_type, **params}
    if rope_type in ("dynamic", "longrope"):
        ours["max_position_embeddings"] = max_pos
    if rope_type == "dynamic" and "factor" not in params:
        ours["factor"] = 1.0
    if seq_len is not None:
        ours["seq_len"] = seq_len
    return ours


@pytest.mark.parametrize("rope_type, head_dim, base, max_pos, params, seq",
                         INITS, ids=[f"{c[0]}-{i}" for i, c in
                                     enumerate(INITS)])
def test_rope_init_functions_match(rope_type, head_dim, base, max_pos,
                                   params, seq):
    def config():
        return transformers.LlamaConfig(
            hidden_size=head_dim * 2, num_attention_heads=2,
            head_dim=head_dim, max_position_embeddings=max_pos,
            rope_parameters={"rope_type": rope_type, "rope_theta": base,
                             **params})

    kw = {} if seq is None else {"seq_len": seq}
    r32, r64, att32, att64 = _both(ROPE_INIT_FUNCTIONS[rope_type], config,
                                   **kw)
    scaling = _ours(rope_type, max_pos, params, seq)
    got = pc.rope_frequencies(head_dim, base=base, scaling=scaling)
    n = r64.size
    np.testing.assert_allclose(got[:n], r64, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got[:n], r32, rtol=2e-6)
    np.testing.assert_array_equal(got[n:], 0.0)
    assert att64 == att32
    assert pc.rope_attention_factor(scaling) == pytest.approx(att64,
                                                              rel=1e-12)


def test_init_cases_are_not_trivial():
    # each scaled case changes the frequencies of plain (partial) RoPE,
    # except dynamic NTK at or below its length, where it must not, and
    # proportional RoPE without a factor (plain p-RoPE)
    changed = []
    for rope_type, head_dim, base, max_pos, params, seq in INITS:
        plain = pc.partial_rope_frequencies(
            head_dim, params.get("partial_rotary_factor", 1.0), base=base,
            convention="proportional" if rope_type == "proportional"
            else "spread")
        got = pc.rope_frequencies(head_dim, base=base, scaling=_ours(
            rope_type, max_pos, params, seq))
        changed.append(not np.allclose(got, plain, rtol=1e-9))
    flat = [i for i, c in enumerate(INITS)
            if c[0] == "dynamic" and (c[5] or 0) <= c[3]
            or c[0] == "proportional" and "factor" not in c[4]]
    assert [i for i, c in enumerate(changed) if not c] == flat


def test_longrope_switches_to_long_factors_past_the_original_length():
    scaling = {"type": "longrope", "short_factor": _SHORT48,
               "long_factor": _LONG48,
               "original_max_position_embeddings": 4096}
    short = pc.rope_frequencies(96, scaling=dict(scaling, seq_len=4096))
    long = pc.rope_frequencies(96, scaling=dict(scaling, seq_len=4097))
    base = pc.rope_frequencies(96)
    np.testing.assert_allclose(short, base / _SHORT48, rtol=1e-15)
    np.testing.assert_allclose(long, base / _LONG48, rtol=1e-15)
