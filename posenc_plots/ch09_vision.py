"""Figures for chapter 9, "Positions in two and three dimensions".

Every function computes through :mod:`posenc_core` (the 2-D tables,
angles and coordinates of its chapter 9 section), takes keyword arguments
(and ``ax=None`` when it draws a single panel), and returns the matplotlib
Figure. Nothing is drawn at import. Lines that tests look up carry a
``gid``.

Patches are counted as ``posenc_core`` counts them: (row, column) from 0 at
the top left, token ``row * width + column``.
"""

import base64
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots._live import set_image
from posenc_plots.i18n import Labels

__all__ = [
    "HEAD_DIM",
    "N_HEADS",
    "MIXED_SEED",
    "SCHEMES",
    "scheme_angles",
    "similarity_map",
    "mixed_frequencies",
    "plot_similarity",
    "live_similarity",
    "score_offsets",
    "plot_diagonal_interaction",
    "MROPE_MODELS",
    "mrope_prompt",
    "plot_mrope_ids",
    "plot_pair_axes",
    "MIXED_DATA_PATH",
    "mixed_data",
    "mixed_data_js",
    "SIMILARITY",
    "MROPE_IDS",
    "PAIR_AXES",
    "INTERACTIVE",
    "EXPERIMENT_METHODS",
    "METHOD_LABELS",
    "CHANCE",
    "experiment_accuracy",
    "accuracy_table",
    "plot_zoom_canvas",
    "format_live_run",
    "train_one",
]

#: Head dimension of every figure of the chapter (ViT-B's: 768 / 12).
HEAD_DIM = 64
#: Heads of RoPE-Mixed, each with its own random direction.
N_HEADS = 8
#: Seed of the random directions of RoPE-Mixed's initialisation.
MIXED_SEED = 0

#: The schemes of :func:`similarity_map`, in the order of the figure's
#: ``scheme`` slider.
SCHEMES = ("raster", "sincos", "axial", "mixed", "dinov3")

_SIMILARITY = Labels("ch09_vision:ch09_similarity", {
    "raster": "1-D RoPE on the raster order",
    "sincos": "2-D sin-cos table (MAE)",
    "axial": "axial 2-D RoPE",
    "mixed": "RoPE-Mixed at initialisation, mean of {n_heads} heads",
    "dinov3": "RoPE on normalised coordinates (DINOv3)",
    "title": "{name}\n{side} x {side} patches, base {base}",
    "xlabel": "column",
    "ylabel": "row",
    "query": "query patch",
    "profile_title": "similarity to the query (row {row}, column {col})",
    "along_row": "along its row",
    "along_col": "along its column",
    "along_diag": "along the diagonal",
    "offset": "offset from the query, in patches",
    "similarity": "similarity",
    "row": "query row",
    "col": "query column",
    "side": "image side, in patches",
    "base": "base b",
    "scheme": "scheme (named in the title)",
    "caption": ("The similarity of one query patch to every patch of the "
                "image, for five ways of encoding a patch's position."),
})
_INTERACTION = Labels("ch09_vision:plot_diagonal_interaction", {
    "axial": "axial 2-D RoPE",
    "mixed": "RoPE-Mixed (one head)",
    "score": "{name}: score",
    "interaction": "{name}: what the two axes do not explain",
    "xlabel": "column offset",
    "ylabel": "row offset",
})


def _axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax


def _fmt_base(base):
    return f"{base:,.0f}" if base >= 10 else f"{base:.3g}"


def mixed_frequencies(base, *, head_dim=HEAD_DIM, n_heads=N_HEADS,
                      seed=MIXED_SEED):
    """RoPE-Mixed's initial frequencies, ``(n_heads, head_dim/2, 2)``:
    ``posenc_core.rope_mixed_frequencies`` with
    ``np.random.default_rng(seed)``."""
    return pc.rope_mixed_frequencies(head_dim, n_heads, base=base,
                                     rng=np.random.default_rng(seed))


def scheme_angles(scheme, side, *, base, head_dim=HEAD_DIM, freqs=None):
    """The rotation angle of every pair of every patch of a ``side`` by
    ``side`` image, ``(n_heads, side * side, head_dim/2)``, for the rotary
    schemes of :data:`SCHEMES`:

    * ``"raster"``: 1-D RoPE on the token index ``row * side + column``
      (``pos * posenc_core.rope_frequencies``);
    * ``"axial"``: ``posenc_core.rope_axial_angles`` of the (row, column)
      coordinates;
    * ``"mixed"``: ``posenc_core.rope_mixed_angles`` with ``freqs``
      (default :func:`mixed_frequencies` of ``base``), one row per head;
    * ``"dinov3"``: ``posenc_core.dinov3_rope_angles`` of
      ``posenc_core.normalized_patch_coordinates``.

    Every scheme but ``"mixed"`` has one head.
    """
    n = side * side
    coords = np.stack(np.divmod(np.arange(n), side), axis=1).astype(float)
    if scheme == "raster":
        omega = pc.rope_frequencies(head_dim, base=base)
        return (np.arange(n)[:, None] * omega)[None]
    if scheme == "axial":
        return pc.rope_axial_angles(coords, head_dim, base=base)[None]
    if scheme == "mixed":
        if freqs is None:
            freqs = mixed_frequencies(base, head_dim=head_dim)
        return pc.rope_mixed_angles(coords, freqs)
    if scheme == "dinov3":
        unit = pc.normalized_patch_coordinates(side, side)
        return pc.dinov3_rope_angles(unit, head_dim, base=base)[None]
    raise ValueError(f"scheme must be one of {SCHEMES[:1] + SCHEMES[2:]}, "
                     f"got {scheme!r}")


def similarity_map(scheme, side, row, col, *, base, head_dim=HEAD_DIM,
                   freqs=None):
    r"""The similarity of the query patch ``(row, col)`` to every patch of a
    ``side`` by ``side`` image, ``(side, side)``, 1 at the query itself.

    For the table ``"sincos"`` it is the dot product of the rows of
    ``posenc_core.sincos_2d_encoding(side, side, head_dim, base=base)``
    divided by ``head_dim / 2``. For the rotary schemes it is the score of a
    query and a key that are both ``(1, 0, 1, 0, ...)`` before rotation,
    rotated by :func:`scheme_angles` with ``posenc_core.apply_rope_angles``,
    divided by ``head_dim / 2`` (and averaged over the heads of
    ``"mixed"``): the mean over the pairs of
    :math:`\cos(\varphi_i(\text{key}) - \varphi_i(\text{query}))`.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    k = row * side + col
    if scheme == "sincos":
        P = pc.sincos_2d_encoding(side, side, head_dim, base=base)
        return (P @ P[k] / (head_dim / 2)).reshape(side, side)
    angles = scheme_angles(scheme, side, base=base, head_dim=head_dim,
                           freqs=freqs)
    unit = np.zeros(head_dim)
    unit[0::2] = 1.0
    x = np.broadcast_to(unit, angles.shape[:-1] + (head_dim,))
    R = pc.apply_rope_angles(x, angles)          # (heads, n, head_dim)
    scores = np.einsum("hnd,hd->hn", R, R[:, k]) / (head_dim / 2)
    return scores.mean(axis=0).reshape(side, side)


def _profiles(S, row, col):
    """(offsets, values) along the query's row, column and diagonal."""
    side = S.shape[0]
    cols = np.arange(side)
    lo, hi = -min(row, col), side - max(row, col)
    t = np.arange(lo, hi)
    return ((cols - col, S[row, :]), (cols - row, S[:, col]),
            (t, S[row + t, col + t]))


def plot_similarity(*, row=5, col=8, side=14, base=100.0, scheme=2):
    """The live similarity figure at one setting of its sliders.

    Left: :func:`similarity_map` of ``SCHEMES[scheme]`` as an image (its
    array is the map), with the query marked (gid ``"query"``). Right: the
    map along the query's row, column and diagonal against the offset from
    the query (gids ``"row"``, ``"col"``, ``"diag"``). A query outside the
    image is moved to its last row or column.
    """
    return live_similarity().update(row=row, col=col, side=side, base=base,
                                    scheme=scheme)


def live_similarity():
    """:func:`plot_similarity`, built once: a :class:`posenc_plots.Live`."""
    text = _SIMILARITY.get()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(8.2, 4.0),
                                 layout="constrained",
                                 width_ratios=(1.0, 1.15))
    image = ax.imshow(np.zeros((1, 1)), cmap="RdBu_r", vmin=-1.0, vmax=1.0)
    fig.colorbar(image, ax=ax, shrink=0.8)
    (marker,) = ax.plot([0], [0], marker="x", color="k", ms=9, ls="none",
                        gid="query", label=text["query"])
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    lines = [bx.plot([], [], color=c, lw=1.6, marker=m, ms=3.5, gid=g,
                     label=text[key])[0]
             for c, m, g, key in (("C0", "o", "row", "along_row"),
                                  ("C1", "s", "col", "along_col"),
                                  ("C2", "^", "diag", "along_diag"))]
    bx.axhline(0.0, color="0.7", lw=0.6)
    bx.set_ylim(-1.05, 1.05)
    bx.set_xlabel(text["offset"])
    bx.set_ylabel(text["similarity"])
    bx.legend(loc="lower left", fontsize="small")

    def update(row=5, col=8, side=14, base=100.0, scheme=2):
        row, col = min(row, side - 1), min(col, side - 1)
        name = SCHEMES[scheme]
        S = similarity_map(name, side, row, col, base=base)
        set_image(image, S)
        marker.set_data([col], [row])
        for line, (x, y) in zip(lines, _profiles(S, row, col), strict=True):
            line.set_data(x, y)
        bx.set_xlim(-(side - 1) - 0.5, side - 0.5)
        ax.set_title(text["title"].format(
            name=text[name].format(n_heads=N_HEADS), side=side,
            base=_fmt_base(base)), fontsize=10)
        bx.set_title(text["profile_title"].format(row=row, col=col),
                     fontsize=10)

    return Live(fig, update)


def score_offsets(scheme, q, k, *, max_offset=7, base=100.0, freqs=None):
    r"""The score of query ``q`` at patch (0, 0) and key ``k`` at every
    offset (dr, dc), ``-max_offset <= dr, dc <= max_offset``: a
    ``(2 max_offset + 1, 2 max_offset + 1)`` array, row ``dr + max_offset``,
    column ``dc + max_offset``.

    ``scheme`` is ``"axial"`` (``posenc_core.rope_axial_angles``) or
    ``"mixed"`` (``posenc_core.rope_mixed_angles`` with ``freqs``, shape
    ``(1, d/2, 2)``); both rotated by ``posenc_core.apply_rope_angles``.
    """
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    d = q.shape[-1]
    r = np.arange(-max_offset, max_offset + 1, dtype=float)
    dr, dc = np.meshgrid(r, r, indexing="ij")
    coords = np.concatenate([[[0.0, 0.0]],
                             np.stack([dr.ravel(), dc.ravel()], axis=1)])
    if scheme == "axial":
        angles = pc.rope_axial_angles(coords, d, base=base)
    elif scheme == "mixed":
        angles = pc.rope_mixed_angles(coords, freqs)[0]
    else:
        raise ValueError(f"scheme must be 'axial' or 'mixed', got {scheme!r}")
    q_rot = pc.apply_rope_angles(q[None], angles[:1])[0]
    k_rot = pc.apply_rope_angles(np.broadcast_to(k, (len(coords) - 1, d)),
                                 angles[1:])
    return (k_rot @ q_rot).reshape(dr.shape)


def _interaction(S):
    """S(dr, dc) - S(dr, 0) - S(0, dc) + S(0, 0)."""
    c = S.shape[0] // 2
    return S - S[:, c:c + 1] - S[c:c + 1, :] + S[c, c]


def plot_diagonal_interaction(*, seed=0, max_offset=7, base=100.0):
    """Scores of one random query and key at every 2-D offset, axial RoPE
    (top) and one head of RoPE-Mixed (bottom); right: what is left after
    subtracting the best sum of a row term and a column term,
    ``S(dr, dc) - S(dr, 0) - S(0, dc) + S(0, 0)``. The four images' arrays
    are these matrices; for axial RoPE the right one is zero (to rounding).
    """
    text = _INTERACTION.get()
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, HEAD_DIM))
    freqs = mixed_frequencies(10.0, n_heads=1, seed=seed)
    fig, axes = plt.subplots(2, 2, figsize=(7.4, 6.6), layout="constrained")
    ticks = np.arange(0, 2 * max_offset + 1, max_offset)
    labels = [str(t - max_offset) for t in ticks]
    for row, scheme in zip(axes, ("axial", "mixed"), strict=True):
        S = score_offsets(scheme, q, k, max_offset=max_offset, base=base,
                          freqs=freqs)
        rest = _interaction(S)
        lim = max(np.abs(S).max(), np.abs(rest).max())
        for ax, M, key in ((row[0], S, "score"),
                           (row[1], rest, "interaction")):
            im = ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.set_title(text[key].format(name=text[scheme]), fontsize=9)
            ax.set_xticks(ticks, labels)
            ax.set_yticks(ticks, labels)
            ax.set_xlabel(text["xlabel"])
            ax.set_ylabel(text["ylabel"])
        fig.colorbar(im, ax=list(row), shrink=0.8)
    return fig


# ------------------------------------------------------- M-RoPE

#: The models of :func:`plot_pair_axes`: (name, mrope_section, layout,
#: rope_theta), as transformers 5.24.0 configures them by default
#: (``Qwen2VLTextConfig``, ``Qwen3VLTextConfig``); head dimension 128.
MROPE_MODELS = (
    ("Qwen2-VL", (16, 24, 24), "chunked", 1e6),
    ("Qwen3-VL", (24, 20, 20), "interleaved", 5e5),
)
#: A video's patch grid per frame group in :func:`mrope_prompt` (2 x 2
#: merged tokens ... 4 x 4 of them), and frames per group.
VIDEO_PATCHES = (8, 8)
TEMPORAL_PATCH_SIZE = 2

_IDS = Labels("ch09_vision:ch09_mrope_ids", {
    "qwen2-vl": "Qwen2-VL: time id = frame group",
    "qwen2.5-vl": "Qwen2.5-VL: time id from seconds ({nu} ids per second)",
    "title": "{model}\n{n} tokens, largest id {top}",
    "time": "time id",
    "height": "height id",
    "width": "width id",
    "token": "token index",
    "image": "image",
    "video": "video",
    "xlabel": "token",
    "ylabel": "position id",
    "img_h": "image height, in patches",
    "img_w": "image width, in patches",
    "frames": "video frames",
    "fps": "frames per second",
    "caption": ("The M-RoPE ids of a prompt of text, an image, text, a "
                "video and text, in Qwen2-VL and Qwen2.5-VL."),
})
_AXES = Labels("ch09_vision:ch09_pair_axes", {
    "title": ("{model} ({layout}, pairs per axis {section})\n"
              "pairs turning more than once: {over}"),
    "chunked": "chunked",
    "interleaved": "interleaved",
    "time": "time pairs, over {span} time ids",
    "height": "height pairs, over {span} rows",
    "width": "width pairs, over {span} columns",
    "xlabel": "pair i (fast to slow)",
    "ylabel": "turns over the span",
    "time_span": "time ids of the video",
    "space_span": "rows and columns of the image",
    "caption": ("Which pairs follow time, height and width in Qwen2-VL "
                "(chunked) and Qwen3-VL (interleaved), and how far each "
                "turns over a video and an image."),
})

_AXIS_COLOURS = ("C3", "C0", "C2")
_AXIS_NAMES = ("time", "height", "width")


def mrope_prompt(img_h=8, img_w=12, frames=8, fps=2.0):
    """The prompt of :func:`plot_mrope_ids`, as
    ``posenc_core.mrope_position_ids`` segments: 5 text tokens, an image of
    ``img_h`` by ``img_w`` patches, 4 text tokens, a video of ``frames``
    frames (``frames / 2`` groups of :data:`VIDEO_PATCHES` patches, 2 / fps
    seconds per group) and 4 text tokens."""
    return [("text", 5), ("image", (1, img_h, img_w)), ("text", 4),
            ("video", (frames // TEMPORAL_PATCH_SIZE, *VIDEO_PATCHES),
             TEMPORAL_PATCH_SIZE / fps),
            ("text", 4)]


def _spans(segments, merge=2):
    """(kind, first token, last token + 1) of each image or video."""
    out, at = [], 0
    for seg in segments:
        if seg[0] == "text":
            at += seg[1]
            continue
        t, h, w = seg[1]
        n = t * (h // merge) * (w // merge)
        out.append((seg[0], at, at + n))
        at += n
    return out


def plot_mrope_ids(*, img_h=8, img_w=12, frames=8, fps=2.0,
                   tokens_per_second=4):
    """The M-RoPE ids of :func:`mrope_prompt`, token by token: top,
    Qwen2-VL (``variant="qwen2-vl"``); bottom, Qwen2.5-VL
    (``variant="qwen2.5-vl"``, ``tokens_per_second``), both from
    ``posenc_core.mrope_position_ids``. Lines with gids ``"t"``, ``"h"``,
    ``"w"`` are the three rows of ids; ``"token"`` is the token index, the
    1-D position a text model would give; the shaded spans are the image
    and the video."""
    return live_mrope_ids().update(img_h=img_h, img_w=img_w, frames=frames,
                                   fps=fps,
                                   tokens_per_second=tokens_per_second)


def live_mrope_ids():
    """:func:`plot_mrope_ids`, as a :class:`posenc_plots.Live`: built
    once; a move sets the spans, the lines' data, the limits and the
    titles in place (drawing it again took 300 ms of CPU per move)."""
    fig = plt.figure(figsize=(8.0, 6.6), layout="constrained")
    panels = []

    def update(*, img_h=8, img_w=12, frames=8, fps=2.0,
               tokens_per_second=4):
        text = _IDS.get()
        segments = mrope_prompt(img_h, img_w, frames, fps)
        spans = _spans(segments)
        if not panels or len(panels[0][1]) != len(spans):
            fig.clear()
            panels[:] = _mrope_ids_panels(fig, text, spans)
        for (ax, patches, lines), variant in zip(
                panels, ("qwen2-vl", "qwen2.5-vl"), strict=True):
            ids = pc.mrope_position_ids(segments, variant=variant,
                                        tokens_per_second=tokens_per_second)
            n = ids.shape[1]
            token = np.arange(n)
            for patch, (_, a, b) in zip(patches, spans, strict=True):
                patch.set_x(a - 0.5)
                patch.set_width(b - a)
            lines[0].set_data(token, token)
            for line, row in zip(lines[1:], ids, strict=True):
                line.set_data(token, row)
            ax.relim()
            ax.autoscale_view()
            ax.set_title(text["title"].format(
                model=text[variant].format(nu=tokens_per_second), n=n,
                top=int(ids.max())), fontsize=10)

    return Live(fig, update)


def _mrope_ids_panels(fig, text, spans):
    """The two panels of :func:`live_mrope_ids`, without data: ``(Axes,
    span patches, [token line, t, h, w lines])`` each."""
    axes = fig.subplots(2, 1, sharex=True)
    panels = []
    for ax in axes:
        patches = [ax.axvspan(a - 0.5, b - 0.5, color="0.92"
                              if kind == "image" else "0.85", zorder=0,
                              label=text[kind]) for kind, a, b in spans]
        lines = ax.plot([], [], color="0.5", ls="--", lw=1.0, gid="token",
                        label=text["token"])
        for gid, colour, name in zip("thw", _AXIS_COLOURS, _AXIS_NAMES,
                                     strict=True):
            lines += ax.plot([], [], color=colour, lw=1.3, gid=gid,
                             label=text[name])
        ax.set_ylabel(text["ylabel"])
        ax.legend(loc="upper left", fontsize="small")
        panels.append((ax, patches, lines))
    axes[1].set_xlabel(text["xlabel"])
    return panels


def plot_pair_axes(*, time_span=100.0, space_span=32, head_dim=128):
    """For each model of :data:`MROPE_MODELS`, one panel: the turns each
    rotated pair makes over the span of its axis, ``angle / (2 pi)`` with
    the angles of ``posenc_core.mrope_angles`` at the ids
    ``(time_span, space_span, space_span)``, one line of markers per axis
    (gids ``"time"``, ``"height"``, ``"width"``; x-data the pairs of that
    axis, ``posenc_core.mrope_pair_axes``). The dotted line is one turn."""
    return live_pair_axes().update(time_span=time_span,
                                   space_span=space_span, head_dim=head_dim)


def live_pair_axes():
    """:func:`plot_pair_axes`, as a :class:`posenc_plots.Live`: built
    once; a move sets the markers' data, the legends, the limits and the
    titles in place (drawing it again took 440 ms of CPU per move)."""
    fig = plt.figure(figsize=(8.2, 4.0), layout="constrained")
    panels = []

    def update(*, time_span=100.0, space_span=32, head_dim=128):
        text = _AXES.get()
        if not panels:
            panels[:] = _pair_axes_panels(fig, text)
        spans = (time_span, space_span, space_span)
        for (ax, lines), (model, section, layout, base) in zip(
                panels, MROPE_MODELS, strict=True):
            pair_axis = pc.mrope_pair_axes(section, layout=layout)
            ids = np.array(spans, dtype=float)[:, None]
            turns = pc.mrope_angles(ids, head_dim, section, base=base,
                                    layout=layout)[0] / (2 * np.pi)
            legend = ax.get_legend().get_texts()
            for axis, name in enumerate(_AXIS_NAMES):
                i = np.flatnonzero(pair_axis == axis)
                lines[axis].set_data(i, turns[i])
                label = text[name].format(span=_fmt_span(spans[axis]))
                lines[axis].set_label(label)
                legend[axis].set_text(label)
            ax.relim()
            ax.autoscale_view()
            ax.set_title(text["title"].format(
                model=model, layout=text[layout], section=list(section),
                over=int((turns > 1).sum())), fontsize=9)

    return Live(fig, update)


def _pair_axes_panels(fig, text):
    """The two panels of :func:`live_pair_axes`, without data: ``(Axes,
    [time, height, width markers])`` each."""
    axes = fig.subplots(1, 2, sharey=True)
    panels = []
    for ax in axes:
        lines = []
        for axis, name in enumerate(_AXIS_NAMES):
            lines += ax.plot([], [], ls="none", marker="o", ms=3.5,
                             color=_AXIS_COLOURS[axis], gid=name,
                             label=name)
        ax.axhline(1.0, color="0.4", ls=":", lw=1.0)
        ax.set_yscale("log")
        ax.set_xlabel(text["xlabel"])
        ax.legend(loc="lower left", fontsize="small")
        panels.append((ax, lines))
    axes[0].set_ylabel(text["ylabel"])
    return panels


def _fmt_span(span):
    return f"{span:,.0f}"


# ------------------------------------------- the in-page figure's data

#: The base slider of :data:`SIMILARITY`: 10**1 ... 10**5 in half decades.
_BASE_SLIDER = Slider("base", 1, 5, 0.5, 2, label=_SIMILARITY.en["base"],
                      log=True)

#: ``_assets/posenc/data/ch09-mixed.js``: RoPE-Mixed's frequencies at every
#: base the slider reaches (:func:`mixed_data`), for the in-page figure,
#: which cannot draw numpy's random numbers; ``tests/test_ch09_vision.py``
#: checks it is up to date (``python -m posenc_plots.ch09_vision``).
MIXED_DATA_PATH = (Path(__file__).resolve().parent.parent / "_assets"
                   / "posenc" / "data" / "ch09-mixed.js")


def mixed_data():
    """:func:`mixed_frequencies` at every value of the base slider, in
    order, flattened: ``(n_bases, N_HEADS, HEAD_DIM/2, 2)`` as one float64
    array."""
    return np.stack([mixed_frequencies(b) for b in _BASE_SLIDER.values()]
                    ).ravel()


def mixed_data_js():
    """The text of :data:`MIXED_DATA_PATH`."""
    data = base64.b64encode(mixed_data().astype("<f8").tobytes())
    return ("/* RoPE-Mixed's initial frequencies for chapter 9's live figure "
            "(posenc_plots.ch09_vision.mixed_data);\n   made by python -m "
            "posenc_plots.ch09_vision. Do not edit. */\n"
            f'posenc.data.define("ch09-mixed", "{data.decode()}");\n')


SIMILARITY = Interactive(
    name="ch09_similarity",
    plot=plot_similarity,
    live=live_similarity,
    sliders=(
        Slider("row", 0, 31, 1, 5, label=_SIMILARITY.en["row"]),
        Slider("col", 0, 31, 1, 8, label=_SIMILARITY.en["col"]),
        Slider("side", 2, 32, 1, 14, label=_SIMILARITY.en["side"]),
        _BASE_SLIDER,
        Slider("scheme", 0, len(SCHEMES) - 1, 1, 2,
               label=_SIMILARITY.en["scheme"]),
    ),
    caption=_SIMILARITY.en["caption"],
    labels=_SIMILARITY,
    replaces="fig-ch09-similarity",
)

MROPE_IDS = Interactive(
    name="ch09_mrope_ids",
    plot=plot_mrope_ids,
    live=live_mrope_ids,
    sliders=(
        Slider("img_h", 2, 32, 2, 8, label=_IDS.en["img_h"]),
        Slider("img_w", 2, 32, 2, 12, label=_IDS.en["img_w"]),
        Slider("frames", 2, 32, 2, 8, label=_IDS.en["frames"]),
        Slider("fps", 0.5, 4.0, 0.5, 2.0, label=_IDS.en["fps"]),
    ),
    caption=_IDS.en["caption"],
    labels=_IDS,
    replaces="fig-ch09-mrope-ids",
)

PAIR_AXES = Interactive(
    name="ch09_pair_axes",
    plot=plot_pair_axes,
    live=live_pair_axes,
    sliders=(
        Slider("time_span", 1, 4, 0.25, 2, label=_AXES.en["time_span"],
               log=True),
        Slider("space_span", 2, 64, 2, 32, label=_AXES.en["space_span"]),
    ),
    caption=_AXES.en["caption"],
    labels=_AXES,
    replaces="fig-ch09-pair-axes",
)

INTERACTIVE = (SIMILARITY, MROPE_IDS, PAIR_AXES)


# ------------------------------------- the experiment: zoom versus canvas

#: The position methods of ``posenc_lab.vision`` (its ``METHODS``), in the
#: order the chapter draws and tabulates them.
EXPERIMENT_METHODS = ("none", "learned_resize", "learned_clamp", "sincos",
                      "rope_axial", "rope_mixed", "rope_dinov3",
                      "rope_dinov3_rescale")

#: How each method is named in the figure and the tables (in the current
#: language: ``METHOD_LABELS[method]``).
METHOD_LABELS = Labels("ch09_vision:methods", {
    "none": "none (NoPE)",
    "learned_resize": "learned, resized",
    "learned_clamp": "learned, not resized",
    "sincos": "2-D sin-cos",
    "rope_axial": "axial RoPE",
    "rope_mixed": "RoPE-Mixed",
    "rope_dinov3": "normalised RoPE (DINOv3)",
    "rope_dinov3_rescale": "normalised RoPE, rescaled in training",
})

#: The accuracy of a guess: ten digits.
CHANCE = 0.1

_METHOD_STYLE = {
    "none": ("0.45", "-"), "learned_resize": ("C9", "-"),
    "learned_clamp": ("C9", "--"), "sincos": ("C0", "-"),
    "rope_axial": ("C3", "-"), "rope_mixed": ("C1", "-"),
    "rope_dinov3": ("C2", "-"), "rope_dinov3_rescale": ("C2", "--"),
}

_ZOOM_CANVAS = Labels("ch09_vision:plot_zoom_canvas", {
    "zoom": "zoom: the same picture at more pixels",
    "canvas": "canvas: the same digit on a larger image",
    "x": "side of the test image (pixels; trained at {train})",
    "y": "accuracy on {n} test digits",
    "chance": "chance",
    "train": "training size",
})

_PROGRESS = Labels("ch09_vision:progress", {
    "idle": "{method}, seed {seed}: {steps} training steps",
    "running": ("{method}, seed {seed}: step {done} of {steps}, {elapsed} "
                "so far, {rate} steps/s on this machine, about {left} left"),
    "starting": ("{method}, seed {seed}: step {done} of {steps}, {elapsed} "
                 "so far"),
})


def experiment_accuracy(results, mode, method):
    """``(sizes, accuracy)`` of one method in one mode (``"zoom"`` or
    ``"canvas"``) of a results dict of ``posenc_lab.vision``: the test
    sides in pixels, and the accuracy of every run, shape (seeds, sizes),
    seeds in increasing order."""
    if mode not in ("zoom", "canvas"):
        raise ValueError(f"mode must be 'zoom' or 'canvas', got {mode!r}")
    runs = sorted((r for r in results["runs"] if r["method"] == method),
                  key=lambda r: r["seed"])
    if not runs:
        raise ValueError(f"method must be one of the results' methods "
                         f"{sorted({r['method'] for r in results['runs']})}, "
                         f"got {method!r}")
    sizes = list(results["config"]["eval_sizes"])
    acc = [[r["eval"][mode][str(s)]["accuracy"] for s in sizes] for r in runs]
    return np.array(sizes), np.array(acc, dtype=float)


def _mean_std(values):
    values = np.asarray(values, dtype=float)
    if values.shape[0] < 2:
        return values.mean(0), np.zeros(values.shape[1:])
    return values.mean(0), values.std(0, ddof=1)


def accuracy_table(results, *, digits=2):
    """The accuracy of every method at every test size, both modes, as a
    GitHub-flavoured Markdown table: mean ± sample standard deviation over
    seeds; the training size once (both modes are the same images there),
    then the zoomed and the canvas sizes."""
    train = results["config"]["image_size"]
    sizes = [s for s in results["config"]["eval_sizes"] if s != train]
    header = ["method", f"{train} px"]
    header += [f"zoom {s} px" for s in sizes]
    header += [f"canvas {s} px" for s in sizes]
    rows = []
    methods = {r["method"] for r in results["runs"]}
    for method in (m for m in EXPERIMENT_METHODS if m in methods):
        cells = [METHOD_LABELS[method]]
        for mode in ("zoom", "canvas"):
            all_sizes, acc = experiment_accuracy(results, mode, method)
            mean, std = _mean_std(acc)
            for s, m, d in zip(all_sizes, mean, std, strict=True):
                if s == train and mode == "canvas":
                    continue  # the same images as zoom's
                cells.append(f"{m:.{digits}f} ± {d:.{digits}f}")
        rows.append(cells)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def plot_zoom_canvas(results, *, ax=None):
    """Accuracy against the side of the test image, one line per method
    (gid: the method), mean over seeds with error bars of one sample
    standard deviation; left, the zoomed test images, right, the canvas
    ones. ``ax``: two Axes to draw in. The dotted line is chance."""
    text = _ZOOM_CANVAS.get()
    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(8.2, 5.0), sharey=True,
                               layout="constrained")
    fig = ax[0].figure
    train = results["config"]["image_size"]
    n = results["config"]["eval_examples"]
    methods = {r["method"] for r in results["runs"]}
    for panel, mode in zip(ax, ("zoom", "canvas"), strict=True):
        for method in (m for m in EXPERIMENT_METHODS if m in methods):
            sizes, acc = experiment_accuracy(results, mode, method)
            mean, std = _mean_std(acc)
            colour, ls = _METHOD_STYLE[method]
            panel.errorbar(sizes, mean, yerr=std, color=colour, ls=ls,
                           marker="o", ms=3.5, capsize=2.5, lw=1.4,
                           gid=method, label=METHOD_LABELS[method])
        panel.axhline(CHANCE, color="0.3", ls=":", lw=1.0,
                      label=text["chance"])
        panel.axvline(train, color="0.85", lw=6, zorder=0,
                      label=text["train"])
        panel.set_xticks(sizes)
        panel.set_ylim(0, 1)
        panel.set_title(text[mode], fontsize="medium")
        panel.set_xlabel(text["x"].format(train=train))
        panel.grid(alpha=0.3)
    ax[0].set_ylabel(text["y"].format(n=n))
    handles, labels = ax[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3,
               fontsize="small")
    return fig


def format_live_run(run):
    """One run of ``posenc_lab.vision.run_one`` as text: its training loss
    at the first and the last step, and its accuracy at every test size in
    both modes (3 decimals)."""
    sizes = sorted(run["eval"]["zoom"], key=int)
    first, last = run["train_loss"][0], run["train_loss"][-1]
    head = "side of the test image (pixels):"
    lines = [f"{METHOD_LABELS[run['method']]}, seed {run['seed']}: training "
             f"loss {first[1]:.3f} at step {first[0]}, {last[1]:.3f} at step "
             f"{last[0]}",
             head + "".join(f"{int(s):7d}" for s in sizes)]
    for mode in ("zoom", "canvas"):
        acc = "".join(f"{run['eval'][mode][s]['accuracy']:7.3f}"
                      for s in sizes)
        lines.append(f"accuracy, {mode}:".ljust(len(head)) + acc)
    return "\n".join(lines)


def train_one(cfg, method, seed=0):
    """Train and evaluate one model of ``posenc_lab.vision``, showing its
    progress.

    ``posenc_lab.vision.run_one`` with a
    :class:`posenc_lab.progress.ProgressLine` under the cell: while it
    runs, the steps done, the time so far, the speed of this machine and
    the time left; when done, only what was trained (so that the stored
    output is the same on every machine).
    """
    from posenc_lab import vision
    from posenc_lab.progress import ProgressLine, from_templates

    text = _PROGRESS.get()
    fields = {"method": METHOD_LABELS[method], "seed": seed,
              "steps": cfg.steps}

    with ProgressLine(cfg.steps, *from_templates(text, fields)) as line:
        return vision.run_one(cfg, method, seed, tick=line.tick)


def main():
    """``python -m posenc_plots.ch09_vision``: write MIXED_DATA_PATH."""
    MIXED_DATA_PATH.write_text(mixed_data_js(), encoding="utf-8")
    print(f"wrote {MIXED_DATA_PATH}")


if __name__ == "__main__":
    main()
