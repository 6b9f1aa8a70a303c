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
"""

import sys

import nbformat

from posenc_plots.i18n import Labels, language

__all__ = ["JUPYTER", "fallback_output", "is_slider_cell", "set_fallbacks"]

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
