"""Train short, test long: every position method in a small model.

``python -m posenc_lab --out DIR`` runs :func:`run_experiment` on
:data:`PRESETS` ``["full"]`` and writes ``DIR/results.json`` (and one
``DIR/runs/<task>-<method>-seed<k>.json`` per finished run, so an
interrupted experiment keeps what it finished). See ``posenc_lab/README.md``.

For every method and seed:

1. **Language model** (``task "lm"``): train on windows of ``L`` characters
   of *Alice's Adventures in Wonderland*, then score the validation text in
   non-overlapping windows of ``L, 2L, 4L, 8L, 16L`` (mean loss per
   character in nats and its perplexity), as Press et al. (2022), Table 2,
   and the loss at each position of the ``16L`` windows.
2. **Stretching RoPE** (method ``rope`` only): at every length ``n > L``,
   without training, Position Interpolation, NTK-aware scaling and YaRN
   (with its temperature), each with the factor ``s = n / L``; then a copy
   of the trained model fine-tuned for ``finetune_steps`` at
   ``L' = finetune_factor * L`` with Position Interpolation (``s = L'/L``)
   and, as Chen et al. (2023) do, one fine-tuned at ``L'`` without it.
3. **Copying** (``task "copy"``, Kazemnejad et al. 2023): train on
   ``k <= copy_k`` symbols, report exact-match and per-symbol accuracy at
   ``k = copy_k * j`` for ``j`` in ``copy_multiples``.

Chapter 10 adds (``posenc_lab.layers`` runs them; the defaults leave the
runs above exactly as they were): position per layer for ``rope``
(``rope_fraction``, ``rope_convention``, ``nope_layers``,
``nope_temperature``), ``stretch=False`` to skip step 2, and

4. **Passkey retrieval** (``task "passkey"``, Mohtashami and Jaggi 2023):
   train on ``data.passkey_batch`` examples of ``L`` tokens, report the
   exact retrieval of the key and per-digit accuracy at ``L * j`` for ``j``
   in ``passkey_multiples``, overall and by the key's depth.
"""

import contextlib
import copy
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import posenc_core as pc

from . import data
from .model import BEYOND, CONVENTIONS, LAYOUTS, METHODS, TinyTransformer

__all__ = ["Config", "PRESETS", "SCHEMA", "TASKS", "config_from",
           "config_from_json", "evaluate_copy", "evaluate_lm",
           "evaluate_passkey", "load_corpus", "run_experiment", "run_one",
           "summarize", "write_json"]

SCHEMA = "posenc_lab.results/1"
STRETCHES = ("pi", "ntk", "yarn")
TASKS = ("lm", "copy", "passkey")
DEPTH_BINS = 5  # the passkey's depth, in bins of 0.2


@dataclass(frozen=True)
class Config:
    """Every setting of the experiment; stored in the JSON as it ran."""

    methods: tuple = METHODS
    seeds: tuple = (0, 1, 2)
    tasks: tuple = ("lm", "copy")
    # model
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    base: float = 10000.0
    rope_layout: str = "interleaved"
    learned_beyond: str | None = "clamp"
    t5_num_buckets: int = 32
    t5_max_distance: int | None = None  # None: the training length L
    # language model
    L: int = 64
    batch_size: int = 32
    steps: int = 800
    lr: float = 2e-3
    warmup: int = 50
    eval_multiples: tuple = (1, 2, 4, 8, 16)
    valid_fraction: float = 0.1
    # stretching RoPE
    finetune_factor: int = 4
    finetune_steps: int = 100
    finetune_lr: float = 5e-4
    # copying
    copy_k: int = 8
    copy_steps: int = 800
    copy_multiples: tuple = (1, 2, 3, 4)
    copy_eval_examples: int = 256
    # position per layer (chapter 10); the defaults rotate every pair of
    # every layer, as chapter 8 does
    rope_fraction: float = 1.0
    rope_convention: str = "spread"
    nope_layers: tuple = ()
    nope_temperature: bool = False
    nope_floor_scale: int | None = None  # None: the training length L
    stretch: bool = True  # rope: PI, NTK-aware, YaRN and the fine-tunes
    # passkey retrieval (chapter 10)
    passkey_steps: int = 800
    passkey_digits: int = 5
    passkey_multiples: tuple = (1, 2, 4, 8, 16)
    passkey_eval_examples: int = 128
    # machine
    device: str = "cpu"
    threads: int = 1
    log_every: int = 25

    def check(self):
        """Raise ``ValueError`` naming the first bad setting."""
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ValueError(
                f"methods must be a non-empty selection of {METHODS}, got "
                f"unknown {unknown}" if unknown else "methods is empty")
        bad_tasks = [t for t in self.tasks if t not in TASKS]
        if bad_tasks or not self.tasks:
            raise ValueError(
                f"tasks must be a non-empty selection of {TASKS}, "
                f"got {list(self.tasks)}")
        for name in ("d_model", "n_layers", "n_heads", "L", "batch_size",
                     "steps", "copy_k", "copy_steps", "copy_eval_examples",
                     "threads", "log_every", "finetune_factor",
                     "passkey_steps", "passkey_digits",
                     "passkey_eval_examples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) \
                    or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        for name in ("warmup", "finetune_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct integers, got {self.seeds}")
        for name in ("eval_multiples", "copy_multiples",
                     "passkey_multiples"):
            value = getattr(self, name)
            if not value or any(not isinstance(j, int) or j < 1 for j in value):
                raise ValueError(
                    f"{name} must be integers >= 1, got {value!r}")
        try:
            device = torch.device(self.device)
        except (RuntimeError, TypeError) as err:
            raise ValueError(f"device must be a torch device such as 'cpu' "
                             f"or 'cuda', got {self.device!r}") from err
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device is {self.device!r}, but torch sees no "
                             f"CUDA GPU here")
        if self.rope_layout not in LAYOUTS:
            raise ValueError(
                f"rope_layout must be one of {LAYOUTS}, got {self.rope_layout!r}")
        longest = max(max(self.eval_multiples) * self.L,
                      self.finetune_factor * self.L,
                      max(self.passkey_multiples) * self.L
                      if "passkey" in self.tasks else 0)
        if "learned" in self.methods and self.learned_beyond not in BEYOND:
            raise ValueError(
                f"learned_beyond must be one of {BEYOND} to say what the "
                f"learned table of {self.L} rows does at lengths up to "
                f"{longest}, got {self.learned_beyond!r}")
        if "learned" in self.methods and self.learned_beyond == "error" and (
                longest > self.L or max(self.copy_multiples) > 1):
            raise ValueError(
                f"learned_beyond='error' refuses the lengths past the table "
                f"({self.L} rows) that the evaluation needs (up to "
                f"{longest}); use 'clamp' or evaluate at L only")
        if self.rope_convention not in CONVENTIONS:
            raise ValueError(f"rope_convention must be one of {CONVENTIONS}, "
                             f"got {self.rope_convention!r}")
        if not isinstance(self.stretch, bool):
            raise ValueError(f"stretch must be True or False, got "
                             f"{self.stretch!r}")
        if not isinstance(self.nope_temperature, bool):
            raise ValueError(f"nope_temperature must be True or False, got "
                             f"{self.nope_temperature!r}")
        if self.nope_floor_scale is not None and (
                isinstance(self.nope_floor_scale, bool)
                or not isinstance(self.nope_floor_scale, int)
                or self.nope_floor_scale < 1):
            raise ValueError(f"nope_floor_scale must be None (the training "
                             f"length L) or an integer >= 1, got "
                             f"{self.nope_floor_scale!r}")
        if "passkey" in self.tasks and self.L < 2 * self.passkey_digits + 1:
            raise ValueError(
                f"L must hold a passkey of passkey_digits="
                f"{self.passkey_digits} asked for (at least "
                f"{2 * self.passkey_digits + 1} tokens), got {self.L}")
        partial = self.rope_fraction != 1 or self.rope_convention != "spread"
        if ("rope" in self.methods and "lm" in self.tasks and self.stretch
                and partial):
            raise ValueError(
                "stretch must be False with a partial rotation "
                "(rope_fraction < 1 or rope_convention 'proportional'): PI, "
                "NTK-aware and YaRN rescale a fully rotated head")
        for method in self.methods:  # the model's own checks, up front
            self.model(method, 2, self.L)

    def model(self, method, vocab_size, max_len):
        per_layer = {}
        if method == "rope":  # the other methods take the defaults
            per_layer = dict(
                rope_fraction=self.rope_fraction,
                rope_convention=self.rope_convention,
                nope_layers=self.nope_layers,
                nope_temperature={"floor_scale": self.nope_floor_scale
                                  or self.L} if self.nope_temperature
                else None)
        return TinyTransformer(
            vocab_size, method, d_model=self.d_model, n_layers=self.n_layers,
            n_heads=self.n_heads, max_len=max_len,
            beyond=self.learned_beyond or "error", base=self.base,
            layout=self.rope_layout, num_buckets=self.t5_num_buckets,
            max_distance=self.t5_max_distance or self.L, **per_layer)


PRESETS = {
    "full": Config(),
    # the configuration of the tests: a few seconds per method
    "quick": Config(d_model=32, n_layers=1, n_heads=2, L=16, batch_size=16,
                    steps=60, warmup=10, eval_multiples=(1, 2, 4),
                    t5_num_buckets=8,
                    finetune_steps=10, copy_k=4, copy_steps=40,
                    copy_multiples=(1, 2), copy_eval_examples=64,
                    log_every=10),
}


# ------------------------------------------------------------ training


@contextlib.contextmanager
def _deterministic(cfg):
    """``cfg.threads`` threads and deterministic algorithms, then as before."""
    if cfg.device.startswith("cuda"):  # what deterministic cuBLAS needs
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    threads = torch.get_num_threads()
    strict = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(cfg.threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(strict)


def _optimizer(model, lr, warmup, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)

    def factor(step):  # linear warm-up, then cosine down to lr / 10
        if step < warmup:
            return (step + 1) / warmup
        t = (step - warmup) / max(1, steps - warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * t))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def _train(model, next_batch, steps, lr, warmup, cfg, tick):
    """AdamW on the masked cross-entropy; the loss every ``log_every``."""
    opt, sched = _optimizer(model, lr, warmup, steps)
    model.train()
    history = []
    for step in range(steps):
        x, y, mask = next_batch()
        logits = model(x.to(cfg.device))
        loss = F.cross_entropy(logits[mask.to(cfg.device)],
                               y.to(cfg.device)[mask.to(cfg.device)])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % cfg.log_every == 0 or step == steps - 1:
            history.append([step, round(loss.item(), 5)])
        tick(1)
    model.eval()
    return history


@torch.no_grad()
def _score_windows(model, x, y, device, tokens_per_batch=4096):
    """Per-token losses (nats) of every window, shape (windows, n)."""
    n = x.shape[1]
    chunk = max(1, tokens_per_batch // n)
    out = []
    for s in range(0, len(x), chunk):
        logits = model(x[s: s + chunk].to(device))
        loss = F.cross_entropy(logits.transpose(1, 2),
                               y[s: s + chunk].to(device), reduction="none")
        out.append(loss.double().cpu())
    return torch.cat(out)


def evaluate_lm(model, valid_ids, lengths, device, by_position_at=None):
    """Loss and perplexity at each length; loss by position at one."""
    result, by_position = {}, None
    for n in lengths:
        x, y = data.lm_windows(valid_ids, n)
        losses = _score_windows(model, x, y, device)
        mean = losses.mean().item()
        result[str(n)] = {"loss": round(mean, 5), "ppl": round(math.exp(mean), 4),
                          "windows": len(x), "tokens": losses.numel()}
        if n == by_position_at:
            by_position = [round(v, 4) for v in losses.mean(0).tolist()]
    return result, by_position


@torch.no_grad()
def evaluate_copy(model, k, examples, rng, device):
    """Exact-match and per-symbol accuracy on copying ``k`` symbols."""
    x, y, mask = data.copy_batch(examples, k, k, rng)
    pred = model(x.to(device)).argmax(-1).cpu()
    right = (pred == y) | ~mask
    return {"exact_match": round(right.all(1).double().mean().item(), 5),
            "symbol_accuracy": round(
                ((pred == y) & mask).sum().item() / mask.sum().item(), 5),
            "examples": examples}


@torch.no_grad()
def evaluate_passkey(model, n, examples, rng, device, digits=5,
                     tokens_per_batch=8192):
    """Retrieval of the passkey in ``examples`` examples of ``n`` tokens.

    ``exact_match``: the fraction of keys retrieved whole (every digit's
    argmax right, what greedy decoding would produce); ``digit_accuracy``:
    the fraction of digits right; ``exact_by_depth`` and ``depth_counts``:
    the exact matches and the number of examples in each fifth of the
    depth (:func:`posenc_lab.data.passkey_depths`: 0 at the start, 1 next
    to the question).
    """
    x, y, mask = data.passkey_batch(examples, n, rng, digits=digits)
    chunk = max(1, tokens_per_batch // n)
    pred = torch.cat([model(x[s: s + chunk].to(device)).argmax(-1).cpu()
                      for s in range(0, len(x), chunk)])
    exact = ((pred == y) | ~mask).all(1).numpy()
    bins = np.minimum((data.passkey_depths(x, digits=digits)
                       * DEPTH_BINS).astype(int), DEPTH_BINS - 1)
    counts = np.bincount(bins, minlength=DEPTH_BINS)
    hits = np.bincount(bins, weights=exact, minlength=DEPTH_BINS)
    return {"exact_match": round(float(exact.mean()), 5),
            "digit_accuracy": round(
                ((pred == y) & mask).sum().item() / mask.sum().item(), 5),
            "examples": examples,
            "exact_by_depth": [round(float(h / c), 5) if c else None
                               for h, c in zip(hits, counts, strict=True)],
            "depth_counts": counts.tolist()}


def _lm_batches(ids, batch_size, n, rng):
    def next_batch():
        x, y = data.lm_batch(ids, batch_size, n, rng)
        return x, y, torch.ones_like(y, dtype=torch.bool)
    return next_batch


def _rope_scaling(kind, factor, L):
    if kind == "pi":
        return {"type": "linear", "factor": factor}
    if kind == "ntk":
        return {"type": "ntk", "factor": factor}
    return {"type": "yarn", "factor": factor,
            "original_max_position_embeddings": L}


def run_one(cfg, task, method, seed, corpus=None, tick=lambda k: None, *,
            save=None):
    """Train and evaluate one (task, method, seed); returns a JSON-able dict.

    Deterministic on one machine: the weights start from
    ``torch.manual_seed(seed)`` and the batches come from
    ``numpy.random.default_rng(seed)``, whatever ran before; it runs with
    ``cfg.threads`` threads and ``torch.use_deterministic_algorithms(True)``
    and restores both after. ``save`` (a path, optional): where to write
    the trained model's ``state_dict`` (``torch.save``), before any
    stretching or fine-tuning; ``cfg.model(method, vocab, L)`` rebuilds it.
    """
    with _deterministic(cfg):
        return _run_one(cfg, task, method, seed, corpus, tick, save)


def _save(model, save):
    if save is not None:
        Path(save).parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), save)


def _run_one(cfg, task, method, seed, corpus, tick, save=None):
    start = time.perf_counter()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    run = {"task": task, "method": method, "seed": seed}
    if task == "lm":
        vocab, train_ids, valid_ids = corpus or load_corpus(cfg)
        model = cfg.model(method, len(vocab), cfg.L).to(cfg.device)
        run["n_params"] = sum(p.numel() for p in model.parameters())
        run["train_loss"] = _train(
            model, _lm_batches(train_ids, cfg.batch_size, cfg.L, rng),
            cfg.steps, cfg.lr, cfg.warmup, cfg, tick)
        lengths = [cfg.L * j for j in cfg.eval_multiples]
        longest = max(lengths)
        _save(model, save)
        run["eval"], run["loss_by_position"] = evaluate_lm(
            model, valid_ids, lengths, cfg.device, longest)
        if method == "rope" and cfg.stretch:
            run["stretch"] = _stretch_rope(model, cfg, train_ids, valid_ids,
                                           lengths, rng, tick)
    elif task == "passkey":
        model = cfg.model(method, data.PASSKEY_VOCAB, cfg.L).to(cfg.device)
        run["n_params"] = sum(p.numel() for p in model.parameters())

        def next_batch():
            return data.passkey_batch(cfg.batch_size, cfg.L, rng,
                                      digits=cfg.passkey_digits)

        run["train_loss"] = _train(model, next_batch, cfg.passkey_steps,
                                   cfg.lr, cfg.warmup, cfg, tick)
        _save(model, save)
        eval_rng = np.random.default_rng([seed, 2])
        run["eval"] = {str(cfg.L * j): evaluate_passkey(
            model, cfg.L * j, cfg.passkey_eval_examples, eval_rng,
            cfg.device, cfg.passkey_digits) for j in cfg.passkey_multiples}
    else:
        k = cfg.copy_k
        model = cfg.model(method, data.COPY_SYMBOLS + 1, 2 * k).to(cfg.device)
        run["n_params"] = sum(p.numel() for p in model.parameters())

        def next_batch():
            return data.copy_batch(cfg.batch_size, 1, k, rng)

        run["train_loss"] = _train(model, next_batch, cfg.copy_steps, cfg.lr,
                                   cfg.warmup, cfg, tick)
        _save(model, save)
        eval_rng = np.random.default_rng([seed, 1])
        run["eval"] = {str(k * j): evaluate_copy(
            model, k * j, cfg.copy_eval_examples, eval_rng, cfg.device)
            for j in cfg.copy_multiples}
    run["wall_time_s"] = round(time.perf_counter() - start, 2)
    return run


def _stretch_rope(model, cfg, train_ids, valid_ids, lengths, rng, tick):
    """PI, NTK-aware, YaRN without training; fine-tunes at ``L'``."""
    L, longest = cfg.L, max(lengths)
    out = {}
    for kind in STRETCHES:
        out[kind], out[kind + "_by_position"] = {}, None
        for n in lengths:
            if n == L:
                continue
            model.set_rope_scaling(_rope_scaling(kind, n / L, L),
                                   temperature=kind == "yarn")
            res, by_pos = evaluate_lm(model, valid_ids, [n], cfg.device,
                                      longest)
            out[kind].update(res)
            if by_pos is not None:
                out[kind + "_by_position"] = by_pos
    model.set_rope_scaling(None)
    if cfg.finetune_steps == 0:
        return out
    s = cfg.finetune_factor
    L_new = s * L
    batch = max(1, cfg.batch_size // s)  # as many tokens per step as before
    for name, scaling in (("pi_finetune", _rope_scaling("pi", s, L)),
                          ("finetune", None)):
        tuned = copy.deepcopy(model)
        tuned.set_rope_scaling(scaling)
        out[name + "_train_loss"] = _train(
            tuned, _lm_batches(train_ids, batch, L_new, rng),
            cfg.finetune_steps, cfg.finetune_lr, min(cfg.warmup, 10), cfg, tick)
        out[name], out[name + "_by_position"] = evaluate_lm(
            tuned, valid_ids, lengths, cfg.device, longest)
    out["finetune_length"] = L_new
    return out


# ------------------------------------------------------------ the whole run


def load_corpus(cfg):
    text = data.load_text()
    train, valid = data.split_text(text, cfg.valid_fraction)
    vocab = data.CharVocab(text)
    return vocab, vocab.encode(train), vocab.encode(valid)


def _cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(cfg):
    """Library versions and the machine, for the JSON."""
    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch_threads": cfg.threads,
        "device": cfg.device,
        "posenc_core": getattr(pc, "__file__", "posenc_core"),
    }
    env["posenc_core"] = Path(env["posenc_core"]).name
    if cfg.device.startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(cfg.device)
    return env


def _load():
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def write_json(path, obj):
    """Write ``obj`` as JSON atomically: a temporary file, then os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _mean_spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"mean": round(statistics.fmean(values), 5),
            "std": round(statistics.stdev(values), 5) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "n": len(values)}


def summarize(runs):
    """Mean, sample standard deviation, min and max over seeds.

    ``{"lm": {method: {length: {"loss": {...}, "ppl": {...}}}},
    "rope_stretch": {variant: {length: {"loss": ..., "ppl": ...}}},
    "copy": {method: {k: {"exact_match": ..., "symbol_accuracy": ...}}}}``
    """
    out = {"lm": {}, "rope_stretch": {}, "copy": {}}
    tasks = [("lm", ("loss", "ppl")),
             ("copy", ("exact_match", "symbol_accuracy"))]
    if any(run["task"] == "passkey" for run in runs):  # chapter 10 only
        tasks.append(("passkey", ("exact_match", "digit_accuracy")))
    for task, metrics in tasks:
        group = {}
        for run in runs:
            if run["task"] != task:
                continue
            for length, res in run["eval"].items():
                slot = group.setdefault(run["method"], {}).setdefault(length, {})
                for m in metrics:
                    slot.setdefault(m, []).append(res[m])
        out[task] = {method: {length: {m: _mean_spread(v)
                                       for m, v in by.items()}
                              for length, by in lengths.items()}
                     for method, lengths in group.items()}
    group = {}
    for run in runs:
        for variant, res in (run.get("stretch") or {}).items():
            if variant.endswith(("_by_position", "_train_loss")) \
                    or not isinstance(res, dict):
                continue
            for length, r in res.items():
                slot = group.setdefault(variant, {}).setdefault(length, {})
                for m in ("loss", "ppl"):
                    slot.setdefault(m, []).append(r[m])
    out["rope_stretch"] = {v: {length: {m: _mean_spread(x) for m, x in by.items()}
                               for length, by in lengths.items()}
                           for v, lengths in group.items()}
    return out


def _total_steps(cfg):
    total = 0
    for method in cfg.methods:
        if "lm" in cfg.tasks:
            total += cfg.steps + (2 * cfg.finetune_steps if method == "rope"
                                  and cfg.stretch else 0)
        if "copy" in cfg.tasks:
            total += cfg.copy_steps
        if "passkey" in cfg.tasks:
            total += cfg.passkey_steps
    return total * len(cfg.seeds)


def _worker(cfg, task, method, seed, queue):
    """One run in a worker process; progress goes back through ``queue``."""
    steps = [0, time.perf_counter()]

    def tick(k):  # at most a few messages a second
        steps[0] += k
        if time.perf_counter() - steps[1] > 0.25:
            queue.put(steps[0])
            steps[:] = [0, time.perf_counter()]

    run = run_one(cfg, task, method, seed, None, tick)
    queue.put(steps[0])
    return run


def run_experiment(cfg, out, *, overwrite=False, progress=True, jobs=1):
    """Run every task, method and seed of ``cfg``; write ``out``/results.json.

    Refuses a non-empty ``out`` unless ``overwrite``. ``jobs`` worker
    processes run the runs side by side (each with ``cfg.threads``
    threads); the numbers do not depend on ``jobs``, since every run seeds
    itself. Returns the results dict, also written (atomically) to
    ``out/results.json``; each finished run is written at once to
    ``out/runs/<task>-<method>-seed<k>.json``.
    """
    cfg.check()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a folder, got the file {out}")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise ValueError(
            f"out must be an empty or new folder (or pass overwrite), "
            f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    for old in [out / "results.json", *(out / "runs").glob("*.json")]:
        old.unlink(missing_ok=True)
    corpus = load_corpus(cfg)
    env = environment(cfg)
    env["jobs"] = jobs
    results = {"schema": SCHEMA, "config": asdict(cfg), "environment": env,
               "load_average_start": _load(), "load_average_during": [],
               "data": {"text": "posenc_lab/data/alice.txt",
                        "sha256": data.TEXT_SHA256,
                        "train_chars": int(len(corpus[1])),
                        "valid_chars": int(len(corpus[2])),
                        "vocab_size": len(corpus[0])},
               "runs": []}
    todo = [(task, method, seed) for task in cfg.tasks
            for method in cfg.methods for seed in cfg.seeds]
    start = time.perf_counter()
    bar = _progress(_total_steps(cfg), progress)

    def finished(run):
        results["runs"].append(run)
        results["load_average_during"].append(_load())
        name = f"{run['task']}-{run['method']}-seed{run['seed']}.json"
        write_json(out / "runs" / name, run)

    try:
        if jobs == 1:
            for task, method, seed in todo:
                bar.set_description(f"{task} {method} seed {seed}")
                finished(run_one(cfg, task, method, seed, corpus, bar.update))
        else:
            _run_parallel(cfg, todo, jobs, bar, finished)
    finally:
        bar.close()
    order = {key: i for i, key in enumerate(todo)}
    results["runs"].sort(key=lambda r: order[r["task"], r["method"], r["seed"]])
    results["wall_time_s"] = round(time.perf_counter() - start, 1)
    results["load_average_end"] = _load()
    results["summary"] = summarize(results["runs"])
    write_json(out / "results.json", results)
    return results


def _run_parallel(cfg, todo, jobs, bar, finished, worker=None):
    """Run ``worker(cfg, *key, queue)`` for every key of ``todo`` in
    ``jobs`` processes (``worker``: this module's :func:`_worker` unless
    given, e.g. :mod:`posenc_lab.vision`'s; a module-level function)."""
    run_pool([(key, (cfg, *key)) for key in todo], jobs, bar,
             worker or _worker, lambda key, run: finished(run))


def run_pool(calls, jobs, bar, worker, finished):
    """Run ``worker(*args, queue)`` for every ``(tag, args)`` of ``calls``
    in ``jobs`` spawned processes; ``finished(tag, result)`` as each one
    ends, and ``bar.update(k)`` for every ``k`` a worker puts in its queue
    (steps done). ``worker`` is a module-level function."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from queue import Empty

    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, ProcessPoolExecutor(
            jobs, mp_context=ctx) as pool:
        queue = manager.Queue()
        tags = {pool.submit(worker, *args, queue): tag for tag, args in calls}
        pending = set(tags)
        bar.set_description(f"{len(calls)} runs, {jobs} at a time")
        while pending:
            done, pending = wait(pending, timeout=0.5,
                                 return_when=FIRST_COMPLETED)
            try:
                while True:
                    bar.update(queue.get_nowait())
            except Empty:
                pass
            for future in done:
                finished(tags[future], future.result())


def _progress(total, enabled):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a requirement
        tqdm = None
    if tqdm is None or not enabled:
        class Silent:
            def update(self, k):
                pass

            def set_description(self, text):
                pass

            def close(self):
                pass
        return Silent()
    return tqdm(total=total, unit="step", file=sys.stderr, dynamic_ncols=True)


def config_from_json(stored):
    """The :class:`Config` stored in a results file's ``"config"``."""
    return Config(**{k: tuple(v) if isinstance(v, list) else v
                     for k, v in stored.items()})


def config_from(preset="full", **changes):
    """A preset with some settings changed (``None`` values are ignored)."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {tuple(PRESETS)}, got {preset!r}")
    names = {f.name for f in fields(Config)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}")
    return replace(PRESETS[preset],
                   **{k: v for k, v in changes.items() if v is not None})

