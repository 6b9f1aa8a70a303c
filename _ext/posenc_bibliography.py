r"""The book's citation and bibliography styles, for sphinxcontrib-bibtex.

A Sphinx extension, registered in ``_config.yml`` under
``sphinx.local_extensions``; ``_config.yml`` selects its two styles with
``bibtex_reference_style: author_year_round`` and
``bibtex_default_style: posenc``.

* **Citations** (``author_year_round``): sphinxcontrib-bibtex's
  author-year style with round brackets, upright "et al." and "; " between
  works: {cite:p}`vaswani2017attention` gives "(Vaswani et al., 2017)",
  {cite:t}`press2022train` gives "Press et al. (2022)". The Chinese
  edition's (``author_year_round_zh``): "（Vaswani 等人，2017）" and
  "Press 等人（2022）", full-width brackets, as Chinese text cites.
* **The References page** (``posenc``): pybtex's ``plain`` style, except
  that titles are printed as written in ``references.bib``. ``plain``
  lowercases every title but its first letter, which turns
  "Transformer中的Positional Encoding" into "Transformer中的positional
  encoding" and "RoPE" into "rope". Entries are sorted by author, year and
  title, with braces and case ignored, so that ``{bloc97}`` sorts under B.
  ``\texttt{name}`` (a function or file name in a note) prints as the name:
  pybtex knows no ``\texttt`` and would print it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pybtex.plugin
from pybtex.database import Entry
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.sorting.author_year_title import SortingStyle
from pybtex.style.template import field as bib_field
from pybtex.style.template import sentence

FORMATTING_STYLE = "posenc"
SORTING_STYLE = "posenc_author_year_title"
REFERENCE_STYLE = "author_year_round"
#: The Chinese edition's (``tools/i18n.py build-zh`` selects it):
#: "Press 等人（2022）", "（Vaswani 等人，2017；Su 等人，2021）".
REFERENCE_STYLE_ZH = "author_year_round_zh"

_TEXTTT = re.compile(r"\\texttt\{([^{}]*)\}")


class BookSortingStyle(SortingStyle):
    """Author, year, title; braces and case ignored."""

    def person_key(self, person):
        return super().person_key(person).replace("{", "").replace("}", "")

    def sorting_key(self, entry):
        return tuple(str(part).replace("{", "").replace("}", "").casefold()
                     for part in super().sorting_key(entry))


class BookStyle(PlainStyle):
    """pybtex's ``plain``, with titles as written in references.bib."""

    default_sorting_style = SORTING_STYLE

    def format_title(self, e, which_field, as_sentence=True):
        title = bib_field(which_field)
        return sentence[title] if as_sentence else title

    def format_entry(self, label, entry, bib_data=None):
        if any("\\texttt" in value for value in entry.fields.values()):
            plain = Entry(entry.type, persons=entry.persons, fields={
                name: _TEXTTT.sub(r"\1", value)
                for name, value in entry.fields.items()})
            plain.key = entry.key
            entry = plain
        return super().format_entry(label, entry, bib_data=bib_data)


def _round():
    from sphinxcontrib.bibtex.style.referencing import BracketStyle

    return BracketStyle(left="(", right=")", sep="; ", sep2="; ",
                        last_sep="; ")


def _names_node():
    """sphinxcontrib-bibtex's ``names`` template, with BibTeX's "and
    others" (a last author ``others``) read as "et al.": "Grattafiori et
    al., 2024", not "Grattafiori and others, 2024" ("Grattafiori 和 others"
    in the Chinese edition)."""
    from pybtex.richtext import Text
    from pybtex.style.template import FieldIsMissing, node
    from sphinxcontrib.bibtex.style.template import join

    @node
    def names(children, data, role, **kwargs):
        assert not children
        try:
            persons = data["entry"].persons[role]
        except KeyError:
            raise FieldIsMissing(role, data["entry"]) from None
        style = data["style"]
        formatted = [style.person.style_plugin.format(p, style.person.abbreviate)
                     for p in persons]
        if len(persons) > 1 and str(persons[-1]) == "others":
            first = join(**kwargs)[formatted[:-1]].format_data(data)
            other = kwargs.get("other")
            if len(formatted) == 2 and other is not None:
                return Text(first, other)
            if other is not None:  # three or more: join says et al. itself
                return first
        return join(**kwargs)[formatted].format_data(data)

    return names


def _book_person_style(**kwargs):
    """A PersonStyle whose names read "and others" as "et al."."""
    from dataclasses import dataclass

    from pybtex.style.template import field as bib_field_
    from pybtex.style.template import first_of, optional, tag
    from sphinxcontrib.bibtex.style.referencing import PersonStyle

    names = _names_node()

    @dataclass
    class BookPersonStyle(PersonStyle):
        def names(self, role, full):
            return names(role=role, sep=self.sep, sep2=self.sep2,
                         last_sep=self.last_sep,
                         other=None if full else self.other)

        def author_or_editor_or_title(self, full):
            options = dict(sep=self.sep, sep2=self.sep2,
                           last_sep=self.last_sep,
                           other=None if full else self.other)
            return first_of[
                optional[names("author", **options)],
                optional[names("editor", **options)],
                tag("em")[bib_field_("title")],
            ]

    return BookPersonStyle(**kwargs)


def _person():
    return _book_person_style(other=" et al.")


def _round_zh():
    from sphinxcontrib.bibtex.style.referencing import BracketStyle

    return BracketStyle(left="（", right="）", sep="；", sep2="；",
                        last_sep="；")


def _person_zh():
    return _book_person_style(other=" 等人", sep="、", sep2=" 和 ",
                              last_sep=" 和 ")


def reference_style_zh():
    """The Chinese edition's author-year style: full-width brackets,
    "等人", "，" between author and year and "；" between works, and no
    space before the bracket of a textual citation."""
    from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import (
        AuthorYearReferenceStyle,
    )

    @dataclass
    class ChineseAuthorYearReferenceStyle(AuthorYearReferenceStyle):
        bracket_parenthetical: BracketStyle = field(default_factory=_round_zh)
        bracket_textual: BracketStyle = field(default_factory=_round_zh)
        bracket_author: BracketStyle = field(default_factory=_round_zh)
        bracket_label: BracketStyle = field(default_factory=_round_zh)
        bracket_year: BracketStyle = field(default_factory=_round_zh)
        person: PersonStyle = field(default_factory=_person_zh)
        author_year_sep: str = "，"
        text_reference_sep: str = ""
        post_text_sep: str = "，"

    return ChineseAuthorYearReferenceStyle


def reference_style():
    """The author-year reference style with round brackets (a class)."""
    from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import (
        AuthorYearReferenceStyle,
    )

    @dataclass
    class RoundAuthorYearReferenceStyle(AuthorYearReferenceStyle):
        bracket_parenthetical: BracketStyle = field(default_factory=_round)
        bracket_textual: BracketStyle = field(default_factory=_round)
        bracket_author: BracketStyle = field(default_factory=_round)
        bracket_label: BracketStyle = field(default_factory=_round)
        bracket_year: BracketStyle = field(default_factory=_round)
        person: PersonStyle = field(default_factory=_person)

    return RoundAuthorYearReferenceStyle


def register():
    """Make the styles known to pybtex and sphinxcontrib-bibtex."""
    pybtex.plugin.register_plugin("pybtex.style.sorting", SORTING_STYLE,
                                  BookSortingStyle, force=True)
    pybtex.plugin.register_plugin("pybtex.style.formatting", FORMATTING_STYLE,
                                  BookStyle, force=True)
    import sphinxcontrib.bibtex.plugin

    sphinxcontrib.bibtex.plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing", REFERENCE_STYLE,
        reference_style(), force=True)
    sphinxcontrib.bibtex.plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing", REFERENCE_STYLE_ZH,
        reference_style_zh(), force=True)


def setup(app):
    register()
    return {"version": "1.0", "parallel_read_safe": True,
            "parallel_write_safe": True}
