"""Grading: a class's submissions, each in its own sandbox, checked outside it.

For each submission, a grading process of its own (``python -I
tools/assignments.py _grade JOB``, at most ``--jobs`` at a time, each with
a time limit) reads the notebook, puts back deleted or edited test and
setup cells (``_repair``), reads the flags from the repaired notebook
(``flags.py``) and runs it with ``session.run_submission``: the student's
cells in a kernel inside a bubblewrap sandbox (``sandbox.py``), the test
cells in the grading process itself, calling the student's functions in
the kernel on the tests' inputs. The verdicts are the points; the
teacher's marks for the written answers are folded in (``marks.py``), and
``report.py`` writes the CSV row, ``feedback.py`` the feedback page.
"""

import copy
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from . import feedback, flags, matching, report
from .marks import read_marks, unused_marks
from .sources import (
    GRADING,
    REPO,
    SOURCE,
    answer_names,
    cell_source,
    discover,
    instructor_notebook,
    nbgrader_meta,
    uses_lab,
)

TOOL = REPO / "tools" / "assignments.py"


class Assignment:
    """What grading one assignment needs; the same in every process.

    ``instructor`` is the instructor notebook (an nbformat node), or its
    class variant; ``tests`` and ``written`` map the grade ids of the test cells
    and of the written answers to their points.
    """

    def __init__(self, name, path, variant_seed=None, prepared=None):
        import nbformat

        self.name, self.path = name, Path(path)
        notebook = (json.loads(Path(prepared).read_text(encoding="utf-8"))
                    if prepared else instructor_notebook(name, path,
                                                         variant_seed))
        self.instructor = nbformat.reads(json.dumps(notebook), as_version=4)
        self.lab = uses_lab(self.instructor)
        self.tests, self.written = {}, {}
        self.code_cells = 0
        for cell in self.instructor["cells"]:
            meta = nbgrader_meta(cell)
            self.code_cells += cell.get("cell_type") == "code"
            if meta.get("grade"):
                target = self.written if meta.get("solution") else self.tests
                target[meta["grade_id"]] = float(meta.get("points", 0))
        self.auto_max = sum(self.tests.values())
        self.written_max = sum(self.written.values())
        self.student_names = student_names(self.instructor)
        spec = GRADING / f"{name}.json"
        self.forbidden = []
        if spec.is_file():
            from .variants import load_spec

            self.forbidden = list(load_spec(spec).get("forbidden", []))


    def cells(self, nb):
        """The cells of the repaired submission ``nb`` as the grader runs them.

        Test cells and locked cells get the instructor's source (the test
        cells with their hidden tests: they run only in the checker); every
        other code cell is the student's.
        """
        sources = {nbgrader_meta(c).get("grade_id"): c
                   for c in self.instructor["cells"]
                   if nbgrader_meta(c).get("grade_id")}
        out = []
        for number, cell in enumerate(nb.cells, start=1):
            if cell.cell_type != "code":
                continue
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            original = sources.get(gid)
            meta = nbgrader_meta(original) if original is not None else {}
            if gid in self.tests:
                kind = "test"
            elif original is not None and original.get(
                    "cell_type") == "code" and meta.get("locked") and not (
                    meta.get("solution")):
                kind = "locked"
            else:
                out.append({"kind": "student", "grade_id": gid,
                            "source": cell.source, "number": number})
                continue
            out.append({"kind": kind, "grade_id": gid, "number": number,
                        "source": cell_source(original)})
        return out


def student_names(nb):
    """The names the checker binds: those the answer cells define."""
    return sorted(set(answer_names(nb)))


def _flag_text(flag):
    return f"{flag.code}: {flag}"


def _flags(nb, task, released):
    """What ``flags.analyse`` finds in the submission ``nb`` (texts)."""
    found = flags.analyse(nb, released, task.instructor,
                          forbidden=task.forbidden)
    return [_flag_text(flag) for flag in found]


def _repair(nb, released, instructor):
    """Put back deleted test cells, drop forged ones; say what was done.

    Locked cells (setup and tests) that were edited are restored by
    nbgrader itself (OverwriteCells); here we only record them. Cells whose
    nbgrader id is unknown or repeated lose their nbgrader metadata, so
    they count for nothing. Deleted locked or graded cells are inserted
    again after the cell that preceded them in the released version.
    """

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




def grade_job(job, started=None):
    """Grade the submission of ``job`` (a dict); returns its row.

    ``started()`` is called when its kernel is ready.
    """
    import nbformat

    from . import session

    task = Assignment(job["assignment"], job["path_source"],
                      prepared=job["instructor"])
    released = nbformat.read(job["released"], 4)
    page = Path(job["feedback"])
    marks = {q: tuple(v) for q, v in job.get("marks", {}).items()}
    row = report.new_row(job["student"], task.name, task, page, marks)
    notes = list(job.get("notes", []))
    nb, problem = _read_submission(job["path"])
    if nb is None:
        row.update(status="invalid", base_reason="; ".join(notes + [problem]))
        report.finish_row(row, task)
        feedback.write(page, row)
        return row
    notes += _repair(nb, released, nbformat.from_dict(task.instructor))
    row["flags"] = _flags(nb, task, released)
    conn = session.workspace(job["work"])
    result = session.run_submission(
        task.cells(nb), handout=job["handout"], conn_dir=conn,
        exclude=[REPO], names=task.student_names, timeout=job["timeout"],
        limits=job.get("limits"), started=started)
    shutil_rmtree(conn)
    verdicts = result["verdicts"]
    notes += result["notes"]
    for gid, kinds in result["warnings"].items():
        notes.append(f"{gid}: the code printed a {', '.join(kinds)} (no "
                     "points lost)")
    row["verdicts"] = verdicts
    row["auto_score"] = sum(points for gid, points in task.tests.items()
                            if verdicts.get(gid, {}).get("passed"))
    row.update(status="failed" if result["stopped"] else "graded",
               base_reason="; ".join(notes))
    report.finish_row(row, task)
    feedback.write(page, row, nb, task)
    return row


def shutil_rmtree(path):
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def run_job(job_path):
    """``_grade JOB``: grade one job; the row is printed as JSON."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.path.insert(0, str(REPO))  # the checker's genuine posenc_core
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))

    def started():
        proto.write("RUNNING\n")
        proto.flush()

    try:
        row = grade_job(job, started)
    except Exception as err:  # never stop the batch
        import traceback

        traceback.print_exc()
        row = {"error": f"internal grading error ({type(err).__name__}: "
                        f"{str(err)[:200]})"}
    proto.write(json.dumps(row) + "\n")
    proto.close()


def _failed_row(job, task, reason):
    row = report.new_row(job["student"], job["assignment"], task,
                         job["feedback"], job.get("marks", {}))
    row.update(status="failed", base_reason="; ".join(
        job.get("notes", []) + [reason]))
    report.finish_row(row, task)
    feedback.write(Path(job["feedback"]), row)
    return row


def _load_marks(path, tasks):
    """{(student, assignment): {question: Mark}} from the marks CSV."""
    if path is None:
        return {}
    return read_marks(path, {name: dict(task.written)
                                   for name, task in tasks.items()})


def find_work(folder, names, available):
    """(jobs to grade, rows decided without grading, unmatched rows).

    ``matching.find_submissions`` reads the messy folder, matching each
    notebook among all the ``available`` assignments; only those of
    ``names`` are kept. Every student (a folder, or an id some notebook was
    matched to) gets a row per assignment in ``names``; a notebook that
    fits no student or assignment gets a row of its own with status
    "unmatched" (one taken for another assignment than ``names`` gets
    none).
    """
    identify = matching.content_identifier(dict(available))
    matched, unmatched = matching.find_submissions(folder, list(available),
                                                   identify)
    unmatched = [u for u in unmatched if u.assignment in ("", *names)]
    by_key = {(s.student_id, s.assignment): s for s in matched}
    students = {s.student_id for s in matched}
    for entry in Path(folder).iterdir():
        if entry.is_dir() and not entry.name.startswith((".", "_")):
            sid, _ = matching.student_id(entry.name)
            if sid:
                students.add(sid)
    found, missing = [], []
    for student in sorted(students):
        for name in names:
            submission = by_key.get((student, name))
            if submission is None:
                missing.append((student, name))
            else:
                found.append(submission)
    return found, missing, unmatched


def grade(folder, out_csv, names, *, feedback_dir=None, timeout=60, jobs=1,
          work_dir=None, source=SOURCE, submission_limit=None,
          variant_seed=None, marks=None, limits=None):
    """Grade every submission; write the CSV and the feedback files.

    ``names``: the assignments to grade; ``variant_seed``: grade against
    the class variant of that seed (as released with ``release
    --variant``); ``marks``: the teacher's marks for written answers (a CSV,
    see ``marks.py``). Returns the rows.
    """
    available = discover(source)
    tasks = {name: Assignment(name, available[name], variant_seed)
             for name in names}
    all_marks = _load_marks(marks, tasks)
    out_csv = Path(out_csv)
    feedback_dir = Path(feedback_dir or out_csv.parent / "feedback")
    found, missing, unmatched = find_work(folder, names, available)
    results, pending = [], []
    for item in unmatched:
        print(f"warning: not graded: {item.path}: {item.reason}", flush=True)
        results.append(report.unmatched_row(item, folder))
    for student, name in missing:
        page = feedback_dir / student / f"{name}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        row = report.new_row(student, name, tasks[name], page.resolve(), {})
        row.update(status="missing",
                   base_reason=f"no {name}.ipynb was handed in")
        report.finish_row(row, tasks[name])
        feedback.write(page, row)
        results.append(row)
    for sub in found:
        page = feedback_dir / sub.student_id / f"{sub.assignment}.html"
        given = all_marks.get((sub.student_id, sub.assignment), {})
        pending.append({
            "student": sub.student_id, "assignment": sub.assignment,
            "path": str(Path(sub.path).resolve()),
            "feedback": str(page.resolve()),
            "notes": [sub.note] if sub.note else [],
            "marks": {q: list(v) for q, v in given.items()}})
    graded = [(j["student"], j["assignment"]) for j in pending]
    for student, name in unused_marks(all_marks, graded):
        print(f"warning: marks for {student} {name}, which was not graded",
              flush=True)
    total = len(pending) + len(results)
    done = [0]
    lock = threading.Lock()

    def progress(row):
        with lock:
            results.append(row)
            done[0] += 1
            print(f"[{done[0]:>{len(str(total))}}/{total}] "
                  + report.progress_line(row), flush=True)

    decided, results = results, []
    for row in decided:
        progress(row)
    if pending:
        _run_jobs(pending, tasks, progress, timeout=timeout, jobs=jobs,
                  work_dir=work_dir, submission_limit=submission_limit,
                  limits=limits)
    report.write_csv(results, out_csv)
    counts = {}
    for row in results:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"Wrote {out_csv} ({len(results)} rows: {summary}) and the "
          f"feedback files in {feedback_dir}")
    return results




def _prepare(tasks, work):
    """The instructor and released notebooks of ``tasks``, written to ``work``.

    Released once per run with nbgrader (which every grading process then
    reads to find edited, deleted and unchanged cells).
    """
    from .course import Course
    from .release import copy_handout, release_environment

    prepared = {}
    copy_handout(work / "handout", lab=True)
    with release_environment(work / "release"):
        course = Course(work / "release" / "course")
        for name, task in tasks.items():
            released = course.generate(name, task.instructor)
            instructor = work / "prepared" / f"{name}.instructor.ipynb"
            instructor.parent.mkdir(parents=True, exist_ok=True)
            instructor.write_text(json.dumps(task.instructor),
                                  encoding="utf-8")
            copy = work / "prepared" / f"{name}.released.ipynb"
            copy.write_bytes(released.read_bytes())
            prepared[name] = (instructor, copy)
    return prepared


def _run_jobs(pending, tasks, progress, *, timeout, jobs, work_dir,
              submission_limit=None, limits=None):
    from . import sandbox

    try:
        sandbox.check()
    except RuntimeError as err:
        raise SystemExit(f"error: {err}") from None
    tmp = None
    if work_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="posenc-grade-")
        work = Path(tmp.name)
    else:
        work = Path(work_dir)
        work.mkdir(parents=True, exist_ok=True)
    work = work.resolve()
    os.chmod(work, 0o700)
    print(f"Grading {len(pending)} submission(s), {jobs} at a time, each "
          f"in its own sandbox, {timeout} s per cell at most...", flush=True)
    prepared = _prepare(tasks, work)
    todo = queue.Queue()
    for number, job in enumerate(pending):
        instructor, released = prepared[job["assignment"]]
        handout = [work / "handout" / "posenc_core.py"] + (
            [work / "handout" / "posenc_lab"]
            if tasks[job["assignment"]].lab else [])
        job.update(instructor=str(instructor), released=str(released),
                   handout=[str(p) for p in handout],
                   path_source=str(tasks[job["assignment"]].path),
                   timeout=timeout, work=str(work / "runs"), limits=limits,
                   number=number)
        todo.put(job)
    (work / "runs").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "JUPYTER", "IPYTHON"))}

    def limit(job):  # wall-clock budget for one submission
        if submission_limit:
            return submission_limit
        return timeout * (tasks[job["assignment"]].code_cells + 14) + 240

    def slot():
        while True:
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            spec = work / f"job-{job['number']}.json"
            spec.write_text(json.dumps(job), encoding="utf-8")
            log = work / f"job-{job['number']}.log"
            with open(log, "w", encoding="utf-8") as err:
                proc = subprocess.Popen(
                    [sys.executable, "-I", str(TOOL), "_grade", str(spec)],
                    stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                    text=True, encoding="utf-8", env=env,
                    start_new_session=True)
                lines = queue.Queue()
                threading.Thread(target=_read_lines, args=(proc, lines),
                                 daemon=True).start()
                out, reason = None, None
                # the kernel's start (slow on a busy machine) is not counted
                wait = 900
                while out is None and reason is None:
                    try:
                        line = lines.get(timeout=wait)
                    except queue.Empty:
                        reason = (f"grading took longer than {limit(job)} s "
                                  "and was stopped")
                        break
                    if line == "RUNNING":
                        wait = limit(job)
                    elif line is None:
                        out = ""
                    else:
                        out = line
                if reason is not None:
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            task = tasks[job["assignment"]]
            row = None
            if reason is None:
                try:
                    row = json.loads(out)
                except ValueError:
                    reason = ("the grading process died: "
                              + _last_line(log))
            if row is not None and "error" in row:
                reason, row = row["error"], None
            if row is None:
                row = _failed_row(job, task, reason)
            progress(row)

    threads = [threading.Thread(target=slot, daemon=True)
               for _ in range(max(1, min(jobs, len(pending))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=0.5)
    if tmp is not None:
        tmp.cleanup()


def _read_lines(proc, lines):
    for line in proc.stdout:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def _last_line(path):
    try:
        lines = Path(path).read_text(encoding="utf-8",
                                     errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "no log"
