"""The figures' words: one table per figure, in English and in Chinese.

Every label of every figure lives in a :class:`posenc_plots.i18n.Labels`
table (English) and its translation in
``locales/zh_CN/LC_MESSAGES/figures.po``. Checked here:

* the catalogue translates every label of every table (no empty, no fuzzy
  message), keeps every ``{field}`` and ``$math$`` of the English, and
  holds nothing no table has;
* a missing translation is an error in Chinese, never silent English;
* English figures show the English labels, Chinese figures (``POSENC_LANG=
  zh_CN``) the Chinese ones, for the matplotlib figures, for the sliders and
  captions of the in-page figures (``_ext/posenc_widgets.py``), and for the
  labels the in-page JavaScript draws (run in Node, compared with the
  matplotlib figure);
* a font with Chinese glyphs is installed, matplotlib puts it first for
  Chinese, and it (or matplotlib's fallback fonts, for the Latin and Greek
  letters) has a glyph for every character of every Chinese label.
"""

import base64
import html
import json
import re
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

import posenc_plots
from posenc_plots import i18n

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "_assets" / "posenc"
sys.path.insert(0, str(ROOT / "_ext"))
import posenc_widgets  # noqa: E402

TABLES = i18n.all_tables()
FIGURES = posenc_plots.all_interactive()
IDS = [f.name for _, f in FIGURES]


@pytest.fixture(autouse=True)
def _english(monkeypatch):
    """Each test starts in English (and restores matplotlib's fonts)."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    with matplotlib.rc_context():
        yield
    plt.close("all")


def _entries():
    return [e for e in i18n.read_po() if e["msgid"]]


def _labels():
    """Every (table, English label) pair."""
    return sorted({(name, english) for name, table in TABLES.items()
                   for english in table.en.values()})


# ------------------------------------------------------------ catalogue


def test_every_label_is_translated():
    po = {(e["context"], e["msgid"]): e for e in _entries()}
    missing = [f"{name}: {english!r}" for name, english in _labels()
               if (name, english) not in po or not po[(name, english)]["msgstr"]]
    fuzzy = [f"{name}: {english!r}" for name, english in _labels()
             if po.get((name, english), {}).get("fuzzy")]
    assert not missing, ("untranslated figure labels (python -m "
                         "posenc_plots.i18n update, then translate):\n"
                         + "\n".join(missing))
    assert not fuzzy, "fuzzy figure labels:\n" + "\n".join(fuzzy)
    assert i18n.stats() == (len(_labels()), 0, 0)


def test_the_catalogue_holds_only_the_tables_labels():
    known = set(_labels())
    stale = [(e["context"], e["msgid"]) for e in _entries()
             if (e["context"], e["msgid"]) not in known]
    assert not stale, f"labels no table has (run update): {stale}"
    counts = Counter((e["context"], e["msgid"]) for e in _entries())
    assert not [k for k, n in counts.items() if n > 1]


def _tokens(text):
    """The {fields} and $math$ of a label (what must not be translated)."""
    fields = re.findall(r"\{\{|\}\}|\{[^{}]*\}", re.sub(r"\$[^$]*\$", "", text))
    return sorted(fields), sorted(re.findall(r"\$[^$]*\$", text))


#: Names and words kept as they are in Chinese.
NAMES = {"RoPE", "ALiBi", "YaRN", "NTK", "aware", "Llama", "NoPE", "sin", "cos",
         "Mixed",  # RoPE-Mixed keeps its name (glossary)
         "clip", "max", "pos"}


def _plain_words(text):
    """The English words of a label, beside math, fields and identifiers."""
    text = re.sub(r"\$[^$]*\$|\{[^{}]*\}|\w*[_\d]\w*", " ", text)
    return set(re.findall(r"[A-Za-z]{3,}", text))


@pytest.mark.parametrize("entry", _entries(),
                         ids=lambda e: f"{e['context']}:{e['msgid'][:30]}")
def test_fields_and_math_are_kept(entry):
    msgid, msgstr = entry["msgid"], entry["msgstr"]
    assert _tokens(msgstr) == _tokens(msgid)
    assert msgstr.count("\n") == msgid.count("\n")
    assert not [m for m in _tokens(msgstr)[1] if any(map(_is_cjk, m))], (
        "Chinese inside $math$: mathtext's fonts have no Chinese glyphs")
    if not any(map(_is_cjk, msgstr)):  # kept as it is: symbols and names
        assert msgstr == msgid and _plain_words(msgid) <= NAMES, msgstr


def test_the_po_file_reads_back_as_written(tmp_path):
    entries = i18n.read_po()
    copy = tmp_path / "figures.po"
    i18n.write_po(entries, copy)
    assert i18n.read_po(copy) == entries
    if shutil.which("msgfmt"):
        done = subprocess.run(["msgfmt", "--check", "--statistics", "-o",
                               "/dev/null", str(i18n.PO_PATH)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "untranslated" not in done.stderr and "fuzzy" not in done.stderr


def test_the_source_words_appear_as_written():
    from posenc_plots import ch01_order

    assert tuple(ch01_order.WORDS.get("zh_CN").values()) == (
        "沈阳", "到", "广州", "的", "机票")
    assert tuple(ch01_order.WORDS.get("en").values()) == ch01_order.TICKET_WORDS


# --------------------------------------------------------- the language


@pytest.mark.parametrize("value, lang", [
    ("", "en"), ("en", "en"), ("en_US.UTF-8", "en"), ("zh_CN", "zh_CN"),
    ("zh-CN", "zh_CN"), ("zh", "zh_CN"), ("zh_CN.UTF-8", "zh_CN")])
def test_language_names(value, lang, monkeypatch):
    assert i18n.language(value) == lang
    monkeypatch.setenv(i18n.ENV, value)
    assert i18n.language() == lang


def test_an_unknown_language_is_refused(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "fr_FR")
    with pytest.raises(ValueError, match="POSENC_LANG"):
        i18n.language()
    with pytest.raises(ValueError, match="language"):
        i18n.language("klingon")


def _po_without(tmp_path, drop=None, fuzzy=None):
    entries = i18n.read_po()
    kept = []
    for e in entries:
        key = (e["context"], e["msgid"])
        if key == drop:
            continue
        if key == fuzzy:
            e = dict(e, fuzzy=True)
        kept.append(e)
    path = tmp_path / "figures.po"
    i18n.write_po(kept, path)
    return path


@pytest.mark.parametrize("how", ["missing", "fuzzy"])
def test_a_missing_translation_fails_loudly(tmp_path, monkeypatch, how):
    from posenc_plots import ch02_formula

    table = ch02_formula._EXPLORE
    key = (table.name, table.en["caption"])
    path = _po_without(tmp_path, **{"drop" if how == "missing" else "fuzzy": key})
    monkeypatch.setattr(i18n, "PO_PATH", path)
    monkeypatch.setattr(table, "_cache", {})
    monkeypatch.setattr(i18n, "_CATALOGS", {})
    assert table.get("en")["caption"] == table.en["caption"]
    with pytest.raises(i18n.MissingTranslation, match="encoding matrix"):
        table.get("zh_CN")
    monkeypatch.setenv(i18n.ENV, "zh_CN")
    with pytest.raises(i18n.MissingTranslation):
        ch02_formula.explore_encoding()
    with pytest.raises(i18n.MissingTranslation):
        ch02_formula.EXPLORE_ENCODING.text(table.en["caption"])
    assert i18n.translate(table.name, "dimension", "zh_CN") == "维度"


def test_a_missing_catalogue_fails_loudly(tmp_path, monkeypatch):
    monkeypatch.setattr(i18n, "PO_PATH", tmp_path / "none.po")
    monkeypatch.setattr(i18n, "_CATALOGS", {})
    with pytest.raises(i18n.MissingTranslation, match="missing"):
        i18n.translate("page", "bias", "zh_CN")


def test_tables_are_checked():
    with pytest.raises(ValueError, match="exists already"):
        i18n.Labels("page", {"a": "b"})
    with pytest.raises(ValueError, match="english"):
        i18n.Labels("test:empty label", {"a": ""})
    assert "test:empty label" not in i18n.TABLES
    with pytest.raises(ValueError, match="not a label"):
        i18n.PAGE.tr("no such label")


# ------------------------------------------------------------- figures


def _texts(fig):
    """Every text a matplotlib figure shows, in order."""
    out = [fig.get_suptitle()]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        out += [t.get_text() for t in ax.texts]
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()
                if not re.fullmatch(r"[\d.,\-−+e ]*|\$.*\$", t.get_text())]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    return [t for t in out if t]


def _has_cjk(texts):
    return any(_is_cjk(c) for t in texts for c in t)


def _is_cjk(char):
    return ("CJK" in unicodedata.name(char, "") or "\u3000" <= char <= "\u303f"
            or "\uff00" <= char <= "\uffef")


@pytest.mark.parametrize("figure", [f for _, f in FIGURES], ids=IDS)
def test_live_figures_speak_the_language(figure, monkeypatch):
    english = _texts(figure.plot(**figure.defaults()))
    assert english and not _has_cjk(english)
    labels = figure.texts("en")
    assert set(figure.texts()) == set(labels)
    for s in figure.sliders:  # slider labels and caption are in the tables
        assert s.label in labels.values() and figure.text(s.label) == s.label
    assert figure.caption in labels.values()
    monkeypatch.setenv(i18n.ENV, "zh_CN")
    chinese = _texts(figure.plot(**figure.defaults()))
    assert _has_cjk(chinese), chinese
    assert len(chinese) == len(english)
    zh = figure.texts()
    assert zh == figure.texts("zh_CN") and set(zh) == set(labels)
    assert _has_cjk([figure.text(figure.caption)])
    # every label the English figure shows whole is translated in it
    for key, text in labels.items():
        if text in english and zh[key] != text:
            assert text not in chinese, (key, text)
            assert zh[key] in chinese, (key, zh[key])


def test_the_ticket_figure_in_chinese(monkeypatch):
    from posenc_plots import ch01_order as figs

    monkeypatch.setenv(i18n.ENV, "zh_CN")
    fig = figs.attention_with_position(amplitude=0.5, d_model=8)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "沈阳", "到", "广州", "的", "机票"]
    assert ax.get_xlabel() == "作为键的词" and ax.get_ylabel() == "作为查询的词"
    assert fig.get_suptitle() == (
        r"位置编码的幅度 = 0.5，$d_{\mathrm{model}} = 8$")
    assert fig.axes[2].get_title().startswith("|差值|，最大 ")


def test_static_figures_in_chinese(monkeypatch):
    """Figures without sliders draw from their tables too."""
    from posenc_plots import ch02_formula, ch03_frequencies, ch05_relative, ch06_rope

    monkeypatch.setenv(i18n.ENV, "zh_CN")
    fig = ch02_formula.plot_encoding_heatmap(np.zeros((4, 4)),
                                             title="interleaved (paper)")
    assert fig.axes[0].get_title() == "交错布局（论文）"
    assert fig.axes[0].get_xlabel() == "维度"
    fig = ch03_frequencies.plot_wavelengths_by_base(bases=(100.0,))
    assert fig.axes[0].get_legend().get_texts()[0].get_text().startswith(
        "底数 $b$ = 100：")
    fig = ch05_relative.heatmaps([np.eye(2)], ["A"])
    assert fig.axes[0].get_xlabel() == "键的位置 ℓ"
    fig = ch06_rope.plot_layouts()
    assert [a.get_title() for a in fig.axes[:3]][1] == "置换：先偶数维，再奇数维"


# ------------------------------------------------------- in-page figures


@pytest.mark.parametrize("module, figure", FIGURES, ids=IDS)
def test_widget_words(module, figure):
    key = f"{module}:{figure.name}"
    en = posenc_widgets.widget_html(key, figure, "w", "en")
    zh = posenc_widgets.widget_html(key, figure, "w", "zh_CN")
    caption = html.escape(figure.caption)
    assert "Live figure: move the sliders" in en and caption in en
    assert "交互图" in zh and html.escape(figure.text(figure.caption, "zh_CN")) in zh
    assert "Live figure" not in zh and caption not in zh
    for s in figure.sliders:
        assert f">{html.escape(s.label)}" in en
        assert f">{html.escape(figure.text(s.label, 'zh_CN'))}" in zh
        if s.log:
            assert " (log scale)" in en and "（对数刻度）" in zh
    spec = posenc_widgets.spec_json(key, figure, "zh_CN")
    assert spec["labels"] == figure.texts("zh_CN")
    assert [s["label"] for s in spec["sliders"]] == [
        figure.text(s.label, "zh_CN") for s in figure.sliders]
    assert posenc_widgets.spec_json(key, figure, "en")["labels"] == (
        figure.texts("en"))


def test_the_build_language_reaches_the_notebooks(monkeypatch):
    class Config:
        language = "zh_CN"

    monkeypatch.setenv(i18n.ENV, "en")
    posenc_widgets.set_language(None, Config())
    assert i18n.language() == "zh_CN"
    Config.language = None
    posenc_widgets.set_language(None, Config())
    assert i18n.language() == "en"


NODE_HARNESS = r"""
const fs = require("fs"), vm = require("vm");
globalThis.window = globalThis;
const input = JSON.parse(fs.readFileSync(0, "utf8"));
vm.runInThisContext(fs.readFileSync(input.core, "utf8"));
const defs = {}, register = posenc.register;
posenc.register = function (key, def) { defs[key] = def; register(key, def); };
input.scripts.forEach(function (f) {
  vm.runInThisContext(fs.readFileSync(f, "utf8"));
});
input.data.forEach(function (f) {  // committed data files (ch08's results)
  vm.runInThisContext(fs.readFileSync(f, "utf8"));
});
Object.keys(input.normals).forEach(function (name) {
  posenc.data.define(name, input.normals[name]);
});
const out = input.cases.map(function (c) {
  const def = defs[c.key];
  const size = typeof def.figsize === "function" ? def.figsize(c.params) : def.figsize;
  const fig = new posenc.plot.Figure(size);
  def.draw(fig, c.params, c.labels);
  const axes = fig.axes.filter(function (a) { return !a.hidden; });
  return {
    record: fig.record(),
    ticks: axes.map(function (a) {
      return a.xticksSet ? a.xticksSet.labels || null : null;
    }),
    colorbars: axes.filter(function (a) { return a.cbar; })
      .map(function (a) { return a.cbar.label; })
  };
});
process.stdout.write(JSON.stringify(out));
"""


def _words_of(record):
    """The words of a record (posenc.js's, or test_browser's of matplotlib)."""
    out = [record.get("suptitle")]
    for ax in record["axes"]:
        out += [ax["title"], ax["xlabel"], ax["ylabel"], *ax["texts"],
                *(ax["legend"] or []),
                *[line["label"] for line in ax["lines"]
                  if line["label"] and not str(line["label"]).startswith("_")]]
    return out


def _mpl_words(fig):
    axes = [ax for ax in fig.axes
            if not hasattr(ax, "_colorbar") and ax.get_visible()]
    record = {"suptitle": fig._suptitle.get_text() if fig._suptitle else None,
              "axes": []}
    for ax in axes:
        legend = ax.get_legend()
        record["axes"].append({
            "title": ax.get_title(), "xlabel": ax.get_xlabel(),
            "ylabel": ax.get_ylabel(), "texts": [t.get_text() for t in ax.texts],
            "legend": None if legend is None else [
                t.get_text() for t in legend.get_texts()],
            "lines": [{"label": line.get_label()} for line in ax.lines]})
    bars = sorted(ax.get_ylabel() for ax in fig.axes if hasattr(ax, "_colorbar"))
    return _words_of(record), bars


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_page_scripts_draw_the_same_words(lang, monkeypatch, tmp_path):
    """posenc.js and the chapter scripts, run in Node at every figure's
    defaults with the table the page carries, draw the words matplotlib
    draws, in both languages."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node: the in-page scripts' words are checked only by "
                    "tests/test_browser.py")
    monkeypatch.setenv(i18n.ENV, lang)
    cases, expected = [], []
    for module, figure in FIGURES:
        params = figure.defaults()
        cases.append({"key": f"{module}:{figure.name}", "params": params,
                      "labels": posenc_widgets.spec_json(
                          f"{module}:{figure.name}", figure, lang)["labels"]})
        fig = figure.plot(**params)
        expected.append((_mpl_words(fig), [
            [t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes
            if not hasattr(ax, "_colorbar") and ax.get_visible()]))
        plt.close("all")
    data = np.random.default_rng(0).standard_normal(
        posenc_widgets.NORMAL_COUNT).astype("<f8").tobytes()
    normals = {"normals-0": base64.b64encode(data).decode()}
    scripts = sorted({str(ASSETS / f"{module}.js") for module, _ in FIGURES})
    script = tmp_path / "harness.js"
    script.write_text(NODE_HARNESS, encoding="utf-8")
    done = subprocess.run(
        [node, str(script)], capture_output=True, text=True, timeout=300,
        input=json.dumps({"core": str(ASSETS / "posenc.js"), "scripts": scripts,
                          "data": sorted(str(f) for f in
                                         (ASSETS / "data").glob("*.js")),
                          "normals": normals, "cases": cases}))
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    bad = []
    for case, got, ((words, bars), ticks) in zip(cases, results, expected,
                                                 strict=True):
        js_words = _words_of(got["record"])
        if js_words != words:
            bad.append(f"{case['key']}: {js_words} != {words}")
        if sorted(b for b in got["colorbars"] if b) != [b for b in bars if b]:
            bad.append(f"{case['key']} colorbars: {got['colorbars']} != {bars}")
        for js_ticks, py_ticks in zip(got["ticks"], ticks, strict=False):
            if js_ticks is not None and js_ticks != py_ticks:
                bad.append(f"{case['key']} ticks: {js_ticks} != {py_ticks}")
        if lang == "zh_CN" and not _has_cjk([w for w in js_words if w]):
            bad.append(f"{case['key']}: no Chinese word drawn")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------- fonts


def _zh_strings():
    """Every Chinese label (math left out: mathtext has its own fonts)."""
    texts = [e["msgstr"] for e in _entries()]
    return [re.sub(r"\$[^$]*\$", "", t) for t in texts]


def test_a_cjk_font_is_installed_and_chosen():
    found = i18n.cjk_font()
    assert found is not None, (
        "no font with Chinese glyphs that matplotlib knows (tried "
        f"{', '.join(i18n.CJK_FAMILIES)}): install one (apt-get install "
        "fonts-noto-cjk) and delete matplotlib's font cache")
    family, path = found
    assert i18n.use_language_font("en") is None
    assert i18n.use_language_font("zh_CN") == family
    assert matplotlib.rcParams["font.sans-serif"][0] == family
    assert font_manager.findfont(family, fallback_to_default=False) == path


def test_every_chinese_character_has_a_glyph():
    """The CJK font has every Chinese character of the labels; every other
    character is in it or in a font of matplotlib's fallback list."""
    found = i18n.cjk_font()
    assert found is not None, "no CJK font installed (see the test above)"
    i18n.use_language_font("zh_CN")
    prop = font_manager.FontProperties(family=["sans-serif"])
    paths = font_manager.fontManager._find_fonts_by_props(prop)
    assert Path(paths[0]).resolve() == Path(found[1]).resolve(), paths
    charmaps = [set(FT2Font(str(p)).get_charmap()) for p in paths]
    chars = sorted({c for t in _zh_strings() for c in t if not c.isspace()})
    cjk = [c for c in chars if _is_cjk(c)]
    assert len(cjk) > 100
    missing = [c for c in cjk if ord(c) not in charmaps[0]]
    assert not missing, f"{found[0]} has no glyph for {''.join(missing)}"
    nowhere = [c for c in chars if not any(ord(c) in m for m in charmaps)]
    assert not nowhere, f"no font of {paths} has {''.join(nowhere)}"


def test_a_chinese_figure_renders_without_missing_glyphs(monkeypatch, recwarn):
    """Drawing every live figure in Chinese warns of no missing glyph."""
    assert i18n.cjk_font() is not None, "no CJK font installed"
    monkeypatch.setenv(i18n.ENV, "zh_CN")
    i18n.use_language_font()
    for _, figure in FIGURES:
        fig = figure.plot(**figure.defaults())
        fig.canvas.draw()
        plt.close(fig)
    glyphs = [str(w.message) for w in recwarn if "Glyph" in str(w.message)
              or "missing from font" in str(w.message)]
    assert not glyphs, glyphs[:5]


def test_a_folder_may_name_the_language(tmp_path, monkeypatch):
    """The Chinese notebooks' folder (tools/i18n.py build-zh) says zh_CN."""
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert i18n.language() == "en"
    (tmp_path / i18n.FOLDER_FILE).write_text("zh_CN\n")
    assert i18n.language() == "zh_CN"
    monkeypatch.setenv(i18n.ENV, "en")  # the environment wins
    assert i18n.language() == "en"
    monkeypatch.delenv(i18n.ENV)
    (tmp_path / i18n.FOLDER_FILE).write_text("fr\n")
    with pytest.raises(ValueError, match=r"\.posenc-lang"):
        i18n.language()
