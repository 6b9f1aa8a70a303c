"""Record the student's answers in the kernel, re-check them in another process.

Grading a submission runs in two phases (see teaching.md):

Phase 1, in the student's kernel (started through ``kernel_guard.py``): the
test cells of an *instrumented* instructor notebook (:func:`instrument`) call
``__posenc_grading__.begin(grade_id, names)`` first and ``.end(grade_id)``
last. ``begin`` replaces every student-defined callable of the user namespace
by a wrapper that records each top-level call (a digest of the arguments and
the result, or the exception raised) and records every student-defined
variable by value; ``end`` restores the originals and writes the cell's
records to ``<records_dir>/<grade_id>.json`` (JSON only, never pickle). The
recorder is the class :class:`Recorder`; ``kernel_guard.py`` installs an
instance as ``builtins.__posenc_grading__``.

Phase 2, :func:`replay`, in a separate ``python -I`` process with its own
folder (the genuine ``posenc_core.py`` of the release copied into it): the
locked code cells and the test cells (the original code, hidden tests
included) of the instructor notebook run in order, with every student name
bound to a stub that returns what phase 1 recorded. Student code never runs
there, so the checks that award points, their helpers, numpy and posenc_core
are out of its reach.

This module needs only the standard library and numpy (nbformat to read a
notebook from a path; torch only when a tensor is recorded or replayed), and
it runs as the phase 2 script itself (``python -I checker.py SPEC OUT``).
"""

from __future__ import annotations

import base64
import builtins
import copy
import functools
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import numpy as np

RECORDER_NAME = "__posenc_grading__"
OBSERVED = "observed"
GRADE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
SCRIPT_NAME = "posenc_replay.py"
SPEC_NAME = "replay_spec.json"
VERDICTS_NAME = "replay_verdicts.json"


# ------------------------------------------------------------- serialisation


def _tensor_type():
    """torch.Tensor if torch is already imported, else None (never imports)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


def _array_json(array):
    array = np.asarray(array)
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes(order="C")).decode("ascii")}


def _array_from_json(obj):
    dtype = np.dtype(obj["dtype"])
    if dtype.hasobject:
        raise ValueError("object arrays cannot be replayed")
    data = base64.b64decode(obj["data"])
    return np.frombuffer(data, dtype=dtype).reshape(tuple(obj["shape"])).copy()


def _float_json(value):
    value = float.__float__(value)
    if math.isfinite(value):
        return value
    return {"__float__": repr(value)}


def encode(value, *, functions_by_name=False, _depth=0):
    """``value`` as JSON-compatible data that :func:`decode` turns back.

    Kept exactly: None, bool, int, float (nan and inf too), complex, str,
    tuple, list, dict with str keys, numpy scalars and arrays (dtype and
    shape), torch tensors (dtype and shape), exceptions (class and message).
    Subclasses of these are stored as the base type, so an object with a
    rigged ``__eq__`` is replayed as plain data. Anything else becomes a
    marker naming its type; with ``functions_by_name`` (argument digests) a
    function or class is stored by its ``__name__``.
    """
    if _depth > 100:
        return {"__unserialisable__": "deeply nested data"}
    depth = _depth + 1
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.dtype.hasobject:
            return {"__unserialisable__": f"numpy array of dtype {array.dtype}"}
        tag = "__numpy__" if isinstance(value, np.generic) else "__ndarray__"
        return {tag: _array_json(array)}
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return _float_json(value)
    if isinstance(value, complex):
        value = complex.__complex__(value)
        return {"__complex__": [_float_json(value.real), _float_json(value.imag)]}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, tuple | list):
        iterate = tuple.__iter__ if isinstance(value, tuple) else list.__iter__
        items = [encode(item, functions_by_name=functions_by_name, _depth=depth)
                 for item in iterate(value)]
        return {"__tuple__": items} if isinstance(value, tuple) else items
    if isinstance(value, dict):
        keys = list(dict.keys(value))
        if not all(type(key) is str for key in keys):
            return {"__unserialisable__": "dict with keys other than str"}
        return {"__dict__": {key: encode(dict.__getitem__(value, key),
                                         functions_by_name=functions_by_name,
                                         _depth=depth) for key in keys}}
    if isinstance(value, BaseException):
        return {"__exception__": type(value).__name__,
                "module": type(value).__module__,
                "message": _safe_str(value)}
    tensor = _tensor_type()
    if tensor is not None and isinstance(value, tensor):
        return {"__tensor__": _tensor_json(value)}
    if functions_by_name and callable(value):
        return {"__function__": str(getattr(value, "__name__", type(value).__name__))}
    return {"__unserialisable__": _type_name(value)}


def _type_name(value):
    kind = type(value)
    module = getattr(kind, "__module__", "")
    name = getattr(kind, "__qualname__", kind.__name__)
    return name if module in ("builtins", "__main__", None, "") else (
        f"{module}.{name}")


def _safe_str(exc):
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a student's __str__ may fail
        return f"<{type(exc).__name__} whose message cannot be shown>"


def _tensor_json(value):
    import torch

    tensor = value.detach().cpu().contiguous()
    dtype = str(tensor.dtype)
    if tensor.dtype == torch.bfloat16:
        array = tensor.view(torch.int16).numpy()
    else:
        array = tensor.numpy()
    return {"torch_dtype": dtype, **_array_json(array)}


def _tensor_from_json(obj):
    import torch

    array = _array_from_json(obj)
    dtype = getattr(torch, str(obj["torch_dtype"]).removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"not a torch dtype: {obj['torch_dtype']!r:.40}")
    if dtype == torch.bfloat16:
        return torch.from_numpy(array).view(torch.bfloat16)
    tensor = torch.from_numpy(array)
    if tensor.dtype != dtype:
        raise ValueError(f"tensor dtype {obj['torch_dtype']} does not match "
                         f"its data ({array.dtype})")
    return tensor


class Unchecked:
    """What replay returns for a result that was not serialisable.

    Any comparison, conversion or use raises an AssertionError saying so.
    """

    def __init__(self, message):
        object.__setattr__(self, "_message", message)

    def _refuse(self, *args, **kwargs):
        raise AssertionError(object.__getattribute__(self, "_message"))

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __bool__ = __len__ = __iter__ = __getitem__ = __contains__ = _refuse
    __float__ = __int__ = __index__ = __complex__ = __array__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __neg__ = __abs__ = __call__ = _refuse
    __setattr__ = _refuse
    __hash__ = None

    def __getattr__(self, name):
        self._refuse()

    def __repr__(self):
        return f"<{object.__getattribute__(self, '_message')}>"


def decode(obj, *, what="the answer is"):
    """The value that :func:`encode` stored as ``obj``.

    An unserialisable value comes back as an :class:`Unchecked` whose
    message starts with ``what`` ("pair_frequencies returned", "x is").
    """
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, list):
        return [decode(item, what=what) for item in obj]
    if not isinstance(obj, dict) or len(obj) == 0:
        raise ValueError(f"obj: not a value stored by encode: {obj!r:.80}")
    if "__float__" in obj:
        return float(obj["__float__"])
    if "__complex__" in obj:
        real, imag = (decode(part) for part in obj["__complex__"])
        return complex(real, imag)
    if "__tuple__" in obj:
        return tuple(decode(item, what=what) for item in obj["__tuple__"])
    if "__dict__" in obj:
        return {key: decode(value, what=what)
                for key, value in obj["__dict__"].items()}
    if "__ndarray__" in obj:
        return _array_from_json(obj["__ndarray__"])
    if "__numpy__" in obj:
        return _array_from_json(obj["__numpy__"])[()]
    if "__tensor__" in obj:
        return _tensor_from_json(obj["__tensor__"])
    if "__exception__" in obj:
        return rebuild_exception(obj)
    if "__function__" in obj:
        return Unchecked(f"{what} a function ({obj['__function__']}), "
                         "which the grader cannot check")
    if "__unserialisable__" in obj:
        return Unchecked(f"{what} a {obj['__unserialisable__']}, "
                         "which the grader cannot check")
    raise ValueError(f"obj: not a value stored by encode: {obj!r:.80}")


def rebuild_exception(obj):
    """A builtin exception class by name, else RuntimeError, with the message."""
    name = obj.get("__exception__", "Exception")
    message = obj.get("message", "")
    kind = getattr(builtins, name, None)
    if (isinstance(kind, type) and issubclass(kind, Exception)
            and obj.get("module", "builtins") == "builtins"):
        try:
            return kind(message)
        except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError's signature
            pass
    return RuntimeError(f"{name}: {message}" if message else name)


def dumps(value):
    """JSON text of ``value`` (see :func:`encode`)."""
    return json.dumps(encode(value), allow_nan=False)


def loads(text):
    """The value of the JSON text written by :func:`dumps`."""
    return decode(json.loads(text))


def digest(name, args, kwargs):
    """sha256 of the serialised arguments of a call to ``name``.

    A function argument counts by its ``__name__``; ``observed(label,
    compute)`` by its label only.
    """
    if name == OBSERVED:
        payload = [encode(args[0] if args else kwargs.get("label"),
                          functions_by_name=True)]
    else:
        payload = [encode(tuple(args), functions_by_name=True),
                   encode(dict(kwargs), functions_by_name=True)]
    text = json.dumps(payload, sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------ phase 1: record


class Recorder:
    """``builtins.__posenc_grading__`` in the grading kernel (phase 1)."""

    def __init__(self, records_dir):
        self.records_dir = Path(records_dir).resolve()  # a chdir cannot move it
        self._cell = None
        self._records = []
        self._originals = {}
        self._counts = {}
        self._namespace = None
        self._depth = 0

    def begin(self, cell, names, namespace=None):
        """Start recording test cell ``cell`` for the student ``names``."""
        if not isinstance(cell, str) or not GRADE_ID.fullmatch(cell):
            raise ValueError(f"cell: a grade_id of letters, digits, _.- "
                             f"expected, got {cell!r}")
        if self._cell is not None:
            self.end(self._cell)
        if namespace is None:
            namespace = sys._getframe(1).f_globals
        self._cell, self._records, self._originals = cell, [], {}
        self._counts, self._namespace, self._depth = {}, namespace, 0
        for name in names:
            if name not in namespace:
                self._records.append({"name": name, "kind": "missing"})
                continue
            value = namespace[name]
            if callable(value):
                self._originals[name] = value
                namespace[name] = self._wrap(name, value)
                self._records.append({"name": name, "kind": "callable"})
            else:
                self._records.append({"name": name, "kind": "value",
                                      "value": self._encode(value)})

    def _encode(self, value):
        try:
            return encode(value)
        except Exception as err:  # noqa: BLE001 - recorded, never raised
            return {"__unserialisable__": f"{_type_name(value)} ({err})"}

    def _wrap(self, name, function):
        recorder = self

        def recorded(*args, **kwargs):
            if recorder._depth > 0 or recorder._cell is None:
                return function(*args, **kwargs)
            index = recorder._counts.get(name, 0)
            recorder._counts[name] = index + 1
            record = {"name": name, "kind": "call", "index": index}
            try:
                record["digest"] = digest(name, args, kwargs)
            except Exception as err:  # noqa: BLE001
                record["digest"] = f"unserialisable arguments ({err})"
            recorder._records.append(record)
            recorder._depth += 1
            try:
                result = function(*args, **kwargs)
            except Exception as err:
                record["exception"] = self._encode(err)
                raise
            finally:
                recorder._depth -= 1
            record["result"] = self._encode(result)
            return result

        try:
            functools.update_wrapper(recorded, function)
        except Exception:  # noqa: BLE001 - e.g. a callable object
            pass
        return recorded

    def end(self, cell):
        """Stop recording; restore the names; write ``<grade_id>.json``."""
        if cell != self._cell:
            raise ValueError(f"cell: {cell!r} was not begun (recording "
                             f"{self._cell!r})")
        for name, original in self._originals.items():
            self._namespace[name] = original
        records = {"cell": cell, "records": self._records, "complete": True}
        self._cell, self._records, self._originals = None, [], {}
        self._namespace = None
        self.records_dir.mkdir(parents=True, exist_ok=True)
        path = self.records_dir / f"{cell}.json"
        temporary = path.with_name(f".{cell}.json.part")
        temporary.write_text(json.dumps(records, allow_nan=False),
                             encoding="utf-8")
        os.replace(temporary, path)


# --------------------------------------------------------------- instrument


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def is_test_cell(cell):
    """An nbgrader test cell: code, grade=True, not a solution."""
    meta = _nbgrader(cell)
    return (cell.get("cell_type") == "code" and bool(meta.get("grade"))
            and not meta.get("solution"))


def is_locked_code_cell(cell):
    """A locked code cell that is neither a test nor a solution (setup, data)."""
    meta = _nbgrader(cell)
    return (cell.get("cell_type") == "code" and bool(meta.get("locked"))
            and not meta.get("grade") and not meta.get("solution"))


def _string_continuation_lines(source):
    """Line numbers (1-based) that lie inside a multi-line string literal."""
    inside = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set()
    return inside


def _indent(source):
    keep = _string_continuation_lines(source)
    lines = source.splitlines()
    return "\n".join(line if (number in keep or not line.strip())
                     else "    " + line
                     for number, line in enumerate(lines, start=1))


def _check_names(student_names):
    if isinstance(student_names, str):
        raise ValueError("student_names: a collection of names expected, "
                         "not one string")
    names = sorted(set(student_names) | {OBSERVED})
    bad = [name for name in names
           if not (isinstance(name, str) and name.isidentifier())]
    if bad:
        raise ValueError(f"student_names: Python identifiers expected, got "
                         f"{bad!r}")
    return names


def instrument(nb, student_names):
    """A copy of notebook ``nb`` whose test cells record the student names
    (``observed`` is always one of them).

    Each test cell becomes ``__posenc_grading__.begin(grade_id, names)``,
    ``try:`` the original code indented (hidden-test markers kept, as
    comments), ``finally: __posenc_grading__.end(grade_id)``. Other cells
    are unchanged.
    """
    names = _check_names(student_names)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError("nb: a notebook (nbformat 4) expected")
    new = copy.deepcopy(nb)
    for cell in new["cells"]:
        if not is_test_cell(cell):
            continue
        grade_id = _nbgrader(cell).get("grade_id")
        if not isinstance(grade_id, str) or not GRADE_ID.fullmatch(grade_id):
            raise ValueError(f"nb: test cell with an unusable grade_id "
                             f"{grade_id!r}")
        body = _indent(_source(cell))
        cell["source"] = (
            f"{RECORDER_NAME}.begin({grade_id!r}, {names!r})\n"
            "try:\n"
            "    pass\n"
            f"{body}\n"
            "finally:\n"
            f"    {RECORDER_NAME}.end({grade_id!r})\n")
    return new


# ------------------------------------------------------------ phase 2: replay


def _read_notebook(instructor_nb):
    if isinstance(instructor_nb, str | os.PathLike):
        path = Path(instructor_nb)
        if not path.is_file():
            raise ValueError(f"instructor_nb: no notebook at {path}")
        return json.loads(path.read_text(encoding="utf-8"))
    if isinstance(instructor_nb, dict) and isinstance(
            instructor_nb.get("cells"), list):
        return instructor_nb
    raise ValueError("instructor_nb: a notebook (dict) or a path expected")


def replay_cells(nb):
    """The cells phase 2 runs: [{"kind", "grade_id", "source"}] in order."""
    cells = []
    for cell in nb["cells"]:
        if is_test_cell(cell):
            kind = "test"
        elif is_locked_code_cell(cell):
            kind = "locked"
        else:
            continue
        cells.append({"kind": kind, "grade_id": _nbgrader(cell).get("grade_id"),
                      "source": _source(cell)})
    return cells


def replay(instructor_nb, records_dir, student_names, *, workdir,
           python=sys.executable, timeout=120, copy_paths=()):
    """Re-check the recorded answers in a separate ``python -I`` process.

    ``workdir`` is the private folder of the process (created if missing);
    ``copy_paths`` are copied into it first (the genuine ``posenc_core.py``,
    ``posenc_lab/`` for assignment 8), and it comes first on ``sys.path``.
    Returns ``{grade_id: {"passed": bool, "message": str}}`` for every test
    cell of ``instructor_nb`` (a notebook or its path).
    """
    nb = _read_notebook(instructor_nb)
    names = _check_names(student_names)
    records_dir = Path(records_dir)
    if not records_dir.is_dir():
        raise ValueError(f"records_dir: no folder at {records_dir}")
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError(f"timeout: a positive number of seconds expected, "
                         f"got {timeout!r}")
    if isinstance(copy_paths, str | os.PathLike):
        copy_paths = [copy_paths]
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    for item in copy_paths:
        item = Path(item)
        if item.is_dir():
            shutil.copytree(item, work / item.name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif item.is_file():
            shutil.copy2(item, work / item.name)
        else:
            raise ValueError(f"copy_paths: {item} does not exist")
    cells = replay_cells(nb)
    tests = [cell["grade_id"] for cell in cells if cell["kind"] == "test"]
    spec = {"cells": cells, "names": names,
            "records_dir": str(records_dir.resolve())}
    (work / SPEC_NAME).write_text(json.dumps(spec), encoding="utf-8")
    shutil.copy2(Path(__file__), work / SCRIPT_NAME)
    out = work / VERDICTS_NAME
    out.unlink(missing_ok=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "POSENC_", "JUPYTER", "IPYTHON",
                                  "NBGRADER", "COVERAGE"))}
    env.update({"NBGRADER_EXECUTION": "autograde", "MPLBACKEND": "Agg"})
    command = [str(python), "-I", SCRIPT_NAME, SPEC_NAME, VERDICTS_NAME]
    try:
        result = subprocess.run(command, cwd=work, env=env, timeout=timeout,
                                stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, errors="replace")
    except subprocess.TimeoutExpired:
        message = (f"the grader's re-check took more than {timeout:g} s and "
                   "was stopped")
        return {grade_id: {"passed": False, "message": message}
                for grade_id in tests}
    if result.returncode != 0 or not out.is_file():
        raise RuntimeError(f"the replay process failed (exit code "
                           f"{result.returncode}):\n{result.stderr[-3000:]}")
    verdicts = json.loads(out.read_text(encoding="utf-8"))
    return {grade_id: verdicts[grade_id] for grade_id in tests}


class _Stubs:
    """Binds the student names of one test cell to their records."""

    def __init__(self, cell, records):
        self.cell = cell
        self.calls = {}
        self.used = {}
        for record in records:
            if record.get("kind") == "call":
                self.calls.setdefault(record["name"], []).append(record)

    def stub(self, name):
        def replayed(*args, **kwargs):
            calls = self.calls.get(name, [])
            index = self.used.get(name, 0)
            self.used[name] = index + 1
            if index >= len(calls):
                raise AssertionError(
                    f"{name} is called here once more (call {index + 1}) than "
                    "it was when your notebook ran in the grader: there is no "
                    "recorded result to check (did this test stop early "
                    "there?)")
            record = calls[index]
            if record.get("index", index) != index:
                raise AssertionError(f"the records of {name} are out of order")
            if record.get("digest") != digest(name, args, kwargs):
                raise AssertionError(
                    f"call {index + 1} of {name} here has other arguments than "
                    "the same call had when your notebook was graded, so its "
                    "recorded result cannot be checked")
            if "exception" in record:
                error = decode(record["exception"])
                if not isinstance(error, BaseException):
                    error = RuntimeError(f"{name} raised an exception")
                raise error
            if "result" not in record:
                raise AssertionError(
                    f"call {index + 1} of {name} did not finish when your "
                    "notebook was graded")
            return decode(record["result"], what=f"{name} returned")

        replayed.__name__ = replayed.__qualname__ = name
        return replayed

    def bind(self, namespace, names, records):
        for name in names:
            namespace.pop(name, None)
        for record in records:
            name = record.get("name")
            if name not in names:
                continue
            if record.get("kind") == "value":
                namespace[name] = decode(record["value"], what=f"{name} is")
        callables = {record.get("name") for record in records
                     if record.get("kind") == "callable"} | set(self.calls)
        for name in callables & set(names):
            namespace[name] = self.stub(name)


def _failure(exc):
    message = _safe_str(exc)
    if isinstance(exc, AssertionError) and message:
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _load_records(records_dir, grade_id):
    path = Path(records_dir) / f"{grade_id}.json"
    if not path.is_file():
        return None, ("this test cell has no record: it did not finish when "
                      "your notebook was graded")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data["records"]
        if data.get("cell") != grade_id or not isinstance(records, list):
            raise ValueError("records of another cell")
        for record in records:
            if not isinstance(record, dict) or not isinstance(
                    record.get("name"), str):
                raise ValueError("a record without a name")
    except (ValueError, KeyError, TypeError) as err:
        return None, f"the records of this test cell are unreadable ({err})"
    return records, None


def _replay_main(argv):
    """Phase 2 process: ``python -I posenc_replay.py SPEC OUT`` in its folder."""
    import contextlib
    import warnings

    spec_path, out_path = argv[1], argv[2]
    here = str(Path(spec_path).resolve().parent)
    sys.path.insert(0, here)
    # Only this folder's copies of the book's modules, never an editable
    # install of the repository: a copy the caller forgot fails loudly.
    sys.meta_path[:] = [
        finder for finder in sys.meta_path
        if not str(getattr(finder, "__module__", "")).startswith("__editable__")]
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    names = set(spec["names"])
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    verdicts = {}
    setup_error = None
    sink = io.StringIO()
    for cell in spec["cells"]:
        grade_id = cell["grade_id"]
        if cell["kind"] == "test":
            records, problem = _load_records(spec["records_dir"], grade_id)
            if problem is None:
                try:
                    _Stubs(grade_id, records).bind(namespace, names, records)
                except Exception as exc:  # noqa: BLE001 - a forged record
                    problem = ("the records of this test cell are unreadable "
                               f"({_failure(exc)})")
            if problem:
                verdicts[grade_id] = {"passed": False, "message": problem}
                continue
        try:
            code = compile(cell["source"], f"<cell {grade_id}>", "exec")
            with contextlib.redirect_stdout(sink), \
                    contextlib.redirect_stderr(sink), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(code, namespace)  # noqa: S102 - the instructor's own cells
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                exc = RuntimeError(f"{type(exc).__name__} in the test cell")
            if cell["kind"] == "test":
                verdicts[grade_id] = {"passed": False, "message": _failure(exc)}
            elif setup_error is None:
                setup_error = f"locked cell {grade_id}: {_failure(exc)}"
            continue
        if cell["kind"] == "test":
            verdicts[grade_id] = {"passed": True, "message": ""}
        sink.seek(0)
        sink.truncate()
    if setup_error:
        for verdict in verdicts.values():
            if not verdict["passed"]:
                verdict["message"] += f" (the grader's {setup_error})"
    Path(out_path).write_text(json.dumps(verdicts), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_replay_main(sys.argv))
