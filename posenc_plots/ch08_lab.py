"""Figures and tables for chapter 8, "Train short, test long".

The chapter reads the committed results of ``python -m posenc_lab``
(``results/ch08/full/results.json``, found from this file's location, so
the notebook's working folder does not matter) and draws them. Every
function takes the loaded results dict (or one run, for the live model),
computes its means and spreads from the individual runs, and returns a
matplotlib Figure or a Markdown table; nothing is drawn at import. Lines
carry a ``gid`` (the method or variant name) so that the tests can read
back exactly what was drawn.

Means are over seeds and spreads are the sample standard deviation over
seeds (``ddof=1``), as in the ``summary`` of the JSON.
"""

import base64
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "BASE_RESULTS",
    "COPY_METRICS",
    "EXPLORE",
    "EXPLORE_DATA_PATH",
    "INTERACTIVE",
    "VARIANTS",
    "LABELS",
    "METHODS",
    "PRESS2022_TABLE2",
    "RESULTS_PATH",
    "STRETCHES",
    "STRETCH_LABELS",
    "load_results",
    "lm_runs",
    "mean_std",
    "lm_losses",
    "stretch_losses",
    "copy_scores",
    "binned_by_position",
    "range_losses",
    "markdown_table",
    "format_live_run",
    "plot_loss_by_length",
    "plot_press_comparison",
    "plot_loss_by_position",
    "plot_rope_stretch",
    "plot_copy",
    "plot_live_run",
    "variant_by_length",
    "variant_by_position",
    "plot_explore",
    "live_explore",
    "explore_data",
    "explore_data_js",
    "train_one",
    "register_solution_magic",
    "show_solutions",
]

#: The committed full run of the experiment.
RESULTS_PATH = (Path(__file__).resolve().parent.parent / "results" / "ch08"
                / "full" / "results.json")

#: The runs of the base exercise (``ex-ch08-base``): RoPE with the
#: committed settings but no fine-tuning, five seeds, with base 10 and
#: with base 10,000 (``results/ch08/README.md`` gives the commands).
BASE_RESULTS = {
    base: RESULTS_PATH.parent.parent / "base" / f"b{base}" / "results.json"
    for base in (10, 10000)
}

#: Position methods, in the order they are drawn and tabulated.
METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")

#: How each method is named in figures and tables (in the current
#: language: ``LABELS[method]``).
LABELS = Labels("ch08_lab:methods", {
    "none": "none (NoPE)",
    "sinusoidal": "sinusoidal",
    "learned": "learned",
    "rope": "RoPE",
    "alibi": "ALiBi",
    "t5": "T5 bias",
})

_COLORS = {"none": "0.45", "sinusoidal": "C0", "learned": "C9",
           "rope": "C3", "alibi": "C2", "t5": "C1"}

#: RoPE variants of the stretching experiment: plain RoPE, three
#: rescalings at evaluation (factor s = n / L), two fine-tunes at L' = 4L.
STRETCHES = ("rope", "pi", "ntk", "yarn", "pi_finetune", "finetune")

STRETCH_LABELS = Labels("ch08_lab:stretches", {
    "rope": "RoPE as trained",
    "pi": "Position Interpolation",
    "ntk": "NTK-aware",
    "yarn": "YaRN (with temperature)",
    "pi_finetune": "PI, fine-tuned at L'",
    "finetune": "fine-tuned at L' without PI",
})

_LOSS_BY_LENGTH = Labels("ch08_lab:plot_loss_by_length", {
    "x": "evaluation length $n$ (characters)",
    "y": "validation loss (nats per character)",
    "L": "training length $L$",
    "title": "Loss by length, mean ± std over {seeds} seeds",
})
_PRESS = Labels("ch08_lab:plot_press_comparison", {
    "left": "Press et al. 2022, Table 2: WikiText-103, $L$ = 512",
    "right": "this experiment: Alice, characters, $L$ = {L}",
    "x": "evaluation length / training length",
    "y_left": "change of loss from $L$ (nats per word)",
    "y_right": "change of loss from $L$ (nats per character)",
})
_BY_POSITION = Labels("ch08_lab:plot_loss_by_position", {
    "x": "position in a {n}-character window",
    "y": "validation loss (nats per character)",
    "left": "added to the input, or nothing",
    "right": "inside attention",
    "train": "positions seen in training",
})
_STRETCH = Labels("ch08_lab:plot_rope_stretch", {
    "x": "evaluation length $n$ (characters)",
    "y": "validation loss (nats per character)",
    "left": "rescaled at evaluation, no training ($s = n/L$)",
    "right": "fine-tuned {steps} steps at $L'$ = {L_new}",
    "L": "$L$",
    "L_new": "$L'$",
})
_COPY = Labels("ch08_lab:plot_copy", {
    "x": r"symbols to copy, $n_{\mathrm{copy}}$",
    "exact_match": "exact match (whole copy right)",
    "symbol_accuracy": "fraction of copied symbols right",
    "train": "lengths seen in training",
})
_LIVE_RUN = Labels("ch08_lab:plot_live_run", {
    "x_left": "training step",
    "y": "loss (nats per character)",
    "left": "training ({method}, $L$ = {L})",
    "x_right": "position in a {n}-character window",
    "right": "validation loss by position",
    "train": "positions seen in training",
})

_STRETCH_COLORS = {"rope": "C3", "pi": "C0", "ntk": "C2", "yarn": "C1",
                   "pi_finetune": "C4", "finetune": "0.35"}

#: The two scores of the copying task.
COPY_METRICS = ("exact_match", "symbol_accuracy")

#: Press et al. (2022), appendix Table 2: perplexity on the WikiText-103
#: validation set of the models trained on L = 512 tokens, evaluated on
#: non-overlapping inputs of ``inputs`` tokens (arXiv 2108.12409v2, p. 16).
#: ``None``: out of memory (T5 bias past 12,512 tokens).
PRESS2022_TABLE2 = {
    "L": 512,
    "inputs": (512, 513, 522, 532, 542, 552, 562, 572, 582, 592, 602, 612,
               712, 812, 912, 1012, 1112, 1212, 1312, 1412, 1512, 2512,
               3512, 4512, 5512, 6512, 7512, 8512, 9512, 10512, 11512,
               12512, 13512, 14512, 15512),
    "sinusoidal": (20.05, 19.98, 19.93, 19.91, 19.91, 19.91, 19.91, 19.95,
                   20.13, 20.18, 20.40, 20.59, 24.86, 30.82, 37.42, 43.54,
                   50.36, 58.01, 63.62, 70.75, 76.23, 132.41, 178.97, 209.37,
                   240.44, 271.40, 293.02, 305.65, 336.02, 341.53, 362.74,
                   373.17, 382.91, 399.98, 406.01),
    "rope": (20.07, 20.01, 20.02, 19.98, 19.94, 19.93, 19.87, 19.83, 19.88,
             19.84, 19.81, 19.81, 19.79, 20.17, 20.73, 21.37, 22.01, 23.02,
             23.93, 24.81, 25.99, 31.58, 35.54, 39.15, 43.14, 47.81, 51.12,
             54.98, 57.85, 60.77, 66.62, 69.70, 73.27, 75.52, 79.25),
    "t5": (19.65, 19.57, 19.57, 19.53, 19.47, 19.47, 19.39, 19.36, 19.41,
           19.36, 19.33, 19.27, 19.10, 18.94, 18.86, 18.79, 18.77, 18.87,
           18.84, 18.87, 18.91, 20.41, 22.91, 25.91, 29.54, 34.48, 39.29,
           43.08, 48.90, 52.95, 61.38, 64.94, None, None, None),
    "alibi": (19.73, 19.62, 19.64, 19.61, 19.57, 19.54, 19.49, 19.46, 19.48,
              19.43, 19.38, 19.38, 19.14, 18.99, 18.88, 18.73, 18.68, 18.67,
              18.60, 18.59, 18.52, 18.41, 18.40, 18.41, 18.36, 18.35, 18.33,
              18.34, 18.34, 18.32, 18.32, 18.31, 18.31, 18.31, 18.31),
}


# ------------------------------------------------------------ reading


def load_results(path=None):
    """The results dict of ``python -m posenc_lab`` (default: the committed
    full run, :data:`RESULTS_PATH`)."""
    path = RESULTS_PATH if path is None else Path(path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _check_method(method, allowed, name="method"):
    if method not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {method!r}")


def lm_runs(results, method):
    """The language-model runs of ``method``, one per seed, by seed."""
    _check_method(method, METHODS)
    runs = [r for r in results["runs"]
            if r["task"] == "lm" and r["method"] == method]
    return sorted(runs, key=lambda r: r["seed"])


def mean_std(values, axis=0):
    """Mean and sample standard deviation (``ddof=1``) over seeds."""
    values = np.asarray(values, dtype=float)
    std = values.std(axis=axis, ddof=1) if values.shape[axis] > 1 \
        else np.zeros_like(values.mean(axis=axis))
    return values.mean(axis=axis), std


def _eval_lengths(results):
    L = results["config"]["L"]
    return [L * j for j in results["config"]["eval_multiples"]]


def lm_losses(results, method):
    """``(lengths, losses)``: losses has shape (seeds, lengths), nats per
    character, in non-overlapping windows of each length."""
    lengths = _eval_lengths(results)
    losses = [[r["eval"][str(n)]["loss"] for n in lengths]
              for r in lm_runs(results, method)]
    return np.array(lengths), np.array(losses)


def stretch_losses(results, variant):
    """``(lengths, losses)`` of a RoPE variant of :data:`STRETCHES`.

    ``"rope"`` is RoPE as trained; ``"pi"``, ``"ntk"`` and ``"yarn"`` are
    evaluated only past ``L`` (at ``L`` they are RoPE itself); the two
    fine-tunes at every length.
    """
    _check_method(variant, STRETCHES, "variant")
    if variant == "rope":
        return lm_losses(results, "rope")
    runs = lm_runs(results, "rope")
    lengths = [n for n in _eval_lengths(results)
               if str(n) in runs[0]["stretch"][variant]]
    losses = [[r["stretch"][variant][str(n)]["loss"] for n in lengths]
              for r in runs]
    return np.array(lengths), np.array(losses)


def copy_scores(results, method, metric="exact_match"):
    """``(n_copy, scores)``: scores has shape (seeds, n_copy values)."""
    _check_method(method, METHODS)
    _check_method(metric, COPY_METRICS, "metric")
    runs = sorted((r for r in results["runs"]
                   if r["task"] == "copy" and r["method"] == method),
                  key=lambda r: r["seed"])
    k = results["config"]["copy_k"]
    n_copy = [k * j for j in results["config"]["copy_multiples"]]
    scores = [[r["eval"][str(c)][metric] for c in n_copy] for r in runs]
    return np.array(n_copy), np.array(scores)


def _by_position(results, method, variant=None):
    runs = lm_runs(results, method)
    if variant is None:
        return np.array([r["loss_by_position"] for r in runs])
    return np.array([r["stretch"][variant + "_by_position"] for r in runs])


def binned_by_position(per_position, bin_width):
    """Average a (seeds, n) array of per-position losses over bins of
    ``bin_width`` positions: returns the bins' first positions and a
    (seeds, n / bin_width) array."""
    per_position = np.asarray(per_position, dtype=float)
    n = per_position.shape[-1]
    if not isinstance(bin_width, int) or bin_width < 1 or n % bin_width:
        raise ValueError(f"bin_width must be a positive integer dividing "
                         f"{n}, got {bin_width!r}")
    binned = per_position.reshape(*per_position.shape[:-1], n // bin_width,
                                  bin_width).mean(-1)
    return np.arange(0, n, bin_width), binned


def range_losses(results, method, edges, variant=None):
    """Mean loss per seed over the positions ``edges[j] <= pos <
    edges[j+1]`` of the longest windows: shape (seeds, len(edges) - 1)."""
    per = _by_position(results, method, variant)
    return np.array([[row[a:b].mean() for a, b in zip(edges[:-1], edges[1:],
                                                       strict=True)]
                     for row in per])


def markdown_table(header, rows):
    """A GitHub-flavoured Markdown table from a header and rows of str."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def format_live_run(run, L):
    """The results of one run of :func:`posenc_lab.experiment.run_one`, as
    text: the validation loss at each length (3 decimals) and, for RoPE,
    the loss with each rescaling (Position Interpolation, NTK-aware, YaRN
    with its temperature)."""
    lines = [f"{LABELS[run['method']]}, L = {L}: training loss "
             f"{run['train_loss'][0][1]:.3f} at step 0, "
             f"{run['train_loss'][-1][1]:.3f} at step {run['train_loss'][-1][0]}",
             "validation loss (nats per character):"]
    stretch = run.get("stretch") or {}
    for n, res in run["eval"].items():
        line = f"  n = {int(n):5d} ({int(n) // L:2d}L): {res['loss']:.3f}"
        rescaled = [f"{name} {stretch[kind][n]['loss']:.3f}"
                    for kind, name in (("pi", "PI"), ("ntk", "NTK"),
                                       ("yarn", "YaRN"))
                    if n in stretch.get(kind, {})]
        if rescaled:
            line += "   rescaled: " + ", ".join(rescaled)
        lines.append(line)
    return "\n".join(lines)


# ------------------------------------------------------------ figures


def _axes(ax, ncols, figsize):
    if ax is None:
        fig, ax = plt.subplots(1, ncols, figsize=figsize, layout="constrained",
                               squeeze=False)
        ax = list(ax[0])
    else:
        ax = list(np.atleast_1d(ax))
    return ax[0].figure, ax


def _legend_below(ax, ncol=2, anchor=(0.5, -0.17)):
    """The legend under the panel, clear of its lines (the constrained
    layout makes room for it)."""
    ax.legend(fontsize="small", ncol=ncol, loc="upper center",
              bbox_to_anchor=anchor)


def _log2_lengths(ax, lengths, L, label):
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [f"{n}\n({n // L}L)" for n in lengths])
    ax.minorticks_off()
    ax.set_xlabel(label)


def plot_loss_by_length(results, *, methods=METHODS, ax=None):
    """Validation loss against the evaluation length, every method.

    Each method's line (gid = the method) has x-data the evaluation lengths
    and y-data the mean over seeds of the loss in nats per character;
    error bars are one sample standard deviation over seeds. The dotted
    line marks the training length ``L``.
    """
    text, names = _LOSS_BY_LENGTH.get(), LABELS.get()
    fig, (ax,) = _axes(ax, 1, (7.5, 4.4))
    L = results["config"]["L"]
    for method in methods:
        lengths, losses = lm_losses(results, method)
        mean, std = mean_std(losses)
        ax.errorbar(lengths, mean, yerr=std, marker="o", ms=4, capsize=3,
                    color=_COLORS[method], label=names[method], gid=method)
    ax.axvline(L, color="k", ls=":", lw=1, label=text["L"])
    _log2_lengths(ax, lengths, L, text["x"])
    ax.set_ylabel(text["y"])
    ax.set_title(text["title"].format(seeds=losses.shape[0]))
    ax.legend(fontsize="small", ncol=2)
    ax.grid(alpha=0.3)
    return fig


def plot_press_comparison(results, *, methods=("sinusoidal", "rope", "t5",
                                               "alibi"), ax=None):
    """How much the loss rises past ``L``: Press et al. beside the miniature.

    Left panel: Press et al. (2022), Table 2 (:data:`PRESS2022_TABLE2`),
    ``ln(ppl(n) / ppl(512))`` in nats per word against ``n / 512`` (lines
    with gid = the method). Right panel: the miniature's mean over seeds of
    ``loss(n) - loss(L)`` in nats per character against ``n / L`` (gid =
    the method). Both are changes of the mean loss per token, zero at
    ``L``; the tokens differ (words against characters).
    """
    text, names = _PRESS.get(), LABELS.get()
    fig, (left, right) = _axes(ax, 2, (8, 3.9))
    table = PRESS2022_TABLE2
    inputs = np.array(table["inputs"], dtype=float)
    L = results["config"]["L"]
    for method in methods:
        ppl = np.array([np.nan if v is None else v for v in table[method]])
        left.plot(inputs / table["L"], np.log(ppl / ppl[0]), marker=".",
                  color=_COLORS[method], label=names[method], gid=method)
        lengths, losses = lm_losses(results, method)
        mean = losses.mean(0)
        right.plot(lengths / L, mean - mean[0], marker="o", ms=4,
                   color=_COLORS[method], label=names[method], gid=method)
    for ax_, title, ylabel in ((left, text["left"], text["y_left"]),
                               (right, text["right"].format(L=L),
                                text["y_right"])):
        ax_.set_xscale("log", base=2)
        ax_.set_xticks([1, 2, 4, 8, 16, 32], ["1", "2", "4", "8", "16", "32"])
        ax_.minorticks_off()
        ax_.axhline(0, color="k", lw=0.8)
        ax_.set_xlabel(text["x"])
        ax_.set_ylabel(ylabel)
        ax_.set_title(title, fontsize="medium")
        ax_.grid(alpha=0.3)
    right.set_xlim(left.get_xlim())
    left.legend(fontsize="small")
    return fig


def plot_loss_by_position(results, *, bin_width=16, ax=None):
    """Loss at each position of the longest windows, where methods break.

    Two panels: the methods that add a position to the input (and none),
    and the methods that act inside attention. Each line (gid = the
    method) has x-data the first position of each bin of ``bin_width``
    positions and y-data the mean over seeds of the loss averaged over the
    bin; the band is one standard deviation over seeds. The shaded part is
    ``0 <= pos < L``, the positions seen in training.
    """
    text, names = _BY_POSITION.get(), LABELS.get()
    fig, axes = _axes(ax, 2, (8, 4.5))
    L = results["config"]["L"]
    groups = (("none", "sinusoidal", "learned"), ("rope", "alibi", "t5"))
    low, high = np.inf, -np.inf
    for ax_, group, title in zip(axes, groups, (text["left"], text["right"]),
                                 strict=True):
        for method in group:
            starts, binned = binned_by_position(
                _by_position(results, method), bin_width)
            mean, std = mean_std(binned)
            ax_.plot(starts, mean, color=_COLORS[method],
                     label=names[method], gid=method)
            ax_.fill_between(starts, mean - std, mean + std, alpha=0.2,
                             color=_COLORS[method], lw=0)
            low, high = min(low, (mean - std).min()), max(high, (mean + std).max())
        ax_.axvspan(0, L, color="0.9", zorder=0, label=text["train"])
        n = len(results["runs"][0]["loss_by_position"])
        ax_.set_xlim(0, n)
        ax_.set_xlabel(text["x"].format(n=n))
        ax_.set_title(title, fontsize="medium")
        _legend_below(ax_)
        ax_.grid(alpha=0.3)
    pad = 0.03 * (high - low)
    for ax_ in axes:  # one scale for both panels
        ax_.set_ylim(low - pad, high + pad)
    axes[0].set_ylabel(text["y"])
    return fig


def plot_rope_stretch(results, *, ax=None):
    """RoPE stretched without training (left) and fine-tuned (right).

    Each line (gid = the variant of :data:`STRETCHES`) has x-data the
    evaluation lengths and y-data the mean loss over seeds; error bars are
    one standard deviation. Left: RoPE as trained, and Position
    Interpolation, NTK-aware and YaRN with the factor ``s = n / L`` at each
    length ``n > L``. Right: RoPE as trained, and the two copies fine-tuned
    at ``L' = finetune_factor * L`` (dashed line), with Position
    Interpolation (factor ``L'/L``) and without.
    """
    text, names = _STRETCH.get(), STRETCH_LABELS.get()
    fig, (left, right) = _axes(ax, 2, (8, 5.0))
    cfg = results["config"]
    L, L_new = cfg["L"], cfg["finetune_factor"] * cfg["L"]
    panels = ((left, ("rope", "pi", "ntk", "yarn")),
              (right, ("rope", "pi_finetune", "finetune")))
    for ax_, variants in panels:
        for variant in variants:
            lengths, losses = stretch_losses(results, variant)
            mean, std = mean_std(losses)
            ax_.errorbar(lengths, mean, yerr=std, marker="o", ms=4,
                         capsize=3, color=_STRETCH_COLORS[variant],
                         label=names[variant], gid=variant)
        ax_.axvline(L, color="k", ls=":", lw=1, label=text["L"])
        all_lengths = np.array(_eval_lengths(results))
        _log2_lengths(ax_, all_lengths, L, text["x"])
        ax_.grid(alpha=0.3)
    right.axvline(L_new, color="C4", ls="--", lw=1, label=text["L_new"])
    left.set_title(text["left"], fontsize="medium")
    right.set_title(text["right"].format(steps=cfg["finetune_steps"],
                                         L_new=L_new), fontsize="medium")
    left.set_ylabel(text["y"])
    right.sharey(left)
    _legend_below(left)
    _legend_below(right)
    return fig


def plot_copy(results, *, methods=METHODS, ax=None):
    """Copying: exact match (left) and symbols right (right) by length.

    Each line (gid = the method) has x-data the copied lengths
    ``n_copy`` and y-data the mean score over seeds; error bars are one
    standard deviation. The shaded part is the lengths seen in training,
    ``1 <= n_copy <= copy_k``.
    """
    text, names = _COPY.get(), LABELS.get()
    fig, axes = _axes(ax, 2, (8, 4.4))
    k = results["config"]["copy_k"]
    for ax_, metric in zip(axes, COPY_METRICS, strict=True):
        for j, method in enumerate(methods):
            n_copy, scores = copy_scores(results, method, metric)
            mean, std = mean_std(scores)
            shift = (j - (len(methods) - 1) / 2) * 0.25  # side by side
            ax_.errorbar(n_copy + shift, mean, yerr=std, marker="o", ms=4,
                         capsize=3, color=_COLORS[method],
                         label=names[method], gid=method)
        ax_.axvspan(0.5, k + 0.5, color="0.9", zorder=0, label=text["train"])
        ax_.set_xticks(n_copy)
        ax_.set_xlim(0.5, n_copy[-1] + 2)
        ax_.set_ylim(-0.03, 1.03)
        ax_.set_xlabel(text["x"])
        ax_.set_title(text[metric], fontsize="medium")
        ax_.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize="small", ncol=4,
               loc="outside lower center")
    return fig


def plot_live_run(run, L, *, bin_width=16, ax=None):
    """One freshly trained model: training loss, and loss by position.

    Left: the training loss (gid ``"train"``) against the step. Right: the
    loss at each position of the longest evaluation windows (gid
    ``"position"``), averaged over bins of ``bin_width`` positions
    (x-data: each bin's first position), with ``0 <= pos < L`` shaded.
    """
    text = _LIVE_RUN.get()
    fig, (left, right) = _axes(ax, 2, (8, 3.6))
    steps, loss = np.array(run["train_loss"]).T
    left.plot(steps, loss, color=_COLORS[run["method"]], gid="train")
    left.set_xlabel(text["x_left"])
    left.set_ylabel(text["y"])
    left.set_title(text["left"].format(method=LABELS[run["method"]], L=L),
                   fontsize="medium")
    per_position = np.array(run["loss_by_position"])
    width = bin_width if per_position.size % bin_width == 0 else 1
    starts, binned = binned_by_position(per_position, width)
    right.plot(starts, binned, color=_COLORS[run["method"]], gid="position")
    right.axvspan(0, L, color="0.9", zorder=0, label=text["train"])
    right.set_xlim(0, per_position.size)
    right.set_xlabel(text["x_right"].format(n=per_position.size))
    right.set_title(text["right"], fontsize="medium")
    right.legend(fontsize="small", loc="lower right")
    for ax_ in (left, right):
        ax_.grid(alpha=0.3)
    return fig


# ------------------------------------------------- the live figure

#: What the live figure can show: the six methods, then RoPE rescaled at
#: evaluation (``"pi"``, ``"ntk"``, ``"yarn"``, factor ``s = n / L``) and
#: fine-tuned at ``L'`` (``"pi_finetune"``, ``"finetune"``). Its sliders
#: pick one by its index in this tuple.
VARIANTS = METHODS + ("pi", "ntk", "yarn", "pi_finetune", "finetune")

#: The committed results as the in-page figure reads them (made by
#: :func:`explore_data_js`; ``tests/test_ch08_lab.py`` checks it is up to
#: date with :data:`RESULTS_PATH`).
EXPLORE_DATA_PATH = (Path(__file__).resolve().parent.parent / "_assets"
                     / "posenc" / "data" / "ch08-results.js")

_EXPLORE = Labels("ch08_lab:explore_results", {
    "v_none": "none (NoPE)",
    "v_sinusoidal": "sinusoidal",
    "v_learned": "learned",
    "v_rope": "RoPE",
    "v_alibi": "ALiBi",
    "v_t5": "T5 bias",
    "v_pi": "RoPE + Position Interpolation, no training",
    "v_ntk": "RoPE + NTK-aware, no training",
    "v_yarn": "RoPE + YaRN, no training",
    "v_pi_finetune": "RoPE fine-tuned at L' with PI",
    "v_finetune": "RoPE fine-tuned at L' without PI",
    "variant": "solid curve (0 to 10)",
    "other": "dashed curve to compare (0 to 10)",
    "bin_width": "positions per bin",
    "suptitle": "{index}: {name}   (dashed, {other_index}: {other})",
    "seeds": "each seed",
    "mean": "mean of {seeds} seeds",
    "other_mean": "{index}: mean",
    "train": "positions seen in training",
    "L": "training length L",
    "x_left": "position in a {n}-character window",
    "x_right": "evaluation length n (characters)",
    "y": "validation loss (nats per character)",
    "title_left": "loss by position, bins of {w}",
    "title_right": "loss by length",
    "caption": ("The committed runs of chapter 8, seed by seed: loss by "
                "position in the 1024-character windows (left) and by "
                "evaluation length (right), for any method or stretched "
                "RoPE, against another (dashed)."),
})


def _variant_colors():
    colors = dict(_COLORS)
    colors.update({v: _STRETCH_COLORS[v] for v in VARIANTS[len(METHODS):]})
    return colors


def variant_by_position(results, variant):
    """Loss at each position of the longest windows, shape (seeds, n), of a
    method of :data:`METHODS` or a RoPE variant of :data:`STRETCHES`
    (``"pi"``, ``"ntk"``, ``"yarn"``: rescaled with ``s = n / L`` for the
    longest ``n``)."""
    _check_method(variant, VARIANTS, "variant")
    if variant in METHODS:
        return _by_position(results, variant)
    return _by_position(results, "rope", variant)


def variant_by_length(results, variant):
    """``(lengths, losses)`` of a method or RoPE variant: losses has shape
    (seeds, lengths); the rescalings are evaluated only past ``L``."""
    _check_method(variant, VARIANTS, "variant")
    if variant in METHODS:
        return lm_losses(results, variant)
    return stretch_losses(results, variant)


def _bins(per_position, width):
    """Means over consecutive bins of ``width`` positions (the last bin may
    be shorter): the bins' first positions, and (seeds, bins)."""
    per_position = np.asarray(per_position, dtype=float)
    n = per_position.shape[-1]
    starts = np.arange(0, n, width)
    means = np.stack([per_position[..., a:a + width].mean(-1)
                      for a in starts], -1)
    return starts, means


def _check_index(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value < len(VARIANTS):
        raise ValueError(f"{name} must be an integer from 0 to "
                         f"{len(VARIANTS) - 1}, got {value!r}")
    return int(value)


def plot_explore(*, variant=3, other=4, bin_width=16, results=None,
                 ax=None):
    """The committed runs, seed by seed: one method or RoPE variant
    against another.

    ``variant`` and ``other`` index :data:`VARIANTS` (3 is RoPE, 4 ALiBi).
    Left: the loss at each position of the 1024-character windows, in bins
    of ``bin_width`` positions (the last bin may be shorter; x-data: each
    bin's first position): each seed of ``variant`` (gid
    ``"<variant>-seed<k>"``), their mean (gid ``"<variant>"``) and the mean
    of ``other`` (dashed, gid ``"other-<other>"``), with the positions seen
    in training shaded. Right: the same three kinds of lines for the loss
    against the evaluation length, the training length dotted.
    """
    return live_explore(ax, results=results).update(
        variant=variant, other=other, bin_width=bin_width)


def live_explore(ax=None, *, results=None):
    """:func:`plot_explore`, built once: a :class:`posenc_plots.Live`
    whose ``update(variant, other, bin_width)`` draws."""
    results = load_results() if results is None else results
    fig, (left, right) = _axes(ax, 2, (8, 5.0))
    text = _EXPLORE.get()
    colors = _variant_colors()
    L = results["config"]["L"]
    all_lengths = _eval_lengths(results)
    seeds = len(lm_runs(results, "rope"))
    n = len(lm_runs(results, "rope")[0]["loss_by_position"])
    left.axvspan(0, L, color="0.9", zorder=0, label=text["train"])
    lines = {"left": [], "right": []}
    for k in range(seeds):
        lines["left"].append(left.plot(
            [], [], lw=0.8, alpha=0.6,
            label=text["seeds"] if k == 0 else "_nolegend_")[0])
    lines["left"].append(left.plot(
        [], [], lw=2, label=text["mean"].format(seeds=seeds))[0])
    lines["left"].append(left.plot([], [], lw=1.5, ls="--", label=" ")[0])
    left.set_xlim(0, n)
    left.set_xlabel(text["x_left"].format(n=n))
    left.set_ylabel(text["y"])
    left.set_title(" ", fontsize="medium")
    right.axvline(L, color="k", ls=":", lw=1, label=text["L"])
    for _ in range(seeds):
        lines["right"].append(right.plot([], [], lw=0.8, alpha=0.6,
                                         marker="o", ms=3,
                                         label="_nolegend_")[0])
    lines["right"].append(right.plot([], [], lw=2, marker="o", ms=5,
                                     label="_nolegend_")[0])
    lines["right"].append(right.plot([], [], lw=1.5, ls="--", marker="o",
                                     ms=4, label="_nolegend_")[0])
    right.set_xscale("log", base=2)
    right.set_xticks(all_lengths, [str(m) for m in all_lengths])
    right.minorticks_off()
    right.set_xlim(all_lengths[0] / 2 ** 0.25, all_lengths[-1] * 2 ** 0.25)
    right.set_xlabel(text["x_right"])
    right.set_title(text["title_right"], fontsize="medium")
    _legend_below(right)
    suptitle = fig.suptitle(" ")

    def update(variant=3, other=4, bin_width=16):
        v, o = _check_index("variant", variant), _check_index("other", other)
        if isinstance(bin_width, bool) or not isinstance(
                bin_width, (int, np.integer)) or not 1 <= bin_width <= 64:
            raise ValueError(f"bin_width must be an integer from 1 to 64, "
                             f"got {bin_width!r}")
        w = int(bin_width)
        name, oname = VARIANTS[v], VARIANTS[o]
        starts, binned = _bins(variant_by_position(results, name), w)
        _, other_binned = _bins(variant_by_position(results, oname), w)
        lengths, losses = variant_by_length(results, name)
        other_lengths, other_losses = variant_by_length(results, oname)
        ys = {"left": [*binned, binned.mean(0), other_binned.mean(0)],
              "right": [*losses, losses.mean(0), other_losses.mean(0)]}
        xs = {"left": [starts] * (seeds + 2),
              "right": [lengths] * (seeds + 1) + [other_lengths]}
        gids = [f"{name}-seed{k}" for k in range(seeds)] + [
            name, f"other-{oname}"]
        for side in ("left", "right"):
            for j, line in enumerate(lines[side]):
                line.set_data(xs[side][j], ys[side][j])
                line.set_gid(gids[j])
                line.set_color(colors[oname if j == seeds + 1 else name])
        lines["left"][-1].set_label(text["other_mean"].format(index=o))
        # a new legend: its handles take the colours the lines have now
        _legend_below(left)
        left.set_title(text["title_left"].format(w=w), fontsize="medium")
        for ax_ in (left, right):  # limits from this data, as a new figure
            ax_.relim()
            ax_.autoscale_view()
        suptitle.set_text(text["suptitle"].format(
            index=v, name=text[f"v_{name}"], other_index=o,
            other=text[f"v_{oname}"]))

    return Live(fig, update)


EXPLORE = Interactive(
    name="explore_results",
    plot=plot_explore,
    live=live_explore,
    sliders=(
        Slider("variant", 0, len(VARIANTS) - 1, 1, 3,
               label=_EXPLORE.en["variant"], continuous=True),
        Slider("other", 0, len(VARIANTS) - 1, 1, 4,
               label=_EXPLORE.en["other"], continuous=True),
        Slider("bin_width", 1, 64, 1, 16, label=_EXPLORE.en["bin_width"],
               continuous=True),
    ),
    caption=_EXPLORE.en["caption"],
    labels=_EXPLORE,
)

INTERACTIVE = (EXPLORE,)


def explore_data(results=None):
    """The numbers the in-page figure draws, as one float64 array.

    Layout: ``[1, L, n, seeds, len(lengths), len(VARIANTS)]``, the
    evaluation lengths, then for each variant of :data:`VARIANTS` in
    order its loss by length, (seeds, lengths) row by row (NaN where it was
    not evaluated: the rescalings at ``L``), and its loss by position,
    (seeds, n) row by row. The values are those of the results file.
    """
    results = load_results() if results is None else results
    lengths = _eval_lengths(results)
    parts, head = [], None
    for variant in VARIANTS:
        done, losses = variant_by_length(results, variant)
        table = np.full((losses.shape[0], len(lengths)), np.nan)
        for j, m in enumerate(done):
            table[:, lengths.index(int(m))] = losses[:, j]
        per = variant_by_position(results, variant)
        if head is None:
            head = [1, results["config"]["L"], per.shape[1], per.shape[0],
                    len(lengths), len(VARIANTS)]
        parts += [table.ravel(), per.ravel()]
    return np.concatenate([np.array(head + lengths, dtype=float), *parts])


def explore_data_js(results=None):
    """The text of ``_assets/posenc/data/ch08-results.js``: the array of
    :func:`explore_data` as base64 little-endian float64, for
    ``posenc.data``."""
    data = base64.b64encode(explore_data(results).astype("<f8").tobytes())
    return ("/* The committed results of chapter 8 (results/ch08/full), as "
            "posenc_plots.ch08_lab.explore_data\n   lays them out; made by "
            "python -m posenc_plots.ch08_lab. Do not edit. */\n"
            f'posenc.data.define("ch08-results", "{data.decode()}");\n')


# ------------------------------------------- training in the notebook

_PROGRESS = Labels("ch08_lab:progress", {
    "idle": "{method}, L = {L}: {steps} training steps",
    "running": ("{method}, L = {L}: step {done} of {steps}, {elapsed} so "
                "far, {rate} steps/s on this machine, about {left} left"),
    "starting": "{method}, L = {L}: step {done} of {steps}, {elapsed} so far",
})


def train_one(cfg, method, seed=0):
    """Train and evaluate one language model, showing its progress.

    :func:`posenc_lab.experiment.run_one` with ``task="lm"``, and a
    :class:`posenc_lab.progress.ProgressLine` under the cell: while it
    runs, the steps done, the time so far, the speed of this machine and
    the time left; when done, only what was trained (so that the stored
    output is the same on every machine).
    """
    from posenc_lab.experiment import run_one
    from posenc_lab.progress import ProgressLine, from_templates

    text = _PROGRESS.get()
    steps = cfg.steps + (2 * cfg.finetune_steps if method == "rope" else 0)
    fields = {"method": LABELS[method], "L": cfg.L, "steps": steps}

    with ProgressLine(steps, *from_templates(text, fields)) as line:
        return run_one(cfg, "lm", method, seed, tick=line.tick)


# ------------------------------------------------ exercise solutions

_SOLUTIONS = Labels("ch08_lab:solutions", {
    "skipped": ("The solution of {label} is not run by Run All. To see it, "
                "run lab.show_solutions() once, then this cell."),
})

_SHOW = {"on": False}


def show_solutions(on=True):
    """Let the cells that start with ``%%solution`` run (``on=False``: skip
    them again)."""
    _SHOW["on"] = bool(on)


def _unattended(shell):
    """True when no one is at the keyboard: the notebook is run by
    nbclient (the book's build, ``jupyter nbconvert --execute``) or nbval,
    which send their cells without stdin, where Jupyter sends them with."""
    kernel = getattr(shell, "kernel", None)
    return kernel is not None and not getattr(kernel, "_allow_stdin", True)


def register_solution_magic(shell=None):
    """Register the cell magic ``%%solution <label>``.

    A cell that starts with it is an exercise's solution: it runs when the
    notebook is run unattended (the book's build, nbval), and in Jupyter
    only after :func:`show_solutions`, so that Run All neither shows the
    answers nor trains again. Otherwise it prints how to see it.
    """
    if shell is None:
        from IPython import get_ipython
        shell = get_ipython()
    if shell is None:
        return None

    def solution(line, cell):
        if _unattended(shell) or _SHOW["on"]:
            result = shell.run_cell(cell, store_history=False)
            if not result.success:
                raise RuntimeError(f"the solution of {line.strip()} failed "
                                   "(traceback above)")
            return None
        print(_SOLUTIONS.get()["skipped"].format(label=line.strip()))
        return None

    shell.register_magic_function(solution, "cell", "solution")
    return solution


def _main():
    """``python -m posenc_plots.ch08_lab``: write :data:`EXPLORE_DATA_PATH`."""
    EXPLORE_DATA_PATH.parent.mkdir(parents=True, exist_ok=True)
    EXPLORE_DATA_PATH.write_text(explore_data_js(), encoding="utf-8")
    print(f"wrote {EXPLORE_DATA_PATH}")


if __name__ == "__main__":
    _main()
