"""Grading: a class's submissions, checked where the students' code cannot reach.

For each submission (one grading worker process handles one at a time):

1. ``flags.analyse`` reads the submitted notebook (in the worker, before
   any of its code runs) for what a teacher should look at.
2. Phase 1: ``nbgrader autograde`` runs it, as in any nbgrader course, in a
   temporary course generated from the INSTRUMENTED instructor notebook
   (``checker.instrument``: each test cell records the calls of the
   student's functions and the student's variables), in a kernel that
   starts through ``kernel_guard.py`` (``isolation.py``), in a folder that
   holds only the handout's files and the submission. Test cells that were
   edited or deleted are restored first (``_repair``), as before.
3. Phase 2: ``checker.replay`` runs the instructor notebook's locked cells
   and test cells (hidden tests included) in a separate clean process, the
   student's names bound to what phase 1 recorded. Its verdicts are the
   points: the student's code never runs there, so it cannot change the
   checks, their helpers, numpy or posenc_core.
4. The verdicts go into nbgrader's gradebook, with the teacher's marks for
   the written answers (``marks.py``), and ``report.py`` writes the CSV row
   and the feedback page (each test cell's verdict, the warnings a cell
   printed, "not yet marked" for written answers without a mark).

Workers run in parallel (``--jobs``); a worker that hangs is killed and
restarted, and its submission gets "failed". The students' code runs as
the current user: this is not a sandbox (neither is nbgrader).
"""

import copy
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

from . import checker, flags, matching, report
from .course import Course
from .isolation import KernelPlace, base_environment
from .marks import read_marks, unused_marks
from .sources import (
    GRADING,
    REPO,
    SOURCE,
    answer_names,
    cell_source,
    discover,
    hidden_leaks,
    html_text,
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

    def __init__(self, name, path, variant_seed=None):
        import nbformat

        self.name, self.path = name, Path(path)
        self.instructor = nbformat.reads(json.dumps(instructor_notebook(
            name, path, variant_seed)), as_version=4)
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

    def handout_files(self, folder):
        """The handout's files in ``folder`` (a course's source/NAME)."""
        folder = Path(folder)
        return [folder / "posenc_core.py"] + (
            [folder / "posenc_lab"] if self.lab else [])


def student_names(nb):
    """The names phase 1 records and phase 2 binds to the records.

    The names bound by the answer cells (``sources.answer_names``), and the
    setup helper ``observed`` when a locked cell defines it.
    """
    names = set(answer_names(nb))
    for cell in nb["cells"]:
        if (cell.get("cell_type") == "code" and nbgrader_meta(cell).get("locked")
                and re.search(rf"^def {checker.OBSERVED}\(", cell_source(cell),
                              flags=re.M)):
            names.add(checker.OBSERVED)
    return sorted(names)


def _flag_text(flag):
    return f"{flag.code}: {flag}"


def _flags(nb, task, released):
    """What ``flags.analyse`` finds in the submission ``nb`` (texts)."""
    found = flags.analyse(nb, released, task.instructor,
                          forbidden=task.forbidden)
    return [_flag_text(flag) for flag in found]


def _files_flags(place, folder, limit=5):
    """Flags from the guard's log: files opened outside the grading folder."""
    if not Path(folder).is_dir():
        return []
    found = [_flag_text(flag)
             for flag in flags.flags_from_guard_log(place.log, folder)]
    if len(found) > limit:
        found = found[:limit] + [f"reads-files: and {len(found) - limit} "
                                 "more in the guard's log"]
    return found


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


def _warnings(graded, task):
    """{grade_id: first warning line} of test cells whose code wrote stderr."""
    found = {}
    for cell in graded.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid not in task.tests:
            continue
        text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                       if o.get("output_type") == "stream"
                       and o.get("name") == "stderr")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            warning = next((line for line in lines if "Warning" in line),
                           lines[0])
            # "/path/to/file.py:12: RuntimeWarning: ..." -> "RuntimeWarning: ..."
            warning = re.sub(r"^.*?:\d+: (?=\w*Warning)", "", warning)
            found[gid] = warning[:300]
    return found


def _store_grades(course, task, student, verdicts, marks):
    """Phase 2's points and the teacher's marks, into the gradebook.

    So that nbgrader's feedback (GetGrades) shows them. Returns the
    automatic score.
    """
    from nbgrader.api import Gradebook, MissingEntry

    auto = 0.0
    with Gradebook(course.db_url) as gb:
        for grade_id, points in task.tests.items():
            passed = verdicts.get(grade_id, {}).get("passed", False)
            auto += points if passed else 0.0
            try:
                grade = gb.find_grade(grade_id, task.name, task.name, student)
            except MissingEntry:
                continue
            grade.auto_score = points if passed else 0.0
            grade.needs_manual_grade = False
        for grade_id, (points, comment) in marks.items():
            try:
                grade = gb.find_grade(grade_id, task.name, task.name, student)
            except MissingEntry:
                continue
            grade.manual_score = float(points)
            grade.needs_manual_grade = False
            if comment:
                try:
                    gb.find_comment(grade_id, task.name, task.name,
                                    student).manual_comment = comment
                except MissingEntry:
                    pass
        gb.db.commit()
    return auto


def _verdict_output(verdict, points):
    if verdict.get("passed"):
        text = f"Checked by the grader: passed ({report.fmt(points)} points)"
    else:
        message = verdict.get("message") or "failed"
        text = (f"Checked by the grader: failed (0 of {report.fmt(points)} "
                f"points): {message}")
    return {"output_type": "stream", "name": "stdout", "text": text + "\n"}


def _feedback_notebook(path, task, verdicts):
    """The autograded notebook, as the feedback shows it.

    Test cells get back their own code (not the recording wrapper that
    ran; nbgrader's feedback removes the hidden tests from it), and a last
    output line with the verdict of phase 2.
    """
    import nbformat

    graded = nbformat.read(path, 4)
    originals = {nbgrader_meta(c).get("grade_id"): cell_source(c)
                 for c in task.instructor["cells"]}
    for cell in graded.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in task.tests:
            cell.source = originals[gid]
            cell.outputs.append(nbformat.from_dict(_verdict_output(
                verdicts.get(gid, {}), task.tests[gid])))
    nbformat.write(graded, path)


def _grade_one(course, job, task, released, place, timeout):
    """Grade one submission in ``course``; returns the row (a dict)."""
    import nbformat
    from nbgrader.converters import Autograde, GenerateFeedback

    student, name = job["student"], job["assignment"]
    feedback = Path(job["feedback"])
    feedback.parent.mkdir(parents=True, exist_ok=True)
    marks = {q: tuple(v) for q, v in job.get("marks", {}).items()}
    row = report.new_row(student, name, task, feedback, marks)
    notes = list(job.get("notes", []))

    def finish(status, reason):
        row.update(status=status, base_reason=reason)
        report.finish_row(row, task)
        feedback.write_text(report.feedback_page(row), encoding="utf-8")
        return row

    nb, problem = _read_submission(job["path"])
    if nb is None:
        return finish("invalid", "; ".join(notes + [problem]))
    row["flags"] = _flags(nb, task, released)
    notes += _repair(nb, released, nbformat.from_dict(task.instructor))
    nb.metadata["kernelspec"] = released.metadata.get("kernelspec", {})
    for kind in ("submitted", "autograded", "feedback"):
        shutil.rmtree(course.root / kind / student / name, ignore_errors=True)
    target = course.root / "submitted" / student / name / f"{name}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(nb, target)

    place.reset()
    result = course.run(Autograde, name, student, create_student=True)
    row["flags"] += _files_flags(place, course.root / "autograded" / student
                                 / name)
    if not result["success"]:
        return finish("failed", "; ".join(
            notes + [_failure_reason(result, timeout)]))

    autograded = course.root / "autograded" / student / name / f"{name}.ipynb"
    graded = nbformat.read(autograded, 4)
    for index, cell in enumerate(graded.cells):
        for output in cell.get("outputs", []):
            if output.get("ename") == "CellTimeoutError":
                gid = cell.metadata.get("nbgrader", {}).get("grade_id")
                where = f"cell {index + 1}" + (f" ({gid})" if gid else "")
                notes.append(f"{where} was stopped after the time limit of "
                             f"{timeout} s")
                break
    for gid, warning in _warnings(graded, task).items():
        notes.append(f"{gid} printed a warning, which costs no points: "
                     f"{warning}")

    replay_dir = place.private / "replay"
    shutil.rmtree(replay_dir, ignore_errors=True)
    verdicts = checker.replay(
        task.instructor, place.kept, task.student_names,
        workdir=replay_dir, timeout=max(120, 4 * timeout),
        copy_paths=task.handout_files(course.root / "source" / name))
    row["verdicts"] = verdicts
    row["auto_score"] = _store_grades(course, task, student, verdicts, marks)
    row.update(status="graded", base_reason="; ".join(notes))
    report.finish_row(row, task)
    _feedback_notebook(autograded, task, verdicts)

    result = course.run(GenerateFeedback, name, student)
    page = course.root / "feedback" / student / name / f"{name}.html"
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    if not result["success"] or not text:
        notes.append("the detailed feedback page could not be generated")
        return finish(row["status"], "; ".join(notes))
    text = report.annotate(text, row)
    if hidden_leaks(html_text(text), task.instructor):
        # Should not happen; never risk showing hidden tests.
        notes.append("detailed feedback withheld by the grader")
        return finish(row["status"], "; ".join(notes))
    feedback.write_text(text, encoding="utf-8")
    return row


def _prepare(course, spec, tasks):
    """Generate the assignments in the course, once for all workers.

    The course gets the instrumented instructor notebooks (what the grading
    kernel runs) and, in ``handout/``, a course that released the students'
    version (to find edited, deleted and unchanged cells). The first worker
    (the leader) runs nbgrader generate_assignment and publishes a copy of
    its course as a template; the others, which load nbgrader meanwhile,
    copy the template instead of generating again.
    """
    if (course.root / ".prepared").exists():  # a restarted worker
        return
    template = Path(spec["template"])
    failed = template.with_name(template.name + ".failed")
    if spec["leader"]:
        try:
            handout = Course(course.root / "handout", spec["timeout"])
            for name, task in tasks.items():
                handout.generate(name, task.instructor, task.lab)
                course.generate(name, checker.instrument(
                    task.instructor, task.student_names), task.lab)
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


def worker(spec_path):
    """Grading worker: prepares a course, then grades jobs read from stdin.

    Protocol: one JSON job per line on stdin; the worker answers "READY"
    once, then one JSON row per job on its original stdout. Everything else
    (nbgrader's logs, stray prints) goes to stderr.
    """
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    course = Course(spec["course"], spec["timeout"])
    import nbformat

    tasks = {name: Assignment(name, path, spec["variant_seed"])
             for name, path in spec["assignments"].items()}
    _prepare(course, spec, tasks)
    place = KernelPlace(spec["work"], spec["number"])
    _keep_records(course, place)
    released = {name: nbformat.read(course.root / "handout" / "release" / name
                                    / f"{name}.ipynb", 4) for name in tasks}
    proto.write("READY\n")
    for line in sys.stdin:
        job = json.loads(line)
        task = tasks[job["assignment"]]
        try:
            row = _grade_one(course, job, task, released[task.name], place,
                             spec["timeout"])
        except Exception as err:  # never stop the batch
            import traceback

            traceback.print_exc()
            row = _failed_row(job, task, "internal grading error ("
                              f"{type(err).__name__}: {str(err)[:200]})")
        proto.write(json.dumps(row) + "\n")


def _keep_records(course, place):
    """Make nbgrader's Execute keep each test cell's records as it ends.

    nbgrader's Execute defines ``on_cell_executed`` as a method (its own
    error handling), so the hook after a cell is a subclass; the hook
    before a cell is nbclient's ``on_cell_execute`` setting.
    """
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    before, after = place.snapshot_hooks()

    class RecordingExecute(Execute):
        def on_cell_executed(self, **kwargs):
            super().on_cell_executed(**kwargs)
            after(**kwargs)

    default = Autograde.class_traits()["autograde_preprocessors"].default()
    course.config.Autograde.autograde_preprocessors = [
        RecordingExecute if pp is Execute else pp for pp in default]
    course.config.Execute.on_cell_execute = before


def _failed_row(job, task, reason):
    row = report.new_row(job["student"], job["assignment"], task,
                         job["feedback"], job.get("marks", {}))
    row.update(status="failed", base_reason="; ".join(
        job.get("notes", []) + [reason]))
    report.finish_row(row, task)
    Path(job["feedback"]).parent.mkdir(parents=True, exist_ok=True)
    Path(job["feedback"]).write_text(report.feedback_page(row),
                                     encoding="utf-8")
    return row


class _WorkerProcess:
    """A grading worker in its own process group, with line-based I/O."""

    def __init__(self, spec, log, env):
        self.log = open(log, "a", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, str(TOOL), "_worker",
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


def _load_marks(path, tasks):
    """{(student, assignment): {question: Mark}} from the marks CSV."""
    if path is None:
        return {}
    return read_marks(path, {name: dict(task.written)
                                   for name, task in tasks.items()})


def find_work(folder, names, available):
    """(jobs to grade, rows decided without grading, unmatched rows).

    ``matching.find_submissions`` reads the messy folder; every student
    (a folder, or an id some notebook was matched to) gets a row per
    assignment in ``names``; a notebook that fits no student or assignment
    gets a row of its own with status "unmatched".
    """
    identify = matching.content_identifier({n: available[n] for n in names})
    matched, unmatched = matching.find_submissions(folder, names, identify)
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
          variant_seed=None, marks=None):
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
        page.write_text(report.feedback_page(row), encoding="utf-8")
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
        _run_workers(pending, tasks, progress, timeout=timeout, jobs=jobs,
                     work_dir=work_dir, submission_limit=submission_limit,
                     variant_seed=variant_seed)
    report.write_csv(results, out_csv)
    counts = {}
    for row in results:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"Wrote {out_csv} ({len(results)} rows: {summary}) and the "
          f"feedback files in {feedback_dir}")
    return results


def _run_workers(pending, tasks, progress, *, timeout, jobs, work_dir,
                 submission_limit=None, variant_seed=None):
    tmp = None
    if work_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="posenc-grade-")
        work = Path(tmp.name)
    else:
        work = Path(work_dir)
        work.mkdir(parents=True, exist_ok=True)
    work = work.resolve()
    base = base_environment(work)
    todo = queue.Queue()
    for job in pending:
        todo.put(job)
    fatal = []

    def limit(job):  # wall-clock budget for one submission
        if submission_limit:
            return submission_limit
        return timeout * (tasks[job["assignment"]].code_cells + 14) + 240

    def slot(number):
        spec = work / f"worker-{number}.json"
        spec.write_text(json.dumps({
            "course": str(work / f"course-{number}"), "timeout": timeout,
            "template": str(work / "course-template"), "leader": number == 0,
            "work": str(work), "number": number, "variant_seed": variant_seed,
            "assignments": {n: str(t.path) for n, t in tasks.items()}}))
        place = KernelPlace(work, number)
        place.install()
        env = place.environment(base)
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
                row = _failed_row(job, tasks[job["assignment"]], reason)
            else:
                row = json.loads(line)
            progress(row)
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
