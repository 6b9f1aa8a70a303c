"""What a learner sees of a slider cell before running it in Jupyter.

A slider cell's output is an ipywidgets view whose model lives in the
kernel: a notebook reopened without that kernel has no model, and
JupyterLab shows "Error displaying widget: model not found" in its place.
The notebooks therefore store, as every slider cell's output (a cell with
``posenc_widget`` metadata), a plain note that says to run the cell
(:func:`fallback_output`), in the notebook's language: running the cell
replaces it with the live sliders. The HTML book never shows it (slider
cells are tagged ``remove-output``).

``python -m posenc_plots.jupyter chapters/*.ipynb`` writes it into the
given notebooks (after running one in Jupyter and saving it);
``tools/i18n.py build-zh`` writes the Chinese one into the Chinese
notebooks; ``tests/test_notebook_metadata.py`` fails on a slider cell
whose stored output is anything else.

**The live figure in Jupyter** (:class:`CanvasFigure`, what
:func:`posenc_plots.show` gives by default) is the HTML book's: an
`anywidget <https://anywidget.dev>`_ widget whose front end is
``_assets/posenc/posenc.js`` and the chapter's script, sent by the kernel
(no CDN, no build step: anywidget's own front end ships in its wheel). A
slider moves the figure in the page, without a round trip to the kernel;
the kernel sends only the data the scripts draw from
(:func:`posenc_plots.page.page_data`) and hears the slider positions. A
cell that runs one also shows, first, :func:`hint_output`: the same note
to run the cell, with a style rule that hides it once the figure is drawn,
and that hides "Error displaying widget: model not found" while it shows.
So a notebook run, saved and reopened without its kernel says, in every
slider cell, to run it. ``POSENC_RENDERER=png`` (or ``show(...,
renderer="png")``) keeps the matplotlib sliders (ipywidgets and PNGs
redrawn in the kernel), for front ends without anywidget's.
"""

import hashlib
import html
import json
import sys
from functools import lru_cache
from pathlib import Path

import nbformat

from posenc_plots.i18n import Labels, language

__all__ = ["JUPYTER", "ASSETS", "fallback_output", "hint_output",
           "is_slider_cell", "set_fallbacks", "canvas_figure", "module_esm",
           "HINT_CLASS"]

#: The in-page scripts and their style sheet (the HTML book's).
ASSETS = Path(__file__).resolve().parent.parent / "_assets" / "posenc"

#: The class of the note that a slider cell shows until its figure draws.
HINT_CLASS = "posenc-run-hint"

#: The words around a slider cell in Jupyter.
JUPYTER = Labels("jupyter", {
    "run": ("Run this cell (Shift+Enter) to show its sliders: they need a "
            "running kernel, which this saved notebook does not have."),
})


def is_slider_cell(cell):
    """Whether ``cell`` (a notebook cell) displays a live figure's sliders."""
    return cell.get("cell_type") == "code" and bool(
        cell.get("metadata", {}).get("posenc_widget"))


def fallback_output(lang=None):
    """The stored output of a slider cell: the note to run it, in ``lang``.

    A ``display_data`` output with ``text/markdown`` (JupyterLab renders
    it) and ``text/plain`` (any other frontend) versions of
    ``JUPYTER["run"]``.
    """
    text = JUPYTER.get(language(lang))["run"]
    return nbformat.v4.new_output(
        "display_data", data={"text/markdown": f"*{text}*",
                              "text/plain": text})


def set_fallbacks(nb, lang=None):
    """Give every slider cell of ``nb`` the fallback as its only output;
    return how many cells changed.

    A cell keeps its execution count; one without (a cleared notebook's)
    gets the count a Run All gives it, since nbval refuses a stored output
    under a cell that never ran.
    """
    out = fallback_output(lang)
    changed = 0
    code = [c for c in nb.cells if c.get("cell_type") == "code"]
    for count, cell in enumerate(code, start=1):
        if is_slider_cell(cell) and (cell.outputs != [out]
                                     or cell.execution_count is None):
            cell.outputs = [nbformat.from_dict(dict(out))]
            if cell.execution_count is None:
                cell.execution_count = count
            changed += 1
    return changed


def _hint_style():
    """Style rules of the note: hidden once the cell's figure is drawn;
    while it shows, the widget's own error (a text without elements, such
    as "Error displaying widget: model not found") is hidden."""
    area = f".jp-OutputArea:has(.{HINT_CLASS})"
    return (f".jp-OutputArea:has(.posenc-widget) "
            f".jp-OutputArea-child:has(.{HINT_CLASS}) {{display: none}}\n"
            f"{area} .jp-OutputArea-output.jupyter-widgets:not(:has(*)) "
            f"{{display: none}}\n"
            f"{area} .jp-OutputArea-child:has(> .jp-OutputArea-output"
            f".jupyter-widgets:not(:has(*))) {{display: none}}\n")


def hint_output(lang=None):
    """What a slider cell shows before its figure: the note to run it.

    A ``text/html`` note (``JUPYTER["run"]``, in ``lang``) carrying the style
    rules that hide it when the figure draws and, while it shows, the
    widget's "model not found"; and the note as ``text/plain``. As an
    IPython display object (``_repr_mimebundle_``).
    """
    text = JUPYTER.get(language(lang))["run"]

    class Hint:
        def _repr_mimebundle_(self, include=None, exclude=None):
            return {"text/html": (f'<div class="{HINT_CLASS}"><style>'
                                  f"{_hint_style()}</style><p><em>"
                                  f"{html.escape(text)}</em></p></div>"),
                    "text/plain": text}

        def __repr__(self):
            return text

    return Hint()


def _read(name):
    return (ASSETS / name).read_text(encoding="utf-8")


def module_esm(module_name):
    """The ES module of a chapter's live figures: posenc.js and the
    chapter's script, each evaluated once per page (per version), then
    ``jupyter.js``, which renders the widget."""
    lib, chapter, adapter = (_read("posenc.js"), _read(f"{module_name}.js"),
                             _read("jupyter.js"))
    version = hashlib.sha256(lib.encode()).hexdigest()[:16]
    mark = json.dumps(f"{module_name}@{version}")
    return (f"const POSENC_VERSION = {json.dumps(version)};\n"
            "if (!(globalThis.posenc && globalThis.posenc.jupyterVersion"
            " === POSENC_VERSION)) {\n"
            f"{lib}\nglobalThis.posenc.jupyterVersion = POSENC_VERSION;\n"
            "globalThis.posenc.jupyterChapters = {};\n}\n"
            f"if (!globalThis.posenc.jupyterChapters[{mark}]) {{\n"
            f"{chapter}\nglobalThis.posenc.jupyterChapters[{mark}] = true;\n}}\n"
            f"{adapter}")


def _widget_css():
    return _read("posenc.css") + """
/* In Jupyter: the controls stick to the top of the notebook's scroll area,
   and the theme's colours replace the book's. */
.posenc-jupyter .posenc-controls { top: 0; }
.posenc-jupyter, .posenc-jupyter .posenc-controls {
  background: var(--jp-layout-color0, #fff);
  border-color: var(--jp-border-color2, #d0d7de);
  color: var(--jp-content-font-color1, inherit);
}
.posenc-jupyter .posenc-note { color: var(--jp-content-font-color2, #555); }
"""


def canvas_figure(figure, lang=None):
    """The live figure of ``figure`` (an :class:`posenc_plots.Interactive`)
    as a :class:`CanvasFigure` widget; its words in ``lang`` (default:
    ``$POSENC_LANG``). ``ValueError`` if no chapter script draws it."""
    return _widget_class()(figure, lang)


def drawing_key(figure):
    """``"<module>:<name>"`` of ``figure`` if a chapter script draws it."""
    for module_name, fig in _all():
        if fig is figure:
            key = f"{module_name}:{figure.name}"
            script = ASSETS / f"{module_name}.js"
            if script.is_file() and json.dumps(key) in _read(script.name):
                return key
            return None
    return None


def _all():
    from posenc_plots import all_interactive

    return all_interactive()


@lru_cache(maxsize=1)
def _widget_class():
    import anywidget
    import traitlets

    from posenc_plots import page

    class CanvasFigure(anywidget.AnyWidget):
        """A live figure drawn in the page by the HTML book's renderer.

        ``positions``: the sliders' positions (a log slider's is its
        exponent, as on the page), as the page last reported them; setting
        it moves the sliders. ``values``: the values the figure draws with.
        """

        _esm = "export default {}"  # set per chapter in __init__
        _css = _widget_css()
        key = traitlets.Unicode().tag(sync=True)
        html = traitlets.Unicode().tag(sync=True)
        positions = traitlets.Dict().tag(sync=True)

        def __init__(self, figure, lang=None):
            key = drawing_key(figure)
            if key is None:
                raise ValueError(
                    f"figure {figure.name!r}: no chapter script in {ASSETS} "
                    "draws it (use renderer='png')")
            self.figure = figure
            super().__init__(
                _esm=module_esm(key.split(":")[0]), key=key,
                html=page.widget_html(key, figure, "__UID__", lang),
                positions={s.name: s.value for s in figure.sliders})
            self.on_msg(self._answer)

        @property
        def values(self):
            return {s.name: page.slider_value(s, self.positions[s.name])
                    for s in self.figure.sliders}

        def _answer(self, _, content, buffers):
            name = content.get("need") if isinstance(content, dict) else None
            if name is None:
                return
            try:
                data = page.page_data(name)
            except ValueError as err:
                self.send({"error": name, "message": str(err)})
                return
            self.send({"data": name},
                      buffers=[data.astype("<f8").tobytes()])

        def __repr__(self):
            return f"CanvasFigure({self.key!r})"

        def _repr_mimebundle_(self, **kwargs):
            data = super()._repr_mimebundle_(**kwargs)
            if data is not None:
                bundle, meta = data
                bundle["text/plain"] = self.figure.text(self.figure.caption) \
                    or repr(self)
                return bundle, meta
            return data

        def _ipython_display_(self):
            from IPython.display import display

            display(hint_output())
            data = self._repr_mimebundle_()
            if data is not None:
                display(data[0], metadata=data[1], raw=True)

    return CanvasFigure


def main(argv=None):
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m posenc_plots.jupyter NOTEBOOK...",
              file=sys.stderr)
        return 2
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if set_fallbacks(nb):
            nbformat.write(nb, path)
            print(f"{path}: slider cells' stored outputs set")
    return 0


if __name__ == "__main__":
    sys.exit(main())
