"""The built HTML book in a real headless Chromium, driven by Playwright.

What is checked, page by page:

* **Offline and clean** (``test_page_is_clean``), over http://127.0.0.1 (a
  local ``http.server``) and from ``file://``: every request goes to the
  book's own files, none fails (no 4xx either), no console error, no page
  error, every formula is typeset by the MathJax served with the book, and
  a page loads ``posenc.js`` and a chapter's script only if it shows one
  of its live figures.
* **Live figures** (``test_widget``): for every live figure of every page,
  its sliders have labels, their ranges are the Python ``Slider`` specs,
  and each slider is moved with the keyboard (arrow keys, Home, End) and by
  setting its value. Each time the readout and ``aria-valuetext`` must be
  the value, and the data drawn (recorded by posenc.js) must equal the
  matplotlib figure that the Python plotting function draws for the same
  values: images, lines, bars, scatters, texts, titles, labels, legends
  (numbers to 1e-12). Then every position of every slider is drawn once
  (``test_widget_sweep``) with no error. Screenshots go to
  ``test-artifacts/`` (or ``$POSENC_ARTIFACTS``).
* **One source of truth** (``test_core_agrees_with_posenc_core``): the
  JavaScript formulas (``posenc.core``) equal posenc_core to 1e-12 on a
  grid of parameters, run in the browser.
* **The tests bite** (``test_a_wrong_formula_is_caught``): with a wrong
  formula patched into the page, the figure comparison fails.
* **Accessible** (``test_page_is_accessible``): axe-core (pinned in
  ``package.json``) finds no serious or critical violation on any page,
  and every ``<img>`` has alt text that is neither empty nor a file name
  (``test_images_have_alt_text``).
* **Citations** (``test_citations_link_to_references``): every citation
  reads "(Vaswani et al., 2017)" or "Press et al. (2022)" and links to its
  entry on the References page.
* **Both editions**: every page check above runs on the English pages and
  on the Chinese edition's (``zh/``, ``tools/i18n.py``), and so do the live
  figure checks (against matplotlib with ``POSENC_LANG=zh_CN``);
  ``test_language_switch`` checks
  that each page links to the same page of the other edition, both ways,
  and that the link resolves over http and from ``file://``.
* **Coverage** (``test_every_interactive_has_a_live_figure``): every
  ``Interactive`` of every ``posenc_plots`` module is a live figure on a
  page of the book, and every slider cell carries its metadata and the
  ``remove-output``, ``nbval-ignore-output`` and ``skip-execution`` tags.

The book: the ``book_html`` fixture of ``tests/conftest.py``, with the
Chinese edition in its ``zh/`` folder (``scripts/book.sh`` builds both; the
``book_site`` fixture below builds ``zh/`` when the book was built by the
fixture, without execution and with English where a translation is
missing: ``tests/test_i18n.py`` is the gate for the translations).

The browser: Debian's ``chromium`` (``$POSENC_CHROMIUM`` to use another
binary), never a downloaded one. Without it (or without Playwright, or
axe-core in ``node_modules``) these tests fail when ``$CI`` or
``$POSENC_REQUIRE_BROWSER`` is set, which scripts/test.sh does; otherwise
they are skipped with a warning in pytest's summary that names what is
missing (``test_a_missing_browser_is_reported``).
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import yaml

import posenc_core as pc
from posenc_plots import all_interactive

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
import posenc_widgets  # noqa: E402

TOC = Path(os.environ.get("POSENC_TOC", ROOT / "_toc.yml"))
ARTIFACTS = Path(os.environ.get("POSENC_ARTIFACTS", ROOT / "test-artifacts"))
REQUIRE = bool(os.environ.get("CI") or os.environ.get("POSENC_REQUIRE_BROWSER"))
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
RTOL = 1e-12
TIMEOUT = 60_000  # ms


# ------------------------------------------------------------ the book


def toc_files():
    """Source files of the book, in toc order (without extension)."""
    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or ():
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", ()):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def notebook_widgets(name):
    """(cell index, key, tags) of each slider cell of a notebook."""
    path = ROOT / f"{name}.ipynb"
    if not path.is_file():
        return []
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for i, cell in enumerate(nb["cells"]):
        meta = cell.get("metadata", {})
        source = "".join(cell.get("source", ""))
        if cell["cell_type"] == "code" and (
                "posenc_widget" in meta or "posenc_plots.show(" in source):
            found.append((i, meta.get("posenc_widget"), meta.get("tags", [])))
    return found


def source_has_math(name):
    """Whether the source of a book page holds $...$ math (prose only)."""
    path = ROOT / f"{name}.md"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    elif (path := ROOT / f"{name}.ipynb").is_file():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells
                         if c["cell_type"] == "markdown")
    else:
        return False
    text = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.S)
    return bool(re.search(r"\$[^$\s][^$\n]*\$", text))


# The English edition at the root of the site, the Chinese one in zh/.
EDITIONS = ["", "zh/"]
EN_PAGES = ["index.html"] + [f"{name}.html" for name in toc_files()] + [
    "genindex.html", "search.html"]
PAGES = [edition + name for edition in EDITIONS for name in EN_PAGES]
WIDGETS = [(f"{name}.html", key) for name in toc_files()
           for _, key, _ in notebook_widgets(name) if key]
# The Chinese pages' live figures: the same checks, against the matplotlib
# figures drawn with POSENC_LANG=zh_CN.
ZH_WIDGETS = [("zh/" + name, key) for name, key in WIDGETS]


def edition_of(name):
    """The edition prefix ("" or "zh/") of a page name."""
    return next(e for e in reversed(EDITIONS) if name.startswith(e))


def source_name(name):
    """The source of a page of either edition, without extension."""
    return name.removeprefix(edition_of(name)).removesuffix(".html")
INTERACTIVE = {f"{module}:{fig.name}": fig for module, fig in all_interactive()}


def require(reason):
    """Fail (in CI and scripts/test.sh) or skip loudly: a missing browser."""
    if REQUIRE:
        pytest.fail(reason)
    warnings.warn(
        f"browser tests skipped: {reason}. They are the only check that the "
        "live figures' sliders reach their figures, and of the HTML pages "
        "(offline, MathJax, accessibility). Set POSENC_REQUIRE_BROWSER=1 to "
        "make this a failure (scripts/test.sh does).", UserWarning,
        stacklevel=2)
    pytest.skip(reason)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def build_zh_html(out):
    """Build the Chinese edition into ``out`` as conftest builds the English
    one for the tests: stored outputs, no execution."""
    sys.path.insert(0, str(ROOT / "tools"))
    import i18n

    work = Path(tempfile.mkdtemp(prefix="posenc-zh-"))
    src = work / "zh_src"
    i18n.build_zh(src, allow_missing=True, clear_outputs=False)
    config = yaml.safe_load((src / "_config.yml").read_text(encoding="utf-8"))
    config["execute"]["execute_notebooks"] = "off"
    config["sphinx"]["local_extensions"] = {
        name: str(src / path)
        for name, path in config["sphinx"]["local_extensions"].items()}
    config_path = work / "_config.yml"
    config_path.write_text(yaml.safe_dump(config, allow_unicode=True),
                           encoding="utf-8")
    cmd = [sys.executable, "-m", "jupyter_book", "build", str(src),
           "--path-output", str(work / "out"), "--config", str(config_path),
           "-W", "-n", "--keep-going"]
    jb = shutil.which("jupyter-book", path=str(Path(sys.executable).parent))
    if jb:
        cmd[:3] = [jb]
    done = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    shutil.move(work / "out" / "_build" / "html", out)
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def book_site(book_html):
    """The book's html folder with the Chinese edition in ``zh/``."""
    zh = book_html / "zh"
    if not (zh / "index.html").is_file():
        assert not os.environ.get("POSENC_BOOK_HTML"), (
            f"no Chinese edition in {zh}: scripts/book.sh builds both")
        build_zh_html(zh)
    return book_html


@pytest.fixture(scope="session")
def server(book_site):
    handler = functools.partial(QuietHandler, directory=str(book_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def browser_context():
    """Yield one headless chromium context (the ``browser`` fixture of
    conftest.py, shared by every browser test of a worker: Playwright's sync
    API allows one instance per thread)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require("Playwright is not installed (pip install -r "
                "requirements-test.txt)")
    exe = os.environ.get("POSENC_CHROMIUM")
    if exe and not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        require(f"POSENC_CHROMIUM={exe} is not an executable file")
    exe = exe or shutil.which("chromium")
    if not exe:
        require("no chromium: apt-get install chromium (scripts/test.sh "
                "does)")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=exe, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900})
        context.set_default_timeout(TIMEOUT)
        yield context
        context.close()


#: The widths the pages are checked at: a desktop and a phone (CSS pixels).
DESKTOP, PHONE = 1280, 390


class Visit:
    """A page opened with every request, failure and error recorded
    (``width``: the viewport's, default the context's 1280 px)."""

    def __init__(self, context, url, width=None):
        self.page = context.new_page()
        if width is not None:
            self.page.set_viewport_size({"width": width, "height": 844})
        self.requests, self.failed, self.errors = [], [], []
        page = self.page
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("requestfailed",
                lambda r: self.failed.append(f"{r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.failed.append(
            f"{r.url} HTTP {r.status}"))
        page.on("console", lambda m: m.type == "error" and self.errors.append(
            f"console: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.goto(url, wait_until="load")
        if url.endswith("/index.html"):  # a redirect to the root page
            root = re.escape(toc_files()[0])
            page.wait_for_url(re.compile(rf"/{root}\.html$"))
            page.wait_for_load_state("load")
        page.wait_for_function(
            "() => !window.MathJax || !MathJax.startup || "
            "!MathJax.startup.promise ? true : "
            "MathJax.startup.promise.then(() => true)")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.posenc-widget')]"
            ".every(w => ['ready', 'error'].includes(w.dataset.posencState))")

    def close(self):
        self.page.close()


@pytest.fixture(scope="module")
def pages(browser, server):
    """One open page per book page, served over http, reused by tests."""
    opened = {}

    def get(name):
        if name not in opened:
            opened[name] = Visit(browser, server + name)
        return opened[name]

    yield get
    for visit in opened.values():
        visit.close()


@pytest.fixture(scope="module")
def phone_pages(browser, server):
    """The same, at a phone's width (390 CSS pixels)."""
    opened = {}

    def get(name):
        if name not in opened:
            opened[name] = Visit(browser, server + name, width=PHONE)
        return opened[name]

    yield get
    for visit in opened.values():
        visit.close()


# ------------------------------------------------------- clean pages


@pytest.mark.parametrize("scheme", ["http", "file"])
@pytest.mark.parametrize("name", PAGES)
def test_page_is_clean(browser, server, book_site, name, scheme):
    base = server if scheme == "http" else book_site.as_uri() + "/"
    visit = Visit(browser, base + name)
    try:
        page = visit.page
        outside = [u for u in visit.requests
                   if not u.startswith(base) and not u.startswith("data:")]
        assert not outside, f"requests outside the book: {outside}"
        assert not visit.failed, f"failed requests: {visit.failed}"
        assert not visit.errors, f"errors: {visit.errors}"
        states = page.eval_on_selector_all(
            ".posenc-widget", "ws => ws.map(w => w.dataset.posencState)")
        assert all(s == "ready" for s in states), states
        # math: typeset by the local MathJax, no TeX errors
        n_math = page.eval_on_selector_all(
            ".math, span.math, div.math", "els => els.length")
        if source_has_math(source_name(name)):
            assert n_math, f"{name}: its source has $...$ math, the page none"
        if n_math:
            assert page.evaluate("() => !!window.MathJax && "
                                 "!!MathJax.startup && !!MathJax.version")
            assert page.eval_on_selector_all("mjx-container",
                                             "els => els.length") > 0
            assert page.eval_on_selector_all("mjx-merror",
                                             "els => els.length") == 0
            mathjax = [u for u in visit.requests if "tex-mml-chtml.js" in u]
            assert mathjax and all(u.startswith(base) for u in mathjax)
        # a page loads only the scripts it uses
        scripts = page.eval_on_selector_all(
            "script[src]", "els => els.map(e => e.getAttribute('src'))")
        ours = sorted(Path(s.split("?")[0]).name for s in scripts
                      if "/posenc/" in s and "/data/" not in s)
        keys = page.eval_on_selector_all(
            ".posenc-widget", "ws => ws.map(w => w.dataset.posencKey)")
        expected = sorted({"posenc.js"} | {k.split(":")[0] + ".js"
                                           for k in keys}) if keys else []
        if source_name(name) == "search":  # _ext/posenc_search.py
            expected = ["search.js"]
        assert ours == expected
        if scheme == "http":
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=ARTIFACTS / (name.replace("/", "__") + ".png"),
                            full_page=True)
    finally:
        visit.close()


# ------------------------------------------------------- accessibility

AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map(n => n.target.join(' ')),
    summary: v.nodes.length ? v.nodes[0].failureSummary : ''}));
}"""


def axe_violations(page):
    """axe-core's violations on an open page (axe injected once)."""
    if not AXE.is_file():
        require(f"axe-core is not installed ({AXE} is missing): run npm ci")
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN)


@pytest.mark.parametrize("name", PAGES)
def test_page_is_accessible(pages, name):
    """axe-core: no serious or critical violation (WCAG A/AA and more)."""
    found = axe_violations(pages(name).page)
    bad = [v for v in found if v["impact"] in ("serious", "critical")]
    report = "\n".join(
        f"{v['impact']} {v['id']} ({v['help']}): {len(v['targets'])} "
        f"element(s): {v['targets'][:8]}\n    {v['summary']}" for v in bad)
    assert not bad, f"{name}: axe-core found\n{report}"


#: alt text that is a file (what myst-nb writes when a cell gives none)
FILE_ALT = re.compile(r"\.(png|jpe?g|gif|svg|webp)\b|_images/|^[\w./-]+$",
                      re.IGNORECASE)


@pytest.mark.parametrize("name", PAGES)
def test_images_have_alt_text(pages, name):
    """Every image says what it shows: set the figure cell's metadata
    ``"mystnb": {"image": {"alt": "..."}}``; myst-nb's default alt text is
    the image's file path, which a screen reader reads out."""
    images = pages(name).page.eval_on_selector_all(
        "img", """els => els.filter(e => e.getAttribute('aria-hidden') !==
          'true' && !['presentation', 'none'].includes(e.getAttribute('role')))
          .map(e => [e.getAttribute('src'), e.getAttribute('alt')])""")
    bad = [f"{src}: alt {alt!r}" for src, alt in images
           if not (alt or "").strip() or FILE_ALT.search(alt.strip())]
    assert not bad, (f"{name}: {len(bad)} of {len(images)} images have an "
                     "empty alt text or a file name:\n" + "\n".join(bad))


def test_alt_text_check_bites():
    """The alt-text rule refuses file names and accepts descriptions."""
    for alt in ("", " ", "_images/ab12.png", "ab12.png", "../_images/x.svg",
                "fig-ch02-heatmap"):
        assert not alt.strip() or FILE_ALT.search(alt.strip()), alt
    for alt in ("Heatmap of the 100 by 128 encoding matrix: fast columns on "
                "the left, slow on the right.", "Wavelength of each sin/cos "
                "pair, on a log scale"):
        assert not FILE_ALT.search(alt), alt


# ------------------------------------------------------------ citations

CITATIONS = """() => [...document.querySelectorAll('.bibtex-citation')].map(
  s => [s.textContent.replace(/\\s+/g, ' ').trim(),
        [...s.querySelectorAll('a')].map(a => a.getAttribute('href'))])"""
ENTRY_IDS = """() => [...document.querySelectorAll(
  '.citation-list .citation[id]')].map(e => e.id)"""


@pytest.fixture(scope="module")
def reference_ids(pages):
    """The ids of the References page's entries, per edition."""
    @functools.cache
    def ids(edition):
        found = set(pages(edition + "references.html").page.evaluate(ENTRY_IDS))
        assert found, f"the References page of {edition or 'en/'} lists no entry"
        return found

    return ids


@pytest.mark.parametrize("name", [p for p in PAGES
                                  if source_name(p) != "references"])
def test_citations_link_to_references(pages, reference_ids, name):
    """(Author, year) or Author (year), linked to the References page."""
    year = r"(\d{4}[a-z]?|n\.d\.)"
    cite_p = re.compile(rf"^\([^()\[\]]+, {year}(; [^()\[\]]+, {year})*\)")
    cite_t = re.compile(rf"^[^()\[\]]+ \({year}\)")
    if edition_of(name):  # the Chinese way: （Vaswani 等人，2017）, Press 等人（2022）
        cite_p = re.compile(rf"^（[^（）()]+，{year}(；[^（）()]+，{year})*）")
        cite_t = re.compile(rf"^[^（）()]+（{year}）")
    bad = []
    for text, hrefs in pages(name).page.evaluate(CITATIONS):
        if not (cite_p.match(text) or cite_t.match(text)):
            bad.append(f"{text!r} is not (Author, year) or Author (year)")
        for href in hrefs:
            page, _, anchor = (href or "").partition("#")
            if Path(page).name != "references.html" or anchor not in (
                    reference_ids(edition_of(name))):
                bad.append(f"{text!r} links to {href!r}, not an entry of "
                           "references.html")
        if not hrefs:
            bad.append(f"{text!r} links nowhere")
    assert not bad, "\n".join(bad)


def test_a_citation_reads_author_year(pages):
    """{cite:p}`vaswani2017attention` renders as (Vaswani et al., 2017)."""
    texts = [text for name in PAGES if source_name(name) != "references"
             for text, _ in pages(name).page.evaluate(CITATIONS)]
    assert "(Vaswani et al., 2017)" in texts, sorted(set(texts))[:20]


# ------------------------------------------------------- missing browser


# ------------------------------------------------------- language switch

SWITCH = """() => { const a = document.querySelector('a.posenc-language-switch');
  return a && [a.href, a.getAttribute('hreflang'), a.textContent.trim()]; }"""


def other_edition(name):
    """The same page in the other edition."""
    edition = edition_of(name)
    return ("" if edition else "zh/") + name.removeprefix(edition)


@pytest.mark.parametrize("name", [p for p in PAGES if source_name(p) != "index"])
def test_language_switch(pages, book_site, server, name):
    """Every page links to the same page of the other edition, relatively."""
    found = pages(name).page.evaluate(SWITCH)
    assert found, f"{name}: no language switch"
    href, lang, label = found
    target = other_edition(name)
    assert href == server + target, f"{name}: the switch goes to {href}"
    assert (book_site / target).is_file(), f"{name}: {target} does not exist"
    chinese = not edition_of(name)
    assert (lang, label) == (("zh-CN", "中文") if chinese else ("en", "English"))


def test_language_switch_from_file(browser, book_site):
    """From file://, the switch leads to the Chinese page and back."""
    name = f"{toc_files()[1]}.html"
    start = book_site.as_uri() + "/" + name
    visit = Visit(browser, start)
    try:
        page = visit.page
        assert page.evaluate("document.documentElement.lang") == "en"
        page.click("a.posenc-language-switch")
        page.wait_for_url(book_site.as_uri() + "/zh/" + name)
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        page.click("a.posenc-language-switch")
        page.wait_for_url(start)
        assert not visit.failed, visit.failed
        assert not visit.errors, visit.errors
    finally:
        visit.close()


def test_language_switch_keeps_the_section(browser, server):
    """The sections have the same ids in both editions (tools/i18n.py
    build-zh, _ext/posenc_i18n.py): the switch takes the reader to the
    section of the address (a heading's link, the page's contents)."""
    name = "chapters/06_rope.html"
    visit = Visit(browser, server + name)
    try:
        page = visit.page
        ids = page.evaluate("() => [...document.querySelectorAll("
                            "'main section section[id]')].map(s => s.id)")
        assert len(ids) > 3 and not any(re.fullmatch(r"id\d+", i) for i in ids)
        target = ids[2]
        page.goto(server + name + "#" + target)
        page.click("a.posenc-language-switch")
        page.wait_for_url(server + "zh/" + name + "#" + target)
        assert page.evaluate(f"() => !!document.getElementById('{target}')")
        # and back
        page.click("a.posenc-language-switch")
        page.wait_for_url(server + name + "#" + target)
        assert not visit.errors, visit.errors
    finally:
        visit.close()


THEME_TEXTS = """() => {
  const out = [], attrs = ['aria-label', 'title', 'placeholder', 'data-bs-title'];
  for (const el of document.querySelectorAll(attrs.map(a => `[${a}]`).join())) {
    if (el.closest('article.bd-article')) continue;  // the page's own words
    for (const a of attrs) { const v = el.getAttribute(a); if (v) out.push(v); }
  }
  for (const el of document.querySelectorAll(
      '.prev-next-area .prev-next-subtitle, .search-button-field, .skip-link, '
      + '#pst-back-to-top, .onthispage, .bd-header-article .btn')) {
    out.push(el.textContent.trim());
  }
  return out.filter(t => t);
}"""
THEME_ENGLISH = re.compile(
    r"\b(Search|Contents|previous|next|Color mode|Skip to main content|Back to "
    r"top|Download|Print to PDF|Fullscreen|On this page|Sidebar|Toggle|"
    r"System Settings|Light|Dark)\b")


@pytest.mark.parametrize("name", ["zh/" + f"{toc_files()[1]}.html", "zh/search.html",
                                  "zh/genindex.html"])
def test_theme_speaks_chinese(pages, name):
    """The theme's own words (search, contents, previous/next, ...) are
    Chinese on the Chinese pages."""
    texts = pages(name).page.evaluate(THEME_TEXTS)
    assert texts, "no theme text found: the selectors are out of date"
    english = sorted({t for t in texts if THEME_ENGLISH.search(t)})
    assert not english, f"{name}: English theme words {english}"


def test_theme_words_check_bites(pages):
    """The same check finds the English theme words on the English page."""
    texts = pages(f"{toc_files()[1]}.html").page.evaluate(THEME_TEXTS)
    assert any(THEME_ENGLISH.search(t) for t in texts), texts


def test_a_missing_browser_is_reported(tmp_path):
    """Without Chromium: a skip with a warning in the summary, or (with
    POSENC_REQUIRE_BROWSER) a failure."""
    (tmp_path / "index.html").write_text("not used", encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "POSENC_REQUIRE_BROWSER", "PYTEST_ADDOPTS",
                        "PYTEST_XDIST_WORKER")}
    env.update(POSENC_CHROMIUM=str(tmp_path / "no-chromium"),
               POSENC_BOOK_HTML=str(tmp_path))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-p", "no:randomly", str(Path(__file__)),
           "-k", "test_page_is_clean and intro and http and not zh"]
    quiet = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
    out = quiet.stdout + quiet.stderr
    assert quiet.returncode == 0, out[-3000:]
    assert "1 skipped" in out and "warnings summary" in out, out[-3000:]
    assert "browser tests skipped" in out and "no-chromium" in out, out[-3000:]
    assert "sliders reach their figures" in out, out[-3000:]
    env["POSENC_REQUIRE_BROWSER"] = "1"
    strict = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    out = strict.stdout + strict.stderr
    assert strict.returncode == 1, out[-3000:]
    assert re.search(r"\b1 (failed|error)\b", out), out[-3000:]
    assert "no-chromium is not an executable" in out, out[-3000:]
    assert "browser tests skipped" not in out, out[-3000:]


# --------------------------------------------------- figure records


def _num(values):
    return np.asarray(values, dtype=float)


def mpl_record(fig):
    """The data of a matplotlib figure, shaped like posenc.js's record."""
    axes = []
    for ax in fig.axes:
        if hasattr(ax, "_colorbar") or not ax.get_visible():
            continue
        legend = ax.get_legend()
        axes.append({
            "title": ax.get_title(), "xlabel": ax.get_xlabel(),
            "ylabel": ax.get_ylabel(), "xscale": ax.get_xscale(),
            "yscale": ax.get_yscale(),
            "images": [np.ma.filled(np.ma.asarray(im.get_array(), float),
                                    np.nan) for im in ax.images],
            "lines": [{"x": _num(line.get_xdata(orig=True)),
                       "y": _num(line.get_ydata(orig=True)),
                       "label": line.get_label(), "gid": line.get_gid()}
                      for line in ax.lines],
            "patches": [(p.get_x(), p.get_y(), p.get_width(), p.get_height())
                        for p in ax.patches
                        if isinstance(p, matplotlib.patches.Rectangle)],
            "collections": [
                {"segments": [np.asarray(s, float) for s in c.get_segments()]}
                if isinstance(c, matplotlib.collections.LineCollection)
                else {"offsets": np.asarray(c.get_offsets(), float)}
                for c in ax.collections],
            "texts": [t.get_text() for t in ax.texts],
            "legend": None if legend is None else [
                t.get_text() for t in legend.get_texts()],
        })
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else None
    return {"suptitle": suptitle, "axes": axes}


def _close(a, b):
    a, b = _num(a), _num(b)
    if a.size == 0 and b.size == 0:  # JSON cannot tell (1, 0) from (1, 0, 0)
        return None
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    scale = max(1.0, float(np.nanmax(np.abs(b), initial=0.0)))
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return "NaN in different places"
    bad = ~np.isclose(a, b, rtol=RTOL, atol=RTOL * scale, equal_nan=True)
    if bad.any():
        i = np.argwhere(bad)[0]
        return (f"{int(bad.sum())} values differ, first at {tuple(i)}: "
                f"{a[tuple(i)]!r} != {b[tuple(i)]!r}")
    return None


def _label(text):
    return None if text is None or str(text).startswith("_") else str(text)


def compare(js, py):
    """Differences between a posenc.js record and a matplotlib record."""
    diffs = []
    if js["suptitle"] != py["suptitle"]:
        diffs.append(f"suptitle {js['suptitle']!r} != {py['suptitle']!r}")
    if len(js["axes"]) != len(py["axes"]):
        return diffs + [f"{len(js['axes'])} axes != {len(py['axes'])}"]
    for k, (a, b) in enumerate(zip(js["axes"], py["axes"], strict=True)):
        where = f"axes {k}"
        for key in ("title", "xlabel", "ylabel", "xscale", "yscale", "texts",
                    "legend"):
            if a[key] != b[key]:
                diffs.append(f"{where} {key}: {a[key]!r} != {b[key]!r}")
        for key in ("images", "lines", "patches", "collections"):
            if len(a[key]) != len(b[key]):
                diffs.append(f"{where}: {len(a[key])} {key} != {len(b[key])}")
        for i, (x, y) in enumerate(zip(a["images"], b["images"], strict=False)):
            if err := _close(x, y):
                diffs.append(f"{where} image {i}: {err}")
        for i, (x, y) in enumerate(zip(a["lines"], b["lines"], strict=False)):
            for key in ("x", "y"):
                if err := _close(x[key], y[key]):
                    diffs.append(f"{where} line {i} {key}: {err}")
            if _label(x["label"]) != _label(y["label"]):
                diffs.append(f"{where} line {i} label {x['label']!r} != "
                             f"{y['label']!r}")
            if x["gid"] != y["gid"]:
                diffs.append(f"{where} line {i} gid {x['gid']!r} != "
                             f"{y['gid']!r}")
        if a["patches"] and len(a["patches"]) == len(b["patches"]):
            if err := _close(a["patches"], b["patches"]):
                diffs.append(f"{where} patches: {err}")
        pairs = zip(a["collections"], b["collections"], strict=False)
        for i, (x, y) in enumerate(pairs):
            if set(x) != set(y):
                diffs.append(f"{where} collection {i}: {set(x)} != {set(y)}")
                continue
            for key in x:
                xs, ys = x[key], y[key]
                if key == "offsets" and len(xs) == 0 and len(ys) == 0:
                    continue
                if err := _close(xs, ys):
                    diffs.append(f"{where} collection {i} {key}: {err}")
    return diffs


def python_figure(fig_spec, params):
    """The matplotlib figure of ``fig_spec`` for the values JS used."""
    kwargs = {}
    for s in fig_spec.sliders:
        value = params[s.name]
        kwargs[s.name] = int(value) if s.is_int else float(value)
    fig = fig_spec.plot(**kwargs)
    try:
        return mpl_record(fig)
    finally:
        plt.close("all")


# ------------------------------------------------------ live figures


def _widget_ids(page, key):
    return page.eval_on_selector_all(
        ".posenc-widget", "(ws, key) => ws.filter(w => w.dataset.posencKey "
        "=== key).map(w => w.id)", key)


def _state(page, wid):
    # JSON is much faster than Playwright's serialisation of big arrays;
    # NaN (blank tiles of a mosaic) comes back as None, read as nan.
    return json.loads(page.evaluate("id => JSON.stringify(posenc.inspect(id))",
                                    wid))


def _wait_draw(page, wid, before):
    page.wait_for_function(
        "([id, n]) => { const w = document.getElementById(id); "
        "return w.dataset.posencState === 'ready' && "
        "+w.dataset.posencDraws > n; }", arg=[wid, before])


def _grid(slider):
    count = int(round((slider.max - slider.min) / slider.step)) + 1
    return slider.min + slider.step * np.arange(count)


def check_state(page, wid, fig_spec, expected_positions=None):
    """The readouts and the drawn data must match Python; the state."""
    state = _state(page, wid)
    assert state["state"] == "ready"
    for s in fig_spec.sliders:
        pos = state["positions"][s.name]
        grid = _grid(s)
        assert np.isclose(grid, pos, rtol=0, atol=1e-9 * s.step).any(), (
            s.name, pos)
        if expected_positions and s.name in expected_positions:
            assert np.isclose(pos, expected_positions[s.name],
                              atol=1e-9 * s.step), (s.name, pos)
        text = posenc_widgets.readout(s, pos)
        assert state["readouts"][s.name] == text
        sid = f"{wid}-{s.name}"
        assert page.text_content(f"#{sid}-out") == text
        assert page.get_attribute(f"#{sid}", "aria-valuetext") == text
        value = state["params"][s.name]
        assert np.isclose(value, posenc_widgets.slider_value(s, pos),
                          rtol=1e-12), (s.name, value)
    assert fig_spec.text(fig_spec.caption) in state["label"]
    diffs = compare(state["figure"], python_figure(fig_spec, state["params"]))
    assert not diffs, "\n".join(diffs[:20])
    return state


def _set(page, wid, name, position):
    page.evaluate(
        "([id, name, v]) => { const el = document.querySelector("
        "`#${id} input[name=\"${name}\"]`); el.value = String(v); "
        "el.dispatchEvent(new Event('input', {bubbles: true})); }",
        [wid, name, position])


def _draws(page, wid):
    return _state(page, wid)["draws"]


@pytest.mark.parametrize("name,key", WIDGETS + ZH_WIDGETS)
def test_widget(pages, name, key, monkeypatch):
    fig_spec = INTERACTIVE.get(key)
    assert fig_spec is not None, f"{key}: no such Interactive"
    # the Chinese page's figure is compared with the Chinese matplotlib one
    monkeypatch.setenv("POSENC_LANG", "zh_CN" if edition_of(name) else "en")
    visit = pages(name)
    page = visit.page
    ids = _widget_ids(page, key)
    assert ids, f"{key} is not on {name}"
    for wid in ids:
        # structure: labelled, enabled sliders with the Python ranges
        for s in fig_spec.sliders:
            sid = f"{wid}-{s.name}"
            label = page.text_content(f"label[for='{sid}']")
            assert label and (fig_spec.text(s.label) if s.label
                              else s.name) in label
            attrs = page.evaluate(
                "id => { const e = document.getElementById(id); return "
                "[+e.min, +e.max, +e.step, e.disabled, e.type]; }", sid)
            assert attrs == [s.min, s.max, s.step, False, "range"], attrs
        if fig_spec.replaces:  # the static figure's caption, and the note
            caption = page.text_content(f"figure.posenc-host:has(#{wid}) "
                                        "figcaption")
            assert caption.strip() and PAGE_WORDS(name)["note"] in caption
        else:
            assert page.text_content(f"#{wid} figcaption").startswith(
                fig_spec.text(fig_spec.caption))
        page.locator(f"#{wid}").screenshot(
            path=_artifact(name, key, "default"))
        check_state(page, wid, fig_spec,
                    {s.name: s.value for s in fig_spec.sliders})
        rng = np.random.default_rng(abs(hash(key)) % 2**32)
        for s in fig_spec.sliders:
            sel = f"#{wid}-{s.name}"
            grid = _grid(s)
            start = _state(page, wid)["positions"][s.name]
            i0 = int(np.argmin(np.abs(grid - start)))
            # keyboard: one step right (or left at the end), End, Home
            moves = [("ArrowLeft" if i0 == len(grid) - 1 else "ArrowRight",
                      grid[i0 - 1] if i0 == len(grid) - 1 else grid[i0 + 1]),
                     ("End", grid[-1]), ("Home", grid[0])]
            for keyname, target in moves:
                state = _state(page, wid)
                page.focus(sel)
                page.keyboard.press(keyname)
                _wait_draw(page, wid, state["draws"])
                moved = check_state(page, wid, fig_spec, {s.name: target})
                # no dead control: a move changes what the figure shows
                assert moved["figure"] != state["figure"], (s.name, keyname)
            # setting the value: a random grid point, then the default
            for target in (grid[rng.integers(len(grid))], s.value):
                before = _draws(page, wid)
                _set(page, wid, s.name, repr(float(target)))
                _wait_draw(page, wid, before)
                check_state(page, wid, fig_spec, {s.name: target})
        # all sliders away from their defaults at once
        for s in fig_spec.sliders:
            grid = _grid(s)
            before = _draws(page, wid)
            _set(page, wid, s.name, repr(float(grid[rng.integers(len(grid))])))
            _wait_draw(page, wid, before)
        check_state(page, wid, fig_spec)
        page.locator(f"#{wid}").screenshot(path=_artifact(name, key, "moved"))
        for s in fig_spec.sliders:  # back to the defaults
            before = _draws(page, wid)
            _set(page, wid, s.name, repr(float(s.value)))
            _wait_draw(page, wid, before)
    assert not visit.errors, visit.errors
    assert not visit.failed, visit.failed


def _artifact(name, key, what):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{name}__{key}__{what}")
    return ARTIFACTS / f"{safe}.png"


SWEEP = """async ([id, name, positions]) => {
  const w = posenc.widgets.find(x => x.el.id === id);
  const input = w.inputs[name], keep = input.value, bad = [];
  for (const v of positions) {
    input.value = String(v);
    try {
      await w.draw();
      const rec = w.figure.record();
      if (!rec.axes.length) bad.push(v + ': no axes');
    } catch (err) { bad.push(v + ': ' + err); }
  }
  input.value = keep;
  await w.draw();
  return bad;
}"""


@pytest.mark.parametrize("name,key", WIDGETS + ZH_WIDGETS)
def test_widget_sweep(pages, name, key):
    """Every position of every slider draws without an error."""
    fig_spec = INTERACTIVE[key]
    visit = pages(name)
    for wid in _widget_ids(visit.page, key):
        for s in fig_spec.sliders:
            positions = [repr(float(v)) for v in _grid(s)]
            bad = visit.page.evaluate(SWEEP, [wid, s.name, positions])
            assert not bad, f"{s.name}: {bad[:5]}"
    assert not visit.errors, visit.errors


def test_a_wrong_formula_is_caught(pages):
    """The figure comparison fails when posenc.js computes a wrong formula."""
    if not WIDGETS:
        pytest.skip("no live figure in the book")
    name, key = WIDGETS[0]
    fig_spec = INTERACTIVE[key]
    page = pages(name).page
    wid = _widget_ids(page, key)[0]
    page.evaluate("""() => {
      const core = posenc.core;
      window.__saved = {};
      for (const fn of Object.keys(core)) {
        window.__saved[fn] = core[fn];
        const f = core[fn];
        core[fn] = function (...args) {  // a 1e-9 error in every result
          const bump = v => typeof v === 'number' ? v * (1 + 1e-9) + 1e-9 :
            Array.isArray(v) ? v.map(bump) : v;
          return bump(f.apply(this, args));
        };
      }
      if (window.posenc.normals) {
        window.__saved.normals = posenc.normals;
        const g = posenc.normals;
        posenc.normals = (s, n) => g(s, n).map(v => v * (1 + 1e-9) + 1e-9);
      }
    }""")
    try:
        before = _draws(page, wid)
        page.evaluate("id => posenc.widgets.find(w => w.el.id === id).draw()",
                      wid)
        _wait_draw(page, wid, before)
        state = _state(page, wid)
        diffs = compare(state["figure"],
                        python_figure(fig_spec, state["params"]))
        assert diffs, "a wrong formula was not caught"
    finally:
        page.evaluate("""() => {
          for (const fn of Object.keys(window.__saved)) {
            if (fn === 'normals') posenc.normals = window.__saved[fn];
            else posenc.core[fn] = window.__saved[fn];
          }
        }""")
        before = _draws(page, wid)
        page.evaluate("id => posenc.widgets.find(w => w.el.id === id).draw()",
                      wid)
        _wait_draw(page, wid, before)


# ------------------------------------------------------- the plotter

PLOTTER = """() => {
  const P = posenc.plot, out = {};
  out.ticks25 = P.niceTicks(0, 10, 4, false).map(v => P.tickLabel(v, 2.5));
  out.ticksInt = P.niceTicks(-0.5, 3.5, 12, true);
  out.ticksFrac = P.niceTicks(0, 1, 5, false).map(v => P.tickLabel(v, 0.2));
  out.thousands = P.tickLabel(20000, 5000);
  const fig = new P.Figure([6, 3]);
  const ax = fig.subplots(1, 1);
  ax.bar([0, 1, 2, 3], [1, 0, 1, 1]);
  ax.plot([0, 1, 2, 3], [0.5, 0.25, 0.75, 1.0]);
  out.intX = ax.integerData('x');
  out.intY = ax.integerData('y');
  const log = new P.Figure([6, 3]), lax = log.subplots(1, 1);
  lax.loglog([10, 1e6], [1, 1e7]);
  const canvas = document.createElement('canvas');
  canvas.style.width = '600px';
  document.body.appendChild(canvas);
  log.render(canvas);
  out.logX = log.boxes.filter(b => b.kind === 'xtick').map(b => b.text);
  out.logY = log.boxes.filter(b => b.kind === 'ytick').map(b => b.text);
  out.heights = [];
  for (const n of [1, 2, 3]) {  // the data never sets the height
    const f = new P.Figure([6, 3]), a = f.subplots(1, 1);
    a.imshow(Array.from({length: n * 8}, () => Array(5).fill(0.5)));
    f.render(canvas);
    out.heights.push(canvas.clientHeight);
  }
  out.runs = P.runs('$d_{\\\\mathrm{model}} = 2^{-8}$');
  canvas.remove();
  return out;
}"""


def test_plotter_ticks_and_type(pages):
    """Ticks read as matplotlib's would, typeset as the prose is: a 2.5
    tick says 2.5, integer data get whole ticks, a log axis one style of
    label, subscripts are subscripts; the height does not follow the data."""
    if not WIDGETS:
        pytest.skip("no page loads posenc.js")
    got = pages(WIDGETS[0][0]).page.evaluate(PLOTTER)
    assert got["ticks25"] == ["0.0", "2.5", "5.0", "7.5", "10.0"]
    assert got["ticksInt"] and all(float(v).is_integer()
                                   for v in got["ticksInt"])
    assert got["ticksFrac"] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert got["thousands"] == "20,000"
    assert got["intX"] and not got["intY"]
    assert got["logX"] and all(t.startswith("$10^{") for t in got["logX"])
    assert got["logY"] and all(t.startswith("$10^{") for t in got["logY"])
    assert len(set(got["heights"])) == 1, got["heights"]
    assert got["runs"] == [
        {"t": "d", "lvl": 0, "it": True}, {"t": "model", "lvl": -1, "it": False},
        {"t": " = 2", "lvl": 0, "it": False}, {"t": "\u22128", "lvl": 1, "it": False}]


#: Pairs of labels that may overlap: a legend over texts in the Axes.
MAY_OVERLAP = {frozenset({"legend", "text"})}


def label_overlaps(boxes):
    """Pairs of drawn labels whose boxes overlap (1 px of slack)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if frozenset({a["kind"], b["kind"]}) in MAY_OVERLAP:
                continue
            if (a["x0"] < b["x1"] - 1 and b["x0"] < a["x1"] - 1
                    and a["y0"] < b["y1"] - 1 and b["y0"] < a["y1"] - 1):
                found.append(f"{a['kind']} {a['text']!r} / {b['kind']} "
                             f"{b['text']!r}")
    return found


def test_overlap_check_bites():
    """The overlap rule finds two labels on top of each other."""
    box = {"kind": "title", "text": "a", "x0": 0, "x1": 50, "y0": 0, "y1": 12}
    other = dict(box, kind="annotation", x0=40, x1=90)
    assert label_overlaps([box, other])
    assert not label_overlaps([box, dict(other, x0=60, x1=90)])


def _extremes(fig_spec):
    """Slider settings to draw: the defaults, then each slider at its
    ends, then all sliders at their ends together."""
    out = [{}]
    for s in fig_spec.sliders:
        out += [{s.name: s.min}, {s.name: s.max}]
    out.append({s.name: s.max for s in fig_spec.sliders})
    out.append({s.name: s.min for s in fig_spec.sliders})
    return out


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
@pytest.mark.parametrize("name,key", WIDGETS + ZH_WIDGETS)
def test_live_figure_layout(pages, phone_pages, name, key, width):
    """At 1280 and 390 px, at the defaults and at the sliders' ends: no two
    labels of a live figure overlap (titles, tick labels, annotations,
    axis labels), and the canvas keeps one height whatever the sliders."""
    fig_spec = INTERACTIVE[key]
    visit = (pages if width == DESKTOP else phone_pages)(name)
    page = visit.page
    for wid in _widget_ids(page, key):
        heights, bad = set(), []
        for setting in _extremes(fig_spec):
            for s in fig_spec.sliders:
                target = setting.get(s.name, s.value)
                before = _draws(page, wid)
                _set(page, wid, s.name, repr(float(target)))
                _wait_draw(page, wid, before)
            state = _state(page, wid)
            heights.add(state["height"])
            for pair in label_overlaps(state["boxes"]):
                bad.append(f"{setting or 'defaults'}: {pair}")
        if width == PHONE:
            page.locator(f"#{wid}").screenshot(
                path=_artifact(name, key, "phone"))
        assert not bad, f"{key} at {width} px:\n" + "\n".join(bad[:12])
        assert len(heights) == 1, f"{key} at {width} px: heights {heights}"
    assert not visit.errors, visit.errors


# ------------------------------------------- live figures on the page


def PAGE_WORDS(name):
    """The words around a live figure, in the edition of page ``name``."""
    from posenc_plots import i18n
    return i18n.PAGE.get("zh_CN" if edition_of(name) else "en")


HOSTED = [(name, key) for name, key in WIDGETS + ZH_WIDGETS
          if INTERACTIVE[key].replaces]

FIGURE_STATE = """([id, figId]) => {
  const w = document.getElementById(id), f = document.getElementById(figId);
  const shown = e => !!e && getComputedStyle(e).display !== 'none' &&
    e.getBoundingClientRect().height > 0;
  return {
    inFigure: !!f && f.contains(w), live: !!f && f.classList.contains('posenc-live'),
    img: !!f && shown(f.querySelector(':scope > img')),
    canvas: shown(w.querySelector('canvas')), widget: shown(w),
    number: f ? (f.querySelector('figcaption .caption-number') || {})
      .textContent : null,
    figures: [...document.querySelectorAll('figure')].filter(x => x.contains(w)).length,
    standalone: !!w.querySelector('figcaption'),
  };
}"""


def test_most_live_figures_replace_a_static_one():
    """13 of the 17 live figures sat under a static copy: those name it."""
    if TOC != ROOT / "_toc.yml":
        pytest.skip("a custom toc is in use")
    assert len({key for _, key in HOSTED}) >= 13


@pytest.mark.parametrize("name,key", HOSTED)
def test_live_figure_takes_the_static_place(pages, name, key):
    """The live figure sits in the static figure's place: inside it, with
    its number and caption, the PNG hidden while the canvas shows."""
    fig_spec = INTERACTIVE[key]
    page = pages(name).page
    for wid in _widget_ids(page, key):
        got = page.evaluate(FIGURE_STATE, [wid, fig_spec.replaces])
        assert got["inFigure"] and got["live"], (key, got)
        assert got["canvas"] and got["widget"] and not got["img"], (key, got)
        assert got["number"] and got["number"].strip(), (key, got)
        assert got["figures"] == 1 and not got["standalone"], (key, got)


def test_without_javascript_the_static_figures_show(browser, server):
    """With scripts off, each host figure shows its PNG and no sliders."""
    names = sorted({name for name, _ in HOSTED})
    for name in names:
        page = browser.new_page()
        try:
            cdp = browser.new_cdp_session(page)
            cdp.send("Emulation.setScriptExecutionDisabled", {"value": True})
            page.goto(server + name, wait_until="load")
            for key in {k for n, k in HOSTED if n == name}:
                fig_id = INTERACTIVE[key].replaces
                got = page.evaluate("""id => {
                  const f = document.getElementById(id);
                  const img = f.querySelector(':scope > img');
                  const w = f.querySelector('.posenc-widget');
                  return [img.getBoundingClientRect().height,
                          getComputedStyle(w).display];
                }""", fig_id)
                assert got[0] > 50 and got[1] == "none", (name, key, got)
        finally:
            page.close()


STICKY = """id => {
  const w = document.getElementById(id), c = w.querySelector('canvas');
  const r = c.getBoundingClientRect();
  window.scrollBy(0, r.bottom - window.innerHeight + 4);
  const k = w.querySelector('.posenc-controls').getBoundingClientRect();
  const h = document.querySelector('.bd-header-article');
  const below = h ? h.getBoundingClientRect().bottom : 0;
  return {top: k.top, bottom: k.bottom, header: below, view: window.innerHeight,
          canvasBottom: c.getBoundingClientRect().bottom,
          tall: r.height + k.height > window.innerHeight - below};
}"""


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
@pytest.mark.parametrize("name,key", WIDGETS + ZH_WIDGETS)
def test_sliders_stay_in_sight(pages, phone_pages, name, key, width):
    """Scrolled to the bottom of the panels, the sliders are still on the
    screen, under the theme's header: a reader sees what a slider moves."""
    page = (pages if width == DESKTOP else phone_pages)(name).page
    for wid in _widget_ids(page, key):
        got = page.evaluate(STICKY, wid)
        assert got["canvasBottom"] <= got["view"] + 1, got
        assert got["top"] >= got["header"] - 1, got
        assert got["bottom"] <= got["view"], got
        page.evaluate("() => window.scrollTo(0, 0)")


CONTROLS = """id => [...document.querySelectorAll(`#${id} .posenc-control`)].map(c => {
  const label = c.querySelector('label'), input = c.querySelector('input');
  const r = input.getBoundingClientRect(), lr = label.getBoundingClientRect();
  // the thumb's size as posenc.css sets it (no computed style for it)
  const rules = [...document.styleSheets].flatMap(sheet => {
    try { return [...sheet.cssRules]; } catch (err) { return []; } });
  const thumb = rules.filter(r => r.selectorText &&
    r.selectorText.includes('.posenc-control') &&
    r.selectorText.includes('::-webkit-slider-thumb')).map(r => r.style)
    .reduce((a, b) => ({width: b.width || a.width, height: b.height || a.height}),
            {width: '0', height: '0'});
  const line = parseFloat(getComputedStyle(label).lineHeight) ||
    1.5 * parseFloat(getComputedStyle(label).fontSize);
  return {label: label.textContent, w: r.width, h: r.height,
          thumbW: parseFloat(thumb.width), thumbH: parseFloat(thumb.height),
          lines: lr.height / line, cut: label.scrollWidth > label.clientWidth + 1,
          right: c.getBoundingClientRect().right, view: window.innerWidth};
})"""


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
@pytest.mark.parametrize("name,key", WIDGETS + ZH_WIDGETS)
def test_sliders_are_touch_size_with_one_line_labels(pages, phone_pages,
                                                     name, key, width):
    """WCAG 2.5.8: slider targets at least 24 by 24 px; each label on one
    line, not cut, inside the screen, at 1280 and at 390 px."""
    page = (pages if width == DESKTOP else phone_pages)(name).page
    for wid in _widget_ids(page, key):
        for c in page.evaluate(CONTROLS, wid):
            assert c["h"] >= 24 and c["w"] >= 24, c
            assert c["thumbW"] >= 24 and c["thumbH"] >= 24, c
            assert c["lines"] < 1.5 and not c["cut"], c
            assert c["right"] <= c["view"], c


DARK = """() => {
  document.documentElement.dataset.theme = 'dark';
  const canvas = document.querySelector('.posenc-canvas');
  const img = [...document.querySelectorAll('.bd-content img')].find(
    i => getComputedStyle(i).display !== 'none');
  const out = [getComputedStyle(canvas).filter, img && getComputedStyle(img).filter];
  document.documentElement.dataset.theme = 'light';
  out.push(getComputedStyle(canvas).filter, img && getComputedStyle(img).filter);
  return out;
}"""


@pytest.mark.parametrize("edition", EDITIONS)
def test_dark_mode_treats_both_figures_alike(pages, edition):
    """In dark mode the canvases are dimmed as the theme dims the static
    figures (and neither is in light mode)."""
    if not WIDGETS:
        pytest.skip("no live figure in the book")
    page = pages(edition + WIDGETS[0][0]).page
    dark_canvas, dark_img, light_canvas, light_img = page.evaluate(DARK)
    assert dark_img and dark_img != "none", dark_img
    assert dark_canvas == dark_img
    assert light_canvas == light_img == "none"


@pytest.mark.parametrize("name", PAGES)
def test_page_on_a_phone(phone_pages, name):
    """At 390 px: every live figure fits the screen; a screenshot of the
    whole page is kept."""
    page = phone_pages(name).page
    widths = page.eval_on_selector_all(
        ".posenc-widget", "ws => ws.map(w => w.getBoundingClientRect().right)")
    assert all(right <= PHONE for right in widths), widths
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / ("phone__" + name.replace("/", "__")
                                      + ".png"), full_page=True)


# ----------------------------------------------------------- coverage


def test_every_interactive_has_a_live_figure():
    """Each Interactive is a live figure; each slider cell is tagged."""
    if TOC != ROOT / "_toc.yml":
        pytest.skip("a custom toc is in use")
    shown = {}
    for name in toc_files():
        for index, key, tags in notebook_widgets(name):
            where = f"{name}.ipynb cell {index}"
            assert key, f"{where}: posenc_plots.show() without posenc_widget"
            assert key in INTERACTIVE, f"{where}: unknown figure {key!r}"
            assert "remove-output" in tags, f"{where}: tag it remove-output"
            assert "nbval-ignore-output" in tags, where
            assert "skip-execution" in tags, where
            shown.setdefault(key, []).append(where)
    modules = {module for module, _ in all_interactive()}
    in_book = {key.split(":")[0] for key in shown}
    missing = [key for key in INTERACTIVE
               if key.split(":")[0] in modules and key not in shown]
    # chapters that are in the book must show all their interactive figures
    missing = [key for key in missing if key.split(":")[0] in in_book]
    assert not missing, f"Interactive figures without a live figure: {missing}"


# ------------------------------------------------------ one source of truth


def _grid_cases():
    """(function, args, kwargs) run in JS and in posenc_core."""
    rng = np.random.default_rng(0)
    bases = [1.5, 10.0, 100.0, 10000.0, 10.0**4.25, 500000.0, 1e6]
    cases = []
    for d in (2, 4, 8, 64, 128, 512, 1024):
        for base in bases:
            cases.append(("frequencies", [d], {"base": base}))
            cases.append(("wavelengths", [d], {"base": base}))
    # positions up to ~1000: beyond, one ulp of omega (numpy's and the
    # browser's pow may differ by one) moves pos * omega by more than 1e-12
    positions = [50, [0.0, 0.5, 1.0, 2.25, 99.0, 1000.5, -3.0, 3060.0],
                 list(np.linspace(0.0, 99.0, 397))]
    for d in (2, 8, 64, 128):
        for base in bases[::2]:
            for layout in ("interleaved", "concat"):
                for pos in positions:
                    cases.append(("sinusoidal_encoding", [pos, d],
                                  {"base": base, "layout": layout}))
    for k in (-3.5, 0.0, 2.0, 7.25):
        for d in (2, 8, 16):
            cases.append(("relative_shift_matrix", [k, d], {"base": 100.0}))
    for n_bits in (1, 4, 8, 10, 16):
        cases.append(("binary_encoding", [min(2**n_bits, 300), n_bits], {}))
        cases.append(("binary_encoding", [[0, 1, 2**n_bits - 1], n_bits], {}))
        # the counter rolls over: 2**n_bits + p reads as p
        cases.append(("binary_encoding", [40, n_bits], {}))
        cases.append(("binary_encoding", [[2**n_bits, 2**n_bits + 5,
                                           7 * 2**n_bits + 3, 2**53 - 1,
                                           2**53], n_bits], {}))
    scalings = [None]
    for s in (1.0, 2.0, 8.0, 32.0):
        scalings += [{"type": "linear", "factor": s},
                     {"type": "ntk", "factor": s}]
        for L in (1024, 4096, 8192, 32768):
            scalings += [
                {"type": "yarn", "factor": s,
                 "original_max_position_embeddings": L},
                {"type": "llama3", "factor": s,
                 "original_max_position_embeddings": L}]
    scalings += [
        {"type": "yarn", "factor": 4.0, "original_max_position_embeddings":
         2048, "beta_fast": 16.0, "beta_slow": 2.0},
        {"type": "llama3", "factor": 8.0, "low_freq_factor": 2.0,
         "high_freq_factor": 8.0, "original_max_position_embeddings": 8192},
        # Llama 4 Scout: low == high, a step without a ramp
        {"type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
         "high_freq_factor": 1.0, "original_max_position_embeddings": 8192},
        {"rope_type": "linear", "factor": 3.0}]
    for head_dim in (4, 8, 64, 128, 256):
        for base in (10000.0, 500000.0):
            for scaling in scalings:
                cases.append(("rope_frequencies", [head_dim],
                              {"base": base, "scaling": scaling}))
    for layout in ("interleaved", "half"):
        for d in (2, 8, 64):
            x = rng.normal(size=(6, d)).tolist()
            for pos in (6, [0.0, 1.0, 5.5, -2.0, 100.0, 1024.0]):
                cases.append(("apply_rope", [x, pos],
                              {"base": 10000.0, "layout": layout}))
            freqs = pc.rope_frequencies(d, base=500000.0, scaling={
                "type": "linear", "factor": 4}).tolist()
            cases.append(("apply_rope", [x, 6],
                          {"layout": layout, "frequencies": freqs}))
        x3 = rng.normal(size=(2, 3, 8)).tolist()
        cases.append(("apply_rope", [x3, 3], {"layout": layout}))
    for head_dim in (8, 64, 128, 256):
        for base in (100.0, 10000.0, 1e6):
            cases.append(("rope_decay_bound", [257, head_dim], {"base": base}))
        cases.append(("rope_decay_bound", [[0.0, 0.5, -3.0, 1e3], head_dim],
                      {"frequencies": pc.rope_frequencies(
                          head_dim, scaling={"type": "ntk", "factor": 4})
                       .tolist()}))
    for d in (2, 8, 128):
        cases.append(("rope_layout_permutation", [d], {}))
    for s in (1.0, 1.5, 8.0, 32.0):
        cases.append(("yarn_attention_scale", [s], {}))
    for head_dim in (2, 8, 16, 96, 128, 256, 512):
        for fraction in (0.0, 0.05, 0.25, 0.3, 1 / 3, 0.5, 0.75, 0.95, 1.0):
            for base in (10.0, 10000.0, 1e6, 5e6):
                for convention in ("spread", "proportional"):
                    cases.append(("partial_rope_frequencies",
                                  [head_dim, fraction],
                                  {"base": base, "convention": convention}))
    for n in (0, 1, 5, 9):
        for k in (None, 0, 3):
            cases.append(("relative_positions", [n], {"max_distance": k}))
    rel = list(range(-600, 601))
    for bidirectional in (True, False):
        for num_buckets in (4, 6, 8, 10, 16, 32, 64):
            n = num_buckets // 2 if bidirectional else num_buckets
            for max_distance in (20, 40, 128, 512):
                if max_distance > n // 2:
                    cases.append(("t5_relative_position_bucket", [rel], {
                        "bidirectional": bidirectional,
                        "num_buckets": num_buckets,
                        "max_distance": max_distance}))
    for h in range(1, 65):
        cases.append(("alibi_slopes", [h], {}))
    for n in (0, 1, 5, 12):
        for h in (1, 3, 8, 12):
            cases.append(("alibi_bias", [n, h], {}))
    x = rng.normal(size=(5, 8))
    w = rng.normal(size=(3, 8, 4)) / np.sqrt(8)
    for bias in (None, pc.alibi_bias(5, 2)[1]):
        for causal in (False, True):
            cases.append(("self_attention",
                          [x.tolist(), w[0].tolist(), w[1].tolist(),
                           w[2].tolist()],
                          {"bias": None if bias is None else bias.tolist(),
                           "causal": causal}))
    values = np.concatenate([rng.normal(size=40) * 10.0**rng.integers(
        -8, 8, size=40), [0.0, 255, 256, 257, 258, 259, 2049, -2.5, 1e-310]])
    for bits in (1, 8, 11, 24, 53):
        cases.append(("round_significand", [values.tolist(), bits], {}))
    # chapter 9: 2-D positions (posenc_core's vision section)
    for h, w in ((1, 1), (2, 3), (5, 4), (14, 14)):
        for d in (4, 8, 64):
            for base in (10.0, 100.0, 10000.0):
                cases.append(("sincos_2d_encoding", [h, w, d], {"base": base}))
        for normalize in ("separate", "max", "min"):
            cases.append(("normalized_patch_coordinates", [h, w],
                          {"normalize": normalize}))
    coords = np.concatenate([np.stack(np.divmod(np.arange(42), 7), axis=1),
                             rng.uniform(-1.0, 1.0, size=(5, 2)),
                             [[0.0, 0.0], [-3.5, 12.25]]]).tolist()
    for d in (4, 8, 64, 128):
        for base in (10.0, 100.0, 10000.0):
            cases.append(("rope_axial_angles", [coords, d], {"base": base}))
            cases.append(("dinov3_rope_angles", [coords, d], {"base": base}))
    for h in (1, 3):
        freqs = rng.normal(size=(h, 8, 2)).tolist()
        cases.append(("rope_mixed_angles", [coords, freqs], {}))
    for layout in ("interleaved", "half"):
        x = rng.normal(size=(6, 8)).tolist()
        angles = rng.uniform(-50.0, 50.0, size=(6, 4)).tolist()
        cases.append(("apply_rope_angles", [x, angles], {"layout": layout}))
        x3 = rng.normal(size=(2, 6, 8)).tolist()
        a3 = rng.uniform(-5.0, 5.0, size=(2, 6, 4)).tolist()
        cases.append(("apply_rope_angles", [x3, a3], {"layout": layout}))
    prompts = [
        [2, ["image", [1, 4, 6]], 1],
        [3, ["video", [3, 4, 4], 2.0], 2],
        [["text", 4], ["image", [1, 8, 12]], 3, ["video", [5, 6, 2], 0.5], 2],
        [["video", [7, 2, 2], 1.0 / 3.0], ["image", [1, 2, 2]], 0],
        [["text", 0], ["video", [2, 16, 4]], ["text", 5]],
    ]
    for segments in prompts:
        for variant in ("qwen2-vl", "qwen2.5-vl", "qwen3-vl"):
            for nxt in ("largest", "spatial"):
                for nu in (2, 4, 25):
                    cases.append(("mrope_position_ids", [segments],
                                  {"variant": variant, "next_text": nxt,
                                   "tokens_per_second": nu}))
    for section in ([16, 24, 24], [24, 20, 20], [2, 3, 3], [1, 0, 3],
                    [0, 5, 1], [11, 11, 10]):
        for layout in ("chunked", "interleaved"):
            cases.append(("mrope_pair_axes", [section], {"layout": layout}))
            ids = pc.mrope_position_ids(prompts[2]).tolist()
            for base in (10000.0, 1e6):
                cases.append(("mrope_angles", [ids, 2 * sum(section), section],
                              {"base": base, "layout": layout}))
    return cases


def _flatten(value):
    if isinstance(value, tuple):
        return [_flatten(v) for v in value]
    return np.asarray(value, dtype=float)


def test_core_agrees_with_posenc_core(pages):
    """posenc.core and posenc_core give the same numbers, in Chromium."""
    if not WIDGETS:
        pytest.skip("no page loads posenc.js")
    page = pages(WIDGETS[0][0]).page
    cases = _grid_cases()
    results = json.loads(page.evaluate(
        """cases => JSON.stringify(JSON.parse(cases).map(([fn, args, kw]) => {
             const o = {};
             for (const [k, v] of Object.entries(kw)) if (v !== null) o[k] = v;
             try { return posenc.core[fn](...args, o); }
             catch (err) { return 'error: ' + err.message; }
           }))""", json.dumps(cases)))
    checked = set()
    for (fn, args, kwargs), got in zip(cases, results, strict=True):
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        expected = getattr(pc, fn)(*args, **kwargs)
        where = f"{fn}{tuple(args)[:1]} {kwargs}"
        assert not isinstance(got, str), f"{where}: {got}"
        if fn == "self_attention":
            for part_got, part_exp in zip(got, expected, strict=True):
                assert _close(part_got, part_exp) is None, where
        elif fn in ("binary_encoding", "t5_relative_position_bucket",
                    "relative_positions", "rope_layout_permutation",
                    "round_significand", "mrope_position_ids",
                    "mrope_pair_axes"):
            got, expected = _num(got), _num(expected)
            assert got.size == expected.size == 0 or np.array_equal(
                got, expected), where
        else:
            err = _close(got, expected)
            assert err is None, f"{where}: {err}"
        checked.add(fn)
    js_names = set(page.evaluate("() => Object.keys(posenc.core)"))
    assert checked == js_names


def test_chinese_pages_are_searchable_in_chinese(book_site):
    """Sphinx indexes Chinese words only with jieba: without it a reader of
    the Chinese edition searching 旋转 or 位置编码 would find nothing."""
    index = (book_site / "zh" / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(index[index.index("(") + 1:index.rindex(")")])
    terms = data["terms"]
    for word in ("位置", "编码", "旋转", "注意力", "衰减"):
        assert word in terms, word
