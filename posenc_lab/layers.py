r"""Chapter 10's experiments: where position lives, layer by layer.

``python -m posenc_lab.layers --out DIR`` trains, for every variant below
and every seed, chapter 8's model on two tasks: the language model of
chapter 8 (*Alice*, trained at ``L`` characters, scored at ``L`` to
``16L``) and passkey retrieval (:func:`posenc_lab.data.passkey_batch`,
trained at ``L`` tokens, scored at ``L`` to ``16L``). Three experiments
(``Plan.experiments``):

``"fraction"``
    The rotated fraction ``f`` of every head (``Plan.fractions``: 0, 1/4,
    1/2, 3/4, 1) in both conventions of
    :func:`posenc_core.partial_rope_frequencies`: ``"spread"`` (GPT-NeoX's
    ``rotary_pct``, transformers' ``partial_rotary_factor``) and
    ``"proportional"`` (p-RoPE, Barbero et al. 2024; Gemma 4). ``f = 0``
    (no pair turns: NoPE) and ``f = 1`` (chapter 8's RoPE) are the same in
    both conventions and run once.
``"base"``
    The base against the lower bound of Men et al. (2024) at the training
    length, :func:`posenc_core.rope_base_lower_bound` ``(L, d_k)``: bases
    ``Plan.base_factors`` times the bound, and the book's base (``f = 1``
    above, shared).
``"depth"``
    A deeper model (``Plan.depth_layers`` layers) with a NoPE layer every
    ``Plan.nope_interval`` layers, as Llama 4 (transformers'
    ``no_rope_layer_interval``: layer ``i`` has no position when
    ``(i + 1) % interval == 0``), with and without Llama 4's query
    temperature :func:`posenc_core.nope_attention_temperature`, whose floor
    ``F`` is scaled to the training length: ``F = L`` (Llama 4's 8192 is
    its RoPE layers' ``original_max_position_embeddings``, the length of
    its first training stage), ``attn_scale`` core's default 0.1; against
    the same depth all-RoPE and all-NoPE.

Every run is :func:`posenc_lab.experiment.run_one` with the variant's
:class:`~posenc_lab.experiment.Config`: deterministic for a seed on one
machine, so every model can be rebuilt by running it again
(:func:`train_model`), or saved as it trains (``--save-models``, then
:func:`load_model`). Results: ``DIR/results.json`` and
``DIR/runs/<variant>-<task>-seed<k>.json``; :func:`summary` and
:func:`markdown_table` turn them into the chapter's tables.
"""

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import posenc_core as pc

from . import data
from . import experiment as ex
from .experiment import Config

__all__ = ["Plan", "PLANS", "SCHEMA", "EXPERIMENTS", "variants",
           "run_layers", "summarize", "summary", "markdown_table",
           "per_seed", "paired",
           "load_results", "load_model", "train_model", "plan_from_json",
           "main"]

SCHEMA = "posenc_lab.layers/1"
EXPERIMENTS = ("fraction", "base", "depth")
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "ch10" / "full" / "results.json"

#: chapter 8's model and training, with both tasks and no stretching
LAB = Config(methods=("rope",), tasks=("lm", "passkey"), stretch=False,
             finetune_steps=0, passkey_steps=600, passkey_eval_examples=100)


@dataclass(frozen=True)
class Plan:
    """The variants to train: ``lab`` holds every shared setting."""

    lab: Config = LAB
    experiments: tuple = EXPERIMENTS
    fractions: tuple = (0.0, 0.25, 0.5, 0.75, 1.0)
    conventions: tuple = ("spread", "proportional")
    base_factors: tuple = (0.1, 1.0)  # times the bound; and lab.base
    depth_layers: int = 4
    nope_interval: int = 4

    def check(self):
        """Raise ``ValueError`` naming the first bad setting."""
        bad = [e for e in self.experiments if e not in EXPERIMENTS]
        if bad or not self.experiments:
            raise ValueError(f"experiments must be a non-empty selection of "
                             f"{EXPERIMENTS}, got {list(self.experiments)}")
        if self.lab.methods != ("rope",):
            raise ValueError(f"lab.methods must be ('rope',): every variant "
                             f"is a rope model, got {self.lab.methods}")
        if any(not 0 <= f <= 1 for f in self.fractions) or not self.fractions:
            raise ValueError(f"fractions must be numbers in [0, 1], got "
                             f"{self.fractions}")
        if any(c not in ("spread", "proportional") for c in self.conventions):
            raise ValueError(f"conventions must be 'spread' or "
                             f"'proportional', got {self.conventions}")
        if any(not (isinstance(b, (int, float)) and b > 0)
               for b in self.base_factors):
            raise ValueError(f"base_factors must be numbers > 0, got "
                             f"{self.base_factors}")
        for name in ("depth_layers", "nope_interval"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) \
                    or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got "
                                 f"{value!r}")
        if "base" in self.experiments and not hasattr(
                pc, "rope_base_lower_bound"):
            raise ValueError(
                "experiments 'base' needs posenc_core.rope_base_lower_bound "
                "and rope_supported_length (Men et al.'s bound), which this "
                "posenc_core does not have yet")
        if self.nope_interval > self.depth_layers:
            raise ValueError(
                f"nope_interval must be at most depth_layers "
                f"({self.depth_layers}) to leave a NoPE layer, got "
                f"{self.nope_interval}")
        self.lab.check()
        for var in variants(self):
            var["config"].check()


#: The experiments the presets run: all of them.
RUN_NOW = EXPERIMENTS

PLANS = {
    "full": Plan(experiments=RUN_NOW),
    # the tests' configuration: chapter 8's quick model, seconds per run
    "quick": Plan(
        lab=replace(ex.PRESETS["quick"], methods=("rope",),
                    tasks=("lm", "passkey"), stretch=False, finetune_steps=0,
                    passkey_steps=60, passkey_multiples=(1, 2, 4),
                    passkey_eval_examples=32, eval_multiples=(1, 2, 4)),
        experiments=RUN_NOW, fractions=(0.0, 0.5, 1.0), depth_layers=2,
        nope_interval=2),
}


def _fraction_name(f):
    return {0.0: "0", 0.25: "1/4", 0.5: "1/2", 0.75: "3/4", 1.0: "1"}.get(
        f, f"{f:g}")


def variants(plan):
    """Every model of ``plan``, once each, in the order they run.

    A list of dicts: ``name`` (also the run files' prefix), ``experiments``
    (those it belongs to: ``f = 1`` is in ``"fraction"`` and ``"base"``),
    ``label`` (for a table), ``changes`` (the settings it changes in
    ``plan.lab``) and ``config`` (the :class:`Config` it runs).
    """
    lab, out = plan.lab, {}

    def add(experiment, name, label, **changes):
        if name in out:
            out[name]["experiments"].append(experiment)
            return
        out[name] = {"name": name, "experiments": [experiment],
                     "label": label, "changes": changes,
                     "config": replace(lab, **changes)}

    head_dim = lab.d_model // lab.n_heads
    for experiment in plan.experiments:
        if experiment == "fraction":
            for f in plan.fractions:
                if f in (0.0, 1.0):
                    add(experiment, f"f{f:g}",
                        "f = 0 (NoPE)" if f == 0 else "f = 1 (RoPE)",
                        **({"rope_fraction": 0.0} if f == 0 else {}))
                    continue
                for conv in plan.conventions:
                    add(experiment, f"f{f:g}-{conv}",
                        f"f = {_fraction_name(f)}, {conv}",
                        rope_fraction=float(f), rope_convention=conv)
        elif experiment == "base":
            bound = pc.rope_base_lower_bound(lab.L, head_dim)
            for factor in plan.base_factors:
                base = float(factor * bound)
                add(experiment, f"base{factor:g}x",
                    f"b = {factor:g} x bound ({base:.4g})", base=base)
            add(experiment, "f1", "f = 1 (RoPE)")
        else:
            n = plan.depth_layers
            nope = tuple(i for i in range(n)
                         if (i + 1) % plan.nope_interval == 0)
            add(experiment, "depth-rope", f"{n} layers, all RoPE",
                n_layers=n)
            add(experiment, "depth-nope", f"{n} layers, all NoPE",
                n_layers=n, nope_layers=tuple(range(n)))
            add(experiment, "depth-mixed",
                f"{n} layers, NoPE at {list(nope)}", n_layers=n,
                nope_layers=nope)
            add(experiment, "depth-mixed-temp",
                f"{n} layers, NoPE at {list(nope)} with temperature",
                n_layers=n, nope_layers=nope, nope_temperature=True)
    return list(out.values())


# ------------------------------------------------------------ running


def _key(var, task, seed):
    return f"{var}-{task}-seed{seed}"


def _jsonable(obj):
    return json.loads(json.dumps(obj))


def _worker(cfg, task, seed, save, queue):
    steps = [0, time.perf_counter()]
    scale = cfg.n_layers / 2  # in steps of a 2-layer model, roughly

    def tick(k):
        steps[0] += k * scale
        if time.perf_counter() - steps[1] > 0.25:
            queue.put(steps[0])
            steps[:] = [0, time.perf_counter()]

    cpu = time.process_time()
    run = ex.run_one(cfg, task, "rope", seed, None, tick, save=save)
    run["cpu_time_s"] = round(time.process_time() - cpu, 2)
    queue.put(steps[0])
    return run


def _steps(cfg, task):
    return {"lm": cfg.steps, "passkey": cfg.passkey_steps,
            "copy": cfg.copy_steps}[task] * cfg.n_layers / 2


def run_layers(plan, out, *, overwrite=False, resume=False, progress=True,
               jobs=1, save_models=False):
    """Run every variant, task and seed of ``plan``; write ``out``.

    Refuses a non-empty ``out`` unless ``overwrite`` (start again) or
    ``resume`` (keep the finished runs of ``out/runs`` whose configuration
    is the one asked for, and run the others). ``jobs`` worker processes
    run side by side; the numbers do not depend on it. With
    ``save_models``, every trained model's ``state_dict`` goes to
    ``out/models/<variant>-<task>-seed<k>.pt``. Returns the results, also
    written to ``out/results.json`` (atomically).
    """
    plan.check()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a folder, got the file {out}")
    if out.exists() and any(out.iterdir()) and not (overwrite or resume):
        raise ValueError(
            f"out must be an empty or new folder (or pass overwrite or "
            f"resume), {out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    if not resume:
        for old in [out / "results.json", *(out / "runs").glob("*.json")]:
            old.unlink(missing_ok=True)
    lab = plan.lab
    vars_ = variants(plan)
    # seed by seed, every experiment in each; last, the two language
    # models that are chapter 8's runs again (f = 0 is its NoPE, f = 1 its
    # RoPE without the stretching), so that a run cut short keeps the new
    todo, last, done = [], [], {}
    for seed in lab.seeds:
        for experiment in plan.experiments:
            for var in vars_:
                if var["experiments"][0] != experiment:
                    continue
                for task in lab.tasks:
                    again = task == "lm" and var["name"] in ("f0", "f1")
                    (last if again else todo).append((var, task, seed))
    todo += last
    if resume:
        for var, task, seed in todo:
            path = out / "runs" / f"{_key(var['name'], task, seed)}.json"
            if path.exists():
                run = json.loads(path.read_text())
                if run.get("config") == _jsonable(asdict(var["config"])):
                    done[_key(var["name"], task, seed)] = run
    sessions = []
    if resume and (out / "results.json").exists():
        before = json.loads((out / "results.json").read_text())
        sessions = before.get("sessions", []) if before.get(
            "schema") == SCHEMA else []
    corpus = ex.load_corpus(lab)
    env = ex.environment(lab)
    env["jobs"] = jobs
    head_dim = lab.d_model // lab.n_heads
    session = {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                            time.gmtime()),
               "runs_before": len(done), "runs": 0, "wall_time_s": 0.0,
               "load_average_start": ex._load(), "load_average_during": []}
    results = {
        "schema": SCHEMA, "plan": asdict(plan), "environment": env,
        "load_average_start": ex._load(), "load_average_during": [],
        "data": {"text": "posenc_lab/data/alice.txt",
                 "sha256": data.TEXT_SHA256,
                 "train_chars": int(len(corpus[1])),
                 "valid_chars": int(len(corpus[2])),
                 "vocab_size": len(corpus[0]),
                 "passkey_vocab_size": data.PASSKEY_VOCAB},
        "variants": [{k: (asdict(v) if k == "config" else v)
                      for k, v in var.items()} for var in vars_],
        "runs": list(done.values()), "resumed": len(done),
        "sessions": [*sessions, session], "complete": False}
    if "base" in plan.experiments:
        bound = pc.rope_base_lower_bound(lab.L, head_dim)
        results["bound"] = {
            "L": lab.L, "head_dim": head_dim, "rope_base_lower_bound": bound,
            "rope_supported_length": {
                var["name"]: pc.rope_supported_length(
                    var["config"].base, head_dim)
                for var in vars_ if "base" in var["experiments"]}}
    left = [item for item in todo
            if _key(item[0]["name"], item[1], item[2]) not in done]
    start = time.perf_counter()
    bar = ex._progress(int(sum(_steps(v["config"], t) for v, t, _ in left)),
                       progress)

    def save_path(var, task, seed):
        if not save_models:
            return None
        return out / "models" / f"{_key(var['name'], task, seed)}.pt"

    def write(final=False):
        """results.json as it stands (after every run, so that an
        interrupted experiment leaves a readable file)."""
        order = {_key(v["name"], t, s): i for i, (v, t, s) in enumerate(todo)}
        results["runs"].sort(key=lambda r: order[_key(
            r["variant"], r["task"], r["seed"])])
        session["wall_time_s"] = round(time.perf_counter() - start, 1)
        results["wall_time_s"] = round(sum(s["wall_time_s"]
                                           for s in results["sessions"]), 1)
        results["complete"] = len(results["runs"]) == len(todo)
        if final:
            session["load_average_end"] = results["load_average_end"] = \
                ex._load()
        results["summary"] = summarize(results["runs"])
        ex.write_json(out / "results.json", results)

    def finished(var, task, seed, run):
        run = {"variant": var["name"], **run,
               "config": _jsonable(asdict(var["config"]))}
        results["runs"].append(run)
        load = ex._load()
        results["load_average_during"].append(load)
        session["load_average_during"].append(load)
        session["runs"] += 1
        ex.write_json(out / "runs" / f"{_key(var['name'], task, seed)}.json",
                      run)
        write()

    try:
        if jobs == 1:
            for var, task, seed in left:
                bar.set_description(f"{var['name']} {task} seed {seed}")
                cfg = var["config"]
                scale = cfg.n_layers / 2
                cpu = time.process_time()
                run = ex.run_one(cfg, task, "rope", seed,
                                 corpus if task == "lm" else None,
                                 lambda k, s=scale: bar.update(k * s),
                                 save=save_path(var, task, seed))
                run["cpu_time_s"] = round(time.process_time() - cpu, 2)
                finished(var, task, seed, run)
        else:
            _parallel(left, jobs, bar, finished, save_path)
    finally:
        bar.close()
    write(final=True)
    return results


def _parallel(left, jobs, bar, finished, save_path):
    ex.run_pool([((var, task, seed),
                  (var["config"], task, seed, save_path(var, task, seed)))
                 for var, task, seed in left],
                jobs, bar, _worker, lambda tag, run: finished(*tag, run))


# ------------------------------------------------------------ reading


def summarize(runs):
    """Mean, sample std, min, max and n over seeds, per variant.

    ``{"lm": {variant: {length: {"loss": {...}, "ppl": {...}}}},
    "passkey": {variant: {length: {"exact_match": {...},
    "digit_accuracy": {...}}}}}`` (``posenc_lab.experiment.summarize`` with
    the variant in place of the method).
    """
    renamed = [{**run, "method": run["variant"]} for run in runs]
    s = ex.summarize(renamed)
    return {"lm": s["lm"], "passkey": s.get("passkey", {})}


def load_results(path=RESULTS):
    """A committed ``results.json`` of this experiment."""
    results = json.loads(Path(path).read_text())
    if results.get("schema") != SCHEMA:
        raise ValueError(f"path {path} is not a results file of "
                         f"posenc_lab.layers ({SCHEMA})")
    return results


def plan_from_json(stored):
    """The :class:`Plan` stored in a results file's ``"plan"``."""
    def tuples(d):
        return {k: tuple(v) if isinstance(v, list) else v
                for k, v in d.items()}
    stored = dict(stored)
    lab = ex.config_from_json(stored.pop("lab"))
    return Plan(lab=lab, **tuples(stored))


def _cell(entry):
    return None if entry is None else (entry["mean"], entry["std"],
                                       entry["n"])


def summary(results, experiment=None):
    """The chapter's tables: one row per variant of each experiment.

    Returns ``{experiment: [row, ...]}`` (or the rows of one
    ``experiment``), each row a dict: ``variant``, ``label``, the model
    (``fraction``, ``convention``, ``base``, ``n_layers``, ``nope_layers``,
    ``temperature``; for the base experiment also ``supported_length``,
    :func:`posenc_core.rope_supported_length` of its base), and per length
    (``int`` keys) ``loss`` and ``passkey`` as ``(mean, std, n)`` over the
    seeds that finished (``None`` where none did): the language model's
    loss in nats per character and the passkey's exact-retrieval rate;
    ``digits`` the per-digit accuracy, likewise.
    """
    s = results["summary"]
    supported = results.get("bound", {}).get("rope_supported_length", {})
    tables = {}
    for var in results["variants"]:
        cfg = var["config"]
        row = {"variant": var["name"], "label": var["label"],
               "fraction": cfg["rope_fraction"],
               "convention": cfg["rope_convention"], "base": cfg["base"],
               "n_layers": cfg["n_layers"],
               "nope_layers": list(cfg["nope_layers"]),
               "temperature": cfg["nope_temperature"],
               "loss": {}, "passkey": {}, "digits": {}}
        if var["name"] in supported:
            row["supported_length"] = supported[var["name"]]
        lm = s["lm"].get(var["name"], {})
        pk = s["passkey"].get(var["name"], {})
        for j in cfg["eval_multiples"]:
            n = cfg["L"] * j
            row["loss"][n] = _cell(lm.get(str(n), {}).get("loss"))
        for j in cfg["passkey_multiples"]:
            n = cfg["L"] * j
            row["passkey"][n] = _cell(pk.get(str(n), {}).get("exact_match"))
            row["digits"][n] = _cell(pk.get(str(n), {}).get(
                "digit_accuracy"))
        for experiment_ in var["experiments"]:
            tables.setdefault(experiment_, []).append(row)
    if "base" in tables:
        tables["base"].sort(key=lambda r: r["base"])
    if experiment is not None:
        if experiment not in tables:
            raise ValueError(f"experiment must be one of {tuple(tables)}, "
                             f"got {experiment!r}")
        return tables[experiment]
    return tables


def markdown_table(results, experiment, metric="loss", places=3):
    """One experiment as a Markdown table: mean ± std (n seeds) per length.

    ``metric``: ``"loss"`` (nats per character), ``"passkey"`` (exact
    retrieval) or ``"digits"`` (per-digit accuracy).
    """
    if metric not in ("loss", "passkey", "digits"):
        raise ValueError(f"metric must be 'loss', 'passkey' or 'digits', "
                         f"got {metric!r}")
    rows = summary(results, experiment)
    lengths = list(rows[0][metric])
    L = results["plan"]["lab"]["L"]
    head = ["model"] + [f"{n} ({n // L}L)" for n in lengths]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for row in rows:
        cells = []
        for n in lengths:
            c = row[metric][n]
            cells.append("" if c is None else
                         f"{c[0]:.{places}f} ± {c[1]:.{places}f}"
                         + ("" if c[2] == 3 else f" (n={c[2]})"))
        lines.append("| " + " | ".join([row["label"]] + cells) + " |")
    return "\n".join(lines)


def per_seed(results, variant, metric="loss", length=None):
    """One number per finished seed: ``{seed: value}``.

    ``metric``: ``"loss"`` (the language model, nats per character),
    ``"passkey"`` (exact retrieval) or ``"digits"`` (per-digit accuracy),
    at ``length`` (default: the training length ``L``). With
    :func:`paired`, how many seeds carry a comparison.
    """
    task, key = {"loss": ("lm", "loss"), "passkey": ("passkey",
                                                    "exact_match"),
                 "digits": ("passkey", "digit_accuracy")}.get(metric,
                                                              (None, None))
    if task is None:
        raise ValueError(f"metric must be 'loss', 'passkey' or 'digits', "
                         f"got {metric!r}")
    cfg = _variant(results, variant)["config"]
    n = str(cfg["L"] if length is None else length)
    return {r["seed"]: r["eval"][n][key] for r in results["runs"]
            if r["variant"] == variant and r["task"] == task
            and n in r["eval"]}


def paired(results, a, b, metric="loss", length=None):
    """``a`` minus ``b``, seed by seed, over the seeds both finished.

    Returns ``{seed: difference}``: a comparison holds for as many seeds
    as have the same sign (the same seed trains both on the same batches).
    """
    x = per_seed(results, a, metric, length)
    y = per_seed(results, b, metric, length)
    return {s: round(x[s] - y[s], 5) for s in sorted(set(x) & set(y))}


def _variant(results, name):
    for var in results["variants"]:
        if var["name"] == name:
            return var
    raise ValueError(f"variant must be one of "
                     f"{[v['name'] for v in results['variants']]}, "
                     f"got {name!r}")


def _vocab(task):
    if task == "passkey":
        return data.PASSKEY_VOCAB
    if task == "lm":
        return len(data.CharVocab(data.load_text()))
    raise ValueError(f"task must be 'lm' or 'passkey', got {task!r}")


def load_model(results, variant, task="lm", seed=0, path=None):
    """A model saved by ``--save-models``, rebuilt and loaded, in eval mode.

    ``path`` defaults to ``models/<variant>-<task>-seed<seed>.pt`` beside
    the results of the committed full run.
    """
    import torch

    cfg = ex.config_from_json(_variant(results, variant)["config"])
    model = cfg.model("rope", _vocab(task), cfg.L)
    if path is None:
        path = RESULTS.parent / "models" / f"{_key(variant, task, seed)}.pt"
    model.load_state_dict(torch.load(path, map_location="cpu",
                                     weights_only=True))
    return model.eval()


def train_model(results, variant, task="lm", seed=0, tick=lambda k: None):
    """Train one model of ``results`` again; returns ``(model, run)``.

    Runs are deterministic on one machine, so on the machine of the
    results ``run`` equals the stored run (and the model is the one that
    produced it); elsewhere it agrees to a few digits.
    """
    import tempfile

    cfg = ex.config_from_json(_variant(results, variant)["config"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.pt"
        run = ex.run_one(cfg, task, "rope", seed, tick=tick, save=path)
        model = load_model(results, variant, task, seed, path)
    return model, run


# ------------------------------------------------------------ command line


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m posenc_lab.layers",
        description="Chapter 10: the rotated fraction in both conventions, "
                    "the base against Men et al.'s bound, a NoPE layer "
                    "among rotary ones (with and without Llama 4's "
                    "temperature); language model and passkey retrieval, "
                    "several seeds; writes OUT/results.json.")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--overwrite", action="store_true",
                    help="write into a non-empty --out, starting again")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished runs in --out, run the rest")
    ap.add_argument("--preset", default="full", choices=tuple(PLANS))
    ap.add_argument("--experiments", type=lambda t: tuple(
        v for v in t.split(",") if v), help="fraction,base,depth (default)")
    ap.add_argument("--seeds", type=int, metavar="N",
                    help="run seeds 0..N-1 (default: 3)")
    ap.add_argument("--steps", type=int, help="training steps of the LM")
    ap.add_argument("--passkey-steps", type=int, dest="passkey_steps")
    ap.add_argument("--device", help="cpu (default), cuda, cuda:1, mps ...")
    ap.add_argument("--threads", type=int,
                    help="torch CPU threads per run (default 1)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="runs side by side (default 2, or 1 on one core; "
                         "the numbers do not depend on it)")
    ap.add_argument("--save-models", action="store_true",
                    help="also write every trained model to OUT/models/")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    plan = PLANS[args.preset]
    changes = {k: v for k, v in (("steps", args.steps),
                                 ("passkey_steps", args.passkey_steps),
                                 ("device", args.device),
                                 ("threads", args.threads)) if v is not None}
    if args.seeds is not None:
        changes["seeds"] = tuple(range(args.seeds))
    try:
        plan = replace(plan, lab=replace(plan.lab, **changes))
        if args.experiments is not None:
            plan = replace(plan, experiments=args.experiments)
        results = run_layers(plan, args.out, overwrite=args.overwrite,
                             resume=args.resume,
                             progress=not args.no_progress, jobs=args.jobs,
                             save_models=args.save_models)
    except ValueError as err:
        ap.error(str(err))
    print(f"wrote {args.out}/results.json ({len(results['runs'])} runs, "
          f"{results['wall_time_s']:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
