"""Grading: workers that autograde submissions in a temporary course."""

import csv
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

from .course import Course, environment
from .report import CSV_COLUMNS, feedback_page, fmt, note_html
from .sources import REPO, SOURCE, STUDENT_ID, discover, hidden_leaks, html_text, points

TOOL = REPO / "tools" / "assignments.py"


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
        feedback.write_text(feedback_page(
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
        notes.append(f"{fmt(row['manual_points'])} point(s) of written "
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
        text = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + note_html(
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
            Path(job["feedback"]).write_text(feedback_page(
                job["student"], job["assignment"], 0.0, job["max_score"],
                "failed", row["reason"]), encoding="utf-8")
        proto.write(json.dumps(row) + "\n")


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
            page.write_text(feedback_page(student, name, 0, auto + manual,
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
            manual = (f" (+{fmt(row['manual_points'])} by hand)"
                      if row.get("manual_points") else "")
            extra = "" if row["status"] == "graded" else f": {row['reason']}"
            print(f"[{done[0]:>{len(str(total))}}/{total}] {row['student_id']} "
                  f"{row['assignment']}  {fmt(row['score'])}/"
                  f"{fmt(row['max_score'])}{manual}  {row['status']}{extra}",
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
                row[key] = fmt(float(row[key]))
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
    env = environment(work)
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
                Path(job["feedback"]).write_text(feedback_page(
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

