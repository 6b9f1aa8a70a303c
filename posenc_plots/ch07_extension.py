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
from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "INTERACTIVE",
    "LABELS",
    "METHODS",
    "TURNS",
    "WAVELENGTHS",
    "plot_turns",
    "live_turns",
    "plot_unseen_angles",
    "plot_wavelengths",
    "live_wavelengths",
    "scaled_frequencies",
]

#: The methods, in the order they are drawn.
METHODS = ("none", "linear", "ntk", "yarn", "llama3")

#: Legend label of each method (in the current language: ``LABELS[m]``).
LABELS = Labels("ch07_extension:methods", {
    "none": "no rescaling",
    "linear": "Position Interpolation",
    "ntk": "NTK-aware",
    "yarn": "YaRN",
    "llama3": "Llama 3.1",
})

_TURNS = Labels("ch07_extension:ch07_turns", {
    "xlabel": "pair index i",
    "ylabel": "full turns over the window",
    "method": "{method}, over sL = {sL}",
    "training": "training, over L = {L}",
    "span": "pairs with < 1 turn in training ({count})",
    "title": "head dim {head_dim}, base {base}, L = {L}, s = {s}",
    "factor": "factor s",
    "original_length": "training length L",
    "caption": ("Turns of each RoPE pair over the training window and over "
                "a window s times longer, for each rescaling method."),
})
_WAVELENGTHS = Labels("ch07_extension:ch07_wavelengths", {
    "xlabel": r"original wavelength $\lambda_i$ (positions)",
    "ylabel_new": r"new wavelength $\lambda_i'$ (positions)",
    "ylabel_stretch": r"stretch $\omega_i / \omega_i'$",
    "turns_32": "32 turns",
    "turns_4": "4 turns",
    "turns_1": "1 turn",
    "suptitle": ("head dim {head_dim}, base {base}, L = {L}, s = {s}; "
                 "dotted: 32, 4 and 1 turn over L"),
    "factor": "factor s",
    "original_length": "training length L",
    "caption": ("New wavelength and stretch of each RoPE pair for each "
                "rescaling method."),
})

_UNSEEN = Labels("ch07_extension:plot_unseen_angles", {
    "xlabel": "distance $|r|$ between query and key (tokens)",
    "ylabel": r"angle $|r|\,\omega_i$ of the pair (degrees)",
    "seen": "angles seen in training",
    "L": "training length $L$",
    "none": "no rescaling, over $sL$",
    "linear": r"Position Interpolation, $\omega_i / s$",
    "title": ("pair $i$ = {pair} of {pairs}, $d$ = {head_dim}, $b$ = {base}, "
              "$L$ = {L}, $s$ = {s}"),
})

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
    ``L * omega / (2*pi)``: how many full turns pair ``i`` makes over the
    training length ``L = original_length``. Each method's line (gid = the
    method name) has y-data ``s * L * omega' / (2*pi)`` with ``s = factor``
    and ``omega'`` the rescaled frequencies: its turns over the new window
    ``s * L``. Pairs below one turn in training (shaded) only ever saw an
    arc of their circle; where a method's line rises above the black line
    there, the new window produces angles the model never saw.
    """
    return live_turns(ax, head_dim=head_dim, base=base,
                      methods=methods).update(
        factor=factor, original_length=original_length)


def plot_unseen_angles(*, pair=50, factor=8, original_length=8192,
                       head_dim=128, base=500000.0, ax=None):
    """The angle of one RoPE pair against the distance, as is and with
    Position Interpolation: why a long input breaks RoPE, and the remedy.

    Pair ``i = pair`` of a head of width ``head_dim`` turns by the angle
    ``|r| * omega_i`` at a distance ``|r|`` between query and key. The line
    with gid ``"none"`` has x-data ``0, ..., s*L - 1`` (``s = factor``,
    ``L = original_length``) and y-data that angle in degrees; the line
    ``"linear"`` the angle with Position Interpolation,
    ``|r| * omega_i / s``. The band (gid ``"seen"``) covers the angles
    ``0`` to ``(L - 1) * omega_i`` that training showed; the dotted line
    marks ``|r| = L``. For a slow pair (``L * omega_i < 2 * pi``) the first
    line leaves the band at ``L`` and the second never does.

    Raises ``ValueError`` unless ``0 <= pair < head_dim // 2`` and
    ``factor >= 1``.
    """
    if not 0 <= pair < head_dim // 2 or int(pair) != pair:
        raise ValueError(f"pair must be an integer from 0 to "
                         f"{head_dim // 2 - 1}, got {pair!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be at least 1, got {factor!r}")
    text, L, s = _UNSEEN.get(), original_length, factor
    fig, ax = _axes(ax, (7.6, 3.9))
    r = np.arange(int(round(s * L)))
    seen = np.degrees((L - 1) * pc.rope_frequencies(head_dim, base=base)[pair])
    ax.axhspan(0, seen, color="0.88", zorder=0, label=text["seen"],
               gid="seen")
    for method in ("none", "linear"):
        omega = scaled_frequencies(method, factor=s, original_length=L,
                                   head_dim=head_dim, base=base)[pair]
        ax.plot(r, np.degrees(r * omega), color=_COLORS[method],
                lw=2.5 if method == "linear" else 1.6, gid=method,
                label=text[method])
    ax.axvline(L, color="k", ls=":", lw=1, label=text["L"])
    ax.set_xlim(0, r[-1])
    ax.set_ylim(0, None)
    ax.xaxis.set_major_formatter(
        plt.FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_title(text["title"].format(pair=pair, pairs=head_dim // 2,
                                      head_dim=head_dim, base=_fmt(base),
                                      L=_fmt(L), s=_fmt(s)), fontsize=10)
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3)
    return fig


def live_turns(ax=None, *, head_dim=128, base=500000.0, methods=METHODS):
    """:func:`plot_turns`, built once: a :class:`posenc_plots.Live` whose
    ``update(factor, original_length)`` draws."""
    text, names = _TURNS.get(), LABELS.get()
    fig, ax = _axes(ax, (8, 4.2))
    theta = pc.rope_frequencies(head_dim, base=base)
    i = np.arange(theta.size)
    ax.set_yscale("log")
    ax.set_xlim(-0.5, i[-1] + 0.5)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    drawn = {"span": None, "lines": [], "key": None}

    def update(factor=8, original_length=8192):
        L, s = original_length, factor
        train = L * theta / (2 * np.pi)
        slow = np.flatnonzero(train < 1)
        curves = []
        for method in methods:
            new = scaled_frequencies(method, factor=s, original_length=L,
                                     head_dim=head_dim, base=base)
            curves.append((s * L * new / (2 * np.pi),
                           text["method"].format(method=names[method],
                                                 sL=_fmt(s * L))))
        curves.append((train, text["training"].format(L=_fmt(L))))
        span_label = text["span"].format(count=slow.size)
        if drawn["key"] != bool(slow.size):  # (re)make the artists in order
            drawn["key"] = bool(slow.size)
            for artist in ([drawn["span"]] if drawn["span"] else []) + (
                    drawn["lines"]):
                artist.remove()
            drawn["span"] = None
            if slow.size:
                drawn["span"] = ax.axvspan(
                    slow[0] - 0.5, i[-1] + 0.5, color="0.92", zorder=0,
                    label=span_label)
            drawn["lines"] = [
                ax.plot(i, y, color=_COLORS[method],
                        lw=3.5 if method == "linear" else 1.4, gid=method,
                        label=label)[0]
                for method, (y, label) in zip(methods, curves[:-1],
                                              strict=True)]
            drawn["lines"].append(ax.plot(
                i, train, color="k", lw=1.4, ls="--", gid="training",
                label=curves[-1][1])[0])
            drawn["lines"].append(ax.axhline(1, color="0.4", ls=":", lw=1))
            drawn["legend"] = ax.legend(loc="lower left", fontsize="small")
        else:
            texts = iter(drawn["legend"].get_texts())
            if drawn["span"] is not None:
                _set_span(drawn["span"], slow[0] - 0.5, i[-1] + 0.5)
                drawn["span"].set_label(span_label)
                next(texts).set_text(span_label)
            for line, (y, label) in zip(drawn["lines"][:len(curves)], curves,
                                        strict=True):
                line.set_ydata(y)
                line.set_label(label)
                next(texts).set_text(label)
        ax.relim()
        ax.autoscale_view()
        ax.set_title(text["title"].format(head_dim=head_dim, base=_fmt(base),
                                          L=_fmt(L), s=_fmt(s)))

    return Live(fig, update)


def _set_span(span, x0, x1):
    """Move an ``axvspan`` to cover x0..x1 (Rectangle or, before
    matplotlib 3.9, Polygon)."""
    if hasattr(span, "set_width"):
        span.set_x(x0)
        span.set_width(x1 - x0)
    else:
        xy = span.get_xy()
        xy[:, 0] = [x0, x0, x1, x1, x0][: len(xy)]
        span.set_xy(xy)


def plot_wavelengths(*, factor=8, original_length=8192, head_dim=128,
                     base=500000.0, ax=None):
    """New wavelength, and stretch, of each pair for every method.

    Left panel: for each method (gid = the method name), y-data
    ``2*pi / omega'`` against x-data ``2*pi / omega`` (the original
    wavelengths), log-log; ``"none"`` is the diagonal. Right panel: the
    stretch ``kappa_i = omega / omega'`` (gid ``"<method>-stretch"``) against the
    original wavelength; 1 means the pair is kept, ``s = factor`` means it
    is interpolated like Position Interpolation. Dotted lines mark the
    wavelengths ``L/32``, ``L/4`` and ``L`` (32, 4 and 1 turn over the
    training length ``L = original_length``). ``ax`` may be a pair of axes.
    """
    return live_wavelengths(ax, head_dim=head_dim, base=base).update(
        factor=factor, original_length=original_length)


def live_wavelengths(ax=None, *, head_dim=128, base=500000.0):
    """:func:`plot_wavelengths`, built once: a :class:`posenc_plots.Live`
    whose ``update(factor, original_length)`` draws."""
    if ax is None:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2),
                                       layout="constrained")
    else:
        ax1, ax2 = ax
        fig = ax1.figure
    text, names = _WAVELENGTHS.get(), LABELS.get()
    theta = pc.rope_frequencies(head_dim, base=base)
    lam = 2 * np.pi / theta
    waves, stretches = {}, {}
    for method in METHODS:
        style = {"color": _COLORS[method], "lw": 1.4,
                 "label": names[method]}
        if method == "none":
            style.update(color="0.5", ls="--", lw=1)
        waves[method] = ax1.plot(lam, lam, gid=method, **style)[0]
        if method != "none":
            stretches[method] = ax2.plot(lam, np.ones_like(lam),
                                         gid=f"{method}-stretch", marker=".",
                                         ms=3, **style)[0]
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel(text["xlabel"])
    ax1.set_ylabel(text["ylabel_new"])
    ax1.legend(loc="upper left", fontsize="small")
    marks = []
    for turns in (32, 4, 1):
        lines = [a.axvline(1.0, color="0.6", ls=":", lw=0.9)
                 for a in (ax1, ax2)]
        # right of the 1-turn line, left of the others: "4 turns" and
        # "1 turn" sit a factor 4 apart and would overlap if centred
        mark = ax2.text(1.0, 1.02, text[f"turns_{turns}"],
                        transform=ax2.get_xaxis_transform(),
                        ha="left" if turns == 1 else "right",
                        fontsize="small", color="0.35")
        marks.append((turns, lines, mark))
    ax2.set_xscale("log")
    ax2.set_yscale("log", base=2)
    ax2.set_xlabel(text["xlabel"])
    ax2.set_ylabel(text["ylabel_stretch"])
    ax2.legend(loc="lower right", fontsize="small")
    # the layout places the suptitle once; later updates change its text
    suptitle = fig.suptitle(" ")

    def update(factor=8, original_length=8192):
        L, s = original_length, factor
        for method in METHODS:
            new = scaled_frequencies(method, factor=s, original_length=L,
                                     head_dim=head_dim, base=base)
            waves[method].set_ydata(2 * np.pi / new)
            if method != "none":
                stretches[method].set_ydata(theta / new)
        for turns, lines, mark in marks:
            for line in lines:
                line.set_xdata([L / turns, L / turns])
            mark.set_x(L / turns)
        ax2.set_ylim(0.9, 1.12 * s)
        for a in (ax1, ax2):
            a.relim()
            a.autoscale_view()
        suptitle.set_text(text["suptitle"].format(
            head_dim=head_dim, base=_fmt(base), L=_fmt(L), s=_fmt(s)))

    return Live(fig, update)


_SLIDERS = (
    Slider("factor", 1, 32, 1, 8, label=_TURNS.en["factor"], continuous=True),
    Slider("original_length", 1024, 32768, 1024, 8192,
           label=_TURNS.en["original_length"], continuous=True),
)

TURNS = Interactive(
    name="ch07_turns",
    plot=plot_turns,
    live=live_turns,
    sliders=_SLIDERS,
    caption=_TURNS.en["caption"],
    labels=(_TURNS, LABELS),
    replaces="fig-ch07-turns-all",
)

WAVELENGTHS = Interactive(
    name="ch07_wavelengths",
    plot=plot_wavelengths,
    live=live_wavelengths,
    sliders=_SLIDERS,
    caption=_WAVELENGTHS.en["caption"],
    labels=(_WAVELENGTHS, LABELS),
    replaces="fig-ch07-wavelengths",
)

INTERACTIVE = (WAVELENGTHS, TURNS)
