"""Figures for chapter 2, "The sin/cos formula".

Every number drawn here comes from :func:`posenc_core.sinusoidal_encoding`;
the functions only draw. Each takes ``ax=None`` and returns the figure.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots._live import set_image
from posenc_plots.i18n import Labels

__all__ = [
    "plot_encoding_overview",
    "plot_encoding_heatmap",
    "plot_waves",
    "plot_vector",
    "base_label",
    "wave_dimensions",
    "explore_encoding",
    "live_encoding",
    "EXPLORE_ENCODING",
    "INTERACTIVE",
]

#: Number of positions shown by :func:`explore_encoding`.
N_POSITIONS = 100

#: The labels of the panels (each plotting function draws one of them).
_HEATMAP = Labels("ch02_formula:plot_encoding_heatmap", {
    "xlabel": "dimension",
    "ylabel": "position",
    # titles the chapter's code passes in, translated when shown
    "interleaved": "interleaved (paper)",
    "concatenated": "concatenated [sin | cos]",
})
_WAVES = Labels("ch02_formula:plot_waves", {
    "xlabel": "position",
    "ylabel": "value",
    "dim": "dim {dim}",
})
_VECTOR = Labels("ch02_formula:plot_vector", {
    "sin": "sin (even)",
    "cos": "cos (odd)",
    "xlabel": "dimension",
    "ylabel": "value",
})
_OVERVIEW = Labels("ch02_formula:plot_encoding_overview", {
    "title_matrix": "$P$: {n} positions, $d_{{\\mathrm{{model}}}} = {d_model}$",
    "title_waves": "the marked columns, as waves",
    "xlabel_matrix": "dimension",
    "ylabel": "position $\\mathrm{pos}$",
    "column": "dim {dim}",
    "wavelength": "$\\lambda = {wavelength:,.1f}$",
})
_EXPLORE = Labels("ch02_formula:explore_encoding", {
    "xlabel_heatmap": "dimension",
    "ylabel_heatmap": "position",
    "xlabel_waves": "position",
    "ylabel_waves": "value",
    "dim": "dim {dim}",
    "sin": "sin (even)",
    "cos": "cos (odd)",
    "xlabel_vector": "dimension",
    "ylabel_vector": "value",
    "title_heatmap": "$d_{{\\mathrm{{model}}}} = {d_model}$, base $b$ = {base}",
    "title_vector": "PE({pos})",
    "d_model": "model width d_model",
    "base": "base b",
    "pos": "position pos",
    "caption": ("The encoding matrix, a few of its columns as waves, and "
                "the encoding vector of one position."),
})


def base_label(base):
    """The base as the figures write it: ``10000.0 -> '10,000'``,
    ``17782.8 -> '17,783'``, ``3.1623 -> '3.16'`` (never ``'1e+04'``).

    The in-page twin (``_assets/posenc/ch02_formula.js``) writes it the same.
    """
    return f"{base:,.0f}" if base >= 1000 else f"{base:.3g}"


def _texts(table, prefix, keys, text=None):
    """``{key: label}`` of one panel, from its own table or, in the
    three-panel figure, from ``text`` (keys ``<key>_<prefix>`` or ``<key>``)."""
    if text is None:
        return {k: table[k] for k in keys}
    return {k: text.get(f"{k}_{prefix}", text.get(k)) for k in keys}


def plot_encoding_overview(n_positions=100, d_model=128, dims=(0, 16, 48), *,
                           base=10000.0, ax=None):
    """The encoding matrix, and some of its columns drawn as waves.

    Left: the heatmap of ``P = sinusoidal_encoding(n_positions, d_model,
    base=base)``, position down and dimension across, with a coloured line
    on each column of ``dims``. Right, on the same position axis: those
    columns as curves of real-valued position (column ``dims[r]`` is drawn
    around ``x = 2.5 r``, so that the curves sit side by side), each
    labelled with its wavelength :math:`\\lambda_i = 2\\pi/\\omega_i`
    (``posenc_core.wavelengths``): fast waves on the left of the matrix,
    ever slower ones to the right.

    Parameters
    ----------
    n_positions : int, optional
        Rows of the matrix (default 100).
    d_model : int, optional
        Its even width (default 128).
    dims : sequence of int, optional
        The columns drawn as waves (default 0, 16 and 48: pairs 0, 8, 24).
    base : float, optional
        The base :math:`b` of the frequencies.
    ax : sequence of two Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If a dimension of ``dims`` is not in ``0 .. d_model - 1``.
    """
    dims = [int(d) for d in dims]
    if not dims or min(dims) < 0 or max(dims) >= d_model:
        raise ValueError(f"dims must be columns 0 .. {d_model - 1}, got "
                         f"{dims}")
    text = _OVERVIEW.get()
    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(8, 3.8),
                               gridspec_kw={"width_ratios": (1.25, 1)},
                               constrained_layout=True)
    P = pc.sinusoidal_encoding(n_positions, d_model, base=base)
    fine = np.linspace(0.0, n_positions - 1, 20 * n_positions)
    waves = pc.sinusoidal_encoding(fine, d_model, base=base)
    lam = pc.wavelengths(d_model, base=base)
    image = ax[0].imshow(P, cmap="RdBu_r", vmin=-1.0, vmax=1.0,
                         aspect="auto", interpolation="nearest")
    ax[0].figure.colorbar(image, ax=ax[0], shrink=0.9, pad=0.02)
    ax[0].set_title(text["title_matrix"].format(n=n_positions,
                                                d_model=d_model),
                    fontsize="medium", pad=10)
    ax[0].set_xlabel(text["xlabel_matrix"])
    ax[0].set_ylabel(text["ylabel"])
    ax[0].xaxis.set_major_locator(MaxNLocator(integer=True))
    for r, dim in enumerate(dims):
        color = f"C{r + 2}"
        # a marker above the marked column, outside the matrix
        ax[0].plot(dim, -0.5, marker="v", markersize=9, color=color,
                   markeredgecolor="black", clip_on=False, zorder=3)
        ax[1].plot(2.5 * r + waves[:, dim], fine, color=color, lw=1.2)
    ax[1].set_xticks([2.5 * r for r in range(len(dims))], [
        text["column"].format(dim=dim) + "\n" + text["wavelength"].format(
            wavelength=lam[dim // 2]) for dim in dims])
    for label, r in zip(ax[1].get_xticklabels(), range(len(dims)),
                        strict=True):
        label.set_color(f"C{r + 2}")
    ax[1].set_xlim(-1.4, 2.5 * (len(dims) - 1) + 1.4)
    ax[1].set_ylim(n_positions - 0.5, -0.5)
    ax[1].tick_params(labelleft=False)
    ax[1].set_title(text["title_waves"], fontsize="medium")
    return ax[0].figure


class _Heatmap:
    """The artists of :func:`plot_encoding_heatmap`, to draw data into."""

    def __init__(self, ax, pos_line, text=None):
        self.ax = ax
        text = _texts(_HEATMAP, "heatmap", ("xlabel", "ylabel"), text)
        self.image = ax.imshow(np.zeros((1, 1)), cmap="RdBu_r", vmin=-1.0,
                               vmax=1.0, aspect="auto",
                               interpolation="nearest")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(text["xlabel"])
        ax.set_ylabel(text["ylabel"])
        self.line = (ax.axhline(0, color="black", linewidth=1) if pos_line
                     else None)
        ax.figure.colorbar(self.image, ax=ax, shrink=0.9)

    def update(self, P, title="", pos=None):
        set_image(self.image, P)
        if title in _HEATMAP.en.values():  # a title the chapter passes
            title = _HEATMAP.tr(title)
        if title:
            self.ax.set_title(title, fontsize="medium")
        if self.line is not None:
            self.line.set_ydata([pos, pos])
        return self.ax.figure


def plot_encoding_heatmap(P, *, title="", pos=None, ax=None):
    """Heatmap of an encoding matrix: position down, dimension across.

    Parameters
    ----------
    P : array_like, shape (n, d_model)
        Entries in [-1, 1], e.g. from :func:`posenc_core.sinusoidal_encoding`.
    pos : int, optional
        Draw a horizontal line at this position (row).
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    return _Heatmap(ax, pos is not None).update(np.asarray(P), title, pos)


class _Waves:
    """The artists of :func:`plot_waves`; lines are remade when their
    number changes, otherwise given the new columns and labels."""

    def __init__(self, ax, text=None):
        self.ax, self.key, self.curves, self.dots = ax, None, [], []
        self.line = None
        self.text = text = _texts(_WAVES, "waves", ("xlabel", "ylabel", "dim"),
                                  text)
        ax.set_xlabel(text["xlabel"])
        ax.set_ylabel(text["ylabel"])
        ax.set_ylim(-1.1, 1.6)

    def update(self, positions, P, dims, pos=None, points=None):
        ax = self.ax
        P = np.asarray(P)
        dim_label = self.text["dim"]
        key = (len(dims), points is None, pos is None)
        if key != self.key:  # new set of lines: remake them all, in order
            self.key = key
            for line in list(ax.lines):
                line.remove()
            ax.set_prop_cycle(None)  # colours from C0 again
            self.curves, self.dots = [], []
            for dim in dims:
                (line,) = ax.plot(positions, P[:, dim],
                                  label=dim_label.format(dim=dim))
                self.curves.append(line)
                if points is not None:
                    self.dots.append(ax.plot(
                        points[0], np.asarray(points[1])[:, dim], "o",
                        markersize=2.5, color=line.get_color())[0])
            self.line = (ax.axvline(0, color="black", linewidth=1)
                         if pos is not None else None)
            ax.relim()
            ax.legend(fontsize="small", loc="upper center", ncol=4,
                      handlelength=1.5, columnspacing=1.0)
        else:
            texts = ax.get_legend().get_texts()
            for line, text, dim in zip(self.curves, texts, dims, strict=True):
                line.set_data(positions, P[:, dim])
                label = dim_label.format(dim=dim)
                line.set_label(label)
                text.set_text(label)
            for line, dim in zip(self.dots, dims if self.dots else (),
                                 strict=True):
                line.set_data(points[0], np.asarray(points[1])[:, dim])
            ax.relim()
        if self.line is not None:
            self.line.set_xdata([pos, pos])
        return ax.figure


def plot_waves(positions, P, dims, *, pos=None, points=None, ax=None):
    """Some columns of an encoding matrix as curves over position.

    Parameters
    ----------
    positions : array_like, shape (n,)
        The positions of the rows of ``P`` (may be fractional, for a smooth
        curve).
    P : array_like, shape (n, d_model)
    dims : sequence of int
        The columns to draw, one line each, in this order.
    pos : float, optional
        Draw a vertical line there.
    points : tuple (positions, P), optional
        Also mark these rows (e.g. the integer positions) with dots, in the
        colour of each line.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3))
    return _Waves(ax).update(positions, P, dims, pos=pos, points=points)


class _Vector:
    """The artists of :func:`plot_vector`, to draw a vector into."""

    def __init__(self, ax, text=None):
        self.ax = ax
        text = _texts(_VECTOR, "vector", ("sin", "cos", "xlabel", "ylabel"),
                      text)
        self.stems = ax.vlines([], 0.0, [], color="gray", linewidth=1)
        (self.sin,) = ax.plot([], [], "o", markersize=3, label=text["sin"])
        (self.cos,) = ax.plot([], [], "s", markersize=3, label=text["cos"])
        ax.axhline(0.0, color="black", linewidth=0.5)
        ax.set_ylim(-1.1, 1.6)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(text["xlabel"])
        ax.set_ylabel(text["ylabel"])
        ax.legend(fontsize="small", loc="upper center", ncol=2)

    def update(self, vector, title=""):
        vector = np.asarray(vector)
        dims = np.arange(vector.size)
        self.stems.set_segments(np.stack(
            [np.stack([dims, np.zeros(dims.size)], 1),
             np.stack([dims, vector], 1)], 1))
        self.sin.set_data(dims[0::2], vector[0::2])
        self.cos.set_data(dims[1::2], vector[1::2])
        if title:
            self.ax.set_title(title, fontsize="medium")
        self.ax.relim()
        self.ax.autoscale_view()
        return self.ax.figure


def plot_vector(vector, *, title="", ax=None):
    """One encoding vector as stems over its dimensions.

    Parameters
    ----------
    vector : array_like, shape (d_model,)
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 2.5))
    return _Vector(ax).update(vector, title=title)


def wave_dimensions(d_model):
    """Sine columns of pairs ``0, m/8, m/4, m/2`` (``m = d_model/2``).

    Duplicates (small ``d_model``) are dropped.
    """
    m = d_model // 2
    pairs = sorted({0, m // 8, m // 4, m // 2})
    return [2 * i for i in pairs]


def explore_encoding(d_model=64, base=10000.0, pos=20, *, ax=None):
    """The encoding matrix, some of its columns, and the row of one position.

    Left: the heatmap of ``sinusoidal_encoding(100, d_model, base=base)``
    with a line at ``pos``; middle: the columns of
    :func:`wave_dimensions` over positions 0 to 99; right: the vector
    ``PE(pos)``.

    Parameters
    ----------
    ax : sequence of three Axes, optional
    """
    return live_encoding(ax).update(d_model=d_model, base=base, pos=pos)


def live_encoding(ax=None):
    """:func:`explore_encoding`'s figure, built once; ``update`` draws.

    Returns a :class:`posenc_plots.Live`; ``update(d_model=, base=, pos=)``
    redraws the panels for new values (moving ``pos`` only moves two lines
    and the vector).
    """
    if ax is None:
        fig, ax = plt.subplots(1, 3, figsize=(13, 3.6),
                               constrained_layout=True)
    text = _EXPLORE.get()
    heat = _Heatmap(ax[0], True, text)
    waves, vector = _Waves(ax[1], text), _Vector(ax[2], text)
    fine = np.linspace(0.0, N_POSITIONS - 1, 397)
    cache = {}

    def update(d_model=64, base=10000.0, pos=20):
        d_model, pos = int(d_model), int(pos)
        if cache.get("key") != (d_model, base):
            cache["key"] = (d_model, base)
            cache["P"] = pc.sinusoidal_encoding(N_POSITIONS, d_model,
                                                base=base)
            cache["fine"] = pc.sinusoidal_encoding(fine, d_model, base=base)
        P = cache["P"]
        heat.update(P, pos=pos, title=text["title_heatmap"].format(
            d_model=d_model, base=base_label(base)))
        waves.update(fine, cache["fine"], wave_dimensions(d_model), pos=pos)
        vector.update(P[pos], title=text["title_vector"].format(pos=pos))

    return Live(ax[0].figure, update)


EXPLORE_ENCODING = Interactive(
    name="explore_encoding",
    plot=explore_encoding,
    sliders=(
        Slider("d_model", 2, 256, 2, 64, label=_EXPLORE.en["d_model"],
               continuous=True),
        Slider("base", 0.5, 6.0, 0.25, 4.0, label=_EXPLORE.en["base"],
               log=True, continuous=True),
        Slider("pos", 0, N_POSITIONS - 1, 1, 20, label=_EXPLORE.en["pos"],
               continuous=True),
    ),
    caption=_EXPLORE.en["caption"],
    live=live_encoding,
    labels=_EXPLORE,
    replaces="fig-ch02-explore",
)

INTERACTIVE = (EXPLORE_ENCODING,)
