"""The teacher's marks for written answers (tools/teaching/marks.py)."""

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from teaching import marks  # noqa: E402

A2 = "02_sinusoidal_formula"
Q = "q4_written_add_or_concat"
KNOWN = {A2: {Q: 2.0}, "05_x": {"q5_a": 3.0, "q6_b": 1.0}}
HEADER = "student_id,assignment,question,points,comment\n"


def write(tmp_path, text, name="marks.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_written_questions():
    def cell(kind, **meta):
        return {"cell_type": kind, "source": "", "metadata": {
            "nbgrader": meta} if meta else {}}
    nb = {"cells": [
        cell("code", grade=False, grade_id="setup", locked=True),
        cell("code", grade=False, grade_id="q1", solution=True),
        cell("code", grade=True, grade_id="q1_tests", points=3),
        cell("markdown", grade=True, grade_id="q2_written", solution=True,
             points=2),
        cell("code", grade=True, grade_id="q3_by_hand", solution=True,
             points=1.5),
        cell("markdown")]}
    assert marks.written_questions(nb) == {"q2_written": 2.0,
                                           "q3_by_hand": 1.5}
    real = json.loads((REPO / "assignments" / "source" / A2 / f"{A2}.ipynb")
                      .read_text(encoding="utf-8"))
    found = marks.written_questions(real)
    assert found and all("written" in q and p > 0 for q, p in found.items())


def test_read_marks(tmp_path):
    path = write(tmp_path, "\ufeff" + HEADER
                 + f'alice,{A2},{Q},1.5,"Good; no drawback, though."\n'
                 + f"Frank Smith,{A2},{Q},\"2,0\",\n"
                 + "\n"
                 + "bob,05_x,q5_a,0,\n"
                 + "bob,05_x,q6_b,,not read yet\n")
    got = marks.read_marks(path, KNOWN)
    assert got == {
        ("alice", A2): {Q: marks.Mark(1.5, "Good; no drawback, though.")},
        ("frank_smith", A2): {Q: marks.Mark(2.0, "")},
        ("bob", "05_x"): {"q5_a": marks.Mark(0.0, "")},
    }


def test_comment_column_is_optional(tmp_path):
    path = write(tmp_path, f"student_id,assignment,question,points\n"
                 f"alice,{A2},{Q},2\n")
    assert marks.read_marks(path, KNOWN)[("alice", A2)][Q].points == 2.0


@pytest.mark.parametrize("line, message", [
    (f"alice,03_nope,{Q},1,", r"line 2, column assignment: unknown .*03_nope"),
    (f"alice,{A2},q1_concat_encoding,1,",
     r"line 2, column question: 'q1_concat_encoding' is not a written"),
    (f"alice,{A2},{Q},2.5,", r"line 2, column points: 2.5 is outside 0..2"),
    (f"alice,{A2},{Q},-1,", r"line 2, column points: -1 is outside"),
    (f"alice,{A2},{Q},nan,", r"line 2, column points: nan is outside"),
    (f"alice,{A2},{Q},two,", r"line 2, column points: 'two' is not a number"),
    (f",{A2},{Q},1,", r"line 2, column student_id: empty"),
    (f"alice,{A2},{Q},1,a,b", r"line 2: 6 fields"),
])
def test_bad_rows_name_line_and_column(tmp_path, line, message):
    path = write(tmp_path, HEADER + line + "\n")
    with pytest.raises(ValueError, match=message):
        marks.read_marks(path, KNOWN)


def test_duplicates_name_both_lines(tmp_path):
    path = write(tmp_path, HEADER + f'alice,{A2},{Q},1,"a\nlong comment"\n'
                 f"bob,{A2},{Q},1,\nalice,{A2},{Q},2,\n")
    with pytest.raises(ValueError, match=r"marks.csv, line 5, column "
                       r"question: alice / .* already marked on line 2"):
        marks.read_marks(path, KNOWN)


def test_bad_header_and_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown column 'coment'"):
        marks.read_marks(write(tmp_path, "student_id,assignment,question,"
                               "points,coment\n"), KNOWN)
    with pytest.raises(ValueError, match="missing column.*points"):
        marks.read_marks(write(tmp_path, "student_id,assignment,question\n"),
                         KNOWN)
    with pytest.raises(ValueError, match="empty"):
        marks.read_marks(write(tmp_path, ""), KNOWN)
    with pytest.raises(ValueError, match="path"):
        marks.read_marks(tmp_path / "missing.csv", KNOWN)
    with pytest.raises(ValueError, match="known"):
        marks.read_marks(write(tmp_path, HEADER), {A2: [Q]})


def row(**changes):
    base = {"student_id": "alice", "assignment": "05_x", "auto_score": 6.0,
            "auto_max": 8.0, "status": "graded", "reason": ""}
    base.update(changes)
    return base


WRITTEN = KNOWN["05_x"]


def test_merge_all_marked():
    given = {("alice", "05_x"): {"q5_a": marks.Mark(2.5, "ok"),
                                 "q6_b": marks.Mark(1.0, "")}}
    out = marks.merge_marks(row(), WRITTEN, given)
    assert out["written_score"] == 3.5 and out["written_max"] == 4.0
    assert out["total"] == 9.5 and out["max_score"] == 12.0
    assert out["reason"] == "" and out["status"] == "graded"
    assert out["written"][0] == {"question": "q5_a", "points": 2.5,
                                 "max": 3.0, "comment": "ok"}


def test_merge_partly_marked_reads_not_yet_marked_never_zero():
    given = {("alice", "05_x"): {"q5_a": marks.Mark(0.0, "")},
             ("bob", "05_x"): {"q6_b": marks.Mark(1.0, "")}}
    out = marks.merge_marks(row(reason="flagged: x"), WRITTEN, given)
    assert out["written_score"] is None and out["total"] is None
    assert out["max_score"] == 12.0
    assert out["reason"] == "flagged: x; q6_b (1 points): not yet marked"
    assert [d["points"] for d in out["written"]] == [0.0, None]
    nothing = marks.merge_marks(row(), WRITTEN, None)
    assert nothing["written_score"] is None
    assert nothing["reason"].count(marks.NOT_MARKED) == 2


def test_merge_without_written_questions_or_auto_score():
    out = marks.merge_marks(row(), {}, None)
    assert out["written_score"] == 0.0 and out["total"] == 6.0
    failed = marks.merge_marks(row(auto_score=None), {}, None)
    assert failed["total"] is None and failed["max_score"] == 8.0


def test_merge_refuses_bad_input():
    with pytest.raises(ValueError, match="auto_score"):
        marks.merge_marks({"student_id": "a", "assignment": "b",
                           "auto_max": 1}, {}, None)
    with pytest.raises(ValueError, match="maximum"):
        marks.merge_marks(row(), WRITTEN, {("alice", "05_x"): {
            "q6_b": marks.Mark(5.0, "")}})


def test_unused_marks():
    given = {("alice", "05_x"): {}, ("zed", "05_x"): {}}
    assert marks.unused_marks(given, [("alice", "05_x")]) == [("zed", "05_x")]
