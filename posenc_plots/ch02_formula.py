"""Figures for chapter 2, "The sin/cos formula".

Every number drawn here comes from :func:`posenc_core.sinusoidal_encoding`;
the functions only draw. Each takes ``ax=None`` and returns the figure.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

import posenc_core as pc
from posenc_plots import Interactive, Slider

__all__ = [
    "plot_encoding_heatmap",
    "plot_waves",
    "plot_vector",
    "wave_dimensions",
    "explore_encoding",
    "EXPLORE_ENCODING",
    "INTERACTIVE",
]

#: Number of positions shown by :func:`explore_encoding`.
N_POSITIONS = 100


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
    P = np.asarray(P)
    image = ax.imshow(P, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto",
                      interpolation="nearest")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    if title:
        ax.set_title(title, fontsize="medium")
    if pos is not None:
        ax.axhline(pos, color="black", linewidth=1)
    ax.figure.colorbar(image, ax=ax, shrink=0.9)
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
    P = np.asarray(P)
    for dim in dims:
        (line,) = ax.plot(positions, P[:, dim], label=f"dim {dim}")
        if points is not None:
            ax.plot(points[0], np.asarray(points[1])[:, dim], "o",
                    markersize=2.5, color=line.get_color())
    if pos is not None:
        ax.axvline(pos, color="black", linewidth=1)
    ax.set_xlabel("position")
    ax.set_ylabel("value")
    ax.set_ylim(-1.1, 1.6)
    ax.legend(fontsize="small", loc="upper center", ncol=4,
              handlelength=1.5, columnspacing=1.0)
    return ax.figure


def plot_vector(vector, *, title="", ax=None):
    """One encoding vector as stems over its dimensions.

    Parameters
    ----------
    vector : array_like, shape (d_model,)
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 2.5))
    vector = np.asarray(vector)
    dims = np.arange(vector.size)
    ax.vlines(dims, 0.0, vector, color="gray", linewidth=1)
    ax.plot(dims[0::2], vector[0::2], "o", markersize=3, label="sin (even)")
    ax.plot(dims[1::2], vector[1::2], "s", markersize=3, label="cos (odd)")
    ax.axhline(0.0, color="black", linewidth=0.5)
    ax.set_ylim(-1.1, 1.6)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("dimension")
    ax.set_ylabel("value")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", loc="upper center", ncol=2)
    return ax.figure


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
    d_model, pos = int(d_model), int(pos)
    if ax is None:
        fig, ax = plt.subplots(1, 3, figsize=(13, 3.6),
                               constrained_layout=True)
    P = pc.sinusoidal_encoding(N_POSITIONS, d_model, base=base)
    plot_encoding_heatmap(P, pos=pos, ax=ax[0],
                          title=f"d_model = {d_model}, base = {base:.3g}")
    fine = np.linspace(0.0, N_POSITIONS - 1, 397)
    plot_waves(fine, pc.sinusoidal_encoding(fine, d_model, base=base),
               wave_dimensions(d_model), pos=pos, ax=ax[1])
    plot_vector(P[pos], ax=ax[2], title=f"PE({pos})")
    return ax[0].figure


EXPLORE_ENCODING = Interactive(
    name="explore_encoding",
    plot=explore_encoding,
    sliders=(
        Slider("d_model", 2, 256, 2, 64, label="d_model"),
        Slider("base", 0.5, 6.0, 0.25, 4.0, label="base", log=True),
        Slider("pos", 0, N_POSITIONS - 1, 1, 20, label="pos"),
    ),
    caption=("The encoding matrix, a few of its columns as waves, and the "
             "encoding vector of one position."),
)

INTERACTIVE = (EXPLORE_ENCODING,)
