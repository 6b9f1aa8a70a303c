"""The teacher's marks for written answers, folded into the grades.

Written answers (nbgrader cells with ``grade`` and ``solution``, markdown
usually) are graded by hand. The teacher writes a CSV (``--marks
marks.csv``)::

    student_id,assignment,question,points,comment
    alice,02_sinusoidal_formula,q4_written_add_or_concat,1.5,"No drawback."

``question`` is the written cell's nbgrader grade id. ``comment`` may be
left out or empty. A row with an empty ``points`` cell means "not marked
yet" and is skipped, so a teacher can start from a sheet with every row
and fill it in over a week. Column names are checked (an unknown column is
refused, so that a misspelt ``coment`` cannot lose the comments); a UTF-8
byte order mark (Excel) is fine; ``1,5`` is read as 1.5.

``student_id`` is read as ``matching.student_id`` reads a folder name, so a
teacher may write ``Frank Smith`` for the submission folder ``Frank Smith``
(id ``frank_smith``).

Errors (unknown assignment or question, points that are not a number or
outside 0..maximum, a question marked twice for a student) raise ValueError
naming the file, the line and the column.

``merge_marks`` folds the marks into one grade row: until every written
question of the assignment is marked, ``written_score`` and ``total`` are
None (an empty CSV cell) and the reason says which answers are "not yet
marked" -- never 0.
"""

import csv
import math
from pathlib import Path
from typing import NamedTuple

from .matching import student_id as _student_id

COLUMNS = ("student_id", "assignment", "question", "points", "comment")
REQUIRED = ("student_id", "assignment", "question", "points")
NOT_MARKED = "not yet marked"


class Mark(NamedTuple):
    points: float
    comment: str


def written_questions(nb):
    """{grade_id: maximum points} of the cells graded by hand in ``nb``.

    ``nb``: a notebook as a dict (nbformat node or ``json.load``).
    """
    found = {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and meta.get("grade") and meta.get(
                "solution"):
            found[str(meta["grade_id"])] = float(meta.get("points", 0))
    return found


def _check_known(known):
    if not isinstance(known, dict) or not all(
            isinstance(q, dict) and all(
                isinstance(m, (int, float)) and not isinstance(m, bool)
                and m >= 0 for m in q.values()) for q in known.values()):
        raise ValueError("known must be {assignment: {question: maximum "
                         f"points >= 0}}, not {known!r}")


def _points(text, maximum, where):
    raw = text.strip()
    value = raw
    if raw.count(",") == 1 and "." not in raw:
        value = raw.replace(",", ".")
    try:
        points = float(value)
    except ValueError:
        raise ValueError(f"{where}, column points: {raw!r} is not a "
                         "number") from None
    if not math.isfinite(points) or not 0 <= points <= maximum:
        raise ValueError(f"{where}, column points: {raw} is outside 0.."
                         f"{maximum:g}, the question's points")
    return points


def read_marks(path, known):
    """{(student_id, assignment): {question: Mark(points, comment)}}.

    ``known``: {assignment: {question grade id: maximum points}} of the
    written questions (``written_questions`` of each instructor notebook).
    """
    _check_known(known)
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as err:
        raise ValueError(f"marks: path {str(path)!r}: cannot read "
                         f"({err})") from err
    marks, seen = {}, {}
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path.name}: empty, expected the header "
                             f"{','.join(COLUMNS)}")
        header = [h.strip() for h in header]
        for number, column in enumerate(header, 1):
            if column not in COLUMNS:
                raise ValueError(
                    f"{path.name}, line 1, column {number}: unknown column "
                    f"{column!r}; the columns are {', '.join(COLUMNS)}")
            if header.count(column) > 1:
                raise ValueError(f"{path.name}, line 1: column {column!r} "
                                 "appears twice")
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise ValueError(f"{path.name}, line 1: missing column(s) "
                             f"{', '.join(missing)}")
        line = reader.line_num + 1
        for record in reader:
            where = f"{path.name}, line {line}"
            line = reader.line_num + 1
            if not any(field.strip() for field in record):
                continue  # a blank line
            if len(record) > len(header):
                raise ValueError(f"{where}: {len(record)} fields, the header "
                                 f"has {len(header)} (quote a comment that "
                                 "holds a comma)")
            record = record + [""] * (len(header) - len(record))
            row = dict(zip(header, record, strict=True))
            for column in REQUIRED[:3]:
                if not row[column].strip():
                    raise ValueError(f"{where}, column {column}: empty")
            sid, _note = _student_id(row["student_id"].strip())
            if not sid:
                raise ValueError(f"{where}, column student_id: "
                                 f"{row['student_id']!r} is not a student id")
            assignment = row["assignment"].strip()
            if assignment not in known:
                raise ValueError(
                    f"{where}, column assignment: unknown assignment "
                    f"{assignment!r}; known: {', '.join(sorted(known))}")
            question = row["question"].strip()
            if question not in known[assignment]:
                written = ", ".join(sorted(known[assignment])) or "none"
                raise ValueError(
                    f"{where}, column question: {question!r} is not a "
                    f"written question of {assignment} (those are: "
                    f"{written})")
            if not row["points"].strip():
                continue  # not marked yet
            points = _points(row["points"], known[assignment][question],
                             where)
            key = (sid, assignment, question)
            if key in seen:
                raise ValueError(
                    f"{where}, column question: {sid} / {assignment} / "
                    f"{question} is already marked on line {seen[key]}")
            seen[key] = where.rsplit(" ", 1)[1]
            marks.setdefault((sid, assignment), {})[question] = Mark(
                points, row.get("comment", "").strip())
    return marks


def merge_marks(row, written, marks):
    """A copy of the grade ``row`` with the written marks folded in.

    ``row``: a dict with at least ``student_id``, ``assignment``,
    ``auto_score`` (None when grading failed) and ``auto_max``; other keys
    (``status``, ``reason``, ...) are kept. ``written``: {question: maximum}
    of the row's assignment. ``marks``: what ``read_marks`` returned (or
    None: nothing marked yet).

    Sets ``written_score`` (None until every written question is marked),
    ``written_max``, ``total`` (None unless both scores are known),
    ``max_score`` and ``written`` (one dict per question: question, points
    or None, max, comment, for the feedback page), and adds "QUESTION (N
    points): not yet marked" to ``reason`` for each unmarked question.
    """
    for key in ("student_id", "assignment", "auto_score", "auto_max"):
        if key not in row:
            raise ValueError(f"row must have the key {key!r}; it has "
                             f"{sorted(row)}")
    if not isinstance(written, dict):
        raise ValueError(f"written must be {{question: maximum}}, not "
                         f"{written!r}")
    given = (marks or {}).get((row["student_id"], row["assignment"]), {})
    out = dict(row)
    details, unmarked, score = [], [], 0.0
    for question, maximum in written.items():
        mark = given.get(question)
        if mark is not None and mark.points > maximum:
            raise ValueError(f"marks for {row['student_id']} / "
                             f"{row['assignment']} / {question}: "
                             f"{mark.points:g} > maximum {maximum:g}")
        details.append({"question": question,
                        "points": None if mark is None else mark.points,
                        "max": float(maximum),
                        "comment": "" if mark is None else mark.comment})
        if mark is None:
            unmarked.append(f"{question} ({maximum:g} points): {NOT_MARKED}")
        else:
            score += mark.points
    out["written"] = details
    out["written_max"] = float(sum(written.values()))
    out["written_score"] = None if unmarked else score
    auto_max = float(row["auto_max"] or 0)
    out["max_score"] = auto_max + out["written_max"]
    auto = row["auto_score"]
    out["total"] = (None if auto is None or out["written_score"] is None
                    else float(auto) + out["written_score"])
    if unmarked:
        reason = str(row.get("reason") or "")
        out["reason"] = "; ".join(filter(None, [reason] + unmarked))
    return out


def unused_marks(marks, graded):
    """Keys (student_id, assignment) of ``marks`` not among ``graded``.

    A mark for a student or assignment that was not graded is probably a
    typo in the sheet; the grader should say so.
    """
    graded = set(graded)
    return sorted(key for key in (marks or {}) if key not in graded)
