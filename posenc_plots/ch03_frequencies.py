"""Figures for chapter 3, "Frequency per dimension".

Every function computes through :mod:`posenc_core`, takes keyword
arguments and ``ax=None``, and returns the matplotlib Figure. Nothing is
drawn at import.
"""

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "plot_waves",
    "plot_wavelengths",
    "plot_wavelengths_by_base",
    "plot_distance_matrix",
    "plot_distance_profile",
    "live_wavelengths",
    "live_distance_profile",
    "WAVELENGTHS",
    "DISTANCE",
    "INTERACTIVE",
]


_WAVES = Labels("ch03_frequencies:plot_waves", {
    "line": r"$i={i}$, $\lambda_i={wavelength:,.1f}$",
    "xlabel": r"position $\mathrm{pos}$",
    "ylabel": r"$\sin(\mathrm{pos}\,\omega_i)$",
    "title": (r"sine column $2i$ of a few pairs "
              r"($d_{{\mathrm{{model}}}} = {d_model}$, $b$ = {base})"),
})
_WAVELENGTHS = Labels("ch03_frequencies:ch03_wavelengths", {
    "bound": r"$2\pi b$ (never reached)",
    "xlabel": "pair index $i$",
    "ylabel": r"wavelength $\lambda_i$ (positions)",
    "fast": r"wavelength $\leq$ {seq_len:g} ({count} pairs)",
    "slow": "wavelength > {seq_len:g} ({count} pairs)",
    "title": (r"$d_{{\mathrm{{model}}}} = {d_model}$, $b$ = {base}: longest "
              "wavelength {longest:,.1f}"),
    "d_model": "model width d_model",
    "base": "base b",
    "seq_len": "sequence length",
    "caption": ("Wavelength of each sin/cos pair; pairs longer than the "
                "sequence are drawn in orange."),
})
_BY_BASE = Labels("ch03_frequencies:plot_wavelengths_by_base", {
    "line": "$b$ = {base}: {count} pairs longer than {seq_len:g}",
    "xlabel": "pair index $i$",
    "ylabel": r"wavelength $\lambda_i$ (positions)",
    "title": (r"$d_{{\mathrm{{model}}}} = {d_model}$; dotted line: "
              "{seq_len:g} positions"),
})
_MATRIX = Labels("ch03_frequencies:plot_distance_matrix", {
    "colorbar": "distance",
    "xlabel": r"position $\mathrm{pos} + \Delta$",
    "ylabel": r"position $\mathrm{pos}$",
    "title": r"$d_{{\mathrm{{model}}}} = {d_model}$, $b$ = {base}",
})
_DISTANCE = Labels("ch03_frequencies:ch03_distance", {
    "xlabel": r"shift $\Delta$",
    "ylabel": r"$\Vert PE(\Delta) - PE(0) \Vert$",
    "neighbour": "neighbour distance {distance:.3f}",
    "nearest": r"nearest: $\Delta$ = {nearest}, distance {distance:.3f}",
    "title": r"$d_{{\mathrm{{model}}}} = {d_model}$, $b$ = {base}",
    "d_model": "model width d_model",
    "base": "base b",
    "caption": "Distance between two positions Δ apart, for shifts up to "
               "1,000.",
})


def _axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    return ax.figure, ax


def _fmt(base):
    """10000.0 -> '10,000'; 17782.8 -> '17,783'; 3.16228 -> '3.162';
    1e12 -> '$10^{12}$' (never '1e+12')."""
    if base >= 1e9:
        exponent = int(np.floor(np.log10(base)))
        mantissa = base / 10.0**exponent
        if np.isclose(mantissa, 1.0):
            return f"$10^{{{exponent}}}$"
        return f"${mantissa:.3g} \\times 10^{{{exponent}}}$"
    if float(base).is_integer() or base >= 1000:
        return f"{base:,.0f}"
    return f"{base:.4g}"


def plot_waves(*, d_model=512, base=10000.0, pairs=(0, 32, 64, 128),
               n_positions=101, ax=None):
    """The sine column ``2i`` of each pair ``i`` in ``pairs`` over position.

    Low pairs oscillate fast, high pairs slowly. The curves are drawn at
    real-valued positions from 0 to ``n_positions - 1`` (the encoding of a
    sequence samples them at the integers). One line per pair, in the
    order of ``pairs``; line ``r`` has y-data column ``2*pairs[r]`` of
    ``posenc_core.sinusoidal_encoding(x, d_model, base=base)`` where ``x``
    is its x-data.
    """
    text = _WAVES.get()
    fig, ax = _axes(ax, (8, 3.4))
    x = np.linspace(0, n_positions - 1, 20 * n_positions)
    P = pc.sinusoidal_encoding(x, d_model, base=base)
    lam = pc.wavelengths(d_model, base=base)
    for i in pairs:
        ax.plot(x, P[:, 2 * i], lw=1.2,
                label=text["line"].format(i=i, wavelength=lam[i]))
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_ylim(-1.1, 1.1)
    # the legend below the axes, so that the figure stays 8 inches wide
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4,
              fontsize="small")
    ax.set_title(text["title"].format(d_model=d_model, base=_fmt(base)))
    return fig


def plot_wavelengths(*, d_model=512, base=10000.0, seq_len=512, ax=None):
    """Wavelength of every pair against its index, on a log scale.

    The first line's y-data is ``posenc_core.wavelengths(d_model,
    base=base)``. Dashed lines mark :math:`2\\pi` and the bound
    :math:`2\\pi\\cdot\\mathrm{base}` that is never reached; a dotted line
    marks ``seq_len``, and pairs whose wavelength exceeds it are drawn in
    a second colour (they never complete a cycle within ``seq_len``
    positions).
    """
    return live_wavelengths(ax).update(d_model=d_model, base=base,
                                       seq_len=seq_len)


def live_wavelengths(ax=None):
    """:func:`plot_wavelengths`, built once: a :class:`posenc_plots.Live`."""
    text = _WAVELENGTHS.get()
    fig, ax = _axes(ax, (8, 3.6))
    (curve,) = ax.plot([], [], color="0.6", lw=1, zorder=1)
    fast = ax.scatter([], [], s=10, color="C0", zorder=2, label=" ")
    slow = ax.scatter([], [], s=10, color="C1", zorder=2, label=" ")
    ax.axhline(2 * np.pi, color="k", ls="--", lw=0.8)
    bound = ax.axhline(1.0, color="C3", ls="--", lw=0.8,
                       label=text["bound"])
    seq = ax.axhline(1.0, color="k", ls=":", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    legend = ax.legend(loc="upper left", fontsize="small")

    def update(d_model=512, base=10000.0, seq_len=512):
        lam = pc.wavelengths(d_model, base=base)
        i = np.arange(lam.size)
        curve.set_data(i, lam)
        is_slow = lam > seq_len
        fast.set_offsets(np.column_stack([i[~is_slow], lam[~is_slow]]))
        slow.set_offsets(np.column_stack([i[is_slow], lam[is_slow]]))
        labels = (
            text["fast"].format(seq_len=seq_len, count=int((~is_slow).sum())),
            text["slow"].format(seq_len=seq_len, count=int(is_slow.sum())))
        for artist, entry, label in zip((fast, slow), legend.get_texts(),
                                        labels, strict=False):
            artist.set_label(label)
            entry.set_text(label)
        bound.set_ydata([2 * np.pi * base] * 2)
        seq.set_ydata([seq_len] * 2)
        ax.set_title(text["title"].format(d_model=d_model, base=_fmt(base),
                                          longest=lam[-1]))
        ax.relim()
        ax.autoscale_view()

    return Live(fig, update)


def plot_wavelengths_by_base(*, bases=(100.0, 10000.0, 1000000.0),
                             d_model=512, seq_len=512, ax=None):
    """Wavelengths against pair index for several bases (log scale).

    Line ``r`` has y-data ``posenc_core.wavelengths(d_model,
    base=bases[r])``; a dotted line marks ``seq_len``.
    """
    text = _BY_BASE.get()
    fig, ax = _axes(ax, (8, 3.6))
    for base in bases:
        lam = pc.wavelengths(d_model, base=base)
        n_slow = int((lam > seq_len).sum())
        ax.plot(np.arange(lam.size), lam,
                label=text["line"].format(base=_fmt(base), count=n_slow,
                                          seq_len=seq_len))
    ax.axhline(seq_len, color="k", ls=":", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_title(text["title"].format(d_model=d_model, seq_len=seq_len))
    ax.legend(loc="upper left", fontsize="small")
    return fig


def plot_distance_matrix(*, n_positions=128, d_model=512, base=10000.0,
                         ax=None):
    r"""Heatmap of the distances between the encodings of all pairs of positions.

    Entry (pos, pos + Δ) is
    :math:`\lVert PE(\mathrm{pos}) - PE(\mathrm{pos}+\Delta) \rVert`.

    The image array equals the matrix of Euclidean distances between the
    rows of ``posenc_core.sinusoidal_encoding(n_positions, d_model,
    base=base)``.
    """
    text = _MATRIX.get()
    fig, ax = _axes(ax, (4.6, 3.8))
    P = pc.sinusoidal_encoding(n_positions, d_model, base=base)
    sq = (P**2).sum(axis=1)
    D = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * P @ P.T, 0.0))
    im = ax.imshow(D, cmap="viridis", origin="upper")
    fig.colorbar(im, ax=ax, label=text["colorbar"])
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_title(text["title"].format(d_model=d_model, base=_fmt(base)))
    return fig


def plot_distance_profile(*, d_model=512, base=10000.0, n_positions=1000,
                          ax=None):
    r"""Distance of every position :math:`\Delta` from position 0.

    The line's y-data is :math:`\lVert PE(\Delta) - PE(0)\rVert` for
    :math:`\Delta = 0, \dots,` ``n_positions-1``, from
    ``posenc_core.sinusoidal_encoding``. Because the distance depends only on
    the shift, this curve is also the distance between any two positions
    :math:`\Delta` apart. A dashed line marks the distance to the neighbour
    (:math:`\Delta = 1`) and a red dot the nearest position
    :math:`\Delta \ge 1`. The legend takes the lower corner on the other
    side from the red dot.
    """
    return live_distance_profile(ax, n_positions=n_positions).update(
        d_model=d_model, base=base)


def live_distance_profile(ax=None, *, n_positions=1000):
    """:func:`plot_distance_profile`, built once (``update(d_model, base)``).

    Returns a :class:`posenc_plots.Live`.
    """
    text = _DISTANCE.get()
    fig, ax = _axes(ax, (8, 3.2))
    k = np.arange(n_positions)
    (curve,) = ax.plot([], [], lw=0.8)
    if n_positions > 1:
        neighbour = ax.axhline(0.0, color="k", ls="--", lw=0.8, label=" ")
        (point,) = ax.plot([], [], "o", color="C3", label=" ")
        legend = ax.legend(loc="lower right", fontsize="small")
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])

    def update(d_model=512, base=10000.0):
        P = pc.sinusoidal_encoding(n_positions, d_model, base=base)
        dist = np.linalg.norm(P - P[0], axis=1)
        curve.set_data(k, dist)
        if n_positions > 1:
            nearest = 1 + int(np.argmin(dist[1:]))
            neighbour.set_ydata([dist[1]] * 2)
            point.set_data([nearest], [dist[nearest]])
            # the legend sits in the lower corner away from the nearest
            # position, so that it never hides the dot the figure is about
            legend.set_loc("lower left" if nearest > (n_positions - 1) / 2
                           else "lower right")
            labels = (text["neighbour"].format(distance=dist[1]),
                      text["nearest"].format(nearest=nearest,
                                             distance=dist[nearest]))
            for artist, entry, label in zip((neighbour, point),
                                            legend.get_texts(), labels,
                                            strict=True):
                artist.set_label(label)
                entry.set_text(label)
        ax.set_autoscaley_on(True)
        ax.relim()
        ax.autoscale_view()
        ax.set_ylim(bottom=0)
        ax.set_title(text["title"].format(d_model=d_model, base=_fmt(base)))

    return Live(fig, update)


WAVELENGTHS = Interactive(
    name="ch03_wavelengths",
    plot=plot_wavelengths,
    sliders=(
        Slider("d_model", 8, 1024, 8, 512, label=_WAVELENGTHS.en["d_model"],
               continuous=True),
        Slider("base", 0.25, 6, 0.25, 4, label=_WAVELENGTHS.en["base"],
               log=True, continuous=True),
        Slider("seq_len", 64, 8192, 64, 512,
               label=_WAVELENGTHS.en["seq_len"], continuous=True),
    ),
    caption=_WAVELENGTHS.en["caption"],
    live=live_wavelengths,
    labels=_WAVELENGTHS,
)

DISTANCE = Interactive(
    name="ch03_distance",
    plot=plot_distance_profile,
    live=live_distance_profile,
    sliders=(
        Slider("d_model", 2, 512, 2, 64, label=_DISTANCE.en["d_model"],
               continuous=True),
        Slider("base", 0.25, 6, 0.25, 4, label=_DISTANCE.en["base"],
               log=True, continuous=True),
    ),
    caption=_DISTANCE.en["caption"],
    labels=_DISTANCE,
)

INTERACTIVE = (WAVELENGTHS, DISTANCE)
