"""Figures for chapter 1, "Why self-attention needs order".

The attention weights are computed with :func:`posenc_core.self_attention`
and the position encodings with :func:`posenc_core.sinusoidal_encoding`;
this module only draws them. In English the words are labelled in
pinyin/English; the Chinese edition (``POSENC_LANG=zh_CN``) shows the
source's own words. Every label is in one :class:`~posenc_plots.i18n.Labels`
table per figure.
"""

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "WORDS",
    "TICKET_WORDS",
    "FIRST",
    "SECOND",
    "random_parameters",
    "ticket_weights",
    "plot_query_weights",
    "plot_encoding_vs_order",
    "plot_order_heatmaps",
    "plot_reordering_effect",
    "attention_with_position",
    "live_attention",
    "ATTENTION_WITH_POSITION",
    "INTERACTIVE",
]

#: The words of the source's example (沈阳, 到, 广州, 的, 机票), as labelled.
WORDS = Labels("ch01_order:words", {
    "word_0": "Shenyang", "word_1": "to", "word_2": "Guangzhou",
    "word_3": "de", "word_4": "ticket"})
#: The words of the source's example, in English (:data:`WORDS`).
TICKET_WORDS = tuple(WORDS.en.values())
#: "沈阳 到 广州 的 机票" (tickets from Shenyang to Guangzhou), as word ids.
FIRST = (0, 1, 2, 3, 4)
#: "广州 到 沈阳 的 机票" (tickets from Guangzhou to Shenyang), as word ids.
SECOND = (2, 1, 0, 3, 4)


def _words(words):
    """``words``, or the ticket words in the current language."""
    return tuple(WORDS.get().values()) if words is None else words


_QUERY_WEIGHTS = Labels("ch01_order:plot_query_weights", {
    "first": "Shenyang to Guangzhou",
    "second": "Guangzhou to Shenyang",
    "ylabel": "attention weight",
})

_ENCODING_VS_ORDER = Labels("ch01_order:plot_encoding_vs_order", {
    "plain_first": "Shenyang to Guangzhou, no encoding",
    "plain_second": "Guangzhou to Shenyang, no encoding",
    "encoded_first": "Shenyang to Guangzhou, with encoding",
    "encoded_second": "Guangzhou to Shenyang, with encoding",
    "reordered_plain": "reordered, no encoding",
    "added": "encoding added, same phrase",
    "reordered_encoded": "reordered, with encoding",
    "title_weights": "attention weights",
    "title_changes": "size of each change",
    "ylabel_weights": "attention weight",
    "ylabel_changes": "absolute change in weight",
})

_REORDERING = Labels("ch01_order:plot_reordering_effect", {
    "plain": "no position encoding",
    "encoded": "with the sinusoidal encoding",
    "largest": "largest change {max:.2f}",
    "xlabel": "key word",
    "ylabel": "query word",
    "colorbar": "change of the weight",
})

_ATTENTION = Labels("ch01_order:attention_with_position", {
    "first": "Shenyang to Guangzhou",
    "second": "Guangzhou to Shenyang",
    "difference": "|difference|, max {max:.2f}",
    "xlabel": "key word",
    "ylabel": "query word",
    "suptitle": ("amplitude of the position encoding = {amplitude:g}, "
                 r"$d_{{\mathrm{{model}}}} = {d_model}$"),
    "amplitude": "encoding amplitude",
    "d_model": "model width d_model",
    "caption": ("Attention weights of the two phrases, indexed by word. "
                "With amplitude 0 they are equal; position makes them "
                "differ."),
})


def random_parameters(n_words, d_model, d_k, seed=0):
    """Seeded random word embeddings and attention weights.

    The recipe of the chapter: ``E`` has standard normal entries, the three
    projections have entries of variance ``1/d_model``, drawn in the order
    ``E, W_q, W_k, W_v`` from ``np.random.default_rng(seed)``.

    Returns
    -------
    E : ndarray, shape (n_words, d_model)
    w_q, w_k, w_v : ndarray, shape (d_model, d_k)
    """
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(n_words, d_model))
    w_q, w_k, w_v = rng.normal(size=(3, d_model, d_k)) / np.sqrt(d_model)
    return E, w_q, w_k, w_v


def ticket_weights(amplitude=1.0, d_model=16, *, seed=0):
    """Attention weights of the two ticket phrases, in the first's word order.

    ``X = E[ids] + amplitude * P`` with ``P`` the sinusoidal encoding of
    positions ``0..4``. The weights of the second phrase are reordered so
    that row and column ``w`` of both matrices belong to word ``w``; at
    ``amplitude = 0`` the two matrices are equal (permutation equivariance).

    Returns
    -------
    A_first, A_second : ndarray, shape (5, 5)
        ``A_second[w, v]`` is the weight that word ``w`` gives word ``v``
        in "广州 到 沈阳 的 机票".
    """
    E, w_q, w_k, w_v = random_parameters(len(TICKET_WORDS), d_model,
                                         d_model // 2, seed)
    P = pc.sinusoidal_encoding(len(FIRST), d_model)
    _, A_first = pc.self_attention(E[list(FIRST)] + amplitude * P,
                                   w_q, w_k, w_v)
    _, A_second = pc.self_attention(E[list(SECOND)] + amplitude * P,
                                    w_q, w_k, w_v)
    # slot of each word in the second phrase
    slot = np.argsort(SECOND)
    return A_first, A_second[np.ix_(slot, slot)]


def plot_query_weights(weights_first, weights_second, words=None, *,
                       title="", ax=None):
    """Grouped bars: the weights one query gives each word, in two phrases.

    Parameters
    ----------
    weights_first, weights_second : array_like, shape (n_words,)
        Weight on each word (in the order of ``words``) in each phrase.
    """
    text, words = _QUERY_WEIGHTS.get(), _words(words)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 3))
    x = np.arange(len(words))
    ax.bar(x - 0.2, weights_first, width=0.4, label=text["first"])
    ax.bar(x + 0.2, weights_second, width=0.4, label=text["second"])
    ax.set_xticks(x, words)
    ax.set_ylabel(text["ylabel"])
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper left")
    return ax.figure


def plot_encoding_vs_order(plain_first, plain_second, encoded_first,
                           encoded_second, words=None, *, ax=None):
    """Separate what adding the encoding changes from what reordering changes.

    First panel: the weights one query gives each word, without the encoding
    and with it, in both phrases. Second panel: for each word, the size of
    three changes of that weight:

    - reordering the phrase without the encoding,
      ``|plain_second - plain_first|`` (zero: permutation equivariance);
    - adding the encoding to the same phrase,
      ``|encoded_first - plain_first|``;
    - reordering the phrase with the encoding,
      ``|encoded_second - encoded_first|``, whose values are written on its
      bars.

    The weights' y-axis runs from 0 to 1; the changes' from 0 to 1.35 times
    the largest change, so that the small effect of the order stays visible.
    Without ``ax`` the two panels are stacked (weights above, changes
    below), 8 inches wide, to read at the width of the book's column.

    Parameters
    ----------
    plain_first, plain_second, encoded_first, encoded_second : array_like, \
shape (n_words,)
        The query's weight on each word, in the order of ``words``: without
        the encoding in the first and the second phrase, then with it.
    words : sequence of str, optional
        Tick labels, one per word (default: the ticket words).
    ax : sequence of two Axes, optional
        Where to draw the weights and the changes.

    Returns
    -------
    matplotlib.figure.Figure
    """
    text, words = _ENCODING_VS_ORDER.get(), _words(words)
    if ax is None:
        fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True,
                               constrained_layout=True)
    series = [np.asarray(w, dtype=float) for w in
              (plain_first, plain_second, encoded_first, encoded_second)]
    plain_first, plain_second, encoded_first, encoded_second = series
    x = np.arange(len(words))
    bars = (
        (plain_first, text["plain_first"], "0.75"),
        (plain_second, text["plain_second"], "0.45"),
        (encoded_first, text["encoded_first"], "C0"),
        (encoded_second, text["encoded_second"], "C1"),
    )
    for k, (heights, label, color) in enumerate(bars):
        ax[0].bar(x + (k - 1.5) * 0.2, heights, width=0.2, label=label,
                  color=color)
    changes = (
        (np.abs(plain_second - plain_first), text["reordered_plain"], "0.45"),
        (np.abs(encoded_first - plain_first), text["added"], "C2"),
        (np.abs(encoded_second - encoded_first), text["reordered_encoded"],
         "C1"),
    )
    for k, (heights, label, color) in enumerate(changes):
        bars = ax[1].bar(x + (k - 1) * 0.27, heights, width=0.27, label=label,
                         color=color)
    # the effect of the order is small: write its values on its bars
    ax[1].bar_label(bars, fmt="%.3f", fontsize="small", padding=1)
    titles = (text["title_weights"], text["title_changes"])
    ylabels = (text["ylabel_weights"], text["ylabel_changes"])
    # the weights on 0..1; the changes on their own scale, so that the
    # small effect of the order is not squashed against the axis
    largest = max(float(np.max(heights)) for heights, _, _ in changes)
    tops = (1.0, 1.35 * largest if largest > 0 else 1.0)
    for axis, title, ylabel, top in zip(ax, titles, ylabels, tops,
                                        strict=True):
        axis.set_xticks(x, words)
        axis.tick_params(labelbottom=True)
        axis.set_ylim(0, top)
        axis.set_title(title, fontsize="medium")
        axis.set_ylabel(ylabel)
        axis.legend(fontsize="small", loc="upper left")
    return ax[0].figure


def plot_order_heatmaps(A_first, A_second, words=None, *, ax=None):
    """Three heatmaps: both phrases' weights by word, and their difference.

    Parameters
    ----------
    A_first, A_second : array_like, shape (n, n)
        Attention weights, both indexed by word (see :func:`ticket_weights`).
    ax : sequence of three Axes, optional
    """
    return _OrderHeatmaps(_words(words), ax).update(A_first, A_second)


class _OrderHeatmaps:
    """The artists of :func:`plot_order_heatmaps`, to draw weights into."""

    _STYLE = (("viridis", 1.0), ("viridis", 1.0), ("magma", 0.5))

    def __init__(self, words, ax=None):
        self.text = text = _ATTENTION.get()
        if ax is None:
            fig, ax = plt.subplots(1, 3, figsize=(11, 4),
                                   constrained_layout=True)
        self.ax, n = ax, len(words)
        ticks = np.arange(n)
        self.images, self.texts = [], []
        for axis, (cmap, vmax) in zip(ax, self._STYLE, strict=True):
            self.images.append(axis.imshow(np.zeros((n, n)), cmap=cmap,
                                           vmin=0.0, vmax=vmax))
            axis.set_xticks(ticks, words, rotation=45, ha="right")
            axis.set_yticks(ticks, words)
            axis.set_xlabel(text["xlabel"])
            self.texts.append([
                axis.text(c, r, "", ha="center", va="center",
                          fontsize="x-small")
                for r, c in np.ndindex(n, n)])
        ax[0].set_ylabel(text["ylabel"])

    def update(self, A_first, A_second):
        A_first, A_second = np.asarray(A_first), np.asarray(A_second)
        diff = np.abs(A_first - A_second)
        text = self.text
        panels = (
            (A_first, text["first"], "viridis", 1.0),
            (A_second, text["second"], "viridis", 1.0),
            (diff, text["difference"].format(max=diff.max()), "magma", 0.5),
        )
        for axis, image, texts, (data, title, _, vmax) in zip(
                self.ax, self.images, self.texts, panels, strict=True):
            image.set_data(data)
            axis.set_title(title, fontsize="medium")
            for text, value in zip(texts, data.ravel(), strict=True):
                text.set_text(f"{value:.2f}")
                text.set_color("black" if value > 0.6 * vmax else "white")
        return self.ax[0].figure


def plot_reordering_effect(amplitude=1.0, d_model=16, *, seed=0, ax=None):
    """How much reordering the ticket phrase changes each attention weight.

    Two heatmaps of ``|A_first - A_second|`` from :func:`ticket_weights`
    (row: the query word, column: the key word, both indexed by word, so
    that the same cell holds the same pair of words in both phrases): left
    without a position encoding (``amplitude = 0``: every change is zero, to
    rounding, by permutation equivariance), right with the sinusoidal encoding
    at ``amplitude``. Both panels share one colour scale, from 0 to the
    larger of 0.25 and the largest change; each cell is written.

    Parameters
    ----------
    amplitude : float, optional
        Scale of the encoding added in the right panel (default 1).
    d_model : int, optional
        Width of the embeddings and the encoding (default 16).
    seed : int, optional
        Seed of :func:`random_parameters`.
    ax : sequence of two Axes, optional
        Where to draw the two panels.

    Returns
    -------
    matplotlib.figure.Figure
    """
    text, words = _REORDERING.get(), _words(None)
    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(8, 3.9), sharey=True,
                               constrained_layout=True)
    changes = [np.abs(np.subtract(*ticket_weights(a, d_model, seed=seed)))
               for a in (0.0, amplitude)]
    vmax = max(0.25, float(max(c.max() for c in changes)))
    ticks = np.arange(len(words))
    for axis, change, title in zip(ax, changes, (text["plain"],
                                                 text["encoded"]),
                                   strict=True):
        image = axis.imshow(change, cmap="magma", vmin=0.0, vmax=vmax)
        for (r, c), value in np.ndenumerate(change):
            axis.text(c, r, f"{value:.2f}", ha="center", va="center",
                      fontsize="small",
                      color="black" if value > 0.6 * vmax else "white")
        axis.set_xticks(ticks, words, rotation=45, ha="right")
        axis.set_yticks(ticks, words)
        axis.set_xlabel(text["xlabel"])
        axis.set_title(title + "\n" + text["largest"].format(
            max=change.max()), fontsize="medium")
    ax[0].set_ylabel(text["ylabel"])
    ax[0].figure.colorbar(image, ax=list(ax), shrink=0.8,
                          label=text["colorbar"])
    return ax[0].figure


def attention_with_position(amplitude=1.0, d_model=16, *, ax=None):
    """Heatmaps of :func:`ticket_weights` for one amplitude and ``d_model``.

    At ``amplitude = 0`` (no position information) the two phrases give the
    same weights word by word and the difference is zero.
    """
    return live_attention(ax).update(amplitude=amplitude, d_model=d_model)


def live_attention(ax=None):
    """:func:`attention_with_position`, built once: a
    :class:`posenc_plots.Live` whose ``update(amplitude, d_model)`` draws."""
    heatmaps = _OrderHeatmaps(_words(None), ax)
    text = heatmaps.text
    fig = heatmaps.ax[0].figure
    # the layout places the suptitle once; later updates change its text
    suptitle = fig.suptitle(" ", fontsize="medium")

    def update(amplitude=1.0, d_model=16):
        heatmaps.update(*ticket_weights(amplitude, int(d_model)))
        suptitle.set_text(text["suptitle"].format(amplitude=amplitude,
                                                  d_model=int(d_model)))

    return Live(fig, update)


ATTENTION_WITH_POSITION = Interactive(
    name="attention_with_position",
    plot=attention_with_position,
    sliders=(
        Slider("amplitude", 0.0, 3.0, 0.1, 1.0,
               label=_ATTENTION.en["amplitude"]),
        Slider("d_model", 4, 64, 2, 16, label=_ATTENTION.en["d_model"]),
    ),
    caption=_ATTENTION.en["caption"],
    live=live_attention,
    labels=(_ATTENTION, WORDS),
    replaces="fig-ch01-order-heatmaps",
)

INTERACTIVE = (ATTENTION_WITH_POSITION,)
