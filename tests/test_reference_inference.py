"""Chapter 11's core functions against what people run.

transformers 5.24 modules built from tiny configs (no weights, no hub:
HF_HUB_OFFLINE=1), run in float64 where a value is compared; and the
values of mit-han-lab/streaming-llm's cache (commit 2e50426, 2024-07-11),
derived by running its code, which is not a dependency of the book.
"""

import types

import numpy as np
import pytest
import torch
import transformers
from transformers import cache_utils
from transformers.data.data_collator import DataCollatorWithFlattening
from transformers.masking_utils import find_packed_sequence_indices
from transformers.models.deepseek_v3 import modeling_deepseek_v3
from transformers.models.gpt_oss import modeling_gpt_oss
from transformers.models.llama import modeling_llama
from transformers.models.roberta import modeling_roberta

import posenc_core as pc


def test_reference_version():
    assert transformers.__version__ == "5.24.0"


def _llama_config(n_heads=4, n_kv_heads=4, head_dim=8, layers=2, **kw):
    config = transformers.LlamaConfig(
        vocab_size=61, hidden_size=32, intermediate_size=48,
        num_hidden_layers=layers, num_attention_heads=n_heads,
        num_key_value_heads=n_kv_heads, head_dim=head_dim,
        max_position_embeddings=256, initializer_range=0.2, **kw)
    # torch's SDPA computes in float64 for float64 inputs (the eager
    # attention takes its softmax in float32)
    config._attn_implementation = "sdpa"
    return config


def _rope64(rope):
    """A rotary embedding module computing its cos and sin in float64
    (transformers computes them in float32) from posenc_core's
    frequencies."""
    head_dim = rope.inv_freq.numel() * 2
    inv = torch.from_numpy(pc.rope_frequencies(
        head_dim, base=rope.config.rope_parameters["rope_theta"]))

    def forward(x, position_ids):
        angles = position_ids[..., None].double() * inv
        emb = torch.cat((angles, angles), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    rope.forward = forward
    return rope


def _llama(seed=0, **kw):
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(_llama_config(**kw)).double()
    _rope64(model.model.rotary_emb)
    return model.eval()


def _deepseek_config(**kw):
    base = dict(vocab_size=61, hidden_size=32, intermediate_size=48,
                moe_intermediate_size=16, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=4,
                kv_lora_rank=12, q_lora_rank=None, qk_rope_head_dim=4,
                qk_nope_head_dim=6, v_head_dim=5, n_routed_experts=2,
                num_experts_per_tok=1, n_shared_experts=1,
                first_k_dense_replace=2, n_group=1, topk_group=1)
    base.update(kw)
    config = transformers.DeepseekV3Config(**base)
    config._attn_implementation = "eager"
    return config


def _cache_bytes(cache):
    return sum(t.numel() * t.element_size()
               for layer in cache.layers for t in (layer.keys, layer.values))


# ------------------------------------------------------------- cache sizes


@pytest.mark.parametrize("kind, n_kv_heads", [("mha", 4), ("gqa", 2),
                                              ("mqa", 1)])
def test_cache_bytes_are_what_a_llama_cache_holds(kind, n_kv_heads):
    n = 7
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_llama_config(
        n_kv_heads=n_kv_heads, layers=3)).to(torch.bfloat16).eval()
    with torch.no_grad():
        cache = model(torch.arange(n)[None], use_cache=True).past_key_values
    kv = {"gqa": {"n_kv_heads": n_kv_heads}}.get(kind, {})
    got = pc.kv_cache_bytes(kind, n_layers=3, n_heads=4, head_dim=8,
                            tokens=n, bytes_per_value=2, **kv)
    assert got == _cache_bytes(cache) == 2 * 3 * n_kv_heads * 8 * n * 2


def test_cache_bytes_of_deepseek_v3_are_its_latent_and_rotary_key():
    # transformers 5.24 caches the latent and the shared rotary key, as
    # the papers count: (12 + 4) values per token and layer, not the
    # 4 * (6 + 4 + 5) = 60 of the keys and values rebuilt per head
    n = 7
    torch.manual_seed(0)
    model = transformers.DeepseekV3ForCausalLM(_deepseek_config()).to(
        torch.bfloat16).eval()
    with torch.no_grad():
        cache = model(torch.arange(n)[None], use_cache=True).past_key_values
    assert [tuple(layer.keys.shape) for layer in cache.layers] == [
        (1, 1, n, 12)] * 2
    assert [tuple(layer.values.shape) for layer in cache.layers] == [
        (1, 1, n, 4)] * 2
    got = pc.kv_cache_bytes("mla", n_layers=2, kv_lora_rank=12,
                            qk_rope_head_dim=4, tokens=n)
    assert got == _cache_bytes(cache) == 2 * 16 * n * 2


def test_a_llama_cache_holds_keys_after_their_rotation():
    config = _llama_config(layers=1)
    torch.manual_seed(0)
    attn = modeling_llama.LlamaAttention(config, 0).double()
    rope = _rope64(modeling_llama.LlamaRotaryEmbedding(config))
    n = 9
    h = torch.randn(1, n, 32, dtype=torch.float64)
    pos = torch.arange(n)[None]
    cos, sin = rope(h, pos)
    cache = cache_utils.DynamicCache(config=config)
    with torch.no_grad():
        attn(h, (cos, sin), None, cache=cache)
        k = attn.k_proj(h).view(1, n, 4, 8).transpose(1, 2).numpy()
    cached = cache.layers[0].keys.numpy()
    np.testing.assert_allclose(
        cached, pc.apply_rope(k, n, layout="half"), rtol=1e-12, atol=1e-14)
    assert np.abs(cached - k).max() > 0.1  # not the unrotated keys


# ------------------------------------------------- padding and position ids


def test_position_ids_are_those_of_transformers_generation():
    model = _llama()
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1],
                         [0, 0, 0, 0, 0, 1]])
    ref = model._prepare_position_ids_for_generation(
        torch.zeros_like(mask), {"attention_mask": mask})
    np.testing.assert_array_equal(
        pc.position_ids_from_attention_mask(mask.numpy()), ref.numpy())
    assert ref[0, :2].tolist() == [0, 0]  # 5.24 fills padding with 0


def _left_padded(model, rows, pad=0, position_ids=False):
    n = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (n - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (n - len(r)) + [1] * len(r) for r in rows])
    kw = {}
    if position_ids:
        kw["position_ids"] = torch.from_numpy(
            pc.position_ids_from_attention_mask(mask.numpy()))
    with torch.no_grad():
        logits = model(ids, attention_mask=mask, **kw).logits
    return [logits[b, n - len(r):].numpy() for b, r in enumerate(rows)]


def _alone(model, row):
    with torch.no_grad():
        return model(torch.tensor([row])).logits[0].numpy()


ROWS = [[5, 9, 13, 2], [7, 3, 8, 1, 4, 6, 11]]


def test_left_padding_needs_position_ids_with_a_learned_table():
    # GPT-2 numbers the slots 0..n-1 when not given position_ids: the
    # padded row reads rows 3.. of its table for its tokens 0..
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=61, n_embd=32, n_layer=2,
                                     n_head=4, n_positions=64,
                                     initializer_range=0.2)
    model = transformers.GPT2LMHeadModel(config).double().eval()
    without = _left_padded(model, ROWS)
    with_ids = _left_padded(model, ROWS, position_ids=True)
    alone = _alone(model, ROWS[0])
    assert np.abs(without[0] - alone).max() > 1e-3
    np.testing.assert_allclose(with_ids[0], alone, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(with_ids[1], _alone(model, ROWS[1]),
                               rtol=1e-10, atol=1e-12)


def test_left_padding_leaves_a_rope_model_unchanged_up_to_rounding():
    # measured, and the reason: a shift of every position of a row
    # leaves RoPE's scores (functions of l - m only) unchanged, so a
    # tiny Llama's logits agree to float64 rounding with or without ids
    model = _llama()
    without = _left_padded(model, ROWS)
    with_ids = _left_padded(model, ROWS, position_ids=True)
    alone = _alone(model, ROWS[0])
    np.testing.assert_allclose(with_ids[0], alone, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(without[0], alone, rtol=1e-9, atol=1e-11)


# ------------------------------------------------------------- packing

DOCS = [[5, 9, 13, 2], [7, 3, 8], [1, 4, 6, 11, 12]]


def test_packed_position_ids_are_those_of_the_flattening_collator():
    for start in (0, 2):
        collator = DataCollatorWithFlattening(return_tensors="np",
                                              position_ids_start=start)
        batch = collator([{"input_ids": d} for d in DOCS])
        got = pc.packed_position_ids([len(d) for d in DOCS], start=start)
        np.testing.assert_array_equal(got, batch["position_ids"][0])


def test_packed_sequence_indices_are_transformers_detection():
    pos = np.array([[0, 1, 2, 3, 0, 1, 2, 0, 1, 2, 3, 4],
                    [3, 4, 5, 0, 1, 7, 8, 9, 0, 0, 1, 2]])
    ref = find_packed_sequence_indices(torch.from_numpy(pos))
    np.testing.assert_array_equal(pc.packed_sequence_indices(pos),
                                  ref.numpy())
    assert ref[1].tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 4, 4]


def _packed_logits(model, position_ids, mask, use_cache=False):
    ids = torch.tensor([sum(DOCS, [])])
    kw = {"use_cache": use_cache}
    if position_ids is not None:
        kw["position_ids"] = torch.from_numpy(position_ids)[None]
    if mask is not None:  # a 4-D additive mask is used as it is
        bias = np.where(mask, 0.0, -np.inf)
        kw["attention_mask"] = torch.from_numpy(bias)[None, None]
    with torch.no_grad():
        logits = model(ids, **kw).logits[0].numpy()
    ends = np.cumsum([len(d) for d in DOCS])
    return np.split(logits, ends[:-1])


def test_packed_documents_compute_as_if_alone():
    model = _llama()
    lengths = [len(d) for d in DOCS]
    pos = pc.packed_position_ids(lengths)
    mask = pc.packed_attention_mask(lengths)
    alone = [_alone(model, d) for d in DOCS]
    # our block-diagonal mask and ids; then the ids alone, from which
    # transformers builds the same mask itself
    for got in (_packed_logits(model, pos, mask),
                _packed_logits(model, pos, None)):
        for g, a in zip(got, alone, strict=True):
            np.testing.assert_allclose(g, a, rtol=1e-10, atol=1e-12)
    # transformers looks for packed ids only without a cache
    # (masking_utils._preprocess_mask_arguments: "generally a training
    # setup"): with use_cache=True, the default of a model's config,
    # the ids are reset but attention crosses the documents
    cached = _packed_logits(model, pos, None, use_cache=True)
    np.testing.assert_allclose(cached[0], alone[0], rtol=1e-10, atol=1e-12)
    assert np.abs(cached[1] - alone[1]).max() > 1e-1
    # attention across documents (a causal mask, positions 0..n-1)
    crossed = _packed_logits(model, None, None)
    np.testing.assert_allclose(crossed[0], alone[0], rtol=1e-10, atol=1e-12)
    assert np.abs(crossed[1] - alone[1]).max() > 1e-1
    # the block-diagonal mask without reset positions: RoPE keeps each
    # document's scores, so it is the mask that matters in a RoPE model
    kept = _packed_logits(model, np.arange(sum(lengths)), mask)
    np.testing.assert_allclose(kept[2], alone[2], rtol=1e-9, atol=1e-11)


# ------------------------------------------------ Meta's layout and permute


def _hf_permute(w, n_heads, dim1, dim2):
    # transformers' convert_llama_weights_to_hf.py (huggingface/transformers,
    # src/transformers/models/llama/), "permute for sliced rotary"
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(
        1, 2).reshape(dim1, dim2)


@pytest.mark.parametrize("n_heads, head_dim, d_in", [(4, 8, 32), (2, 16, 24),
                                                     (1, 2, 3)])
def test_permute_rotary_half_is_the_converters_permute(n_heads, head_dim,
                                                       d_in):
    w = torch.randn(n_heads * head_dim, d_in, dtype=torch.float64,
                    generator=torch.Generator().manual_seed(1))
    ref = _hf_permute(w, n_heads, n_heads * head_dim, d_in).numpy()
    np.testing.assert_array_equal(pc.permute_rotary_half(w.numpy(), n_heads),
                                  ref)
    np.testing.assert_array_equal(pc.unpermute_rotary_half(ref, n_heads),
                                  w.numpy())


def _meta_attention(h, wq, wk, wv, wo, n_heads, n_kv_heads, head_dim):
    """Meta's llama/model.py Attention (apply_rotary_emb on complex pairs,
    repeat_kv, causal softmax), in float64, for one sequence."""
    n = h.shape[1]
    q = (h @ wq.T).view(1, n, n_heads, head_dim)
    k = (h @ wk.T).view(1, n, n_kv_heads, head_dim)
    v = (h @ wv.T).view(1, n, n_kv_heads, head_dim)
    freqs = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2,
                                            dtype=torch.float64) / head_dim))
    angles = torch.outer(torch.arange(n, dtype=torch.float64), freqs)
    rot = torch.polar(torch.ones_like(angles), angles)[None, :, None, :]

    def apply(x):
        xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * rot).flatten(3)

    q, k = apply(q), apply(k)
    rep = n_heads // n_kv_heads
    k = k.repeat_interleave(rep, dim=2)
    v = v.repeat_interleave(rep, dim=2)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(2, 3) / head_dim ** 0.5
    scores = scores + torch.full((n, n), float("-inf"),
                                 dtype=torch.float64).triu(1)
    out = torch.softmax(scores, dim=-1) @ v
    return out.transpose(1, 2).reshape(1, n, -1) @ wo.T


def test_meta_checkpoint_runs_in_transformers_once_permuted():
    config = _llama_config(n_heads=4, n_kv_heads=2, head_dim=8, layers=1)
    gen = torch.Generator().manual_seed(2)
    meta = {name: torch.randn(rows, cols, dtype=torch.float64,
                              generator=gen) * 0.3
            for name, rows, cols in (("wq", 32, 32), ("wk", 16, 32),
                                     ("wv", 16, 32), ("wo", 32, 32))}
    h = torch.randn(1, 10, 32, dtype=torch.float64, generator=gen)
    ref = _meta_attention(h, *meta.values(), 4, 2, 8)
    rope = _rope64(modeling_llama.LlamaRotaryEmbedding(config))
    pos_emb = rope(h, torch.arange(10)[None])
    causal = torch.full((10, 10), float("-inf"),
                        dtype=torch.float64).triu(1)[None, None]

    def hf(permute):
        attn = modeling_llama.LlamaAttention(config, 0).double()
        fix = pc.permute_rotary_half if permute else (lambda w, _: w)
        with torch.no_grad():
            attn.q_proj.weight.copy_(torch.from_numpy(
                fix(meta["wq"].numpy(), 4)))
            attn.k_proj.weight.copy_(torch.from_numpy(
                fix(meta["wk"].numpy(), 2)))
            attn.v_proj.weight.copy_(meta["wv"])
            attn.o_proj.weight.copy_(meta["wo"])
            return attn(h, pos_emb, causal)[0]

    np.testing.assert_allclose(hf(True).numpy(), ref.numpy(), rtol=1e-10,
                               atol=1e-12)
    assert np.abs(hf(False).numpy() - ref.numpy()).max() > 1e-2


# ------------------------------------------------------------- RoBERTa


def test_roberta_position_ids_are_create_position_ids_from_input_ids():
    create = modeling_roberta.RobertaEmbeddings \
        .create_position_ids_from_input_ids
    ids = torch.tensor([[0, 31414, 232, 328, 2, 1, 1],
                        [1, 1, 0, 31414, 2, 1, 5]])
    for past in (0, 3):
        ref = create(ids, 1, past)
        np.testing.assert_array_equal(
            pc.roberta_position_ids(ids.numpy(), past_key_values_length=past),
            ref.numpy())
    ref = create(ids, 0, 0)
    np.testing.assert_array_equal(
        pc.roberta_position_ids(ids.numpy(), padding_idx=0), ref.numpy())


def test_robertas_514_rows_hold_512_tokens():
    torch.manual_seed(0)
    config = transformers.RobertaConfig(
        vocab_size=61, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=514, pad_token_id=1)
    model = transformers.RobertaModel(config).eval()
    assert model.embeddings.position_embeddings.num_embeddings == 514
    ids = torch.full((1, 513), 5)
    assert pc.roberta_position_ids(ids[:, :512].numpy()).max() == 513
    assert pc.roberta_position_ids(ids.numpy()).max() == 514
    with torch.no_grad():
        model(ids[:, :512])
        # the 514-long buffer of token type ids fails first; given token
        # type ids, the table itself
        with pytest.raises(RuntimeError, match="index 514 is out of bounds"):
            model(ids)
        with pytest.raises(IndexError, match="index out of range"):
            model(ids, token_type_ids=torch.zeros_like(ids))


# --------------------------------------------------------- StreamingLLM

#: mit-han-lab/streaming-llm, streaming_llm/kv_cache.py,
#: StartRecentKVCache(start_size, recent_size).__call__ applied after each
#: token as examples/eval_long_ppl.py does, run on keys holding their own
#: index: (start_size, recent_size, tokens) -> the indices kept.
STREAMING_LLM = {
    (4, 6, 8): [0, 1, 2, 3, 4, 5, 6, 7],
    (4, 6, 10): [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    (4, 6, 11): [0, 1, 2, 3, 5, 6, 7, 8, 9, 10],
    (4, 6, 25): [0, 1, 2, 3, 19, 20, 21, 22, 23, 24],
    (2, 4, 10): [0, 1, 6, 7, 8, 9],
    (0, 5, 9): [4, 5, 6, 7, 8],
    (1, 1, 7): [0, 6],
}


@pytest.mark.parametrize("key", sorted(STREAMING_LLM))
def test_streaming_cache_is_start_recent_kv_cache(key):
    start, recent, n = key
    got = pc.streaming_cache(n, window=start + recent, n_sinks=start)
    assert got.tolist() == STREAMING_LLM[key]
    # pos_shift (modify_llama.py): key_position_ids = arange(kv_seq_len)
    cache = pc.streaming_positions(n, window=start + recent, n_sinks=start)
    assert cache.tolist() == list(range(len(STREAMING_LLM[key])))
    original = pc.streaming_positions(n, window=start + recent,
                                      n_sinks=start, positions="original")
    assert original.tolist() == STREAMING_LLM[key]


def test_transformers_has_no_sink_cache_but_a_sliding_window_one():
    # the SinkCache of transformers 4.x is gone; its sliding-window layer keeps
    # the last sliding_window - 1 keys: a window without sinks
    assert not hasattr(transformers, "SinkCache")
    assert not hasattr(cache_utils, "SinkCache")
    layer = cache_utils.DynamicSlidingWindowLayer(sliding_window=5)
    for t in range(12):
        x = torch.full((1, 1, 1, 1), float(t))
        layer.update(x, x)
        got = pc.streaming_cache(t + 1, window=4, n_sinks=0)
        assert layer.keys[0, 0, :, 0].long().tolist() == got.tolist()


# ----------------------------------------------------- MLA (DeepSeek-V3)


class _Torch64(types.ModuleType):
    """torch, except that float32 means float64."""

    float = torch.float64
    float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


def _float64(fn):
    """``fn``'s own code, run with :class:`_Torch64` as its ``torch``
    (DeepseekV3RMSNorm computes in float32)."""
    glob = dict(fn.__globals__, torch=_Torch64("torch"))
    return types.FunctionType(fn.__code__, glob, fn.__name__,
                              fn.__defaults__, fn.__closure__)


MLA_SIZES = dict(kv_lora_rank=12, qk_nope_head_dim=6, qk_rope_head_dim=4,
                 v_head_dim=5)


def _deepseek_logits(params, x, positions, monkeypatch, interleave=True,
                     base=10000.0):
    """The scores transformers' DeepseekV3Attention computes (captured in
    its eager attention function), with ``params`` loaded."""
    config = _deepseek_config(q_lora_rank=params["q_lora_rank"],
                              rope_interleave=interleave,
                              rope_parameters={"rope_type": "default",
                                               "rope_theta": base},
                              **MLA_SIZES)
    monkeypatch.setattr(modeling_deepseek_v3.DeepseekV3RMSNorm, "forward",
                        _float64(modeling_deepseek_v3.DeepseekV3RMSNorm
                                 .forward))
    seen = {}
    eager = modeling_deepseek_v3.eager_attention_forward

    def capture(module, query, key, value, attention_mask, scaling,
                **kwargs):
        seen["scores"] = (query @ key.transpose(2, 3) * scaling).detach()
        return eager(module, query, key, value, attention_mask, scaling,
                     **kwargs)

    monkeypatch.setattr(modeling_deepseek_v3, "eager_attention_forward",
                        capture)
    attn = modeling_deepseek_v3.DeepseekV3Attention(config, 0).double()
    weights = {k: torch.from_numpy(v) for k, v in params.items()
               if k.endswith(".weight")}
    assert set(weights) == set(attn.state_dict())
    attn.load_state_dict(weights)
    omega = torch.from_numpy(pc.rope_frequencies(4, base=base))
    angles = torch.as_tensor(positions, dtype=torch.float64)[None, :, None] \
        * omega
    emb = torch.cat((angles, angles), dim=-1)
    with torch.no_grad():
        attn(torch.from_numpy(x)[None], (emb.cos(), emb.sin()), None)
    return seen["scores"][0].numpy()


@pytest.mark.parametrize("q_lora_rank, interleave", [
    (None, True), (10, True), (None, False)])
def test_mla_logits_are_deepseek_v3_attentions(q_lora_rank, interleave,
                                               monkeypatch):
    params = pc.mla_params(3, 32, 4, q_lora_rank=q_lora_rank, **MLA_SIZES)
    x = np.random.default_rng(4).normal(size=(9, 32))
    positions = np.array([0, 1, 2, 3, 4, 5, 6, 7, 300])
    ref = _deepseek_logits(params, x, positions, monkeypatch,
                           interleave=interleave)
    layout = "interleaved" if interleave else "half"
    for absorbed in (False, True):
        got = pc.mla_attention_logits(x, positions, params, layout=layout,
                                      absorbed=absorbed)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # the layout matters: DeepSeek's interleaved pairs are not halves
    other = "half" if interleave else "interleaved"
    wrong = pc.mla_attention_logits(x, positions, params, layout=other)
    assert np.abs(wrong - ref).max() > 1e-2
    # and so does the rotary part (its share of the score)
    nope = pc.mla_attention_logits(x, positions, params, rope="none")
    assert np.abs(nope - ref).max() > 1e-2


def test_mla_scores_depend_on_relative_position_only(monkeypatch):
    params = pc.mla_params(5, 32, 4, **MLA_SIZES)
    x = np.random.default_rng(6).normal(size=(6, 32))
    pos = np.arange(6)
    ref = _deepseek_logits(params, x, pos, monkeypatch)
    shifted = _deepseek_logits(params, x, pos + 1000, monkeypatch)
    np.testing.assert_allclose(shifted, ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(
        pc.mla_attention_logits(x, pos + 1000, params, absorbed=True), ref,
        rtol=1e-9, atol=1e-10)


# ------------------------------------------------ gpt-oss's sink logits


def test_softmax_with_sink_is_gpt_oss_attention(monkeypatch):
    config = transformers.GptOssConfig(
        vocab_size=61, hidden_size=32, intermediate_size=16,
        num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
        head_dim=8, num_local_experts=2, num_experts_per_tok=1,
        layer_types=["full_attention"])
    config._attn_implementation = "eager"
    seen = {}
    eager = modeling_gpt_oss.eager_attention_forward

    def capture(module, query, key, value, attention_mask, scaling,
                **kwargs):
        out, weights = eager(module, query, key, value, attention_mask,
                             scaling, **kwargs)
        key = modeling_gpt_oss.repeat_kv(key, module.num_key_value_groups)
        seen["scores"] = (query @ key.transpose(2, 3) * scaling
                          + attention_mask).detach()[0].numpy()
        seen["weights"] = weights.detach()[0].numpy()
        return out, weights

    monkeypatch.setattr(modeling_gpt_oss, "eager_attention_forward", capture)
    torch.manual_seed(0)
    attn = modeling_gpt_oss.GptOssAttention(config, 0).double()
    sinks = np.array([-2.0, 0.0, 1.5, 4.0])
    with torch.no_grad():
        attn.sinks.copy_(torch.from_numpy(sinks))
    n = 7
    h = torch.randn(1, n, 32, dtype=torch.float64)
    # angle 0 (gpt-oss's rotation takes one cos and sin per pair): the
    # subject here is the softmax
    emb = (torch.ones(1, n, 4, dtype=torch.float64),
           torch.zeros(1, n, 4, dtype=torch.float64))
    causal = torch.full((n, n), float("-inf"),
                        dtype=torch.float64).triu(1)[None, None]
    with torch.no_grad():
        attn(h, emb, causal)
    got = pc.softmax_with_sink(seen["scores"], sinks[:, None])
    np.testing.assert_allclose(got, seen["weights"], rtol=1e-12, atol=1e-15)
    # the sink takes a share: rows sum to less than 1, more for larger xi
    share = 1 - got.sum(axis=-1)
    assert (share > 0).all() and (np.diff(share.mean(axis=1)) > 0).all()
    plain = np.exp(seen["scores"] - seen["scores"].max(-1, keepdims=True))
    plain /= plain.sum(-1, keepdims=True)
    assert np.abs(plain - seen["weights"]).max() > 1e-2


# ------------------------------------------- LongRoPE's switch and a cache

SHORT, LONG = [1.0, 1.2, 1.5, 2.0], [1.0, 2.0, 6.0, 16.0]


def test_longrope_switch_leaves_cached_keys_behind():
    # Phi-3's LongRoPE in transformers: short factors while a pass's
    # max(position_ids) + 1 <= original_max_position_embeddings (8), long
    # ones after; keys cached before the switch keep their rotation
    config = transformers.Phi3Config(
        vocab_size=61, hidden_size=32, intermediate_size=48,
        num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=4,
        max_position_embeddings=32, original_max_position_embeddings=8,
        pad_token_id=0,
        rope_parameters={"rope_type": "longrope", "short_factor": SHORT,
                         "long_factor": LONG, "rope_theta": 10000.0})
    torch.manual_seed(0)
    model = transformers.Phi3ForCausalLM(config).double().eval()
    ids = torch.arange(1, 13)[None]
    with torch.no_grad():
        cache = model(ids[:, :6], use_cache=True).past_key_values
        for t in range(6, 12):  # one token at a time, as generation
            model(ids[:, t:t + 1], cache=cache, use_cache=True)
        fresh = model(ids, use_cache=True).past_key_values
    cached = cache.layers[0].keys[0].numpy()
    ref = fresh.layers[0].keys[0].numpy()
    scaling = {"type": "longrope", "short_factor": SHORT,
               "long_factor": LONG, "original_max_position_embeddings": 8}
    # the prompt (one pass of 6) and tokens 6, 7 (passes of 7 and 8)
    for first, stop, cached_length in ((0, 6, 6), (6, 7, 7), (7, 8, 8)):
        delta = pc.rope_stale_key_angles(np.arange(first, stop), 8,
                                         scaling=scaling,
                                         cached_length=cached_length,
                                         length=12)
        block = cached[:, first:stop]
        assert np.abs(block - ref[:, first:stop]).max() > 5e-3
        np.testing.assert_allclose(
            pc.apply_rope_angles(block, delta, layout="half"),
            ref[:, first:stop], rtol=1e-6, atol=1e-6)  # float32 cos, sin
    assert np.abs(cached[:, :6] - ref[:, :6]).max() > 1e-2
    # keys from passes past the switch agree
    np.testing.assert_allclose(cached[:, 8:], ref[:, 8:], rtol=1e-12,
                               atol=1e-14)
    assert not pc.rope_stale_key_angles(
        4, 8, scaling=scaling, cached_length=8, length=3).any()
