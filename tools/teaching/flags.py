"""Hints for the teacher: what in a submission is worth a look.

``analyse(submission, released, instructor)`` reads the repaired notebook
(the cells that run: test and setup cells are the instructor's again, so
only the student's own code cells are read) and returns a list of
``Flag``: a short code, where (cell and line) and a one-line reason. A flag
never costs points: the sandbox and the checks outside it decide the
points; a flag asks the teacher to read something. The codes:

- ``uses-reference``: a function the student wrote for a question whose
  tests switch ``posenc_core`` functions off (``without_posenc_core``),
  or a helper it calls, names one of them (``pc.frequencies``, an import,
  a string, a default argument); or any code names a function that
  ``assignments/grading/NN.json`` forbids. The tests switch those
  functions off inside the kernel while they call the student's code, so
  the call itself fails; a copy kept some other way may not;
- ``detects-grader``: the student's code looks for the grader
  (``NBGRADER_...``, the grader's ``__posenc__``);
- ``solution-markers``: BEGIN/END SOLUTION, BEGIN/END HIDDEN TESTS or
  "Model answer" in a cell (the instructor's version handed in);
- ``unchanged``: every answer cell as released;
- ``unparsable``: a code cell that is not Python (nor IPython).

Ordinary notebook habits raise nothing: magics (``%load_ext``,
``%matplotlib``), ``getattr`` over names, reading ``sys.path``, plotting.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

CODES = ("uses-reference", "detects-grader", "solution-markers", "unchanged",
         "unparsable")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS",
           "END HIDDEN TESTS", "Model answer")
REFERENCE_MODULES = ("posenc_core", "pc")
GRADER = re.compile(r"NBGRADER_|__posenc__")


@dataclass(frozen=True)
class Flag:
    """One thing a teacher should look at (``cell``: 0-based, ``line``: 1-based)."""

    code: str
    cell: int | None
    line: int | None
    reason: str

    def __str__(self):
        where = []
        if self.cell is not None:
            where.append(f"cell {self.cell + 1}")
        if self.line is not None:
            where.append(f"line {self.line}")
        return (", ".join(where) + ": " if where else "") + self.reason


def _notebook(nb, argument):
    if isinstance(nb, str | os.PathLike):
        import nbformat

        path = Path(nb)
        if not path.is_file():
            raise ValueError(f"{argument}: no notebook file at {path}")
        return nbformat.read(path, as_version=4)
    if isinstance(nb, dict) and isinstance(nb.get("cells"), list):
        return nb
    raise ValueError(f"{argument} must be a notebook (a dict with a list of "
                     f"cells, or the path of an .ipynb file), got "
                     f"{type(nb).__name__}")


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _meta(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def _normal(source):
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _python(source):
    """The cell's IPython syntax turned into Python (None if impossible)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - IPython refuses odd input its own way
        return None


def _parse(source):
    text = _python(source)
    return ast.parse(text) if text is not None else None


def _switched_off(instructor):
    """{name used by a test cell: posenc_core names it switches off}."""
    tuples, found = {}, {}
    for cell in instructor["cells"]:
        meta = _meta(cell)
        if cell.get("cell_type") != "code" or not (
                meta.get("locked") or meta.get("grade")) or meta.get(
                "solution"):
            continue
        try:
            tree = _parse(_source(cell))
        except SyntaxError:
            continue
        if tree is None:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Tuple | ast.List)
                    and all(isinstance(e, ast.Constant)
                            and isinstance(e.value, str)
                            for e in node.value.elts)):
                tuples[node.targets[0].id] = {e.value for e in node.value.elts}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.With)):
                continue
            off = set()
            for item in node.items:
                call = item.context_expr
                if (isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Name)
                        and call.func.id == "without_posenc_core"):
                    for arg in call.args:
                        if isinstance(arg, ast.Constant):
                            off.add(str(arg.value))
                        elif (isinstance(arg, ast.Starred)
                              and isinstance(arg.value, ast.Name)):
                            off |= tuples.get(arg.value.id, set())
            if not off:
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx,
                                                              ast.Load):
                    found.setdefault(inner.id, set()).update(off)
    return found


def _mentions(node, names):
    """(line, name) of each mention of ``names`` in ``node``."""
    for inner in ast.walk(node):
        name = None
        if (isinstance(inner, ast.Attribute) and inner.attr in names):
            name = inner.attr
        elif isinstance(inner, ast.ImportFrom) and inner.module in (
                "posenc_core",):
            hit = [a.name for a in inner.names if a.name in names or
                   a.name == "*"]
            name = hit[0] if hit else None
        elif (isinstance(inner, ast.Constant) and isinstance(inner.value, str)
              and inner.value in names):
            name = inner.value
        if name is not None:
            yield getattr(inner, "lineno", None), name


def _calls(node):
    return {n.id for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def analyse(submission_nb, released_nb, instructor_nb, *, forbidden=()):
    """The flags of a (repaired) submission, in the order of its cells.

    ``released_nb`` may be None (then no "unchanged" flag); ``forbidden``:
    the names of posenc_core functions the grading config forbids.
    """
    submission = _notebook(submission_nb, "submission_nb")
    released = None if released_nb is None else _notebook(released_nb,
                                                           "released_nb")
    instructor = _notebook(instructor_nb, "instructor_nb")
    if isinstance(forbidden, str | bytes) or not all(
            isinstance(name, str) and name.isidentifier()
            for name in forbidden):
        raise ValueError("forbidden must be a list of names (identifiers), "
                         f"got {forbidden!r}")
    forbidden = set(forbidden)
    given = {_normal(_source(c)) for c in instructor["cells"]
             if c.get("cell_type") == "code" and not _meta(c).get("solution")}
    locked = {_meta(c).get("grade_id") for c in instructor["cells"]
              if _meta(c).get("locked") or (_meta(c).get("grade")
                                             and not _meta(c).get("solution"))}
    switched = _switched_off(instructor)
    flags, functions, aliases = [], {}, {}
    for index, cell in enumerate(submission["cells"]):
        source = _source(cell)
        found = [m for m in MARKERS if m in source]
        if found:
            flags.append(Flag("solution-markers", index, None,
                              "contains the instructor's marker"
                              f"{'s' if len(found) > 1 else ''} "
                              + ", ".join(repr(m) for m in found)))
        if cell.get("cell_type") != "code" or not source.strip():
            continue
        if _meta(cell).get("grade_id") in locked - {None} or (
                _normal(source) in given):
            continue  # the instructor's code, restored by the grader
        try:
            tree = _parse(source)
        except SyntaxError as err:
            flags.append(Flag("unparsable", index, err.lineno,
                              f"not Python: {err.msg}"))
            continue
        if tree is None:
            flags.append(Flag("unparsable", index, None,
                              "IPython cannot read this cell"))
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and GRADER.search(node.value)) or (
                    isinstance(node, ast.Name) and GRADER.search(node.id)):
                flags.append(Flag("detects-grader", index, node.lineno,
                                  "looks for the grader"))
                break
        for line, name in _mentions(tree, forbidden) if forbidden else ():
            flags.append(Flag("uses-reference", index, line,
                              f"uses posenc_core.{name}, which this "
                              "assignment forbids"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions[node.name] = (index, node)
            elif isinstance(node, ast.Assign | ast.Import | ast.ImportFrom):
                # a module-level alias (reference = pc.frequencies), or an
                # import of posenc_core's names, that an answer may use
                targets = ([a.asname or a.name for a in node.names
                            if a.name != "*"] + (
                    sorted(set().union(*switched.values()))
                    if any(a.name == "*" for a in node.names) else [])
                           if not isinstance(node, ast.Assign) else
                           [n.id for t in node.targets for n in ast.walk(t)
                            if isinstance(n, ast.Name)])
                for target in targets:
                    aliases[target] = (index, node)
    for name, off in switched.items():
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in functions:
                continue
            seen.add(current)
            index, node = functions[current]
            used_names = _calls(node)
            places = [(index, node)] + [aliases[n] for n in used_names
                                        if n in aliases and n not in functions]
            for where, part in places:
                for line, used in _mentions(part, off - forbidden):
                    flags.append(Flag("uses-reference", where, line,
                                      f"{current} uses posenc_core.{used}, "
                                      f"which the tests of {name} switch off"))
            todo.extend(used_names - seen)
    if released is not None:
        answers = {_meta(c)["grade_id"]: _normal(_source(c))
                   for c in released["cells"]
                   if _meta(c).get("solution") and _meta(c).get("grade_id")}
        handed = {}
        for c in submission["cells"]:
            if _meta(c).get("grade_id") in answers:
                handed.setdefault(_meta(c)["grade_id"], _normal(_source(c)))
        if answers and all(handed.get(k) == v for k, v in answers.items()):
            flags.append(Flag("unchanged", None, None,
                              "handed back with no answer changed (all "
                              f"{len(answers)} answer cells as released)"))
    unique = list(dict.fromkeys(flags))
    return sorted(unique, key=lambda f: (f.cell is None, f.cell or 0,
                                         f.line or 0))
