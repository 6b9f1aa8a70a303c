"""Reporting: the grades CSV and the feedback pages.

A row (a dict) per student and assignment, and one per notebook that could
not be matched. Its CSV columns (``CSV_COLUMNS``):

``auto_score`` / ``auto_max``
    points of the automatic tests, as re-checked apart from the student's
    code (phase 2 of ``grade.py``);
``written_score`` / ``written_max``
    the teacher's marks for the written answers (``--marks``); EMPTY while
    any written answer is not yet marked (never 0 for "not marked");
``total`` / ``max_score``
    automatic plus written score (empty until every written answer is
    marked), beside the maximum;
``status``
    graded, flagged (graded, and something a teacher should look at: see
    ``flags``), missing, invalid (not a readable notebook), failed (could
    not be run to the end), unmatched (a notebook that fits no student or
    assignment);
``reason``
    in words: what the grader did or found, the flags, what is not yet
    marked;
``flags``
    the flags alone, separated by " | ";
``feedback``
    the feedback page, relative to the CSV.
"""

import csv
import os
from pathlib import Path

from .marks import NOT_MARKED, Mark, merge_marks

CSV_COLUMNS = ("student_id", "assignment", "auto_score", "auto_max",
               "written_score", "written_max", "total", "max_score", "status",
               "reason", "flags", "feedback")


def fmt(value):
    return f"{value:g}"


def new_row(student, assignment, task, feedback, marks):
    """A row before grading: nothing scored, the teacher's ``marks`` kept.

    ``marks``: {question: (points, comment)} for this student and
    assignment; ``task``: the ``grade.Assignment``.
    """
    return {"student_id": student, "assignment": assignment,
            "auto_score": 0.0, "auto_max": task.auto_max,
            "written_score": None, "written_max": task.written_max,
            "total": None, "max_score": task.auto_max + task.written_max,
            "status": "", "reason": "", "base_reason": "", "flags": [],
            "marks": {q: list(v) for q, v in marks.items()},
            "written": [], "verdicts": {}, "feedback": str(feedback)}


def finish_row(row, task):
    """Fill in the written score, total, status and reason of ``row``.

    The marks are folded in by ``marks.merge_marks`` (written_score and
    total stay empty until every written answer is marked, and the reason
    says which are "not yet marked"). May be called again after
    ``base_reason`` or ``status`` changed.
    """
    if row["flags"] and row["status"] == "graded":
        row["status"] = "flagged"
    parts = [row.get("base_reason", "")]
    if row["flags"]:
        parts.append("flags (hints, no points lost): "
                     + summary(row["flags"]))
    row["reason"] = "; ".join(p for p in parts if p)
    if row["status"] in ("missing", "invalid") and not row["marks"]:
        # Nothing to mark: no notebook.
        row.update(written_score=0.0, total=float(row["auto_score"]),
                   written=[])
        return row
    given = {(row["student_id"], row["assignment"]): {
        q: Mark(float(points), comment)
        for q, (points, comment) in row["marks"].items()}}
    row.update(merge_marks(row, dict(task.written), given))
    return row


def summary(flags):
    """The flags in a few words: each kind once, with its first instance.

    ``flags`` are texts "code: where: reason" (the CSV's flags column keeps
    them all).
    """
    kinds = {}
    for text in flags:
        code, _, detail = text.partition(": ")
        kinds.setdefault(code, []).append(detail)
    parts = []
    for code, details in kinds.items():
        more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
        parts.append(f"{code}: {details[0]}{more}")
    return "; ".join(parts)


def unmatched_row(item, folder):
    """A row for a notebook that fits no student or assignment."""
    try:
        relative = Path(item.path).resolve().relative_to(
            Path(folder).resolve())
    except ValueError:
        relative = Path(item.path)
    student = relative.parts[0] if len(relative.parts) > 1 else ""
    return {"student_id": student,
            "assignment": getattr(item, "assignment", ""), "auto_score": 0.0,
            "auto_max": 0.0, "written_score": None, "written_max": 0.0,
            "total": 0.0, "max_score": 0.0, "status": "unmatched",
            "reason": f"{relative}: {item.reason}", "flags": [],
            "feedback": ""}


def progress_line(row):
    """"alice 03_frequencies  8/11 automatic, written 1.5/2  graded: ..."."""
    written = (NOT_MARKED if row["written_score"] is None
               else f"{fmt(row['written_score'])}/{fmt(row['written_max'])}")
    text = (f"{row['student_id']} {row['assignment']}  "
            f"{fmt(row['auto_score'])}/{fmt(row['auto_max'])} automatic, "
            f"written {written}  {row['status']}")
    reason = row["reason"] if row["status"] != "graded" else row.get(
        "base_reason", "")
    return text + (f": {reason}" if reason else "")


def write_csv(rows, out_csv):
    """Write ``rows`` (sorted by student and assignment) to ``out_csv``."""
    out_csv = Path(out_csv)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: (r["student_id"], r["assignment"],
                                       r["reason"]))
    with open(out_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            row = dict(row)
            for key in ("auto_score", "auto_max", "written_score",
                        "written_max", "total", "max_score"):
                row[key] = "" if row[key] is None else fmt(float(row[key]))
            row["flags"] = " | ".join(row.get("flags", []))
            if row.get("feedback"):
                row["feedback"] = os.path.relpath(row["feedback"],
                                                  out_csv.parent)
            writer.writerow(row)
