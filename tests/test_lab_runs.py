"""posenc_lab: what one run does, checked on any CPU in seconds.

The exact comparison with the committed numbers
(tests/test_lab_experiment.py) holds only on the machine that made them;
these tests look at the run's parts instead, through tiny runs whose
models, batches and evaluations are recorded as they happen:

* each seed starts from its own weights, training batches and evaluation
  examples, and the same seed gives the same ones whatever ran before;
* the evaluation's copying examples come from the seed alone (not from
  how far training drew the batches' generator);
* training and fine-tuning draw their windows from the training text only,
  the first 90 % of the book; the last 10 % is the validation text;
* stretching RoPE uses the factor ``s = n / L`` at each length ``n``, and
  YaRN its temperature ``yarn_attention_scale(s) ** 2``;
* RoPE rotates queries and keys only: position enters the scores, never the
  values, so a repeated token gives the same logits at every position.
"""

from dataclasses import replace

import numpy as np
import pytest
import torch

import posenc_core as pc
from posenc_lab import data, experiment
from posenc_lab.experiment import PRESETS, load_corpus, run_one
from posenc_lab.model import TinyTransformer

torch.set_num_threads(1)

# a few training steps: the runs' parts, not their quality, are checked
TINY = replace(PRESETS["quick"], steps=3, copy_steps=3, finetune_steps=2,
               warmup=1, eval_multiples=(1, 2, 4), copy_eval_examples=16)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(TINY)


class Recorder:
    """Records, during a run, the models made, their first weights, the
    training batches drawn and the copying examples evaluated."""

    def __init__(self, monkeypatch):
        self.models, self.initial, self.lm_sources = [], [], []
        self.train_batches, self.eval_examples = [], []
        recorder = self

        class Recorded(TinyTransformer):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                recorder.models.append(self)
                recorder.initial.append({k: v.detach().clone()
                                         for k, v in self.state_dict().items()})

        lm_batch, copy_batch = data.lm_batch, data.copy_batch

        def record_lm(ids, batch_size, n, rng):
            self.lm_sources.append(ids)
            x, y = lm_batch(ids, batch_size, n, rng)
            self.train_batches.append(x)
            return x, y

        def record_copy(batch_size, k_min, k_max, rng):
            x, y, mask = copy_batch(batch_size, k_min, k_max, rng)
            if k_min == k_max:  # the evaluation's fixed k
                self.eval_examples.append(x)
            else:
                self.train_batches.append(x)
            return x, y, mask

        monkeypatch.setattr(experiment, "TinyTransformer", Recorded)
        monkeypatch.setattr(data, "lm_batch", record_lm)
        monkeypatch.setattr(data, "copy_batch", record_copy)


def _run(monkeypatch, cfg, task, method, seed, corpus=None):
    rec = Recorder(monkeypatch)
    run = run_one(cfg, task, method, seed, corpus)
    monkeypatch.undo()
    return rec, run


def _same_weights(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("task", ["lm", "copy"])
def test_each_seed_starts_from_its_own_weights_and_batches(monkeypatch, task,
                                                           corpus):
    """Seeds 0, 1, 2: different first weights and batches; seed 0 again,
    after other random draws, the same ones (run_one seeds torch and numpy
    with the seed, not with a constant, and not from the global state)."""
    cfg = replace(TINY, eval_multiples=(1,))
    runs = {}
    for seed in (0, 1, 2):
        runs[seed] = _run(monkeypatch, cfg, task, "alibi", seed, corpus)[0]
    torch.rand(100)
    np.random.seed(5)  # noqa: NPY002 (the global state must not matter)
    again = _run(monkeypatch, cfg, task, "alibi", 0, corpus)[0]
    assert _same_weights(again.initial[0], runs[0].initial[0])
    assert torch.equal(again.train_batches[0], runs[0].train_batches[0])
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert not _same_weights(runs[a].initial[0], runs[b].initial[0]), (a, b)
        assert not torch.equal(runs[a].train_batches[0],
                               runs[b].train_batches[0]), (a, b)


def test_copy_evaluation_examples_follow_the_seed_alone(monkeypatch):
    """Each seed scores its own copying examples, the same ones however
    many training batches came before (their generator is the seed's own)."""
    seen = {}
    for seed, steps in ((0, 3), (1, 3), (0, 5)):
        rec, run = _run(monkeypatch, replace(TINY, copy_steps=steps), "copy",
                        "none", seed)
        cfg = TINY
        assert [x.shape[0] for x in rec.eval_examples] == (
            [cfg.copy_eval_examples] * len(cfg.copy_multiples))
        assert list(run["eval"]) == [str(cfg.copy_k * j)
                                     for j in cfg.copy_multiples]
        seen[seed, steps] = rec.eval_examples
    for a, b in zip(seen[0, 3], seen[0, 5], strict=True):
        assert torch.equal(a, b)
    for a, b in zip(seen[0, 3], seen[1, 3], strict=True):
        assert not torch.equal(a, b)


def test_training_never_sees_the_validation_text(monkeypatch, corpus):
    """The language model and both fine-tunings of RoPE draw their windows
    from the first 90 % of the book; the evaluation scores the last 10 %."""
    vocab, train_ids, valid_ids = corpus
    text = data.load_text()
    cut = int(round(len(text) * (1 - TINY.valid_fraction)))
    assert vocab.decode(train_ids) == text[:cut]
    assert vocab.decode(valid_ids) == text[cut:]
    assert len(valid_ids) == pytest.approx(0.1 * len(text), abs=1)
    rec, run = _run(monkeypatch, TINY, "lm", "rope", 0)
    # steps of training, then two fine-tunings
    assert len(rec.lm_sources) == TINY.steps + 2 * TINY.finetune_steps
    for ids in rec.lm_sources:
        assert ids is not valid_ids and np.array_equal(ids, train_ids)
    assert run["eval"][str(TINY.L)]["windows"] == (len(valid_ids) - 1) // TINY.L


def test_stretching_uses_the_factor_of_each_length(monkeypatch):
    """At every length n > L: Position Interpolation, NTK-aware scaling and
    YaRN with s = n / L (not the longest length's factor), YaRN with its
    temperature and the others without; the trained frequencies come back
    for the fine-tunings and the plain evaluation."""
    seen = []
    evaluate = experiment.evaluate_lm

    def record(model, valid_ids, lengths, device, by_position_at=None):
        seen.append((list(lengths), model.rope_scaling, model.logit_scale))
        return evaluate(model, valid_ids, lengths, device, by_position_at)

    monkeypatch.setattr(experiment, "evaluate_lm", record)
    run = run_one(TINY, "lm", "rope", 0)
    L = TINY.L
    lengths = [L * j for j in TINY.eval_multiples]
    stretched = [(n[0], s, t) for n, s, t in seen if s is not None
                 and not (len(n) > 1)]
    wanted = []
    for kind, typ in (("pi", "linear"), ("ntk", "ntk"), ("yarn", "yarn")):
        for n in lengths[1:]:
            scaling = experiment._rope_scaling(kind, n / L, L)
            assert scaling["type"] == typ and scaling["factor"] == n / L
            scale = pc.yarn_attention_scale(n / L) ** 2 if kind == "yarn" else 1.0
            wanted.append((n, scaling, scale))
    assert len(stretched) == len(wanted)
    for (n, s, t), (wn, ws, wt) in zip(stretched, wanted, strict=True):
        assert (n, s) == (wn, ws)
        assert t == pytest.approx(wt, rel=1e-12), (n, s)
    assert [t for _, s, t in wanted if s["type"] == "yarn"][0] > 1.0
    # the first evaluation and the plain fine-tuning use the trained
    # frequencies; Position Interpolation's fine-tuning s = L' / L
    assert seen[0] == (lengths, None, 1.0)
    assert (lengths, None, 1.0) in seen[1:]
    assert (lengths, {"type": "linear", "factor": TINY.finetune_factor},
            1.0) in seen
    assert set(run["stretch"]["pi"]) == {str(n) for n in lengths[1:]}


def test_yarn_temperature_reaches_the_scores():
    """The temperature multiplies every score: the same as scaling the
    queries by it."""
    torch.manual_seed(0)
    model = TinyTransformer(11, "rope", d_model=16, n_layers=1, n_heads=2)
    x = torch.randint(0, 11, (2, 40), generator=torch.Generator().manual_seed(3))
    yarn = {"type": "yarn", "factor": 4, "original_max_position_embeddings": 10}
    model.set_rope_scaling(yarn)
    plain = model(x)
    model.set_rope_scaling(yarn, temperature=True)
    hot = model(x)
    scale = pc.yarn_attention_scale(4) ** 2
    assert not torch.allclose(plain, hot, atol=1e-4)
    model.set_rope_scaling(yarn)
    with torch.no_grad():  # scale the queries' rows of the projection
        model.blocks[0].attn.qkv.weight[:16] *= scale
    torch.testing.assert_close(model(x), hot, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("method", ["rope", "alibi", "t5", "none"])
def test_position_enters_the_scores_only(method):
    """RoPE rotates queries and keys, ALiBi and T5 bias the scores: none of
    them touches the values. So on a sequence of one repeated token the
    values are the same at every position, every attention output is that
    value (the weights sum to 1), and every position's logits are equal."""
    torch.manual_seed(0)
    model = TinyTransformer(11, method, d_model=16, n_layers=2, n_heads=2,
                            num_buckets=8, max_distance=16)
    with torch.no_grad():
        if method == "t5":
            model.t5_bias.weight.normal_()
        logits = model(torch.full((1, 30), 7))
    torch.testing.assert_close(logits[0], logits[0, :1].expand(30, -1),
                               atol=1e-5, rtol=1e-5)
    # ... and the test is not empty: different tokens give different logits
    x = torch.randint(0, 11, (1, 30), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert not torch.allclose(model(x)[0, 0], model(x)[0, -1], atol=1e-3)


def test_rope_attention_is_the_formula():
    """One attention layer of the RoPE model against the formula written
    out: softmax(R q (R k)^T / sqrt(d_k) + mask) v, the values unrotated."""
    torch.manual_seed(0)
    model = TinyTransformer(11, "rope", d_model=16, n_layers=1, n_heads=2)
    attn = model.blocks[0].attn
    x = torch.randn(2, 12, 16, dtype=torch.float32)
    _, position = model._positions(12, "cpu")
    with torch.no_grad():
        got = attn(x, **position)
        q, k, v = attn.qkv(x).split(16, dim=-1)
        q, k, v = (t.view(2, 12, 2, 8).transpose(1, 2).double() for t in (q, k, v))
        qr = torch.from_numpy(pc.apply_rope(q.numpy(), 12))
        kr = torch.from_numpy(pc.apply_rope(k.numpy(), 12))
        S = qr @ kr.transpose(-2, -1) / 8 ** 0.5
        S = S.masked_fill(~torch.ones(12, 12, dtype=torch.bool).tril(), -np.inf)
        y = (S.softmax(-1) @ v).transpose(1, 2).reshape(2, 12, 16)
        want = attn.out(y.float())
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
