"""posenc_lab, chapter 10: position per layer, the passkey, the experiment.

* the model's per-layer frequencies are posenc_core's
  (``partial_rope_frequencies``), and its rotations ``apply_rope`` with
  them; fraction 0 is NoPE (the same logits as method ``"none"``, and the
  same training run); fraction 1 in both conventions is chapter 8's RoPE;
* the NoPE layers carry no position, and Llama 4's temperature is
  ``nope_attention_temperature`` of each position, in those layers only;
* the passkey data is what it claims (structure, mask, depth, the seed);
* the quick preset runs, is deterministic and reproduces its committed
  numbers (exactly on the machine that made them).
"""

import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import torch

import posenc_core as pc
from posenc_lab import data, layers
from posenc_lab import experiment as ex
from posenc_lab.model import TinyTransformer

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "results" / "ch10" / "quick" / "results.json"
FULL = ROOT / "results" / "ch10" / "full" / "results.json"
LOSS_TOL, ACC_TOL = 5e-3, 2 / 32  # as tests/test_lab_experiment.py


def _model(method="rope", seed=0, **kw):
    torch.manual_seed(seed)
    kw.setdefault("n_layers", 3)
    return TinyTransformer(13, method, d_model=32, n_heads=2, **kw)


def _tokens(n=40, seed=3):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 13, (2, n), generator=g)


# ---- the model's per-layer position, from posenc_core


@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("convention", ["spread", "proportional"])
def test_layer_frequencies_are_posenc_core(fraction, convention):
    model = _model(rope_fraction=fraction, rope_convention=convention,
                   nope_layers=(1,), base=500.0)
    want = pc.partial_rope_frequencies(16, fraction, base=500.0,
                                       convention=convention)
    got = model.layer_frequencies()
    assert got[1] is None and len(got) == 3
    for theta in (got[0], got[2]):
        np.testing.assert_allclose(theta, want, rtol=1e-14, atol=0)
    assert (want > 0).sum() == round(fraction * 8)  # pairs that turn


@pytest.mark.parametrize("convention", ["spread", "proportional"])
def test_partial_rotation_is_apply_rope_with_core_frequencies(convention):
    """The model's rotation of random queries equals posenc_core.apply_rope
    with partial_rope_frequencies: the pairs of frequency 0 pass through."""
    n = 30
    model = _model(rope_fraction=0.25, rope_convention=convention,
                   base=100.0)
    _, positions = model._layer_positions(n, "cpu")
    q = np.random.default_rng(1).normal(size=(2, 2, n, 16))
    rotated = torch.einsum("bhnd,nde->bhne", torch.tensor(q),
                           positions[0]["rotations"].double()).numpy()
    theta = pc.partial_rope_frequencies(16, 0.25, base=100.0,
                                        convention=convention)
    np.testing.assert_allclose(
        rotated, pc.apply_rope(q, n, frequencies=theta), atol=1e-6)
    np.testing.assert_array_equal(rotated[..., 4:], q[..., 4:])  # 2 pairs
    assert not np.allclose(rotated[..., :4], q[..., :4])


def test_the_two_conventions_differ_where_core_says():
    spread = _model(rope_fraction=0.5).layer_frequencies()[0]
    prop = _model(rope_fraction=0.5,
                  rope_convention="proportional").layer_frequencies()[0]
    # the same fastest pair, then spread reaches the slow end b^-(r-2)/r
    assert spread[0] == prop[0] == 1.0
    assert spread[3] == pytest.approx(1e4 ** (-6 / 8))
    assert prop[3] == pytest.approx(1e4 ** (-6 / 16))


def test_fraction_zero_is_nope():
    """No pair turns: the same weights give the same logits as method
    "none", as do NoPE layers everywhere."""
    x = _tokens()
    with torch.no_grad():
        none = _model("none")(x)
        for kw in ({"rope_fraction": 0.0},
                   {"rope_fraction": 0.0, "rope_convention": "proportional"},
                   {"nope_layers": (0, 1, 2)}):
            torch.testing.assert_close(_model(**kw)(x), none, atol=0, rtol=0)
        assert not torch.allclose(_model()(x), none, atol=1e-4)


def test_fraction_one_in_both_conventions_is_full_rope():
    x = _tokens()
    model = _model()
    with torch.no_grad():
        rope = model(x)
        for conv in ("spread", "proportional"):
            other = _model(rope_fraction=1.0, rope_convention=conv)
            torch.testing.assert_close(other(x), rope, atol=1e-6, rtol=1e-6)
            np.testing.assert_allclose(other.layer_frequencies()[0],
                                       pc.rope_frequencies(16), rtol=1e-14)


def test_a_nope_layer_carries_no_position():
    """Layer 1 without position, layers 0 and 2 rotated: the NoPE layer's
    attention ignores the positions (permuting its keys and values with the
    same permutation of positions leaves each query's output unchanged
    when the mask allows all of them: the last query)."""
    model = _model(nope_layers=(1,))
    _, positions = model._layer_positions(12, "cpu")
    assert "rotations" in positions[0] and "rotations" in positions[2]
    assert set(positions[1]) == {"logit_scale"}
    attn = model.blocks[1].attn
    x = torch.randn(1, 12, 32, generator=torch.Generator().manual_seed(0))
    perm = torch.cat([torch.randperm(11, generator=torch.Generator()
                                     .manual_seed(1)), torch.tensor([11])])
    with torch.no_grad():
        y = attn(x, **positions[1])[0, -1]
        y_perm = attn(x[:, perm], **positions[1])[0, -1]
        torch.testing.assert_close(y, y_perm, atol=1e-6, rtol=1e-6)
        rope = model.blocks[0].attn
        assert not torch.allclose(rope(x, **positions[0])[0, -1],
                                  rope(x[:, perm], **positions[0])[0, -1],
                                  atol=1e-4)


def test_nope_temperature_is_posenc_core():
    """Llama 4's query scale: posenc_core.nope_attention_temperature of each
    position, in the NoPE layers only; 1 before floor_scale - 1, so the
    logits there are those of the model without it."""
    F, n = 8, 40
    plain = _model(nope_layers=(2,))
    hot = _model(nope_layers=(2,), nope_temperature={"floor_scale": F})
    _, positions = hot._layer_positions(n, "cpu")
    np.testing.assert_allclose(
        positions[2]["query_scale"].numpy(),
        pc.nope_attention_temperature(n, floor_scale=F), rtol=1e-6)
    assert "query_scale" not in positions[0] and "query_scale" not in \
        positions[1]
    x = _tokens(n)
    with torch.no_grad():
        a, b = plain(x), hot(x)
    torch.testing.assert_close(a[:, : F - 1], b[:, : F - 1], atol=0, rtol=0)
    assert not torch.allclose(a[:, F - 1:], b[:, F - 1:], atol=1e-4)
    # ... and it is the queries' scale: the same as scaling the query rows
    # of layer 2's projection, at every position where tau is one value
    tau = pc.nope_attention_temperature(n, floor_scale=F)
    assert tau[F - 1] == tau[2 * F - 2] > 1


def test_experiment_floor_scale_is_the_training_length():
    cfg = replace(layers.PLANS["quick"].lab, n_layers=2, nope_layers=(1,),
                  nope_temperature=True)
    model = cfg.model("rope", 5, cfg.L)
    assert model.nope_temperature == {"floor_scale": cfg.L}
    assert replace(cfg, nope_floor_scale=7).model(
        "rope", 5, cfg.L).nope_temperature == {"floor_scale": 7}


@pytest.mark.parametrize("kw, name", [
    ({"rope_fraction": 1.5}, "rope_fraction"),
    ({"rope_fraction": True}, "rope_fraction"),
    ({"rope_convention": "neox"}, "rope_convention"),
    ({"nope_layers": (3,)}, "nope_layers"),
    ({"nope_layers": (0.5,)}, "nope_layers"),
    ({"nope_temperature": {"floor_scale": 8}}, "nope_temperature needs"),
    ({"nope_layers": (1,), "nope_temperature": 8}, "nope_temperature"),
    ({"nope_layers": (1,), "nope_temperature": {"floor_scale": -1}},
     "floor_scale"),
])
def test_bad_layer_options_name_themselves(kw, name):
    with pytest.raises(ValueError, match=name):
        _model(**kw)


def test_layer_options_are_for_rope_only():
    with pytest.raises(ValueError, match="method 'rope' only"):
        _model("alibi", rope_fraction=0.5)
    with pytest.raises(ValueError, match="fully rotated"):
        _model(rope_fraction=0.5).set_rope_scaling({"type": "linear",
                                                    "factor": 2})


@pytest.mark.parametrize("changes, name", [
    ({"rope_fraction": 0.5}, "stretch"),
    ({"rope_convention": "neox", "stretch": False}, "rope_convention"),
    ({"nope_temperature": True, "stretch": False}, "nope_temperature"),
    ({"nope_floor_scale": 0, "stretch": False}, "nope_floor_scale"),
    ({"tasks": ("passkey", "qa")}, "tasks"),
    ({"tasks": ("passkey",), "L": 10}, "L must hold"),
    ({"passkey_steps": 0}, "passkey_steps"),
])
def test_bad_settings_name_themselves(changes, name):
    cfg = replace(ex.PRESETS["quick"], methods=("rope",), **changes)
    with pytest.raises(ValueError, match=name):
        cfg.check()


# ---- the passkey task


def test_passkey_examples_are_what_they_claim():
    digits, n = 5, 40
    rng = np.random.default_rng(0)
    x, y, mask = data.passkey_batch(200, n, rng, digits=digits)
    assert x.shape == y.shape == mask.shape == (200, n)
    assert torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted by one
    assert mask.sum(1).eq(digits).all() and mask[:, -digits:].all()
    depth = data.passkey_depths(x, digits=digits)
    filler_total = n + 1 - 2 * (digits + 1)
    for row, d in zip(range(200), depth, strict=True):
        seq = torch.cat([x[row], y[row, -1:]]).numpy()
        key_at = int(np.flatnonzero(seq == data.PASSKEY_KEY)[0])
        assert (seq == data.PASSKEY_KEY).sum() == 1
        assert (seq == data.PASSKEY_QUERY).sum() == 1
        assert seq[n - digits] == data.PASSKEY_QUERY
        key = seq[key_at + 1: key_at + 1 + digits]
        assert (key < data.PASSKEY_DIGITS).all()
        np.testing.assert_array_equal(y[row][mask[row]].numpy(), key)
        filler = np.delete(seq, np.r_[key_at: key_at + 1 + digits,
                                      n - digits: n + 1])
        assert filler.size == filler_total
        assert ((filler >= data.PASSKEY_DIGITS)
                & (filler < data.PASSKEY_KEY)).all()
        steps = np.diff(filler - data.PASSKEY_DIGITS) % data.PASSKEY_FILLER
        assert (steps == 1).all()  # the cycle, in order, around the key
        assert d == pytest.approx(key_at / filler_total)
    # the key's place and digits are spread out, as drawn
    assert depth.min() == 0 and depth.max() == 1 and 0.4 < depth.mean() < 0.6
    keys = y[mask].view(200, digits)
    assert len(set(map(tuple, keys.tolist()))) >= 195  # of 10^5 keys
    assert set(keys.flatten().tolist()) == set(range(10))


def test_passkey_follows_the_seed_and_refuses_short_lengths():
    a = data.passkey_batch(8, 20, np.random.default_rng(3))
    b = data.passkey_batch(8, 20, np.random.default_rng(3))
    c = data.passkey_batch(8, 20, np.random.default_rng(4))
    assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))
    assert not torch.equal(a[0], c[0])
    x, _, _ = data.passkey_batch(4, 11, np.random.default_rng(0))
    assert (data.passkey_depths(x) == 0).all()  # no filler: depth 0
    with pytest.raises(ValueError, match="n must be"):
        data.passkey_batch(4, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="digits"):
        data.passkey_batch(4, 20, np.random.default_rng(0), digits=0)


def test_evaluate_passkey_scores_a_perfect_model():
    """A model that answers from the input itself gets 1, one that never
    does gets 0; the depth bins count every example."""
    class Oracle(torch.nn.Module):
        def forward(self, x):  # the next token, from the example's key
            out = torch.full((*x.shape, data.PASSKEY_VOCAB), -1.0)
            for row in range(len(x)):
                at = int((x[row] == data.PASSKEY_KEY).nonzero()[0])
                key = x[row, at + 1: at + 6]
                out[row, -5:].scatter_(1, key[:, None], 1.0)
            return out

    res = ex.evaluate_passkey(Oracle(), 30, 40, np.random.default_rng(0),
                              "cpu")
    assert res["exact_match"] == res["digit_accuracy"] == 1.0
    assert sum(res["depth_counts"]) == 40 and res["examples"] == 40
    assert all(v in (1.0, None) for v in res["exact_by_depth"])
    zero = ex.evaluate_passkey(lambda x: torch.zeros(*x.shape, 20), 30, 40,
                               np.random.default_rng(0), "cpu")
    assert zero["exact_match"] == 0.0 and zero["digit_accuracy"] < 0.2


# ---- the experiment


def test_variants_of_the_full_plan():
    plan = layers.PLANS["full"]
    names = [v["name"] for v in layers.variants(plan)]
    assert names[:8] == ["f0", "f0.25-spread", "f0.25-proportional",
                         "f0.5-spread", "f0.5-proportional", "f0.75-spread",
                         "f0.75-proportional", "f1"]
    by = {v["name"]: v for v in layers.variants(plan)}
    assert by["f1"]["config"] == layers.LAB
    with_base = replace(plan, experiments=layers.EXPERIMENTS)
    if hasattr(pc, "rope_base_lower_bound"):  # the bases come from core
        by = {v["name"]: v for v in layers.variants(with_base)}
        assert by["f1"]["experiments"] == ["fraction", "base"]
        bound = pc.rope_base_lower_bound(64, 16)
        assert by["base1x"]["config"].base == pytest.approx(bound)
        assert by["base0.1x"]["config"].base == pytest.approx(bound / 10)
    else:  # ... and wait for it, with an error that says so
        with pytest.raises(ValueError, match="rope_base_lower_bound"):
            with_base.check()
    assert by["depth-mixed"]["config"].nope_layers == (3,)  # Llama 4's
    assert by["depth-nope"]["config"].nope_layers == (0, 1, 2, 3)
    assert by["depth-mixed-temp"]["config"].nope_temperature
    cfg = by["f1"]["config"]  # chapter 8's model and training
    full8 = ex.PRESETS["full"]
    for name in ("d_model", "n_layers", "n_heads", "L", "steps", "lr",
                 "batch_size", "base", "seeds", "eval_multiples"):
        assert getattr(cfg, name) == getattr(full8, name), name


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    plan = layers.PLANS["quick"]
    plan = replace(plan, lab=replace(plan.lab, seeds=(0,)))
    out = tmp_path_factory.mktemp("ch10quick")
    return layers.run_layers(plan, out, progress=False), out


def test_quick_preset_runs(quick_run):
    results, out = quick_run
    plan = layers.PLANS["quick"]
    names = [v["name"] for v in layers.variants(plan)]
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(
        f"{v}-{t}-seed0.json" for v in names for t in ("lm", "passkey"))
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk == json.loads(json.dumps(results))
    assert on_disk["schema"] == layers.SCHEMA
    assert layers.plan_from_json(on_disk["plan"]) == replace(
        plan, lab=replace(plan.lab, seeds=(0,)))
    L = plan.lab.L
    for run in results["runs"]:
        assert run["train_loss"][-1][1] < run["train_loss"][0][1], run
        if run["task"] == "passkey":
            assert list(run["eval"]) == [str(L * j) for j in (1, 2, 4)]
            for res in run["eval"].values():
                assert 0 <= res["exact_match"] <= 1
                assert sum(res["depth_counts"]) == res["examples"] == 32
        else:
            assert "stretch" not in run
            assert math.isfinite(run["eval"][str(4 * L)]["loss"])
    rows = layers.summary(results)
    assert [r["variant"] for r in rows["fraction"]] == names[:4]
    assert rows["fraction"][0]["loss"][L][2] == 1  # one seed
    table = layers.markdown_table(results, "depth", "passkey")
    assert table.count("\n") == 5 and "(n=1)" in table


def test_quick_fraction_zero_and_one_are_chapter_8s_runs(quick_run):
    """The f = 0 run is chapter 8's NoPE run and f = 1 its RoPE run (without
    the stretching): the same training, bit for bit."""
    results, _ = quick_run
    runs = {(r["variant"], r["task"]): r for r in results["runs"]}
    cfg8 = replace(ex.PRESETS["quick"], tasks=("lm",), seeds=(0,),
                   eval_multiples=(1, 2, 4), finetune_steps=0)
    for variant, method in (("f0", "none"), ("f1", "rope")):
        ref = ex.run_one(cfg8, "lm", method, 0)
        got = runs[variant, "lm"]
        assert got["train_loss"] == ref["train_loss"], variant
        assert got["eval"] == ref["eval"], variant


def test_quick_runs_are_deterministic(quick_run):
    results, _ = quick_run
    var = {v["name"]: v for v in layers.variants(layers.PLANS["quick"])}
    cfg = replace(var["depth-mixed-temp"]["config"], seeds=(0,))
    again = ex.run_one(cfg, "passkey", "rope", 0)
    stored = next(r for r in results["runs"] if r["task"] == "passkey"
                  and r["variant"] == "depth-mixed-temp")
    assert again["eval"] == stored["eval"]
    assert again["train_loss"] == stored["train_loss"]


def _close(new, old, path=""):
    if isinstance(old, dict):
        assert set(new) == set(old), path
        for key in old:
            _close(new[key], old[key], f"{path}/{key}")
    elif isinstance(old, list):
        assert len(new) == len(old), path
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            _close(a, b, f"{path}[{i}]")
    elif isinstance(old, float) and "_time" not in path:
        tol = ACC_TOL if ("exact" in path or "accuracy" in path) else LOSS_TOL
        if path.endswith("ppl"):
            tol = LOSS_TOL * old
        assert abs(new - old) <= tol, f"{path}: {new} != {old}"
    elif "_time" not in path:
        assert new == old, path


def test_quick_reproduces_the_committed_numbers(quick_run):
    results, _ = quick_run
    stored = layers.load_results(QUICK)
    assert layers.plan_from_json(stored["plan"]) == layers.PLANS["quick"]
    assert len(stored["runs"]) == 2 * len(stored["variants"]) * 3
    same_machine = all(
        stored["environment"][k] == ex.environment(layers.PLANS["quick"]
                                                   .lab)[k]
        for k in ("cpu", "torch", "numpy", "torch_threads"))
    old = {(r["variant"], r["task"]): r for r in stored["runs"]
           if r["seed"] == 0}
    for run in results["runs"]:
        ref = old[run["variant"], run["task"]]
        strip = {"wall_time_s", "cpu_time_s", "config"}
        assert {**run["config"], "seeds": None} == {**ref["config"],
                                                    "seeds": None}
        if same_machine:
            assert {k: v for k, v in run.items() if k not in strip} == {
                k: v for k, v in ref.items() if k not in strip}
        else:
            _close(run, ref)


def test_resume_keeps_finished_runs(tmp_path):
    plan = layers.PLANS["quick"]
    plan = replace(plan, experiments=("depth",),
                   lab=replace(plan.lab, seeds=(0,), steps=3,
                               passkey_steps=3, tasks=("passkey",)))
    first = layers.run_layers(plan, tmp_path, progress=False)
    victim = tmp_path / "runs" / "depth-nope-passkey-seed0.json"
    victim.unlink()
    keep = (tmp_path / "runs" / "depth-rope-passkey-seed0.json").read_text()
    with pytest.raises(ValueError, match="out must be an empty"):
        layers.run_layers(plan, tmp_path, progress=False)
    again = layers.run_layers(plan, tmp_path, progress=False, resume=True)
    assert again["resumed"] == 3 and victim.exists()
    assert (tmp_path / "runs" / "depth-rope-passkey-seed0.json"
            ).read_text() == keep
    timing = ("wall_time_s", "cpu_time_s")
    strip = [{k: v for k, v in r.items() if k not in timing}
             for r in first["runs"]]
    assert strip == [{k: v for k, v in r.items() if k not in timing}
                     for r in again["runs"]]


def test_jobs_do_not_change_the_runs(tmp_path):
    """Two worker processes (experiment.run_pool) give the runs and saved
    models that one process gives."""
    plan = layers.PLANS["quick"]
    plan = replace(plan, experiments=("depth",),
                   lab=replace(plan.lab, seeds=(0,), steps=3,
                               passkey_steps=3, tasks=("passkey",)))
    one = layers.run_layers(plan, tmp_path / "1", progress=False,
                            save_models=True)
    two = layers.run_layers(plan, tmp_path / "2", progress=False, jobs=2,
                            save_models=True)
    timing = ("wall_time_s", "cpu_time_s")

    def key(results):
        return sorted(({k: v for k, v in r.items() if k not in timing}
                       for r in results["runs"]), key=lambda r: r["variant"])

    assert len(one["runs"]) == 4 and key(one) == key(two)
    for path in (tmp_path / "1" / "models").iterdir():
        a = torch.load(path, weights_only=True)
        b = torch.load(tmp_path / "2" / "models" / path.name,
                       weights_only=True)
        assert a.keys() == b.keys() and all(
            torch.equal(a[k], b[k]) for k in a)


def test_saved_models_are_the_trained_ones(tmp_path):
    plan = layers.PLANS["quick"]
    plan = replace(plan, experiments=("depth",),
                   lab=replace(plan.lab, seeds=(0,), steps=3,
                               passkey_steps=3, tasks=("passkey",)))
    results = layers.run_layers(plan, tmp_path, progress=False,
                                save_models=True)
    path = tmp_path / "models" / "depth-mixed-temp-passkey-seed0.pt"
    model = layers.load_model(results, "depth-mixed-temp", "passkey", 0, path)
    assert model.nope_layers == (1,)
    again, run = layers.train_model(results, "depth-mixed-temp", "passkey", 0)
    for a, b in zip(model.state_dict().values(),
                    again.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    stored = next(r for r in results["runs"]
                  if r["variant"] == "depth-mixed-temp")
    assert run["eval"] == stored["eval"]


def test_command_line(tmp_path, capsys):
    out = tmp_path / "cli"
    layers.main(["--preset", "quick", "--experiments", "depth", "--seeds",
                 "1", "--steps", "2", "--passkey-steps", "2", "--out",
                 str(out), "--no-progress", "--jobs", "1"])
    results = json.loads((out / "results.json").read_text())
    assert results["plan"]["lab"]["steps"] == 2
    assert len(results["runs"]) == 8
    with pytest.raises(SystemExit):
        layers.main(["--preset", "quick", "--experiments", "depth", "--out",
                     str(out)])
    assert "out must be an empty" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        layers.main(["--preset", "quick", "--experiments", "width",
                     "--out", str(tmp_path / "x")])
    assert "experiments must be" in capsys.readouterr().err


def test_per_seed_and_paired_read_the_runs():
    def run(variant, task, seed, value):
        key = "loss" if task == "lm" else "exact_match"
        return {"variant": variant, "task": task, "seed": seed,
                "eval": {"64": {key: value}, "128": {key: value + 1}}}

    cfg = {"L": 64}
    results = {"variants": [{"name": "a", "config": cfg},
                            {"name": "b", "config": cfg}],
               "runs": [run("a", "lm", 0, 1.0), run("a", "lm", 1, 2.0),
                        run("b", "lm", 0, 1.5), run("b", "passkey", 0, 0.5),
                        run("b", "lm", 2, 9.0)]}
    assert layers.per_seed(results, "a") == {0: 1.0, 1: 2.0}
    assert layers.per_seed(results, "a", length=128) == {0: 2.0, 1: 3.0}
    assert layers.per_seed(results, "b", "passkey") == {0: 0.5}
    assert layers.paired(results, "a", "b") == {0: -0.5}  # seed 0 only
    with pytest.raises(ValueError, match="metric"):
        layers.per_seed(results, "a", "ppl")
    with pytest.raises(ValueError, match="variant"):
        layers.per_seed(results, "c")


# ---- the committed full run, which chapter 10 reads


def test_committed_full_results_are_consistent():
    """Every committed run is the run of its model's configuration, in
    runs/ too; the summary is summarize(runs); "complete" says whether
    every run of the plan is in (a run cut short commits what finished)."""
    full = layers.load_results(FULL)
    plan = layers.plan_from_json(full["plan"])
    assert plan == layers.PLANS["full"]
    configs = {v["name"]: json.loads(json.dumps(asdict(v["config"])))
               for v in layers.variants(plan)}
    assert [v["name"] for v in full["variants"]] == list(configs)
    keys = [(r["variant"], r["task"], r["seed"]) for r in full["runs"]]
    wanted = {(v, t, s) for v in configs for t in plan.lab.tasks
              for s in plan.lab.seeds}
    assert len(set(keys)) == len(keys) and set(keys) <= wanted
    assert full["complete"] == (set(keys) == wanted)
    assert full["summary"] == json.loads(json.dumps(
        layers.summarize(full["runs"])))
    files = {p.name for p in (FULL.parent / "runs").iterdir()}
    assert files == {f"{v}-{t}-seed{s}.json" for v, t, s in keys}
    for run in full["runs"]:
        path = FULL.parent / "runs" / (
            f"{run['variant']}-{run['task']}-seed{run['seed']}.json")
        assert json.loads(path.read_text()) == run
        assert run["config"] == configs[run["variant"]]
    assert full["wall_time_s"] == pytest.approx(
        sum(s["wall_time_s"] for s in full["sessions"]), abs=0.2)
