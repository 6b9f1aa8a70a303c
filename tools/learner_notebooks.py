"""The book's notebooks as a learner opens them in JupyterLab (issue 25).

The chapters in ``chapters/`` are MyST for Jupyter Book: their citations
(``{cite:p}``, ``{cite:t}``), references (``{numref}``, ``{eq}``,
``{ref}``, ``{doc}``, ``[](06_rope.ipynb)``) and figure captions (a code
cell's ``mystnb`` metadata) are resolved by Sphinx against the whole book.
jupyterlab-myst renders one notebook at a time and knows neither
``references.bib`` nor the other chapters, so in JupyterLab a citation
showed its bare key and a reference to another chapter "Cross Reference
Not Found". This tool writes a copy of the book for JupyterLab in which
every one of them is written out as the HTML book shows it:

* citations as the HTML prints them, from ``references.bib`` through the
  book's own sphinxcontrib-bibtex style (``_ext/posenc_bibliography.py``,
  the one ``_config.yml`` selects, so "Vaswani et al. (2017)" and
  "(Vaswani 等人，2017)" in the Chinese edition), each linking to its entry
  in ``references.ipynb``;
* numbers as the HTML gives them (``_ext/posenc_numbers.py``: chapter
  numbers from the file names, figures, equations and exercises numbered
  per chapter in the order of the page): "Fig. 6.1", "(6.3)", "Exercise
  4.3", with Sphinx's own words for them in the edition's language
  ("图 6.1", "练习 4.3");
* references to a section by its title, to an exercise by its number, to
  a chapter or page by its title (``[](06_rope.ipynb)``, ``{doc}``): links
  that open that notebook, the label as the link's fragment;
* each figure's caption, numbered, in a markdown cell under its figure;
  each equation and exercise numbered as in the HTML (a front matter
  ``numbering: enumerator: "6.%s"`` in the first cell, which jupyterlab-myst
  reads, and which this copy may have since MyST-NB never reads it);
* exercises and solutions titled as the HTML titles them ("Exercise 6.1
  (Title)", "Solution to Exercise 6.1 (Title)"; "练习 6.1 (…)", "解答 练习
  6.1 (…)" in the Chinese edition), a solution as a closed dropdown
  (:func:`exercise_boxes`; jupyterlab-myst's own exercise boxes say
  "Exercise" in either language and "Start of Solution to");
* the pages of ``_toc.yml`` that are Markdown (notation, glossary,
  references, ...) as notebooks of their own, the bibliography written out.

The code cells, their outputs and metadata are copied as they are (so the
sliders work as in ``chapters/``, and solutions stay folded:
``tools/fold_solutions.py``). The set of chapters and pages comes from
``_toc.yml``: a new chapter needs no change here.

    python tools/learner_notebooks.py _build/learn/en
    python tools/learner_notebooks.py _build/learn/zh --source _build/zh_src

(``scripts/book.sh`` runs both; ``--source`` is a book tree such as the
one ``tools/i18n.py build-zh`` writes.) Then ``jupyter lab _build/learn/en``.
"""

from __future__ import annotations

import argparse
import copy
import gettext
import importlib.util
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fold_solutions  # noqa: E402

#: what ``--source`` must hold, to tell a book tree from another folder
MARKER = ".posenc-learner"

ROLE = re.compile(r"\{(cite(?::[pt])?|numref|eq|ref|doc)\}`([^`]+)`")
TARGET = re.compile(r"^\(([^()\s]+)\)=[ \t]*$", re.M)
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
#: a display equation (also indented, in a list item) and its label
DISPLAY_MATH = re.compile(
    r"^([ \t]*)\$\$(.*?)^([ \t]*)\$\$[ \t]*(?:\(([^)\s]+)\))?[ \t]*$",
    re.S | re.M)
FENCE = re.compile(r"^(`{3,}|:{3,})\{([a-z-]+)\}[^\n]*\n(.*?)^\1[ \t]*$",
                   re.S | re.M)
OPTION_LABEL = re.compile(r"^:label:[ \t]*(\S+)", re.M)
OPTION_NAME = re.compile(r"^:name:[ \t]*(\S+)", re.M)


def _directive_caption(m) -> str:
    """A figure's caption or a table's title: the directive's argument for
    a table, the body's last paragraph after the options for a figure."""
    if m.group(2) != "figure":
        return m.group(0).split("\n", 1)[0].split("}", 1)[1].strip()
    body = re.sub(r"^:[a-z-]+:.*\n", "", m.group(3), flags=re.M).strip()
    return body.split("\n\n")[0].strip()
EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)


@dataclass
class Target:
    doc: str            # "chapters/06_rope"
    kind: str           # "section", "figure", "equation", "exercise"
    number: str | None  # "6.1", or None
    title: str          # a section's or exercise's title, a caption
    anchor: str         # the id in the learner notebook


def load_ext(source: Path, name: str):
    """A module of the book's ``_ext/`` (the code Sphinx runs)."""
    path = source / "_ext" / f"{name}.py"
    if not path.is_file():
        path = ROOT / "_ext" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_learner_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def toc_docs(source: Path) -> list[str]:
    """The book's pages in the order of ``_toc.yml``, as docnames with
    their file's suffix (``chapters/06_rope.ipynb``)."""
    toc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            for key, value in node.items():
                if key != "file":
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    docs = []
    for name in names:
        for ext in (".ipynb", ".md"):
            if (source / (name + ext)).is_file():
                docs.append(name + ext)
                break
        else:
            raise ValueError(f"_toc.yml: no .ipynb or .md file for {name!r}")
    return docs


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def doc_cells(source: Path, doc: str):
    """``(notebook or None, list of (cell index or None, markdown text))``."""
    path = source / doc
    if doc.endswith(".ipynb"):
        nb = nbformat.read(path, as_version=4)
        return nb, [(i, _source(c)) for i, c in enumerate(nb.cells)]
    return None, [(None, path.read_text(encoding="utf-8"))]


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            return text[end + 4:].lstrip("\n")
    return text


class Book:
    """The book-wide index of numbers, titles and citations."""

    def __init__(self, source: Path):
        self.source = Path(source).resolve()
        config = yaml.safe_load(
            (self.source / "_config.yml").read_text(encoding="utf-8"))
        sphinx = (config.get("sphinx") or {}).get("config") or {}
        self.language = sphinx.get("language") or "en"
        self.numbers = load_ext(self.source, "posenc_numbers")
        self.docs = toc_docs(self.source)
        self.words = self._words()
        self.titles: dict[str, str] = {}
        self.targets: dict[str, Target] = {}
        self.figures: dict[str, list[tuple[int, str, str]]] = {}
        self.exercises: dict[str, list[str]] = {}
        for doc in self.docs:
            self._index(doc)
        self._citations(sphinx.get("bibtex_reference_style",
                                   "author_year_round"))

    # -- the words Sphinx uses ------------------------------------------
    def _words(self) -> dict[str, str]:
        """numfig's words ("Fig. %s") and sphinx-exercise's ("Exercise"),
        translated by the catalogues Sphinx itself uses."""
        import sphinx
        import sphinx_exercise

        langs = [self.language] if self.language != "en" else []

        def catalog(domain, folder):
            return gettext.translation(domain, folder, langs, fallback=True)

        core = catalog("sphinx", os.path.join(os.path.dirname(sphinx.__file__),
                                              "locale"))
        exercise = catalog("exercise", os.path.join(
            os.path.dirname(sphinx_exercise.__file__), "translations",
            "locales"))
        return {"figure": core.gettext("Fig. %s"),
                "table": core.gettext("Table %s"),
                "section": core.gettext("Section %s"),
                "exercise": exercise.gettext("Exercise") + " %s",
                "solution": exercise.gettext("Solution to")}

    # -- one page's labels, in the order of the page ---------------------
    def _index(self, doc: str):
        docname = doc.rsplit(".", 1)[0]
        chapter = self.numbers.chapter_number(docname)
        nb, cells = doc_cells(self.source, doc)
        counters = {"section": 0, "figure": 0, "table": 0, "equation": 0,
                    "exercise": 0}
        self.figures[doc] = []
        self.exercises[doc] = []

        def number(kind):
            counters[kind] += 1
            return f"{chapter}.{counters[kind]}" if chapter else None

        for index, text in cells:
            cell = nb.cells[index] if nb is not None else None
            if cell is not None and cell.cell_type == "code":
                figure = (cell.metadata.get("mystnb") or {}).get("figure")
                if figure and figure.get("caption"):
                    num = number("figure")
                    name = figure.get("name") or f"figure-{index}"
                    self.figures[doc].append((index, name, num))
                    self.targets[name] = Target(docname, "figure", num,
                                                figure["caption"], name)
                continue
            if cell is not None and cell.cell_type != "markdown":
                continue
            text = _strip_front_matter(text)
            self._index_markdown(docname, text, number)

    def _index_markdown(self, docname, text, number):
        # walk the text's items in order: headings, equations, exercises
        events = []
        for m in DISPLAY_MATH.finditer(text):
            if m.group(4):
                events.append((m.start(), "equation", m.group(4), ""))
        for m in FENCE.finditer(text):
            name = OPTION_NAME.search(m.group(3))
            label = OPTION_LABEL.search(m.group(3))
            if m.group(2) == "math" and label:
                events.append((m.start(), "equation", label.group(1), ""))
            elif m.group(2) in ("figure", "table", "list-table") and name:
                kind = "figure" if m.group(2) == "figure" else "table"
                events.append((m.start(), kind, name.group(1),
                               _directive_caption(m)))
            if m.group(2) == "exercise":
                label = OPTION_LABEL.search(m.group(3))
                nonumber = ":nonumber:" in m.group(3)
                title = m.group(0).split("\n", 1)[0].split("}", 1)[1].strip()
                events.append((m.start(), "exercise",
                               label.group(1) if label else None,
                               "nonumber" if nonumber else title))
        lines = text.split("\n")
        pos = 0
        pending = None
        for line in lines:
            target = TARGET.match(line)
            heading = HEADING.match(line)
            if target:
                pending = target.group(1)
            elif heading:
                events.append((pos, "heading", pending,
                               (len(heading.group(1)), heading.group(2))))
                pending = None
            elif line.strip():
                pending = None
            pos += len(line) + 1
        # headings inside fenced blocks are not sections
        fences = [(m.start(), m.end()) for m in FENCE.finditer(text)]
        for pos, kind, label, extra in sorted(events, key=lambda e: e[0]):
            if kind == "heading":
                if any(a < pos < b for a, b in fences):
                    continue
                level, title = extra
                if level == 1 and docname not in self.titles:
                    self.titles[docname] = title
                if label:
                    self.targets[label] = Target(docname, "section", None,
                                                 title, label)
            elif kind == "equation":
                self.targets[label] = Target(docname, "equation",
                                             number("equation"), "", label)
            elif kind in ("figure", "table"):
                self.targets[label] = Target(docname, kind, number(kind),
                                             extra, label)
            elif kind == "exercise":
                if extra == "nonumber":
                    continue
                num = number("exercise")
                self.exercises.setdefault(docname, []).append(num)
                if label:
                    self.targets[label] = Target(docname, "exercise", num,
                                                 extra, label)

    # -- citations ------------------------------------------------------
    def _citations(self, style_name: str):
        import pybtex.database
        import pybtex.plugin
        from sphinxcontrib.bibtex.plugin import find_plugin

        load_ext(self.source, "posenc_bibliography").register()
        self.cite_style = find_plugin(
            "sphinxcontrib.bibtex.style.referencing", style_name)()
        bib = self.source / "references.bib"
        self.bib = pybtex.database.parse_file(str(bib), "bibtex")
        entry_style = pybtex.plugin.find_plugin(
            "pybtex.style.formatting", "posenc")()
        self.entries = list(entry_style.format_entries(
            self.bib.entries.values()))
        self.formatted = {e.key: e for e in self.entries}
        # one backend each (find_plugin scans the entry points every time)
        self.plain = pybtex.plugin.find_plugin("pybtex.backends", "text")()
        self.md = pybtex.plugin.find_plugin("pybtex.backends", "markdown")()

    def cite(self, role: str, keys: str, from_doc: str) -> str:
        """A citation role written out as the HTML book prints it, in
        Markdown, each work linking to its entry in references.ipynb."""
        from sphinxcontrib.bibtex.citation_target import parse_citation_targets
        from sphinxcontrib.bibtex.style.referencing import format_references
        from sphinxcontrib.bibtex.style.template import SphinxReferenceInfo

        refs = []
        for target in parse_citation_targets(keys):
            if target.key not in self.bib.entries:
                raise ValueError(f"{from_doc}: no entry {target.key!r} in "
                                 "references.bib")
            info = SphinxReferenceInfo(
                builder=None, fromdocname=from_doc, todocname="references",
                citation_id=target.key, title=None, pre_text=target.pre,
                post_text=target.post)
            refs.append((self.bib.entries[target.key],
                         self.formatted[target.key], info))
        role = {"cite": "p"}.get(role, role.split(":")[-1])
        text = format_references(self.cite_style, role, refs)
        return self._markdown(text, from_doc)

    def _markdown(self, text, from_doc) -> str:
        from pybtex.richtext import BaseMultipartText
        from sphinxcontrib.bibtex.style.template import SphinxReferenceText

        if isinstance(text, SphinxReferenceText):
            inner = "".join(self._markdown(p, from_doc) for p in text.parts)
            href = self.href(from_doc, "references", text.info[0].citation_id)
            return f"[{inner}]({href})"
        if isinstance(text, BaseMultipartText):
            return "".join(self._markdown(p, from_doc) for p in text.parts)
        return text.render(self.plain)

    # -- links ----------------------------------------------------------
    def href(self, from_doc: str, to_doc: str, anchor: str | None) -> str:
        """A link from one learner notebook to another (or itself)."""
        fragment = f"#{anchor}" if anchor else ""
        if to_doc == from_doc and anchor:
            return fragment
        rel = os.path.relpath(to_doc + ".ipynb",
                              os.path.dirname(from_doc) or ".")
        return Path(rel).as_posix() + fragment

    def doc_of_link(self, from_doc: str, target: str) -> str | None:
        """The docname a relative link of ``from_doc`` points to."""
        path = os.path.normpath(os.path.join(os.path.dirname(from_doc),
                                             target))
        stem = Path(path).with_suffix("").as_posix() \
            if Path(path).suffix in (".ipynb", ".md") else Path(path).as_posix()
        return stem if stem in self.titles else None

    def resolve(self, role: str, arg: str, from_doc: str) -> str:
        if role.startswith("cite"):
            return self.cite(role, arg, from_doc)
        explicit = EXPLICIT.match(arg)
        text, label = (explicit.group(1), explicit.group(2)) if explicit \
            else (None, arg.strip())
        if role == "doc":
            doc = self.doc_of_link(from_doc, label) or label.lstrip("/")
            if doc not in self.titles:
                raise ValueError(f"{from_doc}: {{doc}} to an unknown page "
                                 f"{label!r}")
            return f"[{text or self.titles[doc]}]({self.href(from_doc, doc, None)})"
        target = self.targets.get(label)
        if target is None:
            raise ValueError(f"{from_doc}: {{{role}}} to an unknown label "
                             f"{label!r}")
        href = self.href(from_doc, target.doc, target.anchor)
        if role == "eq":
            return f"[({target.number})]({href})"
        if role == "numref":
            template = text or self.words[target.kind]
            return f"[{template.replace('%s', str(target.number))}]({href})"
        # {ref}: a section by its title, a figure by its caption, an
        # exercise by its number (sphinx-exercise's numfig format)
        if text is None:
            if target.kind == "exercise":
                text = self.words["exercise"] % target.number
            else:
                text = target.title
        return f"[{text}]({href})"


#: a role, a link (its text without code), or code to keep as it is: a
#: code span (over a line break, not over a blank line) or the backticks
#: that open a directive's fence
_INLINE = r"(?:[^`\n]|\n(?![ \t]*\n))"
TOKEN = re.compile(ROLE.pattern
                   + r"|\[((?:[^\]\[`\n]|\n(?![ \t]*\n))*)\]\(([^)\s]+)\)"
                   + r"|(^[ \t]*`{3,}"
                   + rf"|(?<!`)``(?!`){_INLINE}+?(?<!`)``(?!`)"
                   + rf"|(?<!`)`(?!`){_INLINE}+?`)", re.M)
FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,}|:{3,})(.*)$")


def code_blocks(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into ``(is_code, part)``: code fences (not directives,
    whose fences hold MyST) are code, the rest is MyST."""
    parts, current, fence = [], [], None
    for line in text.splitlines(keepends=True):
        m = FENCE_LINE.match(line.rstrip("\n"))
        if fence is None:
            if m and not m.group(2).strip().startswith("{") \
                    and m.group(1)[0] != ":" and m.group(2).strip():
                parts.append((False, "".join(current)))
                current, fence = [line], m.group(1)
                continue
            current.append(line)
        else:
            current.append(line)
            if m and m.group(1).startswith(fence) and not m.group(2).strip():
                parts.append((True, "".join(current)))
                current, fence = [], None
    parts.append((fence is not None, "".join(current)))
    return parts


def resolve_markdown(book: Book, text: str, docname: str,
                     record: list | None = None) -> str:
    """Every citation, reference and empty link of ``text`` written out
    (code spans and code blocks left as they are). ``record``, if given,
    gets ``(kind, markdown)`` for each role ("cite" or "ref") and each link
    to a page of the book ("ref"), in the order of the text."""
    def token(m):
        role, arg, text, target, code = m.groups()
        if code is not None:
            return code
        if role is not None:
            out = book.resolve(role, arg, docname)
            kind = "cite" if role.startswith("cite") else "ref"
            if role == "eq" and m.string[:m.start()].rstrip().endswith(
                    ("(", "\uff08")):
                # "({eq}`x`)" prints "(6.12)", not "((6.12))", as
                # _ext/posenc_numbers.single_parentheses does in the HTML
                out = re.sub(r"^\[\((.+)\)\]", r"[\1]", out)
        else:
            out = link(text, target)
            if out is None:
                return m.group(0)
            kind = "ref"
        if record is not None:
            record.append((kind, out))
        return out

    def link(text, target):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return None
        path, _, fragment = target.partition("#")
        doc = book.doc_of_link(docname, path)
        if doc is None:
            return None
        return (f"[{text or book.titles[doc]}]"
                f"({book.href(docname, doc, fragment or None)})")

    return "".join(part if code else TOKEN.sub(token, part)
                   for code, part in code_blocks(text))


def number_equations(book: Book, text: str) -> str:
    """Each labelled display equation tagged with the HTML's number."""
    def tag(m):
        indent, body, closing, label = m.groups()
        if not label:
            return m.group(0)
        number = book.targets[label].number
        return (f"{indent}$${body.rstrip()}\n{closing}\\tag{{{number}}}\n"
                f"{closing}$$ ({label})")

    def directive(m):
        label = OPTION_LABEL.search(m.group(3))
        if m.group(2) != "math" or not label:
            return m.group(0)
        number = book.targets[label.group(1)].number
        body = m.group(3).rstrip("\n")
        head = m.group(0)[:m.start(3) - m.start(0)]
        return f"{head}{body}\n\\tag{{{number}}}\n{m.group(1)}"

    return FENCE.sub(directive, DISPLAY_MATH.sub(tag, text))


def bibliography_markdown(book: Book) -> str:
    """The References page's ``{bibliography}``: every entry, as the
    posenc style formats it, with an anchor its citations link to."""
    lines = []
    for entry in book.entries:
        text = entry.text.render(book.md)
        lines.append(f"({entry.key})=\n{text}\n")
    return "\n".join(lines)


def learner_notebook(book: Book, doc: str) -> nbformat.NotebookNode:
    docname = doc.rsplit(".", 1)[0]
    nb, cells = doc_cells(book.source, doc)
    if nb is None:
        text = cells[0][1]
        text = re.sub(r"^```\{bibliography\}.*?^```[ \t]*$",
                      lambda m: bibliography_markdown(book), text,
                      flags=re.S | re.M)
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell(text)]
        nb.cells[0].id = "page"
        nb.metadata = copy.deepcopy(book_metadata(book))
    out = copy.deepcopy(nb)
    captions = {index: (name, num) for index, name, num
                in book.figures.get(doc, [])}
    cells_out = []
    first_markdown = True
    chapter = book.numbers.chapter_number(docname)
    sections = [0]
    for index, cell in enumerate(out.cells):
        if cell.cell_type == "markdown":
            text = resolve_markdown(book, _source(cell), docname)
            if chapter:
                text = "".join(
                    part if code else number_headings(
                        number_equations(book, part), chapter, sections)
                    for code, part in code_blocks(text))
            if first_markdown and chapter:
                # exercises numbered "6.1" as in the HTML; equations by
                # number_equations (jupyterlab-myst would also number the
                # equations that have no label, which the HTML does not)
                text = (f"---\nnumbering:\n  enumerator: \"{chapter}.%s\"\n"
                        f"  equation: false\n---\n{text}")
            first_markdown = False
            cell.source = text
        cells_out.append(cell)
        if index in captions:
            name, num = captions[index]
            # a caption may cite and refer, as the prose does
            caption = resolve_markdown(book, book.targets[name].title,
                                       docname)
            word = book.words["figure"] % num
            note = nbformat.v4.new_markdown_cell(
                f"({name})=\n**{word}** {caption}",
                metadata={"posenc_caption": name})
            note.id = f"caption-{name}"[:64]
            cells_out.append(note)
    out.cells = cells_out
    fold_solutions.fold(out)
    for cell in out.cells:  # after folding, which reads the gates
        if cell.cell_type == "markdown":
            cell.source = exercise_boxes(book, cell.source, docname)
    return out


GATE_DIRECTIVE = re.compile(
    r"^(`{3,}|:{3,})\{solution-(start|end)\}[ \t]*(\S*)[^\n]*\n(.*?)"
    r"^\1[ \t]*$\n?", re.S | re.M)


def exercise_title(book: Book, title: str, number: str | None,
                   docname: str) -> str:
    """An exercise's title as the HTML prints it: "Exercise 6.1 (Title)",
    "练习 6.1 (…)" (sphinx-exercise's words, numfig's number)."""
    word = (book.words["exercise"] % number if number
            else book.words["exercise"].replace(" %s", ""))
    title = resolve_markdown(book, title, docname) if title else ""
    return f"{word} ({title})" if title else word


def _colons(text: str) -> str:
    """A colon fence longer than every colon fence inside ``text``."""
    runs = [len(m.group(1)) for m in re.finditer(r"^[ \t]*(:{3,})", text,
                                                  re.M)]
    return ":" * max([3] + [n + 1 for n in runs])


def exercise_boxes(book: Book, text: str, docname: str) -> str:
    """sphinx-exercise's directives as boxes titled as the HTML titles them.

    jupyterlab-myst renders ``{exercise}`` with its own English word
    ("Exercise 6.1" in the Chinese edition too) and a solution's
    ``{solution-start}`` as "Start of Solution to Exercise 6.1". Here an
    exercise becomes an admonition (class ``exercise``) whose title is
    the HTML's, "Exercise 6.1 (Title)" / "练习 6.1 (…)", inside a ``{div}``
    carrying its label (the anchor its references link to); a solution
    becomes a closed dropdown admonition (classes ``dropdown solution``)
    titled "Solution to Exercise 6.1 (Title)" / "解答 练习 6.1 (…)", the
    exercise's title linking to it as in the HTML, holding the rest of the
    solution's cell (the cells after it are folded: fold_solutions).
    ``{solution-end}`` is dropped.
    """
    def exercise(m):
        if m.group(2) != "exercise":
            return m.group(0)
        head = m.group(0).split("\n", 1)[0]
        title = head.split("}", 1)[1].strip()
        body = m.group(3)
        label = OPTION_LABEL.search(body)
        nonumber = re.search(r"^:nonumber:", body, re.M)
        body = re.sub(r"^:[a-z-]+:.*\n", "", body, flags=re.M).strip("\n")
        if label is None and not nonumber:
            # its number is its place among the page's exercises, which
            # the index keeps by label only (none in the book yet)
            raise ValueError(f"{docname}: an exercise without a :label: "
                             f"({head!r}); give it one")
        number = None if nonumber else book.targets[label.group(1)].number
        fence = _colons(body)
        box = (f"{fence}{{admonition}} "
               f"{exercise_title(book, title, number, docname)}\n"
               f":class: exercise\n\n{body}\n{fence}")
        if label is None:
            return box
        return (f"{fence}:{{div}}\n:label: {label.group(1)}\n{box}\n"
                f"{fence}:")

    def solution(label, content):
        target = book.targets.get(label)
        if target is None or target.kind != "exercise":
            raise ValueError(f"{docname}: a solution to an unknown exercise "
                             f"{label!r}")
        title = exercise_title(book, target.title, target.number,
                               docname)
        href = book.href(docname, target.doc, target.anchor)
        # the solution's cells follow, folded; an admonition with no body
        # would take its title for its body (mystmd), so a MyST comment
        content = content.strip("\n") or "% the solution: the cells below"
        fence = _colons(content)
        return (f"{fence}{{admonition}} {book.words['solution']} "
                f"[{title}]({href})\n:class: dropdown solution\n\n"
                f"{content}\n{fence}\n")

    text = FENCE.sub(exercise, text)
    out, at = [], 0
    gates = list(GATE_DIRECTIVE.finditer(text))
    k = 0
    while k < len(gates):
        gate = gates[k]
        out.append(text[at:gate.start()])
        if gate.group(2) == "end":      # a solution opened in an earlier cell
            at = gate.end()
            k += 1
            continue
        end = next((g for g in gates[k + 1:] if g.group(2) == "end"), None)
        stop = end.start() if end is not None else len(text)
        out.append(solution(gate.group(3), text[gate.end():stop]))
        at = end.end() if end is not None else len(text)
        k = gates.index(end) + 1 if end is not None else len(gates)
    out.append(text[at:])
    return "".join(out)


def number_headings(text: str, chapter: str, sections: list[int]) -> str:
    """The chapter's title and its sections numbered as the HTML numbers
    them (``_toc.yml``'s ``numbered: 2``): "6. Rotary ...", "6.1. What
    ..."; ``sections`` counts the sections of the notebook so far."""
    def heading(m):
        if len(m.group(1)) == 1:
            return f"# {chapter}. {m.group(2)}"
        sections[0] += 1
        return f"## {chapter}.{sections[0]}. {m.group(2)}"

    # not inside a directive (an exercise's or a figure's body)
    parts = re.split(r"(^(`{3,}|:{3,})\{.*?^\2[ \t]*$)", text, flags=re.S | re.M)
    out = []
    for i in range(0, len(parts), 3):
        out.append(re.sub(r"^(#{1,2})[ \t]+(.+?)[ \t]*$", heading, parts[i],
                          flags=re.M))
        if i + 1 < len(parts):
            out.append(parts[i + 1])
    return "".join(out)


def book_metadata(book: Book):
    """The kernel metadata of the book's notebooks (so that a page opened
    in JupyterLab is not modified by it)."""
    for doc in book.docs:
        if doc.endswith(".ipynb"):
            nb = nbformat.read(book.source / doc, as_version=4)
            return {k: v for k, v in nb.metadata.items()
                    if k in ("kernelspec", "language_info")}
    return {}


def write_learner_book(out: Path | str, source: Path | str = ROOT) -> list[Path]:
    """Write the learner notebooks of the book in ``source`` into ``out``
    (replacing what an earlier run wrote there); return their paths."""
    source, out = Path(source).resolve(), Path(out).resolve()
    if source == out or source.is_relative_to(out):
        raise ValueError(f"out: a folder outside the sources, got {out}")
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise ValueError(f"out: {out} is not empty and not written by "
                         "tools/learner_notebooks.py")
    book = Book(source)
    written = []
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by tools/learner_notebooks.py\n")
    for doc in book.docs:
        nb = learner_notebook(book, doc)
        path = out / (doc.rsplit(".", 1)[0] + ".ipynb")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        written.append(path)
    # posenc_plots reads the figures' language from the kernel's folder
    for folder in {p.parent for p in written}:
        lang = source / folder.relative_to(out) / ".posenc-lang"
        if lang.is_file():
            (folder / ".posenc-lang").write_text(lang.read_text())
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write")
    parser.add_argument("--source", type=Path, default=ROOT,
                        help="the book's sources (default: this repository; "
                        "the Chinese edition: tools/i18n.py build-zh's tree)")
    args = parser.parse_args(argv)
    try:
        written = write_learner_book(args.out, args.source)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{len(written)} notebooks in {args.out}: "
          f"jupyter lab {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
