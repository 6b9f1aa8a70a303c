"""Figures of chapter 5: relative position, from the shift identity to ALiBi.

Every function computes through :mod:`posenc_core`, takes keyword
parameters, draws into a figure of fixed size and returns it. Heatmaps of
several heads are tiled into one image (a "mosaic", heads separated by a
blank row or column) so that a redraw stays fast; :func:`mosaic_blocks`
cuts such an image back into the per-head matrices.
"""

import functools
import itertools

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots._live import set_image, sync_texts
from posenc_plots.i18n import Labels

__all__ = [
    "shift_matrix",
    "live_shift_matrix",
    "dot_vs_distance",
    "live_dot_vs_distance",
    "projected_scores",
    "live_projected_scores",
    "shaw_index",
    "live_shaw_index",
    "memory_cost",
    "live_memory_cost",
    "heatmaps",
    "t5_buckets",
    "live_t5_buckets",
    "alibi_slopes",
    "scalar_biases",
    "alibi_biases",
    "live_alibi_biases",
    "alibi_attention",
    "live_alibi_attention",
    "mosaic_blocks",
    "SHIFT_MATRIX",
    "DOT_VS_DISTANCE",
    "PROJECTED_SCORES",
    "SHAW_INDEX",
    "MEMORY",
    "T5_BUCKETS",
    "ALIBI_BIASES",
    "ALIBI_ATTENTION",
    "INTERACTIVE",
]

_COLS = 8  # heads per row in a mosaic

_SHIFT = Labels("ch05_relative:ch05_shift_matrix", {
    "xlabel": "input dimension",
    "ylabel": "output dimension",
    "title": "shift matrix for $\\Delta$ = {k:g}, d_model = {d_model}",
    "k": "shift Δ",
    "d_model": "model width d_model",
    "base": "base b",
    "caption": ("The shift matrix is block-diagonal: one 2x2 rotation by "
                "Delta times omega_i per sin/cos pair."),
})
_DOT = Labels("ch05_relative:ch05_dot_vs_distance", {
    "closed": r"$\sum_i \cos(r\,\omega_i)$",
    "anchor": "m = {m}",
    "xlabel": "relative position r = ℓ − m (key − query)",
    "ylabel": "PE(m) · PE(ℓ)",
    "title": "d_model = {d_model}, base = {base:g}",
    "d_model": "model width d_model",
    "base": "base b",
    "caption": "PE(m)·PE(ℓ) depends on r = ℓ − m only and is symmetric.",
})
_PROJECTED = Labels("ch05_relative:ch05_projected_scores", {
    "xlabel": "key position ℓ",
    "ylabel": "query position m",
    "plain": "no projection",
    "random": "random $W_Q, W_K$ (seed {seed})",
    "shift": "$W_Q = I$, $W_K = M_{{{k}}}^T$",
    "d_model": "model width d_model",
    "k": "shift Δ",
    "seed": "random seed",
    "caption": ("Position-only scores: raw, with random projections, and "
                "with a shift head."),
})
_SHAW = Labels("ch05_relative:ch05_shaw_index", {
    "xlabel": "key position ℓ",
    "ylabel": "query position m",
    "title": ("clip(ℓ − m, ±r_max), r_max = {max_distance}: {rows} table "
              "rows"),
    "n": "sequence length n",
    "max_distance": "clipping distance r_max",
    "caption": ("Which row of the (2 r_max + 1)-row table each query-key "
                "pair uses."),
})
_MEMORY = Labels("ch05_relative:ch05_memory", {
    "full": "max_len × max_len × d (the blog's table)",
    "relative": "(2 max_len − 1) × d",
    "clipped": "(2 r_max + 1) × d, r_max = {max_distance}",
    "xlabel": "max_len",
    "ylabel": "bytes in float32",
    "title": "d = {d_model}",
    "d_model": "model width d",
    "max_distance": "clipping distance r_max",
    "caption": ("Memory of a full max_len x max_len x d table against the "
                "(2 max_len - 1) x d and (2 r_max + 1) x d tables."),
})
_HEATMAPS = Labels("ch05_relative:heatmaps", {
    "xlabel": "key position ℓ",
    "ylabel": "query position m",
})
_T5 = Labels("ch05_relative:ch05_t5_buckets", {
    "xlabel": "relative position r = ℓ − m (key − query)",
    "ylabel": "bucket",
    "bidirectional": "bidirectional (encoder)",
    "causal": "causal (decoder)",
    "title": "{kind}: {num_buckets} buckets, max_distance = {max_distance}",
    "num_buckets": "number of buckets",
    "max_distance": "max distance",
    "caption": "T5 buckets: exact near the query, logarithmic far away.",
})
_SCALAR = Labels("ch05_relative:scalar_biases", {
    "xlabel": "relative position $r = \\ell - m$",
    "ylabel_t5": "bucket of $r$",
    "ylabel_alibi": "bias $g_h(r)$",
    "t5": "T5: a learned $g_h$ per bucket",
    "alibi": "ALiBi: fixed $g_h(r) = a_h\\,r$",
    "slope": "$a_{{{h}}} = 2^{{{exponent:g}}}$",
})
_SLOPES = Labels("ch05_relative:alibi_slopes", {
    "line": "{n_heads} heads",
    "xlabel": "head h",
    "ylabel": r"$-\log_2 a_h$",
    "title": "slope $a_h = 2^{-y}$ of each head",
})
_ALIBI_BIAS = Labels("ch05_relative:ch05_alibi_bias", {
    "colorbar": "bias",
    "xlabel": "key position ℓ (columns of each tile)",
    "ylabel": "query position m",
    "tile": "$a = 2^{{{exponent:g}}}$",
    "title": "ALiBi bias, n = {n}: one tile per head",
    "n_heads": "number of heads",
    "n": "sequence length n",
    "caption": ("ALiBi's bias per head: steep slopes look close, gentle "
                "slopes look far."),
})
_ALIBI_ATTENTION = Labels("ch05_relative:ch05_alibi_attention", {
    "colorbar": "attention weight",
    "xlabel": "key position ℓ (columns of each tile)",
    "ylabel": "query position m",
    "tile": "head {head}",
    "title": "causal attention with ALiBi, content = {content:g}",
    "n_heads": "number of heads",
    "n": "sequence length n",
    "content": "content weight",
    "caption": ("Causal attention weights with ALiBi; content scales the "
                "query projection."),
})


def _new_axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    return ax.figure, ax


def _mosaic(stack, cols=_COLS):
    """Tile matrices (h, n, n) into one image, NaN between the tiles."""
    h, n, _ = stack.shape
    cols = min(cols, h)
    rows = -(-h // cols)
    image = np.full((rows * (n + 1) - 1, cols * (n + 1) - 1), np.nan)
    for head in range(h):
        r, c = divmod(head, cols)
        image[r * (n + 1): r * (n + 1) + n, c * (n + 1): c * (n + 1) + n] = (
            stack[head])
    return image


def mosaic_blocks(image, n, h, cols=_COLS):
    """Cut a mosaic image back into the (h, n, n) matrices it shows."""
    cols = min(cols, h)
    out = np.empty((h, n, n))
    for head in range(h):
        r, c = divmod(head, cols)
        out[head] = image[r * (n + 1): r * (n + 1) + n,
                          c * (n + 1): c * (n + 1) + n]
    return out


def _label_tiles(ax, n, h, texts, cols=_COLS, pool=None):
    """Label each tile of a mosaic above it (reusing ``pool``'s texts)."""
    cols = min(cols, h)
    items = []
    for head, text in enumerate(texts):
        r, c = divmod(head, cols)
        items.append((c * (n + 1) + (n - 1) / 2, r * (n + 1) - 0.7, text,
                      None))
    sync_texts(ax, [] if pool is None else pool, items, ha="center",
               va="bottom", fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


# ------------------------------------------------------- shift identity


def shift_matrix(k=3.0, d_model=16, base=10000.0, ax=None):
    r"""Heatmap of the shift matrix :math:`M_\Delta`, with
    :math:`PE(\mathrm{pos}+\Delta) = M_\Delta\,PE(\mathrm{pos})`; ``k`` is
    the shift :math:`\Delta`."""
    return live_shift_matrix(ax).update(k=k, d_model=d_model, base=base)


def live_shift_matrix(ax=None):
    """:func:`shift_matrix`, built once: a :class:`posenc_plots.Live`."""
    text = _SHIFT.get()
    fig, ax = _new_axes(ax, (5.2, 4.4))
    im = ax.imshow(np.zeros((2, 2)), cmap="RdBu_r", vmin=-1, vmax=1)
    fig.colorbar(im, ax=ax, shrink=0.85)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])

    def update(k=3.0, d_model=16, base=10000.0):
        set_image(im, pc.relative_shift_matrix(k, d_model, base=base))
        ax.set_title(text["title"].format(k=k, d_model=d_model))

    return Live(fig, update)


def dot_vs_distance(d_model=64, base=10000.0, max_distance=60,
                    anchors=(60, 500, 3000), ax=None):
    """PE(pos)·PE(pos+delta) against delta, for several anchor positions pos.

    The line is the closed form sum_i cos(delta * omega_i); the markers are
    dot products of encodings from :func:`posenc_core.sinusoidal_encoding`
    at each anchor. They coincide: the product depends on delta only.
    """
    return live_dot_vs_distance(ax, max_distance=max_distance,
                                anchors=anchors).update(d_model=d_model,
                                                        base=base)


def live_dot_vs_distance(ax=None, *, max_distance=60,
                         anchors=(60, 500, 3000)):
    """:func:`dot_vs_distance`, built once: a :class:`posenc_plots.Live`."""
    text = _DOT.get()
    delta = np.arange(-max_distance, max_distance + 1)
    fig, ax = _new_axes(ax, (7.0, 3.8))
    (closed,) = ax.plot([], [], color="0.3", lw=1.2, label=text["closed"])
    marks = [ax.plot([], [], marker, ms=3.5, mfc="none", ls="none",
                     label=text["anchor"].format(m=p))[0]
             for p, marker in zip(anchors, itertools.cycle("os^Dv"))]
    ax.axhline(0, color="0.8", lw=0.8, zorder=0)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.legend(fontsize=8, loc="upper right")

    def update(d_model=64, base=10000.0):
        omega = pc.frequencies(d_model, base=base)
        closed.set_data(delta, np.cos(np.outer(delta, omega)).sum(axis=1))
        for p, line in zip(anchors, marks, strict=True):
            P = pc.sinusoidal_encoding(p + delta, d_model, base=base)
            ref = pc.sinusoidal_encoding([p], d_model, base=base)[0]
            line.set_data(delta, P @ ref)
        ax.set_title(text["title"].format(d_model=d_model, base=base))
        ax.relim()
        ax.autoscale_view()

    return Live(fig, update)


def projected_scores(d_model=64, k=5, n=48, seed=0):
    """Position-only attention scores with three choices of W_Q, W_K.

    Panels: no projection (:math:`PP^T`); seeded random projections
    (``rng.normal(size=(d_model, d_model)) / sqrt(d_model)`` for W_Q, then
    W_K); and the "shift head" W_Q = I, W_K = M_k^T. Scores are divided by
    sqrt(d_model) as in attention.
    """
    return live_projected_scores(n=n).update(d_model=d_model, k=k, seed=seed)


def live_projected_scores(*, n=48):
    """:func:`projected_scores`, built once: a :class:`posenc_plots.Live`."""
    text = _PROJECTED.get()
    fig, axes = plt.subplots(1, 3, figsize=(11.5, 3.9), layout="constrained")
    images = []
    for ax in axes:
        im = ax.imshow(np.zeros((n, n)), cmap="viridis")
        images.append(im)
        fig.colorbar(im, ax=ax, shrink=0.8)
        ax.set_xlabel(text["xlabel"])
    axes[0].set_ylabel(text["ylabel"])

    def update(d_model=64, k=5, seed=0):
        P = pc.sinusoidal_encoding(n, d_model)
        rng = np.random.default_rng(seed)
        w_q = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
        w_k = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
        M = pc.relative_shift_matrix(k, d_model)
        scale = np.sqrt(d_model)
        # Products of at most 48 x 128 by 128 x 128: numpy's own loops
        # (einsum) take well under a millisecond, where a multithreaded
        # BLAS can take 100 ms on a busy machine (threads waking up).
        mm = functools.partial(np.einsum, "ij,jk->ik")
        panels = (
            (mm(P, P.T) / scale, text["plain"]),
            (mm(mm(P, w_q), mm(P, w_k).T) / scale,
             text["random"].format(seed=seed)),
            (mm(P, mm(P, M.T).T) / scale, text["shift"].format(k=k)),
        )
        for ax, im, (S, title) in zip(axes, images, panels, strict=True):
            im.set_data(S)
            im.norm.autoscale(im.get_array())  # as imshow does for new data
            ax.set_title(title, fontsize=10)

    return Live(fig, update)


# ----------------------------------------------------------------- Shaw


def shaw_index(n=9, max_distance=3, ax=None):
    """The clipped relative positions clip(l - m, -r_max, r_max), annotated
    (query m in rows, key l in columns; ``max_distance`` is r_max)."""
    return live_shaw_index(ax).update(n=n, max_distance=max_distance)


def live_shaw_index(ax=None):
    """:func:`shaw_index`, built once: a :class:`posenc_plots.Live`."""
    text = _SHAW.get()
    fig, ax = _new_axes(ax, (4.8, 4.2))
    im = ax.imshow(np.zeros((2, 2), dtype=np.int64), cmap="RdBu_r")
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    texts = []

    def update(n=9, max_distance=3):
        R = pc.relative_positions(n, max_distance=max_distance)
        lim = max(max_distance, 1)
        set_image(im, R)
        im.set_clim(-lim, lim)
        items = []
        if n <= 16:
            for i in range(n):
                for j in range(n):
                    dark = abs(R[i, j]) > 0.6 * lim
                    items.append((j, i, str(R[i, j]),
                                  "white" if dark else "black"))
        sync_texts(ax, texts, items, ha="center", va="center", fontsize=8)
        ax.set_title(text["title"].format(max_distance=max_distance,
                                          rows=2 * max_distance + 1))

    return Live(fig, update)


def memory_cost(d_model=512, max_distance=16, ax=None):
    """Bytes (float32) of three relative-position tables against max_len."""
    return live_memory_cost(ax).update(d_model=d_model,
                                       max_distance=max_distance)


def live_memory_cost(ax=None):
    """:func:`memory_cost`, built once: a :class:`posenc_plots.Live`."""
    max_len = np.unique(np.geomspace(16, 100_000, 60).astype(np.int64))
    text = _MEMORY.get()
    fig, ax = _new_axes(ax, (6.4, 4.0))
    labels = [text["full"], text["relative"], " "]
    lines = [ax.loglog([], [], label=label)[0] for label in labels]
    for size, name in ((2.0**30, "1 GiB"), (2.0**40, "1 TiB")):
        ax.axhline(size, color="0.75", lw=0.8, ls="--")
        ax.text(max_len[-1], size * 1.3, name, fontsize=8, color="0.4",
                ha="right")
    ax.axvline(5000, color="0.75", lw=0.8, ls=":")
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    legend = ax.legend(fontsize=8, loc="upper left")

    def update(d_model=512, max_distance=16):
        counts = (max_len**2 * d_model, (2 * max_len - 1) * d_model,
                  np.full(max_len.shape, (2 * max_distance + 1) * d_model))
        for line, count in zip(lines, counts, strict=True):
            line.set_data(max_len, 4.0 * count)
        label = text["clipped"].format(max_distance=max_distance)
        lines[2].set_label(label)
        legend.get_texts()[2].set_text(label)
        ax.set_title(text["title"].format(d_model=d_model))
        ax.relim()
        ax.autoscale_view()

    return Live(fig, update)


def heatmaps(maps, titles, *, labels=None, vmin=None, vmax=None,
             cmap="viridis", xlabel=None, ylabel=None):
    """A row of heatmaps (attention weights, biases) with shared styling.

    ``xlabel``, ``ylabel``: default, key and query position.
    """
    xlabel = _HEATMAPS["xlabel"] if xlabel is None else xlabel
    ylabel = _HEATMAPS["ylabel"] if ylabel is None else ylabel
    count = len(maps)
    # at most 8 inches wide: the book's column shows it at >= 80 pixels
    # per inch (issue 23)
    width = min(3.9 * count, 8.0)
    height = min(3.9, width / count + 0.1)
    fig, axes = plt.subplots(1, count, figsize=(width, height),
                             layout="constrained", squeeze=False)
    for ax, A, title in zip(axes[0], maps, titles, strict=True):
        im = ax.imshow(np.asarray(A), cmap=cmap, vmin=vmin, vmax=vmax)
        fig.colorbar(im, ax=ax, shrink=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        if labels is not None:
            ticks = np.arange(len(labels))
            ax.set_xticks(ticks, labels, fontsize=8)
            ax.set_yticks(ticks, labels, fontsize=8)
    axes[0][0].set_ylabel(ylabel)
    return fig


# ------------------------------------------------------------------- T5


def t5_buckets(num_buckets=32, max_distance=128):
    """T5 bucket against relative position, bidirectional and causal."""
    return live_t5_buckets().update(num_buckets=num_buckets,
                                    max_distance=max_distance)


def live_t5_buckets():
    """:func:`t5_buckets`, built once: a :class:`posenc_plots.Live`."""
    text = _T5.get()
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 3.8), sharey=True,
                             layout="constrained")
    steps, marks = [], []
    for ax, bidirectional in zip(axes, (True, False), strict=True):
        steps.append(ax.step([], [], where="mid", lw=1.2)[0])
        marks.append([ax.axvline(0, color="0.75", lw=0.8, ls="--")
                      for _ in range(4 if bidirectional else 2)])
        ax.set_xlabel(text["xlabel"])
    axes[0].set_ylabel(text["ylabel"])

    def update(num_buckets=32, max_distance=128):
        span = int(1.5 * max_distance)
        r = np.arange(-span, span + 1)
        for ax, bidirectional, step, lines in zip(
                axes, (True, False), steps, marks, strict=True):
            b = pc.t5_relative_position_bucket(
                r, bidirectional=bidirectional, num_buckets=num_buckets,
                max_distance=max_distance)
            step.set_data(r, b)
            exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
            xs = [x for x in (-max_distance, -exact, exact, max_distance)
                  if bidirectional or x < 0]
            for line, x in zip(lines, xs, strict=True):
                line.set_xdata([x, x])
            kind = text["bidirectional" if bidirectional else "causal"]
            ax.set_title(text["title"].format(kind=kind,
                                              num_buckets=num_buckets,
                                              max_distance=max_distance),
                         fontsize=10)
            ax.relim()
        for ax in axes:
            ax.autoscale_view()

    return Live(fig, update)


# ---------------------------------------------------------------- ALiBi


def alibi_slopes(head_counts=(8, 6, 12), ax=None):
    """ALiBi slope exponents -log2(a_h) against head, for several counts."""
    text = _SLOPES.get()
    fig, ax = _new_axes(ax, (6.4, 3.8))
    for n_heads, marker in zip(head_counts, itertools.cycle("os^Dv")):
        m = pc.alibi_slopes(n_heads)
        ax.plot(np.arange(1, n_heads + 1), -np.log2(m), marker=marker,
                ls=":", lw=0.8, label=text["line"].format(n_heads=n_heads))
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_title(text["title"])
    ax.legend(fontsize=8)
    return fig


def scalar_biases(n_heads=8, span=160):
    """The idea of the chapter: one number per head and relative position.

    Left: T5's causal bucket of each relative position ``r = -span, ...,
    0`` (32 buckets, ``max_distance`` 128; line gid ``"t5"``); each bucket
    holds one learned scalar per head, so ``g_h`` is constant on each step.
    Right: ALiBi's fixed ``g_h(r) = a_h r`` for each of ``n_heads`` heads
    (gid ``"alibi-<h>"``, h from 1).
    """
    for name, value in (("n_heads", n_heads), ("span", span)):
        if isinstance(value, bool) or not isinstance(
                value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, "
                             f"got {value!r}")
    text = _SCALAR.get()
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.3),
                                      layout="constrained")
    r = np.arange(-span, 1)
    left.step(r, pc.t5_relative_position_bucket(r, bidirectional=False),
              where="mid", lw=1.4, gid="t5")
    slopes = pc.alibi_slopes(n_heads)
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.85, n_heads))
    for h, (a, color) in enumerate(zip(slopes, colors, strict=True)):
        label = (text["slope"].format(h=h + 1, exponent=np.log2(a))
                 if h in (0, n_heads - 1) else "_nolegend_")
        right.plot(r, a * r, color=color, lw=1.4, gid=f"alibi-{h + 1}",
                   label=label)
    right.legend(fontsize="small", loc="lower right")
    for ax, key in ((left, "t5"), (right, "alibi")):
        ax.set_title(text[key], fontsize=10)
        ax.set_xlabel(text["xlabel"])
        ax.set_ylabel(text[f"ylabel_{key}"])
        ax.set_xlim(-span, 0)
        ax.xaxis.set_major_locator(plt.MaxNLocator(5))
        ax.grid(alpha=0.3)
    return fig

def alibi_biases(n_heads=8, n=12, ax=None):
    """The ALiBi bias -a_h |l - m| of every head, one tile per head."""
    return live_alibi_biases(ax).update(n_heads=n_heads, n=n)


def live_alibi_biases(ax=None):
    """:func:`alibi_biases`, built once: a :class:`posenc_plots.Live`."""
    text = _ALIBI_BIAS.get()
    fig, ax = _new_axes(ax, (12.0, 3.2))
    im = ax.imshow(np.zeros((2, 2)), cmap="magma")
    fig.colorbar(im, ax=ax, shrink=0.8, label=text["colorbar"])
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    texts = []

    def update(n_heads=8, n=12):
        B = pc.alibi_bias(n, n_heads)
        slopes = pc.alibi_slopes(n_heads)
        set_image(im, _mosaic(B))
        im.norm.autoscale(im.get_array())  # as imshow does for new data
        _label_tiles(ax, n, n_heads,
                     [text["tile"].format(exponent=np.log2(m))
                      for m in slopes], pool=texts)
        ax.set_title(text["title"].format(n=n), fontsize=10, pad=14)

    return Live(fig, update)


def alibi_attention(n_heads=8, n=16, content=0.0, seed=0, ax=None):
    """Causal attention weights of each head with the ALiBi bias.

    Token vectors and projections are seeded standard normals; ``content``
    scales W_Q, so 0 leaves only the bias.
    """
    return live_alibi_attention(ax, seed=seed).update(
        n_heads=n_heads, n=n, content=content)


def live_alibi_attention(ax=None, *, seed=0):
    """:func:`alibi_attention`, built once: a :class:`posenc_plots.Live`."""
    text = _ALIBI_ATTENTION.get()
    fig, ax = _new_axes(ax, (12.0, 3.2))
    im = ax.imshow(np.zeros((2, 2)), cmap="viridis", vmin=0, vmax=1)
    fig.colorbar(im, ax=ax, shrink=0.8, label=text["colorbar"])
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    texts = []

    def update(n_heads=8, n=16, content=0.0):
        rng = np.random.default_rng(seed)
        d = 8
        x = rng.normal(size=(n, d))
        w_q = content * rng.normal(size=(d, d)) / np.sqrt(d)
        w_k = rng.normal(size=(d, d)) / np.sqrt(d)
        B = pc.alibi_bias(n, n_heads)
        A = np.stack([pc.self_attention(x, w_q, w_k, np.eye(d), bias=B[h],
                                        causal=True)[1]
                      for h in range(n_heads)])
        set_image(im, _mosaic(A))
        _label_tiles(ax, n, n_heads,
                     [text["tile"].format(head=h + 1) for h in range(n_heads)],
                     pool=texts)
        ax.set_title(text["title"].format(content=content), fontsize=10,
                     pad=14)

    return Live(fig, update)


def _slider(table, name, *args, **kwargs):
    """A Slider labelled from the figure's table (key: the slider's name)."""
    return Slider(name, *args, label=table.en[name], **kwargs)


def _interactive(name, plot, live, table, sliders, replaces=""):
    return Interactive(name=name, plot=plot, live=live, sliders=sliders,
                       caption=table.en["caption"], labels=table,
                       replaces=replaces)


SHIFT_MATRIX = _interactive(
    "ch05_shift_matrix", shift_matrix, live_shift_matrix, _SHIFT,
    (_slider(_SHIFT, "k", -8, 8, 0.25, 3.0, continuous=True),
     _slider(_SHIFT, "d_model", 2, 64, 2, 16, continuous=True),
     _slider(_SHIFT, "base", 1, 5, 0.5, 4, log=True, continuous=True)),
    replaces="fig-ch05-shift-matrix")

DOT_VS_DISTANCE = _interactive(
    "ch05_dot_vs_distance", dot_vs_distance, live_dot_vs_distance, _DOT,
    (_slider(_DOT, "d_model", 2, 256, 2, 64, continuous=True),
     _slider(_DOT, "base", 1, 5, 0.5, 4, log=True, continuous=True)),
    replaces="fig-ch05-dot-vs-distance")

PROJECTED_SCORES = _interactive(
    "ch05_projected_scores", projected_scores, live_projected_scores,
    _PROJECTED,
    (_slider(_PROJECTED, "d_model", 2, 128, 2, 64, continuous=True),
     _slider(_PROJECTED, "k", 0, 16, 1, 5, continuous=True),
     _slider(_PROJECTED, "seed", 0, 9, 1, 0, continuous=True)),
    replaces="fig-ch05-projected-scores")

SHAW_INDEX = _interactive(
    "ch05_shaw_index", shaw_index, live_shaw_index, _SHAW,
    (_slider(_SHAW, "n", 2, 16, 1, 9),
     _slider(_SHAW, "max_distance", 0, 15, 1, 3, continuous=True)),
    replaces="fig-ch05-shaw-index")

MEMORY = _interactive(
    "ch05_memory", memory_cost, live_memory_cost, _MEMORY,
    (_slider(_MEMORY, "d_model", 64, 4096, 64, 512, continuous=True),
     _slider(_MEMORY, "max_distance", 1, 256, 1, 16, continuous=True)),
    replaces="fig-ch05-memory")

T5_BUCKETS = _interactive(
    "ch05_t5_buckets", t5_buckets, live_t5_buckets, _T5,
    (_slider(_T5, "num_buckets", 4, 64, 2, 32, continuous=True),
     _slider(_T5, "max_distance", 40, 512, 8, 128, continuous=True)),
    replaces="fig-ch05b-t5-buckets")

ALIBI_BIASES = _interactive(
    "ch05_alibi_bias", alibi_biases, live_alibi_biases, _ALIBI_BIAS,
    (_slider(_ALIBI_BIAS, "n_heads", 1, 16, 1, 8, continuous=True),
     _slider(_ALIBI_BIAS, "n", 2, 32, 1, 12, continuous=True)),
    replaces="fig-ch05b-alibi-bias")

ALIBI_ATTENTION = _interactive(
    "ch05_alibi_attention", alibi_attention, live_alibi_attention,
    _ALIBI_ATTENTION,
    (_slider(_ALIBI_ATTENTION, "n_heads", 1, 16, 1, 8, continuous=True),
     _slider(_ALIBI_ATTENTION, "n", 2, 32, 1, 16, continuous=True),
     _slider(_ALIBI_ATTENTION, "content", 0.0, 4.0, 0.5, 0.0,
             continuous=True)),
    replaces="fig-ch05b-alibi-attention")

INTERACTIVE = (
    SHIFT_MATRIX,
    DOT_VS_DISTANCE,
    PROJECTED_SCORES,
    SHAW_INDEX,
    MEMORY,
    T5_BUCKETS,
    ALIBI_BIASES,
    ALIBI_ATTENTION,
)
