"""Read the Chinese edition as a reader would: find the English left in it.

``english_in_html(html, page)`` lists the English sentences a reader of a
page of the Chinese edition sees (text and the attributes that are read:
``title``, ``alt``, ``aria-label``, ``placeholder``), and
``english_in_notebook(nb)`` those of a Chinese notebook (markdown cells,
figure captions and alt texts, printed outputs). Left out, as not a
sentence to translate: code (inputs, inline code, code blocks), the TeX of
formulas except the words of their ``\\text{...}``, the entries of the
bibliography and the citations' tooltips (authors and titles of English
works; the book's own notes on them are translated and checked by
``tests/test_zh_reader.py`` separately), the language switch's "English",
and the phrases of ``ALLOWED`` (names, and titles of English works).

An English sentence is a run of at least three Latin words (two letters or
more, separated by spaces and punctuation only) holding an English function
word ("the", "of", "to", ...), or a run of five such words; "et al." is
always one (the Chinese edition writes 等人).
"""

from __future__ import annotations

import html.parser
import re

#: English function words: a run of Latin words holding one is a sentence.
FUNCTION_WORDS = frozenset("""
a an the of to in on at by for from with without and or but not no is are was
were be been being it its this that these those there here which who what when
where how why as than then so if each every per one two more most less only also
can cannot could would should will may might must has have had do does did into
over under up down out off about above below between after before again same
other such all any some both very just we you they he she our your their his her
let see use used using shows show gives give get gets until while once
""".split())

#: Phrases of Latin words that are not English sentences: names of
#: things and people, titles of English works as the Chinese text quotes
#: them. Reviewed: keep it short; a phrase here is never translated.
ALLOWED = (
    # titles of English works, as the Chinese text names them
    "Alice’s Adventures in Wonderland",
    "Alice's Adventures in Wonderland",
    "Attention Is All You Need",
    "Train Short, Test Long",
    "Dive into Deep Learning",
    # names of methods and things
    "NTK-by-parts",
    "Hugging Face",
    # the message nbgrader shows (teaching.md quotes it as the teacher sees it)
    "Checksum has changed",
    # a prompt quoted as the model reads it (Kazemnejad et al.'s copy task)
    "Copy the following words",
    # the glossary's notes name the English terms they rule on
    "the slowest pair",
)

# An English quotation followed by its Chinese translation in brackets, or
# after a comma ("，即 ..."): “there isn't a very strong trend”（没有很明显的
# 趋势）. The book quotes its sources word for word; the reader reads the
# translation.
# The title of a work: in 《》, or quoted after the word for what it is
# (论文“Base of RoPE Bounds Context Length”).
_TITLE = re.compile(r"《[^《》]*》|(?:论文|文章|博文|帖子|报告|一书|一节|标题|题为)\s*"
                    r"[“\"][^“”\"]*[”\"]")
_QUOTED = re.compile(r"[“\"][^“”\"]*[”\"]\s*(?:（[^（）]*[\u4e00-\u9fff][^（）]*）"
                     r"|[，,]\s*(?=[\u4e00-\u9fff]))")

_LATIN_RUN = re.compile(
    r"[A-Za-z][A-Za-z'’.-]*(?:[\s,;:()/&'\"“”‘’-]+[A-Za-z][A-Za-z'’.-]*)*")
_WORD = re.compile(r"[A-Za-z]{2,}")
_TEXT_IN_MATH = re.compile(r"\\(?:text|textrm|textit|textbf|mbox)\s*\{([^{}]*)\}")
_MATH_ATTR = ("math",)


def english_sentences(text: str, allowed=ALLOWED) -> list[str]:
    """The English sentences of a text a reader reads (see the module)."""
    text = _QUOTED.sub(" ", text)
    text = _TITLE.sub(" ", text)
    for phrase in allowed:
        text = text.replace(phrase, " ")
    found = []
    if re.search(r"\bet al\.", text):
        found.append("et al.")
    for m in _LATIN_RUN.finditer(text):
        run = m.group(0)
        words = _WORD.findall(run)
        if len(words) >= 5 or (len(words) >= 3 and any(
                w in FUNCTION_WORDS for w in words)):
            found.append(run.strip())
    return found


def words_of_math(tex: str) -> str:
    """The words of a formula's ``\\text{...}`` parts (what a reader reads)."""
    return " / ".join(_TEXT_IN_MATH.findall(tex))


# Elements whose text is not read as prose.
_SKIP_TAGS = {"script", "style", "code", "kbd", "samp", "svg", "math",
              "noscript", "head"}
_SKIP_CLASSES = {"cell_input", "highlight-python", "highlight-ipython3",
                 "highlight-python3", "highlight-bash", "highlight-default",
                 "highlight-text", "highlight-none", "highlight-console",
                 "highlight-shell", "highlight-yaml", "highlight-json",
                 "highlight-javascript", "highlight-toml", "pre",
                 # the bibliography's entries (authors, titles, venues)
                 "citation", "citation-list", "bibliography",
                 # the language switch's label ("English")
                 "posenc-language-switch",
                 # MathJax's output, if a page was saved after typesetting
                 "MathJax", "MathJax_Display", "MathJax_Preview"}
_READ_ATTRS = ("title", "alt", "aria-label", "placeholder")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
         "meta", "param", "source", "track", "wbr"}


_BLOCKS = {"p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
           "figcaption", "pre", "dt", "dd", "section", "br", "table", "tr",
           "caption", "blockquote", "nav", "ul", "ol", "header", "footer",
           "main", "article", "aside", "form", "label", "button", "body",
           "title", "summary", "details"}


class _Reader(html.parser.HTMLParser):
    """The text a reader reads, paragraph by paragraph (block elements end
    a piece; inline markup does not), and the attributes read aloud."""

    def __init__(self, skip_first_column=False):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # tag, skip, math
        self.chunks: list[tuple[str, str]] = []  # (where, text)
        self.buffer: list[str] = []
        self.skip_first_column = skip_first_column
        self.column = 0

    @property
    def skipping(self):
        return any(s for _, s, _ in self.stack)

    @property
    def in_math(self):
        return any(m for _, _, m in self.stack)

    def flush(self):
        text = "".join(self.buffer)
        self.buffer.clear()
        if text.strip():
            where = next((t for t, _, _ in reversed(self.stack) if t in _BLOCKS), "?")
            self.chunks.append((where, text))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        href = attrs.get("href") or ""
        if tag == "tr":
            self.column = 0
        first_column = (self.skip_first_column and tag in ("td", "th")
                        and self.column == 0)
        if tag in ("td", "th"):
            self.column += 1
        skip = (tag in _SKIP_TAGS or bool(classes & _SKIP_CLASSES)
                or tag == "head" or first_column
                # a citation's link and its tooltip (the entry)
                or ("references.html#" in href and tag == "a"
                    and "reference" in classes))
        if tag in _BLOCKS or skip:
            self.flush()
        if skip and not self.skipping:
            self.buffer.append(" ¦ ")
        math = "math" in classes
        if not self.skipping and not skip:
            for name in _READ_ATTRS:
                value = attrs.get(name)
                if value:
                    self.chunks.append((f"<{tag} {name}>", value))
        if tag == "html" or tag in _VOID:
            return
        self.stack.append((tag, skip, math))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                if tag in _BLOCKS or self.stack[i][1]:
                    self.flush()
                del self.stack[i:]
                if not self.skipping:
                    self.buffer.append(" ¦ " if tag not in _BLOCKS else "")
                return

    def handle_data(self, data):
        if self.skipping or not data.strip():
            if not self.skipping:
                self.buffer.append(data)
            return
        if self.in_math:
            words = words_of_math(data)
            if words:
                self.chunks.append(("math", words))
            self.buffer.append(" ¦ ")
            return
        self.buffer.append(data)

    def close(self):
        super().close()
        self.flush()


def html_chunks(text: str, skip_first_column=False) -> list[tuple[str, str]]:
    """``(where, text)`` of every piece of a page a reader reads."""
    reader = _Reader(skip_first_column)
    reader.feed(text)
    reader.close()
    return reader.chunks


#: Pages whose tables' first column is English on purpose (the glossary:
#: the English term, then the Chinese one).
ENGLISH_FIRST_COLUMN = ("glossary.html",)


def english_in_html(text: str, page: str = "", allowed=ALLOWED) -> list[str]:
    """The English sentences a reader sees on a page of the Chinese edition:
    in its text, and in the attributes read aloud or shown as tooltips (an
    attribute wholly in Latin letters is English, one word is enough:
    "Main", "Link to this heading")."""
    found = []
    first = page.endswith(ENGLISH_FIRST_COLUMN)
    for where, chunk in html_chunks(text, skip_first_column=first):
        sentences = english_sentences(chunk, allowed)
        if (where.startswith("<") or where == "math") and not sentences:
            sentences = english_words(chunk)
        for sentence in sentences:
            found.append(f"{page} {where}: {sentence!r}")
    return found


#: Attribute values and formula words that are names (the same in both
#: languages, or a symbol's subscript: P_ntk).
NAMES = {"RoPE", "ALiBi", "YaRN", "NoPE", "T5", "PDF", "ntk"}


def english_words(text: str) -> list[str]:
    """A short text wholly in Latin letters (an attribute, the words of a
    formula) is English even as one word ("Main", "\\text{otherwise}"),
    unless it is a name."""
    if re.search(r"[\u4e00-\u9fff]", text):
        return []
    words = [w for w in _WORD.findall(text) if w not in NAMES]
    return [text.strip()] if words else []


def english_in_notebook(nb, where: str = "", allowed=ALLOWED) -> list[str]:
    """The English sentences of a Chinese notebook outside code: its
    markdown cells (without code and formulas, but with the words of their
    ``\\text{}``), its figures' captions and alt texts, and its printed
    outputs."""
    found = []

    def look(text, what):
        for sentence in english_sentences(text, allowed):
            found.append(f"{where}:{index} {what}: {sentence!r}")

    for index, cell in enumerate(nb.cells):  # noqa: B007 (look() reads it)
        if cell.cell_type == "markdown":
            look(prose_of_markdown(cell.source), "markdown")
            for tex in re.findall(r"\$\$.*?\$\$|\$[^$\n]*\$", cell.source, flags=re.S):
                for word in _TEXT_IN_MATH.findall(tex):
                    found += [f"{where}:{index} math: {w!r}"
                              for w in english_words(word)]
        meta = cell.get("metadata", {}).get("mystnb", {})
        caption = meta.get("figure", {}).get("caption")
        alt = meta.get("image", {}).get("alt")
        if caption:
            look(caption, "caption")
        if alt:
            look(alt, "alt")
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                look(out.get("text", ""), "output")
            data = out.get("data", {})
            if "text/markdown" in data:
                look(prose_of_markdown(data["text/markdown"]), "output")
    return found


def prose_of_markdown(text: str) -> str:
    """Markdown without what is not read as prose: fenced code, inline code,
    roles' targets, formulas (but the words of their \\text{}), URLs, HTML
    tags, labels and directive options."""
    out = []
    fence = None
    fence_is_prose = False
    for line in text.splitlines():
        stripped = line.strip()
        m = re.match(r"^(`{3,}|~{3,}|:{3,})(.*)$", stripped)
        if fence:
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
            elif fence_is_prose:
                if not re.match(r"^:[\w-]+:", stripped):
                    out.append(line)
                else:
                    value = re.match(r"^:(?:alt|caption):\s*(.*)$", stripped)
                    if value:
                        out.append(value.group(1))
            continue
        if m:
            fence = m.group(1)
            info = m.group(2).strip()
            name = re.match(r"^\{([^}]*)\}\s*(.*)$", info)
            fence_is_prose = bool(name) and name.group(1) not in {
                "code", "code-block", "code-cell", "math", "raw",
                "literalinclude", "eval-rst", "bibliography", "glue"}
            if name and fence_is_prose and name.group(1) not in {
                    "figure", "image", "include", "solution-start", "solution"}:
                out.append(name.group(2))
            continue
        out.append(line)
    prose = "\n".join(out)
    prose = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", prose, flags=re.S)
    prose = re.sub(r"\{(?:cite|doc|ref|numref|eq|download|term)[\w:]*\}`[^`]*`",
                   " ", prose)
    prose = re.sub(r"\{[\w:-]+\}`([^`]*)`", r" \1 ", prose)
    prose = re.sub(r"`[^`]*`", " ", prose)
    prose = re.sub(r"\]\([^)]*\)", "] ", prose)
    prose = re.sub(r"https?://\S+", " ", prose)
    prose = re.sub(r"<[^>]+>", " ", prose)
    prose = re.sub(r"^\s*\([\w:.-]+\)=\s*$", " ", prose, flags=re.M)
    return prose
