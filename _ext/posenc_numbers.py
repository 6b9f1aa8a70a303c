"""Chapter numbers as the prose says them: 1, 2, ..., 5, 5b, 6, 7, 8.

The parts of ``_toc.yml`` that hold chapters are ``numbered: true``, so
Sphinx numbers their pages, sections, figures and equations. But Sphinx
numbers every part afresh from 1 (each part is a toctree of its own), and
it knows no "5b". The prose cites chapters by their file names
(``chapters/05b_t5_alibi`` is "chapter 5b"), so this extension renumbers
after Sphinx: a chapter's number is its file name's leading number with
its letter (``01_why_order`` -> ``1``, ``05b_t5_alibi`` -> ``5b``); its
sections become 5b.1, 5b.2, ...; its figures, tables and equations are
numbered per chapter, 5b.1, 5b.2, ... in the order of the page (Sphinx's
counters would run on across two chapters that both were "1" of their
part). Pages outside ``chapters/`` keep no number.

An equation reference written in parentheses, ``({eq}`eq-x`)``, prints
its number once, "(6.12)", not "((6.12))" (``single_parentheses``).

Sphinx joins numbers with ``'.'.join(map(str, ...))`` everywhere (the
navigation, headings, ``{numref}``, ``{eq}`` and equation labels), so a
string "5b" in the tuples is printed as it is.
"""

import re

from docutils import nodes
from sphinx import addnodes

CHAPTER = re.compile(r"^chapters/0*(\d+)([a-z]?)_")


def chapter_number(docname):
    """``"chapters/05b_t5_alibi"`` -> ``"5b"``; None outside chapters/."""
    match = CHAPTER.match(docname)
    return match and match.group(1) + match.group(2)


def _renumber(number, chapter):
    return (chapter, *tuple(number)[1:]) if number else number


def renumber(app, env):
    """env-get-updated, after Sphinx's toctree collector numbered."""
    changed = []
    for docname, secnums in env.toc_secnumbers.items():
        chapter = chapter_number(docname)
        if chapter is None:
            continue
        for anchor, number in list(secnums.items()):
            secnums[anchor] = _renumber(number, chapter)
        # the numbers drawn in the navigation and in prev/next links
        for ref in env.tocs[docname].findall(addnodes.compact_paragraph):
            for child in ref.children:
                if child.get("secnumber"):
                    child["secnumber"] = list(
                        _renumber(child["secnumber"], chapter))
        title = env.titles.get(docname)
        if title is not None and title.get("secnumber"):
            title["secnumber"] = list(_renumber(title["secnumber"], chapter))
        changed.append(docname)
    for docname, kinds in env.toc_fignumbers.items():
        chapter = chapter_number(docname)
        if chapter is None:
            continue
        for numbers in kinds.values():
            in_order = sorted(numbers, key=lambda key: tuple(
                int(n) if str(n).isdigit() else 0 for n in numbers[key]))
            for k, key in enumerate(in_order, start=1):
                numbers[key] = (chapter, k)
        if docname not in changed:
            changed.append(docname)
    return changed


#: an equation reference as Sphinx prints it, "(6.12)"
EQREF = re.compile(r"^\((.+)\)$")


def single_parentheses(app, doctree, docname):
    """doctree-resolved: ``({eq}`eq-ch06-bound`)`` in the prose printed
    "((6.12))"; an equation reference right after an opening parenthesis
    (either edition's, "(" or "（") loses its own: "(6.12)", "（6.12）"."""
    for ref in list(doctree.findall(nodes.reference)):
        target = ref.get("refuri", "") or "#" + ref.get("refid", "")
        match = EQREF.match(ref.astext())
        if "#equation-" not in target or not match or not ref.parent:
            continue
        index = ref.parent.index(ref)
        before = ref.parent[index - 1] if index else None
        if isinstance(before, nodes.Text) and before.rstrip().endswith(
                ("(", "\uff08")):
            ref.children = [nodes.Text(match.group(1))]


def setup(app):
    # after sphinx.environment.collectors.toctree (priority 500)
    app.connect("env-get-updated", renumber, priority=900)
    app.connect("doctree-resolved", single_parentheses)
    return {"parallel_read_safe": True, "parallel_write_safe": True,
            "version": "1"}
