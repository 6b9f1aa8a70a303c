"""Helpers for the tests of the grader: notebooks, submissions, a grading run.

Reusable by any test of ``tools/assignments.py``: release an assignment,
make submissions from the instructor's answers (``honest``), change their
answer cells (``set_answer``, ``gate``), hand them in, grade a class with
the command line as a teacher would, and read the CSV and the feedback.
"""

import ast
import csv
import json
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "assignments.py"
SOURCE = REPO / "assignments" / "source"
MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")


def run_tool(*args, timeout=3600):
    """Run ``tools/assignments.py ARGS``; its output (fails on an error)."""
    result = subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], capture_output=True,
        text=True, timeout=timeout, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source_of(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def cell(nb, grade_id):
    return next(c for c in nb["cells"] if nbgrader(c).get("grade_id") == grade_id)


def instructor_path(name):
    return SOURCE / name / f"{name}.ipynb"


def auto_max(name):
    return sum(nbgrader(c)["points"] for c in load(instructor_path(name))["cells"]
               if nbgrader(c).get("grade") and not nbgrader(c).get("solution"))


def visible_text(page):
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    return unescape(re.sub(r"<[^>]+>", "", page))


def answer_cells(nb):
    """The code answer cells of a notebook: [(grade_id, cell)]."""
    return [(nbgrader(c)["grade_id"], c) for c in nb["cells"]
            if c["cell_type"] == "code" and nbgrader(c).get("solution")]


def strip_markers(source):
    return "\n".join(line for line in source.splitlines()
                     if not MARKER.match(line))


def honest(released, name):
    """The released notebook with the instructor's answers, no markers."""
    nb = load(released)
    teacher = load(instructor_path(name))
    for gid, c in answer_cells(nb):
        c["source"] = strip_markers(source_of(cell(teacher, gid)))
    return nb


def defined_functions(source):
    return [n.name for n in ast.parse(source).body
            if isinstance(n, ast.FunctionDef)]


_IDS = iter(range(10**6))


def code_cell(source, **metadata):
    return {"cell_type": "code", "execution_count": None,
            "id": f"added-cell-{next(_IDS)}", "metadata": dict(metadata),
            "outputs": [], "source": source}


def insert_after(nb, grade_id, source):
    """Insert a code cell after the cell ``grade_id``; returns the cell."""
    index = nb["cells"].index(cell(nb, grade_id))
    new = code_cell(source)
    nb["cells"].insert(index + 1, new)
    return new


def gate(nb, probe):
    """Each answer function right only if ``probe`` made ``_won()`` true.

    ``probe`` is code run in a cell after the setup: it tries something
    the sandbox must stop and defines ``_won()``. Every answer function
    then returns the instructor's answer only while ``_won()`` is true, so
    the points measure whether the boundary held (0 points: it held).
    """
    insert_after(nb, "setup", probe)
    # before the probe, so that a probe that fails still leaves the gate
    insert_after(nb, "setup", '''def _won():
    return False


def _gate(function):
    def gated(*args, **kwargs):
        if not _won():
            raise RuntimeError("the attack did not work")
        return function(*args, **kwargs)
    gated.__name__ = function.__name__
    return gated
''')
    for _, c in answer_cells(nb):
        names = defined_functions(source_of(c))
        c["source"] = source_of(c) + "".join(
            f"\n{n} = _gate({n})" for n in names)
    return nb


def wrong(nb):
    """Every answer function raises (its question would get 0 points)."""
    for _, c in answer_cells(nb):
        names = defined_functions(source_of(c))
        c["source"] = "".join(
            f"def {n}(*args, **kwargs):\n    return 0.0\n\n" for n in names)
    return nb


def hand_in(folder, student, name, nb):
    path = Path(folder) / student / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def grade(folder, out, *options):
    """Grade ``folder``; returns ({student: row}, page(student) -> HTML)."""
    out = Path(out)
    output = run_tool("grade", folder, "--out", out / "grades.csv", *options)
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}

    def page(student):
        return (out / rows[student]["feedback"]).read_text(encoding="utf-8")

    page.output = output
    return rows, page


def flag_codes(row):
    return {flag.split(":")[0] for flag in row["flags"].split(" | ") if flag}


def processes_mentioning(text):
    """PIDs of live processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(entry.name))
    return found


def _signature_lines(node):
    """Line numbers (0-based, end excluded) of a def's header lines."""
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return start - 1, node.body[0].lineno - 1


def pasted(public_source, variant_source):
    """The public answer cell with the variant's def lines put in.

    Each function that the public cell defines at the top level keeps its
    public body (docstring included) under the header lines (decorators,
    def line, arguments) of the variant's function in the same place (the
    variant may rename it); the rest of the cell stays the public one. So
    only the signature, with its defaults, comes from the variant.
    """
    lines = public_source.splitlines(keepends=True)
    vlines = variant_source.splitlines(keepends=True)
    heads = [vlines[slice(*_signature_lines(node))]
             for node in ast.parse(variant_source).body
             if isinstance(node, ast.FunctionDef)]
    defs = [node for node in ast.parse(public_source).body
            if isinstance(node, ast.FunctionDef)]
    assert len(defs) == len(heads), "the variant defines other functions"
    out, at = [], 0
    for node, head in zip(defs, heads, strict=True):
        start, end = _signature_lines(node)
        out += lines[at:start] + head
        at = end
    return "".join(out + lines[at:])
