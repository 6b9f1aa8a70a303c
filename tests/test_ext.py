"""The Sphinx extension's output merging (_ext/posenc_widgets.py)."""

import re
import sys
from pathlib import Path

from nbformat.v4 import new_output

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
import posenc_widgets  # noqa: E402


def stream(text, name="stdout"):
    return new_output("stream", name=name, text=text)


def test_a_print_split_by_a_flush_reads_as_printed():
    """print("a") can reach the executor as "a" and "\\n": joined exactly."""
    outputs = [stream("noise 0.1: 100%"), stream("\nnoise 1.0: 4%\n")]
    merged = posenc_widgets.merge_streams(outputs)
    assert [o["text"] for o in merged] == ["noise 0.1: 100%\nnoise 1.0: 4%\n"]


def test_streams_are_joined_only_when_consecutive():
    figure = new_output("display_data", data={"text/plain": "<Figure>"})
    outputs = [stream("a\n"), stream("b\n"), figure, stream("c\n"),
               stream("w\n", name="stderr"), stream("d\n")]
    merged = posenc_widgets.merge_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "a\nb\n"),
        ("display_data", None, None),
        ("stream", "stdout", "c\n"),
        ("stream", "stderr", "w\n"),
        ("stream", "stdout", "d\n"),
    ]


def test_the_build_uses_it():
    """setup() puts merge_streams where myst-nb's renderer looks it up."""
    from myst_nb.core import render

    class App:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    posenc_widgets.setup(App())
    assert render.coalesce_streams is posenc_widgets.merge_streams


# ---- no CDN: the scripts that would fetch from one are dropped


def _myst_nb_cdn_scripts():
    """The scripts myst-nb adds for stored ipywidgets state (its defaults)."""
    from myst_nb.core.config import ipywidgets_js_factory

    return list(ipywidgets_js_factory())


def test_myst_nb_still_adds_cdn_scripts_for_widget_state():
    """The configuration the drop guards against exists: myst-nb's default
    scripts for a notebook with stored widget state come from CDNs."""
    urls = _myst_nb_cdn_scripts()
    assert urls and all(u.startswith("https://") for u in urls)
    assert any("require" in u for u in urls)
    assert any("html-manager" in u for u in urls)


def test_page_assets_drops_what_myst_nb_and_thebe_add():
    """Fast: the page context as myst-nb (stored widget state, its CDN
    scripts) and sphinx-thebe (its configuration and loader) fill it;
    page_assets leaves the book's own scripts, each once."""
    from types import SimpleNamespace

    from myst_nb.core.config import ipywidgets_js_factory
    from sphinx.builders.html._assets import _JavaScript

    cdn = [_JavaScript(url, **kw) for url, kw in ipywidgets_js_factory().items()]
    state = _JavaScript(None, type="application/vnd.jupyter.widget-state+json",
                        body='{"state": {"m1": {}}}')
    thebe = [_JavaScript(None, body='const THEBE_JS_URL = "https://unpkg.com/'
                         'thebe@0.8.2/lib/index.js"; const thebe_selector = '
                         '".thebe"'),
             _JavaScript("sphinx-thebe.js", **{"async": "async"})]
    own = [_JavaScript("_static/documentation_options.js"),
           _JavaScript("_static/doctools.js"),
           _JavaScript(None, body="let toggleHintShow = 'Click';")]
    scripts = [own[0], *cdn, state, own[1], *thebe, own[2], own[2]]
    context = {"script_files": scripts, "css_files": []}
    app = SimpleNamespace(builder=SimpleNamespace(format="html"),
                          env=SimpleNamespace())
    posenc_widgets.page_assets(app, "index", "page.html", context, None)
    assert context["script_files"] == own


WIDGET_NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "title", "metadata": {},
         "source": "# A page with stored widget state"},
        {"cell_type": "code", "id": "slider", "execution_count": 1,
         "metadata": {}, "source": "import ipywidgets\nipywidgets.IntSlider()",
         "outputs": [{"output_type": "display_data", "metadata": {}, "data": {
             "text/plain": "IntSlider(value=0)",
             "application/vnd.jupyter.widget-view+json": {
                 "model_id": "m1", "version_major": 2, "version_minor": 0}}}]},
    ],
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3",
                       "language": "python"},
        "widgets": {"application/vnd.jupyter.widget-state+json": {
            "version_major": 2, "version_minor": 0,
            "state": {"m1": {"model_name": "IntSliderModel",
                             "model_module": "@jupyter-widgets/controls",
                             "model_module_version": "2.0.0",
                             "state": {"value": 0}}}}},
    },
    "nbformat": 4, "nbformat_minor": 5,
}

CONF = """
import re
import sys
sys.path[:0] = [{ext!r}, {root!r}]
extensions = ["myst_nb", "sphinx_thebe"] + {ours!r}
html_theme = "sphinx_book_theme"
nb_execution_mode = "off"
posenc_mathjax = {mathjax!r}
posenc_assets = {assets!r}
"""


def _build(tmp_path, ours):
    import json
    import subprocess

    root = Path(__file__).resolve().parent.parent
    src = tmp_path / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF.format(
        ext=str(root / "_ext"), root=str(root), ours=ours,
        mathjax=str(root / "node_modules" / "mathjax" / "es5"),
        assets=str(root / "_assets" / "posenc")))
    (src / "index.ipynb").write_text(json.dumps(WIDGET_NOTEBOOK))
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E",
         str(src), str(tmp_path / "html")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return (tmp_path / "html" / "index.html").read_text(encoding="utf-8")


def _scripts(page):
    import re

    return re.findall(r"<script\b[^>]*>.*?</script>", page, flags=re.S)


def test_cdn_scripts_are_dropped_where_they_appear(tmp_path):
    """A notebook with stored widget state and sphinx-thebe loaded (as
    Jupyter Book loads it): without the extension the page fetches
    require.js and the widgets' HTML manager from CDNs and carries the
    state and thebe's configuration; with it, none of these is left and no
    script comes from outside the book."""
    without = _scripts(_build(tmp_path / "without", []))
    cdn = _myst_nb_cdn_scripts()
    for url in cdn:
        assert any(url in s for s in without), url
    assert any("widget-state+json" in s for s in without)
    assert any("thebe_selector" in s for s in without)
    assert any("https://" in s and "src=" in s for s in without)
    with_ext = _scripts(_build(tmp_path / "with", ["posenc_widgets"]))
    for url in cdn:
        assert not any(url in s for s in with_ext), url
    assert not any("widget-state+json" in s for s in with_ext)
    # thebe's loader and its configuration script (the inert
    # text/x-thebe-config block of the theme runs nothing)
    assert not any("THEBE_JS_URL" in s or "sphinx-thebe" in s for s in with_ext)
    assert not [s for s in with_ext if re.search(r'src="(https?:)?//', s)]
    assert len(with_ext) >= 3  # the page's own scripts are still there
