"""Chapter 10's table of published configurations
(``posenc_lab/data/model_configs.json``), read by transformers and by
posenc_core.

* **Every entry says where it comes from**: the model's ``config.json`` on
  the hub, the report or post it cites (a key of references.bib), how it
  was checked, and what could not be confirmed.
* **transformers accepts every entry**: its own configuration class for
  that model (built without weights, offline) takes the config as typed,
  and reads back the same base, scaling and layer pattern.
* **transformers reads the designs the chapter describes**: which layers
  have position, their windows, and the inverse frequencies of its own
  rotary embedding modules (how many pairs rotate).
"""

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from pybtex.database import parse_file

from posenc_plots import ch10_models as figs

transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parent.parent
MODELS = figs.load_models()
IDS = [m["id"] for m in MODELS]
BY_ID = dict(zip(IDS, MODELS, strict=True))

#: transformers' module of each configuration class.
MODULE = {"LlamaConfig": "llama", "Llama4TextConfig": "llama4",
          "Gemma3TextConfig": "gemma3", "Gemma4TextConfig": "gemma4",
          "Qwen3Config": "qwen3", "DeepseekV3Config": "deepseek_v3",
          "GptOssConfig": "gpt_oss", "SmolLM3Config": "smollm3",
          "Phi3Config": "phi3", "GlmConfig": "glm"}

#: The families the issue asks for, each in the table.
FAMILIES = ("Llama 3.1", "Llama 4", "Gemma 3", "Gemma 4", "Qwen3",
            "DeepSeek-V3", "gpt-oss", "SmolLM3", "Phi-3.5", "GLM-4")


def hf_config(model):
    return getattr(transformers, model["config_class"])(**model["config"])


def hf_rotary(config):
    """transformers' rotary embedding module of ``config``'s model."""
    name = MODULE[type(config).__name__]
    module = importlib.import_module(
        f"transformers.models.{name}.modeling_{name}")
    prefix = type(config).__name__[:-len("Config")].replace("Text", "")
    names = sorted((n for n in dir(module) if n.endswith("RotaryEmbedding")
                    and n.startswith(prefix)),
                   key=lambda n: ("Text" not in n, len(n)))
    return getattr(module, names[0])(config)


def hf_layers(model):
    """The design of every layer as transformers reads it: ``(has
    position, window, inverse frequencies)``."""
    config = hf_config(model)
    rotary = hf_rotary(config)
    buffers = {k: v.numpy().astype(np.float64)
               for k, v in rotary._buffers.items()
               if k.endswith("inv_freq") and "original" not in k}
    types = getattr(config, "layer_types", None) or (
        ["full_attention"] * config.num_hidden_layers)
    no_rope = getattr(config, "no_rope_layers", None)
    layers = []
    for index, kind in enumerate(types):
        has_position = not (no_rope is not None and not no_rope[index])
        inv_freq = buffers.get(f"{kind}_inv_freq", buffers.get("inv_freq"))
        window = None
        if kind == "sliding_attention":
            window = config.sliding_window
        elif kind == "chunked_attention":
            window = config.attention_chunk_size
        layers.append((has_position, window,
                       inv_freq if has_position else None))
    return layers


def test_the_table_has_the_families_of_the_issue():
    families = {m["family"] for m in MODELS}
    assert set(FAMILIES) <= families
    assert len(MODELS) >= 10 and len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("model_id", IDS)
def test_every_entry_says_where_it_comes_from(model_id):
    model = BY_ID[model_id]
    keys = {k.lower() for k in parse_file(
        str(ROOT / "references.bib"), bib_format="bibtex").entries}
    urls = [s["url"] for s in model["sources"]]
    assert any(re.fullmatch(r"https://huggingface\.co/[\w.-]+/[\w.-]+/blob/"
                            r"main/config\.json", u) for u in urls), urls
    assert all(u.startswith("https://") for u in urls)
    for source in model["sources"]:
        assert source["what"]
        if "cite" in source:
            assert source["cite"].lower() in keys, source["cite"]
    assert len(model["checked"]) > 40
    assert isinstance(model["unconfirmed"], list)


@pytest.mark.parametrize("model_id", IDS)
def test_transformers_accepts_every_entry(model_id):
    model = BY_ID[model_id]
    typed = model["config"]
    config = hf_config(model)
    assert config.num_hidden_layers == typed["num_hidden_layers"]
    params = config.rope_parameters
    if "rope_parameters" in typed:
        assert params == {**params, **typed["rope_parameters"]}
    else:
        if "full_attention" in params and "rope_local_base_freq" in typed:
            # Gemma 3: one set per layer type, the scaling on the global one
            assert (params["sliding_attention"]["rope_theta"]
                    == typed["rope_local_base_freq"])
            params = params["full_attention"]
        assert params["rope_theta"] == typed["rope_theta"]
        scaling = typed.get("rope_scaling") or {}
        for key, value in scaling.items():
            if key != "type":
                assert params[key] == value, key
        if "partial_rotary_factor" in typed:
            assert (params["partial_rotary_factor"]
                    == typed["partial_rotary_factor"])
    for key in ("layer_types", "no_rope_layers", "sliding_window",
                "attention_chunk_size"):
        if typed.get(key):
            assert getattr(config, key) == typed[key], key


def test_transformers_reads_the_published_designs():
    """What the chapter says of the configs, as transformers reads them."""
    count = {m: sum(has for has, _, _ in hf_layers(BY_ID[m])) for m in IDS}
    assert count["llama4-scout"] == 36 and count["smollm3-3b"] == 27
    gemma4 = hf_layers(BY_ID["gemma4-26b-a4b"])
    assert [w for _, w, _ in gemma4[:6]] == [1024] * 5 + [None]
    full = gemma4[5][2]
    assert full.size == 256 and np.count_nonzero(full) == 64
    assert hf_layers(BY_ID["deepseek-v3"])[0][2].size == 32
    assert hf_layers(BY_ID["glm4-9b-chat"])[0][2].size == 32
    llama4 = hf_layers(BY_ID["llama4-scout"])
    assert [w for _, w, _ in llama4[:4]] == [8192] * 3 + [None]
