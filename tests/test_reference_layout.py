"""position_layout against transformers 5, layer by layer, from tiny configs.

No weights: each test builds a tiny config (head widths and layer counts of
the real models where they matter, a small hidden size elsewhere) and the
model from it with random weights, then compares, for every layer, what
posenc_core.position_layout reads from ``config.to_dict()`` (or from the
raw keys of a config.json) with what the transformers model does: its
rotary module's inverse frequencies and attention scaling (float32, so to
2e-6 relative), which layers rotate (``self_attn.use_rope``), the layer
types and windows, and ALiBi slopes from ``build_alibi_tensor``.

Sources (references.bib): wolf2020transformers (the configuration and
modeling files of transformers 5.24), grattafiori2024llama3,
meta2025llama4, gemmateam2025gemma3, yang2025qwen3, yang2024qwen2,
jiang2023mistral, deepseekai2024v3, openai2025gptoss, bakouch2025smollm3,
abdin2024phi3, cohere2025commanda, glm2024chatglm, almazrouei2023falcon,
bigscience2022bloom; the real configs of chapter 10's table carry their
own sources (tests/test_ch10_configs.py).
"""

import numpy as np
import pytest
import torch
import transformers
from test_ch10_configs import hf_layers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom import modeling_bloom
from transformers.models.falcon import modeling_falcon

import posenc_core as pc
from posenc_plots import ch10_models

TINY = {"hidden_size": 64, "intermediate_size": 64, "num_attention_heads": 2,
        "num_key_value_heads": 1, "vocab_size": 32064, "pad_token_id": 0}
ATTENTION = {"full_attention": "full", "sliding_attention": "sliding",
             "chunked_attention": "chunked"}


def _model(name, **kw):
    config = getattr(transformers, f"{name}Config")(**{**TINY, **kw})
    torch.manual_seed(0)
    model = getattr(transformers, f"{name}Model")(config).eval()
    return config, model


def _rotary(model, layer_type):
    """(inv_freq, attention_scaling) of the model for one layer type."""
    rot = model.rotary_emb
    if hasattr(rot, f"{layer_type}_inv_freq"):
        return (getattr(rot, f"{layer_type}_inv_freq"),
                getattr(rot, f"{layer_type}_attention_scaling"))
    return rot.inv_freq, rot.attention_scaling


def _uses_rope(attn):
    """Does this attention module rotate? Llama 4 and SmolLM3 say so in
    ``use_rope``; Cohere2Attention rotates where it has a window."""
    if type(attn).__name__ == "Cohere2Attention":
        return attn.sliding_window is not None
    return bool(getattr(attn, "use_rope", True))


def _check(config, model, layers=None):
    """Every layer of position_layout(config.to_dict()) against the model."""
    got = pc.position_layout(config.to_dict()) if layers is None else layers
    assert len(got) == config.num_hidden_layers == len(model.layers)
    types = getattr(config, "layer_types", None)
    for i, (layer, block) in enumerate(zip(got, model.layers, strict=True)):
        attn = getattr(block, "self_attn", None) or block.attention  # NeoX
        assert layer["layer"] == i
        if types is not None:
            assert layer["attention"] == ATTENTION[types[i]], i
        # Mistral keeps its one window in the config (the mask reads it)
        window = getattr(attn, "sliding_window",
                         getattr(config, "sliding_window", None))
        if window is not None or layer["attention"] == "sliding":
            assert layer["window"] == window == config.sliding_window, i
        assert (layer["kind"] == "rope") == _uses_rope(attn), i
        if hasattr(attn, "head_dim") and layer["kind"] == "rope":
            assert layer["head_dim"] == attn.head_dim, i
        if layer["kind"] != "rope":
            assert layer["inverse_frequencies"] is None
            continue
        inv, scaling = _rotary(model, types[i] if types else None)
        inv = inv.double().numpy()
        omega = layer["inverse_frequencies"]
        assert omega.shape == (layer["head_dim"] // 2,)
        np.testing.assert_array_equal(omega[inv.size:], 0.0)
        np.testing.assert_allclose(omega[:inv.size], inv, rtol=2e-6, atol=0)
        assert layer["rotated_pairs"] == int(np.count_nonzero(inv))
        assert layer["attention_factor"] == pytest.approx(scaling, rel=1e-12)
    return got


def test_llama_with_llama3_scaling():
    rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}
    config, model = _model("Llama", num_hidden_layers=3, head_dim=128,
                           rope_parameters=rope)
    got = _check(config, model)
    assert {x["kind"] for x in got} == {"rope"}
    assert {x["attention"] for x in got} == {"full"}
    # the scaling bites: the slowest pair is divided by 8, the fastest kept
    plain = pc.rope_frequencies(128, base=500000.0)
    assert got[0]["inverse_frequencies"][-1] == pytest.approx(plain[-1] / 8)
    assert got[0]["inverse_frequencies"][0] == plain[0]


def test_llama4_scout_nope_layers_chunks_and_step_scaling():
    # Llama 4 Scout's text config: llama3 scaling with low == high == 1,
    # factor 16, theta 5e5, chunks of 8192, every fourth layer NoPE
    rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 16.0,
            "low_freq_factor": 1.0, "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192}
    config, model = _model("Llama4Text", num_hidden_layers=8, head_dim=128,
                           rope_parameters=rope, attention_chunk_size=8192,
                           num_local_experts=2, intermediate_size_mlp=64)
    got = _check(config, model)
    kinds = [x["kind"] for x in got]
    assert kinds == ["rope", "rope", "rope", "nope"] * 2
    assert [x["chunk"] for x in got] == [8192, 8192, 8192, None] * 2
    for x in got:
        attn = model.layers[x["layer"]].self_attn
        if x["kind"] == "nope":
            assert x["temperature"] == {"floor_scale": attn.floor_scale,
                                        "attn_scale": attn.attn_scale}
        else:
            assert x["temperature"] is None
    # no ramp: each pair either kept or divided by 16
    plain = pc.rope_frequencies(128, base=500000.0)
    ratio = plain / got[0]["inverse_frequencies"]
    assert set(np.round(ratio, 9)) == {1.0, 16.0}


def test_llama4_raw_config_without_the_derived_lists():
    # a config.json gives the interval, not the lists: transformers fills
    # no_rope_layers and layer_types in Llama4TextConfig.__post_init__
    raw = {"model_type": "llama4_text", "num_hidden_layers": 8,
           "head_dim": 128, "rope_theta": 500000.0,
           "attention_chunk_size": 8192}
    config = transformers.Llama4TextConfig(**raw)
    got = pc.position_layout(raw)
    assert [x["kind"] == "rope" for x in got] == [
        bool(v) for v in config.no_rope_layers]
    assert [x["attention"] for x in got] == [
        ATTENTION[t] for t in config.layer_types]


def test_rope_frequencies_takes_llama4_scout_scaling():
    rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 16.0,
            "low_freq_factor": 1.0, "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192}
    config = transformers.Llama4TextConfig(head_dim=128, rope_parameters=rope)
    inv, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    assert not torch.isnan(inv).any()
    scaling = {k: v for k, v in rope.items() if k != "rope_theta"}
    got = pc.rope_frequencies(128, base=500000.0, scaling=scaling)
    np.testing.assert_allclose(got, inv.double().numpy(), rtol=2e-6)


def test_gemma3_local_and_global_bases():
    rope = {"full_attention": {"rope_type": "linear", "factor": 8.0,
                               "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default",
                                  "rope_theta": 10000.0}}
    config, model = _model("Gemma3Text", num_hidden_layers=7, head_dim=256,
                           sliding_window=1024, rope_parameters=rope)
    got = _check(config, model)
    assert [x["attention"] for x in got] == ["sliding"] * 5 + ["full",
                                                              "sliding"]
    assert {x["base"] for x in got if x["attention"] == "sliding"} == {1e4}
    assert {x["base"] for x in got if x["attention"] == "full"} == {1e6}


def test_gemma3_legacy_keys():
    # the keys of google/gemma-3-4b-it's text config.json
    raw = {"model_type": "gemma3_text", "num_hidden_layers": 12,
           "head_dim": 256, "hidden_size": 64, "num_attention_heads": 2,
           "rope_theta": 1e6, "rope_local_base_freq": 10000.0,
           "rope_scaling": {"rope_type": "linear", "factor": 8.0},
           "sliding_window": 1024, "sliding_window_pattern": 6}
    config = transformers.Gemma3TextConfig(**{**TINY, **raw})
    torch.manual_seed(0)
    model = transformers.Gemma3TextModel(config).eval()
    _check(config, model, pc.position_layout(raw))


def test_gemma4_proportional_full_layers_with_their_own_width():
    config, model = _model("Gemma4Text", num_hidden_layers=6, head_dim=64,
                           global_head_dim=128, sliding_window=512,
                           hidden_size_per_layer_input=16)
    raw = dict(config.to_dict(), global_head_dim=128)
    got = _check(config, model, pc.position_layout(raw))
    full = [x for x in got if x["attention"] == "full"]
    assert full and all(x["head_dim"] == 128 for x in full)
    assert all(x["convention"] == "proportional" and x["rotated_pairs"] == 16
               for x in full)
    sliding = [x for x in got if x["attention"] == "sliding"]
    assert all(x["head_dim"] == 64 and x["rotated_pairs"] == 32
               for x in sliding)


def test_qwen3_sliding_from_max_window_layers():
    config, model = _model("Qwen3", num_hidden_layers=4, head_dim=128,
                           use_sliding_window=True, sliding_window=64,
                           max_window_layers=2)
    got = _check(config, model)
    assert [x["attention"] for x in got] == ["full"] * 2 + ["sliding"] * 2
    # without the derived layer_types, as in a config.json
    raw = {k: v for k, v in config.to_dict().items() if k != "layer_types"}
    assert [(x["attention"], x["window"]) for x in pc.position_layout(raw)
            ] == [(x["attention"], x["window"]) for x in got]


def test_qwen2_config_json_with_sliding_switched_off():
    # Qwen2.5's config.json: a sliding_window, but use_sliding_window false
    raw = {"num_hidden_layers": 4, "hidden_size": 64,
           "num_attention_heads": 2, "rope_theta": 1e6,
           "sliding_window": 131072, "use_sliding_window": False,
           "max_window_layers": 2}
    config = transformers.Qwen2Config(**raw)
    got = pc.position_layout(raw)
    assert [x["attention"] for x in got] == [
        ATTENTION[t] for t in config.layer_types] == ["full"] * 4


def test_mistral_one_window_for_all_layers():
    config, model = _model("Mistral", num_hidden_layers=3, head_dim=128,
                           sliding_window=4096)
    got = pc.position_layout(config.to_dict())
    assert [x["window"] for x in got] == [4096] * 3
    assert model.config.sliding_window == 4096
    _check(config, model, got)


def test_deepseek_v3_yarn_on_the_rope_part():
    rope = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0,
            "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
            "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}
    config, model = _model("DeepseekV3", num_hidden_layers=2,
                           qk_rope_head_dim=64, qk_nope_head_dim=32,
                           v_head_dim=32, kv_lora_rank=16, q_lora_rank=16,
                           n_routed_experts=4, num_experts_per_tok=2,
                           moe_intermediate_size=32, first_k_dense_replace=1,
                           max_position_embeddings=163840,
                           rope_parameters=rope)
    got = _check(config, model)
    assert got[0]["head_dim"] == 64 and got[0]["attention_factor"] == 1.0
    # the raw config.json has no head_dim: qk_rope_head_dim, not 64 // 2
    raw = {"num_hidden_layers": 2, "hidden_size": 7168,
           "num_attention_heads": 128, "qk_rope_head_dim": 64,
           "rope_theta": 10000.0, "max_position_embeddings": 163840,
           "rope_scaling": dict(rope, type="yarn")}
    np.testing.assert_allclose(pc.position_layout(raw)[1][
        "inverse_frequencies"], got[1]["inverse_frequencies"], rtol=1e-15)


def test_gpt_oss_yarn_without_truncation_and_alternating_windows():
    config, model = _model("GptOss", num_hidden_layers=4, head_dim=64,
                           num_local_experts=2, num_experts_per_tok=1)
    got = _check(config, model)
    assert [x["attention"] for x in got] == ["sliding", "full"] * 2
    assert got[0]["scaling"]["truncate"] is False
    assert got[0]["attention_factor"] == pytest.approx(
        pc.yarn_attention_scale(32.0))


def test_smollm3_nope_layers():
    config, model = _model("SmolLM3", num_hidden_layers=8, head_dim=128)
    got = _check(config, model)
    assert [x["kind"] for x in got] == ["rope", "rope", "rope", "nope"] * 2
    assert all(x["temperature"] is None for x in got)


def test_phi3_longrope_short_and_long():
    short = list(np.linspace(1.0, 2.0, 48))
    long = list(np.linspace(1.0, 40.0, 48))
    rope = {"rope_type": "longrope", "rope_theta": 10000.0,
            "short_factor": short, "long_factor": long}
    config, model = _model("Phi3", num_hidden_layers=2, hidden_size=192,
                           num_attention_heads=2, max_position_embeddings=
                           131072, original_max_position_embeddings=4096,
                           rope_parameters=rope, pad_token_id=0)
    got = _check(config, model)
    inv_long, _ = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu",
                                                  seq_len=4097)
    np.testing.assert_allclose(got[0]["long_inverse_frequencies"],
                               inv_long.double().numpy(), rtol=2e-6)
    assert not np.allclose(got[0]["long_inverse_frequencies"],
                           got[0]["inverse_frequencies"])


def test_cohere2_sliding_pattern():
    config, model = _model("Cohere2", num_hidden_layers=8, head_dim=128,
                           sliding_window=4096)
    got = _check(config, model)
    assert [x["attention"] for x in got] == ["sliding"] * 3 + ["full"] + [
        "sliding"] * 3 + ["full"]
    # the full layers are NoPE (Cohere2Attention rotates in sliding ones)
    assert [x["kind"] for x in got] == ["rope"] * 3 + ["nope"] + [
        "rope"] * 3 + ["nope"]


def test_glm_partial_rotation():
    config, model = _model("Glm", num_hidden_layers=2, head_dim=128)
    got = _check(config, model)
    assert got[0]["fraction"] == 0.5 and got[0]["rotated_pairs"] == 32
    assert got[0]["convention"] == "spread"


@pytest.mark.parametrize("heads", [1, 3, 8, 12])
def test_falcon_and_bloom_alibi(heads):
    mask = torch.ones(1, 2)
    ref = {
        "falcon": modeling_falcon.build_alibi_tensor(mask, heads,
                                                     torch.float64),
        "bloom": modeling_bloom.build_alibi_tensor(mask, heads,
                                                   torch.float64)}
    raws = {"falcon": {"num_hidden_layers": 2, "hidden_size": 64 * heads,
                       "num_attention_heads": heads, "alibi": True},
            "bloom": {"model_type": "bloom", "num_hidden_layers": 2,
                      "hidden_size": 64 * heads, "num_attention_heads": heads}}
    for name, raw in raws.items():
        slopes = ref[name][:, 0, 1].numpy()  # position 1 times the slope
        # Falcon rounds the slopes to bfloat16 (8 significant bits)
        rtol = 2.0**-8 if name == "falcon" else 1e-6
        for layer in pc.position_layout(raw):
            assert layer["kind"] == "alibi" and layer["rotated_pairs"] == 0
            np.testing.assert_allclose(layer["alibi_slopes"], slopes,
                                       rtol=rtol)
    falcon = transformers.FalconConfig(**raws["falcon"])
    assert falcon.alibi and not falcon.rotary


# The real configs of chapter 10's table (results of hub config.json files,
# each with its sources in references.bib), read as transformers reads them:
# test_ch10_configs.hf_layers builds the configuration class and its rotary
# module and lists (has position, window or chunk, inverse frequencies).
MODELS = ch10_models.load_models()


@pytest.mark.parametrize("model", MODELS, ids=[m["id"] for m in MODELS])
def test_the_chapter_10_configs_layer_by_layer(model):
    got = pc.position_layout(model["config"])
    ref = hf_layers(model)
    assert len(got) == len(ref) == model["config"].get(
        "num_hidden_layers", len(ref))
    for layer, (has_position, window, inv) in zip(got, ref, strict=True):
        i = layer["layer"]
        assert (layer["kind"] == "rope") == has_position, i
        size = layer["window"] if layer["chunk"] is None else layer["chunk"]
        assert size == window, i
        if has_position:
            omega = layer["inverse_frequencies"]
            np.testing.assert_allclose(omega[:inv.size], inv, rtol=2e-6,
                                       atol=0)
            np.testing.assert_array_equal(omega[inv.size:], 0.0)
            assert layer["rotated_pairs"] == np.count_nonzero(inv), i


def test_gpt_neox_config_json_keys():
    # Pythia's config.json: rotary_pct and rotary_emb_base, no rope_theta
    raw = {"num_hidden_layers": 2, "hidden_size": 256,
           "num_attention_heads": 2, "rotary_pct": 0.25,
           "rotary_emb_base": 500.0}
    config, model = _model("GPTNeoX", **raw)
    got = _check(config, model, pc.position_layout(raw))
    assert got[0]["base"] == 500.0 and got[0]["rotated_pairs"] == 16
