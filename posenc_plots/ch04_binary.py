"""Figures for chapter 4, "The binary-counter analogy".

Every function computes through :mod:`posenc_core`, takes keyword
arguments and ``ax=None`` (a pair of Axes for the two-panel figures), and
returns the matplotlib Figure. Nothing is drawn at import.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "plot_counter_and_encoding",
    "plot_bit_waves",
    "plot_position",
    "live_position",
    "plot_neighbour_steps",
    "POSITION",
    "INTERACTIVE",
]


_COUNTER = Labels("ch04_binary:plot_counter_and_encoding", {
    "title_bits": "bits of $\\mathrm{{pos}}$ ({n_bits}-bit counter)",
    "xlabel_bits": "bit $j$ (0 = least significant)",
    "ylabel": r"position $\mathrm{pos}$",
    "title_encoding": ("sinusoidal encoding "
                       "($d_{{\\mathrm{{model}}}} = {d_model}$)"),
    "xlabel_encoding": "dimension (0 = fastest)",
})
_BIT_WAVES = Labels("ch04_binary:plot_bit_waves", {
    "bit": "bit {j}",
    "wave": r"$(1-\sin(\pi(\mathrm{{pos}}+1/2)/2^{j}))/2$",
    "ylabel": "bit {j}\nperiod {period}",
    "xlabel": r"position $\mathrm{pos}$",
    "title": "bits of a counter are square waves whose periods double",
})
_POSITION = Labels("ch04_binary:ch04_position", {
    "xlabel_bits": "bit $j$ (0 = least significant)",
    "ylabel_bits": "bit value",
    "xlabel_encoding": "dimension (blue: sin, orange: cos)",
    "ylabel_encoding": "value",
    "title_bits": ("$\\mathrm{{pos}} = {pos}$: bits {bits} (written most "
                   "significant first)"),
    "title_overflow": ("$\\mathrm{{pos}} = {pos}$: the {n_bits}-bit counter "
                       "rolls over\nand shows {shown} = {bits}"),
    "title_encoding": ("$PE({pos})$, $d_{{\\mathrm{{model}}}} = {d_model}$, "
                       "$b$ = {base:,g}"),
    "pos": "position pos",
    "n_bits": "number of bits",
    "d_model": "model width d_model",
    "caption": "The bits of pos and its sinusoidal encoding side by side.",
})
_STEPS = Labels("ch04_binary:plot_neighbour_steps", {
    "bits": "bits ({n_bits}-bit counter)",
    "sinusoidal": "sinusoidal ($d_{{\\mathrm{{model}}}} = {d_model}$)",
    "xlabel": r"position $\mathrm{pos}$",
    "ylabel": r"distance to $\mathrm{pos} + 1$",
})


def _pair_of_axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=figsize)
        fig.subplots_adjust(wspace=0.3)
    if len(ax) != 2:
        raise ValueError(f"ax must be None or two Axes, got {len(ax)}")
    return ax[0].figure, ax


def plot_counter_and_encoding(*, n_positions=64, n_bits=6, d_model=12,
                              base=10000.0, ax=None):
    """Heatmaps of the bits of a counter and of the sinusoidal encoding.

    Left: ``posenc_core.binary_encoding(n_positions, n_bits)``, bit 0 (the
    least significant) in the first column. Right:
    ``posenc_core.sinusoidal_encoding(n_positions, d_model, base=base)``.
    One row per position in both; the image arrays are these matrices.
    """
    text = _COUNTER.get()
    fig, (ax_b, ax_p) = _pair_of_axes(ax, (9, 4.2))
    B = pc.binary_encoding(n_positions, n_bits)
    P = pc.sinusoidal_encoding(n_positions, d_model, base=base)
    ax_b.imshow(B, cmap="Greys", vmin=0, vmax=1, aspect="auto",
                interpolation="nearest")
    ax_b.set_title(text["title_bits"].format(n_bits=n_bits))
    ax_b.set_xlabel(text["xlabel_bits"])
    ax_b.set_ylabel(text["ylabel"])
    im = ax_p.imshow(P, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto",
                     interpolation="nearest")
    ax_p.set_title(text["title_encoding"].format(d_model=d_model))
    ax_p.set_xlabel(text["xlabel_encoding"])
    ax_p.set_ylabel(text["ylabel"])
    fig.colorbar(im, ax=ax_p)
    return fig


def plot_bit_waves(*, n_positions=32, n_bits=4, ax=None):
    r"""Each bit as a square wave, with the sinusoid whose sign it follows.

    Bit ``j`` of ``pos`` is 1 exactly when
    :math:`\sin\big(\pi(pos + \tfrac12)\,2^{-j}\big) < 0`. The sinusoids are
    the sine columns of ``posenc_core.sinusoidal_encoding`` at positions
    :math:`\pi(x + \tfrac12)` with ``d_model = 2*n_bits`` and
    ``base = 2**n_bits`` (so that :math:`\omega_j = 2^{-j}`), drawn rescaled
    to :math:`(1 - \sin)/2` so that they share the bits' 0..1 range.
    In axes ``j``, line 0 (the steps) has bit ``j`` of every position as
    y-data, line 1 the rescaled sinusoid.
    """
    if ax is None:
        fig, ax = plt.subplots(n_bits, 1, figsize=(8, 1.1 + 0.9 * n_bits),
                               sharex=True, squeeze=False)
        ax = ax[:, 0]
    fig, text = ax[0].figure, _BIT_WAVES.get()
    pos = np.arange(n_positions)
    # bits 0..n_bits-1 of pos are those of pos mod 2**n_bits
    B = pc.binary_encoding(pos % 2**n_bits, n_bits)
    x = np.linspace(0, n_positions - 1, 40 * n_positions)
    S = pc.sinusoidal_encoding(np.pi * (x + 0.5), 2 * n_bits,
                               base=2.0**n_bits)
    for j in range(n_bits):
        ax[j].step(pos, B[:, j], where="mid", color="k", lw=1.2,
                   label=text["bit"].format(j=j))
        ax[j].plot(x, (1 - S[:, 2 * j]) / 2, color="C0", ls="--", lw=1,
                   label=text["wave"].format(j=j))
        ax[j].set_ylim(-0.15, 1.15)
        ax[j].set_yticks([0, 1])
        ax[j].set_ylabel(text["ylabel"].format(j=j, period=2 ** (j + 1)),
                         fontsize="small")
    ax[-1].set_xlabel(text["xlabel"])
    ax[0].set_title(text["title"])
    return fig


def plot_position(*, pos=13, n_bits=8, d_model=16, base=10000.0, ax=None):
    """The bits of ``pos`` next to its sinusoidal encoding, as bars.

    A counter with ``n_bits`` bits can only show ``pos mod 2**n_bits``: past
    that it overflows, and the title says so. Left bars: the row of
    ``posenc_core.binary_encoding`` for that value; right bars: the row of
    ``posenc_core.sinusoidal_encoding`` for ``pos``.
    """
    return live_position(ax, base=base).update(pos=pos, n_bits=n_bits,
                                               d_model=d_model)


def live_position(ax=None, *, base=10000.0):
    """:func:`plot_position`, built once: a :class:`posenc_plots.Live`
    whose ``update(pos, n_bits, d_model)`` draws."""
    text = _POSITION.get()
    fig, (ax_b, ax_p) = _pair_of_axes(ax, (10, 3.4))
    for a in (ax_b, ax_p):
        a.set_ylim(-1.05, 1.05)
        a.axhline(0, color="k", lw=0.6)
        a.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_b.set_xlabel(text["xlabel_bits"])
    ax_b.set_ylabel(text["ylabel_bits"])
    ax_p.set_xlabel(text["xlabel_encoding"])
    ax_p.set_ylabel(text["ylabel_encoding"])
    bars = {}

    def set_bars(axis, heights, color):
        old = bars.get(axis)
        if old is not None and len(old) == len(heights):
            for rect, height in zip(old, heights, strict=True):
                rect.set_height(height)
            return
        if old is not None:
            old.remove()
        bars[axis] = axis.bar(np.arange(len(heights)), heights, color=color)
        axis.relim()
        axis.autoscale_view()

    def update(pos=13, n_bits=8, d_model=16):
        shown = pos % 2**n_bits
        bits = pc.binary_encoding([shown], n_bits)[0]
        row = pc.sinusoidal_encoding([pos], d_model, base=base)[0]
        set_bars(ax_b, bits, "0.3")
        written = "".join(str(b) for b in bits[::-1])
        if shown == pos:
            title = text["title_bits"].format(pos=pos, bits=written)
        else:
            title = text["title_overflow"].format(pos=pos, n_bits=n_bits,
                                                  shown=shown, bits=written)
        ax_b.set_title(title, fontsize="medium")
        set_bars(ax_p, row, np.where(np.arange(d_model) % 2 == 0, "C0", "C1"))
        ax_p.set_title(text["title_encoding"].format(pos=pos, d_model=d_model,
                                                     base=base),
                       fontsize="medium")

    return Live(fig, update)


def plot_neighbour_steps(*, n_positions=64, n_bits=6, d_model=12,
                         base=10000.0, ax=None):
    r"""Distance between ``pos`` and ``pos + 1``, bits versus sinusoids.

    Line 0's y-data: :math:`\lVert B(pos+1) - B(pos) \rVert` (the square
    root of the number of bits that flip); line 1's:
    :math:`\lVert PE(pos+1) - PE(pos) \rVert`, for
    ``pos = 0 .. n_positions-2``.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 3))
    fig, text = ax.figure, _STEPS.get()
    B = pc.binary_encoding(n_positions, n_bits).astype(float)
    P = pc.sinusoidal_encoding(n_positions, d_model, base=base)
    pos = np.arange(n_positions - 1)
    ax.plot(pos, np.linalg.norm(np.diff(B, axis=0), axis=1), "o-", ms=3,
            color="0.3", label=text["bits"].format(n_bits=n_bits))
    ax.plot(pos, np.linalg.norm(np.diff(P, axis=0), axis=1), "s-", ms=3,
            color="C0", label=text["sinusoidal"].format(d_model=d_model))
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_ylim(0, 1.3 * np.sqrt(n_bits))
    ax.legend(loc="upper center", ncol=2, fontsize="small")
    return fig


POSITION = Interactive(
    name="ch04_position",
    plot=plot_position,
    sliders=(
        Slider("pos", 0, 255, 1, 13, label=_POSITION.en["pos"],
               continuous=True),
        Slider("n_bits", 1, 10, 1, 8, label=_POSITION.en["n_bits"],
               continuous=True),
        Slider("d_model", 2, 64, 2, 16, label=_POSITION.en["d_model"],
               continuous=True),
    ),
    caption=_POSITION.en["caption"],
    live=live_position,
    labels=_POSITION,
    replaces="fig-ch04-position",
)

INTERACTIVE = (POSITION,)
