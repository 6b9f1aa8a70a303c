"""The Chinese edition: translation units, PO files and the Chinese source tree.

The prose of the book lives in English in the notebooks and pages; its Chinese
translation lives in gettext PO files beside them, one per source document:

    locales/zh_CN/LC_MESSAGES/<source path without extension>.po
    (assignments/source/NN/NN.ipynb -> locales/zh_CN/LC_MESSAGES/assignments/NN.po)

plus ``_book.po`` (the book's title, author and the table of contents' part
captions) and ``figures.po`` (figure labels, msgctxt = the figure's name,
filled by ``posenc_plots``' owner, not by ``update``).

A translation unit is a block of a markdown cell or page separated from the
next by a blank line; a fenced block (```, ~~~, ::: or $$ ... $$) is kept
whole, blank lines included. Units without a word to translate (code, a math
block, a lone ``{tableofcontents}``) are not extracted and are copied as they
are. The msgid is the unit's exact text; its location (``#:``) is the source
path and the cell index (notebooks) or the line number (pages).

Besides the paragraphs, a document's PO file holds, each with its msgctxt,
the words a reader sees that are not paragraphs: the figures' captions and
alt texts of a notebook (``figure caption``, ``alt text``: a code cell's
``mystnb`` metadata), the words of formulas (``math text``: what
``\\text{...}`` holds), and, in references.po, the notes of references.bib
(``bibliography``: its ``note`` and ``howpublished`` fields; build-zh writes
a translated references.bib). build-zh also joins the soft line breaks
between two Chinese characters of a translation (Markdown renders them as
spaces), writes ``_posenc_anchors.json`` (the English ids of each page's
sections, which ``_ext/posenc_i18n.py`` gives the Chinese sections), selects
the Chinese citation style, and, when it keeps the stored outputs, writes
their printed lines as the Chinese kernel prints them
(``posenc_plots.printed``).

Commands (run from anywhere; paths are relative to the repository):

    python tools/i18n.py update          write/merge the PO files
    python tools/i18n.py stats           translated/fuzzy/untranslated per file
    python tools/i18n.py check           markup a translation broke
    python tools/i18n.py build-zh OUT    the Chinese source tree in OUT
    python tools/i18n.py notebook SRC PO OUT   one notebook, translated

From Python (``tools/`` on ``sys.path``, as ``tools/assignments.py`` has it)::

    import i18n
    nb_zh = i18n.translate_notebook(nb, i18n.po_path_of(path_of_nb))

gives the Chinese notebook (code cells untouched); it raises
``MissingTranslations`` (a ValueError) listing every untranslated unit.

``update`` keeps translations of unchanged units; a unit whose text changed
gets the translation of the most similar vanished unit, marked fuzzy with the
previous msgid (``#| msgid``), as msgmerge does; vanished translated units
become obsolete (``#~``). A fuzzy translation is not used, as in gettext.

Why PO files and not Sphinx's own gettext: Sphinx translates doctree nodes at
build time only, so it cannot produce Chinese notebooks for learners or
Chinese assignments for nbgrader; these files give all three, and code cells
are never translated, so they cannot differ between the editions.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = "zh_CN"
LOCALE_DIR = Path("locales") / LANGUAGE / "LC_MESSAGES"
BOOK_PO = "_book.po"
# jieba's user dictionary for the Chinese search (one term a line)
SEARCH_DICT = Path("locales") / LANGUAGE / "search_dict.txt"
FIGURES_PO = "figures.po"
ZH_TITLE_CONTEXT = "title"

# Fence openers: ```, ~~~ (CommonMark), ::: (MyST colon_fence).
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
# Directives whose content is not prose (copied as they are).
NON_PROSE_DIRECTIVES = {
    "math", "code", "code-block", "code-cell", "sourcecode", "literalinclude",
    "raw", "tableofcontents", "bibliography", "glue", "glue:figure", "image",
    "include", "eval-rst",
}
# Directives whose argument is a label or a path, not prose.
LABEL_ARGUMENT_DIRECTIVES = {
    "solution-start", "solution", "figure", "image", "literalinclude", "include",
    "glue:figure", "bibliography",
}
_WORD = re.compile(r"[A-Za-z]{2,}")


# --------------------------------------------------------------------------
# Splitting text into units


def split_segments(text: str) -> list[tuple[str, bool]]:
    """Split ``text`` into segments ``(chunk, is_block)`` whose concatenation
    is ``text``: blocks are separated by blank lines, fenced blocks are whole.
    Separators (the blank lines and newlines between blocks) are
    ``is_block=False`` segments."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    lines = text.splitlines(keepends=True)
    segments: list[tuple[str, bool]] = []
    block: list[str] = []
    gap: list[str] = []
    i = 0

    def flush_block():
        if block:
            chunk = "".join(block)
            # the newline ending a block belongs to the separator
            stripped = chunk.rstrip("\n")
            segments.append((stripped, True))
            gap.insert(0, chunk[len(stripped):])
            block.clear()

    def flush_gap():
        if gap:
            segments.append(("".join(gap), False))
            gap.clear()

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if block:
                flush_block()
            gap.append(line)
            i += 1
            continue
        if not block:
            flush_gap()
        end = _fence_end(lines, i)
        block.extend(lines[i:end])
        i = end
    flush_block()
    flush_gap()
    # merge consecutive separator segments
    merged: list[tuple[str, bool]] = []
    for chunk, is_block in segments:
        if merged and not is_block and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + chunk, False)
        elif chunk or is_block:
            merged.append((chunk, is_block))
    assert "".join(c for c, _ in merged) == text
    return merged


def _fence_end(lines: list[str], i: int) -> int:
    """Index after line ``i``, or after the fenced block that line ``i`` opens."""
    line = lines[i]
    stripped = line.strip()
    if stripped.startswith("$$"):
        rest = stripped[2:]
        if rest.endswith("$$") and len(stripped) >= 4:
            return i + 1
        for j in range(i + 1, len(lines)):
            close = lines[j].strip()
            # "$$ (label)" closes too (MyST dollarmath)
            if close.startswith("$$") or close.endswith("$$"):
                return j + 1
        return len(lines)
    m = _FENCE.match(line.rstrip("\n"))
    if not m:
        return i + 1
    fence = m.group("fence")
    if fence[0] == "`" and "`" in m.group("info"):
        return i + 1  # inline code, not a fence
    for j in range(i + 1, len(lines)):
        close = lines[j].strip()
        if (close and set(close) == {fence[0]} and len(close) >= len(fence)):
            return j + 1
    return len(lines)


def _prose_of(unit: str) -> str:
    """The unit without the parts that are not translated."""
    out = []
    lines = unit.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            end = _fence_end([x + "\n" for x in lines], i)
            info = m.group("info").strip()
            name = None
            if info.startswith("{") and "}" in info:
                name = info[1:info.index("}")]
            if name is None:
                # a code block: only its comments are prose
                for body in lines[i + 1:end - 1]:
                    if re.match(r"^\s*#|.*\s#\s", body):
                        out.append(body[body.index("#") + 1:])
                i = end
                continue
            if name in NON_PROSE_DIRECTIVES:
                i = end
                continue
            # directive: its argument (unless a label or a path) and body
            # are prose, its options are not
            if name not in LABEL_ARGUMENT_DIRECTIVES:
                out.append(info[len(name) + 2:])
            for body in lines[i + 1:end - 1]:
                if not re.match(r"^\s*:[\w-]+:", body):
                    out.append(body)
            i = end
            continue
        if line.strip().startswith("$$"):
            i = _fence_end([x + "\n" for x in lines], i)
            continue
        out.append(line)
        i += 1
    prose = "\n".join(out)
    prose = re.sub(r"^\s*\([\w:.-]+\)=\s*$", "", prose, flags=re.M)  # labels
    prose = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", prose)  # roles
    prose = re.sub(r"`[^`]*`", " ", prose)  # inline code
    prose = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", prose, flags=re.S)  # math
    prose = re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]", " ", prose, flags=re.S)
    prose = re.sub(r"https?://\S+", " ", prose)
    prose = re.sub(r"<[^>]+>", " ", prose)  # html tags
    return prose


def is_translatable(unit: str) -> bool:
    """True if ``unit`` has at least one word to translate."""
    return bool(_WORD.search(_prose_of(unit)))


def text_units(text: str) -> list[tuple[str, int]]:
    """The translation units of a markdown text, with their first line (1-based)."""
    units = []
    line = 1
    for chunk, is_block in split_segments(text):
        if is_block and is_translatable(chunk):
            units.append((chunk, line))
        line += chunk.count("\n")
    return units


def word_count(text: str) -> int:
    return len(re.findall(r"[A-Za-z][A-Za-z'-]*", _prose_of(text)))


# --------------------------------------------------------------------------
# Documents


def documents(root: Path = ROOT) -> list[Path]:
    """Every source document with prose, relative to ``root``: the files of
    _toc.yml and the assignments' source notebooks."""
    root = Path(root)
    docs = [Path(f) for f in _toc_files(root)]
    docs += sorted(p.relative_to(root)
                   for p in (root / "assignments" / "source").glob("*/*.ipynb"))
    return docs


def _toc_files(root: Path) -> list[str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    files = []
    for name in names:
        for ext in (".ipynb", ".md"):
            if (root / (name + ext)).is_file():
                files.append(name + ext)
                break
        else:
            raise ValueError(f"_toc.yml: no .ipynb or .md file for {name!r}")
    return files


def po_path_of(doc: Path | str, root: Path = ROOT) -> Path:
    """The PO file of a source document (path relative to ``root``)."""
    doc = Path(doc)
    if doc.is_absolute():
        doc = doc.relative_to(root)
    parts = doc.with_suffix("").parts
    if parts[:2] == ("assignments", "source"):
        if len(parts) != 4:
            raise ValueError(
                f"doc: an assignment is assignments/source/NAME/NAME.ipynb, got {doc}")
        parts = ("assignments", parts[3])
    return Path(root) / LOCALE_DIR / Path(*parts).with_suffix(".po")


def document_units(doc: Path | str, root: Path = ROOT) -> list[tuple[str, str]]:
    """``(msgid, location)`` of every unit of a document, in order."""
    doc = Path(doc)
    path = Path(root) / doc
    rel = doc.as_posix()
    if doc.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [(unit, f"{rel}:{index}")
                for index, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
                for unit, _ in text_units(cell.source)]
    if doc.suffix == ".md":
        return [(unit, f"{rel}:{line}")
                for unit, line in text_units(path.read_text(encoding="utf-8"))]
    raise ValueError(f"doc: a .ipynb or .md file, got {doc}")


# Messages that are not paragraphs (msgctxt says which):
CAPTION, ALT = "figure caption", "alt text"
MATH_WORDS, BIB_NOTE = "math text", "bibliography"
_TEXT_CMD = re.compile(r"(\\text\s*\{)([^{}]*)(\})")
# inline math may go on over a line break, not over a blank line
_MATH_SPAN = re.compile(r"\$\$.*?\$\$|\$(?:[^$\\\n]|\\.|\n(?![ \t]*\n))+\$", re.S)
BIB_FIELDS = ("note", "howpublished")
REFERENCES_DOC = "references.md"


def math_words(text: str) -> list[str]:
    """The words of the ``\\text{...}`` parts of the formulas of a markdown
    text (``$...$``, ``$$...$$``, ``{math}`` blocks), stripped, in order:
    what a reader reads inside a formula."""
    found = []
    for span in _math_spans(text):
        for m in _TEXT_CMD.finditer(span):
            word = m.group(2).strip()
            if _WORD.search(word):
                found.append(word)
    return found


def _math_spans(text: str) -> list[str]:
    spans = [m.group(0) for m in _MATH_SPAN.finditer(_without_code(text))]
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].rstrip("\n"))
        if m:
            end = _fence_end(lines, i)
            if m.group("info").strip().startswith("{math}"):
                spans.append("".join(lines[i:end]))
            i = end
        else:
            i += 1
    return spans


def _without_code(text: str) -> str:
    """``text`` with fenced code blocks and inline code blanked out (a
    directive's fence is kept, and its content looked into)."""
    lines = text.splitlines(keepends=True)
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i].rstrip("\n"))
        if m:
            end = _fence_end(lines, i)
            if m.group("info").strip().startswith("{"):
                closing = lines[end - 1:end] if end - 1 > i else []
                inner = "".join(lines[i + 1:end - len(closing)])
                out += [lines[i], _without_code(inner), *closing]
            else:
                out.append("\n" * (end - i))
            i = end
            continue
        out.append(lines[i])
        i += 1
    return re.sub(r"(?<![`])`[^`\n]+`(?!`)", " ", "".join(out))


def translate_math_words(text: str, catalog: dict, missing: list[str],
                         where: str) -> str:
    """``text`` with the words of its formulas' ``\\text{}`` translated
    (the spaces around them kept)."""
    def one_span(span):
        def one(m):
            inner = m.group(2)
            word = inner.strip()
            if not _WORD.search(word):
                return m.group(0)
            zh = catalog.get((MATH_WORDS, word))
            if zh is None:
                missing.append(f"{where}: {MATH_WORDS} {word!r}")
                return m.group(0)
            lead = inner[:len(inner) - len(inner.lstrip())]
            trail = inner[len(inner.rstrip()):]
            return m.group(1) + lead + zh + trail + m.group(3)
        return _TEXT_CMD.sub(one, span)

    if "\\text" not in text:
        return text
    for span in sorted(set(_math_spans(text)), key=len, reverse=True):
        text = text.replace(span, one_span(span))
    return text


def figure_texts(cell) -> list[tuple[str, str]]:
    """``(msgctxt, text)`` of a code cell's figure caption and alt text
    (MyST-NB's ``mystnb`` metadata)."""
    meta = cell.get("metadata", {}).get("mystnb", {})
    found = []
    caption = meta.get("figure", {}).get("caption")
    if isinstance(caption, str) and _WORD.search(caption):
        found.append((CAPTION, caption))
    alt = meta.get("image", {}).get("alt")
    if isinstance(alt, str) and _WORD.search(alt):
        found.append((ALT, alt))
    return found


def _bib_fields(text: str):
    """``(key, field, start, end)`` of the free-text fields (BIB_FIELDS) of
    a .bib file; ``text[start:end]`` is the field's value inside its braces."""
    key = None
    for m in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,|\b(\w+)\s*=\s*\{", text):
        if m.group(1):
            key = m.group(1)
            continue
        name = m.group(2).lower()
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if name in BIB_FIELDS and key:
            yield key, name, m.end(), i - 1


def bib_messages(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """``(msgctxt, value, location)`` of the notes of references.bib."""
    path = Path(root) / "references.bib"
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    found = []
    for key, name, start, end in _bib_fields(text):
        value = text[start:end]
        bare = re.sub(r"https?://\S+|\\texttt\{[^{}]*\}", " ", value)
        if _WORD.search(bare):
            found.append((BIB_NOTE, value, f"references.bib:{key}.{name}"))
    return found


def translated_bib(root: Path, catalog: dict, missing: list[str]) -> str:
    """references.bib with its notes in Chinese."""
    text = (Path(root) / "references.bib").read_text(encoding="utf-8")
    out, last = [], 0
    for key, name, start, end in _bib_fields(text):
        value = text[start:end]
        bare = re.sub(r"https?://\S+|\\texttt\{[^{}]*\}", " ", value)
        if not _WORD.search(bare):
            continue
        zh = catalog.get((BIB_NOTE, value))
        if zh is None:
            missing.append(f"references.bib: {key}.{name} {_first_line(value)}")
            continue
        out += [text[last:start], zh]
        last = end
    out.append(text[last:])
    return "".join(out)


def document_messages(doc: Path | str,
                      root: Path = ROOT) -> list[tuple[str | None, str, str]]:
    """``(msgctxt, msgid, location)`` of every message of a document: its
    paragraphs (msgctxt None), then the words of its formulas, its figures'
    captions and alt texts (notebooks), and, for the References page, the
    notes of references.bib."""
    doc = Path(doc)
    path = Path(root) / doc
    rel = doc.as_posix()
    found: list[tuple[str | None, str, str]] = [
        (None, u, loc) for u, loc in document_units(doc, root)]
    if doc.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                found += [(MATH_WORDS, w, f"{rel}:{index}")
                          for w in math_words(cell.source)]
            elif cell.cell_type == "code":
                found += [(ctx, t, f"{rel}:{index}") for ctx, t in figure_texts(cell)]
    else:
        found += [(MATH_WORDS, w, rel) for w in
                  math_words(path.read_text(encoding="utf-8"))]
        if rel == REFERENCES_DOC:
            found += bib_messages(root)
    return found


#: myst-nb's prompts on a folded cell (its defaults; {type} becomes
#: "source" or "outputs"), translated in _book.po like the book's title.
MYST_NB_PROMPTS = {"nb_code_prompt_show": "Show code cell {type}",
                   "nb_code_prompt_hide": "Hide code cell {type}"}


def book_units(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """``(msgctxt, msgid, location)`` of _config.yml's title and author and
    _toc.yml's captions."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    units = [("title", config["title"], "_config.yml:title"),
             ("author", config["author"], "_config.yml:author")]
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc.get("parts", []):
        if "caption" in part:
            units.append(("caption", part["caption"], "_toc.yml:caption"))
    # myst-nb's words on a folded cell's toggle ("Show code cell source")
    units += [(key, default, f"myst-nb:{key}")
              for key, default in MYST_NB_PROMPTS.items()]
    return units


# --------------------------------------------------------------------------
# PO files


@dataclass
class Entry:
    msgid: str
    msgstr: str = ""
    msgctxt: str | None = None
    locations: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)  # "# " translator comments
    extracted: list[str] = field(default_factory=list)  # "#." comments
    previous: str | None = None  # "#| msgid" of a fuzzy entry
    obsolete: bool = False

    @property
    def key(self) -> tuple[str | None, str]:
        return (self.msgctxt, self.msgid)

    @property
    def fuzzy(self) -> bool:
        return "fuzzy" in self.flags

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and not self.fuzzy and not self.obsolete


HEADER = (
    "Project-Id-Version: posenc-book\n"
    "Report-Msgid-Bugs-To: \n"
    "PO-Revision-Date: 2026-12-01 00:00+0000\n"
    "Last-Translator: the book's translators\n"
    "Language-Team: Chinese (zh_CN)\n"
    "Language: zh_CN\n"
    "MIME-Version: 1.0\n"
    "Content-Type: text/plain; charset=UTF-8\n"
    "Content-Transfer-Encoding: 8bit\n"
    "Plural-Forms: nplurals=1; plural=0;\n"
)


def _unquote(s: str) -> str:
    s = s.strip()
    if not (len(s) >= 2 and s[0] == '"' and s[-1] == '"'):
        raise ValueError(f"PO file: a quoted string expected, got {s!r}")
    return json.loads(s)


def _quote_lines(keyword: str, text: str, prefix: str = "") -> list[str]:
    def q(s):
        return json.dumps(s, ensure_ascii=False)

    parts = text.splitlines(keepends=True)
    if len(parts) <= 1:
        return [f"{prefix}{keyword} {q(text)}"]
    return [f'{prefix}{keyword} ""'] + [f"{prefix}{q(p)}" for p in parts]


def read_po(path: Path | str) -> tuple[str, list[Entry]]:
    """``(header msgstr, entries)`` of a PO file (no plural forms)."""
    path = Path(path)
    header = HEADER
    entries: list[Entry] = []
    cur: Entry | None = None
    field_name = None
    values: dict[str, str] = {}
    prev_values: dict[str, str] = {}
    pending = {"locations": [], "flags": [], "comments": [], "extracted": []}

    def finish():
        nonlocal cur, header
        if "msgid" in values:
            e = Entry(msgid=values["msgid"], msgstr=values.get("msgstr", ""),
                      msgctxt=values.get("msgctxt"), **{k: list(v) for k, v in
                                                         pending.items()},
                      previous=prev_values.get("msgid"),
                      obsolete=bool(values.get("_obsolete")))
            if e.msgid == "" and e.msgctxt is None:
                header = e.msgstr
            else:
                entries.append(e)
        values.clear()
        prev_values.clear()
        for v in pending.values():
            v.clear()

    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            finish()
            field_name = None
            continue
        obsolete = False
        if line.startswith("#~"):
            obsolete = True
            line = line[2:].strip()
            if not line:
                continue
        if line.startswith("#|"):
            rest = line[2:].strip()
            m = re.match(r"^(msgctxt|msgid)\s+(\".*\")$", rest)
            if m:
                field_name = "prev_" + m.group(1)
                prev_values[m.group(1)] = _unquote(m.group(2))
            elif rest.startswith('"') and field_name and field_name.startswith("prev_"):
                prev_values[field_name[5:]] += _unquote(rest)
            continue
        if line.startswith("#"):
            if "msgid" in values and field_name and not field_name.startswith("prev_"):
                finish()
            if line.startswith("#:"):
                pending["locations"].extend(line[2:].split())
            elif line.startswith("#,"):
                pending["flags"].extend(f.strip() for f in line[2:].split(",") if
                                        f.strip())
            elif line.startswith("#."):
                pending["extracted"].append(line[2:].strip())
            else:
                pending["comments"].append(line[1:].strip())
            continue
        m = re.match(r"^(msgctxt|msgid|msgstr)\s+(\".*\")$", line)
        if m:
            if m.group(1) in ("msgctxt", "msgid") and "msgid" in values:
                finish()
            field_name = m.group(1)
            values[field_name] = _unquote(m.group(2))
            if obsolete:
                values["_obsolete"] = "1"
            continue
        if line.startswith('"') and field_name in values:
            values[field_name] += _unquote(line)
            continue
        raise ValueError(f"{path}:{n}: cannot parse {raw!r}")
    finish()
    return header, entries


def write_po(path: Path | str, entries: list[Entry], header: str = HEADER) -> None:
    """Write a PO file: active entries in order, then obsolete ones. No line
    wrapping except after newlines, so that a diff shows changed lines."""
    path = Path(path)
    out = ["# Chinese translation of the positional-encoding book.",
           "# Edit the msgstr lines only; run `python tools/i18n.py update` after",
           "# changing the English sources.",
           'msgid ""']
    out += _quote_lines("msgstr", header)[0:]
    for e in sorted(entries, key=lambda e: e.obsolete):
        out.append("")
        prefix = "#~ " if e.obsolete else ""
        out += [f"# {c}" if c else "#" for c in e.comments]
        out += [f"#. {c}" for c in e.extracted]
        if e.locations and not e.obsolete:
            out.append("#: " + " ".join(e.locations))
        if e.flags:
            out.append("#, " + ", ".join(e.flags))
        if e.previous is not None and not e.obsolete:
            out += _quote_lines("msgid", e.previous, "#| ")
        if e.msgctxt is not None:
            out += _quote_lines("msgctxt", e.msgctxt, prefix)
        out += _quote_lines("msgid", e.msgid, prefix)
        out += _quote_lines("msgstr", e.msgstr, prefix)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def merge(old: list[Entry], units: list[tuple[str | None, str, str]]) -> list[Entry]:
    """New entries for ``units`` (``(msgctxt, msgid, location)``), keeping the
    translations of ``old`` as msgmerge does."""
    by_key = {e.key: e for e in old}
    new: dict[tuple, Entry] = {}
    for ctx, msgid, loc in units:
        key = (ctx, msgid)
        if key in new:
            new[key].locations.append(loc)
            continue
        e = Entry(msgid=msgid, msgctxt=ctx, locations=[loc])
        prior = by_key.get(key)
        if prior is not None:
            e.msgstr, e.comments = prior.msgstr, list(prior.comments)
            e.flags = [f for f in prior.flags if f == "fuzzy"] if prior.msgstr else []
            e.previous = prior.previous if e.fuzzy else None
        new[key] = e
    vanished = [e for e in old if e.key not in new and e.msgstr]
    used: set[int] = set()
    for e in new.values():
        if e.msgstr or not vanished:
            continue
        best, best_ratio = None, 0.6
        for n, v in enumerate(vanished):
            if n in used or v.msgctxt != e.msgctxt:
                continue
            ratio = difflib.SequenceMatcher(None, v.msgid, e.msgid).ratio()
            if ratio > best_ratio:
                best, best_ratio = n, ratio
        if best is not None:
            used.add(best)
            v = vanished[best]
            e.msgstr, e.comments = v.msgstr, list(v.comments)
            e.flags = ["fuzzy"]
            e.previous = v.previous if v.fuzzy and v.previous else v.msgid
    obsolete = [Entry(msgid=v.msgid, msgstr=v.msgstr, msgctxt=v.msgctxt,
                      comments=list(v.comments), obsolete=True)
                for n, v in enumerate(vanished) if n not in used]
    return list(new.values()) + obsolete


def po_files(root: Path = ROOT) -> list[Path]:
    """Every PO file the book needs, in the order of ``documents``."""
    root = Path(root)
    return ([po_path_of(d, root) for d in documents(root)]
            + [root / LOCALE_DIR / BOOK_PO, root / LOCALE_DIR / FIGURES_PO])


def update(root: Path = ROOT, out=sys.stdout,
           only: list[str] | None = None) -> dict[str, int]:
    """Write or merge every PO file (or those of the documents ``only``);
    return English words per PO file."""
    root = Path(root)
    words = {}
    docs = documents(root)
    if only:
        wanted = {Path(d).as_posix() for d in only}
        unknown = wanted - {d.as_posix() for d in docs} - {"_book"}
        if unknown:
            raise ValueError(f"only: documents of the book (or _book), got "
                             f"{sorted(unknown)}")
        docs = [d for d in docs if d.as_posix() in wanted]
    jobs = [(po_path_of(d, root), document_messages(d, root)) for d in docs]
    if not only or "_book" in only:
        jobs.append((root / LOCALE_DIR / BOOK_PO, book_units(root)))
    for po, units in jobs:
        header, old = read_po(po) if po.exists() else (HEADER, [])
        entries = merge(old, units)
        write_po(po, entries, header)
        rel = po.relative_to(root).as_posix()
        words[rel] = sum(word_count(e.msgid) for e in entries if not e.obsolete)
        print(f"{rel}: {sum(not e.obsolete for e in entries)} units, "
              f"{words[rel]} words", file=out)
    figures = root / LOCALE_DIR / FIGURES_PO
    if not figures.exists():
        write_po(figures, [])
    print(f"total: {sum(words.values())} words", file=out)
    return words


def po_stats(path: Path | str) -> dict[str, int]:
    """Counts as ``msgfmt --statistics`` gives them, plus obsolete entries."""
    _, entries = read_po(path)
    active = [e for e in entries if not e.obsolete]
    return {
        "translated": sum(e.translated for e in active),
        "fuzzy": sum(e.fuzzy and bool(e.msgstr) for e in active),
        "untranslated": sum(not e.msgstr for e in active),
        "obsolete": len(entries) - len(active),
        "words_left": sum(word_count(e.msgid) for e in active if not e.translated),
    }


def stats(root: Path = ROOT, out=sys.stdout) -> dict[str, dict[str, int]]:
    root = Path(root)
    result = {}
    for po in po_files(root):
        rel = po.relative_to(root).as_posix()
        if not po.exists():
            raise ValueError(f"{rel} is missing: run `python tools/i18n.py update`")
        s = result[rel] = po_stats(po)
        print(f"{rel}: {s['translated']} translated messages, {s['fuzzy']} fuzzy "
              f"translations, {s['untranslated']} untranslated messages, "
              f"{s['obsolete']} obsolete ({s['words_left']} English words left)",
              file=out)
    total = {k: sum(s[k] for s in result.values())
             for k in ("translated", "fuzzy", "untranslated", "obsolete", "words_left")}
    print(f"total: {total}", file=out)
    return result


# --------------------------------------------------------------------------
# Checking translations

_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
_CODE = re.compile(r"(?<![}`])`[^`\n]+`(?!`)")
_MATH = re.compile(r"\$\$.*?\$\$|\$(?:[^$\\]|\\.)+\$", re.S)
_LABEL = re.compile(r"^\s*\([\w:.-]+\)=\s*$", re.M)
# a URL ends before whitespace, a closing bracket or CJK punctuation; a
# trailing full stop or comma belongs to the sentence, not to the URL
_URL_END = r"[\s)>\]，。；：！？、）》」]"
_URL = re.compile(rf"https?://(?:(?!{_URL_END}).)+?(?=[.,;:!?'\"]*(?:{_URL_END}|$))",
                  re.M)
# the target of a markdown link or image, [text](target) (a URL, a
# document, a #label)
_LINK = re.compile(r"\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _fence_lines(text: str) -> list[str]:
    """Fence and $$ lines and directive options; a directive's title (its
    argument, unless a label) is prose and left out."""
    lines = []
    for line in text.splitlines():
        m = _FENCE.match(line)
        if m:
            info = m.group("info").strip()
            name = re.match(r"^\{([^}]*)\}", info)
            if name and name.group(1) not in LABEL_ARGUMENT_DIRECTIVES:
                info = name.group(0)
            lines.append(m.group("fence") + info)
        elif line.strip().startswith("$$") or re.match(r"^\s*:[\w-]+:", line):
            lines.append(line.strip())
    return lines


def check_entry(msgid: str, msgstr: str) -> list[str]:
    """What a translation broke in the markup of its unit: roles
    ({cite:p}`x`, {doc}`x`, ...), inline code, math, labels, links, fence,
    directive-option and $$ lines, and the heading level must all be kept."""
    if not msgstr:
        return []
    problems = []
    for what, pattern in (("role", _ROLE), ("inline code", _CODE),
                          ("math", _MATH), ("label", _LABEL), ("link", _URL),
                          ("link target", _LINK)):
        before = sorted(m.strip() for m in pattern.findall(_ROLE.sub(
            "", msgid) if pattern is _CODE else msgid))
        after = sorted(m.strip() for m in pattern.findall(_ROLE.sub(
            "", msgstr) if pattern is _CODE else msgstr))
        if before != after:
            lost = sorted(set(before) - set(after))
            added = sorted(set(after) - set(before))
            problems.append(f"{what} changed: lost {lost}, added {added}"
                            if lost or added else f"{what}: counts differ")
    if _fence_lines(msgid) != _fence_lines(msgstr):
        problems.append("fence, directive option or $$ lines changed: "
                        f"{_fence_lines(msgid)} != {_fence_lines(msgstr)}")
    heading = re.match(r"^(#+) ", msgid)
    if heading and not msgstr.startswith(heading.group(1) + " "):
        problems.append(f"heading level {heading.group(1)} not kept")
    return problems


def check(root: Path = ROOT, out=sys.stdout) -> list[str]:
    """Markup problems of every translated entry (see ``check_entry``)."""
    root = Path(root)
    found = []
    for po in po_files(root):
        if not po.exists():
            continue
        for e in read_po(po)[1]:
            if e.obsolete or e.msgctxt not in (None, CAPTION, ALT, BIB_NOTE):
                continue
            for problem in check_entry(e.msgid, e.msgstr):
                found.append(f"{po.relative_to(root).as_posix()}: "
                             f"{_first_line(e.msgid)}: {problem}")
    for line in found:
        print(line, file=out)
    return found


# --------------------------------------------------------------------------
# Translating


def load_catalog(po: Path | str) -> dict[tuple[str | None, str], str]:
    """``(msgctxt, msgid) -> msgstr`` of the translated (not fuzzy) entries."""
    po = Path(po)
    if not po.is_file():
        raise ValueError(f"po_path: no PO file at {po}")
    return {e.key: e.msgstr for e in read_po(po)[1] if e.translated}


class MissingTranslations(ValueError):
    """Units without a (non-fuzzy) translation; ``missing`` lists them."""

    def __init__(self, missing: list[str]):
        self.missing = missing
        shown = "\n  ".join(missing[:30])
        more = f"\n  ... and {len(missing) - 30} more" if len(missing) > 30 else ""
        super().__init__(
            f"{len(missing)} units have no translation (translate them in the PO "
            f"files, or run `python tools/i18n.py update` if the English changed; "
            f"--allow-missing falls back to English, for development only):\n  "
            f"{shown}{more}")


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 70 else line[:67] + "..."


def translate_text(text: str, catalog: dict, missing: list[str], where: str) -> str:
    """``text`` with every unit replaced by its translation; units without
    one stay English and are appended to ``missing``."""
    out = []
    for chunk, is_block in split_segments(text):
        if is_block and is_translatable(chunk):
            translated = catalog.get((None, chunk))
            if translated is None:
                missing.append(f"{where}: {_first_line(chunk)}")
                translated = chunk
            else:
                translated = join_cjk_lines(translated)
            chunk = translated
        out.append(chunk)
    return translate_math_words("".join(out), catalog, missing, where)


_CJK = (r"\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf"
        r"\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef")
_CJK_END = re.compile(rf"[{_CJK}][*_]*$")
_CJK_START = re.compile(rf"^\s*[*_]*[{_CJK}]")


def join_cjk_lines(text: str) -> str:
    """``text`` with the soft line breaks between two CJK characters
    removed: Markdown renders a soft break as a space, which Chinese text
    does not have. Fenced code and ``$$`` blocks are left alone, and so are
    lines that end a paragraph or open a block (a CJK character cannot open
    a list item, a heading or a table row)."""
    lines = text.split("\n")
    out: list[str] = []
    fence = None
    directives: list[str] = []  # the fences of the directives open here
    for line in lines:
        stripped = line.strip()
        if fence is None and directives and stripped and (
                set(stripped) == {directives[-1][0]}
                and len(stripped) >= len(directives[-1])):
            directives.pop()  # a directive's closing fence
            out.append(line)
            continue
        if fence is not None:
            out.append(line)
            if fence == "$$":
                if stripped.startswith("$$") or stripped.endswith("$$"):
                    fence = None
            elif (stripped and set(stripped) == {fence[0]}
                  and len(stripped) >= len(fence)):
                fence = None
            continue
        m = _FENCE.match(line)
        if m and m.group("info").strip().startswith("{"):
            directives.append(m.group("fence"))
            out.append(line)
            continue
        if m:
            fence = m.group("fence")
            out.append(line)
            continue
        if stripped.startswith("$$") and not (
                len(stripped) >= 4 and stripped.endswith("$$")):
            fence = "$$"
            out.append(line)
            continue
        if (out and fence is None and _CJK_START.match(line)
                and _CJK_END.search(out[-1]) and out[-1].strip()
                and not out[-1].lstrip().startswith(("|", "$$", ":::", "```"))
                and not line.lstrip().startswith("|")):
            out[-1] += line.lstrip()
            continue
        out.append(line)
    return "\n".join(out)


def _translate_figure_texts(cell, catalog, missing, where):
    """The figure caption and alt text of a code cell's metadata, in Chinese."""
    meta = cell.get("metadata", {}).get("mystnb", {})
    for ctx, part, name in ((CAPTION, "figure", "caption"), (ALT, "image", "alt")):
        text = meta.get(part, {}).get(name)
        if not (isinstance(text, str) and _WORD.search(text)):
            continue
        zh = catalog.get((ctx, text))
        if zh is None:
            missing.append(f"{where}: {ctx} {_first_line(text)}")
        else:
            meta[part][name] = zh


def _translate_outputs(cell):
    """Stored outputs, as the Chinese edition's kernel prints them
    (``posenc_plots.printed``: the same label table)."""
    from posenc_plots import printed

    # one stream, as the Chinese kernel writes whole lines (a print with
    # end="" and the next one are two stored outputs of the English run)
    merged = []
    for out in cell.get("outputs", []):
        if (merged and out.get("output_type") == "stream"
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    cell["outputs"] = merged
    for out in merged:
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            out["text"] = printed.translate(out["text"], "zh_CN")
        data = out.get("data", {})
        if "text/markdown" in data:
            data["text/markdown"] = printed.translate(data["text/markdown"], "zh_CN")


def translate_notebook(nb, po_path: Path | str, *, allow_missing: bool = False,
                       clear_outputs: bool = False, where: str = "notebook",
                       missing: list[str] | None = None,
                       translate_outputs: bool = False):
    """A copy of notebook ``nb`` with its markdown cells, and its figures'
    captions and alt texts (``mystnb`` metadata), translated from
    ``po_path``; code and raw cells and the rest of the metadata are
    untouched (``clear_outputs`` empties the code cells' outputs and
    execution counts; ``translate_outputs`` instead translates the stored
    printed outputs as the Chinese kernel prints them, for a build without
    execution).

    A unit without a translation (or with a fuzzy one) raises
    ``MissingTranslations`` (a ValueError) listing them all, unless
    ``allow_missing``, which keeps the English (for development only).
    ``missing``, if given, collects them instead of raising.
    """
    if not hasattr(nb, "cells"):
        raise ValueError("nb: a notebook (nbformat.NotebookNode) is needed")
    catalog = load_catalog(po_path)
    collect = [] if missing is None else missing
    new = copy.deepcopy(nb)
    for index, cell in enumerate(new.cells):
        if cell.cell_type == "markdown":
            cell.source = translate_text(cell.source, catalog, collect,
                                         f"{where}:{index}")
        elif cell.cell_type == "code":
            _translate_figure_texts(cell, catalog, collect, f"{where}:{index}")
            if clear_outputs:
                cell.outputs = []
                cell.execution_count = None
            elif translate_outputs:
                _translate_outputs(cell)
    # A slider cell's stored output says, in Chinese, to run it (issue 25).
    from posenc_plots.jupyter import set_fallbacks
    set_fallbacks(new, "zh_CN")
    if collect and missing is None and not allow_missing:
        raise MissingTranslations(collect)
    return new


def _translated_config(root: Path, book: dict, missing: list[str]) -> str:
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    for key in ("title", "author"):
        value = book.get((key, config[key]))
        if value is None:
            missing.append(f"{BOOK_PO}: {key} {config[key]!r}")
        else:
            config[key] = value
    sphinx = config.setdefault("sphinx", {})
    sphinx_config = sphinx.setdefault("config", {})
    sphinx_config["language"] = LANGUAGE
    for key, default in MYST_NB_PROMPTS.items():
        value = book.get((key, sphinx_config.get(key, default)))
        if value is None:
            missing.append(f"{BOOK_PO}: {key} {default!r}")
        else:
            sphinx_config[key] = value
    # _ext/posenc_i18n.py: the language switch points back to the English
    # edition, one folder up.
    sphinx_config["posenc_other_edition"] = "../"
    sphinx_config["posenc_other_language"] = "en"
    sphinx_config["posenc_other_label"] = "English"
    # _ext/posenc_bibliography.py: "Press 等人（2022）", "（Vaswani 等人，2017）"
    if sphinx_config.get("bibtex_reference_style") == "author_year_round":
        sphinx_config["bibtex_reference_style"] = "author_year_round_zh"
    # MathJax from the repository's node_modules (not copied)
    sphinx_config["posenc_mathjax"] = str(root / "node_modules" / "mathjax" / "es5")
    # The Chinese search splits words with jieba: the book's terms
    # (glossary.md) as its user dictionary, so that 位置内插 is one word.
    sphinx_config["html_search_options"] = {"dict": str(root / SEARCH_DICT)}
    header = ("# Generated by `python tools/i18n.py build-zh` from the English\n"
              "# _config.yml: do not edit, edit the English one.\n")
    return header + yaml.safe_dump(config, allow_unicode=True, sort_keys=False,
                                   width=88)


def _translated_toc(root: Path, book: dict, missing: list[str]) -> str:
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc.get("parts", []):
        if "caption" in part:
            value = book.get(("caption", part["caption"]))
            if value is None:
                missing.append(f"{BOOK_PO}: caption {part['caption']!r}")
            else:
                part["caption"] = value
    return yaml.safe_dump(toc, allow_unicode=True, sort_keys=False, width=88)


ANCHORS = "_posenc_anchors.json"


def heading_ids(text: str) -> list[str]:
    """The ids that Sphinx gives the sections of a markdown text (its
    headings, in order), as MyST and docutils make them: the Chinese
    edition gives its sections the same ids (``_ext/posenc_i18n.py``), so
    that a link to a section, and the language switch, land on the same
    section in both editions."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    doctree = publish_doctree(text, parser=Parser(), settings_overrides={
        "myst_enable_extensions": ["dollarmath", "amsmath", "colon_fence",
                                   "deflist"],
        "doctitle_xform": False, "auto_id_prefix": "id", "report_level": 5,
        "halt_level": 5, "warning_stream": False})
    return [section["ids"][0] if section["ids"] else ""
            for section in doctree.findall(nodes.section)]


def _english_headings(root: Path, doc: str) -> str:
    """The markdown of a source document, its notebook's markdown cells
    joined (code cells make no sections)."""
    if doc.endswith(".ipynb"):
        nb = nbformat.read(root / doc, as_version=4)
        return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return (root / doc).read_text(encoding="utf-8")


MARKER = ".posenc-zh-src"
COPIED = ("_assets", "_ext")


def build_zh(out: Path | str, root: Path = ROOT, *, allow_missing: bool = False,
             clear_outputs: bool = True) -> list[str]:
    """Write the Chinese source tree of the book into ``out`` (replacing a
    previous one); return the untranslated units (empty unless
    ``allow_missing``, else MissingTranslations is raised and nothing is
    written). The notebooks' outputs are cleared (the build executes them)
    unless ``clear_outputs`` is false (the tests' build without execution)."""
    root, out = Path(root).resolve(), Path(out).resolve()
    if root.is_relative_to(out):
        raise ValueError(f"out: a folder outside the sources, got {out}")
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise ValueError(f"out: {out} is not empty and not a build-zh tree")
    missing: list[str] = []
    files: dict[str, str] = {}
    for doc in _toc_files(root):
        po = po_path_of(doc, root)
        if not po.exists():
            raise ValueError(f"{po.relative_to(root)} is missing: run "
                             "`python tools/i18n.py update`")
        if doc.endswith(".ipynb"):
            nb = nbformat.read(root / doc, as_version=4)
            zh = translate_notebook(nb, po, clear_outputs=clear_outputs, where=doc,
                                    missing=missing,
                                    translate_outputs=not clear_outputs)
            files[doc] = nbformat.writes(zh) + "\n"
        else:
            text = (root / doc).read_text(encoding="utf-8")
            files[doc] = translate_text(text, load_catalog(po), missing, doc)
    if (root / "references.bib").is_file():
        files["references.bib"] = translated_bib(
            root, load_catalog(po_path_of(REFERENCES_DOC, root)), missing)
    book = load_catalog(root / LOCALE_DIR / BOOK_PO)
    files["_config.yml"] = _translated_config(root, book, missing)
    files["_toc.yml"] = _translated_toc(root, book, missing)
    if missing and not allow_missing:
        raise MissingTranslations(missing)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by tools/i18n.py build-zh\n")
    # Jupyter runs a notebook's kernel in its folder: posenc_plots reads
    # the figures' language there when POSENC_LANG is unset.
    (out / "chapters").mkdir()
    (out / "chapters" / ".posenc-lang").write_text("zh_CN\n")
    for name in COPIED:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, out / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, out / name)
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    anchors = {Path(doc).with_suffix("").as_posix():
               heading_ids(_english_headings(root, doc)) for doc in _toc_files(root)}
    (out / ANCHORS).write_text(json.dumps(anchors, indent=1, ensure_ascii=False)
                               + "\n", encoding="utf-8")
    for rel in _downloads(root, files):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, out / rel)
    return missing


_DOWNLOAD = re.compile(r"\{download\}`(?:[^`<]*<([^`>]+)>|([^`<]+))`")


def _downloads(root: Path, files: dict[str, str]) -> list[str]:
    """Files of the repository that {download} roles of the sources link to."""
    found = set()
    for doc, text in files.items():
        for m in _DOWNLOAD.finditer(text):
            target = (m.group(1) or m.group(2)).strip()
            path = (root / doc).parent / target if not target.startswith("/") \
                else root / target.lstrip("/")
            path = path.resolve()
            if path.is_file() and path.is_relative_to(root):
                found.add(path.relative_to(root).as_posix())
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("update", help="write/merge the PO files")
    up.add_argument("docs", nargs="*", help="only these sources (e.g. "
                    "chapters/06_rope.ipynb, _book); default: all")
    sub.add_parser("stats", help="translated/fuzzy/untranslated per PO file")
    sub.add_parser("check", help="markup a translation broke (roles, math, ...)")
    zh = sub.add_parser("build-zh", help="write the Chinese source tree")
    zh.add_argument("out")
    zh.add_argument("--allow-missing", action="store_true",
                    help="keep English where a translation is missing "
                    "(development only)")
    one = sub.add_parser("notebook", help="translate one notebook")
    one.add_argument("src", help="a chapter or assignments/source notebook")
    one.add_argument("out")
    one.add_argument("--allow-missing", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.command == "update":
            update(only=args.docs)
        elif args.command == "stats":
            stats()
        elif args.command == "check":
            if check():
                return 1
        elif args.command == "build-zh":
            missing = build_zh(args.out, allow_missing=args.allow_missing)
            if missing:
                print(f"warning: {len(missing)} units left in English "
                      "(--allow-missing)", file=sys.stderr)
            print(f"the Chinese source tree is in {args.out}")
        elif args.command == "notebook":
            src = Path(args.src).resolve()
            nb = nbformat.read(src, as_version=4)
            zh = translate_notebook(nb, po_path_of(src), where=args.src,
                                    allow_missing=args.allow_missing)
            nbformat.write(zh, args.out)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
