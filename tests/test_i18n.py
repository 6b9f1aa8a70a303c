"""The Chinese edition's translations (tools/i18n.py, locales/zh_CN).

* **Complete** (``test_po_file_is_complete``): no untranslated, fuzzy or
  obsolete message in any PO file, counted as ``msgfmt --statistics`` does
  (and checked against msgfmt itself where it is installed). A new English
  paragraph without its translation fails here: this is the gate.
* **Up to date** (``test_po_file_matches_its_source``): the units of every
  source document are exactly the msgids of its PO file; a changed English
  paragraph fails until ``python tools/i18n.py update`` is run (which marks
  its old translation fuzzy, failing the first test until it is reviewed).
* **Markup kept** (``test_translations_keep_the_markup``): roles, inline
  code, math, labels, links, fences and heading levels of each unit survive
  its translation.
* **Code identical** (``test_zh_notebooks_have_the_same_code``): the
  generated Chinese notebooks (book and assignments) have the English code
  cells, metadata and cell ids, byte for byte.
* **No silent English** (``test_build_zh_refuses_missing_translations``).
* The merge of ``update`` (new, fuzzy, obsolete) and the unit splitter on
  small made-up sources.
"""

import copy
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "_ext"))
import i18n  # noqa: E402
import posenc_i18n  # noqa: E402

PO_FILES = i18n.po_files(ROOT)
DOCUMENTS = i18n.documents(ROOT)


def _rel(path):
    return Path(path).relative_to(ROOT).as_posix()


# ------------------------------------------------------------ the gate


@pytest.mark.parametrize("po", PO_FILES, ids=_rel)
def test_po_file_is_complete(po):
    assert po.is_file(), f"{_rel(po)} is missing: run python tools/i18n.py update"
    stats = i18n.po_stats(po)
    _, entries = i18n.read_po(po)
    left = [i18n._first_line(e.msgid) for e in entries
            if not e.obsolete and not e.translated][:10]
    assert (stats["untranslated"], stats["fuzzy"], stats["obsolete"]) == (0, 0, 0), (
        f"{_rel(po)}: {stats}; for example {left}")


@pytest.mark.parametrize("po", PO_FILES, ids=_rel)
def test_stats_agree_with_msgfmt(po):
    msgfmt = shutil.which("msgfmt")
    if not msgfmt:
        pytest.skip("msgfmt (GNU gettext) is not installed")
    done = subprocess.run([msgfmt, "-c", "--statistics", "-o", "/dev/null", str(po)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    stats = i18n.po_stats(po)
    counted = {}
    for key, words in (("translated", "translated message"),
                       ("fuzzy", "fuzzy translation"),
                       ("untranslated", "untranslated message")):
        found = re.search(rf"(\d+) {words}", done.stderr)
        counted[key] = int(found.group(1)) if found else 0
    assert counted == {k: stats[k] for k in counted}, done.stderr


@pytest.mark.parametrize("doc", DOCUMENTS, ids=str)
def test_po_file_matches_its_source(doc):
    po = i18n.po_path_of(doc, ROOT)
    active = [e.msgid for e in i18n.read_po(po)[1] if not e.obsolete]
    active = [e.key for e in i18n.read_po(po)[1] if not e.obsolete]
    units = {(ctx, msgid) for ctx, msgid, _ in i18n.document_messages(doc, ROOT)}
    new = [i18n._first_line(u[1]) for u in units if u not in set(active)]
    stale = [i18n._first_line(m[1]) for m in active if m not in units]
    assert not new and not stale, (
        f"{_rel(po)} is out of date with {doc} (run python tools/i18n.py "
        f"update): new English units {new[:5]}, units no longer in the "
        f"source {stale[:5]}")


def test_book_po_matches_config_and_toc():
    po = ROOT / i18n.LOCALE_DIR / i18n.BOOK_PO
    active = {e.key for e in i18n.read_po(po)[1] if not e.obsolete}
    wanted = {(ctx, msgid) for ctx, msgid, _ in i18n.book_units(ROOT)}
    assert active == wanted, "run python tools/i18n.py update"


def test_translations_keep_the_markup():
    problems = i18n.check(ROOT, out=io.StringIO())
    assert not problems, "\n".join(problems[:30])


def test_markup_check_bites():
    msgid = "## Attention\n\nThe scores of {cite:t}`vaswani2017` are $QK^\\top$."
    good = "## 注意力\n\n{cite:t}`vaswani2017` 的分数是 $QK^\\top$。"
    assert i18n.check_entry(msgid, good) == []
    assert i18n.check_entry(msgid, "## 注意力\n\n分数是 $QK^\\top$。")  # lost role
    assert i18n.check_entry(msgid, "# 注意力\n\n{cite:t}`vaswani2017` $QK$。")


# (what the guard reports, English unit, a faithful translation, a broken one)
MARKUP_CASES = [
    ("link", "Read https://arxiv.org/abs/2104.09864 first.",
     "先读 https://arxiv.org/abs/2104.09864。",
     "先读 https://arxiv.org/abs/2104.09865。"),
    ("link target", "As [the last section](#sec-rope) showed.",
     "如[上一节](#sec-rope)所示。", "如[上一节](#sec-alibi)所示。"),
    ("link target", "![A plot](figures/a.png)", "![一张图](figures/a.png)",
     "![一张图](figures/b.png)"),
    ("inline code", "Call `apply_rope(x, pos)` on the keys.",
     "对键调用 `apply_rope(x, pos)`。", "对键调用 `apply_rope(x)`。"),
    ("label", "(sec-rope)=\n## Rotary encoding", "(sec-rope)=\n## 旋转位置编码",
     "(sec-rotary)=\n## 旋转位置编码"),
    ("fence", "```{note}\nA note.\n```", "```{note}\n一条注释。\n```",
     ":::{note}\n一条注释。\n:::"),
    ("fence", "```{figure} figures/a.png\n:name: fig-a\nA caption.\n```",
     "```{figure} figures/a.png\n:name: fig-a\n图注。\n```",
     "```{figure} figures/a.png\n:name: fig-b\n图注。\n```"),
    ("fence", "$$\nP_{pos} = 1\n$$ (eq-p)", "$$\nP_{pos} = 1\n$$ (eq-p)",
     "$$\nP_{pos} = 1\n$$ (eq-q)"),
    ("math", "The angle is $pos \\cdot \\theta_i$.", "角度是 $pos \\cdot \\theta_i$。",
     "角度是 $pos \\theta_i$。"),
    ("math", "Then $$a = b$$ holds.", "于是 $$a = b$$ 成立。", "于是 $$a = c$$ 成立。"),
    ("role", "See {ref}`sec-rope`.", "见 {ref}`sec-rope`。", "见 {ref}`sec-alibi`。"),
    ("heading", "### Summary", "### 小结", "## 小结"),
]


@pytest.mark.parametrize("what,msgid,good,bad", MARKUP_CASES,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(MARKUP_CASES)])
def test_each_markup_guard_bites(what, msgid, good, bad):
    """Each guard of the markup check on its own: the faithful translation
    passes, the one that changed that markup is reported, under its name."""
    assert i18n.check_entry(msgid, good) == []
    problems = i18n.check_entry(msgid, bad)
    assert problems, f"{what}: {bad!r} passed the check"
    assert any(p.startswith(what) for p in problems), problems


def test_markup_check_ends_a_url_where_the_sentence_ends():
    """A URL at the end of an English sentence keeps its full stop out of the
    URL, so that the Chinese full stop after it is not a changed link."""
    url = "https://github.com/ZhuiyiTechnology/roformer"
    msgid = f"The code is at {url}."
    assert i18n.check_entry(msgid, f"代码见 {url}。") == []
    assert i18n.check_entry(msgid, f"代码见（{url}）。") == []
    assert i18n.check_entry(msgid, f"代码见 {url}2。")


# ------------------------------------------------- the generated notebooks


def _code_outputs(nb):
    return [(c.outputs, c.execution_count) for c in nb.cells
            if c.cell_type == "code"]


def test_outputs_test_looks_at_code_cells_with_outputs():
    """The chapters' code cells have outputs, so the check that translated
    notebooks keep them compares something."""
    nb = nbformat.read(ROOT / "chapters" / "02_sinusoidal_formula.ipynb",
                       as_version=4)
    assert sum(bool(outputs) for outputs, _ in _code_outputs(nb)) >= 5


def _code_cells(nb):
    return [(c.get("id"), c.cell_type, c.source, _without_figure_texts(c.metadata))
            for c in nb.cells if c.cell_type != "markdown"]


def _without_figure_texts(metadata):
    """A cell's metadata without its figure's caption and alt text (the
    words translated; everything else must be identical)."""
    meta = copy.deepcopy(dict(metadata))
    mystnb = meta.get("mystnb", {})
    mystnb.get("figure", {}).pop("caption", None)
    mystnb.get("image", {}).pop("alt", None)
    return meta


@pytest.fixture(scope="module")
def zh_tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("zh") / "zh_src"
    i18n.build_zh(out, ROOT, allow_missing=True)
    return out


@pytest.mark.parametrize("doc", [d for d in DOCUMENTS if d.suffix == ".ipynb"],
                         ids=str)
def test_zh_notebooks_have_the_same_code(zh_tree, doc):
    en = nbformat.read(ROOT / doc, as_version=4)
    # translate_notebook keeps every code cell's outputs (the learners'
    # Chinese notebooks and the Chinese assignments show what the English
    # ones show); build_zh clears them, since the book build executes them
    kept = i18n.translate_notebook(en, i18n.po_path_of(doc, ROOT),
                                   allow_missing=True)
    # but a slider cell's, the note to run it, which is in Chinese (issue 25)
    from posenc_plots.jupyter import fallback_output, is_slider_cell
    note = [fallback_output("zh_CN")]
    assert _code_outputs(kept) == [
        (note if is_slider_cell(c) else c.outputs, c.execution_count)
        for c in en.cells if c.cell_type == "code"]
    if doc.parts[0] == "assignments":
        zh = kept
    else:
        zh = nbformat.read(zh_tree / doc, as_version=4)
        assert all(c.outputs == note and c.execution_count is not None
                   if is_slider_cell(c) else
                   not c.outputs and c.execution_count is None
                   for c in zh.cells if c.cell_type == "code")
    assert len(zh.cells) == len(en.cells)
    assert _code_cells(zh) == _code_cells(en)
    assert ([_without_figure_texts(c.metadata) for c in zh.cells]
            == [_without_figure_texts(c.metadata) for c in en.cells])
    assert zh.metadata == en.metadata
    # the figures' captions and alt texts are the Chinese ones
    for z, e in zip(zh.cells, en.cells, strict=True):
        for ctx, text in i18n.figure_texts(e):
            assert (ctx, text) not in i18n.figure_texts(z), (doc, text)


def test_zh_tree_config(zh_tree):
    config = yaml.safe_load((zh_tree / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["config"]["language"] == "zh_CN"
    assert config["sphinx"]["config"]["posenc_other_edition"] == "../"
    assert "posenc_i18n" in config["sphinx"]["local_extensions"]
    toc = yaml.safe_load((zh_tree / "_toc.yml").read_text(encoding="utf-8"))
    en_toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for p in toc["parts"] for c in p["chapters"]]
    assert files == [c["file"] for p in en_toc["parts"] for c in p["chapters"]]
    for doc in i18n._toc_files(ROOT):
        assert (zh_tree / doc).is_file(), doc


def test_switch_links_are_relative():
    assert posenc_i18n.switch_href("intro", "intro.html", "zh/") == "zh/intro.html"
    assert posenc_i18n.switch_href("chapters/06_rope", "chapters/06_rope.html",
                                   "../") == "../../chapters/06_rope.html"


# --------------------------------------------------- on a made-up book


NOTEBOOK_MD = [
    "# A title\n\nFirst paragraph, with $x$.\n\n$$\nx = 1\n$$ (eq-x)\n",
    "Second paragraph.\n\n```{note}\nA note\n\nover two paragraphs.\n```",
]
PAGE = "# Page\n\nSome words.\n\n```bash\nls\n```\n\n```{tableofcontents}\n```\n"


def make_book(root, second="Second paragraph."):
    (root / "chapters").mkdir(parents=True)
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: page\nparts:\n  - caption: Part one\n"
        "    chapters:\n      - file: chapters/one\n", encoding="utf-8")
    (root / "_config.yml").write_text(
        "title: A book\nauthor: Someone\nsphinx:\n  local_extensions:\n"
        "    posenc_i18n: _ext/\n", encoding="utf-8")
    (root / "page.md").write_text(PAGE, encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(NOTEBOOK_MD[0]),
                nbformat.v4.new_code_cell("x = 1  # a comment\nprint(x)"),
                nbformat.v4.new_markdown_cell(
                    NOTEBOOK_MD[1].replace("Second paragraph.", second))]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    nbformat.write(nb, root / "chapters" / "one.ipynb")


def translate_all(root, prefix="译："):
    for po in i18n.po_files(root):
        if not po.exists():
            continue
        header, entries = i18n.read_po(po)
        for e in entries:
            e.msgstr = e.msgid if e.msgid.startswith(("```", "#")) else prefix + e.msgid
            e.flags = []
            e.previous = None
        i18n.write_po(po, entries, header)


def test_units_of_a_made_up_book(tmp_path):
    make_book(tmp_path)
    units = [u for u, _ in i18n.document_units("chapters/one.ipynb", tmp_path)]
    assert units == ["# A title", "First paragraph, with $x$.",
                     "Second paragraph.",
                     "```{note}\nA note\n\nover two paragraphs.\n```"]
    assert [u for u, _ in i18n.document_units("page.md", tmp_path)] == [
        "# Page", "Some words."]


def test_splitting_is_lossless():
    for doc in DOCUMENTS:
        path = ROOT / doc
        texts = ([c.source for c in nbformat.read(path, as_version=4).cells
                  if c.cell_type == "markdown"] if doc.suffix == ".ipynb"
                 else [path.read_text(encoding="utf-8")])
        for text in texts:
            same = {(None, u): u for u, _ in i18n.text_units(text)}
            assert i18n.translate_text(text, same, [], str(doc)) == text


def test_update_merges_like_msgmerge(tmp_path):
    make_book(tmp_path)
    i18n.update(tmp_path, out=io.StringIO())
    po = i18n.po_path_of("chapters/one.ipynb", tmp_path)
    assert po == tmp_path / "locales/zh_CN/LC_MESSAGES/chapters/one.po"
    assert i18n.po_stats(po)["untranslated"] == 4
    translate_all(tmp_path)
    assert i18n.po_stats(po) == {"translated": 4, "fuzzy": 0, "untranslated": 0,
                                 "obsolete": 0, "words_left": 0}
    # a changed English paragraph: the test of up-to-date units would fail ...
    shutil.rmtree(tmp_path / "chapters")
    make_book_chapter_only(tmp_path, "Second paragraph, changed.")
    units = {u for u, _ in i18n.document_units("chapters/one.ipynb", tmp_path)}
    active = {e.msgid for e in i18n.read_po(po)[1] if not e.obsolete}
    assert units != active
    # ... until update, which keeps the old translation as fuzzy
    i18n.update(tmp_path, out=io.StringIO())
    entries = {e.msgid: e for e in i18n.read_po(po)[1]}
    changed = entries["Second paragraph, changed."]
    assert changed.fuzzy and changed.msgstr == "译：Second paragraph."
    assert changed.previous == "Second paragraph."
    assert i18n.po_stats(po)["fuzzy"] == 1
    # a vanished translated unit becomes obsolete
    shutil.rmtree(tmp_path / "chapters")
    make_book_chapter_only(tmp_path, "Something else entirely, new words here.",
                           drop_first=True)
    i18n.update(tmp_path, out=io.StringIO())
    stats = i18n.po_stats(po)
    assert stats["obsolete"] >= 1 and stats["untranslated"] == 1, stats
    text = po.read_text(encoding="utf-8")
    assert '#~ msgid "First paragraph, with $x$."' in text


def _changed_book(tmp_path):
    """A made-up book translated in full, then its second paragraph changed
    and merged: one fuzzy translation under review."""
    make_book(tmp_path)
    i18n.update(tmp_path, out=io.StringIO())
    translate_all(tmp_path)
    shutil.rmtree(tmp_path / "chapters")
    make_book_chapter_only(tmp_path, "Second paragraph, changed.")
    i18n.update(tmp_path, out=io.StringIO())
    return i18n.po_path_of("chapters/one.ipynb", tmp_path)


def test_update_twice_keeps_a_translation_under_review_fuzzy(tmp_path):
    """A second ``update`` (nothing changed) keeps the fuzzy flag and the
    previous English of a translation not yet reviewed, so that the Chinese
    build still refuses it."""
    po = _changed_book(tmp_path)
    before = po.read_text(encoding="utf-8")
    i18n.update(tmp_path, out=io.StringIO())
    assert po.read_text(encoding="utf-8") == before
    entries = {e.msgid: e for e in i18n.read_po(po)[1]}
    changed = entries["Second paragraph, changed."]
    assert changed.fuzzy and changed.previous == "Second paragraph."
    assert changed.msgstr == "译：Second paragraph."
    with pytest.raises(i18n.MissingTranslations, match="1 units") as err:
        i18n.build_zh(tmp_path / "zh", tmp_path)
    assert "Second paragraph, changed." in str(err.value)
    # the English changes again before review: still fuzzy, and the previous
    # English is still the one the translation follows
    shutil.rmtree(tmp_path / "chapters")
    make_book_chapter_only(tmp_path, "Second paragraph, changed twice.")
    i18n.update(tmp_path, out=io.StringIO())
    entries = {e.msgid: e for e in i18n.read_po(po)[1]}
    twice = entries["Second paragraph, changed twice."]
    assert twice.fuzzy and twice.previous == "Second paragraph."
    assert "Second paragraph, changed." not in entries


def test_stats_count_a_fuzzy_translation_as_fuzzy_only(tmp_path):
    """``stats`` as ``msgfmt --statistics``: a fuzzy translation is not a
    translated one; an empty one is untranslated; obsolete ones apart."""
    po = tmp_path / "x.po"
    i18n.write_po(po, [
        i18n.Entry("One.", "一。"), i18n.Entry("Two.", "二。"),
        i18n.Entry("Three.", "三。", flags=["fuzzy"], previous="Three"),
        i18n.Entry("Four words left here."),
        i18n.Entry("Gone.", "去。", obsolete=True)])
    assert i18n.po_stats(po) == {"translated": 2, "fuzzy": 1, "untranslated": 1,
                                 "obsolete": 1, "words_left": 5}
    msgfmt = shutil.which("msgfmt")
    if msgfmt:  # and as msgfmt counts them, where it is installed
        done = subprocess.run([msgfmt, "--statistics", "-o", "/dev/null", str(po)],
                              capture_output=True, text=True)
        assert "2 translated messages, 1 fuzzy translation, 1 untranslated" in (
            done.stderr), done.stderr
    out = io.StringIO()
    (tmp_path / "book").mkdir()
    make_book(tmp_path / "book")
    i18n.update(tmp_path / "book", out=io.StringIO())
    translate_all(tmp_path / "book")
    result = i18n.stats(tmp_path / "book", out=out)
    assert result["locales/zh_CN/LC_MESSAGES/chapters/one.po"]["translated"] == 4
    po = _changed_book(tmp_path / "changed")
    counts = i18n.po_stats(po)
    assert (counts["translated"], counts["fuzzy"]) == (3, 1), counts
    out = io.StringIO()
    i18n.stats(tmp_path / "changed", out=out)
    assert ("chapters/one.po: 3 translated messages, 1 fuzzy translations, "
            "0 untranslated messages") in out.getvalue()


def test_previous_msgid_over_several_lines_survives_a_round_trip(tmp_path):
    po = tmp_path / "x.po"
    entry = i18n.Entry("New\n\ntext.", "新\n\n文。", flags=["fuzzy"],
                       previous="Old\n\ntext.", locations=["a.md:3"],
                       comments=["a translator's note"])
    i18n.write_po(po, [entry])
    assert i18n.read_po(po)[1] == [entry]


def make_book_chapter_only(root, second, drop_first=False):
    nb = nbformat.v4.new_notebook()
    first = NOTEBOOK_MD[0]
    if drop_first:
        first = first.replace("First paragraph, with $x$.\n\n", "")
    nb.cells = [nbformat.v4.new_markdown_cell(first),
                nbformat.v4.new_code_cell("x = 1  # a comment\nprint(x)"),
                nbformat.v4.new_markdown_cell(
                    NOTEBOOK_MD[1].replace("Second paragraph.", second))]
    (root / "chapters").mkdir()
    nbformat.write(nb, root / "chapters" / "one.ipynb")


def test_build_zh_refuses_missing_translations(tmp_path):
    book = tmp_path / "book"
    make_book(book)
    i18n.update(book, out=io.StringIO())
    # 4 units in the notebook, 2 on the page, the title, author, caption and
    # myst-nb's two prompts on a folded cell
    with pytest.raises(ValueError, match="11 units have no translation") as err:
        i18n.build_zh(tmp_path / "zh", book)
    assert "chapters/one.ipynb:0: First paragraph" in str(err.value)
    assert not (tmp_path / "zh").exists()
    missing = i18n.build_zh(tmp_path / "zh", book, allow_missing=True)
    assert len(missing) == 11
    assert "_book.po: caption 'Part one'" in missing
    translate_all(book)
    # a fuzzy translation is not used
    po = i18n.po_path_of("page.md", book)
    header, entries = i18n.read_po(po)
    entries[1].flags = ["fuzzy"]
    i18n.write_po(po, entries, header)
    with pytest.raises(ValueError, match="1 units have no translation"):
        i18n.build_zh(tmp_path / "zh", book)
    entries[1].flags = []
    i18n.write_po(po, entries, header)
    assert i18n.build_zh(tmp_path / "zh", book) == []
    zh = nbformat.read(tmp_path / "zh" / "chapters" / "one.ipynb", as_version=4)
    assert zh.cells[0].source.startswith("# A title\n\n译：First paragraph, with $x$.")
    assert "$$\nx = 1\n$$ (eq-x)" in zh.cells[0].source
    assert zh.cells[1].source == "x = 1  # a comment\nprint(x)"
    page = (tmp_path / "zh" / "page.md").read_text(encoding="utf-8")
    assert page == PAGE.replace("Some words.", "译：Some words.")
    config = yaml.safe_load((tmp_path / "zh" / "_config.yml").read_text())
    assert config["title"] == "译：A book"
    assert config["sphinx"]["config"]["language"] == "zh_CN"


def test_build_zh_keeps_away_from_other_folders(tmp_path):
    book = tmp_path / "book"
    make_book(book)
    with pytest.raises(ValueError, match="out"):
        i18n.build_zh(book / "chapters", book, allow_missing=True)
    with pytest.raises(ValueError, match="out"):
        i18n.build_zh(tmp_path, book, allow_missing=True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="text"):
        i18n.split_segments(None)
    with pytest.raises(ValueError, match="nb"):
        i18n.translate_notebook({}, PO_FILES[0])
    with pytest.raises(ValueError, match="po_path"):
        i18n.translate_notebook(nbformat.v4.new_notebook(), "/nonexistent.po")
    with pytest.raises(ValueError, match="doc"):
        i18n.po_path_of("assignments/source/x.ipynb", ROOT)


def test_zh_notebooks_name_their_language(zh_tree):
    """Jupyter runs a kernel in the notebook's folder: there, posenc_plots
    finds the language of the figures (code cells stay identical)."""
    marker = zh_tree / "chapters" / ".posenc-lang"
    assert marker.read_text().split() == ["zh_CN"]
    assert not (ROOT / "chapters" / ".posenc-lang").exists()


# ------------------------------ what the PO files see besides paragraphs


def _figure_book(root):
    """A made-up book whose notebook has a figure (caption and alt text in
    its metadata), formulas with words, Chinese soft line breaks, and a
    bibliography note."""
    make_book(root)
    nb = nbformat.read(root / "chapters" / "one.ipynb", as_version=4)
    fig = nbformat.v4.new_code_cell("plot()")
    fig.metadata["mystnb"] = {"figure": {"caption": "A caption of words.",
                                         "name": "fig-one"},
                              "image": {"alt": "Alt text of the image."}}
    fig["id"] = "cell-fig"
    math = nbformat.v4.new_markdown_cell(
        "## Formulas\n\n$$\nx = 1 \\quad\\text{for every } y\n$$\n\n"
        "Inline $\\text{loss} = 0$ and `$\\text{code}$`.")
    math["id"] = "cell-math"
    nb.cells += [fig, math]
    nbformat.write(nb, root / "chapters" / "one.ipynb")
    (root / "references.bib").write_text(
        "@misc{one2020,\n  title = {One},\n  year = {2020},\n"
        "  note = {A note with {\\&} words},\n  howpublished = {ICLR},\n}\n",
        encoding="utf-8")
    (root / "references.md").write_text("# References\n\nThe works.\n",
                                        encoding="utf-8")
    toc = (root / "_toc.yml").read_text(encoding="utf-8")
    (root / "_toc.yml").write_text(toc + "      - file: references\n",
                                   encoding="utf-8")


def test_captions_alt_texts_math_words_and_notes_are_messages(tmp_path):
    _figure_book(tmp_path)
    messages = i18n.document_messages("chapters/one.ipynb", tmp_path)
    extra = [(ctx, msgid) for ctx, msgid, _ in messages if ctx]
    assert extra == [(i18n.CAPTION, "A caption of words."),
                     (i18n.ALT, "Alt text of the image."),
                     (i18n.MATH_WORDS, "for every"), (i18n.MATH_WORDS, "loss")]
    refs = [(ctx, msgid) for ctx, msgid, _ in
            i18n.document_messages("references.md", tmp_path) if ctx]
    # "ICLR" has a word too: a venue, its translation may keep it
    assert refs == [(i18n.BIB_NOTE, "A note with {\\&} words"),
                    (i18n.BIB_NOTE, "ICLR")]
    i18n.update(tmp_path, out=io.StringIO())
    po = i18n.po_path_of("chapters/one.ipynb", tmp_path)
    assert i18n.po_stats(po)["untranslated"] == 10  # 6 paragraphs + 4 above


def test_build_zh_translates_captions_alt_texts_math_words_and_notes(tmp_path):
    book = tmp_path / "book"
    _figure_book(book)
    i18n.update(book, out=io.StringIO())
    # every message is missing at first, the new ones among them
    missing = i18n.build_zh(tmp_path / "zh", book, allow_missing=True)
    assert any("figure caption A caption of words." in m for m in missing)
    assert any("math text 'for every'" in m for m in missing)
    assert any("references.bib: one2020.note" in m for m in missing)
    translate_all(book)
    zh_words = {"A caption of words.": "一段图注。",
                "Alt text of the image.": "图片的替代文字。",
                "for every": "对所有", "loss": "损失",
                "A note with {\\&} words": "一条带 {\\&} 的注释", "ICLR": "ICLR"}
    for po in i18n.po_files(book):
        if po.exists():
            header, entries = i18n.read_po(po)
            for e in entries:
                if e.msgctxt in (i18n.CAPTION, i18n.ALT, i18n.MATH_WORDS,
                                 i18n.BIB_NOTE):
                    e.msgstr = zh_words[e.msgid]
            i18n.write_po(po, entries, header)
    assert i18n.build_zh(tmp_path / "zh", book) == []
    zh = nbformat.read(tmp_path / "zh" / "chapters" / "one.ipynb", as_version=4)
    fig = zh.cells[3]
    assert fig.source == "plot()"
    assert fig.metadata["mystnb"] == {"figure": {"caption": "一段图注。",
                                                 "name": "fig-one"},
                                      "image": {"alt": "图片的替代文字。"}}
    # the words of formulas, spaces kept; inline code is code
    assert "\\text{对所有 } y" in zh.cells[4].source
    assert "$\\text{损失} = 0$" in zh.cells[4].source
    assert "`$\\text{code}$`" in zh.cells[4].source
    bib = (tmp_path / "zh" / "references.bib").read_text(encoding="utf-8")
    assert "note = {一条带 {\\&} 的注释}" in bib and "title = {One}" in bib
    # the sections' English ids, for the Chinese build's extension
    anchors = json.loads((tmp_path / "zh" / i18n.ANCHORS).read_text())
    assert anchors["chapters/one"] == ["a-title", "formulas"]


@pytest.mark.parametrize("text, joined", [
    ("第一行\n第二行。", "第一行第二行。"),
    ("中文，\n**强调**的词", "中文，**强调**的词"),
    ("列表：\n\n- 一项\n- 二项", "列表：\n\n- 一项\n- 二项"),
    ("以 RoPE\n结尾", "以 RoPE\n结尾"),  # Latin and CJK: a space is right
    ("中文\n  缩进的续行", "中文缩进的续行"),
    ("```python\n# 注释\n# 第二行\n```", "```python\n# 注释\n# 第二行\n```"),
    ("$$\n\\text{甲}\n\\text{乙}\n$$", "$$\n\\text{甲}\n\\text{乙}\n$$"),
    ("| 表 |\n| 格 |", "| 表 |\n| 格 |"),
    ("```{note}\n注释的\n正文\n```", "```{note}\n注释的正文\n```"),
])
def test_soft_line_breaks_between_chinese_characters_are_removed(text, joined):
    assert i18n.join_cjk_lines(text) == joined


def test_no_soft_line_break_between_chinese_characters_in_the_zh_sources(zh_tree):
    """Markdown renders a soft break as a space: none is left between two
    Chinese characters in the Chinese sources (build_zh joins them)."""
    pattern = re.compile(r"[\u4e00-\u9fff，。；：、）]\n[\u4e00-\u9fff（]")
    found = []
    for doc in i18n._toc_files(ROOT):
        path = zh_tree / doc
        texts = ([c.source for c in nbformat.read(path, as_version=4).cells
                  if c.cell_type == "markdown"] if doc.endswith(".ipynb")
                 else [path.read_text(encoding="utf-8")])
        for text in texts:
            prose = re.sub(r"```.*?```|\$\$.*?\$\$", "", text, flags=re.S)
            found += [f"{doc}: {m.group(0)!r}" for m in pattern.finditer(prose)]
    assert not found, found[:10]


def test_english_section_ids_are_the_ones_sphinx_makes():
    assert i18n.heading_ids(
        "# Rotary $\\sin$ encoding\n\n## Exercises\n\n## Exercises\n\n"
        "### From one plane to $d_k$ dimensions\n") == [
        "rotary-sin-encoding", "exercises", "id1",
        "from-one-plane-to-d-k-dimensions"]


def test_the_zh_build_selects_the_chinese_citation_style(zh_tree):
    config = yaml.safe_load((zh_tree / "_config.yml").read_text(encoding="utf-8"))
    style = config["sphinx"]["config"]["bibtex_reference_style"]
    assert style == "author_year_round_zh"


def test_the_chinese_build_folds_cells_under_chinese_words():
    """myst-nb's toggle on a folded cell ("Show code cell source") is
    translated through _book.po, like the book's title."""
    missing = []
    config = yaml.safe_load(i18n._translated_config(
        ROOT, i18n.load_catalog(ROOT / i18n.LOCALE_DIR / i18n.BOOK_PO), missing))
    sphinx_config = config["sphinx"]["config"]
    assert not missing
    for key in i18n.MYST_NB_PROMPTS:
        words = sphinx_config[key]
        assert re.search(r"[\u4e00-\u9fff]", words), (key, words)
        assert not re.search(r"[A-Za-z]", words), (key, words)
