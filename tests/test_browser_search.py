"""The search page as a reader uses it (issue 23), in headless Chromium.

The book built by the fixtures of ``tests/test_browser.py`` (stored
outputs, the Chinese edition in ``zh/``), the search of
``_ext/posenc_search.py`` and ``_assets/posenc/search.js``. Checked:

* **Snippets read like the book** (``test_snippets_read_like_prose``), for
  English and Chinese queries: every result has a snippet, around a place
  where the query's words (or their stems: "rotary" is "rotari" to the
  index) occur, highlighted; with no raw TeX once MathJax has typeset it;
  no line of a code cell or of its printed output; no live figure's spec
  (JSON); not the article's buttons, in-page contents, code-cell prompts
  or permalink signs; not the page's title again.
* **Chinese queries are split** as the index was (``test_chinese_query_is_split``):
  旋转角度 finds the pages that 旋转 角度 finds.
* **Offline** (``test_search_from_file``): from ``file://`` too, where the
  browser fetches no page for a snippet.
* **Headings with formulas** (``test_result_heading_is_typeset``): a
  section's result link typesets the heading's formula.
* **The index holds prose** (``test_index_holds_prose``, no browser): no
  word that only code, outputs or TeX sources have.
* **The language switch keeps the search** (``test_switch_keeps_the_query``).
"""

import json
import re
from pathlib import Path

import pytest
from test_browser import (  # noqa: F401  (fixtures)
    ROOT,
    Visit,
    book_site,
    server,
)

QUERIES = [("", "rotary"), ("", "wavelength"), ("", "ALiBi"), ("", "softmax"),
           ("", "embeddings"), ("zh/", "旋转"), ("zh/", "波长"),
           ("zh/", "位置编码"), ("zh/", "旋转角度")]

#: What search.html shows once every result has its snippet, typeset.
RESULTS = r"""() => {
  const status = document.querySelector('#search-results .search-summary');
  if (!status || !status.textContent.trim()) return null;
  const text = el => { const c = el.cloneNode(true);
    c.querySelectorAll('mjx-container').forEach(m => m.replaceWith(' '));
    return c.textContent; };
  const items = [...document.querySelectorAll('#search-results ul.search > li')];
  return items.map(li => {
    const a = li.querySelector('a'), p = li.querySelector('p.context');
    return {href: a.getAttribute('href'), title: text(a),
            snippet: p ? text(p) : null,
            marked: p ? [...p.querySelectorAll('.highlighted')]
              .map(s => s.textContent.toLowerCase()) : [],
            math: li.querySelectorAll('mjx-container').length};
  });
}"""


TYPESET = r"""() => [...document.querySelectorAll('#search-results .math')]
  .every(m => m.querySelector('mjx-container'))"""


def search(context, base, edition, query):
    """The results of a query on an edition's search page."""
    from urllib.parse import quote

    visit = Visit(context, f"{base}{edition}search.html?q={quote(query)}")
    try:
        page = visit.page
        page.wait_for_function(RESULTS, timeout=60_000)
        try:  # MathJax typesets the snippets' formulas
            page.wait_for_function(TYPESET, timeout=10_000)
        except Exception:  # noqa: BLE001  (the snippet check says what is left)
            pass
        found = page.evaluate(RESULTS)
        assert not visit.errors, visit.errors
        assert not visit.failed, visit.failed
        return found
    finally:
        visit.close()


def code_lines():
    """Lines of the chapters' code cells and printed outputs (25 characters
    or more, not also in the prose), which no snippet may show."""
    lines, prose = set(), []
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                prose.append("".join(cell["source"]))
                continue
            texts = ["".join(cell["source"])] + [
                "".join(o.get("text", "")) for o in cell.get("outputs", [])]
            for text in texts:
                lines.update(line.strip() for line in text.splitlines())
    prose = "\n".join(prose)
    return {line for line in lines if len(line) >= 25 and line not in prose}


CODE = code_lines()

#: The page's apparatus, which a snippet must not show.
APPARATUS = re.compile(
    r"¶|Show code cell|Hide code cell|显示代码|隐藏代码|\.ipynb\s*\.pdf|"
    r"(?:\bContents|目录)\s*\d+\.\d|Link to this|链接到此|\"sliders\"|\"key\":|"
    r"posenc-|data-posenc|\{&quot;")
RAW_TEX = re.compile(r"\\[a-zA-Z]+|\\[()\[\]]|\$")


def snippet_problems(result, words):
    """What is wrong with one result's snippet (a list of sentences)."""
    snippet, problems = result["snippet"], []
    if not snippet:
        return ["no snippet"]
    flat = " ".join(snippet.split())
    if RAW_TEX.search(flat):
        problems.append(f"raw TeX: {RAW_TEX.findall(flat)[:5]}")
    if APPARATUS.search(flat):
        problems.append(f"page apparatus: {APPARATUS.findall(flat)[:5]}")
    shown = [line for line in CODE if " ".join(line.split()) in flat]
    if shown:
        problems.append(f"code or output: {shown[:3]}")
    title = re.sub(r"^[\w.]+\.\s+", "", result["title"].split(" > ")[-1]).strip()
    if title and flat.lstrip("… ").startswith(title):
        problems.append(f"starts with the title again: {title!r}")
    lower = flat.lower()
    if not any(w in lower for w in words):
        problems.append(f"none of {words} in it")
    elif not result["marked"]:
        problems.append("the query's words are not highlighted")
    return problems


#: The query's words as a snippet shows them (a stem for English).
STEMS = {"rotary": ["rotary"], "wavelength": ["wavelength"], "alibi": ["alibi"],
         "softmax": ["softmax"], "embeddings": ["embed"], "旋转": ["旋转"],
         "波长": ["波长"], "位置编码": ["位置编码"], "旋转角度": ["旋转", "角度"]}


@pytest.mark.parametrize(("edition", "query"), QUERIES,
                         ids=[e + q for e, q in QUERIES])
def test_snippets_read_like_prose(browser, server, edition, query):  # noqa: F811
    found = search(browser, server, edition, query)
    assert found, f"{edition}search.html?q={query}: no result"
    words = STEMS[query.lower()]
    bad = {}
    for result in found:
        problems = snippet_problems(result, words)
        if problems:
            where = f"{result['title']} ({result['href']})"
            bad[f"{where}: {result['snippet']!r}"] = problems
    assert not bad, "\n".join(f"{k}\n    {v}" for k, v in bad.items())


def test_snippet_check_bites():
    words = ["rotary"]
    good = {"title": "6. Rotary position embedding (RoPE)", "marked": ["rotary"],
            "snippet": "… The rotary embedding turns every query and key."}
    assert not snippet_problems(good, words)
    for snippet in ("… \\(\\omega_i\\) rotary", "中文 .ipynb .pdf rotary",
                    "Rotary embedding Contents 6.1. What we ask rotary",
                    "Show code cell source rotary", "no such word",
                    "Rotary position embedding (RoPE) is rotary"):
        assert snippet_problems(dict(good, snippet=snippet), words), snippet
    assert snippet_problems(dict(good, snippet=None), words)
    assert snippet_problems(dict(good, marked=[]), words)
    line = next(iter(CODE))
    assert snippet_problems(dict(good, snippet=f"rotary {line}"), words)


def test_chinese_query_is_split(browser, server):  # noqa: F811
    """A Chinese query without spaces finds what its words find."""
    whole = search(browser, server, "zh/", "旋转角度")
    spaced = search(browser, server, "zh/", "旋转 角度")
    assert whole and {r["href"] for r in whole} == {r["href"] for r in spaced}
    assert search(browser, server, "zh/", "训练长度之外"), "no result"


def test_search_from_file(browser, book_site):  # noqa: F811
    """From file:// the browser fetches no page: the snippets are there."""
    for edition, query in (("", "rotary"), ("zh/", "波长")):
        found = search(browser, book_site.as_uri() + "/", edition, query)
        assert found and all(r["snippet"] for r in found), found


@pytest.mark.parametrize(("edition", "query", "heading"), [
    ("", "from one plane to", "From one plane to"),
    ("zh/", "W_K 对它做了什么", "对它做了什么")])
def test_result_heading_is_typeset(browser, server, edition, query, heading):  # noqa: F811
    """A result for a section whose heading has a formula ("From one plane
    to \\(d_k\\) dimensions") shows it typeset, not as TeX."""
    found = search(browser, server, edition, query)
    headed = [r for r in found if "#" in r["href"] and heading in r["title"]]
    assert headed, [(r["title"], r["href"]) for r in found]
    assert all(r["math"] for r in headed), headed
    assert not any(RAW_TEX.search(r["title"]) for r in found), found


def index_terms(site, edition):
    text = (site / edition / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    return index["terms"]


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_index_holds_prose(book_site, edition):  # noqa: F811
    """Words that only code cells, outputs and TeX sources have are not in
    the index (a search for "mathrm" or "allclose" found every chapter)."""
    terms = index_terms(book_site, edition)
    only_code = [w for w in ("allclos", "plt", "mathrm", "frac", "operatornam",
                             "ell", "rng", "figsiz", "linspac") if w in terms]
    assert not only_code, f"{edition}searchindex.js holds {only_code}"
    assert {"rotari", "wavelength", "softmax"} <= set(terms)
    text = Path(book_site / edition / "_static/posenc/data/search-text.js")
    assert text.is_file(), text


def test_switch_keeps_the_query(browser, server):  # noqa: F811
    """From the search page, the other edition's search page, same query."""
    visit = Visit(browser, server + "search.html?q=rotary")
    try:
        page = visit.page
        page.wait_for_function(RESULTS)
        page.click("a.posenc-language-switch")
        page.wait_for_url(server + "zh/search.html?q=rotary")
        page.wait_for_function(RESULTS)
        assert page.evaluate(RESULTS), "no result in the Chinese edition"
    finally:
        visit.close()


@pytest.mark.parametrize(("edition", "query"), [("", "wavelength"), ("zh/", "波长")])
def test_results_are_accessible(browser, server, edition, query):  # noqa: F811
    """axe-core on a page of results (snippets, typeset formulas, the
    highlighted words): no serious or critical violation."""
    from urllib.parse import quote

    from test_browser import axe_violations

    visit = Visit(browser, f"{server}{edition}search.html?q={quote(query)}")
    try:
        visit.page.wait_for_function(RESULTS)
        visit.page.wait_for_function(TYPESET)
        bad = [v for v in axe_violations(visit.page)
               if v["impact"] in ("serious", "critical")]
        assert not bad, bad
    finally:
        visit.close()
