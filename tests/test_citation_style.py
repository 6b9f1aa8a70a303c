"""Citations read as author and year, never as numbers (fast, no build).

The book's configuration (``_config.yml``: ``bibtex_reference_style``,
``bibtex_default_style``) and its extension (``_ext/posenc_bibliography.py``)
are looked up as sphinxcontrib-bibtex looks them up during a build, and the
citations of two entries of references.bib are formatted with them:
{cite:p} gives "(Vaswani et al., 2017)", {cite:t} "Vaswani et al. (2017)".
A configuration or a registered style that falls back to numbered labels
("[1]") fails here, without building the book (tests/test_browser.py checks
the built pages). The Chinese edition's generated configuration keeps the
same styles.
"""

import re
import sys
from pathlib import Path

import pybtex.plugin
import pytest
import yaml
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(ROOT / "tools"))
import posenc_bibliography  # noqa: E402


def _config(text):
    return yaml.safe_load(text)["sphinx"]["config"]


@pytest.fixture(scope="module")
def cite():
    """cite(role, keys) -> the citation's text, as the build formats it."""
    from sphinxcontrib.bibtex.plugin import find_plugin
    from sphinxcontrib.bibtex.style.referencing import format_references
    from sphinxcontrib.bibtex.style.template import SphinxReferenceInfo

    config = _config((ROOT / "_config.yml").read_text(encoding="utf-8"))
    posenc_bibliography.register()  # what the extension's setup() does
    style = find_plugin("sphinxcontrib.bibtex.style.referencing",
                        config["bibtex_reference_style"])()
    formatting = pybtex.plugin.find_plugin(
        "pybtex.style.formatting", config["bibtex_default_style"])()
    bib = parse_file(str(ROOT / "references.bib"), bib_format="bibtex")
    info = SphinxReferenceInfo(None, "chapters/06_rope", "references", "id",
                               None, "", "")

    def cite(role, keys):
        entries = [bib.entries[k] for k in keys]
        formatted = {f.key: f for f in formatting.format_entries(entries)}
        return str(format_references(
            style, role, [(e, formatted[e.key], info) for e in entries]))

    return cite


def test_parenthetical_and_textual_citations_name_authors_and_years(cite):
    assert cite("p", ["vaswani2017attention"]) == "(Vaswani et al., 2017)"
    assert cite("t", ["vaswani2017attention"]) == "Vaswani et al. (2017)"
    assert cite("p", ["vaswani2017attention", "press2022train"]) == (
        "(Vaswani et al., 2017; Press et al., 2022)")
    assert cite("t", ["press2022train"]) == "Press et al. (2022)"


def test_no_citation_is_a_number(cite):
    for role in ("p", "t"):
        for keys in (["vaswani2017attention"], ["press2022train"],
                     ["vaswani2017attention", "press2022train"]):
            text = cite(role, keys)
            # "[1]", "[2, 1]", "(1)": a label, not an author and a year
            assert not re.search(r"[\[(]\s*\d{1,3}\s*[\]),;]", text), text
            assert re.search(r"\b(19|20)\d\d\b", text), text


def test_the_chinese_edition_keeps_the_styles():
    import i18n

    en = _config((ROOT / "_config.yml").read_text(encoding="utf-8"))
    zh = _config(i18n._translated_config(ROOT, {}, []))
    assert zh["bibtex_default_style"] == en["bibtex_default_style"]
    # the same author-year citations, in their Chinese form (等人, （）)
    assert en["bibtex_reference_style"] == posenc_bibliography.REFERENCE_STYLE
    assert zh["bibtex_reference_style"] == posenc_bibliography.REFERENCE_STYLE_ZH


def test_and_others_reads_et_al(cite):
    """BibTeX's "and others" (the Llama 3 paper lists hundreds of authors)
    is "et al.", not "Grattafiori and others"."""
    assert cite("p", ["grattafiori2024llama3"]) == "(Grattafiori et al., 2024)"
    assert cite("t", ["grattafiori2024llama3"]) == "Grattafiori et al. (2024)"
