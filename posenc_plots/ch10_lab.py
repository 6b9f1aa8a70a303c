"""Chapter 10's committed experiments (``results/ch10/full``), read.

The numbers come from :mod:`posenc_lab.layers` (``summary``, ``per_seed``,
``paired``); this module only labels them for the chapter: a Markdown table
of an experiment and a figure of loss and passkey retrieval by length.
"""

import matplotlib.pyplot as plt
import numpy as np

from posenc_lab import layers
from posenc_plots.i18n import Labels

__all__ = ["EXPERIMENTS", "LABELS", "load_results", "markdown_table",
           "plot_by_length", "seed_values", "session_times"]

EXPERIMENTS = layers.EXPERIMENTS

#: The models' names in the tables and legends.
LABELS = Labels("ch10_lab:variants", {
    "f0": "f = 0 (NoPE)",
    "f0.25-spread": "f = 1/4, spread",
    "f0.25-proportional": "f = 1/4, proportional",
    "f0.5-spread": "f = 1/2, spread",
    "f0.5-proportional": "f = 1/2, proportional",
    "f0.75-spread": "f = 3/4, spread",
    "f0.75-proportional": "f = 3/4, proportional",
    "f1": "f = 1 (RoPE, b = 10000)",
    "base0.1x": "b = 0.1 x bound (171)",
    "base1x": "b = bound (1706)",
    "depth-rope": "4 layers, all RoPE",
    "depth-nope": "4 layers, all NoPE",
    "depth-mixed": "4 layers, layer 3 NoPE",
    "depth-mixed-temp": "4 layers, layer 3 NoPE + temperature",
})

_FIG = Labels("ch10_lab:plot_by_length", {
    "length": "evaluation length n",
    "loss": "validation loss (nats per character)",
    "passkey": "passkey retrieved exactly",
    "lm_title": "language model",
    "pk_title": "passkey retrieval",
})

_METRICS = ("loss", "passkey", "digits")


def load_results(path=None):
    """``results/ch10/full/results.json`` (or ``path``)."""
    return layers.load_results() if path is None else \
        layers.load_results(path)


def _check(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, "
                         f"got {value!r}")


def markdown_table(results, experiment, metric="loss", places=3):
    """One experiment as Markdown: mean ± std over seeds per length.

    >>> r = load_results()
    >>> markdown_table(r, "base").splitlines()[2].startswith("| b = 0.1")
    True
    """
    _check("experiment", experiment, EXPERIMENTS)
    _check("metric", metric, _METRICS)
    rows = layers.summary(results, experiment)
    L = results["plan"]["lab"]["L"]
    lengths = list(rows[0][metric])
    lines = ["| model | " + " | ".join(f"n = {n} ({n // L}L)"
                                       for n in lengths) + " |",
             "|---|" + "---:|" * len(lengths)]
    for row in rows:
        cells = [f"{c[0]:.{places}f} ± {c[1]:.{places}f}"
                 for c in (row[metric][n] for n in lengths)]
        lines.append(f"| {LABELS[row['variant']]} | " + " | ".join(cells)
                     + " |")
    return "\n".join(lines)


def seed_values(results, variant, metric="loss"):
    """``(lengths, values)``: one row per seed, one column per length."""
    _check("metric", metric, _METRICS)
    cfg = layers._variant(results, variant)["config"]
    mult = cfg["eval_multiples"] if metric == "loss" else \
        cfg["passkey_multiples"]
    lengths = [cfg["L"] * j for j in mult]
    by_len = [layers.per_seed(results, variant, metric, n) for n in lengths]
    seeds = sorted(by_len[0])
    return lengths, np.array([[d[s] for d in by_len] for s in seeds])


def session_times(results):
    """``[(started_utc, runs, wall_time_s), ...]``, one per session."""
    return [(s["started_utc"], s["runs"], s["wall_time_s"])
            for s in results["sessions"]]


_STYLE = {"spread": "-", "proportional": "--"}


def plot_by_length(results, experiment="fraction", *, ax=None):
    """Loss and exact passkey retrieval by length, mean over seeds (dots:
    the seeds) for every model of ``experiment``; two panels, 8.4 in wide.
    """
    _check("experiment", experiment, EXPERIMENTS)
    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(8.4, 4.2))
    else:
        fig = ax[0].figure
    rows = layers.summary(results, experiment)
    L = results["plan"]["lab"]["L"]
    handles = []
    for k, row in enumerate(rows):
        name = row["variant"]
        style = _STYLE.get(row["convention"], "-") if \
            experiment == "fraction" and "-" in name else "-"
        color = f"C{k}"
        for a, metric in zip(ax, ("loss", "passkey"), strict=True):
            lengths, values = seed_values(results, name, metric)
            line, = a.plot(lengths, values.mean(0), style, color=color,
                           marker="o", ms=3, label=LABELS[name])
            for v in values:
                a.plot(lengths, v, ".", color=color, ms=2, alpha=0.5)
        handles.append(line)
    for a, metric, title in zip(ax, ("loss", "passkey"),
                                ("lm_title", "pk_title"), strict=True):
        a.set_xscale("log", base=2)
        a.set_xticks([L * j for j in (1, 2, 4, 8, 16)])
        a.set_xticklabels([f"{j}L" if j > 1 else "L" for j in
                           (1, 2, 4, 8, 16)])
        a.set_xlabel(_FIG["length"])
        a.set_ylabel(_FIG[metric])
        a.set_title(_FIG[title])
        a.grid(alpha=0.3)
    ax[1].set_ylim(-0.03, 1.03)
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8,
               frameon=False)
    fig.subplots_adjust(bottom=0.16 + 0.045 * ((len(rows) + 1) // 2),
                        wspace=0.3)
    return fig
