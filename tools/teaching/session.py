"""One submission: its code in a sandboxed kernel, the checks in this process.

The grader walks through the (repaired) submission cell by cell:

- the student's cells, and the locked cells of the instructor version
  (setup, given code), run in the student's kernel, inside its sandbox
  (``sandbox.py``);
- the locked cells also run here, in the checker's namespace, and so do
  the test cells, hidden tests included: they never reach the kernel.
  Each name the student defines is bound here, before each test cell, to
  its value in the kernel (plain data, ``wire.py``) or, for a function, to
  a :class:`Stub` that sends the arguments of each call into the kernel,
  where the student's function runs on them, and returns what it returned.

So the student's process only ever sees the inputs of its functions; the
expected values, the comparisons and the helpers of the tests exist only
here, and only plain data crosses over. Where a test switches off
``posenc_core`` functions (``without_posenc_core``), the stub switches the
same functions off in the kernel for the call: every reference to them
there (a default argument, a dict) then refuses too. A tensor argument
that needs gradients gets them from the kernel as well (``torch.autograd``
through the call).
"""

import ast
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from . import sandbox, wire

HERE = Path(__file__).resolve().parent
SANDBOX = HERE / "sandbox.py"
MAX_REPLY = 64 * 2**20      # characters of one reply from the kernel
MAX_OUTPUT = 2**20          # characters of output kept per cell

# The grader's side inside the kernel: decode the arguments, call the
# student's function, encode what it returned. Nothing in it is secret; the
# student's code can change it, and so can only change its own answers.
KERNEL_SIDE = r'''
def __posenc_install(wire_source, names):
    import json, sys, types
    wire = types.ModuleType("posenc_wire")
    exec(compile(wire_source, "posenc_wire", "exec"), wire.__dict__)
    ns = get_ipython().user_ns
    names = set(names)

    def refuse(*args, **kwargs):  # no free variables: it replaces __code__
        raise AssertionError("MESSAGE")

    def switch_off(off):
        pc, saved = sys.modules.get("posenc_core"), []
        for name, message in (off.items() if pc is not None else ()):
            f = getattr(pc, name, None)
            if isinstance(f, types.FunctionType) and not f.__code__.co_freevars:
                consts = tuple(message if c == "MESSAGE" else c
                               for c in refuse.__code__.co_consts)
                saved.append((f, f.__code__))
                f.__code__ = refuse.__code__.replace(co_consts=consts)
        return saved

    def encode(value):
        try:
            return wire.encode(value)
        except Exception as err:
            return {"__unserialisable__": f"{type(value).__name__} ({err})"}

    def values(wanted):
        out = {}
        for name in json.loads(wanted):
            if name not in ns:
                out[name] = {"kind": "missing"}
            elif callable(ns[name]):
                out[name] = {"kind": "callable"}
            else:
                out[name] = {"kind": "value", "value": encode(ns[name])}
        return json.dumps(out, allow_nan=False)

    def call(payload):
        p = json.loads(payload)
        function = ns.get(p["name"])
        if not callable(function):
            return json.dumps({"missing": True})
        known = {n: ns[n] for n in names if callable(ns.get(n))}
        args = wire.decode(p["args"], functions=known)
        kwargs = wire.decode(p["kwargs"], functions=known)
        grad = p.get("grad")
        if grad is not None:
            import torch
            inputs = []
            args = list(args)
            for index in grad["args"]:
                args[index] = args[index].detach().requires_grad_(True)
                inputs.append(args[index])
            for key in grad["kwargs"]:
                kwargs[key] = kwargs[key].detach().requires_grad_(True)
                inputs.append(kwargs[key])
        saved = switch_off(p.get("off", {}))
        try:
            with torch.enable_grad() if grad is not None else _nothing():
                result = function(*args, **kwargs)
                if grad is not None:
                    outs = result if isinstance(result, tuple) else (result,)
                    result = tuple(torch.autograd.grad(
                        outs, inputs, wire.decode(grad["outputs"]),
                        allow_unused=True))
        except Exception as err:
            return json.dumps({"raised": encode(err)})
        finally:
            for f, code in saved:
                f.__code__ = code
        return json.dumps({"result": encode(result)}, allow_nan=False)

    import contextlib
    _nothing = contextlib.nullcontext
    return types.SimpleNamespace(values=values, call=call)
'''


class KernelGone(Exception):
    """The kernel died or was stopped; nothing more runs in it."""


class Kernel:
    """The student's kernel, in its sandbox, driven through jupyter_client."""

    def __init__(self, handout, conn_dir, exclude, limits=None):
        self.conn = Path(conn_dir)
        self.conn.mkdir(parents=True, exist_ok=True)
        self.config = self.conn.parent / f"{self.conn.name}.sandbox.json"
        spec = sandbox.config(handout, self.conn, exclude, **(limits or {}))
        self.config.write_text(json.dumps(spec), encoding="utf-8")
        self.km = self.kc = None
        self.gone = None

    def start(self, timeout=120):
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpec

        km = KernelManager(transport="ipc", ip=str(self.conn / "k"),
                           connection_file=str(self.conn / "kernel.json"))
        km._kernel_spec = KernelSpec(
            argv=[sys.executable, "-I", str(SANDBOX), str(self.config),
                  "{connection_file}"],
            display_name="sandbox", language="python",
            interrupt_mode="message", env={}, resource_dir=str(self.conn))
        km.start_kernel()
        self.km = km
        self.kc = km.client()
        self.kc.start_channels()
        try:
            self.kc.wait_for_ready(timeout=timeout)
        except RuntimeError as err:
            self.gone = "the Python kernel did not start"
            raise KernelGone(self.gone) from err

    def alive(self):
        return self.gone is None and self.km is not None and (
            self.km.is_alive())

    def run(self, code, timeout, *, silent=False, user_expressions=None):
        """Execute ``code``; returns (reply content, outputs, timed_out)."""
        import queue

        if not self.alive():
            raise KernelGone(self.gone or "the kernel died")
        msg_id = self.kc.execute(code, silent=silent,
                                 store_history=not silent,
                                 user_expressions=user_expressions or {},
                                 allow_stdin=False, stop_on_error=False)
        outputs, size, timed_out = [], 0, False
        deadline = time.monotonic() + timeout
        interrupted = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if interrupted:
                    self.stop("a cell ran past its time limit and did not "
                              "stop when interrupted")
                    raise KernelGone(self.gone)
                timed_out = interrupted = True
                try:
                    self.km.interrupt_kernel()
                except Exception:  # noqa: BLE001 - a dying kernel
                    pass
                deadline = time.monotonic() + 10
                continue
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 1.0))
            except queue.Empty:
                if not self.km.is_alive():
                    self.stop("the Python kernel died (for example "
                              "os._exit(), a crash in compiled code or "
                              "running out of memory)")
                    raise KernelGone(self.gone) from None
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content.get("execution_state") == "idle":
                break
            if kind == "clear_output":
                outputs, size = [], 0
                continue
            output = _output(kind, content)
            if output is not None and size < MAX_OUTPUT:
                size += len(json.dumps(output))
                outputs.append(output)
        try:
            reply = self.kc.get_shell_msg(timeout=10)
            while reply.get("parent_header", {}).get("msg_id") != msg_id:
                reply = self.kc.get_shell_msg(timeout=10)
        except queue.Empty:
            self.stop("the Python kernel stopped answering")
            raise KernelGone(self.gone) from None
        return reply["content"], outputs, timed_out

    def evaluate(self, expression, timeout):
        """The str that ``expression`` gives in the kernel (and stderr)."""
        content, outputs, timed_out = self.run(
            "", timeout, silent=True, user_expressions={"r": expression})
        stderr = "".join(o.get("text", "") for o in outputs
                         if o.get("name") == "stderr")
        if timed_out:
            raise TimeoutError("the call ran past the time limit")
        result = content.get("user_expressions", {}).get("r", {})
        if result.get("status") != "ok":
            raise RuntimeError(f"{result.get('ename', 'error')} in the "
                               "grader's part of the kernel")
        text = result.get("data", {}).get("text/plain", "")
        if not isinstance(text, str) or len(text) > MAX_REPLY:
            raise RuntimeError("the kernel's reply is too large")
        value = ast.literal_eval(text)
        if not isinstance(value, str):
            raise RuntimeError("the kernel's reply is not text")
        return value, stderr

    def stop(self, reason=None):
        if reason and self.gone is None:
            self.gone = reason
        if self.kc is not None:
            try:
                self.kc.stop_channels()
            except Exception:  # noqa: BLE001
                pass
        if self.km is not None:
            try:
                self.km.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001
                try:
                    self.km.kill_kernel()
                except Exception:  # noqa: BLE001
                    pass
            try:
                self.km.cleanup_resources()
            except Exception:  # noqa: BLE001
                pass
        self.km = self.kc = None
        if self.gone is None:
            self.gone = "the kernel was shut down"


def _output(kind, content):
    if kind == "stream":
        return {"output_type": "stream", "name": content.get("name", "stdout"),
                "text": str(content.get("text", ""))[:MAX_OUTPUT]}
    if kind in ("execute_result", "display_data"):
        out = {"output_type": kind, "data": dict(content.get("data", {})),
               "metadata": {}}
        if kind == "execute_result":
            out["execution_count"] = content.get("execution_count")
        return out
    if kind == "error":
        return {"output_type": "error", "ename": str(content.get("ename", "")),
                "evalue": str(content.get("evalue", ""))[:2000],
                "traceback": [str(t)[:2000] for t in
                              content.get("traceback", [])][:50]}
    return None


class StudentError(Exception):
    """Raised in the checker for an exception of the student's own code."""


class Session:
    """The checker's link to one kernel: the stubs and their calls."""

    def __init__(self, kernel, names, timeout):
        self.kernel, self.names, self.timeout = kernel, sorted(names), timeout
        self.deadline = None
        self.warnings = []
        self.originals = {}

    def install(self):
        source = (HERE / "wire.py").read_text(encoding="utf-8")
        code = (KERNEL_SIDE + f"\n__posenc__ = __posenc_install({source!r}, "
                f"{self.names!r})\ndel __posenc_install\n")
        content, _, _ = self.kernel.run(code, 120, silent=True)
        if content.get("status") != "ok":
            raise RuntimeError("the grader's part of the kernel did not load: "
                               f"{content.get('ename')}: {content.get('evalue')}")
        import posenc_core

        self.pc = posenc_core
        self.originals = {k: v for k, v in vars(posenc_core).items()
                          if callable(v)}

    def _left(self):
        if self.deadline is None:
            return self.timeout
        return max(1.0, self.deadline - time.monotonic())

    def bind(self, namespace):
        """Bind the student's names in ``namespace`` as the kernel has them."""
        text, _ = self.kernel.evaluate(
            f"__posenc__.values({json.dumps(self.names)!r})", self._left())
        found = json.loads(text, parse_constant=wire._no_constant)
        for name in self.names:
            namespace.pop(name, None)
            entry = found.get(name)
            if not isinstance(entry, dict):
                continue
            if entry.get("kind") == "callable":
                namespace[name] = Stub(self, name)
            elif entry.get("kind") == "value":
                namespace[name] = wire.decode(entry.get("value"),
                                              what=f"{name} is")

    def switched_off(self):
        off = {}
        for name, original in self.originals.items():
            current = getattr(self.pc, name, None)
            if current is not original and callable(current):
                try:
                    current()
                    message = ""
                except AssertionError as err:
                    message = str(err)
                except Exception:  # noqa: BLE001
                    message = ""
                off[name] = message or (
                    "this question asks you to write it yourself, without "
                    f"calling posenc_core.{name}")
        return off

    def call(self, name, args, kwargs, grad=None):
        try:
            payload = {"name": name,
                       "args": wire.encode(tuple(args), functions_by_name=True),
                       "kwargs": wire.encode(dict(kwargs),
                                             functions_by_name=True),
                       "off": self.switched_off()}
            if grad is not None:
                payload["grad"] = grad
            text = json.dumps(payload, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise AssertionError(f"the grader cannot pass these arguments to "
                                 f"{name} ({err})") from None
        try:
            reply, stderr = self.kernel.evaluate(
                f"__posenc__.call({text!r})", self._left())
        except TimeoutError:
            raise AssertionError(f"{name} ran past the time limit of "
                                 f"{self.timeout:g} s") from None
        except KernelGone as err:
            raise AssertionError(f"{name} could not be called: {err}") from None
        except (RuntimeError, ValueError, SyntaxError) as err:
            raise AssertionError(f"{name}: {err}") from None
        warning = _warning(stderr)
        if warning and warning not in self.warnings:
            self.warnings.append(warning)
        try:
            data = json.loads(reply, parse_constant=wire._no_constant)
            if data.get("missing"):
                raise AssertionError(f"{name} is not defined in your notebook")
            if "raised" in data:
                error = wire.decode(data["raised"])
                if not isinstance(error, BaseException):
                    raise ValueError("not an exception")
            else:
                return wire.decode(data["result"], what=f"{name} returned")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise AssertionError(f"{name} returned something the grader "
                                 "cannot read") from None
        if isinstance(error, AssertionError) and str(error) in payload[
                "off"].values():  # the grader's own words
            raise AssertionError(str(error))
        error.posenc_student = name
        raise error


def _warning(stderr):
    """The category of the first warning in ``stderr`` (never its text)."""
    import re

    match = re.search(r"\b([A-Z]\w*Warning)\b", stderr or "")
    return match.group(1) if match else None


class Stub:
    """Stands for a student's function in the checker: calls it in the kernel."""

    def __init__(self, session, name):
        self.session, self.__name__ = session, name
        self.__qualname__ = name

    def __repr__(self):
        return f"<your function {self.__name__}>"

    def __call__(self, *args, **kwargs):
        torch = sys.modules.get("torch")
        if torch is not None and torch.is_grad_enabled():
            positions = [i for i, a in enumerate(args)
                         if isinstance(a, torch.Tensor) and a.requires_grad]
            keys = [k for k, a in kwargs.items()
                    if isinstance(a, torch.Tensor) and a.requires_grad]
            if positions or keys:
                return _remote_with_grad(self, args, kwargs, positions, keys)
        return self.session.call(self.__name__, args, kwargs)


def _remote_with_grad(stub, args, kwargs, positions, keys):
    """The call through torch.autograd: the backward pass asks the kernel."""
    import torch

    class Remote(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *tensors):
            a, k = _put(args, kwargs, positions, keys, tensors)
            ctx.save_for_backward(*tensors)
            result = stub.session.call(stub.__name__, a, k)
            if isinstance(result, torch.Tensor):
                return result
            if isinstance(result, tuple) and all(
                    isinstance(r, torch.Tensor) for r in result):
                return result
            raise AssertionError(f"{stub.__name__} must return a torch "
                                 "tensor here")

        @staticmethod
        def backward(ctx, *grads):
            a, k = _put(args, kwargs, positions, keys, ctx.saved_tensors)
            grads = tuple(torch.zeros(()) if g is None else g for g in grads)
            got = stub.session.call(stub.__name__, a, k, grad={
                "args": positions, "kwargs": keys,
                "outputs": wire.encode(grads)})
            if not isinstance(got, tuple) or len(got) != len(
                    positions) + len(keys):
                raise AssertionError(f"the gradients of {stub.__name__} "
                                     "could not be computed")
            return got

    tensors = [args[i] for i in positions] + [kwargs[k] for k in keys]
    return Remote.apply(*tensors)


def _put(args, kwargs, positions, keys, tensors):
    args, kwargs = list(args), dict(kwargs)
    tensors = [t.detach() for t in tensors]
    for i, t in zip(positions, tensors, strict=False):
        args[i] = t
    for k, t in zip(keys, tensors[len(positions):], strict=False):
        kwargs[k] = t
    return args, kwargs


# ------------------------------------------------------------ one submission


class _CellTime(Exception):
    pass


def _alarm(signum, frame):
    raise _CellTime()


def _failure(exc):
    """A verdict's message: the grader's words, never the student's text."""
    name = getattr(exc, "posenc_student", None)
    if name is not None:
        return (f"{name} raised {type(exc).__name__} (run the visible tests "
                "in your notebook to see where)")
    message = wire._safe_str(exc)
    if isinstance(exc, AssertionError) and message:
        return message[:500]
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text[:500]


def run_submission(cells, *, handout, conn_dir, exclude, names, timeout,
                   limits=None, started=None):
    """Run ``cells`` (the repaired notebook's, as the grader sees them).

    ``cells``: [{"kind": "student"|"locked"|"test", "grade_id", "source",
    "number"}] in order (``number``: the cell's place in the notebook,
    counted from 1, for the notes). ``started()`` is called once the
    kernel is ready. Returns
    ``{"verdicts", "notes", "warnings", "stopped"}``:
    {grade_id: {"passed", "message"}} for each test cell, notes in words
    for the teacher (a cell that raised, ran too long...), {grade_id:
    warning categories}, and why the kernel stopped early (or None).
    """
    import contextlib
    import io
    import warnings

    # The notebooks skip what the grader need not run (assignment 8's
    # training) when this is set, here while the checks run (the kernel's
    # sandbox sets it too).
    saved_env = os.environ.get("NBGRADER_EXECUTION")
    os.environ["NBGRADER_EXECUTION"] = "autograde"
    kernel = Kernel(handout, conn_dir, exclude, limits)
    verdicts, notes, warned = {}, [], {}
    namespace = {"__name__": "__main__"}
    sink = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        try:
            kernel.start()
            session = Session(kernel, names, timeout)
            session.install()
            if started is not None:
                started()  # the clock of --submission-time-limit starts
        except (KernelGone, RuntimeError) as err:
            notes.append(f"{err}, so nothing was graded")
            kernel.gone = kernel.gone or str(err)
            session = None
        for index, cell in enumerate(cells, start=1):
            where = f"cell {cell.get('number', index)}" + (
                f" ({cell['grade_id']})" if cell.get("grade_id") else "")
            if cell["kind"] in ("student", "locked") and kernel.alive():
                try:
                    content, _, timed_out = kernel.run(cell["source"], timeout)
                    if timed_out:
                        notes.append(f"{where} was stopped after the time "
                                     f"limit of {timeout} s")
                    elif content.get("status") == "error" and (
                            cell["kind"] == "student"):
                        notes.append(f"{where} raised "
                                     f"{str(content.get('ename'))[:60]}")
                except KernelGone as err:
                    notes.append(f"{where}: {err}; the cells after it were "
                                 "not run")
            if cell["kind"] == "locked" or cell["kind"] == "test":
                gid = cell.get("grade_id")
                if cell["kind"] == "test":
                    if session is None or not kernel.alive():
                        verdicts[gid] = {"passed": False, "message": (
                            "not checked: " + (kernel.gone or "no kernel"))}
                        continue
                    try:
                        session.deadline = time.monotonic() + timeout
                        session.warnings = []
                        session.bind(namespace)
                    except (KernelGone, TimeoutError, RuntimeError,
                            ValueError, SyntaxError) as err:
                        verdicts[gid] = {"passed": False,
                                         "message": f"not checked: {err}"}
                        continue
                try:
                    signal.alarm(int(timeout) + 30)
                    with contextlib.redirect_stdout(sink), \
                            contextlib.redirect_stderr(sink), \
                            warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        exec(compile(cell["source"], f"<{gid}>", "exec"),  # noqa: S102
                             namespace)
                    passed, message = True, ""
                except _CellTime:
                    passed, message = False, (
                        f"the check ran past the time limit of {timeout} s")
                except BaseException as exc:  # noqa: BLE001
                    if isinstance(exc, KeyboardInterrupt | SystemExit):
                        exc = RuntimeError(type(exc).__name__)
                    passed, message = False, _failure(exc)
                finally:
                    signal.alarm(0)
                    sink.seek(0)
                    sink.truncate()
                if cell["kind"] == "test":
                    verdicts[gid] = {"passed": passed, "message": message}
                    if session.warnings:
                        warned[gid] = session.warnings
                elif not passed:
                    notes.append(f"the grader's copy of locked {where} "
                                 f"failed: {message}")
        stopped = kernel.gone
    finally:
        signal.signal(signal.SIGALRM, previous)
        kernel.stop()
        if saved_env is None:
            os.environ.pop("NBGRADER_EXECUTION", None)
        else:
            os.environ["NBGRADER_EXECUTION"] = saved_env
    return {"verdicts": verdicts, "notes": notes, "warnings": warned,
            "stopped": stopped}


def workspace(root):
    """A fresh folder for one kernel's connection file and sockets."""
    conn = Path(root) / f"run-{secrets.token_hex(8)}"
    conn.mkdir(parents=True)
    os.chmod(conn, 0o700)
    return conn
