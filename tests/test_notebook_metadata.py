"""Opening a chapter in JupyterLab changes nothing (issue 25).

When a notebook opens, JupyterLab starts its kernel and writes the
kernel's spec (``name``, ``display_name``, ``language``) into
``metadata.kernelspec`` and the kernel's ``language_info`` into
``metadata.language_info``. Where the stored values differ, the notebook is
"modified" the moment it opens and closing it untouched asks to save. The
stored metadata must therefore be what the book's kernel (ipykernel's
``python3``) reports. ``tests/test_jupyterlab.py`` checks the same in a real
JupyterLab.
"""

import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.ipkernel import IPythonKernel
from jupyter_client.kernelspec import KernelSpecManager

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def expected_kernelspec():
    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language,
            "name": "python3"}


def expected_language_info():
    """The kernel's language_info but its Python version.

    The version is that of whoever executed the notebook last (nbconvert
    and nbval store it too); every other field is fixed by ipykernel.
    """
    info = dict(IPythonKernel.language_info)
    info.pop("version")
    return info


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 9


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_kernel_metadata_is_what_jupyterlab_writes(path):
    meta = nbformat.read(path, as_version=4).metadata
    assert dict(meta.get("kernelspec", {})) == expected_kernelspec(), (
        f"{path.name}: metadata.kernelspec is not what JupyterLab writes on "
        f"opening it, so the notebook would open modified")
    info = dict(meta.get("language_info", {}))
    version = info.pop("version", None)
    assert info == expected_language_info(), path.name
    assert isinstance(version, str) and version.startswith("3."), path.name


def test_the_expected_kernelspec_is_ipykernels():
    # A guard on the test itself: the display name JupyterLab shows for the
    # book's kernel is ipykernel's, not the bare "Python 3".
    assert expected_kernelspec()["display_name"] == "Python 3 (ipykernel)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_slider_cells_store_the_note_to_run_them(path):
    # Without a kernel JupyterLab has no widget model for a stored slider
    # output and shows "Error displaying widget: model not found": the
    # stored output is the note to run the cell instead.
    from posenc_plots.jupyter import fallback_output, is_slider_cell

    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if is_slider_cell(cell):
            assert cell.outputs == [fallback_output("en")], (
                f"{path.name} cell {index}: run "
                f"`python -m posenc_plots.jupyter {path.relative_to(ROOT)}`")


def test_the_note_says_to_run_the_cell_in_both_languages():
    from posenc_plots.jupyter import fallback_output

    en = fallback_output("en")["data"]
    zh = fallback_output("zh_CN")["data"]
    assert "Run this cell" in en["text/plain"]
    assert "运行此单元格" in zh["text/plain"]
    assert en["text/markdown"] == f"*{en['text/plain']}*"


def test_chinese_notebooks_store_the_chinese_note():
    sys.path.insert(0, str(ROOT / "tools"))
    import i18n

    from posenc_plots.jupyter import fallback_output, is_slider_cell

    path = ROOT / "chapters" / "02_sinusoidal_formula.ipynb"
    nb = nbformat.read(path, as_version=4)
    po = i18n.po_path_of("chapters/02_sinusoidal_formula.ipynb", ROOT)
    zh = i18n.translate_notebook(nb, po, clear_outputs=True)
    sliders = [c for c in zh.cells if is_slider_cell(c)]
    assert sliders
    assert all(c.outputs == [fallback_output("zh_CN")] for c in sliders)


# --------------------------------------------------------------------------
# Solutions folded as in the HTML book (tools/fold_solutions.py)

def _fold():
    sys.path.insert(0, str(ROOT / "tools"))
    import fold_solutions

    return fold_solutions


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_solutions_are_stored_folded(path):
    fold = _fold()
    nb = nbformat.read(path, as_version=4)
    folded, leaking = fold.solution_cells(nb)
    assert folded, f"{path.name}: no cell inside a solution found"
    assert fold.unfolded(nb) == [], (
        f"{path.name}: run `python tools/fold_solutions.py "
        f"{path.relative_to(ROOT)}`")
    # A cell that ends a solution and goes on with an exercise would show
    # the solution's end: split it after {solution-end}.
    assert leaking == [], f"{path.name}: cells {leaking}"


def test_folding_finds_every_cell_of_a_solution():
    # Chapter 4, exercise 1: the solution opens in cell 45 (the text after
    # {solution-start} is inside jupyterlab-myst's closed box), goes on in
    # a code cell and a markdown cell that closes it; exercise 2 opens in
    # the cell after.
    fold = _fold()
    nb = nbformat.read(ROOT / "chapters" / "04_binary_counter.ipynb",
                       as_version=4)
    folded, _ = fold.solution_cells(nb)
    assert {46, 47} <= set(folded) and not {44, 45, 48} & set(folded)
    assert nb.cells[46].cell_type == "code"
    assert "{solution-end}" in nb.cells[47].source
    assert "{exercise}" in nb.cells[48].source
    code, text = nb.cells[46], nb.cells[47]
    assert code.metadata.jupyter == {"source_hidden": True,
                                     "outputs_hidden": True}
    assert code.metadata.collapsed is True
    # a folded markdown cell's bar (its first line) shows nothing
    assert text.source.split("\n")[0] == ""


def test_an_unfolded_solution_is_found():
    fold = _fold()
    nb = nbformat.read(ROOT / "chapters" / "04_binary_counter.ipynb",
                       as_version=4)
    del nb.cells[46].metadata["jupyter"]
    assert fold.unfolded(nb) == [46]
    nb.cells[44].metadata["jupyter"] = {"source_hidden": True}
    assert fold.unfolded(nb) == [44, 46]


def test_chinese_notebooks_keep_the_folds():
    sys.path.insert(0, str(ROOT / "tools"))
    import i18n

    fold = _fold()
    path = ROOT / "chapters" / "06_rope.ipynb"
    nb = nbformat.read(path, as_version=4)
    zh = i18n.translate_notebook(
        nb, i18n.po_path_of("chapters/06_rope.ipynb", ROOT),
        translate_outputs=True)
    assert fold.solution_cells(zh)[0] == fold.solution_cells(nb)[0]
    assert fold.unfolded(zh) == []


# --------------------------------------------------------------------------
# The assignments a teacher releases open unmodified too

def test_released_assignments_store_what_jupyterlab_writes(tmp_path):
    # The sources store nbgrader's bare "Python 3" and language_info
    # {"name": "python"}; the release writes what JupyterLab would.
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "assignments.py"), "release",
         str(tmp_path), "--assignment", "04_binary_counter"],
        capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    source = json.loads((ROOT / "assignments" / "source" / "04_binary_counter"
                         / "04_binary_counter.ipynb").read_text())
    assert source["metadata"]["kernelspec"]["display_name"] == "Python 3"
    meta = nbformat.read(tmp_path / "04_binary_counter.ipynb",
                         as_version=4).metadata
    assert dict(meta.kernelspec) == expected_kernelspec()
    info = dict(meta.language_info)
    assert info.pop("version") == ".".join(map(str, sys.version_info[:3]))
    assert info == expected_language_info()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapters_link_chapters_by_file(path):
    # jupyterlab-myst turns {doc}`06_rope` into a link to "06_rope", which
    # JupyterLab cannot open; [](06_rope.ipynb) opens the notebook there
    # and is the chapter's title in the HTML book, as {doc} was.
    import re

    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            assert "{doc}`" not in cell.source, (path.name, index)
            for target in re.findall(r"\[\]\(([^)#]+)", cell.source):
                assert (path.parent / target).is_file(), (path.name, target)
