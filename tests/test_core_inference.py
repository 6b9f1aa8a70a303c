"""Chapter 11's core functions: properties, published values, bad input.

Their agreement with transformers 5.24 and with mit-han-lab/streaming-llm
is in tests/test_reference_inference.py.
"""

import numpy as np
import pytest

import posenc_core as pc

# ------------------------------------------------------------- cache sizes


def test_cache_bytes_of_published_models():
    # Llama 2 7B: MHA, 32 layers of 32 heads of 128: 0.5 MiB per token
    assert pc.kv_cache_bytes("mha", n_layers=32, n_heads=32,
                             head_dim=128) == 2**19
    # DeepSeek-V3: 61 layers, latent 512 + rotary key 64, bfloat16
    assert pc.kv_cache_bytes("mla", n_layers=61, kv_lora_rank=512,
                             qk_rope_head_dim=64) == 61 * 576 * 2


def test_cache_bytes_order_and_scaling():
    kw = dict(n_layers=4, n_heads=8, head_dim=64, tokens=100)
    mha = pc.kv_cache_bytes("mha", **kw)
    gqa = pc.kv_cache_bytes("gqa", n_kv_heads=2, **kw)
    mqa = pc.kv_cache_bytes("mqa", **kw)
    assert mha == 4 * gqa == 8 * mqa
    assert pc.kv_cache_bytes("gqa", n_kv_heads=8, **kw) == mha
    assert pc.kv_cache_bytes("mqa", bytes_per_value=0.5, **kw) == mqa / 4
    assert isinstance(mha, int)
    assert pc.kv_cache_bytes("mha", **dict(kw, tokens=0)) == 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="mhq", n_layers=1, n_heads=1, head_dim=1), "kind"),
    (dict(kind="mha", n_layers=0, n_heads=1, head_dim=1), "n_layers"),
    (dict(kind="mha", n_layers=1, head_dim=1), "n_heads"),
    (dict(kind="mha", n_layers=1, n_heads=2), "head_dim"),
    (dict(kind="mha", n_layers=1, n_heads=2, head_dim=2, n_kv_heads=1),
     "n_kv_heads"),
    (dict(kind="gqa", n_layers=1, n_heads=8, head_dim=2), "n_kv_heads"),
    (dict(kind="gqa", n_layers=1, n_heads=8, head_dim=2, n_kv_heads=3),
     "n_kv_heads must divide"),
    (dict(kind="mqa", n_layers=1, head_dim=2, n_kv_heads=2), "n_kv_heads"),
    (dict(kind="mla", n_layers=1, kv_lora_rank=4), "qk_rope_head_dim"),
    (dict(kind="mla", n_layers=1, kv_lora_rank=0, qk_rope_head_dim=2),
     "kv_lora_rank"),
    (dict(kind="mla", n_layers=1, kv_lora_rank=4, qk_rope_head_dim=2,
          n_kv_heads=1), "n_kv_heads"),
    (dict(kind="mha", n_layers=1, n_heads=1, head_dim=1, kv_lora_rank=4),
     "kv_lora_rank"),
    (dict(kind="mha", n_layers=1, n_heads=1, head_dim=1, tokens=-1),
     "tokens"),
    (dict(kind="mha", n_layers=1, n_heads=1, head_dim=1, tokens=2.5),
     "tokens"),
    (dict(kind="mha", n_layers=1, n_heads=1, head_dim=1,
          bytes_per_value=0), "bytes_per_value"),
    (dict(kind="mha", n_layers=True, n_heads=1, head_dim=1), "n_layers"),
])
def test_cache_bytes_refuses_bad_input(kwargs, match):
    kind = kwargs.pop("kind")
    with pytest.raises(ValueError, match=match):
        pc.kv_cache_bytes(kind, **kwargs)


# ------------------------------------------------- padding and position ids


def test_position_ids_count_each_rows_tokens():
    mask = np.array([[0, 0, 0, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 1]])
    pos = pc.position_ids_from_attention_mask(mask)
    for row, m in zip(pos, mask, strict=True):
        assert row[m == 1].tolist() == list(range(m.sum()))
    assert (pos[mask == 0] == 0).all()
    one = pc.position_ids_from_attention_mask(mask, fill_value=1)
    assert (one[mask == 0] == 1).all() and (one[mask == 1] == pos[mask == 1]
                                            ).all()
    assert pc.position_ids_from_attention_mask([True, True]).tolist() == [
        0, 1]
    assert pc.position_ids_from_attention_mask(
        np.ones(3, dtype=np.int64)).dtype == np.int64


@pytest.mark.parametrize("bad", ["11", [[0, 2]], [0.5, 1], np.ones((1, 1, 2)),
                                 [[1, None]], 3])
def test_position_ids_refuse_bad_masks(bad):
    with pytest.raises(ValueError, match="attention_mask"):
        pc.position_ids_from_attention_mask(bad)


def test_position_ids_refuse_a_bad_fill_value():
    with pytest.raises(ValueError, match="fill_value"):
        pc.position_ids_from_attention_mask([1, 1], fill_value=0.5)


# ------------------------------------------------------------- packing


def test_packed_ids_mask_and_indices_agree():
    lengths = [3, 1, 4, 2]
    pos = pc.packed_position_ids(lengths)
    doc = pc.packed_sequence_indices(pos)
    assert doc.tolist() == [0, 0, 0, 1, 2, 2, 2, 2, 3, 3]
    mask = pc.packed_attention_mask(lengths)
    expect = (doc[:, None] == doc[None, :]) & (
        np.arange(10)[None, :] <= np.arange(10)[:, None])
    np.testing.assert_array_equal(mask, expect)
    full = pc.packed_attention_mask(lengths, causal=False)
    np.testing.assert_array_equal(full, doc[:, None] == doc[None, :])
    assert pc.packed_position_ids([2, 2], start=2).tolist() == [2, 3, 2, 3]
    # one document: an ordinary causal mask, ids 0..n-1
    np.testing.assert_array_equal(pc.packed_attention_mask([5]),
                                  np.tri(5, dtype=bool))
    assert pc.packed_sequence_indices(np.arange(5)).tolist() == [0] * 5


def test_block_diagonal_attention_is_each_document_alone():
    rng = np.random.default_rng(0)
    lengths = [4, 3, 5]
    x = rng.normal(size=(12, 8))
    w = [rng.normal(size=(8, 4)) for _ in range(3)]
    bias = np.where(pc.packed_attention_mask(lengths), 0.0, -np.inf)
    packed, _ = pc.self_attention(x, *w, bias=bias)
    start = 0
    for n in lengths:
        alone, _ = pc.self_attention(x[start:start + n], *w, causal=True)
        np.testing.assert_allclose(packed[start:start + n], alone,
                                   rtol=1e-13)
        start += n


@pytest.mark.parametrize("bad", [[], [3, 0], [2, -1], 4, [[2, 3]], [1.5],
                                 "23"])
def test_packing_refuses_bad_lengths(bad):
    for fn in (pc.packed_position_ids, pc.packed_attention_mask):
        with pytest.raises(ValueError, match="lengths"):
            fn(bad)


def test_packing_refuses_bad_options():
    with pytest.raises(ValueError, match="causal"):
        pc.packed_attention_mask([2], causal=1)
    with pytest.raises(ValueError, match="start"):
        pc.packed_position_ids([2], start=0.5)
    for bad in ([], [[]], [0.5, 1], np.zeros((1, 1, 2))):
        with pytest.raises(ValueError, match="position_ids"):
            pc.packed_sequence_indices(bad)


# ------------------------------------------------ Meta's layout and permute


@pytest.mark.parametrize("n_heads, head_dim", [(1, 2), (3, 8), (4, 16)])
def test_permutation_turns_interleaved_scores_into_half_ones(n_heads,
                                                             head_dim):
    rng = np.random.default_rng(1)
    d_in, n = 12, 9
    wq = rng.normal(size=(n_heads * head_dim, d_in))
    wk = rng.normal(size=(n_heads * head_dim, d_in))
    x = rng.normal(size=(n, d_in))

    def scores(wq, wk, layout):
        q = (x @ wq.T).reshape(n, n_heads, head_dim).transpose(1, 0, 2)
        k = (x @ wk.T).reshape(n, n_heads, head_dim).transpose(1, 0, 2)
        q, k = (pc.apply_rope(t, n, layout=layout) for t in (q, k))
        return q @ k.transpose(0, 2, 1)

    meta = scores(wq, wk, "interleaved")
    hf = scores(pc.permute_rotary_half(wq, n_heads),
                pc.permute_rotary_half(wk, n_heads), "half")
    np.testing.assert_allclose(hf, meta, rtol=1e-11, atol=1e-11)
    if head_dim > 2:  # one pair: both layouts rotate the same pair
        wrong = scores(wq, wk, "half")
        assert np.abs(wrong - meta).max() > 1e-2
    back = pc.unpermute_rotary_half(pc.permute_rotary_half(wq, n_heads),
                                    n_heads)
    np.testing.assert_array_equal(back, wq)


def test_permutation_moves_rows_within_each_head():
    w = np.arange(12.0)[:, None] * np.ones((1, 3))
    got = pc.permute_rotary_half(w, 2)[:, 0]
    assert got.tolist() == [0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11]


@pytest.mark.parametrize("w, n_heads, match", [
    (np.zeros((6, 2)), 4, "w must be"), (np.zeros((6, 2)), 2, "w must be"),
    (np.zeros((0, 2)), 1, "w must be"), (np.zeros((2, 2, 2)), 1, "w must be"),
    (np.zeros((4, 2)), 0, "n_heads"), ("ab", 1, "w must be"),
    (np.full((4, 2), np.nan), 1, "w must be"),
])
def test_permutation_refuses_bad_input(w, n_heads, match):
    for fn in (pc.permute_rotary_half, pc.unpermute_rotary_half):
        with pytest.raises(ValueError, match=match):
            fn(w, n_heads)


# ------------------------------------------------------------- RoBERTa


def test_roberta_ids_start_after_the_padding_index():
    ids = np.array([[0, 7, 8, 2, 1, 1], [1, 1, 0, 7, 2, 9]])
    pos = pc.roberta_position_ids(ids)
    assert pos[0].tolist() == [2, 3, 4, 5, 1, 1]
    assert pos[1].tolist() == [1, 1, 2, 3, 4, 5]  # left padding too
    assert pc.roberta_position_ids(ids, past_key_values_length=10)[0].tolist(
    ) == [12, 13, 14, 15, 1, 1]
    assert pc.roberta_position_ids([4, 4], padding_idx=0).tolist() == [1, 2]


@pytest.mark.parametrize("kwargs, match", [
    (dict(input_ids=[[1.5, 2]]), "input_ids"),
    (dict(input_ids=np.zeros((1, 1, 2))), "input_ids"),
    (dict(input_ids="abc"), "input_ids"),
    (dict(input_ids=[3, 4], padding_idx=-1), "padding_idx"),
    (dict(input_ids=[3, 4], past_key_values_length=-1),
     "past_key_values_length"),
])
def test_roberta_ids_refuse_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.roberta_position_ids(**kwargs)


# --------------------------------------------------------- StreamingLLM


@pytest.mark.parametrize("window, n_sinks", [(6, 2), (8, 4), (5, 0), (2, 1)])
def test_streaming_cache_keeps_sinks_and_the_last_tokens(window, n_sinks):
    for n in range(3 * window):
        kept = pc.streaming_cache(n, window=window, n_sinks=n_sinks)
        assert kept.size == min(n, window)
        assert (np.diff(kept) > 0).all()
        if n > window:
            assert kept[:n_sinks].tolist() == list(range(n_sinks))
            assert kept[n_sinks:].tolist() == list(
                range(n - window + n_sinks, n))
        cache = pc.streaming_positions(n, window=window, n_sinks=n_sinks)
        assert cache.tolist() == list(range(kept.size))
        orig = pc.streaming_positions(n, window=window, n_sinks=n_sinks,
                                      positions="original")
        np.testing.assert_array_equal(orig, kept)


@pytest.mark.parametrize("kwargs, match", [
    (dict(length=-1, window=4), "length"),
    (dict(length=3, window=4, n_sinks=4), "window"),
    (dict(length=3, window=0, n_sinks=0), "window"),
    (dict(length=3, window=4, n_sinks=-1), "n_sinks"),
    (dict(length=3.0, window=4), "length"),
])
def test_streaming_refuses_bad_input(kwargs, match):
    for fn in (pc.streaming_cache, pc.streaming_positions):
        with pytest.raises(ValueError, match=match):
            fn(**kwargs)
    with pytest.raises(ValueError, match="positions"):
        pc.streaming_positions(3, window=4, positions="stream")


# ------------------------------------------------------------------ MLA

SIZES = dict(kv_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=4,
             v_head_dim=5)


@pytest.mark.parametrize("q_lora_rank", [None, 7])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("rope", ["decoupled", "none"])
def test_mla_absorption_is_exact(q_lora_rank, layout, rope):
    params = pc.mla_params(0, 24, 3, q_lora_rank=q_lora_rank, **SIZES)
    x = np.random.default_rng(1).normal(size=(7, 24))
    naive = pc.mla_attention_logits(x, 7, params, layout=layout, rope=rope)
    absorbed = pc.mla_attention_logits(x, 7, params, layout=layout,
                                       rope=rope, absorbed=True)
    assert naive.shape == (3, 7, 7)
    np.testing.assert_allclose(absorbed, naive, rtol=1e-12, atol=1e-13)


def test_mla_naive_scores_are_the_papers_equations():
    # keys rebuilt per head from the latent, the one rotary key appended
    params = pc.mla_params(2, 24, 3, **SIZES)
    x = np.random.default_rng(3).normal(size=(5, 24))
    H, nope, d_r, d_c = 3, 6, 4, 8
    q = (x @ params["q_proj.weight"].T).reshape(5, H, nope + d_r)
    ckv = x @ params["kv_a_proj_with_mqa.weight"].T
    lat = ckv[:, :d_c]
    c = lat / np.sqrt((lat ** 2).mean(-1, keepdims=True) + 1e-6) \
        * params["kv_a_layernorm.weight"]
    kv = (c @ params["kv_b_proj.weight"].T).reshape(5, H, nope + 5)
    k_r = pc.apply_rope(ckv[:, d_c:], 5)
    for h in range(H):
        k = np.concatenate([kv[:, h, :nope], k_r], axis=1)
        qh = np.concatenate([q[:, h, :nope],
                             pc.apply_rope(q[:, h, nope:], 5)], axis=1)
        np.testing.assert_allclose(
            pc.mla_attention_logits(x, 5, params)[h],
            qh @ k.T / np.sqrt(nope + d_r), rtol=1e-12, atol=1e-13)


def test_a_rotation_between_the_matrices_stops_absorption():
    # DeepSeek-V2, section 2.1.3: RoPE applied to the keys rebuilt from
    # the latent puts R_l between W^UK and the cached latent
    params = pc.mla_params(0, 24, 3, **SIZES)
    x = np.random.default_rng(1).normal(size=(7, 24))
    coupled = pc.mla_attention_logits(x, 7, params, rope="coupled")
    attempt = pc.mla_attention_logits(x, 7, params, rope="coupled",
                                      absorbed=True)
    assert np.abs(coupled - attempt).max() > 1e-2
    # the coupled scores are still relative (RoPE) ...
    shifted = pc.mla_attention_logits(x, np.arange(7) + 50, params,
                                      rope="coupled")
    np.testing.assert_allclose(shifted, coupled, rtol=1e-10, atol=1e-12)
    # ... but the query-side vector u with S = u . c_l would have to be
    # W^UK^T R_l^T R_m q: one per key position, not one per query
    H, nope, d_c = 3, 6, 8
    q = (x @ params["q_proj.weight"].T).reshape(7, H, nope + 4)[:, 0, :nope]
    w_uk = params["kv_b_proj.weight"].reshape(H, nope + 5, d_c)[0, :nope]
    qm = pc.apply_rope(q[None, 6], [6])[0]
    u = [w_uk.T @ pc.apply_rope(qm[None], [-l])[0] for l in range(7)]
    lat = (x @ params["kv_a_proj_with_mqa.weight"].T)[:, :d_c]
    c = lat / np.sqrt((lat ** 2).mean(-1, keepdims=True) + 1e-6) \
        * params["kv_a_layernorm.weight"]
    np.testing.assert_allclose([u[l] @ c[l] for l in range(7)],
                               coupled[0, 6] * np.sqrt(10), rtol=1e-10)
    assert min(np.abs(u[l] - u[0]).max() for l in range(1, 7)) > 1e-3
    # the decoupled design: one absorbed query for every key
    decoupled = pc.mla_attention_logits(x, 7, params)
    np.testing.assert_allclose(
        pc.mla_attention_logits(x, 7, params, absorbed=True), decoupled,
        rtol=1e-12, atol=1e-13)


def test_mla_params_are_seeded_and_sized():
    a = pc.mla_params(5, 16, 2, **SIZES)
    b = pc.mla_params(np.random.default_rng(5), 16, 2, **SIZES)
    for k, v in a.items():
        if k.endswith(".weight"):
            np.testing.assert_array_equal(v, b[k])
            assert v.dtype == np.float64
    assert a["kv_b_proj.weight"].shape == (2 * (6 + 5), 8)
    assert a["kv_a_proj_with_mqa.weight"].shape == (8 + 4, 16)
    lora = pc.mla_params(5, 16, 2, q_lora_rank=3, **SIZES)
    assert "q_proj.weight" not in lora
    assert lora["q_b_proj.weight"].shape == (2 * 10, 3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(rng=None), "rng"), (dict(rng=1.5), "rng"),
    (dict(d_model=0), "d_model"), (dict(n_heads=0), "n_heads"),
    (dict(kv_lora_rank=0), "kv_lora_rank"),
    (dict(qk_rope_head_dim=3), "qk_rope_head_dim"),
    (dict(qk_rope_head_dim=0, qk_nope_head_dim=0), "qk_nope_head_dim"),
    (dict(v_head_dim=0), "v_head_dim"), (dict(q_lora_rank=0), "q_lora_rank"),
])
def test_mla_params_refuse_bad_input(kwargs, match):
    args = dict(rng=0, d_model=8, n_heads=2, **SIZES)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        pc.mla_params(**args)


def test_mla_logits_refuse_bad_input():
    params = pc.mla_params(0, 8, 2, **SIZES)
    x = np.zeros((3, 8))
    cases = [
        (dict(x=np.zeros(8)), "x"), (dict(x=np.zeros((3, 9))), "q_proj"),
        (dict(positions=4), "positions"), (dict(absorbed=1), "absorbed"),
        (dict(layout="full"), "layout"), (dict(rope="yes"), "rope"),
        (dict(base=1.0), "base"), (dict(params=[1]), "params"),
        (dict(params={"n_heads": 2}), "params"),
    ]
    for kwargs, match in cases:
        args = dict(x=x, positions=3, params=params)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            pc.mla_attention_logits(args.pop("x"), args.pop("positions"),
                                    args.pop("params"), **args)
    odd = pc.mla_params(0, 8, 2, **dict(SIZES, qk_nope_head_dim=5))
    with pytest.raises(ValueError, match="qk_nope_head_dim"):
        pc.mla_attention_logits(x, 3, odd, rope="coupled")
    broken = dict(params, **{"kv_b_proj.weight": np.zeros((3, 3))})
    with pytest.raises(ValueError, match="kv_b_proj"):
        pc.mla_attention_logits(x, 3, broken)


# ------------------------------------------------------ the sink logit


def test_softmax_with_sink_is_a_softmax_with_one_more_column():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(3, 5, 6)) * 3
    xi = np.array([-1.0, 0.5, 2.0])
    got = pc.softmax_with_sink(s, xi[:, None])
    full = np.concatenate([s, np.broadcast_to(xi[:, None, None], (3, 5, 1))],
                          axis=-1)
    e = np.exp(full - full.max(-1, keepdims=True))
    np.testing.assert_allclose(got, (e / e.sum(-1, keepdims=True))[..., :-1],
                               rtol=1e-13)
    # -inf: the plain softmax; a masked key gets 0
    plain = pc.softmax_with_sink(s, -np.inf)
    np.testing.assert_allclose(plain.sum(-1), 1.0, rtol=1e-13)
    s[..., -1] = -np.inf
    assert (pc.softmax_with_sink(s, 0.0)[..., -1] == 0).all()
    # large logits do not overflow (the maximum is taken with the sink)
    big = pc.softmax_with_sink([1000.0, 1000.0], 1000.0)
    np.testing.assert_allclose(big, [1 / 3, 1 / 3], rtol=1e-13)


@pytest.mark.parametrize("scores, sink, match", [
    ([1.0, np.nan], 0.0, "scores"), ([1.0, np.inf], 0.0, "scores"),
    ([], 0.0, "scores"), ("ab", 0.0, "scores"), ([True], 0.0, "scores"),
    ([1.0], np.nan, "sink_logits"), ([1.0], "x", "sink_logits"),
    (np.zeros((2, 3)), [1.0, 2.0, 3.0], "sink_logits"),
    ([-np.inf, -np.inf], -np.inf, "every logit -inf"),
])
def test_softmax_with_sink_refuses_bad_input(scores, sink, match):
    with pytest.raises(ValueError, match=match):
        pc.softmax_with_sink(scores, sink)


# ------------------------------------------------ frequencies that move

LONGROPE = {"type": "longrope", "short_factor": [1.0, 1.5, 2.0],
            "long_factor": [1.0, 4.0, 9.0],
            "original_max_position_embeddings": 16}


def test_stale_angles_are_zero_unless_the_switch_is_crossed():
    for n0, n1 in ((4, 16), (17, 40), (20, 20)):
        assert not pc.rope_stale_key_angles(
            8, 6, scaling=LONGROPE, cached_length=n0, length=n1).any()
    delta = pc.rope_stale_key_angles(8, 6, scaling=LONGROPE,
                                     cached_length=10, length=17)
    short = pc.rope_frequencies(6, scaling=dict(LONGROPE, seq_len=10))
    long = pc.rope_frequencies(6, scaling=dict(LONGROPE, seq_len=17))
    np.testing.assert_allclose(delta, np.arange(8)[:, None] * (long - short),
                               rtol=1e-15)
    assert (delta[1:, 1:] < 0).all()  # long factors turn slower
    # re-rotating a cached key by delta gives the freshly rotated key
    k = np.random.default_rng(0).normal(size=(8, 6))
    cached = pc.apply_rope(k, 8, frequencies=short)
    np.testing.assert_allclose(pc.apply_rope_angles(cached, delta),
                               pc.apply_rope(k, 8, frequencies=long),
                               rtol=1e-12, atol=1e-13)
    # dynamic NTK moves too; a fixed scaling never
    dyn = {"type": "dynamic", "factor": 4.0, "max_position_embeddings": 16}
    assert pc.rope_stale_key_angles(4, 8, scaling=dyn, cached_length=16,
                                    length=40).any()
    assert not pc.rope_stale_key_angles(
        4, 8, scaling={"type": "linear", "factor": 4.0}, cached_length=16,
        length=40).any()


@pytest.mark.parametrize("kwargs, match", [
    (dict(scaling=None), "scaling"), (dict(cached_length=0), "cached_length"),
    (dict(length=1.5), "length"), (dict(head_dim=5), "head_dim"),
    (dict(key_positions=[[1]]), "key_positions"),
    (dict(scaling={"type": "longrope"}), "scaling"),
])
def test_stale_angles_refuse_bad_input(kwargs, match):
    args = dict(key_positions=4, head_dim=6, scaling=LONGROPE,
                cached_length=8, length=20)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        pc.rope_stale_key_angles(args.pop("key_positions"),
                                 args.pop("head_dim"), **args)
