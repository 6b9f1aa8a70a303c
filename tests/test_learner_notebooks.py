"""The learner notebooks (``tools/learner_notebooks.py``) say what the HTML
book says: every citation's text and entry, every reference's text and
target, and the numbers of sections, figures, equations and exercises,
the exercises' and solutions' titles as the HTML prints them ("Exercise
6.1 (Title)", "解答 练习 6.1 (…)"), each solution a closed dropdown linking
to its exercise, compared with the built HTML of both editions
(``book_html`` from conftest, the Chinese edition as tests/test_browser.py
builds it), for every chapter of ``_toc.yml``; and the cells folded are
those of the solutions. tests/test_jupyterlab.py checks that JupyterLab
renders them so.
"""

import html as htmllib
import re
import sys
from pathlib import Path

import nbformat
import pytest
from test_browser import build_zh_html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import fold_solutions  # noqa: E402
import i18n  # noqa: E402
import learner_notebooks as learner  # noqa: E402

bs4 = pytest.importorskip("bs4")

CHAPTERS = [d for d in learner.toc_docs(ROOT) if d.startswith("chapters/")]
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
#: the learner copies' exercise and solution boxes (an exercise inside the
#: ``{div}`` that carries its label)
EXERCISE_BOX = re.compile(r"^:{4,}\{div\}\n:label: (\S+)\n:{3,}\{admonition\} "
                          r"(.*)\n:class: exercise$", re.M)
SOLUTION_BOX = re.compile(r"^:{3,}\{admonition\} (.*)\n"
                          r":class: dropdown solution$", re.M)


def squash(text):
    """Spaces as one; quotes straight (Sphinx's smartquotes curl them in
    the HTML, and jupyterlab-myst in JupyterLab)."""
    text = re.sub("[\u2018\u2019]", "'", re.sub("[\u201c\u201d]", '"', text))
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def plain(markdown):
    """Markdown links reduced to their text."""
    return squash(LINK.sub(r"\1", markdown))


@pytest.fixture(scope="module")
def zh_source(tmp_path_factory):
    out = tmp_path_factory.mktemp("learner-zh") / "zh_src"
    i18n.build_zh(out, ROOT, clear_outputs=False)
    return out


@pytest.fixture(scope="module")
def html_zh(book_html):
    zh = book_html / "zh"
    if not (zh / "index.html").is_file():
        build_zh_html(zh)
    return zh


@pytest.fixture(scope="module", params=["en", "zh"])
def edition(request, book_html, html_zh, zh_source):
    """``(Book, folder of the HTML)`` of one edition."""
    if request.param == "en":
        return learner.Book(ROOT), book_html
    return learner.Book(zh_source), html_zh


def html_page(html, doc):
    path = html / (doc.rsplit(".", 1)[0] + ".html")
    soup = bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    return soup.select_one("article")


def html_facts(article, folded=True):
    """What the HTML shows: citations and references in the order of the
    page, numbers of equations, figures, exercises and sections. Without
    ``folded``, only what is outside the (folded) solutions."""
    def shown(el):
        return folded or el.find_parent(class_="solution") is None

    cites = [(squash(s.get_text()),
              [squash(htmllib.unescape(a.get("title", "")))
               for a in s.select("a")])
             for s in article.select("span.bibtex-citation") if shown(s)]
    refs = []
    for a in filter(shown, article.select("a.reference.internal")):
        href = a.get("href", "")
        span = a.find("span", class_=["std-numref", "std-ref", "std-doc"])
        if span is None and "#equation-" not in href:
            continue
        if a.find_parent(class_="bibtex-citation"):
            continue
        page, _, fragment = href.partition("#")
        target = (page[:-5] if page.endswith(".html") else page,
                  fragment.removeprefix("equation-"))
        refs.append((squash(a.get_text()), target))
    equations = {e.find("a")["href"].removeprefix("#equation-"):
                 squash(e.get_text()).rstrip("#")
                 for e in article.select("span.eqno") if shown(e)}
    figures = {f["id"]: squash(f.select_one(".caption-number").get_text())
               for f in article.select("figure[id]")
               if f.select_one(".caption-number") and shown(f)}
    exercises = [(e.get("id"), title_text(e.select_one("p.admonition-title")))
                 for e in article.select("div.exercise")]
    # a solution's title shows even when its box is folded
    solutions = [(title_text(t), t.select_one("a")["href"].lstrip("#"))
                 for t in article.select(
                     "div.solution > p.admonition-title")]
    sections = [squash(h.get_text()) for h in article.select(
        "h1 > span.section-number, h2 > span.section-number")]
    return cites, refs, equations, figures, exercises, solutions, sections


def title_text(element):
    """An exercise's or solution's title as text, its math as ``$...$``
    (MathJax's ``\\(...\\)`` in the HTML)."""
    return squash(re.sub(r"\\\((.*?)\\\)", r"$\1$", element.get_text()))


def learner_facts(book, doc):
    """The same, from the learner notebook and the index it was made from."""
    docname = doc.rsplit(".", 1)[0]
    nb = learner.learner_notebook(book, doc)
    record = []
    source = nbformat.read(book.source / doc, as_version=4)
    for cell in source.cells:
        if cell.cell_type == "markdown":
            learner.resolve_markdown(book, cell.source, docname, record)
        figure = (cell.metadata.get("mystnb") or {}).get("figure") or {}
        if cell.cell_type == "code" and figure.get("caption"):
            learner.resolve_markdown(book, figure["caption"], docname, record)
    cites, refs = [], []
    for kind, markdown in record:
        links = LINK.findall(markdown)
        if kind == "cite":
            cites.append((plain(markdown), [
                entry_title(book, href.rpartition("#")[2])
                for _, href in links]))
        else:
            text, href = links[0]
            page, _, fragment = href.partition("#")
            refs.append((plain(markdown),
                         (page[:-6] if page.endswith(".ipynb") else page,
                          fragment)))
    targets = [t for t in book.targets.values() if t.doc == docname]
    equations = {t.anchor: f"({t.number})" for t in targets
                 if t.kind == "equation"}
    figures = {name: book.words["figure"] % num
               for _, name, num in book.figures[doc]}
    exercises, solutions, sections = [], [], []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            exercises += [(label, plain(title)) for label, title
                          in EXERCISE_BOX.findall(cell.source)]
            solutions += [(plain(title), LINK.search(title).group(2)
                           .rpartition("#")[2])
                          for title in SOLUTION_BOX.findall(cell.source)]
            for code, part in learner.code_blocks(cell.source):
                if not code:
                    sections += re.findall(r"^#{1,2} (\d+[a-z]?(?:\.\d+)*\.) ",
                                           part, re.M)
    return cites, refs, equations, figures, exercises, solutions, sections


@pytest.mark.parametrize("doc", CHAPTERS)
def test_learner_notebook_says_what_the_html_says(edition, doc):
    book, html = edition
    got = learner_facts(book, doc)
    want = html_facts(html_page(html, doc))
    names = ("citations", "references", "equations", "figures",
             "exercises", "solutions", "sections")
    for name, ours, theirs in zip(names, got, want, strict=True):
        if name == "citations":
            assert [c[0] for c in ours] == [c[0] for c in theirs], (doc, name)
            assert ours == theirs, (doc, "citations' entries")
        elif name == "references":
            assert ours == theirs, (doc, name)
        elif name == "sections":
            assert [s.rstrip(".") for s in ours] == \
                [s.rstrip(".") for s in theirs], (doc, name)
        else:
            assert ours == theirs, (doc, name)
    assert got[0] and got[2] is not None, doc
    assert len(got[5]) == len(got[4]), (doc, "a solution to every exercise")


@pytest.mark.parametrize("doc", CHAPTERS)
def test_solutions_are_folded_and_no_directive_is_left(edition, doc):
    """The cells folded are the solutions' (read from the chapter's gates,
    which the learner copy no longer has), and none of sphinx-exercise's
    directives is left for jupyterlab-myst to title in its own words."""
    book, _ = edition
    nb = learner.learner_notebook(book, doc)
    source = nbformat.read(book.source / doc, as_version=4)
    folded, _ = fold_solutions.solution_cells(source)
    hidden = [c.id for c in nb.cells
              if c.metadata.get("jupyter", {}).get("source_hidden")]
    assert hidden == [source.cells[i].id for i in folded], doc
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for directive in ("{exercise}", "{solution-start}", "{solution-end}",
                      "{solution}"):
        assert directive not in text, (doc, directive)


def entry_title(book, key):
    """An entry as the citation's tooltip in the HTML gives it."""
    return squash(book.formatted[key].text.render(book.plain)
                  .replace("\\url ", ""))


def test_every_chapter_of_the_toc_is_written(tmp_path):
    written = learner.write_learner_book(tmp_path / "learn", ROOT)
    names = {p.relative_to(tmp_path / "learn").as_posix() for p in written}
    for doc in learner.toc_docs(ROOT):
        assert doc.rsplit(".", 1)[0] + ".ipynb" in names
    # the code cells are the chapters' own, byte for byte
    for doc in CHAPTERS:
        ours = nbformat.read(tmp_path / "learn" / doc, as_version=4)
        theirs = nbformat.read(ROOT / doc, as_version=4)
        code = [c for c in ours.cells if c.cell_type == "code"]
        assert code == [c for c in theirs.cells if c.cell_type == "code"]
        assert ours.metadata == theirs.metadata
        text = "\n".join(c.source for c in ours.cells
                         if c.cell_type == "markdown")
        assert not learner.ROLE.search(text), doc
    # the Chinese tree's figures speak Chinese (posenc_plots reads the
    # kernel's folder)
    zh = tmp_path / "zh_src"
    i18n.build_zh(zh, ROOT, clear_outputs=False)
    learner.write_learner_book(tmp_path / "learn-zh", zh)
    assert (tmp_path / "learn-zh" / "chapters" / ".posenc-lang").read_text() \
        == "zh_CN\n"
    assert not (tmp_path / "learn" / "chapters" / ".posenc-lang").exists()
    # a second run replaces the first; a foreign folder is refused
    learner.write_learner_book(tmp_path / "learn", ROOT)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "mine.txt").write_text("x")
    with pytest.raises(ValueError, match="out"):
        learner.write_learner_book(tmp_path / "other", ROOT)


def test_unknown_label_and_key_are_errors():
    book = learner.Book(ROOT)
    with pytest.raises(ValueError, match="fig-nowhere"):
        learner.resolve_markdown(book, "{numref}`fig-nowhere`",
                                 "chapters/06_rope")
    with pytest.raises(ValueError, match="nobody2099"):
        learner.resolve_markdown(book, "{cite:p}`nobody2099`",
                                 "chapters/06_rope")
    # a role shown as code stays as it is
    assert learner.resolve_markdown(book, "`{cite:p}`", "chapters/06_rope") \
        == "`{cite:p}`"


def test_math_and_figure_directives_are_indexed():
    """A ``{math}`` equation and a ``{figure}`` directive (no chapter uses
    them yet) are numbered and resolved like the dollar math and the code
    cells' figures, and the equation gets its number."""
    book = learner.Book(ROOT)
    text = ("```{math}\n:label: eq-test-x\nx = 1\n```\n\n"
            ":::{figure} a.png\n:name: fig-test-y\n\nA caption.\n:::\n")
    numbers = {"equation": "6.99", "figure": "6.98"}
    book._index_markdown("chapters/06_rope", text, numbers.get)
    assert book.targets["fig-test-y"].title == "A caption."
    assert "\\tag{6.99}\n```" in learner.number_equations(book, text)
    assert learner.resolve_markdown(
        book, "{numref}`fig-test-y`, {eq}`eq-test-x`",
        "chapters/07_context_extension") == (
        "[Fig. 6.98](06_rope.ipynb#fig-test-y), "
        "[(6.99)](06_rope.ipynb#eq-test-x)")
