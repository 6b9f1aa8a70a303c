"""Attacks on the grader: each in its own submission of assignment 1.

Every attack is handed in by a student who otherwise answers everything
right (the instructor's solutions, without their markers), so that a
working attack would earn the full automatic score unflagged. Each must end
below the automatic maximum, or flagged for the teacher; the test says
which, precisely. ``honest`` is the same student without an attack: full
marks, not flagged (the flags are not raised for nothing).

All submissions are graded in one ``grade`` run with two workers.
"""

import csv
import json
import re
import subprocess
import sys
import textwrap
from html import unescape
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "assignments.py"
NAME = "01_why_order"
INSTRUCTOR = REPO / "assignments" / "source" / NAME / f"{NAME}.ipynb"
MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")


def load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source_of(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def cell(nb, grade_id):
    return next(c for c in nb["cells"] if nbgrader(c).get("grade_id") == grade_id)


def auto_max():
    return sum(nbgrader(c)["points"] for c in load(INSTRUCTOR)["cells"]
               if nbgrader(c).get("grade") and not nbgrader(c).get("solution"))


def visible_text(page):
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    return unescape(re.sub(r"<[^>]+>", "", page))


def honest(released):
    """The released notebook with the instructor's answers, no markers."""
    nb = load(released)
    teacher = load(INSTRUCTOR)
    for c in nb["cells"]:
        meta = nbgrader(c)
        if meta.get("solution") and c["cell_type"] == "code":
            answer = source_of(cell(teacher, meta["grade_id"]))
            c["source"] = "\n".join(line for line in answer.splitlines()
                                    if not MARKER.match(line))
    return nb


WRONG = '''
def attention_weights(x, w_q, w_k, causal=False):
    n = len(x)
    return np.full((n, n), 1.0 / n)
'''

# A wrong q1 that passes the visible check in the kernel (it returns the
# test's own `expected`), so that the test cell goes on to the hidden calls,
# and keeps the arguments of every call, for FORGE.
FORGED_Q1 = '''
import sys

_SEEN = []


def attention_weights(x, w_q, w_k, causal=False):
    _SEEN.append((np.array(x, dtype=float), causal))
    frame = sys._getframe(1)
    while frame is not None and "expected" not in frame.f_globals:
        frame = frame.f_back  # up from the grader's recording wrapper
    if frame is not None:
        return frame.f_globals["expected"]
    n = len(x)
    return np.full((n, n), 1.0 / n)
'''

# q1 answered wrong; the attack tries to make the checks pass anyway.
ATTACKS = {
    # The attacks.
    "helper": WRONG + "\ncheck_array = lambda *args, **kwargs: None\n",
    "numpy": WRONG + (
        "\nnp.isclose = lambda a, b, **k: np.ones(np.broadcast(a, b).shape, "
        "bool)\nnp.allclose = lambda *args, **kwargs: True\n"),
    "default_arg": '''
def attention_weights(x, w_q, w_k, causal=False, _ref=pc.self_attention):
    return _ref(np.asarray(x, dtype=float), w_q, w_k, w_v, causal=causal)[1]
''',
    "reads_repo": '''
import json

try:
    with open(INSTRUCTOR_PATH) as handle:
        _cells = json.load(handle)["cells"]
    exec("".join(next(c["source"] for c in _cells if c["metadata"].get(
        "nbgrader", {}).get("grade_id") == "q1_attention_weights")))
except Exception as err:
    print("could not read the instructor notebook:", repr(err))
'''.replace("INSTRUCTOR_PATH", repr(str(INSTRUCTOR))) + WRONG.replace(
        "def attention_weights", "def _never"),
    "reads_course": '''
import json
import os

print("working folder:", os.getcwd())
print("its files:", sorted(os.listdir(".")))
try:
    import posenc_plots
    print("the repository is importable")
except ImportError:
    print("posenc_plots: not importable")
print("posenc_core from:", pc.__file__)
for _path in ("../../../source/01_why_order/01_why_order.ipynb",
              "../../../gradebook.db"):
    try:
        with open(_path, "rb") as handle:
            handle.read(10)
        print("read", _path)
    except Exception as err:
        print("could not read", _path, repr(err))
''' + WRONG,
    # The next ones.
    # q1's records forged after its test cell ran (FORGE, below)
    "forged_records": FORGED_Q1,
    "recorder": FORGED_Q1,
    "recorder_patch": FORGED_Q1,
    "getframe": '''
import sys


def attention_weights(x, w_q, w_k, causal=False):
    frame = sys._getframe(1)
    while frame is not None and "expected" not in frame.f_globals:
        frame = frame.f_back  # up from the grader's recording wrapper
    if frame is not None:
        return frame.f_globals["expected"]
    n = len(x)
    return np.full((n, n), 1.0 / n)
''',
    "builtins": WRONG + '''
import builtins

builtins.AssertionError = Warning  # check_array's failures become warnings
''',
    # (in a dict: the setup's switch-off also replaces global aliases)
    "getattr_string": '''
_kept = {"f": getattr(pc, "self_" + "attention")}


def attention_weights(x, w_q, w_k, causal=False):
    return _kept["f"](np.asarray(x, dtype=float), w_q, w_k, w_v,
                      causal=causal)[1]
''',
    "reload": WRONG.replace("def attention_weights", "def _unused") + '''
import importlib


def attention_weights(x, w_q, w_k, causal=False):
    fresh = importlib.reload(pc)
    return fresh.self_attention(np.asarray(x, dtype=float), w_q, w_k, w_v,
                                causal=causal)[1]
''',
    "shell": '''
_lines = !cat INSTRUCTOR_PATH
print("the shell gave", len(_lines), "lines")
'''.replace("INSTRUCTOR_PATH", str(INSTRUCTOR)) + WRONG,
    "edit_core": WRONG + '''
import importlib

with open("posenc_core.py", "a") as handle:
    handle.write("\\n\\ndef self_attention(x, w_q, w_k, w_v, **kwargs):\\n"
                 "    n = len(x)\\n"
                 "    return np.zeros((n, w_v.shape[1])), "
                 "np.full((n, n), 1.0 / n)\\n")
importlib.reload(pc)
''',
}

# The records of q1's test cell are forged in the next answer cell, after
# that test cell ran: the correct weights, computed with posenc_core (not
# switched off there), written over what the wrong function returned. The
# records folder is looked for beside the kernel's course folder (found
# from its working folder)...
FIND_BY_PATH = '''
import glob
import os

_work = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.getcwd()))))
_course = os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(
    os.getcwd()))))
_found = glob.glob(os.path.join(_work, "kernel-" + _course.split("-")[-1],
                                "records*", "q1_attention_weights_tests.json"))
'''
# ... or asked of the recorder itself.
FIND_BY_RECORDER = '''
import os

_found = [os.path.join(str(__posenc_grading__.records_dir),
                       "q1_attention_weights_tests.json")]
'''
FORGE = '''
import base64
import json

print("records found:", _found)
for _file in _found:
    with open(_file) as handle:
        _data = json.load(handle)
    _calls = [r for r in _data["records"] if r.get("kind") == "call"]
    for _record, (_x, _causal) in zip(_calls, _SEEN):
        _right = pc.self_attention(_x, w_q, w_k, w_v, causal=_causal)[1]
        _record["result"] = {"__ndarray__": {
            "dtype": _right.dtype.str, "shape": list(_right.shape),
            "data": base64.b64encode(np.ascontiguousarray(
                _right).tobytes()).decode("ascii")}}
    with open(_file, "w") as handle:
        json.dump(_data, handle)
'''

# ... or forged inside the test cell, by the recorder's own end(), which the
# answer cell replaces.
PATCH_END = '''
import os

_real_end = __posenc_grading__.end


def _forging_end(cell):
    _real_end(cell)
    if cell == "q1_attention_weights_tests":
        _found = [os.path.join(str(__posenc_grading__.records_dir),
                               cell + ".json")]
FORGE_HERE

__posenc_grading__.end = _forging_end
'''

# What each attack must end with: the automatic score ("q1 lost": exactly
# question 1's 3 points below the maximum; "below": lower still, "max": the
# attack works in the kernel, where the answer is the reference's), and the
# flag codes that must be among its flags (every attack is flagged).
EXPECTED = {
    "helper": ("q1 lost", {"binds-test-helper"}),
    # the patched allclose also stops q2 and q3's tests early in the kernel,
    # so their hidden calls have no record to re-check
    "numpy": ("below", {"patches-module"}),
    "default_arg": ("max", {"uses-reference"}),
    "reads_repo": ("q1 lost", {"reads-files", "dynamic-code"}),
    "reads_course": ("q1 lost", {"reads-files"}),
    "forged_records": ("q1 lost", {"reads-files", "dynamic-code"}),
    # records forged in a later cell: the grader kept them as they were
    # right after the test cell
    "recorder": ("q1 lost", {"detects-grader", "dynamic-code"}),
    # records forged by the recorder's end(), replaced: the re-check gets
    # the right numbers; only the flag shows it (see teaching.md, Limits)
    "recorder_patch": ("max", {"detects-grader", "dynamic-code"}),
    "getframe": ("q1 lost", {"dynamic-code"}),
    "builtins": ("q1 lost", {"patches-module"}),
    "getattr_string": ("max", {"dynamic-code"}),
    "reload": ("max", {"dynamic-code"}),
    "shell": ("q1 lost", {"dynamic-code"}),
    # the edited posenc_core fools every test in the kernel; the re-check
    # uses the genuine one
    "edit_core": ("below", {"dynamic-code"}),
}


def run_tool(*args):
    result = subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], capture_output=True,
        text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    handout = tmp_path_factory.mktemp("handout")
    run_tool("release", handout, "--assignment", NAME, "--force")
    released = handout / f"{NAME}.ipynb"
    subs = tmp_path_factory.mktemp("submissions")

    def hand_in(student, nb):
        path = subs / student / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(nb), encoding="utf-8")

    hand_in("honest", honest(released))
    hand_in("instructor", load(INSTRUCTOR))
    hand_in("unchanged", load(released))
    for student, attack in ATTACKS.items():
        nb = honest(released)
        cell(nb, "q1_attention_weights")["source"] = attack
        if student == "recorder_patch":
            cell(nb, "q1_attention_weights")["source"] = FORGED_Q1 + (
                PATCH_END.replace("FORGE_HERE", textwrap.indent(FORGE,
                                                                " " * 8)))
        if student in ("forged_records", "recorder"):
            find = (FIND_BY_PATH if student == "forged_records"
                    else FIND_BY_RECORDER)
            answer = cell(nb, "q2_unscramble")
            answer["source"] = source_of(answer) + "\n" + find + FORGE
        hand_in(student, nb)
    out = tmp_path_factory.mktemp("grades")
    run_tool("grade", subs, "--out", out / "grades.csv", "--jobs", 2,
             "--timeout", 30)
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}

    def page(student):
        return visible_text((out / rows[student]["feedback"]).read_text(
            encoding="utf-8"))

    return rows, page


def codes(row):
    return {flag.split(":")[0] for flag in row["flags"].split(" | ") if flag}


def test_an_honest_student_gets_full_marks_unflagged(graded):
    rows, _ = graded
    row = rows["honest"]
    assert (row["status"], row["flags"]) == ("graded", ""), row
    assert float(row["auto_score"]) == float(row["auto_max"]) == auto_max()


def test_the_instructor_notebook_as_it_is_is_flagged(graded):
    rows, _ = graded
    row = rows["instructor"]
    assert row["status"] == "flagged", row
    assert codes(row) == {"solution-markers"}, row
    assert float(row["auto_score"]) == auto_max()


def test_the_released_notebook_unchanged_gets_zero_and_is_flagged(graded):
    rows, _ = graded
    row = rows["unchanged"]
    assert row["status"] == "flagged" and float(row["auto_score"]) == 0, row
    assert codes(row) == {"unchanged"}, row


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_attack_ends_below_the_maximum_or_flagged(graded, student):
    rows, _ = graded
    row = rows[student]
    outcome, flags = EXPECTED[student]
    score = float(row["auto_score"])
    assert row["status"] == "flagged", row
    assert flags <= codes(row), row
    if outcome == "q1 lost":
        assert score == auto_max() - 3, row
    elif outcome == "below":
        assert score < auto_max() - 3, row
    else:
        assert score == auto_max(), row


def test_the_grading_folder_holds_only_the_handout(graded):
    _, page = graded
    text = page("reads_course")
    assert re.search(rf"working folder: \S+/autograded/reads_course/{NAME}\b",
                     text), text[:2000]
    # (__pycache__: Python's cache of the posenc_core it imported there)
    assert f"its files: ['{NAME}.ipynb', '__pycache__', 'posenc_core.py']" in text
    assert "posenc_plots: not importable" in text
    assert re.search(rf"posenc_core from: \S+/autograded/reads_course/{NAME}/"
                     r"posenc_core\.py", text)
    assert "could not read ../../../source" in text
    assert "could not read ../../../gradebook.db" in text
    assert "PermissionError" in text


def test_the_repository_and_the_shell_are_closed(graded):
    _, page = graded
    assert "could not read the instructor notebook: PermissionError" in page(
        "reads_repo")
    assert "the grading kernel does not start other programs" in page("shell")


def test_forged_records_are_not_found(graded):
    _, page = graded
    assert "records found: []" in page("forged_records")
