"""The learner's path: the notebooks opened in a real JupyterLab (issue 25).

Starts ``jupyter lab`` on a free port, without a token, on the learner
notebooks as ``scripts/book.sh`` writes them (``tools/learner_notebooks.py``,
both languages, into a temporary folder), and drives it with Debian's
chromium through Playwright (never ``playwright install``). It checks that
chapter 2 opens unmodified (its stored kernel metadata is what JupyterLab
writes), that the stored slider cell says to run it instead of "Error
displaying widget: model not found", that jupyterlab-myst renders the
markdown (math typeset, no raw MyST roles or directives), that after
running the notebook a slider moved with the keyboard redraws the figure in
the page (the HTML book's renderer, ``posenc_plots.jupyter``), and that the
notebook, saved and reopened without its kernel, says again in the slider
cell to run it instead of "Error displaying widget: model not found".
Several more notebooks are only opened, not run (chapters 5, 6 and 7, the
Chinese chapter 6, chapter 8 without training, chapters 9 and 10 in both
languages, and a released assignment): each opens unmodified, each of its
slider cells says to run it, its exercises are rendered boxes, its
solutions closed dropdowns and the cells after them folded
(``tools/fold_solutions.py``), no MyST shown raw and no citation or
reference "Not Found", and its figures shown at their natural size, not
stretched. In chapters 2, 6, 7, 9, 10 and the Chinese 6, 9 and 10, what
JupyterLab renders is compared with the built HTML book of the same
edition: every citation's text, in order; every reference to a figure,
equation, section, exercise or chapter, its text and target; the numbers
of equations, figures (under each, its caption) and sections; every
exercise's and solution's title word for word (the solution's linking to
its exercise); and chapter 7's link to chapter 6, clicked, opens it. In
chapter 8 a ``%%solution`` cell, run in JupyterLab, says it is not run by
Run All instead of running. Like
tests/test_browser.py, a missing browser fails with ``CI`` or
``POSENC_REQUIRE_BROWSER`` set and skips loudly otherwise.
"""

import json
import os
import posixpath
import re
import sys
import tempfile
import urllib.request
import warnings
from pathlib import Path

import pytest
from lab_server import jupyterlab as serve_lab
from test_browser import build_zh_html
from test_learner_notebooks import html_facts, html_page, squash

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = "learn/en/chapters/02_sinusoidal_formula.ipynb"
#: Opened and read, not run. The learner notebooks as scripts/book.sh
#: writes them: learn/en from the sources, learn/zh from the Chinese tree
#: with its stored outputs translated (build-zh, as the tests' build does);
#: the assignment is released as tools/teaching does.
OPENED = ["learn/en/chapters/05_relative_position.ipynb",
          "learn/en/chapters/06_rope.ipynb",
          "learn/en/chapters/07_context_extension.ipynb",
          "learn/zh/chapters/06_rope.ipynb",
          "learn/en/chapters/08_train_short_test_long.ipynb",
          "assignment/04_binary_counter.ipynb",
          "learn/en/chapters/09_positions_in_2d_and_3d.ipynb",
          "learn/zh/chapters/09_positions_in_2d_and_3d.ipynb",
          "learn/en/chapters/10_position_in_2026_models.ipynb",
          "learn/zh/chapters/10_position_in_2026_models.ipynb"]
#: Compared with the HTML book (chapter 2 in the page that runs it).
COMPARED = [CHAPTER] + OPENED[1:4] + OPENED[6:]
REQUIRE = bool(os.environ.get("CI") or os.environ.get("POSENC_REQUIRE_BROWSER"))
#: JupyterLab and its kernel start slowly on a loaded 2-core machine.
TIMEOUT = 240_000  # ms
#: What MyST source looks like when it is shown raw instead of rendered.
RAW_MYST = ("{cite:p}", "{cite:t}", "{numref}", "{doc}", "{eq}", "{ref}",
            "```{", ":::{", "{exercise}", "{solution-start}")
#: jupyterlab-myst's own exercise boxes (its words, not the HTML's)
EXERCISE = "aside.myst-exercise, details.myst-exercise"
#: the learner copies' exercise and solution boxes, and their titles
EXERCISE_BOX = "div[id] > aside.myst-admonition.exercise"
SOLUTION_BOX = "details.myst-admonition.dropdown.solution"
TITLE = """els => els.map(e => {
    const head = e.querySelector(':scope > .myst-admonition-header');
    const copy = head ? head.cloneNode(true) : document.createElement('b');
    copy.querySelectorAll('.katex').forEach(k => k.replaceWith('$'));
    return [e.parentElement.id, copy.textContent,
            head?.querySelector('a')?.getAttribute('href') ?? null,
            e.open ?? null];
})"""


def require(reason):
    if REQUIRE:
        pytest.fail(reason)
    warnings.warn(f"JupyterLab browser test skipped: {reason}. Set "
                  "POSENC_REQUIRE_BROWSER=1 to make this a failure.",
                  UserWarning, stacklevel=2)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def lab():
    """``(url, folder)`` of a JupyterLab serving a copy of the chapter."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        pytest.fail("JupyterLab is not installed (requirements.txt has it)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "nb").mkdir()
        serve_opened(tmp / "nb", tmp / "zh_src")
        # a server that does not start raises, with the end of its log
        with serve_lab(tmp / "nb", tmp / "state",
                       timeout=TIMEOUT / 1000) as url:
            yield url, tmp / "nb"


def serve_opened(folder, zh_src):
    """Write the learner notebooks of both editions and the assignment of
    ``OPENED`` into ``folder`` (``zh_src``: a folder for build-zh)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import i18n
    import learner_notebooks
    from teaching.release import with_kernel_metadata

    learner_notebooks.write_learner_book(folder / "learn" / "en", ROOT)
    i18n.build_zh(zh_src, ROOT, clear_outputs=False)
    learner_notebooks.write_learner_book(folder / "learn" / "zh", zh_src)
    (folder / "assignment").mkdir()
    source = (ROOT / "assignments" / "source" / "04_binary_counter"
              / "04_binary_counter.ipynb").read_text(encoding="utf-8")
    (folder / "assignment" / "04_binary_counter.ipynb").write_text(
        with_kernel_metadata(source), encoding="utf-8")


def open_notebook(page, url, name):
    """Open ``name`` in a fresh workspace and wait until its kernel is idle
    and jupyterlab-myst has rendered it."""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.set_default_timeout(TIMEOUT)
    page.goto(f"{url}/lab/workspaces/{name.replace('/', '-')[:-6]}"
              f"/tree/{name}?reset")
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']")
    page.wait_for_function(
        "document.querySelectorAll('.jp-MarkdownCell .katex').length > 20")
    # images decoded, kernel info written (if it were to be)
    page.wait_for_function("[...document.querySelectorAll('.jp-OutputArea "
                           "img')].every(i => i.complete)")
    page.wait_for_timeout(2000)


@pytest.fixture(scope="module")
def page(lab, browser):
    # browser: conftest.py's chromium, shared with the other browser tests
    url, _ = lab
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.set_default_timeout(TIMEOUT)
    # jupyterlab-myst typesets the math with KaTeX once it renders.
    open_notebook(page, url, CHAPTER)
    yield page
    page.close()


@pytest.fixture(scope="module", params=OPENED)
def opened(request, lab, browser):
    """``(page, notebook JSON)`` of one notebook of ``OPENED``, opened in a
    page of its own; its kernel is shut down afterwards."""
    url, folder = lab
    name = request.param
    page = browser.new_page()
    open_notebook(page, url, name)
    yield page, json.loads((folder / name).read_text(encoding="utf-8"))
    page.evaluate("() => window.jupyterapp.serviceManager.sessions"
                  ".shutdownAll()")
    page.close()


NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"


def notebook_text(page):
    return page.inner_text(NOTEBOOK)


def markdown_text(page):
    return "\n".join(
        page.locator(f"{NOTEBOOK} .jp-MarkdownCell").all_inner_texts())


def markdown_source(nb, skip=()):
    return "\n".join("".join(c["source"]) for i, c in enumerate(nb["cells"])
                     if c["cell_type"] == "markdown" and i not in skip)


def assert_opens_unmodified(page):
    # The kernel has started and reported its spec and language_info:
    # nothing JupyterLab wrote differs from the stored metadata.
    assert page.locator(".jp-NotebookPanel .jp-mod-dirty").count() == 0
    assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0


def wait_count(page, selector, n):
    """Wait until ``selector`` matches ``n`` elements (jupyterlab-myst
    renders the cells one by one, slowly on a loaded machine), and fail
    with both counts if it never does."""
    try:
        page.wait_for_function(
            "([s, n]) => document.querySelectorAll(s).length === n",
            arg=[selector, n], timeout=60_000)
    except Exception:
        pass
    assert page.locator(selector).count() == n, selector


def assert_reads_as_the_book(page, nb, name):
    """What a reader of the HTML book sees, as far as jupyterlab-myst
    renders it (README): MyST rendered, exercises in boxes, solutions
    folded, citations and references rendered, figures unstretched."""
    text = markdown_text(page)
    raw = [r for r in RAW_MYST if r in text]
    assert not raw, f"{name}: MyST shown raw in JupyterLab: {raw}"
    assert "$$" not in text, name
    # the cells of the solutions, folded by tools/fold_solutions.py
    folded = [i for i, c in enumerate(nb["cells"])
              if c["metadata"].get("jupyter", {}).get("source_hidden")]
    assert folded, name
    source = markdown_source(nb)
    # every exercise a numbered box with its title, in the words of the
    # HTML book's edition (not jupyterlab-myst's "Exercise")
    exercises = re.findall(r"^:{4,}\{div\}\n:label: (\S+)\n:{3,}"
                           r"\{admonition\}", source, re.M)
    assert exercises, name
    wait_count(page, f"{NOTEBOOK} {EXERCISE_BOX}", len(exercises))
    boxes = page.eval_on_selector_all(f"{NOTEBOOK} {EXERCISE_BOX}", TITLE)
    assert [b[0] for b in boxes] == exercises, name
    word = "练习" if name.startswith("learn/zh/") else "Exercise"
    assert all(re.match(rf"{word} \d+[a-z]?\.\d+ \(", b[1])
               for b in boxes), boxes
    assert page.locator(f"{NOTEBOOK} :is({EXERCISE})").count() == 0, name
    # each solution a closed dropdown titled as in the HTML, its title
    # linking to its exercise; the cells after it folded
    wait_count(page, f"{NOTEBOOK} {SOLUTION_BOX}", len(exercises))
    solutions = page.eval_on_selector_all(f"{NOTEBOOK} {SOLUTION_BOX}",
                                          TITLE)
    solution = "解答 练习" if word == "练习" else "Solution to Exercise"
    assert [s[2] for s in solutions] == [f"#{e}" for e in exercises], name
    assert all(s[1].startswith(f"{solution} ") and s[3] is False
               for s in solutions), solutions
    assert page.locator(f"{NOTEBOOK} details[open]").count() == 0, name
    assert "Start of Solution" not in text and "End of Solution" not in text
    cells = page.locator(f"{NOTEBOOK} > .jp-WindowedPanel-outer "
                         f".jp-Cell, {NOTEBOOK} > .jp-Cell")
    assert cells.count() == len(nb["cells"]), name
    hidden = page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-Cell", """els => els.map(c =>
            !c.querySelector('.jp-Cell-inputWrapper .jp-InputArea')
            && !!c.querySelector('.jp-InputPlaceholder')
            && !(c.querySelector('.jp-Cell-outputWrapper')
                 ?.checkVisibility()))""")
    assert [i for i, h in enumerate(hidden) if h] == folded, name
    # and all a folded cell shows is its bar: its first line, or nothing.
    # The bar is JupyterLab's <span class="jp-PlaceholderText">, laid out
    # as prose: its innerText shows a run of spaces as one (chapter 9's
    # "axis=1)   # (row, column)" reads "axis=1) # (row, column)"), so both
    # are compared with runs of white space as one space, word for word.
    bars = page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-Cell", "els => els.map(c => c.innerText)")
    for index in folded:
        first = "".join(nb["cells"][index]["source"]).split("\n")[0]
        assert " ".join(bars[index].split()) in (" ".join(first.split()),
                                                 ""), (name, index)
    # citations and references written out (tools/learner_notebooks.py),
    # none that jupyterlab-myst could not resolve
    assert "{cite" not in source and "{numref}" not in source, name
    assert page.locator(f"{NOTEBOOK} .cite-group").count() == 0, name
    for what in ("Citation Not Found", "Cross Reference Not Found"):
        assert page.locator(f"{NOTEBOOK} [title='{what}']").count() == 0, (
            name, what)
    assert page.locator(f"{NOTEBOOK} a[href*='references.ipynb']").count()
    # figures at their natural size: never enlarged, and those that fit
    # shown at exactly their size (a wider one is scaled to the column)
    images = page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-OutputArea-output img",
        """els => els.map(i => [i.naturalWidth, i.naturalHeight,
            i.getBoundingClientRect().width, i.getBoundingClientRect().height,
            i.closest('.jp-OutputArea').getBoundingClientRect().width])""")
    for nat_w, nat_h, w, h, column in images:
        assert w <= nat_w + 0.5 and h <= nat_h + 0.5, (name, nat_w, w)
        if nat_w < column - 120:  # room for the output prompt
            assert abs(w - nat_w) <= 0.5 and abs(h - nat_h) <= 0.5, (
                name, nat_w, w)


def test_opens_unmodified(page):
    assert_opens_unmodified(page)


def test_reads_as_the_book(page, lab):
    _, folder = lab
    nb = json.loads((folder / CHAPTER).read_text(encoding="utf-8"))
    assert_reads_as_the_book(page, nb, CHAPTER)


def test_stored_slider_cell_says_to_run_it(page):
    text = notebook_text(page)
    assert "model not found" not in text
    assert "Run this cell (Shift+Enter) to show its sliders" in text


def test_myst_is_rendered(page):
    text = markdown_text(page)
    assert len(text) > 5000, "the markdown cells did not render"
    raw = [r for r in RAW_MYST if r in text]
    assert not raw, f"MyST shown raw in JupyterLab: {raw}"
    assert "$$" not in text


def test_run_all_then_a_slider_redraws(page, lab):
    page.locator(".jp-NotebookPanel .jp-Notebook").click()
    page.keyboard.press("Escape")
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator("li[data-command='runmenu:run-all']").click()
    # The figure appears when its cell has run; then all cells have.
    page.wait_for_selector(
        ".jp-OutputArea .posenc-widget[data-posenc-state='ready']")
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']")
    page.wait_for_function(
        "!document.querySelector('.jp-Notebook').innerText.includes('[*]')")
    text = notebook_text(page)
    assert "model not found" not in text
    assert "Traceback" not in text
    # the HTML book's live figure, drawn in the page; the note hidden
    figure = page.locator(".jp-OutputArea .posenc-widget").first
    canvas = figure.locator("canvas")
    assert canvas.is_visible()
    assert not page.locator(".posenc-run-hint").first.is_visible()
    assert "Run this cell (Shift+Enter)" not in notebook_text(page)
    slider = figure.locator("input[type='range'][name='pos']")
    before = figure.get_attribute("data-posenc-draws")
    pixels = canvas.evaluate("c => c.toDataURL()")
    slider.focus()
    slider.press("ArrowRight")  # JupyterLab's shortcuts do not take it
    page.wait_for_function(
        "([el, old]) => el.getAttribute('data-posenc-draws') !== old"
        " && el.getAttribute('data-posenc-state') === 'ready'",
        arg=[figure.element_handle(), before])
    assert slider.input_value() == "21"
    assert figure.locator("output").nth(2).inner_text() == "21"
    assert canvas.evaluate("c => c.toDataURL()") != pixels
    # drawn at its displayed size (one canvas pixel per device pixel), so
    # never stretched: the figure is laid out for the output's width
    width, css_width, ratio = canvas.evaluate(
        "c => [c.width, c.getBoundingClientRect().width, "
        "window.devicePixelRatio]")
    assert abs(width - css_width * ratio) <= 1, (width, css_width, ratio)
    assert "model not found" not in notebook_text(page)


def test_saved_and_reopened_without_kernel_says_to_run_it(page, lab):
    """Run (above), save, shut the kernel down, open again: the slider cell
    shows the note to run it, not "Error displaying widget"."""
    url, folder = lab
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !document.querySelector('.lm-TabBar-tab.jp-mod-dirty')")
    stored = json.loads((folder / CHAPTER).read_text(encoding="utf-8"))
    widget_cells = [c for c in stored["cells"]
                    if c.get("metadata", {}).get("posenc_widget")]
    kinds = [set(o.get("data", {})) for o in widget_cells[0]["outputs"]]
    assert any("application/vnd.jupyter.widget-view+json" in k
               for k in kinds), kinds  # what used to show the error
    # the chapter's kernel shut down (from the page: the server wants its
    # XSRF cookie), then the notebook opened again
    page.evaluate("""async ([path]) => {
      const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || "";
      const sessions = await (await fetch("/api/sessions")).json();
      for (const s of sessions.filter(s => s.path === path)) {
        await fetch(`/api/sessions/${s.id}`, {method: "DELETE",
          headers: {"X-XSRFToken": decodeURIComponent(xsrf)}});
      }
    }""", [CHAPTER])
    sessions = json.load(urllib.request.urlopen(f"{url}/api/sessions"))
    assert not [s for s in sessions if s["path"] == CHAPTER]
    open_notebook(page, url, CHAPTER)
    page.wait_for_timeout(3000)  # the widget manager has given up by now
    text = notebook_text(page)
    assert "model not found" not in text
    assert "Error displaying widget" not in text
    hint = page.locator(".posenc-run-hint").first
    assert hint.is_visible()
    assert "Run this cell (Shift+Enter) to show its sliders" in \
        hint.inner_text()


def test_opened_notebook_is_unmodified(opened):
    page, _ = opened
    assert_opens_unmodified(page)


def test_opened_notebook_slider_cells_say_to_run_them(opened, request):
    """Every slider cell of a notebook opened without running it shows
    the note to run it (its stored output), nothing about a widget."""
    page, nb = opened
    sliders = [i for i, c in enumerate(nb["cells"])
               if c.get("metadata", {}).get("posenc_widget")]
    if not sliders:
        return  # the assignment
    text = notebook_text(page)
    assert "model not found" not in text
    assert "Error displaying widget" not in text
    outputs = page.locator(f"{NOTEBOOK} .jp-Cell").evaluate_all(
        "cells => cells.map(c => c.querySelector('.jp-OutputArea')"
        "?.innerText ?? '')")
    name = request.node.callspec.params["opened"]
    hint = ("运行此单元格（Shift+Enter）" if name.startswith("learn/zh/")
            else "Run this cell (Shift+Enter) to show its sliders")
    for index in sliders:
        assert hint in outputs[index], (index, outputs[index][:200])


def test_opened_notebook_reads_as_the_book(opened, request):
    page, nb = opened
    name = request.node.callspec.params["opened"]
    if name.startswith("assignment/"):
        # an nbgrader notebook: no exercises, solutions or citations
        assert "model not found" not in notebook_text(page)
        return
    assert_reads_as_the_book(page, nb, name)
    if name.startswith("learn/zh/"):
        text = markdown_text(page)
        assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 3000
        assert "练习" in text


@pytest.fixture(scope="module")
def html_books(book_html):
    """The built HTML book of each edition (conftest's, the Chinese one
    built as tests/test_browser.py builds it)."""
    zh = book_html / "zh"
    if not (zh / "index.html").is_file():
        build_zh_html(zh)
    return {"en": book_html, "zh": zh}


def lab_facts(page, name):
    """What JupyterLab shows of the notebook ``name``: the markdown's text,
    its links ``(text, (page relative to the notebook, fragment))``, the
    numbers of the equations by label, the figures' captions by label,
    the exercises' and sections' headings."""
    folder = posixpath.dirname(name)
    text = squash(markdown_text(page))
    links = set()
    for content, href in page.eval_on_selector_all(
            f"{NOTEBOOK} .jp-MarkdownCell a[href]",
            "els => els.map(a => [a.textContent, a.getAttribute('href')])"):
        if href.startswith("#"):
            links.add((squash(content), ("", href[1:])))
        elif "/files/" in href:
            path = href.split("/files/", 1)[1]
            path, fragment = path.split("?")[0], href.partition("#")[2]
            rel = posixpath.relpath(path, folder)
            links.add((squash(content), (rel.removesuffix(".ipynb"),
                                          fragment)))
    tags = page.evaluate("""(sel) => Object.fromEntries([...document
        .querySelectorAll(sel + ' .jp-MarkdownCell [id]')].map(e => [e.id,
        e.querySelector('.katex-html .tag')?.textContent ?? null,
        ]))""", NOTEBOOK)
    # a caption's math as "$" (KaTeX here, MathJax's source in the HTML)
    captions = page.evaluate("""(sel) => Object.fromEntries([...document
        .querySelectorAll(sel + ' .jp-MarkdownCell [id^="fig-"]')].map(e => {
          const copy = e.cloneNode(true);
          copy.querySelectorAll('.katex').forEach(k => k.replaceWith('$'));
          return [e.id, copy.textContent];
        }))""", NOTEBOOK)
    exercises = [(e[0], squash(e[1])) for e in page.eval_on_selector_all(
        f"{NOTEBOOK} {EXERCISE_BOX}", TITLE)]
    solutions = [(squash(e[1]), (e[2] or "").lstrip("#"))
                 for e in page.eval_on_selector_all(
                     f"{NOTEBOOK} {SOLUTION_BOX}", TITLE)]
    sections = page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-MarkdownCell :is(h1, h2)",
        "els => els.map(e => e.textContent)")
    return text, links, tags, captions, exercises, solutions, sections


def assert_as_in_the_html(page, name, html_books):
    """Citations, references and numbers as the HTML book of the same
    edition shows them (what the HTML folds into a solution is folded
    here too, so it is left out)."""
    edition = name.split("/")[1]
    doc = name.split("/", 2)[2]
    article = html_page(html_books[edition], doc)
    (cites, refs, equations, figures, exercises, solutions,
     sections) = html_facts(article, folded=False)
    (text, links, tags, captions, lab_exercises, lab_solutions,
     lab_sections) = lab_facts(page, name)
    # every citation, with the HTML's text, in the HTML's order
    assert cites, name
    at = 0
    for cite, _ in cites:
        found = text.find(cite, at)
        assert found >= 0, (name, cite, text[at:at + 300])
        at = found + len(cite)
    # every reference to a figure, equation, section, exercise or page:
    # its text, and a link to the same place
    assert refs, name
    for ref in refs:
        assert ref in links, (name, ref, sorted(
            link for link in links if link[1] == ref[1]))
    assert any(target[0] and not target[0].startswith("..")
               for _, target in refs), (name, "no link to another chapter")
    # equation numbers, figure numbers with their captions
    assert equations, name
    for label, number in equations.items():
        assert tags.get(label) == number, (name, label, tags.get(label))
    assert figures, name
    for fig in article.select("figure[id]"):
        if fig["id"] not in figures:
            continue
        caption = fig.select_one(".caption-text")
        for note in caption.select(".posenc-note"):
            note.decompose()
        math = re.sub(r"\\\(.*?\\\)", "$", caption.get_text())
        want = squash(f"{figures[fig['id']]} {math}")
        assert squash(captions.get(fig["id"], "")) == want, (name, fig["id"])
    # exercises and solutions titled word for word as in the HTML (its
    # math as "$"), each solution linking to its exercise; sections
    # numbered as in the HTML
    def dollars(title):
        return re.sub(r"\$[^$]*\$", "$", title)

    assert exercises, name
    assert [(i, dollars(t)) for i, t in exercises] == lab_exercises, name
    assert [(dollars(t), to) for t, to in solutions] == lab_solutions, name
    assert [re.match(r"\S+", s).group(0) for s in lab_sections] == \
        sections, name


def test_chapter_2_as_in_the_html(page, html_books):
    assert_as_in_the_html(page, CHAPTER, html_books)


def test_opened_notebook_as_in_the_html(opened, request, html_books):
    page, _ = opened
    name = request.node.callspec.params["opened"]
    if name not in COMPARED:
        return  # chapters 5 and 8, the assignment: read above
    assert_as_in_the_html(page, name, html_books)


@pytest.mark.parametrize("opened", [OPENED[2]], indirect=True)
def test_link_to_another_chapter_opens_it(opened):
    """Chapter 7's link to chapter 6, clicked, opens chapter 6."""
    page, _ = opened
    link = page.locator(f"{NOTEBOOK} .jp-MarkdownCell a",
                        has_text="Rotary position embedding (RoPE)").first
    assert "06_rope.ipynb" in link.get_attribute("href")
    link.click()
    page.wait_for_function("""() => window.jupyterapp.shell.currentWidget
        ?.context?.path === 'learn/en/chapters/06_rope.ipynb'""")


@pytest.mark.parametrize("opened", [OPENED[4]], indirect=True)
def test_chapter_8_solutions_do_not_run_in_jupyterlab(opened):
    # Chapter 8's %%solution cells: Run All in JupyterLab does not run
    # them (nor train again). Run the imports, then one solution, as Run
    # All would (the training cell is left alone).
    page, nb = opened
    first = next(i for i, c in enumerate(nb["cells"])
                 if "".join(c["source"]).startswith("%%solution"))
    cells = ("".join(nb["cells"][1]["source"]), first)
    assert "lab.register" in cells[0]
    run = """async ([index]) => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.activeCellIndex = index;
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }"""
    page.evaluate(run, [1])
    page.wait_for_function(
        "([i]) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
        ".model.executionCount !== null", arg=[1])
    page.evaluate(run, [first])
    page.wait_for_function(
        "([i]) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
        ".model.outputs.length > 0", arg=[first])
    outputs = page.evaluate(
        "([i]) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
        ".model.outputs.toJSON()", [first])
    text = "".join("".join(o.get("text", "")) for o in outputs)
    assert "is not run by Run All" in text, outputs
    assert "RoPE minus NoPE" not in text
