"""Live in-page figures and an offline HTML book, for Jupyter Book 1.

A Sphinx extension, registered in ``_config.yml`` under
``sphinx.local_extensions``. It does five things:

1. **Live figures.** A notebook code cell whose metadata has
   ``"posenc_widget": "<module>:<name>"`` (e.g. ``"ch02_formula:explore_encoding"``)
   gets, right after it in the HTML, a live figure: one labelled
   ``<input type=range>`` per :class:`posenc_plots.Slider` of the
   :class:`posenc_plots.Interactive` called ``<name>`` in
   ``posenc_plots.<module>.INTERACTIVE`` (so the ranges are read from the
   Python specs and cannot drift), a canvas and a caption. When the
   ``Interactive`` names a static figure of the page (``replaces``), the
   live figure goes into that figure instead, in its place, with its number
   and caption: one figure, not two (the PNG stays for readers without
   JavaScript, and in Jupyter). The figure is
   drawn by ``_assets/posenc/posenc.js`` (the formulas of ``posenc_core``
   in JavaScript, a small canvas plotter and the slider runtime) and the
   chapter's ``_assets/posenc/<module>.js``, loaded only on pages that use
   them. The slider cell itself is tagged ``remove-output``: its
   ipywidgets need a kernel. It is also tagged ``skip-execution``, so the
   build does not run it (nbval and Jupyter still do): now and then,
   nbclient, which executes the notebooks for the build, missed the
   reply to a cell that displays ipywidgets and waited for the whole cell
   timeout (300 s) before going on.
2. **Offline MathJax.** MathJax comes from the npm package pinned in
   ``package.json`` (``npm ci`` installs it into ``node_modules``); it is
   copied into ``_static/mathjax`` and ``mathjax_path`` points there.
3. **No CDN, no console errors.** On every page it drops the scripts that
   would fetch from a CDN (require.js and the ipywidgets HTML manager that
   myst-nb adds for stored widget state, and that state itself) and
   sphinx-thebe's scripts (thebe is disabled; its configuration script is
   emitted twice and the second copy raises a SyntaxError), and it sets
   the theme's ``default_mode`` (without one the theme logs an error).
4. **Data.** Figures that draw seeded random numbers get them from numpy
   itself: ``_static/posenc/data/normals-<seed>.js`` holds
   ``np.random.default_rng(seed).standard_normal(NORMAL_COUNT)``, loaded on
   demand.
5. **Accessibility** (checked with axe-core by ``tests/test_browser.py``).
   Every page loads ``_assets/posenc/book.css`` (darker links on the
   exercise boxes' tint, the References page without numeric labels). Two
   of the theme's buttons are rendered from ``_ext/templates/``: the search
   field without an ``aria-label`` that hid its visible shortcut text, and
   the colour-mode switch with its icons hidden from screen readers (their
   titles contradicted the button's name). The References list's entries
   get ``role="listitem"`` (docutils writes ``doc-biblioentry``, which
   ARIA 1.3 deprecates and which a ``role="list"`` may not contain).

Nothing here is fetched at view time from anywhere but the book itself.

**Language.** The words of a live figure (slider labels, caption, the note,
and the labels the chapter's script draws) come from the figure's
:class:`posenc_plots.i18n.Labels` tables in the build's language
(``language`` in the Sphinx configuration: ``zh_CN`` gives Chinese, which
``document.documentElement.lang`` then reads ``zh-CN``): the spec carries
the figure's table (``labels``), so the page's scripts hold no words of
their own. The build also sets ``POSENC_LANG`` to that language, so that
the notebooks it executes draw their matplotlib figures in it too.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util import logging

from posenc_plots.page import (  # noqa: F401 (the tests use them from here)
    NORMAL_COUNT,
    NORMAL_SEEDS,
    decimals,
    find_interactive,
    page_data,
    readout,
    slider_value,
    spec_json,
    widget_html,
)

logger = logging.getLogger(__name__)

#: The MathJax files copied into the build (relative to the package's es5/).
MATHJAX_KEEP = ("tex-mml-chtml.js", "input", "output/chtml", "ui", "a11y",
                "sre", "adaptors")

ASSET_DIR = "posenc"  # under _static/ in the build


def _i18n():
    from posenc_plots import i18n

    return i18n


def build_language(config):
    """The figures' language of a build: ``"en"`` or ``"zh_CN"``."""
    return _i18n().language(getattr(config, "language", None) or "en")


def set_language(app, config):
    """Executed notebooks draw in the build's language (``POSENC_LANG``)."""
    i18n = _i18n()
    os.environ[i18n.ENV] = build_language(config)
    i18n.use_language_font()


# ------------------------------------------------------------------ specs

# The markup and spec of a live figure (find_interactive, slider_value,
# decimals, readout, spec_json, widget_html) live in posenc_plots.page:
# Jupyter's widget writes the same markup. Imported at the top.


# --------------------------------------------------------------- doctree


def _env_pages(env):
    if not hasattr(env, "posenc_pages"):
        env.posenc_pages = {}
    return env.posenc_pages


def add_widgets(app, doctree):
    """After each notebook cell tagged with posenc_widget, add its figure."""
    env = app.env
    docname = env.docname
    modules = set()
    count = 0
    assets = Path(app.srcdir, app.config.posenc_assets)
    for node in list(doctree.findall(nodes.container)):
        if node.get("nb_element") != "cell_code":
            continue
        meta = node.get("cell_metadata") or {}
        key = meta.get("posenc_widget")
        if key is None:
            continue
        try:
            fig = find_interactive(key)
        except (ValueError, ImportError) as err:
            logger.warning(f"posenc_widget: {err}", location=node)
            continue
        tags = meta.get("tags", [])
        if "remove-output" not in tags:
            logger.warning(
                f"posenc_widget {key!r}: tag the cell 'remove-output' (its "
                "ipywidgets need a kernel)", location=node)
        if "skip-execution" not in tags:
            logger.warning(
                f"posenc_widget {key!r}: tag the cell 'skip-execution' (the "
                "build does not need its ipywidgets, and nbclient can stall "
                "on them for the whole cell timeout)", location=node)
        module_name = key.split(":")[0]
        script = assets / f"{module_name}.js"
        if not script.is_file():
            logger.warning(
                f"posenc_widget {key!r}: no drawing script {script}",
                location=node)
            continue
        if json.dumps(key) not in script.read_text(encoding="utf-8"):
            logger.warning(
                f"posenc_widget {key!r}: {script.name} does not register "
                f"{json.dumps(key)}", location=node)
            continue
        host = None
        if fig.replaces:
            host = next((f for f in doctree.findall(nodes.figure)
                         if fig.replaces in f["ids"]), None)
            if host is None:
                logger.warning(
                    f"posenc_widget {key!r}: no figure named "
                    f"{fig.replaces!r} on this page (Interactive.replaces "
                    "names the static figure the live one replaces)",
                    location=node)
                continue
        count += 1
        uid = f"posenc-{count}"
        lang = build_language(app.config)
        raw = nodes.raw("", widget_html(key, fig, uid, lang,
                                        host=host is not None),
                        format="html")
        if host is None:
            node.parent.insert(node.parent.index(node) + 1, raw)
        else:
            place_in_figure(host, raw, lang)
        modules.add(module_name)
    pages = _env_pages(env)
    if modules:
        pages[docname] = sorted(modules)
    else:
        pages.pop(docname, None)


def place_in_figure(figure, raw, lang):
    """Put the live figure ``raw`` into the static ``figure`` node.

    It keeps the figure's number, name and caption (its PNG shows until the
    canvas is drawn, and without JavaScript: ``posenc.css``); the note on
    the sliders is added to the caption, shown once they work.
    """
    if any(isinstance(child, nodes.raw) and "posenc-widget" in child.astext()
           for child in figure.children):
        raise ExtensionError(
            f"two live figures replace the figure {figure['ids']}")
    figure["classes"].append("posenc-host")
    figure.insert(0, raw)
    note = html.escape(_i18n().PAGE.get(lang)["note"])
    for caption in figure.findall(nodes.caption):
        caption.append(nodes.raw(
            "", f' <span class="posenc-note">{note}</span>', format="html"))
        break


def purge_doc(app, env, docname):
    _env_pages(env).pop(docname, None)


def merge_info(app, env, docnames, other):
    _env_pages(env).update(
        {d: m for d, m in _env_pages(other).items() if d in docnames})


# ------------------------------------------------------------------- html

#: Scripts never wanted: CDN loaders, stored widget state, sphinx-thebe.
_DROP = re.compile(
    r"require\.js|require\.min\.js|html-manager|embed-amd|sphinx-thebe"
    r"|thebe_selector|THEBE_JS_URL")


def page_assets(app, pagename, templatename, context, doctree):
    """Per page: drop unwanted scripts; add ours where a page has widgets."""
    if app.builder.format != "html":
        return
    scripts = context.get("script_files")
    if scripts is not None:
        keep, seen = [], set()
        for js in scripts:
            text = f"{js.filename} {js.attributes.get('body', '')}"
            kind = js.attributes.get("type", "")
            if _DROP.search(text) or kind == (
                    "application/vnd.jupyter.widget-state+json"):
                continue
            ident = (str(js.filename), tuple(sorted(js.attributes.items())))
            if ident in seen:  # e.g. togglebutton's selector, set twice
                continue
            seen.add(ident)
            keep.append(js)
        scripts[:] = keep
    css = context.get("css_files")
    if css is not None:
        css[:] = [c for c in css if "sphinx-thebe" not in c.filename]
    if context.get("body"):
        context["body"] = context["body"].replace(
            'role="doc-biblioentry"', 'role="listitem"')
    modules = _env_pages(app.env).get(pagename)
    if not modules:
        return
    app.add_css_file(f"{ASSET_DIR}/posenc.css")
    app.add_js_file(f"{ASSET_DIR}/posenc.js", defer="defer", priority=600)
    for name in modules:
        app.add_js_file(f"{ASSET_DIR}/{name}.js", defer="defer", priority=601)


def check_assets(app):
    if app.builder.format != "html":
        return
    mathjax = Path(app.srcdir, app.config.posenc_mathjax)
    if not (mathjax / "tex-mml-chtml.js").is_file():
        raise ExtensionError(
            f"MathJax not found in {mathjax}: run `npm ci` in {app.srcdir} "
            "(scripts/book.sh does)")


def _copy(src, dst):
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)


def copy_assets(app, exception):
    """Copy MathJax, the scripts and the random streams into the build."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir, "_static")
    mathjax = Path(app.srcdir, app.config.posenc_mathjax)
    for part in MATHJAX_KEEP:
        _copy(mathjax / part, static / "mathjax" / part)
    for name in ("LICENSE", "package.json"):
        _copy(mathjax.parent / name, static / "mathjax" / name)
    assets = Path(app.srcdir, app.config.posenc_assets)
    _copy(assets, static / ASSET_DIR)
    if _env_pages(app.env):
        write_normals(static / ASSET_DIR / "data")


def write_normals(folder):
    """``normals-<seed>.js``: numpy's standard normals, base64 float64."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed in NORMAL_SEEDS:
        values = page_data(f"normals-{seed}")
        data = base64.b64encode(values.astype("<f8").tobytes()).decode()
        (folder / f"normals-{seed}.js").write_text(
            f"/* np.random.default_rng({seed}).standard_normal"
            f"({NORMAL_COUNT}), little-endian float64, base64 */\n"
            f'posenc.data.define("normals-{seed}", "{data}");\n',
            encoding="utf-8")


def templates(app, config):
    """Our templates (``_ext/templates``) before the theme's components."""
    here = str(Path(__file__).resolve().parent / "templates")
    config.templates_path = [here] + [
        p for p in config.templates_path if p != here]


def theme_mode(app, config):
    """Give pydata-sphinx-theme a colour mode.

    Without one (a template variable, set through ``html_context``), its
    first script sets ``data-mode=""`` and its main script then logs "Got
    invalid theme mode" as a console error on every page.
    """
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "light")
    config.html_context = context


def merge_streams(outputs):
    """A cell's outputs with consecutive pieces of one stream joined.

    The kernel sends what a cell prints in as many pieces as its output
    thread flushed (under load, ``print("a")`` can arrive as ``"a"`` and
    ``"\\n"``), so the same cell gives different outputs in two builds.
    myst-nb's ``nb_merge_streams`` joins the pieces after stripping each
    one's trailing whitespace, which turns such a split into an extra blank
    line; this joins them exactly (as nbval does before comparing).
    """
    merged = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and last is not None
                and last.get("output_type") == "stream"
                and last["name"] == output["name"]):
            last["text"] += output["text"]  # consecutive pieces, in order
        else:
            merged.append(output)
    return merged


def setup(app):
    # myst-nb renders with nb_merge_streams (_config.yml) through this name
    from myst_nb.core import render
    render.coalesce_streams = merge_streams
    app.add_config_value("posenc_assets", "_assets/posenc", "html")
    app.connect("config-inited", theme_mode)
    app.connect("config-inited", set_language)
    app.connect("config-inited", templates)
    app.add_css_file(f"{ASSET_DIR}/book.css")
    app.add_config_value("posenc_mathjax", "node_modules/mathjax/es5", "html")
    app.connect("builder-inited", check_assets)
    app.connect("doctree-read", add_widgets)
    app.connect("env-purge-doc", purge_doc)
    app.connect("env-merge-info", merge_info)
    app.connect("html-page-context", page_assets, priority=900)
    app.connect("build-finished", copy_assets)
    return {"version": "1.0", "parallel_read_safe": True,
            "parallel_write_safe": True, "env_version": 1}
