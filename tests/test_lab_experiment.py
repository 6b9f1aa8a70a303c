"""posenc_lab's experiment: a quick run, its JSON, the committed numbers.

The quick configuration (``PRESETS["quick"]``, a few seconds per method)
is run once for seed 0 and checked three ways: training lowers the loss,
evaluation runs at every length, and the JSON has its schema. It is also
the smallest committed configuration (results/ch08/quick/results.json, made
by ``python -m posenc_lab --preset quick --out results/ch08/quick``), so
the same run must reproduce the stored numbers of seed 0:

* exactly, when the stored run was made on the same CPU model with the
  same torch and thread count (runs are deterministic on one machine);
* otherwise within ``LOSS_TOL`` nats per character and ``ACC_TOL`` in
  accuracy: another CPU may round float32 sums differently, and 60 steps
  of training carry such differences into the last digits.
"""

import json
import math
import os
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from posenc_lab.__main__ import main
from posenc_lab.experiment import (
    PRESETS,
    SCHEMA,
    Config,
    config_from,
    config_from_json,
    environment,
    run_experiment,
    summarize,
    write_json,
)
from posenc_lab.model import METHODS

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "results" / "ch08" / "quick" / "results.json"
LOSS_TOL = 5e-3
ACC_TOL = 2 / 64  # two examples of the 64 scored


@pytest.fixture(scope="module")
def stored():
    return json.loads(COMMITTED.read_text())


@pytest.fixture(scope="module")
def quick(stored, tmp_path_factory):
    cfg = replace(config_from_json(stored["config"]), seeds=(0,))
    out = tmp_path_factory.mktemp("quick")
    return run_experiment(cfg, out, progress=False), out


def test_committed_quick_run_is_the_quick_preset(stored):
    assert config_from_json(stored["config"]) == PRESETS["quick"]
    assert stored["schema"] == SCHEMA
    assert len(stored["runs"]) == 2 * len(METHODS) * 3


def test_training_lowers_the_loss(quick):
    results, _ = quick
    for run in results["runs"]:
        first, last = run["train_loss"][0][1], run["train_loss"][-1][1]
        if run["task"] == "lm":  # from about ln(71) = 4.26 to below 3.3
            assert last < first - 0.9, run["method"]
            assert run["eval"]["16"]["loss"] < math.log(71) - 0.9
        else:  # 40 steps: on the way down from ln(17) = 2.83
            assert last < first, run["method"]


def test_evaluation_runs_at_every_length(quick):
    results, _ = quick
    cfg = PRESETS["quick"]
    lengths = [str(cfg.L * j) for j in cfg.eval_multiples]
    for run in results["runs"]:
        if run["task"] == "copy":
            assert list(run["eval"]) == [str(cfg.copy_k * j)
                                         for j in cfg.copy_multiples]
            for res in run["eval"].values():
                assert 0 <= res["exact_match"] <= res["symbol_accuracy"] <= 1
            continue
        assert list(run["eval"]) == lengths
        for res in run["eval"].values():
            assert math.isfinite(res["loss"]) and res["windows"] >= 1
            assert res["ppl"] == pytest.approx(math.exp(res["loss"]), rel=1e-4)
        assert len(run["loss_by_position"]) == cfg.L * max(cfg.eval_multiples)
        if run["method"] == "rope":
            stretch = run["stretch"]
            for kind in ("pi", "ntk", "yarn"):
                assert list(stretch[kind]) == lengths[1:]
            for kind in ("pi_finetune", "finetune"):
                assert list(stretch[kind]) == lengths
                assert len(stretch[kind + "_train_loss"]) >= 2


def test_json_schema(quick):
    results, out = quick
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk == json.loads(json.dumps(results))
    assert set(on_disk) == {
        "schema", "config", "environment", "data", "runs", "summary",
        "wall_time_s", "load_average_start", "load_average_during",
        "load_average_end"}
    assert on_disk["config"] == json.loads(json.dumps(
        asdict(replace(PRESETS["quick"], seeds=(0,)))))
    env = on_disk["environment"]
    for key in ("python", "torch", "numpy", "platform", "cpu", "cpu_count",
                "torch_threads", "device", "jobs"):
        assert key in env, key
    assert on_disk["data"]["sha256"] == (
        "f00b287e63f5ae3442dc5b9c4bf18650adaf3b7f5034f7be5460089b934a0752")
    assert on_disk["wall_time_s"] > 0
    files = sorted(p.name for p in (out / "runs").iterdir())
    assert files == sorted(f"{t}-{m}-seed0.json" for t in ("lm", "copy")
                           for m in METHODS)
    assert not list(out.rglob("*.tmp"))
    summary = on_disk["summary"]
    assert set(summary["lm"]) == set(METHODS) == set(summary["copy"])
    assert summary["lm"]["alibi"]["16"]["loss"]["n"] == 1
    assert set(summary["rope_stretch"]) == {
        "pi", "ntk", "yarn", "pi_finetune", "finetune"}


def _close(new, old, path=""):
    """Every number of ``old`` matches ``new`` within the tolerances."""
    if isinstance(old, dict):
        assert set(new) == set(old), path
        for key in old:
            _close(new[key], old[key], f"{path}/{key}")
    elif isinstance(old, list):
        assert len(new) == len(old), path
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            _close(a, b, f"{path}[{i}]")
    elif isinstance(old, float) and "wall_time" not in path:
        tol = ACC_TOL if ("exact" in path or "accuracy" in path) else LOSS_TOL
        if path.endswith("ppl"):
            tol = LOSS_TOL * old
        assert abs(new - old) <= tol, f"{path}: {new} != {old}"
    elif "wall_time" not in path:
        assert new == old, path


def test_reproduces_the_committed_numbers(quick, stored):
    results, _ = quick
    same_machine = all(
        stored["environment"][k] == environment(PRESETS["quick"])[k]
        for k in ("cpu", "torch", "numpy", "torch_threads"))
    old = {(r["task"], r["method"]): r for r in stored["runs"]
           if r["seed"] == 0}
    for run in results["runs"]:
        ref = old[run["task"], run["method"]]
        if same_machine:
            assert {k: v for k, v in run.items() if k != "wall_time_s"} == {
                k: v for k, v in ref.items() if k != "wall_time_s"}
        else:
            _close(run, ref)


def test_seeds_differ(stored):
    """The committed seeds are really different runs."""
    losses = {r["seed"]: r["eval"]["16"]["loss"] for r in stored["runs"]
              if r["task"] == "lm" and r["method"] == "rope"}
    assert len(set(losses.values())) == 3


# ---- one command, its folder and its errors

TINY = dict(methods=("alibi",), tasks=("lm",), seeds=(0,), steps=3,
            eval_multiples=(1, 2))


def test_refuses_a_non_empty_folder_unless_told(tmp_path):
    cfg = config_from("quick", **TINY)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="out must be an empty"):
        run_experiment(cfg, tmp_path, progress=False)
    run_experiment(cfg, tmp_path, progress=False, overwrite=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "results.json").exists()


def test_command_line(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--preset", "quick", "--methods", "alibi,t5", "--tasks", "lm",
          "--seeds", "1", "--steps", "3", "--eval-multiples", "1,2",
          "--out", str(out), "--no-progress"])
    results = json.loads((out / "results.json").read_text())
    assert [r["method"] for r in results["runs"]] == ["alibi", "t5"]
    assert results["config"]["steps"] == 3
    with pytest.raises(SystemExit):
        main(["--preset", "quick", "--out", str(out)])
    assert "out must be an empty" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--preset", "quick", "--methods", "alibi,xpos",
              "--out", str(tmp_path / "x")])
    assert "methods must be" in capsys.readouterr().err


@pytest.mark.parametrize("changes, name", [
    ({"methods": ("rope", "kerple")}, "methods"),
    ({"methods": ("rope",), "d_model": 12, "n_heads": 4}, "n_heads"),
    ({"methods": ("learned",), "learned_beyond": None}, "learned_beyond"),
    ({"methods": ("learned",), "learned_beyond": "error"}, "learned_beyond"),
    ({"steps": 0}, "steps"),
    ({"rope_layout": "neox"}, "rope_layout"),
    ({"eval_multiples": ()}, "eval_multiples"),
    ({"device": "gpu0"}, "device"),
])
def test_bad_settings_name_themselves(tmp_path, changes, name):
    cfg = replace(PRESETS["quick"], **changes)
    with pytest.raises(ValueError, match=name):
        run_experiment(cfg, tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


def test_learned_error_is_fine_at_the_training_length_only(tmp_path):
    cfg = replace(PRESETS["quick"], methods=("learned",), tasks=("lm",),
                  learned_beyond="error", eval_multiples=(1,),
                  finetune_factor=1, copy_multiples=(1,))
    cfg.check()
    with pytest.raises(ValueError, match="preset"):
        config_from("huge")
    assert isinstance(cfg, Config)


def test_write_json_is_atomic(tmp_path):
    path = tmp_path / "r.json"
    write_json(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json(path, {"a": object()})  # fails half-way through dumping
    assert json.loads(path.read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == ["r.json"]


def test_jobs_do_not_change_the_numbers(tmp_path):
    cfg = config_from("quick", **{**TINY, "seeds": (0, 1)})
    one = run_experiment(cfg, tmp_path / "1", progress=False)
    two = run_experiment(cfg, tmp_path / "2", progress=False, jobs=2)
    strip = [{k: v for k, v in r.items() if k != "wall_time_s"}
             for r in one["runs"]]
    assert strip == [{k: v for k, v in r.items() if k != "wall_time_s"}
                     for r in two["runs"]]


# ---- the committed full results, which chapter 8 reads

FULL = ROOT / "results" / "ch08" / "full" / "results.json"


def test_committed_full_results_are_complete():
    full = json.loads(FULL.read_text())
    cfg = config_from_json(full["config"])
    assert cfg == PRESETS["full"]
    assert full["schema"] == SCHEMA and len(cfg.seeds) >= 3
    keys = sorted((r["task"], r["method"], r["seed"]) for r in full["runs"])
    assert keys == sorted((t, m, s) for t in cfg.tasks for m in cfg.methods
                          for s in cfg.seeds)
    assert full["summary"] == json.loads(json.dumps(summarize(full["runs"])))
    for run in full["runs"]:
        runs_file = FULL.parent / "runs" / (
            f"{run['task']}-{run['method']}-seed{run['seed']}.json")
        assert json.loads(runs_file.read_text()) == run
    assert 0 < full["wall_time_s"] <= 1800  # the 30 minutes


def test_summary_is_mean_and_sample_std():
    runs = [{"task": "lm", "method": "alibi", "seed": s,
             "eval": {"64": {"loss": v, "ppl": math.exp(v)}}}
            for s, v in enumerate([1.0, 2.0, 4.0])]
    loss = summarize(runs)["lm"]["alibi"]["64"]["loss"]
    assert loss["mean"] == pytest.approx(7 / 3, abs=1e-5)
    assert loss["std"] == pytest.approx(math.sqrt(7 / 3), abs=1e-5)
    assert (loss["min"], loss["max"], loss["n"]) == (1.0, 4.0, 3)
