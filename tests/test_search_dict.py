"""The Chinese search's dictionary (locales/zh_CN/search_dict.txt).

Sphinx splits the Chinese pages and a reader's query into words with jieba;
without the book's terms in its dictionary, jieba cuts 位置内插 into 位置 and
内插 and a search for the whole term finds pages that merely contain both
halves, or, for a variant such as 位置插值, only the glossary by luck. These
tests check that the Chinese build hands the dictionary to Sphinx, that it
holds every Chinese term of the glossary, and that Sphinx's own Chinese
splitter then keeps the terms whole.
"""
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import i18n  # noqa: E402

DICT = ROOT / i18n.SEARCH_DICT
CJK = re.compile(r"[\u4e00-\u9fff]")


def dictionary_words() -> list[str]:
    return [line.split()[0] for line in DICT.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def glossary_terms() -> list[str]:
    """The Chinese words of the glossary's two tables: the book's word of the
    first, the other spellings and the book's word of the second."""
    _, entries = i18n.read_po(ROOT / i18n.LOCALE_DIR / "glossary.po")
    terms = []
    tables = [e for e in entries if e.msgstr.startswith("|")]
    assert len(tables) == 2, "the glossary has its two tables"
    for table, columns in zip(tables, ((1,), (0, 2)), strict=True):
        for row in table.msgstr.splitlines()[2:]:
            cells = [c.strip() for c in row.strip("|").split("|")]
            for col in columns:
                for word in re.split(r"[、，,；;（）()]", cells[col]):
                    word = word.strip()
                    if len(CJK.findall(word)) >= 2 and not re.search(r"[\s$`]", word):
                        terms.append(word)
    return terms


def test_the_chinese_build_gives_sphinx_the_dictionary():
    config = yaml.safe_load(i18n._translated_config(
        ROOT, i18n.load_catalog(ROOT / i18n.LOCALE_DIR / i18n.BOOK_PO), []))
    path = Path(config["sphinx"]["config"]["html_search_options"]["dict"])
    # Sphinx ignores a dictionary path that is not a file, silently
    assert path.is_absolute() and path.is_file(), path
    assert path.resolve() == DICT.resolve()


def test_every_glossary_term_is_in_the_dictionary():
    words = set(dictionary_words())
    terms = glossary_terms()
    for term in ("位置内插", "位置插值", "置换等变", "排列等变", "底数", "基数",
                 "旋转式位置编码", "头维度", "平移量"):
        assert term in terms, term
    missing = [t for t in terms if t not in words]
    assert not missing, f"add to {DICT.relative_to(ROOT)}: {missing}"


def test_dictionary_lines_are_words():
    """jieba reads `word [frequency] [tag]` and no comments: a '#' line or a
    phrase with spaces would become a search term of its own."""
    words = dictionary_words()
    assert len(words) == len(set(words)), "no word twice"
    for line in DICT.read_text(encoding="utf-8").splitlines():
        assert line == line.strip() and line and not line.startswith("#"), line
        assert len(line.split()) == 1, line


def test_sphinx_keeps_the_terms_whole():
    from sphinx.search.zh import SearchChinese

    search = SearchChinese({"dict": str(DICT)})
    text = ("长上下文的位置插值与位置内插；注意力是置换等变的，"
            "也叫排列等变；头维度与底数")
    words = set(search.split(text))
    for term in ("位置插值", "位置内插", "置换等变", "排列等变", "头维度", "底数"):
        assert term in words, (term, sorted(words))
