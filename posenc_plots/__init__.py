"""Figure and slider helpers shared by the chapters.

The mathematics lives in :mod:`posenc_core`; this package only draws. Each
chapter has its own module here (``posenc_plots.ch02_formula`` and so on)
whose plotting functions take an ``ax=None`` and return the figure, and
whose interactive figures are described by :class:`Interactive` objects
listed in the module's ``INTERACTIVE`` tuple. Tests sweep every slider of
every ``Interactive`` over its whole range, and the benchmark times them.
"""

import importlib
import pkgutil
from dataclasses import dataclass

__all__ = ["Slider", "Interactive", "show", "all_interactive"]


@dataclass(frozen=True)
class Slider:
    """One slider: an argument of the plotting function and its range.

    ``log=True`` makes a slider whose steps are powers of ten between
    ``min`` and ``max`` (``step`` is then in decades), as for ``base``.
    Integer sliders have integer ``min``, ``max``, ``step`` and ``value``.
    """

    name: str
    min: float
    max: float
    step: float
    value: float
    label: str = ""
    log: bool = False

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
    """A figure with sliders: ``plot(**{s.name: value}, ax=None)``."""

    name: str
    plot: object
    sliders: tuple
    caption: str = ""

    def defaults(self):
        return {
            s.name: (10.0**s.value if s.log else s.value) for s in self.sliders
        }


def show(figure):
    """Display ``figure`` with ipywidgets sliders (in Jupyter, with a kernel).

    Returns the ``ipywidgets.interactive`` object, which Jupyter displays.
    The figure is redrawn when a slider is released, not at every step of a
    drag: a redraw takes matplotlib 0.1-0.7 s (benchmarks/README.md), so
    redrawing at every step would queue up seconds of stale figures. (The
    in-page figures of the HTML book redraw at every step, in a few ms.)
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt

    controls = {}
    for s in figure.sliders:
        label = s.label or s.name
        style = {"description_width": "initial"}
        if s.log:
            controls[s.name] = w.FloatLogSlider(
                value=10.0**s.value, base=10, min=s.min, max=s.max,
                step=s.step, description=label, style=style,
                continuous_update=False)
        elif s.is_int:
            controls[s.name] = w.IntSlider(
                value=s.value, min=s.min, max=s.max, step=s.step,
                description=label, style=style, continuous_update=False)
        else:
            controls[s.name] = w.FloatSlider(
                value=s.value, min=s.min, max=s.max, step=s.step,
                description=label, style=style, continuous_update=False)

    def update(**kwargs):
        figure.plot(**kwargs)
        plt.show()

    return w.interactive(update, **controls)


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
