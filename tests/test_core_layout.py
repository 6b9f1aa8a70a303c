"""Unit tests of posenc_core.position_layout (a model's layers, chapter 10).

transformers itself is compared in test_reference_layout.py; here, the
rules of the docstring one by one, and the refusals naming their key.
"""

import numpy as np
import pytest

import posenc_core as pc


def test_head_width_from_hidden_size_and_heads():
    (layer,) = pc.position_layout({"num_hidden_layers": 1,
                                   "hidden_size": 96,
                                   "num_attention_heads": 4})
    assert layer["head_dim"] == 24 and layer["rotated_pairs"] == 12
    np.testing.assert_array_equal(layer["inverse_frequencies"],
                                  pc.rope_frequencies(24))
    assert layer["base"] == 10000.0 and layer["attention_factor"] == 1.0


def test_odd_rotated_width_has_ceil_half_pairs():
    # int(8 * 0.375) = 3 rotated dimensions: 2 pairs, as transformers
    (layer,) = pc.position_layout({"num_hidden_layers": 1, "head_dim": 8,
                                   "partial_rotary_factor": 0.375})
    assert layer["rotated_pairs"] == 2
    np.testing.assert_array_equal(
        layer["inverse_frequencies"],
        pc.partial_rope_frequencies(8, 0.375))
    assert np.count_nonzero(layer["inverse_frequencies"]) == 2


def test_proportional_pairs_and_convention():
    (layer,) = pc.position_layout({
        "num_hidden_layers": 1, "head_dim": 16,
        "rope_parameters": {"rope_type": "proportional",
                            "partial_rotary_factor": 0.25,
                            "rope_theta": 100.0}})
    assert layer["convention"] == "proportional"
    assert layer["rotated_pairs"] == 2
    np.testing.assert_array_equal(
        layer["inverse_frequencies"],
        pc.partial_rope_frequencies(16, 0.25, base=100.0,
                                    convention="proportional"))


def test_interval_and_list_of_nope_layers_agree():
    by_list = pc.position_layout({"num_hidden_layers": 6, "head_dim": 4,
                                  "no_rope_layers": [1, 0, 1, 0, 1, 0]})
    by_interval = pc.position_layout({"num_hidden_layers": 6, "head_dim": 4,
                                      "no_rope_layer_interval": 2})
    assert [x["kind"] for x in by_list] == [x["kind"] for x in by_interval]
    assert [x["kind"] for x in by_list] == ["rope", "nope"] * 3
    nope = by_list[1]
    assert nope["inverse_frequencies"] is None and nope["base"] is None
    assert nope["rotated_pairs"] == 0 and nope["temperature"] is None


def test_llama4_model_type_turns_on_the_temperature():
    layers = pc.position_layout({"model_type": "llama4_text",
                                 "num_hidden_layers": 4, "head_dim": 4,
                                 "attn_scale": 0.2})
    assert [x["kind"] for x in layers] == ["rope"] * 3 + ["nope"]
    assert layers[3]["temperature"] == {"floor_scale": 8192, "attn_scale": 0.2}
    # off when the config says so
    off = pc.position_layout({"model_type": "llama4_text",
                              "num_hidden_layers": 4, "head_dim": 4,
                              "attn_temperature_tuning": False})
    assert off[3]["temperature"] is None


def test_sliding_window_pattern_and_local_base():
    layers = pc.position_layout({
        "num_hidden_layers": 6, "head_dim": 8, "rope_theta": 1e6,
        "rope_local_base_freq": 1e4, "sliding_window": 512,
        "sliding_window_pattern": 3,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0}})
    assert [x["attention"] for x in layers] == ["sliding", "sliding",
                                                "full"] * 2
    assert [x["window"] for x in layers] == [512, 512, None] * 2
    full, local = layers[2], layers[0]
    assert full["base"] == 1e6 and full["scaling"]["type"] == "linear"
    assert local["base"] == 1e4 and local["scaling"]["type"] == "default"
    np.testing.assert_allclose(full["inverse_frequencies"],
                               pc.rope_frequencies(8, base=1e6) / 8)


def test_longrope_short_long_and_no_seq_len():
    rope = {"rope_type": "longrope", "short_factor": [1.0, 2.0],
            "long_factor": [4.0, 8.0], "seq_len": 10**6,
            "original_max_position_embeddings": 64, "factor": 4.0}
    (layer,) = pc.position_layout({"num_hidden_layers": 1, "head_dim": 4,
                                   "rope_parameters": rope})
    plain = pc.rope_frequencies(4)
    np.testing.assert_allclose(layer["inverse_frequencies"],
                               plain / [1.0, 2.0])
    np.testing.assert_allclose(layer["long_inverse_frequencies"],
                               plain / [4.0, 8.0])
    assert "seq_len" not in layer["scaling"]


def test_layers_do_not_share_arrays():
    layers = pc.position_layout({"num_hidden_layers": 2, "head_dim": 4})
    layers[0]["inverse_frequencies"][:] = 0.0
    assert layers[1]["inverse_frequencies"][0] == 1.0


def test_llama3_equal_factors_is_a_step():
    scaling = {"type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
               "high_freq_factor": 1.0,
               "original_max_position_embeddings": 64}
    plain = pc.rope_frequencies(16, base=10000.0)
    got = pc.rope_frequencies(16, base=10000.0, scaling=scaling)
    long = 2 * np.pi / plain > 64
    assert long.any() and (~long).any()
    np.testing.assert_array_equal(got, np.where(long, plain / 16, plain))


BASE = {"num_hidden_layers": 2, "head_dim": 8}
BAD_KEYS = [
    ({"num_hidden_layers": 0}, "num_hidden_layers"),
    ({"head_dim": 5}, "head_dim"),
    ({"head_dim": None, "hidden_size": 10, "num_attention_heads": 3},
     "num_attention_heads"),
    ({"rope_theta": 0.5}, "rope_theta"),
    ({"rope_scaling": {"type": "linear"}}, "rope_scaling"),
    ({"rope_parameters": {"rope_type": "cubic"}}, "rope_parameters"),
    ({"rope_parameters": {"sliding_attention": {"rope_theta": 10.0}}},
     "full_attention"),
    ({"layer_types": ["full_attention", "mamba"]}, "'layer_types'][1]"),
    ({"layer_types": ["sliding_attention"] * 2}, "sliding_window"),
    ({"layer_types": ["chunked_attention"] * 2}, "attention_chunk_size"),
    ({"no_rope_layers": [1, 3]}, "'no_rope_layers'][1]"),
    ({"no_rope_layers": [1]}, "no_rope_layers"),
    ({"position_embedding_type": "absolute"}, "position_embedding_type"),
    ({"alibi": True}, "num_attention_heads"),
    ({"attn_temperature_tuning": True, "floor_scale": -1}, "floor_scale"),
    ({"global_head_dim": 3}, "global_head_dim"),
    ({"qk_rope_head_dim": 3}, "qk_rope_head_dim"),
    # Baichuan 2's config.json says nothing of RoPE (7B) or ALiBi (13B)
    ({"model_type": "baichuan"}, "use_alibi"),
]


def test_baichuan_says_which_with_use_alibi():
    # the keys of Baichuan2-13B-Chat's config.json, plus use_alibi
    raw = {"model_type": "baichuan", "hidden_size": 5120,
           "num_attention_heads": 40, "num_hidden_layers": 40,
           "model_max_length": 4096}
    layers = pc.position_layout({**raw, "use_alibi": True})
    assert {x["kind"] for x in layers} == {"alibi"}
    np.testing.assert_array_equal(layers[0]["alibi_slopes"],
                                  pc.alibi_slopes(40))
    seven = pc.position_layout({**raw, "use_alibi": False})
    assert {x["kind"] for x in seven} == {"rope"}


@pytest.mark.parametrize("change, key", BAD_KEYS,
                         ids=[k for _, k in BAD_KEYS])
def test_bad_config_names_its_key(change, key):
    with pytest.raises(ValueError) as info:
        pc.position_layout({**BASE, **change})
    assert key in str(info.value), str(info.value)
    assert "config" in str(info.value)


def test_not_a_dict_is_refused():
    with pytest.raises(ValueError, match="config must be a dict"):
        pc.position_layout([("num_hidden_layers", 2)])
