"""The language switch between the book's two editions.

The English edition is built into ``_build/html`` and the Chinese one
(``python tools/i18n.py build-zh``, ``language: zh_CN``) into
``_build/html/zh`` (``scripts/book.sh``). Every page of each gets, in the
article header, a link to the same page in the other edition. The link is
relative (``zh/chapters/01_why_order.html`` from the English page,
``../../chapters/01_why_order.html`` from the Chinese one), so it works
offline and from ``file://``; a ``<link rel="alternate" hreflang>`` in the
head says the same to search engines. The theme's words that its Chinese
catalogues leave untranslated are added (``THEME_WORDS``; the two sidebar
buttons of sphinx-book-theme, whose titles are not in its catalogue, are
overridden in ``i18n_templates/`` to go through it, and so are the
"Main" and "Page" labels of its navigation), and the catalogues' words
that are not mainland usage are replaced (``THEME_OVERRIDES``: 打印, not
the 列印 of sphinx-book-theme's zh_CN catalogue).

Configuration (``sphinx: config:`` in ``_config.yml``):

- ``posenc_other_edition``: the other edition's root, relative to this
  edition's root, ending in "/" ("zh/" by default; the Chinese build sets
  "../"); empty: no switch.
- ``posenc_other_language``: its language tag (BCP 47), for ``hreflang`` and
  ``lang`` ("zh-CN" by default).
- ``posenc_other_label``: the link's text, in the other language ("中文").
"""

import gettext
import re
from pathlib import Path

from sphinx import locale

TEMPLATE = "posenc-language-switch.html"
TEMPLATES = str(Path(__file__).resolve().parent / "i18n_templates")
BUTTONS = "article-header-buttons.html"
WITH_BUTTONS = "posenc-article-header-buttons.html"
DEFAULT_HEADER_END = [BUTTONS]


# The theme's words that the Chinese catalogues of Sphinx (zh_CN),
# pydata-sphinx-theme (zh) and sphinx-book-theme (zh_CN) leave untranslated
# (their msgstr is empty), in the words of the same catalogues.
THEME_WORDS = {
    "zh": {
        "Color mode": "颜色模式",
        "System Settings": "跟随系统设置",
        "Collapse Sidebar": "收起侧边栏",
        "Expand Sidebar": "展开侧边栏",
        # not in any catalogue: sphinx-book-theme's sidebar buttons (through
        # i18n_templates/) and Jupyter Book's search_bar_text
        "Toggle primary sidebar": "显示或隐藏导航栏",
        "Toggle secondary sidebar": "显示或隐藏本页目录",
        "Search this book...": "搜索本书……",
        # Sphinx's permalinks (its zh_CN catalogue has only the older
        # "Permalink to this ..." words)
        "Link to this heading": "链接到此标题",
        "Link to this equation": "链接到此公式",
        "Link to this image": "链接到此图片",
        "Link to this table": "链接到此表格",
        "Link to this code": "链接到此代码",
        "Link to this definition": "链接到此定义",
        "Link to this term": "链接到此术语",
        # sphinx-book-theme's aria-labels (through i18n_templates/)
        "Main": "全书目录",
        "Page": "本页目录",
    },
}

# Words of the theme's catalogues that are not mainland usage (the
# zh_CN catalogue of sphinx-book-theme has Taiwan's 列印): these win over
# the catalogues.
THEME_OVERRIDES = {
    "zh": {
        "Print to PDF": "打印为 PDF",
    },
}
CATALOGUES = ("sphinx", "booktheme")


class _Words(gettext.NullTranslations):
    """A catalogue from a dict: a last fallback (THEME_WORDS), or, with
    ``over``, a catalogue whose words win over ``over``'s
    (THEME_OVERRIDES)."""

    def __init__(self, words, over=None):
        super().__init__()
        self.words = dict(words)
        self.over = over

    def gettext(self, message):
        if message in self.words:
            return self.words[message]
        if self.over is not None:
            return self.over.gettext(message)
        return super().gettext(message)

    def ngettext(self, singular, plural, n):
        if self.over is not None and singular not in self.words:
            return self.over.ngettext(singular, plural, n)
        return super().ngettext(singular, plural, n)

    def add_fallback(self, fallback):
        if self.over is not None:
            self.over.add_fallback(fallback)
        else:
            super().add_fallback(fallback)


def theme_words(app):
    """Add THEME_WORDS of the build's language behind the theme's
    catalogues, and THEME_OVERRIDES in front of them."""
    words = _words(app.config.language)
    if words:
        translator = locale.translators.get(("general", "sphinx"))
        if translator is None or translator.__class__ is gettext.NullTranslations:
            locale.translators["general", "sphinx"] = _Words(words)
        else:
            translator.add_fallback(_Words(words))
    overrides = _words(app.config.language, THEME_OVERRIDES)
    if overrides:
        for catalogue in CATALOGUES:
            translator = locale.translators.get(("general", catalogue))
            if translator is None:
                translator = gettext.NullTranslations()
            locale.translators["general", catalogue] = _Words(
                overrides, over=translator)


def _as_list(value):
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value or [])


def check_config(app, config):
    """Validate the settings; put the switch in the article header."""
    other = config.posenc_other_edition
    if not isinstance(other, str) or (other and (
            not other.endswith("/") or other.startswith("/") or "://" in other)):
        raise ValueError(
            "posenc_other_edition: a relative folder ending in '/' (like 'zh/' "
            f"or '../') or '' for no switch, got {other!r}")
    if other and not (config.posenc_other_label and config.posenc_other_language):
        raise ValueError("posenc_other_label and posenc_other_language: "
                         "non-empty strings needed with posenc_other_edition")
    # first, before the themes' components folders (which they add to
    # templates_path), so that our versions of their components win
    config.templates_path = [TEMPLATES] + [
        p for p in config.templates_path if p != TEMPLATES]
    options = dict(config.html_theme_options or {})
    end = _as_list(options.get("article_header_end", DEFAULT_HEADER_END))
    if other and TEMPLATE not in end and WITH_BUTTONS not in end:
        # in the same header item as the theme's buttons, so that they
        # share a row (the items of the header's end are stacked)
        if BUTTONS in end:
            end[end.index(BUTTONS)] = WITH_BUTTONS
        else:
            end = [TEMPLATE] + end
        options["article_header_end"] = end
    # the search field's placeholder is a theme option, not a catalogue word
    words = _words(config.language)
    if options.get("search_bar_text") in words:
        options["search_bar_text"] = words[options["search_bar_text"]]
    config.html_theme_options = options


def _words(language, table=None):
    table = THEME_WORDS if table is None else table
    return table.get((language or "en").replace("-", "_").split("_")[0], {})


def switch_href(pagename, target_uri, other):
    """The relative URL of the page in the other edition."""
    return "../" * pagename.count("/") + other + target_uri


def page_context(app, pagename, templatename, context, doctree):
    other = app.config.posenc_other_edition
    if not other or app.builder.format != "html":
        return
    href = switch_href(pagename, app.builder.get_target_uri(pagename), other)
    lang = app.config.posenc_other_language
    context["posenc_switch_href"] = href
    context["posenc_switch_lang"] = lang
    context["posenc_switch_label"] = app.config.posenc_other_label
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{lang}" href="{href}" />')


ANCHORS = "_posenc_anchors.json"


_AUTO_ID = re.compile(r"id\d+")


def stable_section_id(index):
    """The id of the ``index``-th titled section (from 1) whose title makes
    no id (a Chinese title, in English too: "沈阳 到 广州 的 机票"), in both
    editions; docutils would number it with the page's other ids."""
    return f"section-{index}"


def english_section_ids(app, doctree):
    """Give each section of the Chinese edition the id of the same section
    of the English edition (``tools/i18n.py build-zh`` lists them in
    ``_posenc_anchors.json``), first, so that the headings' links, the
    page's table of contents and the language switch use it: a translated
    heading would otherwise get an id of its own ("id8"). A section whose
    English title makes no id gets ``section-N`` in both editions."""
    from docutils import nodes

    # the headings' sections (sphinx-exercise adds untitled ones of its own)
    sections = [s for s in doctree.findall(nodes.section)
                if len(s) and isinstance(s[0], nodes.title)]
    path = Path(app.srcdir) / ANCHORS
    if path.is_file():
        import json

        from sphinx.util import logging

        wanted = json.loads(path.read_text(encoding="utf-8")).get(app.env.docname)
        if wanted is None:
            return
        if len(sections) != len(wanted):
            logging.getLogger(__name__).warning(
                f"{app.env.docname}: {len(sections)} sections, but the English "
                f"source has {len(wanted)} headings (a translation merged or "
                "split a heading?): the section ids stay the Chinese ones",
                location=app.env.docname)
            return
    else:  # the English edition: its own ids
        wanted = [s["ids"][0] if s["ids"] else "" for s in sections]
    for index, (section, english) in enumerate(
            zip(sections, wanted, strict=True), 1):
        if not english or _AUTO_ID.fullmatch(english):
            english = stable_section_id(index)
        if english in section["ids"]:
            continue
        if english in doctree.ids:  # taken by another node of this page
            continue
        section["ids"].insert(0, english)
        doctree.ids[english] = section


def setup(app):
    app.add_config_value("posenc_other_edition", "zh/", "html", str)
    app.add_config_value("posenc_other_language", "zh-CN", "html", str)
    app.add_config_value("posenc_other_label", "中文", "html", str)
    app.connect("config-inited", check_config)
    app.connect("builder-inited", theme_words)
    app.connect("html-page-context", page_context)
    # before Sphinx's table-of-contents collector reads the section ids
    app.connect("doctree-read", english_section_ids, priority=100)
    return {"version": "1.0", "parallel_read_safe": True,
            "parallel_write_safe": True}
