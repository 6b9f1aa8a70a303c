"""Figures for chapter 10, "Position in the models of 2026".

Every function computes through :mod:`posenc_core`
(``partial_rope_frequencies``, ``position_layout``), takes keyword
arguments and ``ax=None``, and returns the matplotlib Figure. Nothing is
drawn at import.

:func:`load_models` reads the chapter's table of published configurations
(``posenc_lab/data/model_configs.json``: each entry's config as its
``config.json`` publishes it, with its sources).
"""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc
from posenc_plots import Interactive, Live, Slider
from posenc_plots.i18n import Labels

__all__ = [
    "CONFIGS",
    "CONVENTIONS",
    "INTERACTIVE",
    "SPECTRUM",
    "live_spectrum",
    "load_models",
    "plot_spectrum",
]

#: The table of published configurations.
CONFIGS = (Path(__file__).resolve().parent.parent / "posenc_lab" / "data"
           / "model_configs.json")

#: The conventions of partial rotation, in the order of the slider.
CONVENTIONS = ("spread", "proportional")

_SPECTRUM = Labels("ch10_models:ch10_spectrum", {
    "xlabel": "pair index $i$",
    "ylabel": r"wavelength $\lambda_i = 2\pi/\omega_i$ (positions)",
    "full": "all pairs rotated (f = 1)",
    "rotated": "rotated pairs, {convention} ({count})",
    "dropped": "pairs not rotated ({count})",
    "spread": "spread",
    "proportional": "proportional",
    "title": ("{convention}, f = {fraction}: {count} of {pairs} pairs "
              "rotate, longest wavelength {longest}"),
    "title_none": "{convention}, f = {fraction}: no pair rotates",
    "fraction": "rotated fraction f",
    "convention": "convention",
    "base": "base b",
    "head_dim": "head dimension d",
    "caption": ("Wavelength of each pair of a partially rotated head in "
                "the two conventions, against the fully rotated head."),
})


def load_models(path=CONFIGS):
    """The models of the chapter's table, as a list of dicts.

    Each has ``"id"``, ``"name"``, ``"family"``, ``"config_class"`` (the
    transformers class that reads it), ``"config"`` (the position settings
    of its ``config.json``, text part), ``"sources"`` and
    ``"unconfirmed"`` (what the search could not confirm).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data["models"]


def _axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    return ax.figure, ax


def _fmt(x):
    """1000000.0 -> '1,000,000'; 188.25 -> '188'; 2.5e9 -> '2.5e+09'."""
    if x >= 1e8:
        return f"{x:.2g}"
    return f"{x:,.0f}"


def _convention(convention):
    if convention in (0, 1) and int(convention) == convention:
        return CONVENTIONS[int(convention)]
    if convention in CONVENTIONS:
        return convention
    raise ValueError(f"convention must be one of {CONVENTIONS} (or 0, 1), "
                     f"got {convention!r}")


def plot_spectrum(*, fraction=0.25, convention=1, base=1e6, head_dim=512,
                  ax=None):
    """Wavelength of each pair of a partially rotated head.

    The line (gid ``"full"``) is the fully rotated head,
    ``2 pi / posenc_core.rope_frequencies(head_dim, base=base)``; the dots
    (gid ``"rotated"``) are the pairs that rotate with
    ``posenc_core.partial_rope_frequencies(head_dim, fraction, base=base,
    convention=...)``, at their index; the shaded band (gid ``"dropped"``)
    covers the pairs that do not rotate (frequency 0). ``convention`` is a
    name of :data:`CONVENTIONS` or its index (the slider's 0 or 1).
    """
    return live_spectrum(ax).update(fraction=fraction, convention=convention,
                                    base=base, head_dim=head_dim)


def live_spectrum(ax=None):
    """:func:`plot_spectrum`, built once: a :class:`posenc_plots.Live`."""
    text = _SPECTRUM.get()
    fig, ax = _axes(ax, (8, 3.8))
    ax.set_yscale("log")
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    drawn = []

    def update(fraction=0.25, convention=1, base=1e6, head_dim=512):
        name = _convention(convention)
        omega = pc.partial_rope_frequencies(head_dim, fraction, base=base,
                                            convention=name)
        full = pc.rope_frequencies(head_dim, base=base)
        pairs = omega.size
        i = np.arange(pairs)
        rotated = omega > 0
        count = int(rotated.sum())
        while drawn:
            drawn.pop().remove()
        if count < pairs:
            drawn.append(ax.axvspan(
                count - 0.5, pairs - 0.5, color="0.9", zorder=0,
                gid="dropped",
                label=text["dropped"].format(count=pairs - count)))
        drawn.append(ax.plot(i, 2 * np.pi / full, color="0.45", ls="--",
                             lw=1.2, gid="full", label=text["full"])[0])
        drawn.append(ax.scatter(
            i[rotated], 2 * np.pi / omega[rotated], s=12, color="C0",
            zorder=3, gid="rotated",
            label=text["rotated"].format(convention=text[name],
                                         count=count)))
        drawn.append(ax.legend(loc="upper left", fontsize="small"))
        ax.set_xlim(-0.5, pairs - 0.5)
        if count:
            title = text["title"].format(
                convention=text[name], fraction=f"{fraction:.2f}",
                count=count, pairs=pairs,
                longest=_fmt(2 * np.pi / omega[count - 1]))
        else:
            title = text["title_none"].format(convention=text[name],
                                              fraction=f"{fraction:.2f}")
        ax.set_title(title)
        ax.relim()
        ax.autoscale_view()

    return Live(fig, update)


SPECTRUM = Interactive(
    name="ch10_spectrum",
    plot=plot_spectrum,
    live=live_spectrum,
    sliders=(
        Slider("fraction", 0.0, 1.0, 0.05, 0.25,
               label=_SPECTRUM.en["fraction"], continuous=True),
        Slider("convention", 0, 1, 1, 1, label=_SPECTRUM.en["convention"],
               continuous=True),
        Slider("base", 2, 8, 0.25, 6, label=_SPECTRUM.en["base"], log=True,
               continuous=True),
        Slider("head_dim", 16, 512, 16, 512,
               label=_SPECTRUM.en["head_dim"], continuous=True),
    ),
    caption=_SPECTRUM.en["caption"],
    labels=_SPECTRUM,
    replaces="fig-ch10-spectrum",
)

INTERACTIVE = (SPECTRUM,)
