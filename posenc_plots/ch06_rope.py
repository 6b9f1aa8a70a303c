"""Figures for chapter 6, "Rotary position embedding (RoPE)".

Every function computes through :mod:`posenc_core`, takes keyword
arguments (and ``ax=None`` when it draws a single panel), and returns the
matplotlib Figure. Nothing is drawn at import. Lines that tests look up
carry a ``gid`` (``line.get_gid()``).
"""

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "Q_PAIR",
    "K_PAIR",
    "plot_rotating_pair",
    "live_rotating_pair",
    "plot_score_matrices",
    "plot_decay_bound",
    "live_decay_bound",
    "plot_layouts",
    "SCHEMES",
    "table_error",
    "plot_table_error",
    "ROTATING_PAIR",
    "DECAY_BOUND",
    "INTERACTIVE",
]

#: The example query and key pair drawn by :func:`plot_rotating_pair`.
Q_PAIR = (1.0, 0.3)
K_PAIR = (0.6, -0.5)


_ROTATING = Labels("ch06_rope:ch06_rotating_pair", {
    "q0": "q at position 0",
    "k0": "k at position 0",
    "q": "q rotated to m={m}",
    "k": "k rotated to \u2113={n}",
    "xlabel": "first dimension of the pair",
    "ylabel": "second dimension of the pair",
    "title": ("pair i={pair}, \u03c9_i={theta:.3g} rad per position\n"
              "q.k = {score:.3f}, depends on \u2113-m={distance} only"),
    "m": "query position m",
    "n": "key position \u2113",
    "pair": "pair i (head width 8)",
    "caption": ("One pair of a query and a key, rotated by their positions; "
                "their dot product depends on \u2113 - m only."),
})
_SCORES = Labels("ch06_rope:plot_score_matrices", {
    "rotary": r"rotary: $(R_m \mathbf{q}) \cdot (R_\ell \mathbf{k})$",
    "added": r"added: $(\mathbf{q} + P_m) \cdot (\mathbf{k} + P_\ell)$",
    "xlabel": "key position \u2113",
    "ylabel": "query position m",
})
_DECAY = Labels("ch06_rope:ch06_decay_bound", {
    "xlabel": "distance \u03b4 = |\u2113 - m|",
    "ylabel": "relative upper bound",
    "title": ("head_dim={head_dim}, base={base}: bound {first:.1f} at 0, "
              "{last:.2f} at {max_distance}"),
    "head_dim": "head width head_dim",
    "base": "base b",
    "max_distance": "largest distance",
    "caption": "RoFormer's relative upper bound against relative distance.",
})
_LAYOUTS = Labels("ch06_rope:plot_layouts", {
    "interleaved": "interleaved: pairs $(2i, 2i+1)$",
    "permutation": "permutation: evens, then odds",
    "half": "half: pairs $(i, i + d/2)$",
    "xlabel": "input dimension",
    "ylabel": "output dimension",
})
_TABLE_ERROR = Labels("ch06_rope:plot_table_error", {
    "angles in bfloat16": "angles in bfloat16",
    "angles in float16": "angles in float16",
    "angles in float32": "angles in float32",
    "angles in float32, cos/sin stored in bfloat16":
        "angles in float32, cos/sin stored in bfloat16",
    "bfloat16": "256 (bfloat16)",
    "float16": "2048 (float16)",
    "xlabel": "position",
    "ylabel": "worst |error| of a cos or sin entry",
    "title": ("RoPE table error up to each position ($d_k$ = {head_dim}, "
              "base {base})"),
})


def _axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax


def _fmt_base(base):
    return f"{base:,.0f}" if base >= 10 else f"{base:.3g}"


def plot_rotating_pair(*, m=3, n=1, pair=0, head_dim=8, base=10000.0,
                       ax=None):
    r"""One pair of a query at position ``m`` and a key at position ``n``.

    ``n`` is the key's position, the book's :math:`\ell` (RoFormer's
    :math:`n`). The pair ``pair`` of the query (:data:`Q_PAIR`) and of the
    key (:data:`K_PAIR`) are rotated by ``m*omega`` and ``n*omega``, with
    ``omega = posenc_core.rope_frequencies(head_dim, base=base)[pair]``,
    through ``posenc_core.apply_rope``. Lines with gid ``"q_rotated"`` and
    ``"k_rotated"`` go from the origin to the rotated vectors; gid
    ``"q_track"`` marks the query's tip at positions ``0, ..., m``.
    """
    return live_rotating_pair(ax, head_dim=head_dim, base=base).update(
        m=m, n=n, pair=pair)


def live_rotating_pair(ax=None, *, head_dim=8, base=10000.0):
    """:func:`plot_rotating_pair`, built once: a :class:`posenc_plots.Live`
    whose ``update(m, n, pair)`` draws."""
    text = _ROTATING.get()
    fig, ax = _axes(ax, (5.6, 5.2))
    circle = np.linspace(0, 2 * np.pi, 200)
    for r in (np.hypot(*Q_PAIR), np.hypot(*K_PAIR)):
        ax.plot(r * np.cos(circle), r * np.sin(circle), color="0.85", lw=0.8)
    ax.plot([0, Q_PAIR[0]], [0, Q_PAIR[1]], color="C0", ls=":", lw=1.2,
            label=text["q0"])
    ax.plot([0, K_PAIR[0]], [0, K_PAIR[1]], color="C1", ls=":", lw=1.2,
            label=text["k0"])
    (track_line,) = ax.plot([], [], "o", color="C0", ms=3, alpha=0.5,
                            gid="q_track")
    (q_line,) = ax.plot([0, 0], [0, 0], color="C0", lw=2.5, marker="o",
                        markevery=[1], gid="q_rotated", label=" ")
    (k_line,) = ax.plot([0, 0], [0, 0], color="C1", lw=2.5, marker="o",
                        markevery=[1], gid="k_rotated", label=" ")
    ax.set_aspect("equal")
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.25, 1.25)
    ax.axhline(0, color="0.7", lw=0.5)
    ax.axvline(0, color="0.7", lw=0.5)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    legend = ax.legend(loc="lower left", fontsize="small")
    thetas = pc.rope_frequencies(head_dim, base=base)
    q0, k0 = np.array([Q_PAIR]), np.array([K_PAIR])

    def update(m=3, n=1, pair=0):
        theta = thetas[pair]
        q = pc.apply_rope(q0, [m], frequencies=[theta])[0]
        k = pc.apply_rope(k0, [n], frequencies=[theta])[0]
        track = pc.apply_rope(np.repeat(q0, m + 1, axis=0), m + 1,
                              frequencies=[theta])
        track_line.set_data(track[:, 0], track[:, 1])
        for line, tip, label, entry in (
                (q_line, q, text["q"].format(m=m), legend.get_texts()[2]),
                (k_line, k, text["k"].format(n=n), legend.get_texts()[3])):
            line.set_data([0, tip[0]], [0, tip[1]])
            line.set_label(label)
            entry.set_text(label)
        ax.set_title(text["title"].format(pair=pair, theta=theta, score=q @ k,
                                          distance=n - m), fontsize=10)

    return Live(fig, update)


def plot_score_matrices(*, q=None, k=None, n=32, head_dim=8, base=10000.0,
                        seed=0):
    """Scores of one query and one key placed at every pair of positions.

    ``q`` and ``k`` (shape ``(head_dim,)``) default to
    ``np.random.default_rng(seed).normal(size=(2, head_dim))``. Left: RoPE,
    ``S[m, j] = apply_rope(q)[m] . apply_rope(k)[j]`` (constant along
    diagonals). Right: the sinusoidal encoding added to the same vectors,
    ``(q + P_m) . (k + P_j)`` with ``P = sinusoidal_encoding(n, head_dim,
    base=base)`` (not constant). The two images' arrays are these matrices.
    """
    text = _SCORES.get()
    fig, axes = plt.subplots(1, 2, figsize=(7.8, 3.7), layout="constrained")
    if q is None or k is None:
        q, k = np.random.default_rng(seed).normal(size=(2, head_dim))
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    Q = pc.apply_rope(np.tile(q, (n, 1)), n, base=base)
    K = pc.apply_rope(np.tile(k, (n, 1)), n, base=base)
    P = pc.sinusoidal_encoding(n, q.size, base=base)
    mats = (Q @ K.T, (q + P) @ (k + P).T)
    titles = (text["rotary"], text["added"])
    for ax, S, title in zip(axes, mats, titles, strict=True):
        lim = np.abs(S).max()
        im = ax.imshow(S, cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(text["xlabel"])
        ax.set_ylabel(text["ylabel"])
        fig.colorbar(im, ax=ax, shrink=0.8)
    return fig


def plot_decay_bound(*, head_dim=128, base=10000.0, max_distance=256,
                     ax=None):
    """RoFormer's relative upper bound against the relative distance.

    The line with gid ``"bound"`` has x-data ``0, ..., max_distance`` and
    y-data ``posenc_core.rope_decay_bound(max_distance + 1, head_dim,
    base=base)``; a dashed line marks its value at 0, ``(head_dim/2+1)/2``.
    """
    return live_decay_bound(ax).update(head_dim=head_dim, base=base,
                                       max_distance=max_distance)


def live_decay_bound(ax=None):
    """:func:`plot_decay_bound`, built once: a :class:`posenc_plots.Live`."""
    text = _DECAY.get()
    fig, ax = _axes(ax, (7, 3.6))
    (line,) = ax.plot([], [], color="C0", gid="bound")
    level = ax.axhline(0.0, color="0.5", ls="--", lw=0.8)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])

    def update(head_dim=128, base=10000.0, max_distance=256):
        r = np.arange(max_distance + 1)
        B = pc.rope_decay_bound(max_distance + 1, head_dim, base=base)
        line.set_data(r, B)
        level.set_ydata([B[0], B[0]])
        ax.set_xlim(0, max_distance)
        ax.set_ylim(0, 1.05 * B[0])
        ax.relim()
        ax.set_title(text["title"].format(
            head_dim=head_dim, base=_fmt_base(base), first=B[0], last=B[-1],
            max_distance=max_distance), fontsize=10)

    return Live(fig, update)


def plot_layouts(*, m=4, head_dim=8, base=100.0):
    """The rotation matrix R_m in both layouts and the permutation between.

    Left: the interleaved matrix, whose column ``j`` is
    ``apply_rope(e_j, [m])``; right: the same for ``layout="half"``;
    middle: the permutation matrix ``Pi`` with ``Pi[j, p[j]] = 1`` for
    ``p = rope_layout_permutation(head_dim)``, so that
    ``R_half = Pi R_interleaved Pi^T``. The three images' arrays are these
    matrices.
    """
    text = _LAYOUTS.get()
    fig, axes = plt.subplots(1, 3, figsize=(8, 3.1), layout="constrained")
    eye = np.eye(head_dim)
    pos = np.full(head_dim, float(m))
    R_int = pc.apply_rope(eye, pos, base=base).T
    R_half = pc.apply_rope(eye, pos, base=base, layout="half").T
    Pi = eye[pc.rope_layout_permutation(head_dim)]
    panels = (
        (R_int, text["interleaved"]),
        (Pi, text["permutation"]),
        (R_half, text["half"]),
    )
    ticks = np.arange(head_dim)
    for ax, (M, title) in zip(axes, panels, strict=True):
        im = ax.imshow(M, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.set_xlabel(text["xlabel"])
        ax.set_ylabel(text["ylabel"])
    fig.colorbar(im, ax=axes, shrink=0.7)
    return fig


#: The schemes of :func:`table_error`: (name, bits of the angle
#: computation, bits the cos/sin table is stored with or None). The name is
#: the line's gid and, in English, its label.
SCHEMES = (
    ("angles in bfloat16", 8, None),
    ("angles in float16", 11, None),
    ("angles in float32", 24, None),
    ("angles in float32, cos/sin stored in bfloat16", 24, 8),
)


def table_error(max_position, head_dim, *, base=10000.0, angle_bits=8,
                table_bits=None, chunk=4096):
    """Worst error of the cos/sin table up to each position.

    Positions ``pos`` and frequencies ``omega_i`` are rounded to ``angle_bits``
    significant bits (``posenc_core.round_significand``), and so is their
    product; the table entries ``cos`` and ``sin`` of that angle are
    rounded to ``table_bits`` bits when given. Returns ``err`` of shape
    ``(max_position + 1,)`` with ``err[pos]`` the largest absolute
    difference from the exact (float64) entries over all pairs and all
    positions ``0, ..., pos``.
    """
    theta = pc.rope_frequencies(head_dim, base=base)
    theta_low = pc.round_significand(theta, angle_bits)
    worst = np.empty(max_position + 1)
    for start in range(0, max_position + 1, chunk):
        pos = np.arange(start, min(start + chunk, max_position + 1),
                        dtype=np.float64)
        exact = np.outer(pos, theta)
        angle = pc.round_significand(
            np.outer(pc.round_significand(pos, angle_bits), theta_low),
            angle_bits)
        cos, sin = np.cos(angle), np.sin(angle)
        if table_bits is not None:
            cos = pc.round_significand(cos, table_bits)
            sin = pc.round_significand(sin, table_bits)
        err = np.maximum(np.abs(cos - np.cos(exact)),
                         np.abs(sin - np.sin(exact)))
        worst[start:start + pos.size] = err.max(axis=1)
    return np.maximum.accumulate(worst)


def plot_table_error(*, max_position=2**17, head_dim=128, base=10000.0,
                     ax=None):
    """Worst cos/sin table error up to each position, for each scheme.

    One line per entry of :data:`SCHEMES`, in that order, with gid equal to
    its name (and label the name in the current language); its y-data is
    :func:`table_error` at positions ``1, ..., max_position`` (float16 stops
    at 65504, its largest finite number).
    """
    text = _TABLE_ERROR.get()
    fig, ax = _axes(ax, (8, 4.2))
    pos = np.arange(1, max_position + 1)
    for name, angle_bits, table_bits in SCHEMES:
        err = table_error(max_position, head_dim, base=base,
                          angle_bits=angle_bits, table_bits=table_bits)[1:]
        keep = pos <= 65504 if angle_bits == 11 else slice(None)
        ax.plot(pos[keep], err[keep], label=text[name], gid=name)
    for p, mark in ((256, text["bfloat16"]), (2048, text["float16"])):
        ax.axvline(p, color="0.6", ls=":", lw=0.8)
        ax.text(p * 1.1, 4.0, mark, va="bottom", ha="left", fontsize=8,
                color="0.4")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-9, 40)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_title(text["title"].format(head_dim=head_dim,
                                      base=_fmt_base(base)), fontsize=10)
    ax.legend(loc="lower right", fontsize="small")
    return fig


ROTATING_PAIR = Interactive(
    name="ch06_rotating_pair",
    plot=plot_rotating_pair,
    live=live_rotating_pair,
    sliders=(
        Slider("m", 0, 40, 1, 3, label=_ROTATING.en["m"], continuous=True),
        Slider("n", 0, 40, 1, 1, label=_ROTATING.en["n"], continuous=True),
        Slider("pair", 0, 3, 1, 0, label=_ROTATING.en["pair"],
               continuous=True),
    ),
    caption=_ROTATING.en["caption"],
    labels=_ROTATING,
    replaces="fig-ch06-rotating-pair",
)

DECAY_BOUND = Interactive(
    name="ch06_decay_bound",
    plot=plot_decay_bound,
    live=live_decay_bound,
    sliders=(
        Slider("head_dim", 8, 256, 8, 128, label=_DECAY.en["head_dim"],
               continuous=True),
        Slider("base", 1, 6, 0.25, 4, label=_DECAY.en["base"], log=True,
               continuous=True),
        Slider("max_distance", 64, 4096, 64, 256,
               label=_DECAY.en["max_distance"], continuous=True),
    ),
    caption=_DECAY.en["caption"],
    labels=_DECAY,
    replaces="fig-ch06-decay",
)

INTERACTIVE = (ROTATING_PAIR, DECAY_BOUND)
