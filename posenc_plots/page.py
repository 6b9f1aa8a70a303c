"""The live figure of an :class:`posenc_plots.Interactive`, as markup.

One description of a live figure for both places it lives: the HTML book
(``_ext/posenc_widgets.py`` writes :func:`widget_html` into the page) and
Jupyter (:class:`posenc_plots.jupyter.CanvasFigure` renders the same markup
in the notebook). ``_assets/posenc/posenc.js`` turns it into sliders and a
canvas, drawn by the chapter's script.

It also makes the data those scripts draw from (:func:`page_data`): numpy's
seeded standard normals and chapter 8's committed results, which the book
writes as ``data/*.js`` files and Jupyter's widget gets from its kernel.
"""

import html
import importlib
import json
import re

import numpy as np

from posenc_plots import i18n

__all__ = ["NORMAL_SEEDS", "NORMAL_COUNT", "find_interactive", "slider_value",
           "decimals", "readout", "spec_json", "widget_html", "page_data"]

#: Seeds and length of the standard-normal streams the figures draw from.
NORMAL_SEEDS = range(10)
NORMAL_COUNT = 2 * 128 * 128


def _i18n():
    return i18n


def find_interactive(key):
    """The :class:`posenc_plots.Interactive` named by ``"<module>:<name>"``."""
    if not isinstance(key, str) or key.count(":") != 1:
        raise ValueError(
            f"posenc_widget must be '<module>:<name>', got {key!r}")
    module_name, name = key.split(":")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", module_name):
        raise ValueError(f"bad module name in posenc_widget {key!r}")
    module = importlib.import_module(f"posenc_plots.{module_name}")
    for fig in getattr(module, "INTERACTIVE", ()):
        if fig.name == name:
            return fig
    names = [f.name for f in getattr(module, "INTERACTIVE", ())]
    raise ValueError(
        f"posenc_plots.{module_name}.INTERACTIVE has no figure named "
        f"{name!r}; it has {names}")


def slider_value(slider, position):
    """The value of ``slider`` at ``position`` (a point of its own grid)."""
    return 10.0**position if slider.log else position


def decimals(step):
    """Decimals needed to write multiples of ``step`` (0.25 -> 2)."""
    text = repr(float(step))
    if "e" in text:
        return 6
    return len(text.split(".")[1].rstrip("0"))


def readout(slider, position):
    """The text shown next to a slider (and read by screen readers).

    Integer sliders show the integer (with thousands separators, as the
    prose and the figures' titles write numbers); other linear sliders show
    as many decimals as their step has; log sliders show ``10**position`` with
    thousands separators above 1000 and four significant digits below.
    ``posenc.js`` formats the same way (the browser tests check it).
    """
    if slider.is_int:
        return f"{int(round(position)):,}"
    if not slider.log:
        return f"{position:.{decimals(slider.step)}f}"
    value = 10.0**position
    if value >= 1000:
        return f"{round(value):,}"
    return f"{value:.4g}"


def spec_json(key, fig, lang=None):
    """What posenc.js needs to know about a figure, as JSON.

    ``lang``: the language of its words (default: ``$POSENC_LANG``).
    ``labels`` is the figure's label table, which the chapter's script
    draws with; ``showing`` starts the screen-reader text of the values.
    """
    return {
        "key": key,
        "caption": fig.text(fig.caption, lang),
        "labels": fig.texts(lang),
        "showing": _i18n().PAGE.get(lang)["showing"],
        "sliders": [
            {"name": s.name, "label": fig.text(s.label, lang) or s.name,
             "min": s.min,
             "max": s.max, "step": s.step, "value": s.value,
             "log": bool(s.log), "int": bool(s.is_int),
             "decimals": 0 if s.is_int else decimals(s.step)}
            for s in fig.sliders
        ],
    }


def widget_html(key, fig, uid, lang=None, host=False):
    """The live figure's HTML: sliders (disabled until the script runs).

    ``lang``: the language of its words (default: ``$POSENC_LANG``).
    ``host``: it goes into a static figure (``Interactive.replaces``),
    whose number and caption it takes: no caption and no ``<noscript>``
    of its own (without JavaScript the static figure's PNG shows).
    """
    esc = html.escape
    page = _i18n().PAGE.get(lang)
    rows = []
    for s in fig.sliders:
        sid = f"{uid}-{s.name}"
        text = readout(s, s.value)
        label = fig.text(s.label, lang) or s.name
        rows.append(
            f'<div class="posenc-control">'
            f'<label for="{sid}">{esc(label)}'
            f'{esc(page["log"]) if s.log else ""}</label>'
            f'<input type="range" id="{sid}" name="{esc(s.name)}" '
            f'min="{s.min!r}" max="{s.max!r}" step="{s.step!r}" '
            f'value="{s.value!r}" aria-valuetext="{esc(text)}" disabled>'
            f'<output id="{sid}-out" for="{sid}" aria-hidden="true">'
            f'{esc(text)}</output></div>'
        )
    caption = esc(fig.text(fig.caption, lang))
    spec = esc(json.dumps(spec_json(key, fig, lang)), quote=True)
    head = (
        f'<div class="posenc-widget{" posenc-in-figure" if host else ""}" '
        f'id="{uid}" data-posenc-key="{esc(key)}" '
        f'data-posenc-state="static" data-posenc-spec="{spec}">\n'
        f'<div class="posenc-controls" role="group" '
        f'aria-label="{esc(page["sliders"])}">{"".join(rows)}</div>\n')
    if host:
        return (head + f'<canvas class="posenc-canvas" role="img" '
                f'aria-label="{caption}"></canvas>\n</div>\n')
    return (
        head +
        f'<figure class="posenc-figure">'
        f'<canvas class="posenc-canvas" role="img" '
        f'aria-label="{caption}"></canvas>'
        f'<figcaption><span class="posenc-caption">{caption}</span> '
        f'<span class="posenc-note">{esc(page["note"])}'
        f'</span></figcaption></figure>\n'
        f'<noscript><p class="posenc-noscript">{esc(page["noscript"])}</p>'
        f'</noscript>\n</div>\n'
    )


def page_data(name):
    """The float64 array that the page scripts know as data ``name``.

    ``"normals-<seed>"`` (seed in :data:`NORMAL_SEEDS`):
    ``np.random.default_rng(seed).standard_normal(NORMAL_COUNT)``;
    ``"ch08-results"``: :func:`posenc_plots.ch08_lab.explore_data` (the
    committed results of chapter 8).
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    match = re.fullmatch(r"normals-(\d+)", name)
    if match and int(match.group(1)) in NORMAL_SEEDS:
        seed = int(match.group(1))
        return np.random.default_rng(seed).standard_normal(NORMAL_COUNT)
    if name == "ch08-results":
        from posenc_plots import ch08_lab

        return np.asarray(ch08_lab.explore_data(), dtype=float)
    raise ValueError(
        f"name must be 'normals-<seed>' with seed in 0..{NORMAL_SEEDS[-1]} "
        f"or 'ch08-results', got {name!r}")
