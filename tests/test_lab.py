"""posenc_lab: the model's tables against posenc_core, the data, the errors.

The experiment itself (a quick run, its JSON, reproducing the committed
numbers) is in tests/test_lab_experiment.py.
"""

import numpy as np
import pytest
import torch

import posenc_core as pc
from posenc_lab import data
from posenc_lab.model import METHODS, TinyTransformer, rope_rotations

torch.set_num_threads(1)


def _model(method, **kw):
    torch.manual_seed(0)
    kw.setdefault("max_len", 16)
    return TinyTransformer(11, method, d_model=16, n_layers=1, n_heads=2, **kw)


# ---- every table comes from posenc_core


def test_sinusoidal_rows_are_posenc_core():
    model = _model("sinusoidal", base=100.0)
    add, _ = model._positions(20, "cpu")
    np.testing.assert_allclose(
        add.numpy(), pc.sinusoidal_encoding(20, 16, base=100.0), atol=1e-6)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("scaling", [
    None,
    {"type": "linear", "factor": 4},
    {"type": "ntk", "factor": 4},
    {"type": "yarn", "factor": 4, "original_max_position_embeddings": 16},
])
def test_rope_in_torch_is_apply_rope(layout, scaling):
    """The model's rotation of random queries equals posenc_core.apply_rope
    with posenc_core.rope_frequencies, for both layouts and every scaling."""
    n, head_dim = 40, 8
    model = _model("rope", layout=layout, base=500.0)
    if scaling is not None:
        model.set_rope_scaling(scaling)
    _, position = model._positions(n, "cpu")
    q = np.random.default_rng(1).normal(size=(3, 2, n, head_dim))
    rotated = torch.einsum("bhnd,nde->bhne", torch.tensor(q),
                           position["rotations"].double()).numpy()
    theta = pc.rope_frequencies(head_dim, base=500.0, scaling=scaling)
    expected = pc.apply_rope(q, n, layout=layout, frequencies=theta)
    np.testing.assert_allclose(rotated, expected, atol=1e-6)


def test_rope_rotations_layouts_differ_and_match_permutation():
    """The two layouts are different rotations, the same up to
    posenc_core.rope_layout_permutation (so the layout argument is used)."""
    M_i = rope_rotations(10, 8, layout="interleaved")
    M_h = rope_rotations(10, 8, layout="half")
    assert not np.allclose(M_i, M_h)
    p = pc.rope_layout_permutation(8)
    np.testing.assert_allclose(M_h, M_i[:, p][:, :, p], atol=1e-12)


def test_yarn_temperature_is_posenc_core():
    model = _model("rope")
    model.set_rope_scaling({"type": "yarn", "factor": 8,
                            "original_max_position_embeddings": 16},
                           temperature=True)
    assert model.logit_scale == pytest.approx(pc.yarn_attention_scale(8) ** 2)
    model.set_rope_scaling(None)
    assert model.logit_scale == 1.0


def test_alibi_bias_is_posenc_core():
    model = _model("alibi")
    _, position = model._positions(12, "cpu")
    np.testing.assert_allclose(position["bias"].numpy(), pc.alibi_bias(12, 2),
                               atol=1e-7)


def test_t5_buckets_are_posenc_core():
    model = _model("t5", num_buckets=8, max_distance=20)
    with torch.no_grad():
        model.t5_bias.weight.copy_(torch.arange(16.0).view(8, 2))
    _, position = model._positions(30, "cpu")
    bucket = pc.t5_relative_position_bucket(
        pc.relative_positions(30), bidirectional=False, num_buckets=8,
        max_distance=20)
    expected = np.stack([2 * bucket, 2 * bucket + 1])  # weight[bucket, h]
    np.testing.assert_array_equal(position["bias"].detach().numpy(), expected)


def test_learned_clamp_reuses_the_last_row():
    model = _model("learned", max_len=6, beyond="clamp")
    add, _ = model._positions(9, "cpu")
    table = model.pos.weight.detach()
    torch.testing.assert_close(add[:6], table)
    torch.testing.assert_close(add[6:], table[5].expand(3, -1))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_is_causal(method):
    """Changing a later token changes no earlier logit."""
    model = _model(method, beyond="clamp").eval()
    x = torch.randint(0, 11, (2, 24), generator=torch.Generator().manual_seed(0))
    y = x.clone()
    y[:, 15] = (y[:, 15] + 1) % 11
    with torch.no_grad():
        a, b = model(x), model(y)
    torch.testing.assert_close(a[:, :15], b[:, :15])
    assert not torch.allclose(a[:, 15:], b[:, 15:])


@pytest.mark.parametrize("method", ["sinusoidal", "learned", "rope"])
def test_position_methods_see_order_and_none_does_not(method):
    """With the same tokens in another order before the last one, the last
    logits change with a position method; without one (and one layer), a
    permutation of the earlier tokens leaves the last query's output alone."""
    x = torch.randint(0, 11, (1, 12), generator=torch.Generator().manual_seed(2))
    y = x.clone()
    y[0, :11] = x[0, :11].flip(0)
    with torch.no_grad():
        none = _model("none").eval()
        torch.testing.assert_close(none(x)[0, -1], none(y)[0, -1])
        model = _model(method).eval()
        assert not torch.allclose(model(x)[0, -1], model(y)[0, -1])


# ---- bad arguments name themselves


def test_unknown_method():
    with pytest.raises(ValueError, match="method"):
        TinyTransformer(10, "absolute")


def test_odd_head_size_for_rope():
    with pytest.raises(ValueError, match="n_heads.*even head width"):
        TinyTransformer(10, "rope", d_model=12, n_heads=4)
    TinyTransformer(10, "alibi", d_model=12, n_heads=4)  # fine without RoPE


def test_learned_past_its_table_without_saying_what_to_do():
    model = _model("learned", max_len=8)
    model(torch.zeros(1, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="beyond must be 'clamp'"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="beyond"):
        _model("learned", beyond="wrap")
    with pytest.raises(ValueError, match="max_len"):
        TinyTransformer(10, "learned")


@pytest.mark.parametrize("kw, name", [
    ({"layout": "neox"}, "layout"),
    ({"d_model": 10, "n_heads": 4}, "d_model"),
    ({"n_layers": 0}, "n_layers"),
])
def test_other_bad_arguments(kw, name):
    with pytest.raises(ValueError, match=name):
        TinyTransformer(10, "rope", **kw)


def test_scaling_only_for_rope_and_checked_by_posenc_core():
    with pytest.raises(ValueError, match="rope"):
        _model("alibi").set_rope_scaling({"type": "linear", "factor": 2})
    with pytest.raises(ValueError, match="factor"):
        _model("rope").set_rope_scaling({"type": "linear", "factor": 0.5})


# ---- data


def test_text_is_the_committed_book_with_a_fixed_split():
    text = data.load_text()
    assert text.startswith("ALICE'S ADVENTURES IN WONDERLAND")
    assert text.rstrip().endswith("THE END")
    assert "\r" not in text and "Gutenberg" not in text
    train, valid = data.split_text(text)
    assert (len(train), len(valid)) == (129987, 14443)
    assert train + valid == text
    vocab = data.CharVocab(text)
    assert len(vocab) == 71
    assert vocab.decode(vocab.encode(valid[:50])) == valid[:50]


def test_load_text_refuses_a_changed_file(tmp_path):
    changed = tmp_path / "alice.txt"
    changed.write_bytes((data.DATA_DIR / "alice.txt").read_bytes() + b"x")
    with pytest.raises(ValueError, match="path"):
        data.load_text(changed)


def test_lm_windows_are_consecutive_and_shifted():
    ids = np.arange(100)
    x, y = data.lm_windows(ids, 16)
    assert x.shape == (6, 16)
    assert x[1, 0] == 16 and y[0, -1] == 16
    torch.testing.assert_close(y[:, :-1], x[:, 1:])


def test_copy_batch_copies():
    x, y, mask = data.copy_batch(64, 3, 7, np.random.default_rng(0))
    sep = data.COPY_SYMBOLS
    for row in range(64):
        k = int((x[row] == sep).nonzero()[0])
        assert 3 <= k <= 7
        assert mask[row].sum() == k
        torch.testing.assert_close(y[row][mask[row]], x[row, :k])
        assert mask[row, k: 2 * k].all()
    with pytest.raises(ValueError, match="k_min"):
        data.copy_batch(2, 0, 3, np.random.default_rng(0))


# ---- attention_fn: the user's own attention step (assignment 8)


def _alibi_attention(q, k, v):
    """ALiBi written outside the model, from posenc_core's bias."""
    n = q.shape[-2]
    bias = torch.as_tensor(pc.alibi_bias(n, q.shape[1]), dtype=q.dtype)
    S = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    return S.masked_fill(~causal, float("-inf")).softmax(-1) @ v


def test_attention_fn_is_what_the_model_calls():
    """ALiBi as an attention_fn on method 'none' gives the built-in ALiBi
    model's logits and gradients (same weights): the function really runs,
    in every layer, forward and backward."""
    calls = []

    def spy(q, k, v):
        calls.append(tuple(q.shape))
        return _alibi_attention(q, k, v)

    torch.manual_seed(0)
    mine = TinyTransformer(11, "none", d_model=16, n_layers=2, n_heads=4,
                           attention_fn=spy)
    builtin = TinyTransformer(11, "alibi", d_model=16, n_layers=2, n_heads=4)
    builtin.load_state_dict(mine.state_dict())
    x = torch.randint(0, 11, (3, 20), generator=torch.Generator().manual_seed(1))
    a, b = mine(x), builtin(x)
    assert calls == [(3, 4, 20, 4)] * 2  # once per layer
    torch.testing.assert_close(a, b)
    a.sum().backward()
    b.sum().backward()
    grad = dict(builtin.named_parameters())
    for name, p in mine.named_parameters():
        torch.testing.assert_close(p.grad, grad[name].grad)
    # and without ALiBi (plain causal attention) the logits differ
    plain = TinyTransformer(11, "none", d_model=16, n_layers=2, n_heads=4)
    plain.load_state_dict(mine.state_dict())
    assert not torch.allclose(plain(x), a)


def test_attention_fn_bad_arguments():
    with pytest.raises(ValueError, match="attention_fn"):
        TinyTransformer(10, "alibi", attention_fn=_alibi_attention)
    with pytest.raises(ValueError, match="attention_fn"):
        TinyTransformer(10, "none", attention_fn="alibi")
    model = TinyTransformer(10, "none", d_model=8, n_heads=2,
                            attention_fn=lambda q, k, v: v[..., :1])
    with pytest.raises(ValueError, match="attention_fn must return"):
        model(torch.zeros(1, 5, dtype=torch.long))
