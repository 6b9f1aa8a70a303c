"""The assignments' sources: instructor notebooks in nbgrader's format.

What they hold (points, titles, the names the students define) and what must
never reach a student (solutions, hidden tests), plus the scan of a built
book for instructor material.
"""

import html
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SOURCE = REPO / "assignments" / "source"
GRADING = REPO / "assignments" / "grading"
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS",
           "END HIDDEN TESTS")
MARKER_LINE = re.compile(
    r"^[ \t]*#+[ \t]*(BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*$", re.M)
# Student ids become folder names and nbgrader globs: no * ? [ ] or spaces.
STUDENT_ID = re.compile(r"[^\W_][\w.@-]*")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

def discover(source=SOURCE):
    """The assignments in ``source``: {name: path of NAME/NAME.ipynb}."""
    found = {}
    if source.is_dir():
        for folder in sorted(source.iterdir()):
            notebook = folder / f"{folder.name}.ipynb"
            if folder.is_dir() and notebook.is_file():
                found[folder.name] = notebook
    return found


def cells(path):
    """The cells of a notebook: a path, or the notebook itself (a dict)."""
    if isinstance(path, dict):
        return path["cells"]
    return json.loads(Path(path).read_text(encoding="utf-8"))["cells"]


LANGUAGES = ("en", "zh_CN")


def instructor_notebook(name, path, variant_seed=None, grading=GRADING,
                        language="en"):
    """The instructor notebook of assignment ``name`` (a dict).

    With ``variant_seed``, the class-specific variant described by
    ``grading/NAME.json`` (see ``variants.py``); an assignment without that
    file has no variant, which is an error rather than a silent public
    version. With ``language="zh_CN"``, its markdown cells (prompts, model
    answers, grading guides) in Chinese from the book's translation files
    (``locales/zh_CN/LC_MESSAGES/assignments/NAME.po``, see
    ``tools/i18n.py``); code cells are the English notebook's, byte for byte,
    and a missing translation is an error. The variant is applied to the
    translated notebook.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language: {language!r} is not one of "
                         f"{', '.join(LANGUAGES)}")
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    if language != "en":
        import i18n  # tools/i18n.py; tools/ is on sys.path (the CLI puts it)
        import nbformat

        nb = json.loads(nbformat.writes(i18n.translate_notebook(
            nbformat.reads(json.dumps(nb), as_version=4),
            i18n.po_path_of(Path(path)), where=name)))
    if variant_seed is None:
        return nb
    from .variants import load_spec, make_variant

    spec = Path(grading) / f"{name}.json"
    if not spec.is_file():
        raise ValueError(f"variant_seed: assignment {name} has no variant "
                         f"spec ({spec} is missing)")
    return make_variant(nb, load_spec(spec), variant_seed, language)


def cell_source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def nbgrader_meta(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def points(path):
    """(autograded points, points graded by hand, number of code cells)."""
    auto = manual = 0.0
    code = 0
    for cell in cells(path):
        meta = nbgrader_meta(cell)
        code += cell.get("cell_type") == "code"
        if meta.get("grade"):
            if meta.get("solution"):
                manual += float(meta.get("points", 0))
            else:
                auto += float(meta.get("points", 0))
    return auto, manual, code


def uses_lab(path):
    """Whether a code cell of the notebook ``path`` imports posenc_lab."""
    return any(cell.get("cell_type") == "code" and re.search(
        r"^\s*(from|import)\s+posenc_lab\b", cell_source(cell), flags=re.M)
        for cell in cells(path))


def title(path):
    for cell in cells(path):
        if cell.get("cell_type") == "markdown":
            first = cell_source(cell).strip().splitlines()
            if first and first[0].startswith("# "):
                return first[0][2:].strip()
    return ""


def secret_lines(path, min_length=16):
    """Lines of solutions and hidden tests that appear nowhere else.

    These must never reach a student: not in a released notebook, not in
    feedback. Solution regions are between ``### BEGIN/END SOLUTION``; a
    markdown answer cell without markers is a solution as a whole (nbgrader
    replaces it); hidden tests are between ``### BEGIN/END HIDDEN TESTS``.
    Returns (solution lines, hidden-test lines), each a set of stripped
    lines at least ``min_length`` long that do not also occur outside the
    secret regions of the same notebook, whole or within a line.
    """
    solution, hidden, public = set(), set(), set()
    for cell in cells(path):
        meta = nbgrader_meta(cell)
        lines = cell_source(cell).splitlines()
        whole = (cell.get("cell_type") == "markdown" and meta.get("solution")
                 and not any("BEGIN SOLUTION" in line for line in lines))
        region = None
        for line in lines:
            text = line.strip()
            if "BEGIN SOLUTION" in line:
                region = solution
            elif "BEGIN HIDDEN TESTS" in line:
                region = hidden
            elif "END SOLUTION" in line or "END HIDDEN TESTS" in line:
                region = None
            elif whole:
                solution.add(text)
            elif region is not None:
                region.add(text)
            else:
                public.add(text)
    # A line that also occurs in a public line (``show_values=False)`` at
    # the end of a visible check) gives nothing away.
    public_text = "\n".join(public)
    keep = {line for line in solution | hidden
            if len(line) >= min_length and line not in public_text}
    # A hidden-test line that is also solution code may be handed in by a
    # student: it is a solution, not a hidden test, in their feedback.
    return solution & keep, (hidden - solution) & keep


def answer_names(path):
    """Names that the students define: functions and variables of answers."""
    names = set()
    for cell in cells(path):
        if nbgrader_meta(cell).get("solution") and cell.get("cell_type") == "code":
            src = cell_source(cell)
            names |= set(re.findall(r"^def (\w+)", src, flags=re.M))
            names |= set(re.findall(r"^(\w+) =", src, flags=re.M))
    return names


def leaks(text, path):
    """What of the instructor notebook ``path`` shows in ``text``."""
    found = [marker for marker in MARKERS if marker in text]
    solution, hidden = secret_lines(path)
    found += [f"solution line {line!r}" for line in sorted(solution)
              if line in text]
    found += [f"hidden test line {line!r}" for line in sorted(hidden)
              if line in text]
    return found


def hidden_leaks(text, path):
    """Lines of the hidden tests of ``path`` (or their markers) in ``text``."""
    found = [m for m in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS") if m in text]
    return found + [line for line in sorted(secret_lines(path)[1])
                    if line in text]


def book_secrets(path):
    """What must not be in the book: markers, hidden tests, model answers.

    Hidden-test lines count when they call a student's answer (a chapter
    may well contain the same data or the same line of numpy); solution
    *code* is left out for the same reason. A whole instructor notebook in
    the book would still show its markers, which are matched as lines of
    their own (MARKER_LINE), so that a page may mention them in a sentence.
    """
    names = answer_names(path)
    secrets = {line for line in secret_lines(path)[1]
               if any(re.search(rf"\b{name}\b", line) for name in names)}
    for cell in cells(path):
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") == "markdown" and meta.get("solution"):
            secrets |= {line.strip() for line in cell_source(cell).splitlines()
                        if len(line.strip()) >= 16}
    return secrets


def _chinese_model_answers(name, path):
    """The lines of the Chinese edition's model answers and grading guides
    (the Chinese book, ``_build/html/zh``, must not show them either)."""
    nb = instructor_notebook(name, path, language="zh_CN")
    return {line.strip() for cell in nb["cells"]
            if cell.get("cell_type") == "markdown"
            and nbgrader_meta(cell).get("solution")
            for line in cell_source(cell).splitlines()
            if len(line.strip()) >= 12}


def check_book(html_dir, source=SOURCE):
    """Problems found when scanning a built book for instructor material."""
    secrets = set()
    for name, path in discover(source).items():
        secrets |= book_secrets(path)
        secrets |= _chinese_model_answers(name, path)
    problems = []
    for path in sorted(Path(html_dir).rglob("*")):
        if path.suffix not in (".html", ".ipynb", ".md", ".txt"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".html":
            text = html_text(text)
        elif path.suffix == ".ipynb":
            try:
                text = "\n".join(cell_source(c) for c in json.loads(text)["cells"])
            except (ValueError, KeyError, TypeError):
                pass
        found = sorted(secret for secret in secrets if secret in text)
        found += [m.group(0).strip() for m in MARKER_LINE.finditer(text)]
        if found:
            problems.append(f"{path}: {len(found)} line(s), e.g. {found[0]!r}")
    return problems


def html_text(page):
    """The visible text of an HTML page (tags removed, entities decoded)."""
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    return html.unescape(re.sub(r"<[^>]+>", "", page))

