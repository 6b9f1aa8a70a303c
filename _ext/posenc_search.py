"""The book's search: results whose snippets read like the book (issue 23).

Sphinx's search indexes every word of a page (code cells, their stored
outputs, the TeX source of the formulas, the live figures' slider labels)
and shows, under each result, 240 characters of the fetched page's text:
the article's buttons ("中文 .ipynb .pdf"), its in-page contents, the title
again, raw TeX ("\\(\\lambda_i = 2\\pi/\\omega_i\\)"), code and printed
numbers; its search words are stemmed, so that for "rotary" ("rotari") it
finds no place in the text and shows the top of the page. A Chinese query
is one word to it: 旋转角度 finds nothing, although the pages say 旋转 and
角度 (jieba split them when the index was built).

This extension, for both editions:

* **Index the prose** (``prose``): the search index is fed each page
  without its code cells, their printed outputs and stored widget state,
  display code, raw HTML (a live figure's sliders: only its caption stays)
  and formulas; figure captions and tables that a cell displays stay.
* **Snippets from the prose** (``page_text``): the same pruned page, with
  its formulas kept as TeX, is written per section into
  ``_static/posenc/data/search-text.js``; ``_assets/posenc/search.js``, on
  the search page only, writes each result's snippet from it (no fetch of
  the page, so it works from ``file://`` too), around the first place
  where the reader's words (or their stems) occur, from a sentence's
  start, about 240 characters (a Chinese character counts two), with the
  formulas typeset by the book's MathJax and the words highlighted; a
  result for a section neither repeats the section's heading nor the
  page's title, and a heading with a formula is typeset too.
* **Chinese queries** are split into the index's own words (longest match
  first), as jieba split the pages: 旋转角度 searches for 旋转 and 角度.

``html_show_search_summary`` is turned off, so that Sphinx does not fetch
every result's page for a snippet of its own. Checked by
``tests/test_browser_search.py``.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from docutils import nodes

#: The snippets' text, under the build's _static/ (no page loads it but
#: search.html; "data/": not one of the scripts a page's figures use).
TEXT_FILE = "posenc/data/search-text.js"
TEXT_VAR = "POSENC_SEARCH_TEXT"
SCRIPT = "posenc/search.js"

_CAPTION = re.compile(r'<span class="posenc-caption">(.*?)</span>', re.S)
_TAG = re.compile(r"<[^<]+?>")
_SPACE = re.compile(r"\s+")

#: Blocks whose text is one segment of a snippet.
_BLOCKS = (nodes.paragraph, nodes.caption, nodes.term, nodes.rubric,
           nodes.line, nodes.attribution, nodes.field_name, nodes.legend)


def _drop(node):
    if node.parent is not None:
        node.parent.remove(node)


def _in_title(node):
    while node is not None:
        if isinstance(node, nodes.title):
            return True
        node = node.parent
    return False


def prose(doctree, math=True):
    """A copy of ``doctree`` holding only what a reader reads as prose.

    Removed: code cells' sources, their printed and raw outputs and images
    (a figure's caption and a displayed table stay), code blocks, comments,
    raw HTML (a live figure becomes its caption, if it has one of its own),
    and, with ``math=False``, the formulas (but those of headings: the
    result's link shows the heading, which search.js then typesets).
    """
    tree = doctree.deepcopy()
    for node in list(tree.findall(nodes.Element)):
        if node.parent is None:  # inside a node already dropped
            continue
        element = node.get("nb_element") if isinstance(
            node, nodes.container) else None
        if element == "cell_code_source":
            _drop(node)
        elif isinstance(node, (nodes.literal_block, nodes.doctest_block,
                               nodes.comment, nodes.system_message,
                               nodes.substitution_definition, nodes.image)):
            _drop(node)
        elif isinstance(node, nodes.raw):
            text = node.astext()
            caption = _CAPTION.search(text) if "posenc-widget" in text else None
            if caption:
                node.replace_self(nodes.paragraph(
                    "", html.unescape(caption.group(1))))
            elif "posenc-" in text or "html" not in node.get(
                    "format", "").split():
                _drop(node)
            else:  # as Sphinx indexes raw HTML: its text
                text = re.sub(r"<(script|style).*?</\1>", "", text,
                              flags=re.I | re.S)
                node.replace_self(nodes.Text(html.unescape(_TAG.sub("", text))))
        elif not math and isinstance(node, (nodes.math, nodes.math_block)) \
                and not _in_title(node):
            _drop(node)
    return tree


def _inline(node):
    """The text of an inline run, formulas as ``\\(TeX\\)``."""
    if isinstance(node, nodes.Text):
        return node.astext()
    if isinstance(node, nodes.math):
        return "\\(" + node.astext() + "\\)"
    if isinstance(node, nodes.footnote_reference):
        return ""
    return "".join(_inline(child) for child in node.children)


def _clean(text):
    return _SPACE.sub(" ", text).strip()


def _display(node, numbers):
    """A display formula in a snippet: short ones inline, others by number."""
    tex = _clean(node.astext())
    if len(tex) <= 60 and "\\begin" not in tex and "\\\\" not in tex:
        return "\\(" + tex + "\\)"
    number = next((numbers[i] for i in node["ids"] if i in numbers), None)
    return "(" + ".".join(map(str, number)) + ")" if number else "\u2026"


def page_text(doctree, numbers=None):
    """A page's prose for the snippets.

    ``{"t": [[kind, text], ...], "s": {section id: [start, end]},
    "h": {section id: heading}}``: ``kind`` is ``"h"`` (a section's
    heading), ``"p"`` (a paragraph, caption, ...), ``"c"`` (a table cell)
    or ``"e"`` (a display formula); formulas are ``\\(TeX\\)``. A section's
    segments are ``t[start:end]``, its heading first; the page's title is
    not among them.
    """
    numbers = numbers or {}
    segments, sections, headings = [], {}, {}
    first_title = []

    def add(kind, text):
        text = _clean(text)
        if text:
            segments.append([kind, text])

    def walk(node, cell=False):
        if isinstance(node, nodes.section):
            start = len(segments)
            for child in node.children:
                walk(child, cell)
            for ident in node["ids"]:
                sections[ident] = [start, len(segments)]
            return
        if isinstance(node, nodes.title):
            text = _clean(_inline(node))
            if isinstance(node.parent, nodes.section):
                if not first_title:
                    first_title.append(text)  # the page's title
                    return
                for ident in node.parent["ids"]:
                    headings[ident] = text
                add("h", text)
            else:
                add("c" if cell else "p", text)
            return
        if isinstance(node, _BLOCKS):
            add("c" if cell else "p", _inline(node))
            return
        if isinstance(node, nodes.math_block):
            add("e", _display(node, numbers))
            return
        if isinstance(node, nodes.Text):
            add("c" if cell else "p", node.astext())
            return
        for child in node.children:
            walk(child, cell or isinstance(node, nodes.entry))

    walk(doctree)
    return {"t": segments, "s": sections, "h": headings}


# ---------------------------------------------------------------- sphinx


def _indexes(app):
    builder = app.builder
    return (getattr(builder, "search", False) and builder.format == "html"
            and hasattr(builder, "index_page"))


def index_prose(app):
    """builder-inited: the index reads each page's prose only."""
    if not _indexes(app):
        return
    builder = app.builder
    index_page = builder.index_page

    def index_prose_page(pagename, doctree, title):
        index_page(pagename, prose(doctree, math=False), title)

    builder.index_page = index_prose_page


def no_fetched_summary(app, config):
    """config-inited: search.js writes the snippets, Sphinx fetches none."""
    config.html_show_search_summary = False


def collect(app, doctree, docname):
    """doctree-resolved (late, after the references got their text)."""
    if not _indexes(app):
        return
    numbers = app.env.toc_fignumbers.get(docname, {}).get("displaymath", {})
    texts = app.builder.__dict__.setdefault("posenc_search_text", {})
    texts[docname] = page_text(prose(doctree), numbers)


def page_assets(app, pagename, templatename, context, doctree):
    """On the search page only: the snippets' text and script, MathJax."""
    if pagename != "search" or not _indexes(app):
        return
    config = dict(app.config.mathjax3_config or {})
    options = dict(config.get("options", {}))
    options.setdefault(
        "processHtmlClass", "tex2jax_process|mathjax_process|math|output_area")
    config["options"] = options
    app.add_js_file(None, body=f"window.MathJax = {json.dumps(config)}",
                    priority=500)
    app.add_js_file(TEXT_FILE, defer="defer", priority=500)
    app.add_js_file(SCRIPT, defer="defer", priority=501)
    app.add_js_file(app.config.mathjax_path, defer="defer", priority=502)


def write_text(app, exception):
    """build-finished: ``_static/posenc/data/search-text.js``, updated with
    the pages this build wrote (an incremental build writes only some)."""
    if exception is not None or not _indexes(app):
        return
    path = Path(app.outdir, "_static", TEXT_FILE)
    data = {}
    if path.is_file():
        old = path.read_text(encoding="utf-8")
        try:
            data = json.loads(old[old.index("{"):old.rindex("}") + 1])
        except ValueError:
            data = {}
    data.update(app.builder.__dict__.get("posenc_search_text", {}))
    data = {doc: data[doc] for doc in sorted(data) if doc in app.env.all_docs}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "/* The book's prose per page and section, for the search page's "
        "snippets (_ext/posenc_search.py) */\n"
        f"window.{TEXT_VAR} = {json.dumps(data, ensure_ascii=False)};\n",
        encoding="utf-8")


def setup(app):
    app.connect("config-inited", no_fetched_summary)
    app.connect("builder-inited", index_prose)
    app.connect("doctree-resolved", collect, priority=900)
    app.connect("html-page-context", page_assets)
    app.connect("build-finished", write_text)
    return {"version": "1.0", "parallel_read_safe": True,
            "parallel_write_safe": True}
