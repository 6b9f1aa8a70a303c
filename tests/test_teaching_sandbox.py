"""The grader's two sides: plain data between them, the sandboxed kernel.

``tools/teaching/wire.py`` (what crosses between the student's kernel and
the checks: plain data, strictly decoded), ``sandbox.py`` (bubblewrap) and
``session.py`` (the student's cells in the kernel, the test cells here,
each call of a student's function sent into the kernel), on small
notebooks, run for real in the sandbox.
"""

import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO))

from teaching import sandbox, session, wire  # noqa: E402

# ------------------------------------------------------------ plain data


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
    text = wire.dumps(value)
    json.loads(text)  # plain JSON, no NaN literals
    assert same(wire.loads(text), value)


def test_nan_and_negative_zero_are_kept():
    assert math.isnan(wire.loads(wire.dumps(math.nan)))
    assert math.copysign(1, wire.loads(wire.dumps(-0.0))) == -1
    array = wire.loads(wire.dumps(np.array([np.nan, -np.inf])))
    assert np.isnan(array[0]) and array[1] == -np.inf


def test_subclasses_are_stored_as_plain_data():
    back = wire.loads(wire.dumps(RiggedFloat(1.0)))
    assert type(back) is float and back != 2.0
    masked = wire.loads(wire.dumps(np.ma.masked_array([1.0, 2.0])))
    assert type(masked) is np.ndarray


def test_exceptions_come_back_as_builtin_classes_or_runtime_error():
    error = wire.loads(wire.dumps(ValueError("bad base")))
    assert type(error) is ValueError and str(error) == "bad base"

    class Custom(Exception):
        pass

    other = wire.loads(wire.dumps(Custom("odd")))
    assert type(other) is RuntimeError and "Custom: odd" in str(other)


def test_unserialisable_values_fail_every_use():
    class Thing:
        pass

    for value in (Thing(), {1: 2}, np.array([object()]), b"bytes"):
        back = wire.decode(wire.encode(value), what="f returned")
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
        back = wire.loads(wire.dumps(tensor))
        assert isinstance(back, torch.Tensor)
        assert back.dtype == tensor.dtype and back.shape == tensor.shape
        assert torch.equal(back, tensor.detach())


@pytest.mark.parametrize("text", [
    '{"__ndarray__": {"dtype": "O", "shape": [1], "data": ""}}',
    '{"__ndarray__": {"dtype": "V8", "shape": [1], "data": "AAAAAAAAAAA="}}',
    '{"__ndarray__": {"dtype": "<f8", "shape": [-1], "data": ""}}',
    '{"__ndarray__": {"dtype": "<f8", "shape": [1], "data": "!!"}}',
    '{"__ndarray__": {"dtype": "<f8", "shape": [1], "data": "", "x": 1}}',
    "NaN", "[1, Infinity]", '{"a": 1}', '{"__float__": "1e999x"}',
    '{"__exception__": "ValueError", "message": "m", "code": "import os"}',
    '{"__complex__": [1]}', '{"__tuple__": "abc"}', '{"__dict__": [1]}',
    '{"__tensor__": {"torch_dtype": "load", "dtype": "<f4", "shape": [0], '
    '"data": ""}}',
])
def test_anything_but_plain_data_is_refused(text):
    with pytest.raises(ValueError):
        wire.loads(text)


def test_deep_nesting_is_refused():
    with pytest.raises(ValueError, match="nested"):
        wire.loads("[" * 200 + "]" * 200)


# --------------------------------------------------------------- sandbox


def test_the_python_folders_never_include_the_repository():
    paths = [p.resolve() for p in sandbox.python_paths(exclude=[REPO])]
    prefix = Path(sys.prefix).resolve()
    for path in paths:
        assert path != REPO.resolve()
        assert REPO.resolve() not in path.parents or path == prefix, path
    assert Path(sys.base_prefix).resolve() in paths


def test_the_seccomp_program_is_whole_instructions():
    program = sandbox.seccomp_program()
    assert program is not None and len(program) % 8 == 0
    assert 8 <= len(program) // 8 <= 64


def test_bwrap_works_here():
    sandbox.check()


def test_without_bwrap_the_message_is_plain(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    with pytest.raises(RuntimeError, match="bubblewrap .* is missing"):
        sandbox.check()


# ------------------------------------------------- a small assignment, run

SETUP = '''import contextlib
import numpy as np
import posenc_core as pc


def check_array(got, expected, what):
    got = np.asarray(got, dtype=float)
    assert got.shape == np.shape(expected), f"{what}: wrong shape"
    assert np.allclose(got, expected), f"{what} is wrong"


@contextlib.contextmanager
def without_posenc_core(*names):
    originals = {name: getattr(pc, name) for name in names}

    def refuse(*args, **kwargs):
        raise AssertionError("this question asks you to write it yourself")

    for name in names:
        setattr(pc, name, refuse)
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(pc, name, original)
'''
RIGHT = '''def pair(d, base=10000.0):
    return base ** (-2.0 * np.arange(d // 2) / d)

answer = 42
'''
TESTS = '''with without_posenc_core("frequencies"):
    got = pair(8)
check_array(got, pc.frequencies(8), "pair(8)")
assert answer == 42, "answer is not 42"
# SENTINEL-4711: only here, in the checker
check_array(pair(16, base=100.0), pc.frequencies(16, base=100.0),
            "pair(16, base=100)")
'''


def run(*answers, tests=TESTS, timeout=30):
    cells = [{"kind": "locked", "grade_id": "setup", "source": SETUP}]
    cells += [{"kind": "student", "grade_id": None, "source": a}
              for a in answers]
    cells.append({"kind": "test", "grade_id": "q1", "source": tests})
    conn = session.workspace(Path(os.environ.get("TMPDIR", "/tmp"))
                             / "posenc-test-session")
    return session.run_submission(
        cells, handout=[REPO / "posenc_core.py"], conn_dir=conn,
        exclude=[REPO], names=["pair", "answer"], timeout=timeout)


@pytest.fixture(autouse=True)
def _posenc_core_put_back():
    import posenc_core

    saved = dict(vars(posenc_core))
    yield
    vars(posenc_core).update(saved)


def verdict(result):
    return result["verdicts"]["q1"]


def test_a_right_answer_passes_and_a_wrong_one_fails():
    assert verdict(run(RIGHT)) == {"passed": True, "message": ""}
    wrong = RIGHT.replace("-2.0", "-1.0")
    assert verdict(run(wrong)) == {"passed": False,
                                   "message": "pair(8) is wrong"}


def test_helpers_and_numpy_patched_in_the_kernel_change_nothing():
    wrong = RIGHT.replace("-2.0", "-1.0")
    attack = ("check_array = lambda *a, **k: None\n"
              "np.allclose = lambda *a, **k: True\n"
              "import builtins\nbuiltins.AssertionError = Warning\n")
    assert not verdict(run(wrong + attack))["passed"]


def test_a_switched_off_function_is_off_in_the_kernel_too():
    kept = ("_kept = {'f': pc.frequencies}\n"
            "def pair(d, base=10000.0, _ref=pc.frequencies):\n"
            "    return _ref(d, base=base)\n"
            "answer = 42\n")
    assert verdict(run(kept)) == {
        "passed": False,
        "message": "this question asks you to write it yourself"}
    via_dict = kept.replace("_ref(d, base=base)", "_kept['f'](d, base=base)")
    assert not verdict(run(via_dict))["passed"]


def test_the_kernel_never_sees_the_test_code_or_expected_values():
    snoop = RIGHT + '''
import gc
import sys

def pair(d, base=10000.0):
    found = any(isinstance(o, str) and "SENTINEL-4711" in o
                for o in gc.get_objects())
    frame = sys._getframe()
    while frame is not None:
        found |= "expected" in frame.f_locals or "got" in frame.f_globals
        frame = frame.f_back
    if found:
        return np.full(d // 2, np.nan)
    return base ** (-2.0 * np.arange(d // 2) / d)
'''
    assert verdict(run(snoop))["passed"]


def test_the_students_own_error_message_is_not_repeated():
    raising = ("def pair(d, base=10000.0):\n"
               "    raise ValueError('SECRET-INPUTS ' + repr(d))\n"
               "answer = 42\n")
    message = verdict(run(raising))["message"]
    assert message.startswith("pair raised ValueError")
    assert "SECRET" not in message


def test_values_are_bound_as_plain_data():
    rigged = RIGHT.replace("answer = 42", '''
class Anything(int):
    def __eq__(self, other):
        return True

answer = Anything(7)
''')
    assert verdict(run(rigged)) == {"passed": False,
                                    "message": "answer is not 42"}


def test_a_cell_that_runs_too_long_is_stopped_and_the_rest_runs():
    result = run("while True:\n    pass\n", RIGHT, timeout=5)
    assert verdict(result)["passed"]
    assert any("time limit of 5 s" in note for note in result["notes"])


def test_a_function_that_runs_too_long_fails_its_test():
    slow = RIGHT.replace("    return base",
                         "    while d == 16:\n        pass\n    return base")
    assert verdict(run(slow, timeout=5)) == {
        "passed": False, "message": "pair ran past the time limit of 5 s"}


def test_a_dead_kernel_fails_the_tests_after_it():
    result = run("import os\nos._exit(1)\n", RIGHT)
    assert not verdict(result)["passed"]
    assert "kernel died" in result["stopped"]


def test_gradients_come_from_the_kernel():
    pytest.importorskip("torch")
    square = "import torch\ndef pair(x):\n    return x * x\nanswer = 42\n"
    tests = '''import torch
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = pair(x)
y.sum().backward()
assert torch.equal(y.detach(), torch.tensor([1.0, 4.0, 9.0])), "values"
assert torch.equal(x.grad, torch.tensor([2.0, -4.0, 6.0])), "gradients"
'''
    assert verdict(run(square, tests=tests)) == {"passed": True, "message": ""}
