"""The one bibliography, references.bib, and the citations of the book.

* every entry can be looked up: authors, title, year and a way to find it
  (an http(s) URL, an arXiv id or a publisher); the three source posts
  whose authors and addresses were not recorded say so instead;
* keys are unique (BibTeX keys ignore case), and so are the citations
  the reader sees: two entries that both read "(Su, 2021)" could not be
  told apart;
* every entry renders, in the book's style (``_ext/posenc_bibliography.py``),
  to text without leftover LaTeX and with its title as written;
* every key cited with ``{cite...}`` in the chapters, ``intro.md`` and
  ``teaching.md`` is in references.bib;
* no chapter names a source document bare ("source 003"): it cites it.

The built book's citations (round brackets, links to the References page)
are checked by ``tests/test_browser.py``.
"""

import json
import re
import sys
from pathlib import Path

import pytest
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "references.bib"
sys.path.insert(0, str(ROOT / "_ext"))
import posenc_bibliography  # noqa: E402

#: The source posts whose author, date and address were not recorded.
UNRECORDED = {"source001understanding", "source002positional",
              "source003absolute"}
#: Pages (besides the chapters) that may cite.
PAGES = ["intro.md", "teaching.md", "notation.md", "references.md"]
CITE = re.compile(r"\{cite(?::[A-Za-z]+)?\}`([^`]*)`")
BARE_SOURCE = re.compile(r"\bsources?\s*0\d\d\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def bib():
    return parse_file(str(BIB), bib_format="bibtex")


def texts():
    """(where, text) of every markdown cell, cell metadata and page."""
    found = []
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            where = f"{path.name} cell {i}"
            if cell["cell_type"] == "markdown":
                found.append((where, "".join(cell["source"])))
            # figure captions and alt texts are prose too
            found.append((where + " metadata",
                          json.dumps(cell.get("metadata", {}),
                                     ensure_ascii=False)))
    for name in PAGES:
        path = ROOT / name
        if path.is_file():
            found.append((name, path.read_text(encoding="utf-8")))
    return found


def cited_keys():
    keys = {}
    for where, text in texts():
        for match in CITE.finditer(text):
            for key in match.group(1).split(","):
                keys.setdefault(key.strip(), []).append(where)
    return keys


def test_keys_are_unique():
    text = BIB.read_text(encoding="utf-8")
    keys = re.findall(r"^\s*@\s*\w+\s*\{\s*([^,\s]+)\s*,", text, re.M)
    assert len(keys) > 10, "references.bib looks empty"
    seen, dupes = set(), []
    for key in keys:
        if key.lower() in seen:
            dupes.append(key)
        seen.add(key.lower())
    assert not dupes, f"keys used twice in references.bib: {dupes}"


def citation(entry):
    """What {cite:p} prints for an entry: (Author, year), with "and" for
    two authors, "et al." for more, the title when there is no author."""
    names = [" ".join(p.prelast_names + p.last_names)
             for p in entry.persons.get("author", [])]
    names = [re.sub(r"[{}]", "", name) for name in names]
    if not names:
        who = re.sub(r"[{}]", "", entry.fields.get("title", ""))
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2 and names[1] != "others":
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"({who}, {entry.fields.get('year', 'n.d.')})"


def test_citations_are_distinct(bib):
    """Two entries that read the same in the text cannot be looked up."""
    seen = {}
    for key, entry in bib.entries.items():
        seen.setdefault(citation(entry), []).append(key)
    same = {text: keys for text, keys in seen.items() if len(keys) > 1}
    assert not same, (
        "entries cited with the same text (give each its own author or "
        f"year, or drop an unknown author so the title is cited): {same}")


def test_every_entry_can_be_looked_up(bib):
    bad = []
    for key, entry in bib.entries.items():
        fields = {k.lower(): v for k, v in entry.fields.items()}
        missing = []
        if not entry.persons.get("author") and key not in UNRECORDED:
            missing.append("author")
        if not fields.get("title", "").strip():
            missing.append("title")
        url = fields.get("url", "")
        if url and not re.match(r"https?://\S+$", url):
            bad.append(f"{key}: url {url!r} is not an http(s) address")
        if key in UNRECORDED:
            # no year or address to give: the entry must say so
            if "not recorded" not in fields.get("howpublished", ""):
                bad.append(f"{key}: say in howpublished that its author "
                           "and address were not recorded")
        else:
            # four digits, and a letter where one author has two entries
            # of one year (Su 2021a, 2021b), as author-year styles write it
            if not re.fullmatch(r"\d{4}[a-z]?", fields.get("year", "").strip()):
                missing.append("year (four digits, then a letter or none)")
            if not (url or fields.get("eprint") or fields.get("publisher")
                    or fields.get("doi")):
                missing.append("url, eprint or publisher")
        if missing:
            bad.append(f"{key}: no {', '.join(missing)}")
    assert not bad, "\n".join(bad)


def test_unrecorded_sources_exist(bib):
    """The exemption above names entries that exist."""
    for key in UNRECORDED:
        assert key in bib.entries, f"{key} is not in references.bib"


def test_entries_render_in_the_book_style(bib):
    """No LaTeX left over; titles as written (not lowercased)."""
    posenc_bibliography.register()
    style = posenc_bibliography.BookStyle()
    bad = []
    for entry in style.format_entries(bib.entries.values()):
        text = entry.text.render_as("text")
        if "\\" in text or "{" in text or "}" in text:
            bad.append(f"{entry.key}: LaTeX left in {text!r}")
        title = bib.entries[entry.key].fields.get("title", "")
        plain = re.sub(r"[{}]", "", title)
        if plain not in text:
            bad.append(f"{entry.key}: title {plain!r} not in {text!r}")
    assert not bad, "\n".join(bad)


def test_book_style_keeps_case():
    """The style itself: pybtex's plain would print 'rope' for RoPE."""
    from pybtex.database import parse_string

    data = parse_string(r"""@misc{x2023t, author = {Su, Jianlin},
        title = {Transformer中的Positional Encoding and RoPE}, year = {2023},
        note = {Code: \texttt{get\_timing\_signal\_1d} in \texttt{a/b.py}},
        url = {https://example.org/}}""", "bibtex")
    posenc_bibliography.register()
    entry = next(iter(posenc_bibliography.BookStyle().format_entries(
        data.entries.values())))
    text = entry.text.render_as("text")
    assert "Transformer中的Positional Encoding and RoPE" in text
    assert "Code: get_timing_signal_1d in a/b.py" in text


def test_every_cited_key_is_in_the_bibliography(bib):
    known = {key.lower() for key in bib.entries}
    missing = {key: where for key, where in cited_keys().items()
               if key.lower() not in known}
    assert not missing, f"cited but not in references.bib: {missing}"


def test_no_bare_source_names():
    """Cite the sources ({cite:p}`source003absolute`), never 'source 003'."""
    bare = []
    for where, text in texts():
        text = CITE.sub("", text)
        for match in BARE_SOURCE.finditer(text):
            start = max(0, match.start() - 40)
            bare.append(f"{where}: ...{text[start:match.end() + 20]!r}...")
    assert not bare, f"{len(bare)} bare source names:\n" + "\n".join(bare)


def test_the_references_page_lists_everything():
    text = (ROOT / "references.md").read_text(encoding="utf-8")
    assert re.search(r"```\{bibliography\}[^`]*:all:", text), (
        "references.md must list every entry ({bibliography} with :all:)")
