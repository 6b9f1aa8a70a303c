"""The Chinese edition read as a reader reads it: no English sentence left.

The PO files' tests (``tests/test_i18n.py``) see only what ``update``
extracts; this test reads what a reader of the Chinese edition gets, built
from the English sources, so that an English caption, alt text, printed
line, formula word, bibliography note or theme word that nothing extracts
fails here:

* **The Chinese pages** (``test_no_english_sentence_on_a_chinese_page``),
  built from the notebooks' stored outputs (``tools/i18n.py build-zh``
  translates them as the Chinese kernel prints them) as the browser tests
  build them, every page of the book and its index and search pages: their
  text, the words of their formulas (``\\text{}``), and the attributes read
  aloud or shown (``alt``, ``title``, ``aria-label``, ``placeholder``).
* **The Chinese notebooks** the learners open
  (``test_no_english_sentence_in_a_chinese_notebook``): markdown, figure
  captions and alt texts, and stored printed outputs.
* Outside the check, as ``tools/zh_reader.py`` says: code, names, the
  bibliography's entries and the citations (authors and titles of English
  works), quotations followed by their translation, and the short reviewed
  list ``zh_reader.ALLOWED``.
* **Citations the Chinese way** (``test_citations_read_the_chinese_way``):
  "Press 等人（2022）", full-width brackets, never "et al."; the notes of
  the bibliography are the Chinese ones, in the References page and in the
  citations' tooltips.
* **The same sections** (``test_sections_have_the_same_ids_in_both_editions``):
  each page's sections have the English edition's ids, so that a link to a
  section and the language switch land on the same section.
* **The check bites** (``test_the_reader_finds_english``): a page with
  English in each of the places above is caught, the Chinese one is not.
"""

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))
import i18n  # noqa: E402
import zh_reader  # noqa: E402
from test_browser import EN_PAGES, build_zh_html  # noqa: E402


@pytest.fixture(scope="session")
def zh_site(book_html):
    """The book's html folder with the Chinese edition in ``zh/`` (the
    browser tests' build, shared when they run in the same process)."""
    zh = book_html / "zh"
    if not (zh / "index.html").is_file():
        build_zh_html(zh)
    return book_html


@pytest.mark.parametrize("name", EN_PAGES)
def test_no_english_sentence_on_a_chinese_page(zh_site, name):
    text = (zh_site / "zh" / name).read_text(encoding="utf-8")
    found = zh_reader.english_in_html(text, name)
    assert not found, (
        f"{len(found)} English sentences on zh/{name} (translate them: "
        "paragraphs, captions and alt texts in the chapter's PO file after "
        "`python tools/i18n.py update`; printed lines in "
        "posenc_plots/printed.py and figures.po; theme words in "
        "_ext/posenc_i18n.py):\n" + "\n".join(found[:40]))


@pytest.fixture(scope="module")
def zh_notebooks(tmp_path_factory):
    """The Chinese notebooks with their stored outputs translated."""
    out = tmp_path_factory.mktemp("zh-reader") / "zh_src"
    i18n.build_zh(out, ROOT, clear_outputs=False)
    return out


@pytest.mark.parametrize("doc", [d for d in i18n._toc_files(ROOT)
                                 if d.endswith(".ipynb")])
def test_no_english_sentence_in_a_chinese_notebook(zh_notebooks, doc):
    nb = nbformat.read(zh_notebooks / doc, as_version=4)
    found = zh_reader.english_in_notebook(nb, doc)
    assert not found, "\n".join(found[:40])


def test_citations_read_the_chinese_way(zh_site):
    chapter = (zh_site / "zh" / "chapters" / "05b_t5_alibi.html").read_text(
        encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", chapter)
    assert re.search(r"Press 等人（2022）", text), "no textual citation 等人（year）"
    assert re.search(r"（[^（）]+ 等人，20\d\d(；[^（）]+，\d{4})*）", text), (
        "no parenthetical citation （Author 等人，year）")
    for page in (zh_site / "zh").rglob("*.html"):
        if page.name in ("references.html", "glossary.html") or "_" in page.parts[-2]:
            continue  # the entries, the glossary's English column; _static
        read = " ".join(text for _, text in zh_reader.html_chunks(
            page.read_text(encoding="utf-8")))
        assert "et al." not in read, page
    notes = [value for _, value, _ in i18n.bib_messages(ROOT)
             if re.search(r"\b(the|of|in|with|and)\b", value)]
    assert notes, "references.bib has no English note: the check checks nothing"
    refs = (zh_site / "zh" / "references.html").read_text(encoding="utf-8")
    tooltips = (zh_site / "zh" / "chapters" / "02_sinusoidal_formula.html").read_text(
        encoding="utf-8")
    for note in notes:
        plain = re.sub(r"\\texttt\{([^{}]*)\}|[{}]", r"\1", note)[:40]
        assert plain not in refs and plain not in tooltips, plain


def _section_ids(path):
    return re.findall(r'<section id="([^"]+)"', path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", [n for n in EN_PAGES
                                  if n not in ("genindex.html", "search.html")])
def test_sections_have_the_same_ids_in_both_editions(zh_site, name):
    en = _section_ids(zh_site / name)
    zh = _section_ids(zh_site / "zh" / name)
    assert zh == en, f"{name}: the Chinese sections' ids differ: {en} != {zh}"


PAGE = """<html><head><title>t</title></head><body><main><article>
<p>{prose}</p>
<figure><img alt="{alt}" src="x.png"><figcaption><p>{caption}</p></figcaption></figure>
<div class="cell_output"><div class="output stream"><pre>{printed}</pre></div></div>
<span class="math notranslate">\\(x = 1 \\text{{{math}}}\\)</span>
<a class="headerlink" href="#x" title="{title}">#</a>
<div class="cell_input"><pre>print("the code stays English, as it should")</pre>
</div><p>引用 <span>Press 等人</span><a class="reference internal"
href="../references.html#id1"
title="Ofir Press, Noah A. Smith, and Mike Lewis. Train Short.">（2022）</a>。</p>
</article></main></body></html>"""

ENGLISH = dict(prose="The encoding of each position is a vector of the same width.",
               alt="Heatmap of the encoding matrix, positions down the rows",
               caption="The encoding matrix for 100 positions.",
               printed="largest angle in training: 1.15 degrees",
               math="for every", title="Link to this heading")
CHINESE = dict(prose="每个位置的编码是一个同样宽度的向量。",
               alt="编码矩阵的热图，行是位置", caption="100 个位置的编码矩阵。",
               printed="训练中的最大角度：1.15 度", math="对所有", title="链接到此标题")


def test_the_reader_finds_english():
    assert zh_reader.english_in_html(PAGE.format(**CHINESE), "p.html") == []
    for key in ENGLISH:
        page = PAGE.format(**{**CHINESE, key: ENGLISH[key]})
        found = zh_reader.english_in_html(page, "p.html")
        assert found, f"English {key} not found"
    assert zh_reader.english_sentences("（Vaswani et al., 2017）") == ["et al."]
    # a quotation with its translation is a citation; without, English
    quoted = "作者写道“there isn't a very strong trend”（没有很明显的趋势）。"
    assert zh_reader.english_sentences(quoted) == []
    assert zh_reader.english_sentences("作者写道“there isn't a very strong trend”。")
    titled = "它沿着论文“Base of RoPE Bounds Context Length”的思路。"
    assert zh_reader.english_sentences(titled) == []
    untitled = "它沿着“Base of RoPE Bounds Context Length”的思路。"
    assert zh_reader.english_sentences(untitled)
    said = "它说“matches the code in the repo”，即与代码一致。"
    assert zh_reader.english_sentences(said) == []
    # the glossary's English column is English on purpose, its other columns not
    table = ("<table><tr><td><p>the fastest pair</p></td><td><p>最快的维度对</p></td>"
             "</tr></table>")
    assert zh_reader.english_in_html(table, "glossary.html") == []
    assert zh_reader.english_in_html(table, "notation.html")


def test_the_notebook_reader_finds_english():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("中文的段落，`code is fine here`。"),
                nbformat.v4.new_code_cell("print('x')")]
    assert zh_reader.english_in_notebook(nb, "nb") == []
    nb.cells[1].outputs = [nbformat.v4.new_output(
        "stream", name="stdout", text="the first slow pair is i = 35\n")]
    assert zh_reader.english_in_notebook(nb, "nb")
    nb.cells[1].outputs = []
    nb.cells[1].metadata["mystnb"] = {"figure": {"caption": "A caption of the figure."}}
    assert zh_reader.english_in_notebook(nb, "nb")
    nb.cells[1].metadata = {}
    nb.cells[0].source = "中文 $$x \\quad \\text{for every } y$$"
    assert zh_reader.english_in_notebook(nb, "nb")
