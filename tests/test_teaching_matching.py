"""Matching a messy submissions folder (tools/teaching/matching.py)."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from teaching import matching  # noqa: E402

SOURCE = REPO / "assignments" / "source"
NAMES = sorted(p.name for p in SOURCE.iterdir()
               if (p / f"{p.name}.ipynb").is_file())
RELEASED = {name: SOURCE / name / f"{name}.ipynb" for name in NAMES}


def put(root, relative, content_of=None, mtime=None):
    """Write a notebook at root/relative: a copy of an assignment or junk."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if content_of:
        shutil.copy(RELEASED[content_of], path)
    else:
        path.write_text(json.dumps({"cells": [], "metadata": {},
                                    "nbformat": 4, "nbformat_minor": 5}))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def by_student(matched):
    return {(m.student_id, m.assignment): m for m in matched}


def test_the_assignment_names_exist():
    assert "01_why_order" in NAMES and "05_relative_position" in NAMES
    assert len(NAMES) >= 8


def test_the_issues_file_names(tmp_path):
    put(tmp_path, "alice/Assignment 1.ipynb")
    put(tmp_path, "bob/05_Relative_Position.ipynb")
    put(tmp_path, "carol/02_sinusoidal_formula (1).ipynb")
    put(tmp_path, "dave/hw3/x.ipynb")
    put(tmp_path, "erin/submission/x/x.ipynb", content_of="04_binary_counter")
    put(tmp_path, "Frank Smith/06_rope.ipynb")
    put(tmp_path, "grace/07_context_extension/07_context_extension.ipynb")
    put(tmp_path, "grace/.ipynb_checkpoints/"
        "07_context_extension-checkpoint.ipynb")
    put(tmp_path, "grace/08_train_short_test_long.ipynb")
    put(tmp_path, "judy/lab 2 part 1.ipynb")
    put(tmp_path, "kim/relative positions.ipynb")
    put(tmp_path, "judy/08_train_short_test_long-Copy1.ipynb")
    matched, unmatched = matching.find_submissions(tmp_path, NAMES,
                                                   identify=RELEASED)
    got = by_student(matched)
    expected = {
        ("alice", "01_why_order"): "number",
        ("bob", "05_relative_position"): "name",
        ("carol", "02_sinusoidal_formula"): "(1)",
        ("dave", "03_frequencies"): "folder 'hw3'",
        ("erin", "04_binary_counter"): "cells",
        ("frank_smith", "06_rope"): "'Frank Smith' -> id frank_smith",
        ("grace", "07_context_extension"): "",
        ("grace", "08_train_short_test_long"): "",
        ("judy", "02_sinusoidal_formula"): "number",
        ("judy", "08_train_short_test_long"): "-Copy1",
        ("kim", "05_relative_position"): "name words",
    }
    assert sorted(got) == sorted(expected)
    for key, word in expected.items():
        if word:
            assert word in got[key].note, (key, got[key].note)
        else:
            assert got[key].note == "", (key, got[key].note)
    assert got["grace", "07_context_extension"].path.parent.name == (
        "07_context_extension")
    assert unmatched == []
    assert matched == sorted(matched)


def test_every_notebook_is_matched_or_listed(tmp_path):
    put(tmp_path, "stray.ipynb")
    put(tmp_path, "ivan/notes.ipynb")
    put(tmp_path, "ivan/01_why_order.ipynb")
    put(tmp_path, "ken/sinusoidal and rope.ipynb")
    put(tmp_path, "mike/05_rope.ipynb")
    put(tmp_path, "mike/positional encoding homework.ipynb")
    put(tmp_path, "heidi/.ipynb_checkpoints/03_frequencies-checkpoint.ipynb")
    put(tmp_path, "Frank Smith/01_why_order.ipynb")
    put(tmp_path, "frank_smith/01_why_order.ipynb")
    put(tmp_path, ".hidden/01_why_order.ipynb")
    (tmp_path / "olga").mkdir()
    (tmp_path / "olga" / "hand-in.zip").write_bytes(b"PK")
    matched, unmatched = matching.find_submissions(tmp_path, NAMES)
    assert [(m.student_id, m.assignment) for m in matched] == [
        ("ivan", "01_why_order")]
    reasons = {str(u.path.relative_to(tmp_path)): u.reason for u in unmatched}
    assert "student folder" in reasons["stray.ipynb"]
    assert "no assignment" in reasons["ivan/notes.ipynb"]
    assert "several" in reasons["ken/sinusoidal and rope.ipynb"]
    assert "different assignments" in reasons["mike/05_rope.ipynb"]
    assert "05_relative_position" in reasons["mike/05_rope.ipynb"]
    assert "no assignment" in reasons[
        "mike/positional encoding homework.ipynb"]
    assert "autosave" in reasons[
        "heidi/.ipynb_checkpoints/03_frequencies-checkpoint.ipynb"]
    assert "frank_smith" in reasons["Frank Smith/01_why_order.ipynb"]
    assert "frank_smith" in reasons["frank_smith/01_why_order.ipynb"]
    assert "hidden" in reasons[".hidden/01_why_order.ipynb"]
    assert "zip" in reasons["olga/hand-in.zip"]
    every = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
             if p.is_file()}
    listed = set(reasons) | {str(m.path.relative_to(tmp_path))
                             for m in matched}
    assert every == listed


def test_content_decides_when_the_name_does_not(tmp_path):
    put(tmp_path, "mike/05_rope.ipynb", content_of="06_rope")
    put(tmp_path, "nina/03_frequencies.ipynb",
        content_of="02_sinusoidal_formula")
    put(tmp_path, "oscar/notes.ipynb")
    matched, unmatched = matching.find_submissions(tmp_path, NAMES,
                                                   identify=RELEASED)
    got = by_student(matched)
    assert ("mike", "06_rope") in got
    note = got["nina", "02_sinusoidal_formula"].note
    assert "03_frequencies" in note and "cells" in note
    assert [u.path.name for u in unmatched] == ["notes.ipynb"]
    assert "match no released" in unmatched[0].reason


def test_a_callable_identifies_content(tmp_path):
    put(tmp_path, "pat/whatever.ipynb")
    seen = []

    def identify(path):
        seen.append(Path(path).name)
        return "03_frequencies"

    matched, _ = matching.find_submissions(tmp_path, NAMES, identify=identify)
    assert seen == ["whatever.ipynb"]
    assert [(m.student_id, m.assignment) for m in matched] == [
        ("pat", "03_frequencies")]


def test_the_newest_of_two_files_is_graded_and_the_other_listed(tmp_path):
    old = put(tmp_path, "lena/02_sinusoidal_formula.ipynb", mtime=1_000_000)
    new = put(tmp_path, "lena/02_sinusoidal_formula (1).ipynb",
              mtime=2_000_000)
    matched, unmatched = matching.find_submissions(tmp_path, NAMES)
    assert [m.path for m in matched] == [new]
    assert "newest of 2" in matched[0].note
    assert [u.path for u in unmatched] == [old]
    assert "older than" in unmatched[0].reason
    os.utime(old, (3_000_000, 3_000_000))
    matched, unmatched = matching.find_submissions(tmp_path, NAMES)
    assert [m.path for m in matched] == [old]
    assert [u.path for u in unmatched] == [new]


def test_symbolic_links_are_listed_not_graded(tmp_path):
    outside = put(tmp_path / "elsewhere", "02_sinusoidal_formula.ipynb",
                  content_of="02_sinusoidal_formula")
    (tmp_path / "subs" / "rita").mkdir(parents=True)
    (tmp_path / "subs" / "rita" / "02_sinusoidal_formula.ipynb").symlink_to(
        outside)
    (tmp_path / "subs" / "rita" / "hw3").symlink_to(outside.parent)
    (tmp_path / "subs" / "sam").symlink_to(outside.parent)
    matched, unmatched = matching.find_submissions(tmp_path / "subs", NAMES)
    assert matched == []
    reasons = {str(u.path.relative_to(tmp_path / "subs")): u.reason
               for u in unmatched}
    assert set(reasons) == {"rita/02_sinusoidal_formula.ipynb", "rita/hw3",
                            "sam/02_sinusoidal_formula.ipynb"}
    assert "not followed" in reasons["rita/hw3"]
    assert "symbolic link" in reasons["rita/02_sinusoidal_formula.ipynb"]
    assert "symbolic link" in reasons["sam/02_sinusoidal_formula.ipynb"]


def test_only_the_assignments_being_graded_are_matched(tmp_path):
    put(tmp_path, "quinn/Assignment 3.ipynb")
    put(tmp_path, "quinn/02_sinusoidal_formula.ipynb")
    matched, unmatched = matching.find_submissions(
        tmp_path, ["02_sinusoidal_formula"])
    assert [m.assignment for m in matched] == ["02_sinusoidal_formula"]
    assert [u.path.name for u in unmatched] == ["Assignment 3.ipynb"]


@pytest.mark.parametrize("name, expected", [
    ("alice", ("alice", "")),
    ("AB123", ("AB123", "")),
    ("j.doe@uni.edu", ("j.doe@uni.edu", "")),
    ("Frank Smith", ("frank_smith", "student folder 'Frank Smith' -> id "
                     "frank_smith")),
    ("O'Brien, Pat", ("o_brien_pat", "student folder \"O'Brien, Pat\" -> "
                      "id o_brien_pat")),
    ("José García", ("josé_garcía", "student folder 'José García' -> id "
                     "josé_garcía")),
    ("___", ("", "")),
])
def test_student_id(name, expected):
    assert matching.student_id(name) == expected


def test_content_identifier_needs_half_the_cells_or_the_title(tmp_path):
    identify = matching.content_identifier(RELEASED)
    nb = json.loads(RELEASED["03_frequencies"].read_text())
    titled = [c for c in nb["cells"] if c["cell_type"] == "markdown"][:1]
    graded = [c for c in nb["cells"]
              if c["metadata"].get("nbgrader", {}).get("grade_id")
              not in (None, "setup")]
    cases = {"title_only": (titled, "03_frequencies"),
             "all_ids": (graded, "03_frequencies"),
             "one_id": (graded[:1], None),
             "nothing": ([], None)}
    for label, (cells, expected) in cases.items():
        path = tmp_path / f"{label}.ipynb"
        path.write_text(json.dumps(dict(nb, cells=cells)))
        assert identify(path) == expected, label
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{")
    assert identify(broken) is None


def test_bad_arguments_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="folder"):
        matching.find_submissions(tmp_path / "missing", NAMES)
    with pytest.raises(ValueError, match="assignment_names"):
        matching.find_submissions(tmp_path, [])
    with pytest.raises(ValueError, match="identify"):
        matching.find_submissions(tmp_path, NAMES, identify=3)
    with pytest.raises(ValueError, match="released"):
        matching.content_identifier({"01_why_order": tmp_path / "no.ipynb"})
