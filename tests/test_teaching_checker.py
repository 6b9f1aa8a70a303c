"""Record and replay (tools/teaching/checker.py) and the grading kernel's guard
(tools/teaching/kernel_guard.py).

Small hand-made notebooks run phase 1 in this process; assignment 3 runs it
for real, in a kernel started through kernel_guard.py in a grading folder
that holds a copy of posenc_core.py, and is then replayed.
"""

import ast
import json
import math
import re
import sys
import sysconfig
from pathlib import Path

import nbformat
import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools" / "teaching"))

import checker  # noqa: E402

GUARD = REPO / "tools" / "teaching" / "kernel_guard.py"
A03 = REPO / "assignments" / "source" / "03_frequencies" / "03_frequencies.ipynb"


# ------------------------------------------------------------------ helpers


def cell(source, kind=None, grade_id=None, points=1):
    """A code cell: kind None (plain), "locked", "solution" or "test"."""
    new = nbformat.v4.new_code_cell(source)
    if kind:
        new.metadata["nbgrader"] = {
            "grade": kind == "test", "grade_id": grade_id or kind,
            "locked": kind != "solution", "schema_version": 3,
            "solution": kind == "solution", "task": False,
            **({"points": points} if kind == "test" else {})}
    return new


SETUP = """\
import numpy as np

def check_array(got, expected, what):
    got = np.asarray(got, dtype=float)
    assert np.isclose(got, expected).all(), f"{what} is wrong"

def observed(label, compute):
    return compute()
"""


def small_notebook(answer="def double(x):\n    return 2 * x\n"):
    return nbformat.v4.new_notebook(cells=[
        cell(SETUP, "locked", "setup"),
        cell(answer, "solution", "q1"),
        cell("check_array(double(np.arange(3)), [0, 2, 4], 'double')\n"
             "### BEGIN HIDDEN TESTS\n"
             "check_array(double(2.5), 5.0, 'double(2.5)')\n"
             "### END HIDDEN TESTS\n", "test", "q1_tests"),
    ])


@pytest.fixture(autouse=True)
def _numpy_put_back():
    """phase1() runs attack code in this process (``np.isclose = ...``):
    put numpy back after each test, or every later test in this pytest
    worker compares with a patched numpy and passes wrong answers."""
    saved = dict(vars(np))
    yield
    for name in set(vars(np)) - set(saved):
        delattr(np, name)
    for name, value in saved.items():
        if vars(np).get(name) is not value:
            setattr(np, name, value)


def phase1(nb, names, records, answers=None):
    """Run the instrumented ``nb`` in this process, as the kernel would.

    ``answers`` maps a solution cell's grade_id to the student's code.
    Returns the grade_ids of the test cells that raised here.
    """
    instrumented = checker.instrument(nb, names)
    namespace = {"__posenc_grading__": checker.Recorder(records)}
    failed = []
    for item in instrumented.cells:
        if item.cell_type != "code":
            continue
        meta = item.metadata.get("nbgrader", {})
        source = item.source
        if meta.get("solution") and answers and meta["grade_id"] in answers:
            source = answers[meta["grade_id"]]
        try:
            exec(compile(source, "<cell>", "exec"), namespace)
        except Exception:  # noqa: BLE001 - a failing cell, as in a kernel
            failed.append(meta.get("grade_id"))
    return failed


def calls(data):
    """The call records in the data of a records file."""
    return [record for record in data["records"] if record["kind"] == "call"]


def replay(nb, names, records, tmp_path, **kwargs):
    return checker.replay(nb, records, names, workdir=tmp_path / "replay",
                          **kwargs)


# ------------------------------------------------------------ serialisation


class RiggedFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


VALUES = [None, True, False, 0, -7, 2**70, 2.5, -0.0, math.inf, -math.inf,
          1 + 2j, "text", (1, (2.5, "a")), [1, [2, None]], {"a": [1, (2,)]},
          np.float32(1.5), np.int64(-3), np.bool_(True), np.complex128(1j),
          np.arange(6, dtype=np.float16).reshape(2, 3),
          np.zeros((0, 4), dtype=np.int32), np.array(3.25),
          np.array([[1 + 1j]], dtype=np.complex64), np.array([True, False])]


def same(a, b):
    if isinstance(a, np.ndarray | np.generic):
        return (type(a) is type(b) and a.dtype == b.dtype
                and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, tuple | list):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b, strict=True)))
    if isinstance(a, dict):
        return (type(b) is dict and a.keys() == b.keys()
                and all(same(a[k], b[k]) for k in a))
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_values_round_trip_through_json(value):
    text = checker.dumps(value)
    json.loads(text)  # plain JSON, no NaN literals
    assert same(checker.loads(text), value)


def test_nan_and_negative_zero_are_kept():
    assert math.isnan(checker.loads(checker.dumps(math.nan)))
    assert math.copysign(1, checker.loads(checker.dumps(-0.0))) == -1
    array = checker.loads(checker.dumps(np.array([np.nan, -np.inf])))
    assert np.isnan(array[0]) and array[1] == -np.inf


def test_subclasses_are_stored_as_plain_data():
    back = checker.loads(checker.dumps(RiggedFloat(1.0)))
    assert type(back) is float and back != 2.0
    masked = checker.loads(checker.dumps(np.ma.masked_array([1.0, 2.0])))
    assert type(masked) is np.ndarray


def test_exceptions_come_back_as_builtin_classes_or_runtime_error():
    error = checker.loads(checker.dumps(ValueError("bad base")))
    assert type(error) is ValueError and str(error) == "bad base"

    class Custom(Exception):
        pass

    other = checker.loads(checker.dumps(Custom("odd")))
    assert type(other) is RuntimeError and "Custom: odd" in str(other)


def test_unserialisable_values_fail_every_use():
    class Thing:
        pass

    for value in (Thing(), {1: 2}, np.array([object()]), b"bytes"):
        back = checker.decode(checker.encode(value), what="f returned")
        for use in (lambda v: v == 1, lambda v: np.asarray(v, dtype=float),
                    lambda v: float(v), lambda v: len(v), lambda v: v.shape,
                    lambda v: v[0], lambda v: bool(v)):
            with pytest.raises(AssertionError, match="f returned a .*which "
                               "the grader cannot check"):
                use(back)


def test_torch_tensors_keep_their_dtype():
    torch = pytest.importorskip("torch")
    for tensor in (torch.arange(6, dtype=torch.float32).reshape(2, 3),
                   torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
                   torch.tensor([1, 2], dtype=torch.int64),
                   torch.ones(2, requires_grad=True) * 3):
        back = checker.loads(checker.dumps(tensor))
        assert isinstance(back, torch.Tensor)
        assert back.dtype == tensor.dtype and back.shape == tensor.shape
        assert torch.equal(back, tensor.detach())


def test_digest_depends_on_the_arguments_and_function_names():
    digest = checker.digest
    assert digest("f", (np.ones(3),), {}) == digest("f", (np.ones(3),), {})
    assert digest("f", (np.ones(3),), {}) != digest(
        "f", (np.ones(3, dtype=np.float32),), {})
    assert digest("f", (8,), {}) != digest("f", (), {"d_model": 8})
    assert digest("f", (len,), {}) == digest("f", (len,), {})
    assert digest("f", (len,), {}) != digest("f", (abs,), {})
    # observed(label, compute) counts by its label only
    assert digest("observed", ("model", lambda: 1), {}) == digest(
        "observed", ("model", print), {})
    assert digest("observed", ("model", print), {}) != digest(
        "observed", ("other", print), {})


# --------------------------------------------------------------- instrument


def test_instrument_wraps_only_test_cells():
    nb = small_notebook()
    nb.cells[2].source = ('message = """two\nlines"""\n' + nb.cells[2].source)
    new = checker.instrument(nb, ["double", "observed"])
    assert nb.cells[2].source.startswith("message")  # the input is unchanged
    assert new.cells[0].source == nb.cells[0].source
    assert new.cells[1].source == nb.cells[1].source
    test = new.cells[2].source
    assert test.startswith("__posenc_grading__.begin('q1_tests', "
                           "['double', 'observed'])\ntry:\n")
    assert test.rstrip().endswith("finally:\n    __posenc_grading__.end('q1_tests')")
    assert "    ### BEGIN HIDDEN TESTS\n" in test
    tree = ast.parse(test)
    strings = [node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert "two\nlines" in strings  # a string's second line is not indented


def test_instrument_refuses_bad_input():
    with pytest.raises(ValueError, match="student_names"):
        checker.instrument(small_notebook(), "double")
    with pytest.raises(ValueError, match="student_names"):
        checker.instrument(small_notebook(), ["not a name"])
    with pytest.raises(ValueError, match="nb"):
        checker.instrument({"cells": None}, ["double"])
    with pytest.raises(ValueError, match="cell"):
        checker.Recorder("x").begin("../escape", [])


# ------------------------------------------------- phase 1 here, replay there


def test_a_correct_answer_passes_and_a_wrong_one_fails(tmp_path):
    nb = small_notebook()
    assert phase1(nb, ["double"], tmp_path / "right") == []
    verdict = replay(nb, ["double"], tmp_path / "right", tmp_path)
    assert verdict == {"q1_tests": {"passed": True, "message": ""}}
    wrong = {"q1": "def double(x):\n    return x + x if np.ndim(x) else 0.0\n"}
    assert phase1(nb, ["double"], tmp_path / "wrong", wrong) == ["q1_tests"]
    verdict = replay(nb, ["double"], tmp_path / "wrong", tmp_path)
    assert verdict["q1_tests"] == {"passed": False,
                                   "message": "double(2.5) is wrong"}


def test_overwritten_helpers_do_not_help(tmp_path):
    nb = small_notebook()
    attack = {"q1": "def double(x):\n    return x\n"
                    "check_array = lambda *a, **k: None\n"
                    "np.isclose = lambda a, b, **k: np.ones(np.shape(a), bool)\n"}
    assert phase1(nb, ["double"], tmp_path / "rec", attack) == []  # fooled
    verdict = replay(nb, ["double"], tmp_path / "rec", tmp_path)
    assert verdict["q1_tests"]["passed"] is False
    assert verdict["q1_tests"]["message"] == "double is wrong"


def test_forged_records_with_wrong_values_fail(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    phase1(nb, ["double"], records)
    path = records / "q1_tests.json"
    data = json.loads(path.read_text())
    calls(data)[1]["result"] = checker.encode(4.0)  # double(2.5) = 4?
    path.write_text(json.dumps(data))
    verdict = replay(nb, ["double"], records, tmp_path)
    assert verdict["q1_tests"] == {"passed": False,
                                   "message": "double(2.5) is wrong"}


def test_an_argument_digest_mismatch_fails_clearly(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    phase1(nb, ["double"], records)
    path = records / "q1_tests.json"
    data = json.loads(path.read_text())
    calls(data)[1]["digest"] = checker.digest("double", (7,), {})
    path.write_text(json.dumps(data))
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert message.startswith("call 2 of double here has other arguments")


def test_a_missing_record_or_an_extra_call_fails(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    phase1(nb, ["double"], records)
    path = records / "q1_tests.json"
    data = json.loads(path.read_text())
    data["records"].remove(calls(data)[1])
    path.write_text(json.dumps(data))
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert "double is called here once more (call 2)" in message
    data["records"] = [r for r in data["records"] if r["kind"] != "call"]
    path.write_text(json.dumps(data))  # defined, but never called there
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert "double is called here once more (call 1)" in message
    path.unlink()
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert "has no record" in message
    path.write_text("{not json")
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert "unreadable" in message


def test_a_recorded_exception_is_raised_again(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    answer = {"q1": "def double(x):\n    raise ZeroDivisionError('no luck')\n"}
    assert phase1(nb, ["double"], records, answer) == ["q1_tests"]
    record = calls(json.loads((records / "q1_tests.json").read_text()))[0]
    assert record["exception"]["__exception__"] == "ZeroDivisionError"
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert message == "ZeroDivisionError: no luck"


def test_only_top_level_calls_are_recorded_and_names_are_restored(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    answer = {"q1": "def helper(x):\n    return x\n"
                    "def double(x):\n    return helper(x) + double_once(x)\n"
                    "def double_once(x):\n    return x\n"}
    names = ["double", "helper", "double_once"]
    namespace_check = checker.instrument(nb, names)
    assert "'helper'" in namespace_check.cells[2].source
    assert phase1(nb, names, records, answer) == []
    data = json.loads((records / "q1_tests.json").read_text())
    calls = [r["name"] for r in data["records"] if r["kind"] == "call"]
    assert calls == ["double", "double"]
    assert [r["index"] for r in data["records"] if r["kind"] == "call"] == [0, 1]
    # end() put the student's own functions back
    recorder = checker.Recorder(tmp_path / "again")
    namespace = {"f": len}
    recorder.begin("c", ["f", "g"], namespace)
    assert namespace["f"] is not len and namespace["f"]("abc") == 3
    recorder.end("c")
    assert namespace["f"] is len
    saved = json.loads((tmp_path / "again" / "c.json").read_text())["records"]
    assert {"name": "g", "kind": "missing"} in saved
    assert {"name": "f", "kind": "callable"} in saved


def test_variables_are_replayed_by_value(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        cell(SETUP, "locked", "setup"),
        cell("prediction = 3\n", "solution", "q1"),
        cell("assert prediction == 3, 'the prediction is not 3'\n", "test",
             "q1_tests"),
    ])
    for answer, passed in (("prediction = 3\n", True),
                           ("prediction = 4\n", False),
                           ("class Yes:\n    def __eq__(self, o): return True\n"
                            "prediction = Yes()\n", False)):
        records = tmp_path / f"rec{answer[:3]}{passed}"
        phase1(nb, ["prediction"], records, {"q1": answer})
        verdict = replay(nb, ["prediction"], records, tmp_path)["q1_tests"]
        assert verdict["passed"] is passed, (answer, verdict)
    assert "prediction is a Yes, which the grader cannot check" in (
        verdict["message"])


def test_unserialisable_results_fail_with_a_clear_message(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    answer = {"q1": "class Box:\n    pass\n"
                    "def double(x):\n    return Box()\n"}
    phase1(nb, ["double"], records, answer)
    message = replay(nb, ["double"], records, tmp_path)["q1_tests"]["message"]
    assert message == "double returned a Box, which the grader cannot check"


def test_observed_replays_a_tensor_with_its_dtype(tmp_path):
    pytest.importorskip("torch")
    nb = nbformat.v4.new_notebook(cells=[
        cell(SETUP + "import torch\n", "locked", "setup"),
        cell("def halve(t):\n    return t / 2\n", "solution", "q1"),
        cell("out = observed('model', lambda: halve(torch.ones(3)).half())\n"
             "assert out.dtype == torch.float16, f'dtype {out.dtype}'\n"
             "assert torch.equal(out, torch.full((3,), 0.5).half())\n",
             "test", "q1_tests"),
    ])
    names = ["halve", "observed"]
    records = tmp_path / "rec"
    assert phase1(nb, names, records) == []
    data = json.loads((records / "q1_tests.json").read_text())
    calls = [r for r in data["records"] if r["kind"] == "call"]
    assert [r["name"] for r in calls] == ["observed"]  # halve ran inside it
    assert calls[0]["result"]["__tensor__"]["torch_dtype"] == "torch.float16"
    verdict = replay(nb, names, records, tmp_path)
    assert verdict == {"q1_tests": {"passed": True, "message": ""}}
    wrong = tmp_path / "wrong"
    phase1(nb, names, wrong, {"q1": "def halve(t):\n    return t / 3\n"})
    assert replay(nb, names, wrong, tmp_path)["q1_tests"]["passed"] is False


def test_replay_refuses_bad_input_and_times_out(tmp_path):
    nb = small_notebook()
    records = tmp_path / "rec"
    records.mkdir()
    with pytest.raises(ValueError, match="records_dir"):
        checker.replay(nb, tmp_path / "none", ["double"], workdir=tmp_path)
    with pytest.raises(ValueError, match="timeout"):
        checker.replay(nb, records, ["double"], workdir=tmp_path, timeout=0)
    with pytest.raises(ValueError, match="copy_paths"):
        checker.replay(nb, records, ["double"], workdir=tmp_path,
                       copy_paths=[tmp_path / "missing.py"])
    slow = small_notebook()
    slow.cells[0].source += "import time\ntime.sleep(30)\n"
    verdict = checker.replay(slow, records, ["double"], workdir=tmp_path / "w",
                             timeout=3)
    assert verdict["q1_tests"]["passed"] is False
    assert "more than 3 s" in verdict["q1_tests"]["message"]


# ----------------------------------- assignment 3, phase 1 in a guarded kernel


def answer_names(nb):
    names = {"observed"}
    for item in nb.cells:
        meta = item.metadata.get("nbgrader", {})
        if item.cell_type == "code" and meta.get("solution"):
            names |= set(re.findall(r"^def (\w+)", item.source, flags=re.M))
            names |= set(re.findall(r"^(\w+) =", item.source, flags=re.M))
    return sorted(names)


PROBE = """\
import gc, json, os, posixpath, subprocess, sys
import posenc_core
found = {"posenc_core": posenc_core.__file__, "path0": sys.path[0]}

def attempt(key, action):
    try:
        action()
        found[key] = "done"
    except PermissionError:
        found[key] = "refused"

def read(path):
    return os.listdir(path) if os.path.isdir(path) else open(path).read()

for key in ("repo_file", "repo_dir", "course", "link", "relative", "log",
            "outside"):
    attempt(key, lambda: read(PATHS[key]))
attempt("subprocess", lambda: subprocess.run(["cat", PATHS["repo_file"]]))
attempt("write_venv", lambda: open(PATHS["venv_file"], "w").write("#"))
attempt("write_course", lambda: open(PATHS["course"] + ".new", "w"))
attempt("remove_course", lambda: os.remove(PATHS["course"]))
attempt("mkdir_home", lambda: os.mkdir(PATHS["home_dir"]))
attempt("write_here", lambda: open("mine.txt", "w").write("mine"))
attempt("write_outside", lambda: open(PATHS["outside"] + ".new", "w"))
import tempfile
with tempfile.NamedTemporaryFile("w") as scratch:
    found["tempfile"] = scratch.name
attempt("ipython_dir", lambda: open(
    os.path.join(os.environ["IPYTHONDIR"], "note.txt"), "w").write("x"))
found["ipython_private"] = os.environ["IPYTHONDIR"] != PATHS["shared_ipython"]
attempt("gc", gc.get_objects)
logs = [int(fd) for fd in os.listdir("/proc/self/fd")
        if os.path.realpath(f"/proc/self/fd/{fd}") == PATHS["log"]]
attempt("truncate_log", lambda: os.ftruncate(logs[0], 0))
# the guard resolves paths with functions captured before student code ran
os.path.realpath = posixpath.realpath = os.path.abspath = lambda p: "/tmp"
os.lstat = lambda *a, **k: os.stat("/tmp")
attempt("patched_realpath", lambda: read(PATHS["repo_file"]))
try:
    import posenc_plots
    found["posenc_plots"] = posenc_plots.__file__
except ImportError:
    found["posenc_plots"] = "not found"
print("PROBE" + json.dumps(found))
"""


class Guarded:
    """A course tree in a temporary folder; runs notebooks in kernels that
    start through kernel_guard.py, each in its own grading folder."""

    def __init__(self, root):
        self.root = root
        self.course = root / "course"
        self.instructor = (self.course / "source" / "03_frequencies"
                           / "03_frequencies.ipynb")
        self.instructor.parent.mkdir(parents=True)
        self.instructor.write_text(A03.read_text())
        self.outside = root / "outside" / "notes.txt"
        self.outside.parent.mkdir()
        self.outside.write_text("notes")
        for name in ("ktmp", "ipython"):
            (root / name).mkdir()
        self.runs = 0

    def run(self, nb):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager
        from nbclient import NotebookClient

        self.runs += 1
        number, root = self.runs, self.root
        folder = self.course / "autograded" / f"s{number}" / "03_frequencies"
        folder.mkdir(parents=True)
        (folder / "posenc_core.py").write_text(
            (REPO / "posenc_core.py").read_text())
        records, log = root / f"records{number}", root / f"guard{number}.log"
        kernels = root / f"kernels{number}"
        (kernels / "guarded").mkdir(parents=True)
        (kernels / "guarded" / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-I", str(GUARD), "-f",
                     "{connection_file}"],
            "display_name": "guarded", "language": "python",
            "env": {"POSENC_COURSE_ROOT": str(self.course),
                    "POSENC_RECORDS": str(records),
                    "POSENC_GUARD_LOG": str(log),
                    "POSENC_KERNEL_TMP": str(root / "ktmp"),
                    "IPYTHONDIR": str(root / "ipython"),
                    "MPLBACKEND": "Agg"}}))
        manager = KernelManager(kernel_name="guarded",
                                kernel_spec_manager=KernelSpecManager(
                                    kernel_dirs=[str(kernels)]))
        NotebookClient(nb, km=manager, timeout=60, allow_errors=True,
                       resources={"metadata": {"path": str(folder)}}).execute()
        lines = log.read_text().splitlines() if log.exists() else []
        return {"nb": nb, "records": records, "folder": folder,
                "log": [json.loads(line) for line in lines]}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    pytest.importorskip("nbclient")
    return Guarded(tmp_path_factory.mktemp("guard"))


def submission(answers=None, extra=""):
    """Assignment 3 as phase 1 runs it: instrumented tests, these answers."""
    nb = nbformat.read(A03, as_version=4)
    graded = checker.instrument(nb, answer_names(nb))
    for item in graded.cells:
        meta = item.metadata.get("nbgrader", {})
        if answers and meta.get("solution") and meta["grade_id"] in answers:
            item.source = answers[meta["grade_id"]]
    if extra:
        graded.cells.append(nbformat.v4.new_code_cell(extra))
    return graded


def errors(nb):
    """grade_ids of the nbgrader cells that raised in the kernel."""
    return {item.metadata["nbgrader"]["grade_id"] for item in nb.cells
            if item.cell_type == "code" and "nbgrader" in item.metadata
            and any(o.output_type == "error" for o in item.outputs)}


def replay03(run, tmp_path):
    nb = nbformat.read(A03, as_version=4)
    return checker.replay(nb, run["records"], answer_names(nb),
                          workdir=tmp_path / "replay",
                          copy_paths=[REPO / "posenc_core.py"])


# the test cells of assignment 3, in order (q1, q2, q3 first)
TESTS = [item.metadata["nbgrader"]["grade_id"]
         for item in nbformat.read(A03, as_version=4).cells
         if checker.is_test_cell(item)]
PASS = {"passed": True, "message": ""}


def test_assignment3_passes_and_the_guard_holds(guarded, tmp_path):
    number = guarded.runs + 1
    link = guarded.root / "outside" / "link.ipynb"
    link.symlink_to(A03)
    paths = {"repo_file": str(A03), "repo_dir": str(REPO / "assignments"),
             "course": str(guarded.instructor), "link": str(link),
             "relative": "../" * 30 + str(A03.relative_to("/")),
             "log": str(guarded.root / f"guard{number}.log"),
             "outside": str(guarded.outside),
             "venv_file": str(Path(sysconfig.get_paths()["purelib"])
                              / "posenc_guard_probe.txt"),
             "home_dir": str(Path.home() / "posenc_guard_probe"),
             "shared_ipython": str(guarded.root / "ipython")}
    try:
        run = guarded.run(submission(extra=PROBE.replace("PATHS",
                                                         repr(paths))))
    finally:  # should the guard fail, leave nothing behind
        Path(paths["venv_file"]).unlink(missing_ok=True)
        if Path(paths["home_dir"]).is_dir():
            Path(paths["home_dir"]).rmdir()
    assert errors(run["nb"]) == set()
    assert sorted(p.name for p in run["records"].iterdir()) == sorted(
        f"{name}.json" for name in TESTS)
    assert replay03(run, tmp_path) == dict.fromkeys(TESTS, PASS)

    outputs = run["nb"].cells[-1].outputs
    assert all(o.output_type != "error" for o in outputs), outputs
    text = "".join(o.get("text", "") for o in outputs)
    found = json.loads(text.split("PROBE", 1)[1])
    assert Path(found["posenc_core"]) == run["folder"] / "posenc_core.py"
    assert Path(found["path0"]) == run["folder"]
    assert found["posenc_plots"] == "not found"  # no editable install left
    assert found["outside"] == found["write_here"] == "done"
    assert found["ipython_dir"] == "done" and found["ipython_private"] is True
    # the kernel's own temporary folder, in POSENC_KERNEL_TMP
    assert Path(found.pop("tempfile")).parent.parent == guarded.root / "ktmp"
    assert (run["folder"] / "mine.txt").read_text() == "mine"
    for key in ("outside", "posenc_core", "path0", "posenc_plots",
                "write_here", "ipython_dir", "ipython_private"):
        del found[key]
    assert found == dict.fromkeys(
        ["repo_file", "repo_dir", "course", "link", "relative", "log",
         "subprocess", "gc", "truncate_log", "write_venv", "write_course",
         "write_outside",
         "remove_course", "mkdir_home", "patched_realpath"], "refused")
    assert guarded.instructor.is_file()
    refused = {(e["event"], e["path"]) for e in run["log"]
               if e["action"] == "refused"}
    assert {("open", str(A03)), ("os.listdir", str(REPO / "assignments")),
            ("open", str(guarded.instructor))} <= refused
    assert {event for event, _ in refused} == {
        "open", "os.listdir", "subprocess.Popen", "gc.get_objects",
        "os.remove", "os.mkdir"}
    outside = [e["path"] for e in run["log"] if e["action"] == "outside"]
    assert outside == [str(guarded.outside)]


WRONG_Q2 = """\
def wavelength_range(d_model, base=10000.0):
    return 2 * np.pi, 2 * np.pi * base, base ** (2 / d_model)
"""
WRONG_Q1_ISCLOSE = """\
np.isclose = lambda a, b, **k: np.ones(np.broadcast(a, b).shape, bool)
def pair_frequencies(d_model, base=10000.0):
    return base ** (-np.arange(d_model // 2) / d_model)
"""
WRONG_Q3_CHECK_ARRAY = """\
check_array = lambda *a, **k: None
def offset_distance(delta, d_model, base=10000.0):
    return np.abs(np.asarray(delta, dtype=float))
"""


def test_assignment3_wrong_answers_fail_the_right_cells(guarded, tmp_path):
    run = guarded.run(submission({"q2_wavelength_range": WRONG_Q2}))
    assert errors(run["nb"]) == {"q2_wavelength_range_tests"}
    verdict = replay03(run, tmp_path)
    assert all(verdict[name] == PASS for name in TESTS if name != TESTS[1])
    assert verdict[TESTS[1]]["passed"] is False
    assert "the longest wavelength is not 2*pi*base" in verdict[TESTS[1]][
        "message"]


def test_assignment3_overwritten_helpers_still_fail(guarded, tmp_path):
    run = guarded.run(submission({"q1_pair_frequencies": WRONG_Q1_ISCLOSE,
                                  "q3_offset_distance": WRONG_Q3_CHECK_ARRAY}))
    # the attacks fool the kernel (q2's test stops there, early, because
    # its own np.isclose check is broken too)...
    assert errors(run["nb"]) == {"q2_wavelength_range_tests"}
    verdict = replay03(run, tmp_path)  # ...not the replay
    assert all(verdict[name] == PASS for name in TESTS[3:])
    # q2's hidden call was never made in the kernel: nothing to check
    assert verdict[TESTS[1]]["passed"] is False
    assert "wavelength_range is called here once more (call 2)" in verdict[
        TESTS[1]]["message"]
    assert verdict[TESTS[0]] == {
        "passed": False, "message": "pair_frequencies(8) is wrong in 3 of 4 "
        "entries, the first at index (1,): got 0.316228, expected 0.1"}
    assert verdict[TESTS[2]]["passed"] is False
    assert verdict[TESTS[2]]["message"].startswith(
        "offset_distance([0, 1, 2, 5, 50], 16) is wrong")


def test_replay_runs_no_solution_cell_and_survives_forged_data(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # phase 1 runs here, in this process
    nb = small_notebook("open('solution_ran.txt', 'w').close()\n"
                        "def double(x):\n    return 2 * x\n")
    nb.cells.append(nbformat.v4.new_code_cell("open('plain_ran.txt', 'w')"))
    records = tmp_path / "rec"
    phase1(nb, ["double"], records)
    assert replay(nb, ["double"], records, tmp_path)["q1_tests"] == {
        "passed": True, "message": ""}
    assert (tmp_path / "solution_ran.txt").exists()  # phase 1 ran it
    assert not list((tmp_path / "replay").glob("*_ran.txt"))
    path = records / "q1_tests.json"
    data = json.loads(path.read_text())
    forged = [{"__ndarray__": {"dtype": "|O", "shape": [1], "data": ""}},
              {"__tensor__": {"torch_dtype": "torch.load", "dtype": "<f4",
                              "shape": [], "data": "AAAAAA=="}},
              {"__ndarray__": {"dtype": "<f8", "shape": [10**9], "data": ""}},
              {"__nonsense__": 1}]
    for value in forged:
        calls(data)[0]["result"] = value
        path.write_text(json.dumps(data))
        verdict = replay(nb, ["double"], records, tmp_path)["q1_tests"]
        assert verdict["passed"] is False and verdict["message"], value
    data["records"] = [{"name": "double", "kind": "value", "value": forged[0]}]
    path.write_text(json.dumps(data))
    verdict = replay(nb, ["double"], records, tmp_path)["q1_tests"]
    assert verdict["message"].startswith("the records of this test cell are "
                                         "unreadable")


def test_replay_uses_only_the_copies_in_its_folder(tmp_path):
    nb = small_notebook()
    nb.cells[0].source += "import posenc_core\n"
    records = tmp_path / "rec"
    phase1(nb, ["double"], records)
    verdict = replay(nb, ["double"], records, tmp_path)["q1_tests"]
    assert verdict["passed"] is True  # the test does not need posenc_core...
    nb.cells[2].source += "assert posenc_core.frequencies(2)[0] == 1\n"
    verdict = replay(nb, ["double"], records, tmp_path)["q1_tests"]
    # ...and with no copy in its folder, the editable install is not used
    assert verdict["passed"] is False
    assert "No module named 'posenc_core'" in verdict["message"]
    verdict = replay(nb, ["double"], records, tmp_path,
                     copy_paths=[REPO / "posenc_core.py"])["q1_tests"]
    assert verdict == {"passed": True, "message": ""}
