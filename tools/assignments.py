#!/usr/bin/env python3
"""Release and grade the book's assignments with nbgrader, offline.

    python tools/assignments.py list
    python tools/assignments.py release OUT_DIR
    python tools/assignments.py grade SUBMISSIONS_DIR --out grades.csv
    python tools/assignments.py check-book [_build/html]

The instructor versions live in ``assignments/source/NAME/NAME.ipynb`` in
nbgrader's format. ``release`` runs ``nbgrader generate_assignment`` in a
temporary course directory and writes the student versions (solutions and
hidden tests removed) to ``OUT_DIR/NAME.ipynb``, with a copy of
``posenc_core.py`` beside them, and of the package ``posenc_lab/`` (the
small Transformer and its text) when a released notebook imports it, as
assignment 8 does. ``grade`` runs ``nbgrader autograde`` and
``nbgrader generate_feedback`` on every ``SUBMISSIONS_DIR/STUDENT/NAME.ipynb``
and writes one CSV row and one HTML feedback file per student and assignment.

No Jupyter server, no exchange directory and no Docker are needed. Student
code runs in a separate Python kernel with a time limit per cell; a grading
worker that still hangs is killed and restarted, and that submission gets 0
with the reason. Grading runs the students' code as the current user: it is
not a sandbox (neither is nbgrader itself).
"""

import argparse
import csv
import html
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "assignments" / "source"
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS",
           "END HIDDEN TESTS")
MARKER_LINE = re.compile(
    r"^[ \t]*#+[ \t]*(BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*$", re.M)
CSV_COLUMNS = ("student_id", "assignment", "score", "max_score",
               "manual_points", "status", "reason", "feedback")
# Student ids become folder names and nbgrader globs: no * ? [ ] or spaces.
STUDENT_ID = re.compile(r"[^\W_][\w.@-]*")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


# ------------------------------------------------------------ the sources


def discover(source=SOURCE):
    """The assignments in ``source``: {name: path of NAME/NAME.ipynb}."""
    found = {}
    if source.is_dir():
        for folder in sorted(source.iterdir()):
            notebook = folder / f"{folder.name}.ipynb"
            if folder.is_dir() and notebook.is_file():
                found[folder.name] = notebook
    return found


def _cells(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))["cells"]


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _nbgrader(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def points(path):
    """(autograded points, points graded by hand, number of code cells)."""
    auto = manual = 0.0
    code = 0
    for cell in _cells(path):
        meta = _nbgrader(cell)
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
        r"^\s*(from|import)\s+posenc_lab\b", _source(cell), flags=re.M)
        for cell in _cells(path))


def title(path):
    for cell in _cells(path):
        if cell.get("cell_type") == "markdown":
            first = _source(cell).strip().splitlines()
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
    secret regions of the same notebook.
    """
    solution, hidden, public = set(), set(), set()
    for cell in _cells(path):
        meta = _nbgrader(cell)
        lines = _source(cell).splitlines()
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
    keep = {line for line in solution | hidden
            if len(line) >= min_length and line not in public}
    # A hidden-test line that is also solution code may be handed in by a
    # student: it is a solution, not a hidden test, in their feedback.
    return solution & keep, (hidden - solution) & keep


def answer_names(path):
    """Names that the students define: functions and variables of answers."""
    names = set()
    for cell in _cells(path):
        if _nbgrader(cell).get("solution") and cell.get("cell_type") == "code":
            src = _source(cell)
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
    for cell in _cells(path):
        meta = _nbgrader(cell)
        if cell.get("cell_type") == "markdown" and meta.get("solution"):
            secrets |= {line.strip() for line in _source(cell).splitlines()
                        if len(line.strip()) >= 16}
    return secrets


def check_book(html_dir, source=SOURCE):
    """Problems found when scanning a built book for instructor material."""
    secrets = set()
    for path in discover(source).values():
        secrets |= book_secrets(path)
    problems = []
    for path in sorted(Path(html_dir).rglob("*")):
        if path.suffix not in (".html", ".ipynb", ".md", ".txt"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".html":
            text = html_text(text)
        elif path.suffix == ".ipynb":
            try:
                text = "\n".join(_source(c) for c in json.loads(text)["cells"])
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


# ---------------------------------------------------- nbgrader, in-process


def _environment(work):
    """Environment for nbgrader and the kernels it starts.

    nbgrader calls ``alembic`` on PATH; the kernel "python3" is this very
    interpreter (which has numpy and posenc_core); user-level Jupyter and
    IPython configuration is kept out so that grading is reproducible.
    """
    work = Path(work)
    kernel = work / "jupyter_data" / "kernels" / "python3"
    kernel.mkdir(parents=True, exist_ok=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                 "{connection_file}"],
        "display_name": "Python 3",
        "language": "python",
    }))
    for name in ("jupyter_config", "runtime", "ipython"):
        (work / name).mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update({
        "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                 env.get("PATH", "")]),
        "JUPYTER_PATH": str(work / "jupyter_data"),
        "JUPYTER_CONFIG_DIR": str(work / "jupyter_config"),
        "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(work / "ipython"),
        "PYTHONPATH": os.pathsep.join(
            [str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p]),
        "MPLBACKEND": "Agg",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    })
    return env


class _Course:
    """A temporary nbgrader course directory, driven through nbgrader's API.

    Imports nbgrader (slow: several seconds), so only release and the
    grading workers create one.
    """

    def __init__(self, root, timeout=60):
        import logging

        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config

        logging.getLogger("traitlets").setLevel(logging.WARNING)
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.db_url = f"sqlite:///{self.root / 'gradebook.db'}"
        c = Config()
        c.CourseDirectory.root = str(self.root)
        c.CourseDirectory.db_url = self.db_url
        c.Execute.timeout = int(timeout)
        c.Execute.interrupt_on_timeout = True
        # After an interrupt, give compiled code time to return to Python.
        c.Execute.iopub_timeout = 15
        # Deleted test cells come back (our own repair step does this first).
        c.OverwriteCells.add_missing_cells = True
        # Feedback: hidden tests removed from the test cells' code, and from
        # anything that could quote it (tracebacks, printed output).
        c.GenerateFeedback.preprocessors = feedback_preprocessors()
        self.config = c
        self.coursedir = CourseDirectory(config=c)

    def run(self, converter, assignment, student=".", **attrs):
        from nbgrader.utils import capture_log

        self.coursedir.assignment_id = assignment
        self.coursedir.student_id = student
        app = converter(coursedir=self.coursedir, config=self.config)
        app.force = True
        for key, value in attrs.items():
            setattr(app, key, value)
        return capture_log(app)

    def generate(self, name, notebook):
        """nbgrader generate_assignment; returns the released notebook."""
        from nbgrader.converters import GenerateAssignment

        folder = self.root / "source" / name
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(notebook.parent, folder,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        result = self.run(GenerateAssignment, name, create_assignment=True)
        released = self.root / "release" / name / f"{name}.ipynb"
        if not result["success"] or not released.is_file():
            raise RuntimeError(
                f"nbgrader generate_assignment failed for {name}:\n"
                + (result.get("error") or result.get("log") or ""))
        return released


def feedback_preprocessors():
    """Preprocessors for ``GenerateFeedback`` that keep hidden tests secret.

    nbgrader's own feedback shows the hidden tests, which the autograder
    put back into the test cells. Use this list in a course's
    ``nbgrader_config.py`` (see ``assignments/nbgrader_config.py``)::

        c.GenerateFeedback.preprocessors = feedback_preprocessors()
    """
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    return [GetGrades, _hide_hidden_tests_class(), ClearHiddenTests,
            CSSHTMLHeaderPreprocessor]


def _hide_hidden_tests_class():
    from nbgrader.preprocessors import NbGraderPreprocessor

    class HideHiddenTests(NbGraderPreprocessor):
        """Keep hidden tests out of feedback, except their messages.

        Runs before ClearHiddenTests, while the hidden regions are still in
        the autograded test cells. In the tracebacks of test cells it drops
        the frames that point into test or setup cells (they would quote
        their code) and keeps the error message and the frames in the
        student's own code. Any output, in any cell, that quotes a line of
        a hidden test is replaced by a note.
        """

        def preprocess(self, nb, resources):
            self.hidden = set()
            public = set()
            self.locked_counts = set()
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "code" and (
                        meta.get("locked") or meta.get("grade")
                        and not meta.get("solution")):
                    if cell.get("execution_count") is not None:
                        self.locked_counts.add(cell.execution_count)
                inside = False
                for line in cell.source.splitlines():
                    if "BEGIN HIDDEN TESTS" in line:
                        inside = True
                    elif "END HIDDEN TESTS" in line:
                        inside = False
                    elif inside:
                        self.hidden.add(line.strip())
                    else:
                        public.add(line.strip())
            self.hidden = {line for line in self.hidden
                           if len(line) >= 12 and line not in public}
            return super().preprocess(nb, resources)

        def _frames(self, traceback):
            kept = []
            for frame in traceback:
                plain = ANSI.sub("", frame)
                counts = {int(n) for n in re.findall(r"In\s*\[(\d+)\]", plain)}
                if counts & self.locked_counts:
                    continue
                kept.append(frame)
            return kept

        def _quotes_hidden(self, output):
            parts = [output.get("text", ""), output.get("evalue", "")]
            parts += output.get("traceback", [])
            for value in output.get("data", {}).values():
                parts.append(value if isinstance(value, str) else str(value))
            text = ANSI.sub("", "\n".join(str(p) for p in parts))
            return any(line in text for line in self.hidden)

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code":
                return cell, resources
            meta = cell.metadata.get("nbgrader", {})
            test = meta.get("grade") and not meta.get("solution")
            outputs = []
            for output in cell.get("outputs", []):
                if test and output.get("output_type") == "error":
                    output["traceback"] = self._frames(output["traceback"])
                if self.hidden and self._quotes_hidden(output):
                    output = {"output_type": "stream", "name": "stdout",
                              "text": "[output removed from the feedback: "
                                      "it quoted a hidden test]\n"}
                outputs.append(output)
            cell.outputs = outputs
            return cell, resources

    return HideHiddenTests


# ------------------------------------------------------------------ release


def release(out_dir, names, source=SOURCE, force=False):
    """Write the student versions of ``names`` to ``out_dir``."""
    available = discover(source)
    out_dir = Path(out_dir)
    existing = [n for n in names if (out_dir / f"{n}.ipynb").exists()]
    if existing and not force:
        raise SystemExit(
            f"error: {out_dir} already has {existing[0]}.ipynb; use --force "
            "to overwrite the student versions there")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="posenc-release-") as tmp:
        os.environ.update(_environment(tmp))
        print("Loading nbgrader...", flush=True)
        course = _Course(Path(tmp) / "course")
        for number, name in enumerate(names, 1):
            released = course.generate(name, available[name])
            text = released.read_text(encoding="utf-8")
            problems = leaks(text, available[name])
            if problems:
                raise SystemExit(
                    f"refusing to release {name}: the student version "
                    f"would contain {problems[0]}")
            shutil.copyfile(released, out_dir / f"{name}.ipynb")
            auto, manual, _ = points(available[name])
            print(f"[{number}/{len(names)}] {out_dir / (name + '.ipynb')}  "
                  f"({auto:g} points autograded + {manual:g} by hand)",
                  flush=True)
    shutil.copyfile(REPO / "posenc_core.py", out_dir / "posenc_core.py")
    copied = "posenc_core.py"
    lab = out_dir / "posenc_lab"
    if any(uses_lab(available[name]) for name in names) and (
            lab.resolve() != (REPO / "posenc_lab").resolve()):
        shutil.copytree(REPO / "posenc_lab", lab, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        copied += " and posenc_lab/"
    print(f"Released {len(names)} assignment(s) to {out_dir}, with a copy of "
          f"{copied} that the notebooks import.")


# ------------------------------------------------------------------ grading


def _fmt(value):
    return f"{value:g}"


def _feedback_page(student, assignment, score, max_score, status, reason):
    body = (f"<h1>{html.escape(assignment)}: feedback for "
            f"{html.escape(student)}</h1>\n"
            f"<p>Score: <b>{_fmt(score)} / {_fmt(max_score)}</b> "
            f"({html.escape(status)})</p>\n")
    if reason:
        body += f"<p>{html.escape(reason)}</p>\n"
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(assignment)}</title></head>\n<body>\n"
            f"{body}</body></html>\n")


def _note_html(reason):
    return ('<div style="border:2px solid #c60;padding:0.5em 1em;'
            'margin:1em;background:#fff4e5"><b>Note from the grader:</b> '
            f"{html.escape(reason)}</div>")


def _repair(nb, released, instructor):
    """Put back deleted test cells, drop forged ones; say what was done.

    Locked cells (setup and tests) that were edited are restored by
    nbgrader itself (OverwriteCells); here we only record them. Cells whose
    nbgrader id is unknown or repeated lose their nbgrader metadata, so
    they count for nothing. Deleted locked or graded cells are inserted
    again after the cell that preceded them in the released version.
    """
    import copy

    reference = [c for c in released.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id")]
    by_id = {c.metadata.nbgrader.grade_id: c for c in reference}
    originals = {c.metadata.nbgrader.grade_id: c.source
                 for c in instructor.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id")}
    seen, edited, forged = set(), [], 0
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        if gid not in by_id or gid in seen:
            del cell.metadata["nbgrader"]
            forged += 1
            continue
        seen.add(gid)
        ref = by_id[gid]
        locked = ref.metadata.nbgrader.get("locked")
        if locked and (cell.source not in (ref.source, originals.get(gid))
                       or cell.cell_type != ref.cell_type):
            edited.append(gid)
    deleted = []
    order = [c.metadata.nbgrader.grade_id for c in reference]
    for k, gid in enumerate(order):
        meta = by_id[gid].metadata.nbgrader
        if gid in seen or not (meta.get("locked") or meta.get("grade")):
            continue
        position = 0
        for previous in reversed(order[:k]):
            index = next((i for i, c in enumerate(nb.cells)
                          if c.metadata.get("nbgrader", {}).get("grade_id")
                          == previous), None)
            if index is not None:
                position = index + 1
                break
        cell = copy.deepcopy(by_id[gid])
        cell["id"] = f"restored-{k}"
        nb.cells.insert(position, cell)
        seen.add(gid)
        deleted.append(gid)
    notes = []
    if deleted:
        notes.append("deleted cells put back: " + ", ".join(deleted))
    if edited:
        notes.append("edited test or setup cells restored to the original: "
                     + ", ".join(edited))
    if forged:
        notes.append(f"{forged} cell(s) with unknown or repeated nbgrader "
                     "ids were not graded")
    return notes


def _read_submission(path):
    """The submission as a notebook, or (None, reason)."""
    import nbformat

    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        return None, f"cannot read the file ({err.strerror})"
    if len(raw) > 50_000_000:
        return None, "the file is larger than 50 MB"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return None, f"not a valid notebook file (invalid JSON: {err})"
    if not isinstance(data, dict) or data.get("nbformat") != 4 or not (
            isinstance(data.get("cells"), list)):
        return None, "not a Jupyter notebook in format 4"
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(json.dumps(data), as_version=4)
            nbformat.validate(nb)
    except Exception as err:  # nbformat raises many kinds
        message = str(err).strip().splitlines()[0] if str(err).strip() else (
            type(err).__name__)
        return None, f"not a valid Jupyter notebook ({message[:200]})"
    return nb, ""


def _last_error_line(text):
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else "unknown error"


def _failure_reason(result, timeout):
    """Why nbgrader autograde failed, in words, from its log."""
    text = (result.get("log") or "") + "\n" + (result.get("error") or "")
    if "DeadKernelError" in text:
        return ("the Python kernel died while running this notebook (for "
                "example os._exit(), a crash in compiled code or running out "
                "of memory), so it could not be graded")
    if "Timeout waiting for IOPub" in text:
        return (f"a cell ran past the time limit of {timeout} s and did not "
                "stop when interrupted, so the notebook could not be graded")
    if "kernel_info" in text or "Kernel didn't respond" in text:
        return "the Python kernel did not start, so nothing was graded"
    errors = [line for line in text.splitlines()
              if re.match(r"\s*\w+(\.\w+)*(Error|Exception): ", line)
              and "NbGraderException" not in line]
    detail = errors[-1].strip()[:300] if errors else _last_error_line(text)
    return f"nbgrader could not grade this notebook ({detail})"


def _grade_one(course, job, released, instructor, timeout):
    """Autograde one submission in ``course``; returns the CSV row (dict)."""
    import nbformat
    from nbgrader.api import Gradebook
    from nbgrader.converters import Autograde, GenerateFeedback

    student, name = job["student"], job["assignment"]
    feedback = Path(job["feedback"])
    feedback.parent.mkdir(parents=True, exist_ok=True)
    row = {"student_id": student, "assignment": name, "score": 0.0,
           "max_score": job["max_score"], "manual_points": 0.0,
           "feedback": str(feedback)}

    def finish(status, reason):
        row.update(status=status, reason=reason)
        feedback.write_text(_feedback_page(
            student, name, row["score"], row["max_score"], status, reason),
            encoding="utf-8")
        return row

    nb, problem = _read_submission(job["path"])
    if nb is None:
        return finish("invalid", problem)
    notes = _repair(nb, released, instructor)
    nb.metadata["kernelspec"] = released.metadata.get("kernelspec", {})
    for kind in ("submitted", "autograded", "feedback"):
        shutil.rmtree(course.root / kind / student / name, ignore_errors=True)
    target = course.root / "submitted" / student / name / f"{name}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(nb, target)

    result = course.run(Autograde, name, student, create_student=True)
    if not result["success"]:
        return finish("failed", "; ".join(
            notes + [_failure_reason(result, timeout)]))

    graded = nbformat.read(
        course.root / "autograded" / student / name / f"{name}.ipynb", 4)
    for index, cell in enumerate(graded.cells):
        for output in cell.get("outputs", []):
            if output.get("ename") == "CellTimeoutError":
                gid = cell.metadata.get("nbgrader", {}).get("grade_id")
                where = f"cell {index + 1}" + (f" ({gid})" if gid else "")
                notes.append(f"{where} was stopped after the time limit of "
                             f"{timeout} s")
                break
    with Gradebook(course.db_url) as gb:
        submission = gb.find_submission(name, student)
        grades = [g for n in submission.notebooks for g in n.grades]
        row["score"] = float(sum(g.auto_score or 0.0 for g in grades))
        row["max_score"] = float(sum(g.max_score for g in grades))
        row["manual_points"] = float(sum(
            g.max_score for g in grades if g.auto_score is None))
    if row["manual_points"]:
        notes.append(f"{_fmt(row['manual_points'])} point(s) of written "
                     "answers to be graded by hand")
    reason = "; ".join(notes)
    row.update(status="graded", reason=reason)

    result = course.run(GenerateFeedback, name, student)
    page = course.root / "feedback" / student / name / f"{name}.html"
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    if not result["success"] or not text:
        return finish("graded", "; ".join(
            notes + ["the detailed feedback page could not be generated"]))
    if hidden_leaks(html_text(text), job["source"]):
        # Should not happen; never risk showing hidden tests.
        return finish("graded", "; ".join(
            notes + ["detailed feedback withheld by the grader"]))
    if reason:
        text = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + _note_html(
            reason), text, count=1)
    feedback.write_text(text, encoding="utf-8")
    return row


def _prepare(course, spec):
    """Generate the assignments in the course, once for all workers.

    The first worker (the leader) runs nbgrader generate_assignment and
    publishes a copy of its course as a template; the others, which load
    nbgrader meanwhile, copy the template instead of generating again.
    """
    if (course.root / ".prepared").exists():  # a restarted worker
        return
    template = Path(spec["template"])
    failed = template.with_name(template.name + ".failed")
    if spec["leader"]:
        try:
            for name, source in spec["assignments"].items():
                course.generate(name, Path(source))
            (course.root / ".prepared").touch()
            staging = template.with_name(template.name + ".tmp")
            shutil.copytree(course.root, staging)
            staging.rename(template)
        except BaseException:
            failed.touch()
            raise
        return
    deadline = time.monotonic() + 900
    while not template.exists():
        if failed.exists() or time.monotonic() > deadline:
            raise RuntimeError("the first grading worker could not prepare "
                               "the course")
        time.sleep(0.2)
    shutil.rmtree(course.root)
    shutil.copytree(template, course.root)


def _worker(spec_path):
    """Grading worker: prepares a course, then grades jobs read from stdin.

    Protocol: one JSON job per line on stdin; the worker answers "READY"
    once, then one JSON row per job on its original stdout. Everything else
    (nbgrader's logs, stray prints) goes to stderr.
    """
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    course = _Course(spec["course"], spec["timeout"])
    import nbformat

    _prepare(course, spec)
    released, instructor = {}, {}
    for name, source in spec["assignments"].items():
        instructor[name] = nbformat.read(source, 4)
        released[name] = nbformat.read(
            course.root / "release" / name / f"{name}.ipynb", 4)
    proto.write("READY\n")
    for line in sys.stdin:
        job = json.loads(line)
        job["source"] = spec["assignments"][job["assignment"]]
        try:
            row = _grade_one(course, job, released[job["assignment"]],
                             instructor[job["assignment"]], spec["timeout"])
        except Exception as err:  # never stop the batch
            import traceback

            traceback.print_exc()
            row = {"student_id": job["student"],
                   "assignment": job["assignment"], "score": 0.0,
                   "max_score": job["max_score"], "manual_points": 0.0,
                   "status": "failed", "feedback": job["feedback"],
                   "reason": f"internal grading error ({type(err).__name__}: "
                             f"{str(err)[:200]})"}
            Path(job["feedback"]).write_text(_feedback_page(
                job["student"], job["assignment"], 0.0, job["max_score"],
                "failed", row["reason"]), encoding="utf-8")
        proto.write(json.dumps(row) + "\n")


class _WorkerProcess:
    """A grading worker in its own process group, with line-based I/O."""

    def __init__(self, spec, log, env):
        self.log = open(log, "a", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "_worker",
             str(spec)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            text=True, encoding="utf-8", env=env, start_new_session=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def line(self, timeout):
        """The next line; None at end of output; raises queue.Empty."""
        return self.lines.get(timeout=timeout)

    def send(self, job):
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self.log.close()

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.log.close()


def _log_tail(path, lines=15):
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def _find_submissions(folder, names):
    """{(student, assignment): path or None}, plus warnings."""
    rows, warnings, students = {}, [], []
    for entry in sorted(Path(folder).iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        if not entry.is_dir():
            warnings.append(f"ignoring {entry.name}: submissions go in one "
                            "folder per student")
            continue
        students.append(entry)
    for entry in students:
        for name in names:
            path = entry / f"{name}.ipynb"
            nested = entry / name / f"{name}.ipynb"  # nbgrader's own layout
            path = path if path.is_file() else nested if nested.is_file() \
                else None
            rows[entry.name, name] = path
        for extra in sorted(entry.glob("*.ipynb")):
            if extra.stem not in names:
                warnings.append(f"ignoring {entry.name}/{extra.name}: not "
                                "one of the assignments being graded")
    return rows, warnings


def grade(folder, out_csv, names, *, feedback_dir=None, timeout=60, jobs=1,
          work_dir=None, source=SOURCE, submission_limit=None):
    """Grade every submission; write the CSV and the feedback files."""
    available = discover(source)
    out_csv = Path(out_csv)
    feedback_dir = Path(feedback_dir or out_csv.parent / "feedback")
    submissions, warnings = _find_submissions(folder, names)
    for warning in warnings:
        print(f"warning: {warning}", flush=True)
    info = {name: points(available[name]) for name in names}
    results, pending = [], []
    for (student, name), path in sorted(submissions.items()):
        auto, manual, _ = info[name]
        base = {"student_id": student, "assignment": name, "score": 0.0,
                "max_score": auto + manual, "manual_points": 0.0}
        page = feedback_dir / student / f"{name}.html"
        if not STUDENT_ID.fullmatch(student):
            base.update(status="invalid", reason=(
                f"the folder name {student!r} is not usable as a student id "
                "(letters, digits, . _ @ - only)"), feedback="")
            results.append(base)
        elif path is None:
            page.parent.mkdir(parents=True, exist_ok=True)
            reason = f"no {name}.ipynb was handed in"
            page.write_text(_feedback_page(student, name, 0, auto + manual,
                                           "missing", reason),
                            encoding="utf-8")
            base.update(status="missing", reason=reason, feedback=str(page))
            results.append(base)
        else:
            pending.append({"student": student, "assignment": name,
                            "path": str(Path(path).resolve()),
                            "feedback": str(page.resolve()),
                            "max_score": auto + manual})
    total = len(pending) + len(results)
    done = [0]
    lock = threading.Lock()

    def report(row):
        with lock:
            results.append(row)
            done[0] += 1
            manual = (f" (+{_fmt(row['manual_points'])} by hand)"
                      if row.get("manual_points") else "")
            extra = "" if row["status"] == "graded" else f": {row['reason']}"
            print(f"[{done[0]:>{len(str(total))}}/{total}] {row['student_id']} "
                  f"{row['assignment']}  {_fmt(row['score'])}/"
                  f"{_fmt(row['max_score'])}{manual}  {row['status']}{extra}",
                  flush=True)

    decided, results = results, []
    for row in decided:
        report(row)
    if pending:
        _run_workers(pending, names, available, report, timeout=timeout,
                     jobs=jobs, work_dir=work_dir,
                     submission_limit=submission_limit)
    results.sort(key=lambda r: (r["student_id"], r["assignment"]))
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in results:
            row = dict(row)
            for key in ("score", "max_score", "manual_points"):
                row[key] = _fmt(float(row[key]))
            if row.get("feedback"):
                row["feedback"] = os.path.relpath(row["feedback"],
                                                  out_csv.parent)
            writer.writerow(row)
    counts = {}
    for row in results:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"Wrote {out_csv} ({len(results)} rows: {summary}) and the "
          f"feedback files in {feedback_dir}")
    return results


def _run_workers(pending, names, available, report, *, timeout, jobs,
                 work_dir, submission_limit=None):
    tmp = None
    if work_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="posenc-grade-")
        work = Path(tmp.name)
    else:
        work = Path(work_dir)
        work.mkdir(parents=True, exist_ok=True)
    env = _environment(work)
    todo = queue.Queue()
    for job in pending:
        todo.put(job)
    cells = {name: points(available[name])[2] for name in names}
    fatal = []

    def limit(job):  # wall-clock budget for one submission
        if submission_limit:
            return submission_limit
        return timeout * (cells[job["assignment"]] + 10) + 120

    def slot(number):
        spec = work / f"worker-{number}.json"
        spec.write_text(json.dumps({
            "course": str(work / f"course-{number}"), "timeout": timeout,
            "template": str(work / "course-template"), "leader": number == 0,
            "assignments": {n: str(available[n]) for n in names}}))
        log = work / f"worker-{number}.log"
        worker = None
        while not fatal:
            try:
                job = todo.get_nowait()
            except queue.Empty:
                break
            if worker is None:
                worker = _WorkerProcess(spec, log, env)
                try:
                    ready = worker.line(timeout=900)
                except queue.Empty:
                    ready = None
                if ready != "READY":
                    worker.kill()
                    fatal.append(f"a grading worker did not start; its log "
                                 f"ends with:\n{_log_tail(log)}")
                    break
            worker.send(job)
            try:
                line = worker.line(timeout=limit(job))
            except queue.Empty:
                line = "timeout"
            if line is None or line == "timeout":
                worker.kill()
                worker = None
                reason = (f"grading took longer than {limit(job)} s and was "
                          "stopped" if line == "timeout" else
                          "the grading process died: "
                          + _last_error_line(_log_tail(log, 3)))
                Path(job["feedback"]).write_text(_feedback_page(
                    job["student"], job["assignment"], 0, job["max_score"],
                    "failed", reason), encoding="utf-8")
                row = {"student_id": job["student"],
                       "assignment": job["assignment"], "score": 0.0,
                       "max_score": job["max_score"], "manual_points": 0.0,
                       "status": "failed", "reason": reason,
                       "feedback": job["feedback"]}
            else:
                row = json.loads(line)
            report(row)
        if worker is not None:
            worker.close()

    print(f"Grading {len(pending)} submission(s) with {jobs} worker(s), "
          f"{timeout} s per cell at most (loading nbgrader takes a few "
          "seconds)...", flush=True)
    threads = [threading.Thread(target=slot, args=(k,), daemon=True)
               for k in range(max(1, min(jobs, len(pending))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=0.5)
    if tmp is not None:
        tmp.cleanup()
    if fatal:
        raise SystemExit(f"error: {fatal[0]}")


# --------------------------------------------------------------------- CLI


def _names(requested, source):
    available = discover(source)
    if not available:
        raise SystemExit(f"error: no assignments found in {source}")
    unknown = [n for n in requested or [] if n not in available]
    if unknown:
        raise SystemExit(f"error: unknown assignment(s) {', '.join(unknown)}; "
                         f"available: {', '.join(available)}")
    return list(requested or available)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python tools/assignments.py",
        description="Release and grade the book's nbgrader assignments, "
                    "offline.")
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help="folder of instructor versions "
                             "(default: assignments/source)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the assignments and their points")
    rel = sub.add_parser("release", help="write the student versions")
    rel.add_argument("out_dir", type=Path)
    rel.add_argument("--assignment", action="append", metavar="NAME",
                     help="only this assignment (repeatable)")
    rel.add_argument("--force", action="store_true",
                     help="overwrite notebooks already in OUT_DIR")
    gra = sub.add_parser(
        "grade", help="grade SUBMISSIONS_DIR/STUDENT/ASSIGNMENT.ipynb")
    gra.add_argument("submissions", type=Path)
    gra.add_argument("--out", type=Path, required=True, help="CSV to write")
    gra.add_argument("--feedback", type=Path, default=None,
                     help="folder for the feedback files (default: "
                          "'feedback' beside the CSV)")
    gra.add_argument("--assignment", action="append", metavar="NAME",
                     help="grade this assignment (repeatable; default: every "
                          "assignment that someone handed in); a student "
                          "without it gets 'missing'")
    gra.add_argument("--timeout", type=int, default=60,
                     help="seconds each cell may run (default 60)")
    gra.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                     help="submissions graded in parallel")
    gra.add_argument("--submission-time-limit", type=int, default=None,
                     metavar="SECONDS",
                     help="stop grading a submission after this long, in "
                          "case it hangs despite the limit per cell (default: "
                          "the limit per cell times the number of cells, "
                          "plus a margin)")
    gra.add_argument("--work-dir", type=Path, default=None,
                     help="keep nbgrader's course folders and logs here "
                          "instead of a temporary folder")
    chk = sub.add_parser(
        "check-book", help="fail if a built book shows instructor material")
    chk.add_argument("html_dir", type=Path, nargs="?",
                     default=REPO / "_build" / "html")
    sub.add_parser("_worker").add_argument("spec")
    args = parser.parse_args(argv)

    if args.command == "_worker":
        _worker(args.spec)
        return 0
    if args.command == "check-book":
        if not args.html_dir.is_dir():
            raise SystemExit(f"error: {args.html_dir} is not a folder")
        problems = check_book(args.html_dir, args.source)
        for problem in problems:
            print(f"instructor material in the book: {problem}")
        if problems:
            return 1
        print(f"{args.html_dir}: no solution markers, hidden tests or model "
              "answers of the assignments.")
        return 0
    names = _names(getattr(args, "assignment", None), args.source)
    available = discover(args.source)
    if args.command == "list":
        for name in names:
            auto, manual, _ = points(available[name])
            print(f"{name:24} {auto:g} + {manual:g} points  "
                  f"{title(available[name])}")
        return 0
    if args.command == "release":
        release(args.out_dir, names, args.source, force=args.force)
        return 0
    if not args.submissions.is_dir():
        raise SystemExit(f"error: {args.submissions} is not a folder")
    if args.timeout < 1 or args.jobs < 1:
        raise SystemExit("error: --timeout and --jobs must be at least 1")
    if not args.assignment:
        handed_in = {p.stem for p in args.submissions.glob("*/*.ipynb")}
        handed_in |= {p.stem for p in args.submissions.glob("*/*/*.ipynb")
                      if p.parent.name == p.stem}
        names = [n for n in names if n in handed_in]
        if not names:
            raise SystemExit(
                f"error: no submissions found: expected files like "
                f"{args.submissions}/STUDENT/{next(iter(available))}.ipynb")
    start = time.monotonic()
    grade(args.submissions, args.out, names, feedback_dir=args.feedback,
          timeout=args.timeout, jobs=args.jobs, work_dir=args.work_dir,
          source=args.source, submission_limit=args.submission_time_limit)
    print(f"Done in {time.monotonic() - start:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
