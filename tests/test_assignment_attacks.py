"""A hostile class: every kind of attack on the grader, one submission each.

Assignment 1, graded in one run with two kernels at a time, as a teacher
would. Two kinds of attack:

- **boundary attacks** (``gate``): the student knows every answer, but
  each answer function answers only if the attack worked (it read the
  instructor notebook, wrote outside its folder, forked, reached the
  network...). The sandbox holds if they get 0 points;
- **check attacks**: every answer is wrong, and the submission tries to
  make the checks pass anyway (rebinding a test helper, patching numpy,
  reading the expected values out of the test's frames, returning rigged
  objects, switched-off functions kept in a default argument...). The
  checks run outside the kernel, on plain data, so they get 0 points.

Honest notebooks with the habits of real students (magics, ``getattr``
over names, ``sys.path``, matplotlib on an empty HOME, files in the own
folder) are graded in the same run, some after the attackers: full points
and no flag, whatever the attackers left behind. A second run afterwards
grades one honest student again (nothing carries over between runs), and
no process started by a submission is alive after either run.
"""

import hashlib
import re
import shutil
from pathlib import Path

import numpy
import pytest
from grading_helpers import (
    REPO,
    auto_max,
    cell,
    code_cell,
    gate,
    grade,
    hand_in,
    honest,
    insert_after,
    instructor_path,
    nbgrader,
    processes_mentioning,
    run_tool,
    source_of,
    visible_text,
    wrong,
)

NAME = "01_why_order"
INSTRUCTOR = instructor_path(NAME)
PROBE_FILE = REPO / "tools" / "teaching" / "_attack_probe"
NUMPY_PROBE = Path(numpy.__file__).parent / "_attack_probe"
GRADER_FILE = REPO / "tools" / "teaching" / "session.py"

# Boundary attacks: _won() is true only if the sandbox let the attack through.
BOUNDARY = {
    # numpy's ctypes calls the C library's open() directly, past any
    # Python-level audit hook
    "ctypes_open": f'''
import ctypes
import numpy.ctypeslib

_libc = ctypes.CDLL(None)
_fd = _libc.open({str(INSTRUCTOR).encode()!r}, 0)


def _won():
    return _fd >= 0
''',
    # an open relative to a directory descriptor of /
    "dirfd_open": f'''
import os

try:
    _root = os.open("/", os.O_RDONLY)
    os.close(os.open({str(INSTRUCTOR)[1:]!r}, os.O_RDONLY, dir_fd=_root))
    _read = True
except OSError:
    _read = False


def _won():
    return _read
''',
    # the repository, the grader's own code, and the Python environment
    "writes_grader": f'''
_wrote = []
for _path in ({str(PROBE_FILE)!r}, {str(NUMPY_PROBE)!r}):
    try:
        with open(_path, "w") as _handle:
            _handle.write("every later submission gets full marks")
        _wrote.append(_path)
    except OSError:
        pass
try:
    with open({str(GRADER_FILE)!r}, "a") as _handle:
        _wrote.append("grader")
except OSError:
    pass


def _won():
    return bool(_wrote)
''',
    # a process that outlives the kernel (a fork, a program, a daemon)
    "forks": '''
import os
import subprocess
import time

_started = []
try:
    _pid = os.fork()
    if _pid == 0:
        os.setsid()
        time.sleep(600)
        os._exit(0)
    _started.append(_pid)
except OSError:
    pass
try:
    _started.append(subprocess.Popen(
        ["sleep", "600", "posenc-attack-survivor"]).pid)
except OSError:
    pass


def _won():
    return bool(_started)
''',
    # the other kernels: their connection files, in any folder it can see
    "other_kernels": '''
import json
import os

from ipykernel import get_connection_file

_own = os.path.realpath(get_connection_file())
_others = []
for _root, _dirs, _files in os.walk("/"):
    if _root.startswith(("/proc", "/sys", "/dev", "/usr")):
        _dirs[:] = []
        continue
    for _f in _files:
        if not _f.endswith(".json"):
            continue
        _path = os.path.realpath(os.path.join(_root, _f))
        try:
            with open(_path) as _handle:
                _data = json.load(_handle)
        except Exception:
            continue
        if (isinstance(_data, dict) and "key" in _data
                and "transport" in _data and _path != _own):
            _others.append(_path)


def _won():
    return bool(_others)
''',
    # the instructor notebooks, the course, the gradebook, the others'
    # submissions: anything outside its folder but the system and Python
    "reads_files": f'''
import os

_seen = []
for _path in ({str(INSTRUCTOR)!r}, {str(REPO / "teaching.md")!r},
              "/root/.ssh/id_rsa", "/etc/shadow", "/etc/hostname"):
    try:
        with open(_path, "rb") as _handle:
            _handle.read(10)
        _seen.append(_path)
    except OSError:
        pass
# the grader's environment, through the sandbox's first process
try:
    with open("/proc/1/environ", "rb") as _handle:
        _environ = _handle.read()
    if b"PYTEST" in _environ or b"VIRTUAL_ENV" in _environ:
        _seen.append("/proc/1/environ")
except OSError:
    pass
# the course: instructor notebooks, gradebooks, other students' work
for _root, _dirs, _files in os.walk("/"):
    if _root.startswith(("/proc", "/sys", "/dev")):
        _dirs[:] = []
        continue
    for _f in _files:
        if _f.startswith("01_why_order") or (
                _f == "gradebook.db" and "site-packages" not in _root) or (
                _f.startswith("job-") and _f.endswith(".json")):
            _seen.append(os.path.join(_root, _f))


def _won():
    return bool(_seen)
''',
    # the network
    "network": '''
import socket

_reached = False
for _host, _port in (("pypi.org", 443), ("1.1.1.1", 53), ("127.0.0.1", 22),
                     ("10.0.0.1", 80)):
    try:
        socket.create_connection((_host, _port), timeout=3).close()
        _reached = True
    except OSError:
        pass


def _won():
    return _reached
''',
    # the shell
    "shell": f'''
_lines = !cat {INSTRUCTOR}


def _won():
    return any("BEGIN HIDDEN" + " TESTS" in line for line in _lines)
''',
}

# Configuration left for the students graded after this one, in every
# shared place it can reach: IPython's startup folder, matplotlib's, /tmp.
LEAVE_BEHIND = '''
import os

for _path, _text in (
        ("~/.ipython/profile_default/startup/00-attack.py",
         "import numpy as np\\nnp.isclose = lambda *a, **k: False\\n"),
        ("~/.config/matplotlib/matplotlibrc", "backend: nonexistent\\n"),
        ("/tmp/posenc_core.py", "raise SystemExit\\n"),
        ("posenc_core.py", "raise SystemExit\\n")):
    _path = os.path.expanduser(_path)
    try:
        os.makedirs(os.path.dirname(_path) or ".", exist_ok=True)
        with open(_path, "w") as _handle:
            _handle.write(_text)
    except OSError:
        pass
'''

# Check attacks: every answer wrong (wrong()), plus this code in a cell of
# its own after the setup, or as the answer of question 1.
CHECKS = {
    "helper": '''
check_array = lambda *args, **kwargs: None
def without_posenc_core(*names):
    import contextlib
    return contextlib.nullcontext()
''',
    "numpy": '''
np.isclose = lambda a, b, **k: np.ones(np.broadcast(a, b).shape, bool)
np.allclose = lambda *args, **kwargs: True
np.asarray = lambda *args, **kwargs: np.zeros(0)
''',
    "builtins": '''
import builtins

builtins.AssertionError = Warning
''',
    # the expected values, looked for in the frames that call the answer
    "frames": '''
import gc
import sys


def attention_weights(x, w_q, w_k, causal=False):
    frame = sys._getframe(1)
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            if "expected" in scope:
                return scope["expected"]
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict) and "expected" in obj:
            return obj["expected"]
    return np.zeros((len(x), len(x)))
''',
    # objects that compare equal to anything
    "rigged": '''
class Anything(np.ndarray):
    def __eq__(self, other):
        return True

    def __array_ufunc__(self, *args, **kwargs):
        return True

    def __float__(self):
        return 0.0


class Always(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


def attention_weights(x, w_q, w_k, causal=False):
    return np.zeros((len(x), len(x))).view(Anything)


def kept_outputs(perm):
    return [Always(1.0)] * len(perm)
''',
    # switched-off functions kept where a module attribute does not reach
    "kept_reference": '''
_kept = {"attention": getattr(pc, "self_" + "attention")}


def attention_weights(x, w_q, w_k, causal=False, _ref=pc.self_attention):
    return _ref(np.asarray(x, dtype=float), w_q, w_k, w_v, causal=causal)[1]


def unscramble(y_perm, perm):
    x = np.asarray(y_perm)
    return _kept["attention"](x, np.eye(len(x[0])), np.eye(len(x[0])),
                              np.eye(len(x[0])))[0][np.argsort(perm)]
''',
    # the hidden tests, looked for everywhere, printed (encoded) for the
    # feedback page
    "leaks_hidden": '''
import base64
import gc
import os

_found = []
for _obj in gc.get_objects():
    if isinstance(_obj, str) and "HIDDEN" in _obj:
        _found.append(_obj)
for _root, _dirs, _files in os.walk("/"):
    if _root.startswith(("/proc", "/sys", "/usr", "/dev")):
        _dirs[:] = []
        continue
    for _f in _files:
        if _f.endswith((".ipynb", ".json")):
            try:
                with open(os.path.join(_root, _f), errors="replace") as _h:
                    if "HIDDEN TESTS" in _h.read():
                        _found.append(os.path.join(_root, _f))
            except OSError:
                pass
_SEEN = []


def attention_weights(x, w_q, w_k, causal=False):
    _SEEN.append(np.asarray(x).tolist())
    return np.zeros((len(x), len(x)))
''',
    # the time limit ignored, memory and disk exhausted
    "exhausts": '''
import signal
import threading

try:
    _hog = np.ones(2**33)            # 64 GB
except MemoryError:
    pass
try:
    with open("big.bin", "wb") as _handle:
        for _ in range(64):
            _handle.write(b"x" * 2**25)   # 2 GB
except OSError:
    pass
_threads = [threading.Thread(target=lambda: __import__("time").sleep(600),
                             daemon=True) for _ in range(20)]
for _t in _threads:
    _t.start()
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
''',
}

# Printed after the check attacks, in a cell of its own at the end.
PRINT_LEAK = '''
print("LEAK:" + base64.b64encode(repr((_found, _SEEN)).encode()).decode())
print("<script>alert('feedback')</script>")
'''

# Markdown and stored outputs that would run in the feedback page.
SCRIPT_MARKDOWN = ('<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">'
                   '\n\n[click](javascript:alert(3)) <a href="#" '
                   'onclick="alert(4)">me</a>\n')
SCRIPT_OUTPUTS = [
    {"output_type": "display_data", "metadata": {},
     "data": {"text/html": "<script>alert(5)</script><b onmouseover="
                           "'alert(6)'>bold</b><svg onload=alert(7)>",
              "text/plain": "x"}},
    {"output_type": "display_data", "metadata": {},
     "data": {"image/svg+xml": "<svg onload='alert(8)'></svg>"}},
]

# Honest habits: each in a cell after the setup of an otherwise honest
# notebook. Full points, no flag.
HABITS = {
    "magics": "%load_ext autoreload\n%autoreload 2\n%matplotlib inline\n"
              "%time x = sum(range(10))\n",
    "getattr_names": 'for name in ("sin", "cos", "exp"):\n'
                     '    print(name, getattr(np, name)(0.0))\n',
    "sys_path": "import sys\nprint(sys.path)\nprint(sys.version)\n",
    "plots": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
             "ax.plot([0, 1], [1, 0])\nplt.show()\n",
    "files": 'np.save("scores.npy", np.arange(4))\n'
             'print(np.load("scores.npy"))\n'
             'with open("notes.txt", "w") as handle:\n'
             '    handle.write("my notes")\n',
    "threads": "import concurrent.futures\n"
               "with concurrent.futures.ThreadPoolExecutor(2) as pool:\n"
               "    print(list(pool.map(abs, [-1, 2, -3])))\n",
}


def checksum(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    PROBE_FILE.unlink(missing_ok=True)
    NUMPY_PROBE.unlink(missing_ok=True)
    before = checksum(GRADER_FILE)
    handout = tmp_path_factory.mktemp("handout")
    run_tool("release", handout, "--assignment", NAME, "--force")
    released = handout / f"{NAME}.ipynb"
    subs = tmp_path_factory.mktemp("submissions")
    # The honest ones come first and last (graded before and after the
    # attackers, two at a time).
    hand_in(subs, "a_honest", NAME, honest(released, NAME))
    for student, probe in BOUNDARY.items():
        hand_in(subs, f"b_{student}", NAME, gate(honest(released, NAME), probe))
    nb = honest(released, NAME)
    insert_after(nb, "setup", LEAVE_BEHIND)
    hand_in(subs, "b_leaves_config", NAME, nb)
    for student, attack in CHECKS.items():
        nb = wrong(honest(released, NAME))
        insert_after(nb, "setup", attack)
        if student == "leaks_hidden":
            nb["cells"].append(code_cell(PRINT_LEAK))
            nb["cells"][0]["source"] = source_of(nb["cells"][0]) + (
                "\n\n" + SCRIPT_MARKDOWN)
            extra = code_cell("print('stored output')")
            extra["outputs"] = SCRIPT_OUTPUTS
            extra["execution_count"] = 1
            nb["cells"].append(extra)
        hand_in(subs, f"c_{student}", NAME, nb)
    # A cell that carries the setup's nbgrader id (so that the grader
    # takes it for the setup), placed first, with the attack in it.
    nb = wrong(honest(released, NAME))
    forged = code_cell(CHECKS["helper"] + CHECKS["kept_reference"],
                       nbgrader=dict(nbgrader(cell(nb, "setup"))))
    forged["id"] = "forged-setup"
    nb["cells"].insert(0, forged)
    hand_in(subs, "c_locked_id", NAME, nb)
    for habit, code in HABITS.items():
        nb = honest(released, NAME)
        insert_after(nb, "setup", code)
        hand_in(subs, f"d_{habit}", NAME, nb)
    hand_in(subs, "z_honest", NAME, honest(released, NAME))
    out = tmp_path_factory.mktemp("grades")
    rows, page = grade(subs, out, "--jobs", 2, "--timeout", 20)
    survivors = (processes_mentioning("posenc-attack-survivor")
                 + processes_mentioning(str(out)))
    # A later run: one honest student again.
    later = tmp_path_factory.mktemp("later")
    hand_in(later, "later_honest", NAME, honest(released, NAME))
    later_rows, _ = grade(later, tmp_path_factory.mktemp("later_grades"))
    survivors += processes_mentioning("posenc-attack-survivor")
    wrote = [p for p in (PROBE_FILE, NUMPY_PROBE) if p.exists()]
    for p in wrote:
        p.unlink()
    return {"rows": rows, "page": page, "later": later_rows,
            "survivors": survivors, "wrote": wrote,
            "grader_changed": checksum(GRADER_FILE) != before}


def test_the_class_is_all_there(graded):
    students = set(graded["rows"])
    assert {f"b_{s}" for s in BOUNDARY} | {f"c_{s}" for s in CHECKS} | {
        f"d_{h}" for h in HABITS} | {"a_honest", "z_honest",
                                     "c_locked_id"} <= students


@pytest.mark.parametrize("student", sorted(BOUNDARY))
def test_a_boundary_attack_gets_no_points(graded, student):
    row = graded["rows"][f"b_{student}"]
    assert float(row["auto_score"]) == 0, row
    # the attack itself ran to its end (it was refused, not broken): only
    # the shell's refusal is an error
    probe = re.search(r"cell (\d+) raised (\w+)", row["reason"])
    if student == "shell":
        assert probe and probe.group(2) == "BlockingIOError", row
    else:
        assert probe is None, row


@pytest.mark.parametrize("student", sorted(CHECKS) + ["locked_id"])
def test_a_check_attack_gets_no_points(graded, student):
    row = graded["rows"][f"c_{student}"]
    assert float(row["auto_score"]) == 0, row


@pytest.mark.parametrize("student", ["a_honest", "z_honest", "b_leaves_config"]
                         + [f"d_{h}" for h in sorted(HABITS)])
def test_honest_work_gets_full_points_and_no_flag(graded, student):
    row = graded["rows"][student]
    assert float(row["auto_score"]) == auto_max(NAME), row
    assert row["status"] == "graded" and row["flags"] == "", row


def test_a_later_run_is_not_touched_by_this_one(graded):
    row = graded["later"]["later_honest"]
    assert float(row["auto_score"]) == auto_max(NAME), row
    assert row["flags"] == "", row


def test_no_process_of_a_submission_survives_grading(graded):
    assert graded["survivors"] == []


def test_nothing_outside_the_sandbox_was_written(graded):
    assert graded["wrote"] == []
    assert not graded["grader_changed"]


def test_the_time_limit_stops_a_kernel_that_ignores_it(graded):
    row = graded["rows"]["c_exhausts"]
    assert row["status"] == "failed", row
    assert "did not stop when interrupted" in row["reason"], row


def test_the_feedback_shows_no_hidden_test_and_runs_nothing(graded):
    page = graded["page"]("c_leaks_hidden")
    text = visible_text(page)
    # what it printed while graded is not there (its code is, escaped)
    assert not re.search(r"LEAK:[A-Za-z0-9+/=]{8}", page)
    assert "stored output" in text and "alert(5)" not in text
    # no element that runs anything: scripts, event handlers, javascript:
    # links, SVG (the same texts, escaped, are harmless words)
    assert not re.search(r"(?i)<(script|svg|iframe|object|embed)\b", page)
    assert not re.search(r"(?i)<[^>]*\son\w+\s*=", page)
    assert not re.search(r"(?i)(href|src)\s*=\s*[\"']?\s*javascript:", page)
    hidden = [line.strip() for line in source_of(
        cell(__import__("json").loads(INSTRUCTOR.read_text()),
             "q1_attention_weights_tests")).split("### BEGIN HIDDEN TESTS")[1]
        .splitlines() if len(line.strip()) > 20]
    assert hidden and not any(line in text for line in hidden)
    # the verdicts and messages are there, and the student's own markdown
    assert "q1_attention_weights_tests" in text and "click" in text


def test_the_feedback_of_a_test_shows_only_its_verdict(graded):
    page = graded["page"]("a_honest")
    text = visible_text(page)
    assert "check_array(got, expected" not in text
    assert "expected = pc.self_attention" not in text
    assert re.search(r"q1_attention_weights_tests\s*\(3\):\s*passed", text)


def test_the_grader_says_plainly_where_bwrap_is_missing(tmp_path, monkeypatch):
    import subprocess
    import sys

    empty = tmp_path / "bin"
    empty.mkdir()
    (empty / "python").symlink_to(sys.executable)
    subs = tmp_path / "subs"
    hand_in(subs, "alice", NAME, {"cells": [], "metadata": {},
                                  "nbformat": 4, "nbformat_minor": 5})
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "assignments.py"), "grade",
         str(subs), "--out", str(tmp_path / "g.csv"),
         "--assignment", NAME],
        capture_output=True, text=True, env={"PATH": str(empty)},
        timeout=600, check=False)
    assert result.returncode != 0
    assert "bubblewrap (bwrap) is missing" in result.stderr
    assert "container" in result.stderr
    assert shutil.which("bwrap") is not None  # the tests need it themselves
