"""Figures for chapter 7, "Beyond the training length".

Every function computes through :mod:`posenc_core` (``rope_frequencies``),
takes keyword arguments and ``ax=None``, and returns the matplotlib Figure.
Nothing is drawn at import.

The running example is a RoPE head like Llama 3.1 8B's: head dimension 128,
base 500,000, training length 8192, extension factor 8. Methods are named
as in ``posenc_core.rope_frequencies``: ``"none"`` (no rescaling),
``"linear"`` (Position Interpolation), ``"ntk"``, ``"yarn"``, ``"llama3"``.
"""

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Slider

__all__ = [
    "INTERACTIVE",
    "LABELS",
    "METHODS",
    "TURNS",
    "WAVELENGTHS",
    "plot_turns",
    "plot_wavelengths",
    "scaled_frequencies",
]

#: The methods, in the order they are drawn.
METHODS = ("none", "linear", "ntk", "yarn", "llama3")

#: Legend label of each method.
LABELS = {
    "none": "no rescaling",
    "linear": "Position Interpolation",
    "ntk": "NTK-aware",
    "yarn": "YaRN",
    "llama3": "Llama 3.1",
}

_COLORS = {"none": "C3", "linear": "C0", "ntk": "C2", "yarn": "C1",
           "llama3": "C4"}


def _axes(ax, figsize):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax


def _fmt(x):
    """500000.0 -> '500,000'; 3.5 -> '3.5'."""
    x = float(x)
    if x.is_integer():
        return f"{int(x):,}"
    return f"{x:.4g}"


def scaled_frequencies(method, *, factor, original_length, head_dim=128,
                       base=500000.0):
    """RoPE angles per position after rescaling with ``method``.

    A thin wrapper around ``posenc_core.rope_frequencies`` that builds the
    ``scaling`` dict: ``"none"`` gives the unscaled angles, the others pass
    ``{"type": method, "factor": factor}`` plus
    ``"original_max_position_embeddings": original_length`` for ``"yarn"``
    and ``"llama3"``.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "none":
        return pc.rope_frequencies(head_dim, base=base)
    scaling = {"type": method, "factor": factor}
    if method in ("yarn", "llama3"):
        scaling["original_max_position_embeddings"] = original_length
    return pc.rope_frequencies(head_dim, base=base, scaling=scaling)


def plot_turns(*, factor=8, original_length=8192, head_dim=128,
               base=500000.0, methods=METHODS, ax=None):
    """Turns of each RoPE pair over the training window and a longer one.

    The black line (gid ``"training"``) has y-data
    ``L * theta / (2*pi)``: how many full turns pair ``i`` makes over the
    training length ``L = original_length``. Each method's line (gid = the
    method name) has y-data ``s * L * theta' / (2*pi)`` with ``s = factor``
    and ``theta'`` the rescaled angles: its turns over the new window
    ``s * L``. Pairs below one turn in training (shaded) only ever saw an
    arc of their circle; where a method's line rises above the black line
    there, the new window produces angles the model never saw.
    """
    fig, ax = _axes(ax, (8, 4.2))
    theta = pc.rope_frequencies(head_dim, base=base)
    i = np.arange(theta.size)
    L, s = original_length, factor
    train = L * theta / (2 * np.pi)
    slow = np.flatnonzero(train < 1)
    if slow.size:
        ax.axvspan(slow[0] - 0.5, i[-1] + 0.5, color="0.92", zorder=0,
                   label=f"pairs with < 1 turn in training ({slow.size})")
    for method in methods:
        new = scaled_frequencies(method, factor=s, original_length=L,
                                 head_dim=head_dim, base=base)
        ax.plot(i, s * L * new / (2 * np.pi), color=_COLORS[method],
                lw=3.5 if method == "linear" else 1.4, gid=method,
                label=f"{LABELS[method]}, over sL = {_fmt(s * L)}")
    ax.plot(i, train, color="k", lw=1.4, ls="--", gid="training",
            label=f"training, over L = {_fmt(L)}")
    ax.axhline(1, color="0.4", ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_xlim(-0.5, i[-1] + 0.5)
    ax.set_xlabel("pair index i")
    ax.set_ylabel("full turns over the window")
    ax.set_title(f"head dim {head_dim}, base {_fmt(base)}, L = {_fmt(L)}, "
                 f"s = {_fmt(s)}")
    ax.legend(loc="lower left", fontsize="small")
    return fig


def plot_wavelengths(*, factor=8, original_length=8192, head_dim=128,
                     base=500000.0, ax=None):
    """New wavelength, and stretch, of each pair for every method.

    Left panel: for each method (gid = the method name), y-data
    ``2*pi / theta'`` against x-data ``2*pi / theta`` (the original
    wavelengths), log-log; ``"none"`` is the diagonal. Right panel: the
    stretch ``theta / theta'`` (gid ``"<method>-stretch"``) against the
    original wavelength; 1 means the pair is kept, ``s = factor`` means it
    is interpolated like Position Interpolation. Dotted lines mark the
    wavelengths ``L/32``, ``L/4`` and ``L`` (32, 4 and 1 turn over the
    training length ``L = original_length``). ``ax`` may be a pair of axes.
    """
    if ax is None:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2),
                                       layout="constrained")
    else:
        ax1, ax2 = ax
        fig = ax1.figure
    L, s = original_length, factor
    theta = pc.rope_frequencies(head_dim, base=base)
    lam = 2 * np.pi / theta
    for method in METHODS:
        new = scaled_frequencies(method, factor=s, original_length=L,
                                 head_dim=head_dim, base=base)
        style = {"color": _COLORS[method], "lw": 1.4,
                 "label": LABELS[method]}
        if method == "none":
            style.update(color="0.5", ls="--", lw=1)
        ax1.plot(lam, 2 * np.pi / new, gid=method, **style)
        if method != "none":
            ax2.plot(lam, theta / new, gid=f"{method}-stretch", marker=".",
                     ms=3, **style)
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel(r"original wavelength $\lambda_i$ (positions)")
    ax1.set_ylabel(r"new wavelength $\lambda_i'$ (positions)")
    ax1.legend(loc="upper left", fontsize="small")
    for turns in (32, 4, 1):
        for a in (ax1, ax2):
            a.axvline(L / turns, color="0.6", ls=":", lw=0.9)
        # right of the 1-turn line, left of the others: "4 turns" and
        # "1 turn" sit a factor 4 apart and would overlap if centred
        ax2.text(L / turns, 1.02, f"{turns} turn{'s' * (turns > 1)}",
                 transform=ax2.get_xaxis_transform(),
                 ha="left" if turns == 1 else "right",
                 fontsize="small", color="0.35")
    ax2.set_xscale("log")
    ax2.set_yscale("log", base=2)
    ax2.set_ylim(0.9, 1.12 * s)
    ax2.set_xlabel(r"original wavelength $\lambda_i$ (positions)")
    ax2.set_ylabel(r"stretch $\omega_i / \omega_i'$")
    ax2.legend(loc="lower right", fontsize="small")
    fig.suptitle(f"head dim {head_dim}, base {_fmt(base)}, "
                 f"L = {_fmt(L)}, s = {_fmt(s)}; dotted: 32, 4 and 1 turn "
                 f"over L")
    return fig


_SLIDERS = (
    Slider("factor", 1, 32, 1, 8, label="factor s"),
    Slider("original_length", 1024, 32768, 1024, 8192,
           label="training length L"),
)

TURNS = Interactive(
    name="ch07_turns",
    plot=plot_turns,
    sliders=_SLIDERS,
    caption="Turns of each RoPE pair over the training window and over a "
            "window s times longer, for each rescaling method.",
)

WAVELENGTHS = Interactive(
    name="ch07_wavelengths",
    plot=plot_wavelengths,
    sliders=_SLIDERS,
    caption="New wavelength and stretch of each RoPE pair for each "
            "rescaling method.",
)

INTERACTIVE = (WAVELENGTHS, TURNS)
