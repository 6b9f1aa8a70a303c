"""Plain data between the student's kernel and the grader, strictly decoded.

The grader sends the arguments of each call of a student's function into
the sandboxed kernel, and the kernel sends back what it returned, both as
JSON made by :func:`encode`. :func:`decode` turns it back into plain data
only: None, bool, int, float (nan and inf too), complex, str, tuple, list,
dict with str keys, numpy scalars and arrays of numbers, bools or text,
torch tensors, and exceptions as builtin exception classes. Anything else
is refused (``ValueError``), never unpickled, never an object with methods
of its sender's choosing; a value the kernel could not send comes back as
an :class:`Unchecked`, which fails every use with a message.

This file runs on both sides: the grader imports it, and its source is
sent into the kernel (standard library and numpy only; torch if the kernel
already imported it).
"""

import base64
import builtins
import json
import math
import sys

import numpy as np

# dtype kinds a decoded array may have: bool, integers, floats, complex,
# bytes and text (never objects or structured records).
KINDS = set("biufcSU")
MAX_DEPTH = 100

def _tensor_type():
    """torch.Tensor if torch is already imported, else None (never imports)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


def _array_json(array):
    array = np.asarray(array)
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes(order="C")).decode("ascii")}


def _array_from_json(obj):
    if not isinstance(obj, dict) or set(obj) - {"dtype", "shape", "data",
                                                "torch_dtype"}:
        raise ValueError("obj: not an array stored by encode")
    if not isinstance(obj.get("dtype"), str) or len(obj["dtype"]) > 8:
        raise ValueError("obj: an array without a plain dtype")
    dtype = np.dtype(obj["dtype"])
    if dtype.kind not in KINDS or dtype.hasobject or dtype.fields:
        raise ValueError(f"obj: arrays of dtype {dtype} are not plain data")
    shape = obj.get("shape")
    if not (isinstance(shape, list) and len(shape) <= 32 and all(
            type(n) is int and n >= 0 for n in shape)):
        raise ValueError("obj: an array with a bad shape")
    if not isinstance(obj.get("data"), str):
        raise ValueError("obj: an array without data")
    data = base64.b64decode(obj["data"], validate=True)
    return np.frombuffer(data, dtype=dtype).reshape(tuple(shape)).copy()


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
    name = str(obj.get("torch_dtype", "")).removeprefix("torch.")
    dtype = getattr(torch, name, None) if name.isalnum() else None
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


def decode(obj, *, what="the answer is", functions=None, _depth=0):
    """The value that :func:`encode` stored as ``obj``.

    An unserialisable value comes back as an :class:`Unchecked` whose
    message starts with ``what`` ("pair_frequencies returned", "x is").
    Anything that :func:`encode` cannot have written raises ValueError.
    """
    if _depth > MAX_DEPTH:
        raise ValueError("obj: nested too deeply")
    if type(obj) is float and not math.isfinite(obj):
        raise ValueError("obj: a bare nan or inf")
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, list):
        return [decode(item, what=what, functions=functions,
                             _depth=_depth + 1) for item in obj]
    tags = ("__float__", "__complex__", "__tuple__", "__dict__", "__ndarray__",
            "__numpy__", "__tensor__", "__exception__", "__function__",
            "__unserialisable__")
    if not isinstance(obj, dict) or not any(tag in obj for tag in tags) or (
            len(obj) != 1 and "__exception__" not in obj):
        raise ValueError(f"obj: not a value stored by encode: {obj!r:.80}")
    if "__float__" in obj:
        if obj["__float__"] not in ("nan", "inf", "-inf"):
            raise ValueError("obj: a float tag without nan or inf")
        return float(obj["__float__"])
    if "__complex__" in obj:
        parts = obj["__complex__"]
        if not isinstance(parts, list) or len(parts) != 2:
            raise ValueError("obj: a complex number of two parts expected")
        real, imag = (decode(part) for part in parts)
        if not all(type(p) is float for p in (real, imag)):
            raise ValueError("obj: a complex number of two floats expected")
        return complex(real, imag)
    if "__tuple__" in obj:
        if not isinstance(obj["__tuple__"], list):
            raise ValueError("obj: a tuple tag without a list")
        return tuple(decode(item, what=what, functions=functions,
                             _depth=_depth + 1)
                     for item in obj["__tuple__"])
    if "__dict__" in obj:
        if not isinstance(obj["__dict__"], dict):
            raise ValueError("obj: a dict tag without a dict")
        return {key: decode(value, what=what, functions=functions,
                             _depth=_depth + 1)
                for key, value in obj["__dict__"].items()}
    if "__ndarray__" in obj:
        return _array_from_json(obj["__ndarray__"])
    if "__numpy__" in obj:
        return _array_from_json(obj["__numpy__"])[()]
    if "__tensor__" in obj:
        return _tensor_from_json(obj["__tensor__"])
    if "__exception__" in obj:
        if set(obj) - {"__exception__", "module", "message"} or not all(
                isinstance(v, str) for v in obj.values()):
            raise ValueError("obj: an exception stored otherwise than by "
                             "encode")
        return rebuild_exception(obj)
    if "__function__" in obj:
        if functions is not None and obj["__function__"] in functions:
            return functions[obj["__function__"]]
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


def _no_constant(name):
    raise ValueError(f"text: {name} is not allowed in the data")


def dumps(value, **options):
    """JSON text of ``value`` (see :func:`encode`)."""
    return json.dumps(encode(value, **options), allow_nan=False)


def loads(text, *, what="the answer is"):
    """The value of the JSON text written by :func:`dumps` (strictly)."""
    if not isinstance(text, str):
        raise ValueError("text: a str of JSON expected")
    return decode(json.loads(text, parse_constant=_no_constant), what=what)


