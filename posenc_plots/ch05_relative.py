"""Figures of chapter 5: relative position, from the shift identity to ALiBi.

Every function computes through :mod:`posenc_core`, takes keyword
parameters, draws into a figure of fixed size and returns it. Heatmaps of
several heads are tiled into one image (a "mosaic", heads separated by a
blank row or column) so that a redraw stays fast; :func:`mosaic_blocks`
cuts such an image back into the per-head matrices.
"""

import itertools

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Slider

__all__ = [
    "shift_matrix",
    "dot_vs_distance",
    "projected_scores",
    "shaw_index",
    "memory_cost",
    "heatmaps",
    "t5_buckets",
    "alibi_slopes",
    "alibi_biases",
    "alibi_attention",
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


def _label_tiles(ax, n, h, texts, cols=_COLS):
    cols = min(cols, h)
    for head, text in enumerate(texts):
        r, c = divmod(head, cols)
        ax.text(c * (n + 1) + (n - 1) / 2, r * (n + 1) - 0.7, text,
                ha="center", va="bottom", fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


# ------------------------------------------------------- shift identity


def shift_matrix(k=3.0, d_model=16, base=10000.0, ax=None):
    """Heatmap of the shift matrix :math:`M_k` with PE(p+k) = M_k PE(p)."""
    M = pc.relative_shift_matrix(k, d_model, base=base)
    fig, ax = _new_axes(ax, (5.2, 4.4))
    im = ax.imshow(M, cmap="RdBu_r", vmin=-1, vmax=1)
    fig.colorbar(im, ax=ax, shrink=0.85)
    ax.set_title(f"shift matrix for $\\Delta$ = {k:g}, d_model = {d_model}")
    ax.set_xlabel("input dimension")
    ax.set_ylabel("output dimension")
    return fig


def dot_vs_distance(d_model=64, base=10000.0, max_distance=60,
                    anchors=(60, 500, 3000), ax=None):
    """PE(p)·PE(p+delta) against delta, for several anchor positions p.

    The line is the closed form sum_i cos(delta * omega_i); the markers are
    dot products of encodings from :func:`posenc_core.sinusoidal_encoding`
    at each anchor. They coincide: the product depends on delta only.
    """
    delta = np.arange(-max_distance, max_distance + 1)
    omega = pc.frequencies(d_model, base=base)
    fig, ax = _new_axes(ax, (7.0, 3.8))
    ax.plot(delta, np.cos(np.outer(delta, omega)).sum(axis=1), color="0.3",
            lw=1.2, label=r"$\sum_i \cos(r\,\omega_i)$")
    for p, marker in zip(anchors, itertools.cycle("os^Dv")):
        P = pc.sinusoidal_encoding(p + delta, d_model, base=base)
        ref = pc.sinusoidal_encoding([p], d_model, base=base)[0]
        ax.plot(delta, P @ ref, marker, ms=3.5, mfc="none", ls="none",
                label=f"m = {p}")
    ax.axhline(0, color="0.8", lw=0.8, zorder=0)
    ax.set_xlabel("relative position r = ℓ − m (key − query)")
    ax.set_ylabel("PE(m) · PE(ℓ)")
    ax.set_title(f"d_model = {d_model}, base = {base:g}")
    ax.legend(fontsize=8, loc="upper right")
    return fig


def projected_scores(d_model=64, k=5, n=48, seed=0):
    """Position-only attention scores with three choices of W_Q, W_K.

    Panels: no projection (:math:`PP^T`); seeded random projections
    (``rng.normal(size=(d_model, d_model)) / sqrt(d_model)`` for W_Q, then
    W_K); and the "shift head" W_Q = I, W_K = M_k^T. Scores are divided by
    sqrt(d_model) as in attention.
    """
    P = pc.sinusoidal_encoding(n, d_model)
    rng = np.random.default_rng(seed)
    w_q = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
    w_k = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
    M = pc.relative_shift_matrix(k, d_model)
    scale = np.sqrt(d_model)
    panels = (
        (P @ P.T / scale, "no projection"),
        ((P @ w_q) @ (P @ w_k).T / scale, f"random $W_Q, W_K$ (seed {seed})"),
        (P @ (P @ M.T).T / scale, f"$W_Q = I$, $W_K = M_{{{k}}}^T$"),
    )
    fig, axes = plt.subplots(1, 3, figsize=(11.5, 3.9), layout="constrained")
    for ax, (S, title) in zip(axes, panels, strict=True):
        im = ax.imshow(S, cmap="viridis")
        fig.colorbar(im, ax=ax, shrink=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("key position ℓ")
    axes[0].set_ylabel("query position m")
    return fig


# ----------------------------------------------------------------- Shaw


def shaw_index(n=9, max_distance=3, ax=None):
    """The clipped relative positions clip(j - i, -k, k), annotated."""
    R = pc.relative_positions(n, max_distance=max_distance)
    fig, ax = _new_axes(ax, (4.8, 4.2))
    lim = max(max_distance, 1)
    ax.imshow(R, cmap="RdBu_r", vmin=-lim, vmax=lim)
    if n <= 16:
        for i in range(n):
            for j in range(n):
                dark = abs(R[i, j]) > 0.6 * lim
                ax.text(j, i, str(R[i, j]), ha="center", va="center",
                        fontsize=8, color="white" if dark else "black")
    ax.set_title(f"clip(ℓ − m, ±r_max), r_max = {max_distance}: "
                 f"{2 * max_distance + 1} table rows")
    ax.set_xlabel("key position ℓ")
    ax.set_ylabel("query position m")
    return fig


def memory_cost(d_model=512, max_distance=16, ax=None):
    """Bytes (float32) of three relative-position tables against max_len."""
    max_len = np.unique(np.geomspace(16, 100_000, 60).astype(np.int64))
    fig, ax = _new_axes(ax, (6.4, 4.0))
    rows = (
        (max_len**2 * d_model, "max_len × max_len × d (the blog's table)"),
        ((2 * max_len - 1) * d_model, "(2 max_len − 1) × d"),
        (np.full(max_len.shape, (2 * max_distance + 1) * d_model),
         f"(2 r_max + 1) × d, r_max = {max_distance}"),
    )
    for count, label in rows:
        ax.loglog(max_len, 4.0 * count, label=label)
    for size, name in ((2.0**30, "1 GiB"), (2.0**40, "1 TiB")):
        ax.axhline(size, color="0.75", lw=0.8, ls="--")
        ax.text(max_len[-1], size * 1.3, name, fontsize=8, color="0.4",
                ha="right")
    ax.axvline(5000, color="0.75", lw=0.8, ls=":")
    ax.set_xlabel("max_len")
    ax.set_ylabel("bytes in float32")
    ax.set_title(f"d = {d_model}")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def heatmaps(maps, titles, *, labels=None, vmin=None, vmax=None,
             cmap="viridis", xlabel="key position ℓ",
             ylabel="query position m"):
    """A row of heatmaps (attention weights, biases) with shared styling."""
    count = len(maps)
    fig, axes = plt.subplots(1, count, figsize=(3.9 * count, 3.9),
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
    span = int(1.5 * max_distance)
    r = np.arange(-span, span + 1)
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 3.8), sharey=True,
                             layout="constrained")
    for ax, bidirectional in zip(axes, (True, False), strict=True):
        b = pc.t5_relative_position_bucket(
            r, bidirectional=bidirectional, num_buckets=num_buckets,
            max_distance=max_distance)
        ax.step(r, b, where="mid", lw=1.2)
        exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
        for x in (-max_distance, -exact, exact, max_distance):
            if bidirectional or x < 0:
                ax.axvline(x, color="0.75", lw=0.8, ls="--")
        kind = "bidirectional (encoder)" if bidirectional else "causal (decoder)"
        ax.set_title(f"{kind}: {num_buckets} buckets, "
                     f"max_distance = {max_distance}", fontsize=10)
        ax.set_xlabel("relative position r = ℓ − m (key − query)")
    axes[0].set_ylabel("bucket")
    return fig


# ---------------------------------------------------------------- ALiBi


def alibi_slopes(head_counts=(8, 6, 12), ax=None):
    """ALiBi slope exponents -log2(m_h) against head, for several counts."""
    fig, ax = _new_axes(ax, (6.4, 3.8))
    for n_heads, marker in zip(head_counts, itertools.cycle("os^Dv")):
        m = pc.alibi_slopes(n_heads)
        ax.plot(np.arange(1, n_heads + 1), -np.log2(m), marker=marker,
                ls=":", lw=0.8, label=f"{n_heads} heads")
    ax.set_xlabel("head h")
    ax.set_ylabel(r"$-\log_2 a_h$")
    ax.set_title("slope $a_h = 2^{-y}$ of each head")
    ax.legend(fontsize=8)
    return fig


def alibi_biases(n_heads=8, n=12, ax=None):
    """The ALiBi bias -m_h |i - j| of every head, one tile per head."""
    B = pc.alibi_bias(n, n_heads)
    slopes = pc.alibi_slopes(n_heads)
    fig, ax = _new_axes(ax, (12.0, 3.2))
    im = ax.imshow(_mosaic(B), cmap="magma")
    fig.colorbar(im, ax=ax, shrink=0.8, label="bias")
    _label_tiles(ax, n, n_heads,
                 [f"$a = 2^{{{np.log2(m):g}}}$" for m in slopes])
    ax.set_title(f"ALiBi bias, n = {n}: one tile per head",
                 fontsize=10, pad=14)
    ax.set_xlabel("key position ℓ (columns of each tile)")
    ax.set_ylabel("query position m")
    return fig


def alibi_attention(n_heads=8, n=16, content=0.0, seed=0, ax=None):
    """Causal attention weights of each head with the ALiBi bias.

    Token vectors and projections are seeded standard normals; ``content``
    scales W_Q, so 0 leaves only the bias.
    """
    rng = np.random.default_rng(seed)
    d = 8
    x = rng.normal(size=(n, d))
    w_q = content * rng.normal(size=(d, d)) / np.sqrt(d)
    w_k = rng.normal(size=(d, d)) / np.sqrt(d)
    B = pc.alibi_bias(n, n_heads)
    A = np.stack([pc.self_attention(x, w_q, w_k, np.eye(d), bias=B[h],
                                    causal=True)[1]
                  for h in range(n_heads)])
    fig, ax = _new_axes(ax, (12.0, 3.2))
    im = ax.imshow(_mosaic(A), cmap="viridis", vmin=0, vmax=1)
    fig.colorbar(im, ax=ax, shrink=0.8, label="attention weight")
    _label_tiles(ax, n, n_heads, [f"head {h + 1}" for h in range(n_heads)])
    ax.set_title(f"causal attention with ALiBi, content = {content:g}",
                 fontsize=10, pad=14)
    ax.set_xlabel("key position ℓ (columns of each tile)")
    ax.set_ylabel("query position m")
    return fig


SHIFT_MATRIX = Interactive(
    name="ch05_shift_matrix", plot=shift_matrix,
    sliders=(Slider("k", -8, 8, 0.25, 3.0, label="shift Δ"),
             Slider("d_model", 2, 64, 2, 16, label="d_model"),
             Slider("base", 1, 5, 0.5, 4, label="base", log=True)),
    caption="The shift matrix is block-diagonal: one 2x2 rotation by "
            "Delta times omega_i per sin/cos pair.")

DOT_VS_DISTANCE = Interactive(
    name="ch05_dot_vs_distance", plot=dot_vs_distance,
    sliders=(Slider("d_model", 2, 256, 2, 64, label="d_model"),
             Slider("base", 1, 5, 0.5, 4, label="base", log=True)),
    caption="PE(m)·PE(ℓ) depends on r = ℓ − m only and is symmetric.")

PROJECTED_SCORES = Interactive(
    name="ch05_projected_scores", plot=projected_scores,
    sliders=(Slider("d_model", 2, 128, 2, 64, label="d_model"),
             Slider("k", 0, 16, 1, 5, label="shift Δ"),
             Slider("seed", 0, 9, 1, 0, label="seed")),
    caption="Position-only scores: raw, with random projections, and "
            "with a shift head.")

SHAW_INDEX = Interactive(
    name="ch05_shaw_index", plot=shaw_index,
    sliders=(Slider("n", 2, 16, 1, 9, label="length n"),
             Slider("max_distance", 0, 15, 1, 3, label="clip r_max")),
    caption="Which row of the (2 r_max + 1)-row table each query-key pair "
            "uses.")

MEMORY = Interactive(
    name="ch05_memory", plot=memory_cost,
    sliders=(Slider("d_model", 64, 4096, 64, 512, label="d"),
             Slider("max_distance", 1, 256, 1, 16, label="clip r_max")),
    caption="Memory of a full max_len x max_len x d table against the "
            "(2 max_len - 1) x d and (2 r_max + 1) x d tables.")

T5_BUCKETS = Interactive(
    name="ch05_t5_buckets", plot=t5_buckets,
    sliders=(Slider("num_buckets", 4, 64, 2, 32, label="num_buckets"),
             Slider("max_distance", 40, 512, 8, 128,
                    label="max_distance")),
    caption="T5 buckets: exact near the query, logarithmic far away.")

ALIBI_BIASES = Interactive(
    name="ch05_alibi_bias", plot=alibi_biases,
    sliders=(Slider("n_heads", 1, 16, 1, 8, label="heads"),
             Slider("n", 2, 32, 1, 12, label="length n")),
    caption="ALiBi's bias per head: steep slopes look close, gentle "
            "slopes look far.")

ALIBI_ATTENTION = Interactive(
    name="ch05_alibi_attention", plot=alibi_attention,
    sliders=(Slider("n_heads", 1, 16, 1, 8, label="heads"),
             Slider("n", 2, 32, 1, 16, label="length n"),
             Slider("content", 0.0, 4.0, 0.5, 0.0, label="content")),
    caption="Causal attention weights with ALiBi; content scales the "
            "query projection.")

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
