"""Figure and slider helpers shared by the chapters.

The mathematics lives in :mod:`posenc_core`; this package only draws. Each
chapter has its own module here (``posenc_plots.ch02_formula`` and so on)
whose plotting functions take an ``ax=None`` and return the figure, and
whose interactive figures are described by :class:`Interactive` objects
listed in the module's ``INTERACTIVE`` tuple. Tests sweep every slider of
every ``Interactive`` over its whole range, and the benchmark times them.

In Jupyter, :func:`show` displays the HTML book's live figure, drawn in
the page by ``_assets/posenc/`` (``posenc_plots.jupyter``); or, with
``renderer="png"``, :func:`show_png` builds the matplotlib figure once and,
when a slider moves, rewrites its artists (:class:`Live`) and repaints only
what changed (``posenc_plots._live``).
"""

import importlib
import pkgutil
from dataclasses import dataclass

from posenc_plots import i18n
from posenc_plots._live import Live

__all__ = ["Slider", "Interactive", "Live", "show", "show_png", "new_live",
           "all_interactive", "RENDERERS"]

# Chinese labels (POSENC_LANG=zh_CN) need a font with Chinese glyphs
i18n.use_language_font()

# In the kernel of a Chinese notebook, the lines the (English) code prints
# are shown in Chinese, through the label tables (posenc_plots.printed)
from posenc_plots import printed  # noqa: E402

printed.install()


@dataclass(frozen=True)
class Slider:
    """One slider: an argument of the plotting function and its range.

    ``log=True`` makes a slider whose steps are powers of ten between
    ``min`` and ``max`` (``step`` is then in decades), as for ``base``.
    Integer sliders have integer ``min``, ``max``, ``step`` and ``value``.
    ``continuous=True``: in Jupyter the figure follows the slider while it
    is dragged (``continuous_update``), for sliders whose update takes at
    most 50 ms (``benchmarks/run.py``); otherwise it redraws on release.
    """

    name: str
    min: float
    max: float
    step: float
    value: float
    label: str = ""
    log: bool = False
    continuous: bool = False

    def __post_init__(self):
        if not self.min <= self.value <= self.max or self.step <= 0:
            raise ValueError(f"slider {self.name!r}: need min <= value <= max")

    @property
    def is_int(self):
        return not self.log and all(
            float(v).is_integer() and isinstance(v, int)
            for v in (self.min, self.max, self.step, self.value)
        )

    def values(self):
        """Every value the slider can take (log sliders: every step)."""
        import numpy as np

        count = int(round((self.max - self.min) / self.step)) + 1
        grid = self.min + self.step * np.arange(count)
        if self.log:
            return [float(10.0**g) for g in grid]
        if self.is_int:
            return [int(v) for v in grid]
        return [float(v) for v in grid]


@dataclass(frozen=True)
class Interactive:
    """A figure with sliders: ``plot(**{s.name: value}, ax=None)``.

    ``live``, if given, builds the figure once without drawing any values
    and returns a :class:`Live` whose ``update(**values)`` draws them (so
    ``live().update(**values)`` is the figure ``plot(**values)`` returns);
    :func:`show` uses it to answer a slider by rewriting artists instead of
    building a new figure.

    ``labels``: the :class:`posenc_plots.i18n.Labels` table (or tables) of
    the figure's words, its English slider labels and caption among them;
    :meth:`text` gives them in the current language.

    ``replaces``: the name (``mystnb.figure.name``) of the chapter's static
    figure that draws this figure at the sliders' defaults. In the HTML book
    the live figure takes that figure's place, number and caption (its PNG
    stays for readers without JavaScript; ``_ext/posenc_widgets.py``); empty:
    the live figure stands on its own, under its slider cell.
    """

    name: str
    plot: object
    sliders: tuple
    caption: str = ""
    live: object = None
    labels: object = ()
    replaces: str = ""

    def defaults(self):
        return {
            s.name: (10.0**s.value if s.log else s.value) for s in self.sliders
        }

    def tables(self):
        """The figure's label tables, as a tuple."""
        labels = self.labels
        return (labels,) if isinstance(labels, i18n.Labels) else tuple(labels)

    def text(self, english, lang=None):
        """An English label of the figure (a slider's, the caption), in
        ``lang`` (default: ``$POSENC_LANG``)."""
        if not english:
            return english
        for table in self.tables():
            if english in table.en.values():
                return table.tr(english, lang)
        if i18n.language(lang) == "en":
            return english
        raise i18n.MissingTranslation(
            f"{self.name}: {english!r} is in none of its label tables")

    def texts(self, lang=None):
        """Every label of the figure's tables, ``{key: label}``, in ``lang``
        (what the in-page figure draws with)."""
        out = {}
        for table in self.tables():
            for key, value in table.get(lang).items():
                if key in out:
                    raise ValueError(f"{self.name}: two tables have a "
                                     f"label {key!r}")
                out[key] = value
        return out


#: ``renderer`` values of :func:`show`, and the environment variable that
#: chooses one when ``show`` is not told.
RENDERERS = ("canvas", "png")
RENDERER_ENV = "POSENC_RENDERER"


def show(figure, renderer=None):
    """Display ``figure``, an :class:`Interactive`, with its sliders in
    Jupyter (with a kernel).

    ``renderer="canvas"`` (the default, when anywidget is installed and a
    chapter script draws the figure): the HTML book's live figure, drawn
    in the page (:class:`posenc_plots.jupyter.CanvasFigure`): a slider
    moves it without a round trip to the kernel. ``renderer="png"`` (the
    default otherwise, or with ``POSENC_RENDERER=png``, for front ends
    without anywidget's): matplotlib in the kernel, as below.
    """
    import os

    if renderer is None:
        renderer = os.environ.get(RENDERER_ENV) or None
    if renderer is not None and renderer not in RENDERERS:
        raise ValueError(f"renderer must be one of {RENDERERS} (or "
                         f"${RENDERER_ENV} unset), got {renderer!r}")
    if renderer != "png":
        from posenc_plots import jupyter

        try:
            import anywidget  # noqa: F401
        except ImportError:
            if renderer == "canvas":
                raise
        else:
            if renderer == "canvas" or jupyter.drawing_key(figure):
                return jupyter.canvas_figure(figure)
    return show_png(figure)


def show_png(figure):
    """Display ``figure`` with ipywidgets sliders, drawn by matplotlib.

    Returns the ``ipywidgets.interactive`` box: the sliders, then the image
    (an ``ipywidgets.Image``), then an output area for errors. The figure
    is built once (``figure.live``); a slider update rewrites its artists
    and sends a PNG repainted where it changed, cropped to the tight
    bounding box as IPython's inline backend crops it
    (``benchmarks/README.md`` times it). Sliders marked ``continuous``
    update while dragged, the others when released. Without ``live``, each
    update builds the figure again with ``figure.plot``.
    """
    import ipywidgets as w

    controls = {}
    for s in figure.sliders:
        label = figure.text(s.label) or s.name
        common = {"description": label, "step": s.step,
                  "style": {"description_width": "initial"},
                  "continuous_update": s.continuous}
        if s.log:
            controls[s.name] = w.FloatLogSlider(
                value=10.0**s.value, base=10, min=s.min, max=s.max, **common)
        elif s.is_int:
            controls[s.name] = w.IntSlider(
                value=s.value, min=s.min, max=s.max, **common)
        else:
            controls[s.name] = w.FloatSlider(
                value=s.value, min=s.min, max=s.max, **common)

    live = new_live(figure)
    # At its natural size, not stretched to the output's width as a flex
    # item of the box would be (issue 25 saw 181 %, blurred); scaled down
    # only when wider than the output. Its box never shrinks, so a move
    # that crops the figure a few pixels smaller moves nothing below it.
    image = w.Image(format="png", layout=w.Layout(
        align_self="flex-start", max_width="100%", object_fit="contain",
        object_position="left top"))
    tallest = [0]

    def update(**kwargs):
        live.update(**kwargs)
        png = live.png()
        height = png_size(png)[1]
        if height > tallest[0]:
            tallest[0] = height
            image.layout.min_height = f"{height}px"
        image.value = png

    box = w.interactive(update, clear_output=False, **controls)
    *sliders, out = box.children
    box.children = (*sliders, image, out)
    box.live = live  # the figure behind the image (tests, notebooks)
    return box


def png_size(png):
    """``(width, height)`` in pixels of the PNG bytes ``png``, read from its
    header; ``(0, 0)`` for no image."""
    if len(png) < 24 or png[12:16] != b"IHDR":
        return 0, 0
    return (int.from_bytes(png[16:20], "big"),
            int.from_bytes(png[20:24], "big"))


def new_live(figure):
    """A :class:`Live` for ``figure`` (an :class:`Interactive`), not drawn.

    Closed in pyplot, so that Jupyter's inline backend does not show it a
    second time at the end of the cell.
    """
    import matplotlib.pyplot as plt

    if figure.live is None:
        return _Rebuild(figure.plot)
    live = figure.live()
    plt.close(live.figure)
    return live


class _Rebuild:
    """A Live-like fallback: build the figure again at every update."""

    def __init__(self, plot):
        self.plot, self.figure = plot, None

    def update(self, **values):
        import matplotlib.pyplot as plt

        if self.figure is not None:
            plt.close(self.figure)
        self.figure = self.plot(**values)
        if self.figure is not None:
            plt.close(self.figure)
        return self.figure

    def png(self):
        from IPython.core.pylabtools import print_figure

        if self.figure is None:
            return b""
        return print_figure(self.figure, "png", bbox_inches="tight")


def all_interactive():
    """Every :class:`Interactive` of every chapter module, in order."""
    import posenc_plots

    found = []
    for info in sorted(pkgutil.iter_modules(posenc_plots.__path__),
                       key=lambda m: m.name):
        module = importlib.import_module(f"posenc_plots.{info.name}")
        for fig in getattr(module, "INTERACTIVE", ()):
            found.append((info.name, fig))
    return found
