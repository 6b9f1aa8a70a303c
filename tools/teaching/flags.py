"""What in a submission a teacher should look at: static flags.

``analyse(submission, released, instructor)`` reads the code a student
wrote, without running it, and returns a list of ``Flag``: a short code,
where (cell and line) and a one-line reason for the grades CSV. A flag
keeps the points (the checks that award them run apart from the student's
code); it asks the teacher to look. The codes:

- ``binds-test-helper``: rebinds or changes a name that a locked cell
  other than a test binds (the setup's ``check_array``,
  ``without_posenc_core``, ``observed``, ``np``, ``pc``, the given data),
  or a tuple the tests pass as ``without_posenc_core(*OFF)``; importing the
  same module under the same name again (``import numpy as np``) is fine;
  the test cells' own variables (``x``, ``got``) are not protected: the
  tests bind them before they use them;
- ``patches-module``: assigns to an attribute of an imported module or
  class (``np.isclose = f``; display settings such as
  ``plt.rcParams[...]`` and ``os.environ[...]`` are fine), or uses setattr,
  delattr, globals(), vars(), ``__builtins__``, ``sys.modules``;
- ``uses-reference``: in the code of an answer whose tests switch
  ``posenc_core`` functions off (the instructor notebook's ``OFF`` tuples
  and ``without_posenc_core(...)`` arguments), and in the code that answer
  uses (helpers, module-level aliases, default arguments), a switched-off
  function by attribute (``pc.frequencies``), import or getattr string,
  or a new import of ``posenc_core``/``posenc_lab``; the names in
  ``forbidden`` (the grading config) as an attribute or a string anywhere;
- ``dynamic-code``: exec, eval, compile, ``__import__``, importlib,
  inspect, ctypes, subprocess, ``sys._getframe``, ``os.system``,
  ``get_ipython``, shell escapes and magics (``!cmd``, ``%%bash``,
  ``%run``; ``%matplotlib``, ``%time``, ``%timeit`` are fine), internals
  such as ``__dict__`` or ``__globals__``, getattr of a module with a
  computed name;
- ``detects-grader``: looks for the grader (a string ``NBGRADER_...``, or
  a locked name computed from one, such as ``GRADING``) or touches its
  recorder (``__posenc_grading__``);
- ``reads-files``: opens, loads or lists files with an absolute path, a
  path through ``..``, or a path computed at run time (and, from the
  grading kernel's guard log, ``flags_from_guard_log``, any file opened
  outside the allowed places);
- ``solution-markers``: BEGIN/END SOLUTION, BEGIN/END HIDDEN TESTS or
  "Model answer" in a cell (the instructor's version handed in);
- ``unchanged``: every answer cell as released;
- ``unparsable``: a code cell that is not Python (nor IPython).

The student's code is every code cell of the submission except copies of
the instructor's and the handout's given cells (locked or not) and the
locked cells that the grader restores anyway; students may add cells
anywhere. IPython syntax is turned into Python first
(``TransformerManager().transform_cell``), so ``!cmd`` and magics become
``get_ipython()`` calls. Only the standard library, nbformat and IPython.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

CODES = {
    "binds-test-helper": "rebinds or changes a name the tests use",
    "patches-module": "changes a module or the namespace",
    "uses-reference": "uses a reference function the question switches off",
    "dynamic-code": "runs code the grader cannot read, or reads internals",
    "detects-grader": "looks for the grader",
    "reads-files": "reads files outside its folder",
    "solution-markers": "contains the instructor's solution markers",
    "unchanged": "handed back with no answer changed",
    "unparsable": "a code cell that is not Python",
}

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS",
           "END HIDDEN TESTS", "Model answer")
REFERENCE_MODULES = ("posenc_core", "posenc_lab")
DYNAMIC_NAMES = {
    "exec": "runs a string as code (exec)",
    "eval": "evaluates a string as code (eval)",
    "compile": "compiles a string to code (compile)",
    "__import__": "imports a module by a computed name (__import__)",
    "breakpoint": "stops in the debugger (breakpoint)",
    "get_ipython": "drives the notebook's kernel (get_ipython)",
}
NAMESPACE_NAMES = {
    "setattr": "sets an attribute by name (setattr)",
    "delattr": "deletes an attribute (delattr)",
    "globals": "reads or changes the notebook's namespace (globals())",
    "vars": "reads or changes an object's namespace (vars())",
    "__builtins__": "reaches the built-in functions (__builtins__)",
}
DYNAMIC_MODULES = {
    "importlib": "imports modules by computed names",
    "inspect": "reads frames and source code",
    "ctypes": "writes memory directly",
    "subprocess": "runs other programs",
    "code": "runs code from strings",
    "codeop": "compiles code from strings",
    "runpy": "runs other Python files",
    "marshal": "loads code objects",
    "gc": "finds objects the tests hold",
    "pty": "runs other programs",
}
DYNAMIC_ATTRIBUTES = {
    ("sys", "_getframe"): "reads the caller's frame",
    ("sys", "_current_frames"): "reads the frames",
    ("sys", "settrace"): "traces the execution",
    ("sys", "setprofile"): "traces the execution",
    ("sys", "addaudithook"): "hooks the interpreter",
    ("sys", "path"): "changes where modules are imported from",
    ("sys", "meta_path"): "changes how modules are imported",
    ("sys", "path_hooks"): "changes how modules are imported",
    ("types", "FunctionType"): "builds functions from code objects",
    ("types", "CodeType"): "builds code objects",
    ("os", "system"): "runs a shell command",
    ("os", "popen"): "runs a shell command",
    ("os", "fork"): "forks the kernel",
    ("os", "kill"): "sends signals",
    ("os", "posix_spawn"): "runs other programs",
}
OS_PREFIXES = ("exec", "spawn")
# Module state that students may set: display settings and the environment.
SETTINGS = ("matplotlib.rcParams", "matplotlib.pyplot.rcParams",
            "pandas.options", "os.environ", "numpy.set_printoptions")
DUNDERS = {
    "__dict__", "__globals__", "__builtins__", "__code__", "__closure__",
    "__defaults__", "__kwdefaults__", "__subclasses__", "__bases__",
    "__mro__", "__getattribute__", "__setattr__", "__delattr__", "__import__",
    "__loader__", "__spec__", "__self__", "__func__", "__wrapped__",
}
SAFE_LINE_MAGICS = {"matplotlib", "time", "timeit", "pinfo", "pinfo2", "who",
                    "whos", "precision"}
CODE_MAGICS = {"time", "timeit", "capture"}   # their argument or body is code
SAFE_CELL_MAGICS = {"time", "timeit", "capture"}
# Functions that open, load or list files: {qualified name: path keywords}.
FILE_FUNCTIONS = {
    "open": ("file",), "io.open": ("file",), "codecs.open": ("filename",),
    "os.open": ("path",), "os.listdir": ("path",), "os.scandir": ("path",),
    "os.walk": ("top",), "os.fwalk": ("top",), "os.stat": ("path",),
    "os.lstat": ("path",), "os.chdir": ("path",), "os.remove": ("path",),
    "os.unlink": ("path",), "os.rmdir": ("path",), "os.rename": ("src",),
    "os.replace": ("src",), "os.readlink": ("path",), "os.access": ("path",),
    "os.makedirs": ("name",), "os.mkdir": ("path",),
    "os.path.exists": ("path",), "os.path.isfile": ("path",),
    "os.path.isdir": ("s",), "os.path.getsize": ("filename",),
    "glob.glob": ("pathname",), "glob.iglob": ("pathname",),
    "shutil.copy": ("src",), "shutil.copy2": ("src",),
    "shutil.copyfile": ("src",), "shutil.copytree": ("src",),
    "shutil.move": ("src",), "shutil.rmtree": ("path",),
    "numpy.load": ("file",), "numpy.loadtxt": ("fname",),
    "numpy.genfromtxt": ("fname",), "numpy.fromfile": ("file",),
    "numpy.memmap": ("filename",), "torch.load": ("f",),
    "matplotlib.pyplot.imread": ("fname",), "matplotlib.image.imread": ("fname",),
    "PIL.Image.open": ("fp",), "gzip.open": ("filename",),
    "bz2.open": ("filename",), "lzma.open": ("filename",),
    "tarfile.open": ("name",), "zipfile.ZipFile": ("file",),
    "io.FileIO": ("file",), "io.open_code": ("path",),
    "linecache.getline": ("filename",), "linecache.getlines": ("filename",),
    "linecache.updatecache": ("filename",), "sqlite3.connect": ("database",),
    "urllib.request.urlopen": ("url",),
}
FILE_PREFIXES = {"pandas.read_": ("filepath_or_buffer", "path", "io")}
PATH_CLASSES = {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath",
                "pathlib.WindowsPath"}
PATH_METHODS = {"read_text", "read_bytes", "open", "iterdir", "glob", "rglob",
                "write_text", "write_bytes", "unlink", "rmdir", "touch",
                "mkdir", "stat", "exists", "is_file", "is_dir"}
# Method names that only paths have: on an object of unknown kind, flagged.
PATH_ONLY_METHODS = {"read_text", "read_bytes", "iterdir", "rglob",
                     "write_text", "write_bytes"}
ATTRIBUTE_GETTERS = {"getattr", "hasattr", "attrgetter", "methodcaller",
                     "__getattribute__"}


@dataclass(frozen=True)
class Flag:
    """One thing a teacher should look at.

    ``cell`` is the index in the submission's cells (0-based; None for the
    whole notebook), ``line`` the line in the cell (1-based; None for the
    whole cell); ``str(flag)`` counts cells from 1, as a reader does.
    """

    code: str
    cell: int | None
    line: int | None
    reason: str

    def __str__(self):
        where = []
        if self.cell is not None:
            where.append(f"cell {self.cell + 1}")
        if self.line is not None:
            where.append(f"line {self.line}")
        return (", ".join(where) + ": " if where else "") + self.reason


def describe(flags):
    """The flags as one line for the CSV's reason column."""
    return "; ".join(str(flag) for flag in flags)


# ---------------------------------------------------------------- notebooks

def _notebook(nb, argument):
    if isinstance(nb, (str, os.PathLike)):
        path = Path(nb)
        if not path.is_file():
            raise ValueError(f"{argument}: no notebook file at {path}")
        try:
            return nbformat.read(path, as_version=4)
        except Exception as err:   # noqa: BLE001 - any unreadable file
            raise ValueError(f"{argument}: {path} is not a notebook ({err})") from None
    if isinstance(nb, dict) and isinstance(nb.get("cells"), list):
        return nb
    raise ValueError(f"{argument} must be a notebook (a dict with a list of "
                     f"cells, or the path of an .ipynb file), got "
                     f"{type(nb).__name__}")


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _meta(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def _normal(source):
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _is_test(cell):
    meta = _meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution")


def _is_locked(cell):
    meta = _meta(cell)
    return bool(meta.get("locked") or _is_test(cell))


_TRANSFORMER = None


def _python(source):
    """The cell's IPython syntax turned into Python (None if impossible)."""
    global _TRANSFORMER
    if _TRANSFORMER is None:
        from IPython.core.inputtransformer2 import TransformerManager
        _TRANSFORMER = TransformerManager()
    try:
        return _TRANSFORMER.transform_cell(source)
    except Exception:   # noqa: BLE001 - IPython refuses odd input its own way
        return None


# ------------------------------------------------------------ the AST parts

def _dotted(node):
    """'a.b.c' for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _root(node):
    """The name at the root of attributes and subscripts, else None."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _import_key(node, alias):
    """(bound name, what it is): the module path, or 'module:name'."""
    if isinstance(node, ast.Import):
        if alias.asname:
            return alias.asname, alias.name
        first = alias.name.split(".")[0]
        return first, first
    module = "." * node.level + (node.module or "")
    return alias.asname or alias.name, f"{module}:{alias.name}"


def _same_import(key, other):
    """``from a import b`` binds what ``import a.b as b`` binds, if a module."""
    return other is not None and _qualified(key) == _qualified(other)


def _qualified(key):
    """'numpy' or 'posenc_lab.model:TinyTransformer' -> a dotted name."""
    return key.replace(":", ".")


def _globals_of(node):
    """Names declared global directly in a function or class body."""
    found = set()
    stack = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Global):
            found.update(item.names)
        elif not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef,
                                   ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(item))
    return found


class _Binder(ast.NodeVisitor):
    """The module-level names a statement binds: (name, node, import key)."""

    def __init__(self):
        self.found = []
        self.scopes = [None]   # None: module; a set: a function's globals

    def _bind(self, name, node, key=None, walrus=False):
        scopes = self.scopes
        if walrus:
            scopes = [s for s in scopes if s != "comprehension"]
        top = scopes[-1]
        if top is None or (isinstance(top, set) and name in top):
            self.found.append((name, node, key))

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(node.id, node)

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        self._bind(node.target.id, node, walrus=True)

    def _function(self, node):
        if not isinstance(node, ast.Lambda):
            self._bind(node.name, node)
            for item in node.decorator_list:
                self.visit(item)
        for default in node.args.defaults + node.args.kw_defaults:
            if default is not None:
                self.visit(default)
        body = node.body if isinstance(node.body, list) else [node.body]
        self.scopes.append(_globals_of(node) if body is node.body else set())
        for item in body:
            self.visit(item)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node):
        self._bind(node.name, node)
        for item in node.decorator_list + node.bases + node.keywords:
            self.visit(item)
        self.scopes.append(_globals_of(node))
        for item in node.body:
            self.visit(item)
        self.scopes.pop()

    def _comprehension(self, node):
        self.scopes.append("comprehension")
        self.generic_visit(node)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "*":
                continue
            name, key = _import_key(node, alias)
            self._bind(name, node, key)

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node):
        if node.name:
            self._bind(node.name, node)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self._bind(node.name, node)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self._bind(node.name, node)

    def visit_MatchMapping(self, node):
        if node.rest:
            self._bind(node.rest, node)
        self.generic_visit(node)


def _bindings(tree):
    binder = _Binder()
    binder.visit(tree)
    return binder.found


def _locals_of(node):
    """The names local to a function or lambda (parameters, assignments)."""
    args = node.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    if isinstance(node, ast.Lambda):
        return names
    stack = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)):
            names.add(item.name)
            continue
        if isinstance(item, ast.Lambda):
            continue
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
            names.add(item.id)
        elif isinstance(item, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in item.names}
        elif isinstance(item, ast.ExceptHandler) and item.name:
            names.add(item.name)
        stack.extend(ast.iter_child_nodes(item))
    return names - _globals_of(node)


def _shadows(tree):
    """{id(node): the local names of the functions around it}."""
    found = {}

    def walk(node, local):
        found[id(node)] = local
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = local | _locals_of(node)
            outer = node.args.defaults + [d for d in node.args.kw_defaults if d]
            outer += getattr(node, "decorator_list", [])
            for child in ast.iter_child_nodes(node):
                walk(child, local if child in outer else inner)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            local = local | {n.id for g in node.generators
                             for n in ast.walk(g.target)
                             if isinstance(n, ast.Name)}
        for child in ast.iter_child_nodes(node):
            walk(child, local)

    walk(tree, frozenset())
    return found


def _loads(node):
    return {n.id for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _store_targets(node):
    """Attribute and subscript targets of assignments, deletions, loops."""
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    found = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            found.append(target)
    return found


def _literal_path(node):
    """The path a constant expression spells, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        value = node.value
        return value.decode(errors="replace") if isinstance(value, bytes) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left, right = _literal_path(node.left), _literal_path(node.right)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else f"{left}/{right}"
    if isinstance(node, ast.JoinedStr) and all(
            isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values)
    return None


def _dangerous(qualified):
    """(code, reason) when a qualified name is a way around the grader."""
    module, _, name = qualified.rpartition(".")
    if qualified == "sys.modules":
        return "patches-module", "reaches the loaded modules (sys.modules)"
    if (module, name) in DYNAMIC_ATTRIBUTES:
        return "dynamic-code", f"{DYNAMIC_ATTRIBUTES[module, name]} ({qualified})"
    if module == "os" and name.startswith(OS_PREFIXES):
        return "dynamic-code", f"runs other programs ({qualified})"
    if module == "builtins" and name in DYNAMIC_NAMES:
        return "dynamic-code", DYNAMIC_NAMES[name]
    if module == "builtins" and name in NAMESPACE_NAMES:
        return "patches-module", NAMESPACE_NAMES[name]
    return None


def _short(text, width=60):
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


# ----------------------------------------------------- the instructor's side

class _Instructor:
    """What the instructor notebook (and the handout) say about the cells.

    given: the sources of the given code cells (locked or not, with or
    without hidden tests), which are not analysed; locked_ids: the grade ids
    of the cells the grader restores; protected: {name: "the setup" or "the
    tests"}, the names the setup-like locked cells bind plus the tuples
    passed as ``without_posenc_core(*OFF)``; imports: {name: import key} of
    the locked cells; switched: {student name: the posenc_core names
    switched off while a test uses it}; grader_names: locked names computed
    from NBGRADER_* (``GRADING``).
    """

    def __init__(self, instructor, released):
        self.given = set()
        self.locked_ids = set()
        self.protected = {}
        self.imports = {}
        self.switched = {}
        self.switched_all = set()
        self.grader_names = set()
        for nb in (instructor, released):
            for cell in (nb or {"cells": []})["cells"]:
                if (cell.get("cell_type") == "code"
                        and not _meta(cell).get("solution")):
                    self.given.add(_normal(_source(cell)))
        self.tuples = {}   # the OFF-like tuples of the locked cells so far
        bound = set()      # every name a locked cell binds
        tested = []        # (names a test cell uses, names it switches off)
        for cell in instructor["cells"]:
            if cell.get("cell_type") != "code" or not _is_locked(cell):
                continue
            if _meta(cell).get("grade_id"):
                self.locked_ids.add(_meta(cell)["grade_id"])
            try:
                tree = ast.parse(_python(_source(cell)) or "")
            except SyntaxError:
                continue
            self._grader_names(tree)
            for name, _node, key in _bindings(tree):
                bound.add(name)
                if key is not None:
                    self.imports[name] = key
                if not _is_test(cell):
                    self.protected.setdefault(name, "the setup")
            off = self._switched_off(tree)
            if off:
                self.switched_all |= off
                shadow = _shadows(tree)
                tested.append(({n.id for n in ast.walk(tree)
                                if isinstance(n, ast.Name)
                                and isinstance(n.ctx, ast.Load)
                                and n.id not in shadow[id(n)]}, off))
        # The student's names: used by such a test, bound by no locked cell.
        for names, off in tested:
            for name in names - bound - set(dir(builtins)):
                self.switched.setdefault(name, set()).update(off)

    def _grader_names(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(
                    isinstance(n, ast.Constant) and isinstance(n.value, str)
                    and "NBGRADER_" in n.value.upper()
                    for n in ast.walk(node.value)):
                self.grader_names |= {n.id for t in node.targets
                                      for n in ast.walk(t)
                                      if isinstance(n, ast.Name)}

    def _switched_off(self, tree):
        """The names this cell's ``without_posenc_core(...)`` calls switch off."""
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, (ast.Tuple, ast.List))
                    and all(isinstance(e, ast.Constant)
                            and isinstance(e.value, str)
                            for e in node.value.elts)):
                self.tuples[node.targets[0].id] = {e.value
                                                   for e in node.value.elts}
        off = set()
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "without_posenc_core"):
                for arg in node.args:
                    if (isinstance(arg, ast.Constant)
                            and isinstance(arg.value, str)):
                        off.add(arg.value)
                    elif (isinstance(arg, ast.Starred)
                          and isinstance(arg.value, ast.Name)):
                        off |= self.tuples.get(arg.value.id, set())
                        self.protected.setdefault(arg.value.id, "the tests")
        return off


# ------------------------------------------------------------ the analysis

class _Cell:
    def __init__(self, index, trees):
        self.index = index
        self.trees = trees   # [(ast.Module, line offset)]


def _parse(index, source, flags):
    """The cell's trees: the code, and the code inside %time-like magics."""
    text = _python(source)
    if text is None:
        flags.append(Flag("unparsable", index, None,
                          "IPython cannot read this cell"))
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError as err:
        flags.append(Flag("unparsable", index, err.lineno,
                          f"not Python: {err.msg}"))
        return None
    trees, todo = [], [(tree, 0)]
    while todo:
        tree, base = todo.pop(0)
        trees.append((tree, base))
        for node in ast.walk(tree):
            magic = _magic(node)
            if magic is None or magic[1] not in CODE_MAGICS or magic[2] is None:
                continue
            kind, name, code = magic
            offset = base + node.lineno - 1 + (1 if kind == "cell" else 0)
            if kind == "line" and name == "timeit":
                code = re.sub(r"^\s*(-\w+(\s+\d+)?\s+)*", "", code)
            try:
                todo.append((ast.parse(_python(code) or ""), offset))
            except SyntaxError as err:
                flags.append(Flag("unparsable", index, base + node.lineno,
                                  f"the code in %{name} is not Python: "
                                  f"{err.msg}"))
    return _Cell(index, trees)


def _magic(node):
    """('line'|'cell'|'shell', name, code or None) for a get_ipython() call."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "get_ipython"):
        return None
    method = node.func.attr
    args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str)
            else None for a in node.args]
    if method in ("system", "getoutput"):
        return "shell", args[0] if args else None, None
    if method == "run_line_magic" and len(args) >= 2 and args[0]:
        return "line", args[0], args[1]
    if method == "run_cell_magic" and len(args) >= 3 and args[0]:
        return "cell", args[0], args[2]
    return "other", method, None


class _Analysis:
    def __init__(self, teacher, cells, forbidden, folder):
        self.teacher = teacher
        self.cells = cells
        self.forbidden = set(forbidden)
        self.folder = folder
        self.flags = []
        self.modules = dict(teacher.imports)   # name -> import key
        self._shadow = {}                       # id(node) -> local names
        self._handled = set()                   # get_ipython() of magics
        self.statements = []                    # (cell, offset, stmt, names)
        for cell in cells:
            for tree, offset in cell.trees:
                for stmt in tree.body:
                    found = _bindings(stmt)
                    self.statements.append((cell, offset, stmt, found))
                    for name, _, key in found:
                        if key is not None:
                            self.modules[name] = key
        self._aliases()

    def _aliases(self):
        """Names assigned a module or part of one (m = np.linalg) are modules."""
        changed = True
        while changed:
            changed = False
            for _, _, stmt, _ in self.statements:
                for node in ast.walk(stmt):
                    if (isinstance(node, ast.Assign) and len(node.targets) == 1
                            and isinstance(node.targets[0], ast.Name)):
                        name, dotted = node.targets[0].id, _dotted(node.value)
                        if (dotted and name not in self.modules
                                and dotted.split(".")[0] in self.modules):
                            self.modules[name] = self._resolve(dotted)
                            changed = True

    def _resolve(self, dotted, node=None):
        """'np.linalg.norm' -> 'numpy.linalg.norm', if rooted at an import.

        None when the root is a local name of a function around ``node``.
        """
        if not dotted:
            return None
        first, _, rest = dotted.partition(".")
        if first not in self.modules or first in self._shadow.get(id(node), ()):
            return None
        base = _qualified(self.modules[first])
        return f"{base}.{rest}" if rest else base

    def flag(self, code, cell, node, offset, reason):
        line = getattr(node, "lineno", None)
        self.flags.append(Flag(code, cell.index,
                               None if line is None else line + offset, reason))

    # -- the checks
    def run(self):
        scope = self._scope()
        for cell, offset, stmt, found in self.statements:
            self._bound(cell, offset, found)
            names = scope.get(id(stmt), {})
            self._shadow = _shadows(stmt)
            for node in ast.walk(stmt):
                if _magic(node) and _magic(node)[0] != "other":
                    self._handled.add(id(node.func.value.func))
            for node in ast.walk(stmt):
                self._node(cell, offset, node, names)
        return self.flags

    def _bound(self, cell, offset, found):
        for name, node, key in found:
            where = self.teacher.protected.get(name)
            if where is None or (key is not None
                                 and _same_import(key, self.teacher.imports.get(name))):
                continue
            what = f"imports {_qualified(key)} as" if key else "rebinds"
            self.flag("binds-test-helper", cell, node, offset,
                      f"{what} {name}, a name of {where} that the grader uses")

    def _scope(self):
        """{id(statement): {switched-off name: the tested name}}.

        The statements that a tested function needs: those binding it, and
        those binding the student's names they use, recursively.
        """
        binds = {}
        for entry in self.statements:
            for name, _, _ in entry[3]:
                binds.setdefault(name, []).append(entry)
        scope = {}
        for root, off in self.teacher.switched.items():
            if root in self.teacher.protected or root not in binds:
                continue
            todo, seen = [root], {root}
            while todo:
                for _, _, stmt, _ in binds.get(todo.pop(), []):
                    names = scope.setdefault(id(stmt), {})
                    for name in off:
                        names.setdefault(name, root)
                    for used in _loads(stmt):
                        if used in binds and used not in seen:
                            seen.add(used)
                            todo.append(used)
        return scope

    def _node(self, cell, offset, node, switched):
        for target in _store_targets(node):
            self._store(cell, offset, target)
        # The grading config's names: as an attribute or a string, anywhere.
        text = (node.attr if isinstance(node, ast.Attribute) else node.value
                if isinstance(node, ast.Constant) else None)
        if isinstance(text, str) and text in self.forbidden:
            self.flag("uses-reference", cell, node, offset,
                      self._forbidden(text, switched))
        if isinstance(node, ast.Call):
            self._call(cell, offset, node, switched)
        elif isinstance(node, ast.Name):
            self._name(cell, offset, node)
        elif isinstance(node, ast.Attribute):
            self._attribute(cell, offset, node, switched)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(cell, offset, node, switched)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "NBGRADER_" in node.value.upper():
                self.flag("detects-grader", cell, node, offset,
                          f"looks for the grader ({_short(repr(node.value), 40)})")
            elif "__posenc_grading__" in node.value:
                self.flag("detects-grader", cell, node, offset,
                          "names the grader's recorder __posenc_grading__")
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if (isinstance(key, ast.Constant) and isinstance(key.value, str)
                    and self._forbidden(key.value, switched)):
                self.flag("uses-reference", cell, node, offset,
                          self._forbidden(key.value, switched))

    def _forbidden(self, name, switched):
        """The reason a reference to ``name`` is forbidden here, or ''."""
        if name in switched:
            return (f"uses posenc_core's {name}, which the tests of "
                    f"{switched[name]} switch off")
        if name in self.forbidden:
            return f"uses {name}, which this assignment forbids"
        return ""

    def _store(self, cell, offset, target):
        root = _root(target)
        if root in self._shadow.get(id(target), ()):
            return
        text = _short(ast.unparse(target), 40)
        place = target
        while isinstance(place, ast.Subscript):
            place = place.value
        qualified = self._resolve(_dotted(place), place) or ""
        if qualified.startswith(SETTINGS):
            return   # plt.rcParams["figure.dpi"] = 120 and the like
        if root in self.modules:
            self.flag("patches-module", cell, target, offset,
                      f"assigns to {text}, part of "
                      f"{_qualified(self.modules[root])}")
        elif root in self.teacher.protected:
            self.flag("binds-test-helper", cell, target, offset,
                      f"changes {text}, part of {root}, a name of "
                      f"{self.teacher.protected[root]}")

    def _name(self, cell, offset, node):
        name = node.id
        if name in DYNAMIC_NAMES and name != "get_ipython":
            self.flag("dynamic-code", cell, node, offset, DYNAMIC_NAMES[name])
        elif name in NAMESPACE_NAMES:
            self.flag("patches-module", cell, node, offset, NAMESPACE_NAMES[name])
        elif name == "__posenc_grading__":
            self.flag("detects-grader", cell, node, offset,
                      "touches the grader's recorder __posenc_grading__")
        elif (name in self.teacher.grader_names
              and isinstance(node.ctx, ast.Load)
              and name not in self._shadow.get(id(node), ())):
            self.flag("detects-grader", cell, node, offset,
                      f"reads {name}, which tells whether the grader runs")
        elif name == "get_ipython" and id(node) not in self._handled:
            self.flag("dynamic-code", cell, node, offset,
                      DYNAMIC_NAMES["get_ipython"])

    def _attribute(self, cell, offset, node, switched):
        attr = node.attr
        if attr in DUNDERS:
            self.flag("dynamic-code", cell, node, offset,
                      f"reaches into internals ({_short(ast.unparse(node), 40)})")
        elif attr == "__posenc_grading__":
            self.flag("detects-grader", cell, node, offset,
                      "touches the grader's recorder __posenc_grading__")
        qualified = self._resolve(_dotted(node), node)
        if qualified is None:
            return
        danger = _dangerous(qualified)
        if danger:
            self.flag(danger[0], cell, node, offset, danger[1])
        elif (qualified.split(".")[0] in REFERENCE_MODULES
              and self._forbidden(attr, switched)):
            self.flag("uses-reference", cell, node, offset,
                      self._forbidden(attr, switched))

    def _import(self, cell, offset, node, switched):
        for alias in node.names:
            if isinstance(node, ast.Import):
                modules = [alias.name]
            else:
                base = "." * node.level + (node.module or "")
                modules = [base, f"{base}.{alias.name}"]
            top = modules[0].split(".")[0]
            danger = _dangerous(modules[-1])
            if danger and isinstance(node, ast.ImportFrom):
                self.flag(danger[0], cell, node, offset, danger[1])
            if top in DYNAMIC_MODULES:
                self.flag("dynamic-code", cell, node, offset,
                          f"imports {top}, which {DYNAMIC_MODULES[top]}")
            off = sorted(self.teacher.switched_all | self.forbidden)
            if alias.name == "*" and top in REFERENCE_MODULES and off:
                self.flag("uses-reference", cell, node, offset,
                          f"imports every name of {modules[0]}, also "
                          f"{', '.join(off)}, which the tests switch off")
                continue
            if alias.name == "*":
                self.flag("binds-test-helper", cell, node, offset,
                          f"imports every name of {modules[0]}, which can hide "
                          "the names the tests use")
            if top not in REFERENCE_MODULES:
                continue
            if isinstance(node, ast.ImportFrom) and self._forbidden(
                    alias.name, switched):
                self.flag("uses-reference", cell, node, offset,
                          self._forbidden(alias.name, switched))
            elif switched:
                name, key = _import_key(node, alias)
                if not _same_import(key, self.teacher.imports.get(name)):
                    tested = sorted(set(switched.values()))
                    self.flag("uses-reference", cell, node, offset,
                              f"imports {_qualified(key)} in the code of "
                              f"{', '.join(tested)}, whose tests switch "
                              "posenc_core functions off")

    def _call(self, cell, offset, node, switched):
        magic = _magic(node)
        if magic is not None:
            self._magic(cell, offset, node, magic)
            return
        func = node.func
        qualified = (self._resolve(_dotted(func), func) or
                     (func.id if isinstance(func, ast.Name) else None))
        name = qualified.rpartition(".")[2] if qualified else (
            func.attr if isinstance(func, ast.Attribute) else None)
        if name in ATTRIBUTE_GETTERS and len(node.args) >= 2:
            key = node.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if self._forbidden(key.value, switched):
                    self.flag("uses-reference", cell, node, offset,
                              self._forbidden(key.value, switched))
            elif _root(node.args[0]) in self.modules and name != "hasattr":
                self.flag("dynamic-code", cell, node, offset,
                          f"gets an attribute of a module by a computed name "
                          f"({_short(ast.unparse(node), 40)})")
        self._file(cell, offset, node, qualified)

    def _magic(self, cell, offset, node, magic):
        kind, name, _ = magic
        if kind == "shell":
            self.flag("dynamic-code", cell, node, offset,
                      f"runs a shell command (!{name or '...'})")
        elif kind == "line" and name not in SAFE_LINE_MAGICS:
            self.flag("dynamic-code", cell, node, offset,
                      f"uses the magic %{name}")
        elif kind == "cell" and name not in SAFE_CELL_MAGICS:
            self.flag("dynamic-code", cell, node, offset,
                      f"uses the cell magic %%{name}")

    def _file(self, cell, offset, node, qualified):
        func = node.func
        path = missing = object()
        what = qualified
        prefix = next((p for p in FILE_PREFIXES
                       if qualified and qualified.startswith(p)), None)
        if qualified in FILE_FUNCTIONS:
            path = self._argument(node, FILE_FUNCTIONS[qualified])
            if qualified == "urllib.request.urlopen":
                url = _literal_path(path) if path is not None else None
                if url is not None and not url.lower().startswith("file:"):
                    return
        elif prefix:
            path = self._argument(node, FILE_PREFIXES[prefix])
        elif (isinstance(func, ast.Attribute) and func.attr in PATH_METHODS
              and qualified is None):
            receiver = func.value
            made = (isinstance(receiver, ast.Call)
                    and self._resolve(_dotted(receiver.func), receiver.func)
                    in PATH_CLASSES)
            what = f"Path.{func.attr}"
            if made:
                path = self._argument(receiver, ("",))
                if path is None:
                    path = ast.Constant(".")
            elif isinstance(receiver, ast.BinOp) and isinstance(receiver.op,
                                                                ast.Div):
                path = receiver
            elif func.attr in PATH_ONLY_METHODS:
                path = receiver
        if path is missing:
            return
        verdict = self._outside(path)
        if verdict:
            self.flag("reads-files", cell, node, offset,
                      f"{what}({_short(ast.unparse(path), 30) if path else ''})"
                      f" reads {verdict}")

    @staticmethod
    def _argument(node, keywords):
        if node.args:
            return node.args[0]
        for keyword in node.keywords:
            if keyword.arg in keywords:
                return keyword.value
        return None

    def _outside(self, path):
        """Why the path may lie outside the folder, or ''."""
        if path is None:
            return ""
        if isinstance(path, ast.BinOp) and isinstance(path.op, ast.Div):
            left = path.left
            if (isinstance(left, ast.Call)
                    and self._resolve(_dotted(left.func), left.func)
                    in PATH_CLASSES):
                inner = self._argument(left, ("",))
                path = ast.BinOp(inner if inner is not None else ast.Constant("."),
                                 ast.Div(), path.right)
        if (isinstance(path, ast.Call) and not path.keywords
                and self._resolve(_dotted(path.func), path.func) in PATH_CLASSES | {
                    "os.path.join"}):
            parts = [_literal_path(a) for a in path.args]
            text = None if None in parts else "/".join(parts or ["."])
        else:
            text = _literal_path(path)
        if text is None:
            return "a path computed at run time"
        if re.match(r"^(/|~|\\\\|[A-Za-z]:|file:)", text, re.I):
            return "an absolute path"
        if ".." in re.split(r"[/\\]", text):
            return "a path outside its folder (..)"
        if self.folder is not None:
            base = os.path.realpath(self.folder)
            full = os.path.realpath(os.path.join(base, text))
            if os.path.commonpath([base, full]) != base:
                return "a link out of its folder"
        return ""


def _markers(submission):
    flags = []
    for index, cell in enumerate(submission["cells"]):
        found = [m for m in MARKERS if m in _source(cell)]
        if found:
            flags.append(Flag("solution-markers", index, None,
                              "contains the instructor's marker"
                              f"{'s' if len(found) > 1 else ''} "
                              + ", ".join(repr(m) for m in found)))
    return flags


def _unchanged(submission, released):
    answers = {}
    for cell in released["cells"]:
        meta = _meta(cell)
        if meta.get("solution") and meta.get("grade_id"):
            answers[meta["grade_id"]] = _normal(_source(cell))
    if not answers:
        return []
    handed = {}
    for cell in submission["cells"]:
        grade_id = _meta(cell).get("grade_id")
        if grade_id in answers:
            handed.setdefault(grade_id, _normal(_source(cell)))
    if all(handed.get(key) == text for key, text in answers.items()):
        return [Flag("unchanged", None, None,
                     f"handed back with no answer changed (all {len(answers)} "
                     "answer cells as released)")]
    return []


def analyse(submission_nb, released_nb, instructor_nb, *, forbidden=(),
            folder=None):
    """The flags of a submission, in the order of its cells.

    submission_nb, released_nb, instructor_nb: notebooks (dicts as nbformat
    reads them) or paths of .ipynb files; released_nb may be None (then no
    "unchanged" flag). forbidden: names of posenc_core functions forbidden
    in every cell of this assignment (assignments/grading/NN.json).
    folder: the folder the notebook is graded in; relative paths are
    checked against it (symbolic links out of it are flagged).
    """
    submission = _notebook(submission_nb, "submission_nb")
    released = None if released_nb is None else _notebook(released_nb,
                                                           "released_nb")
    instructor = _notebook(instructor_nb, "instructor_nb")
    if isinstance(forbidden, (str, bytes)) or not all(
            isinstance(name, str) and name.isidentifier()
            for name in forbidden):
        raise ValueError("forbidden must be a list of names (identifiers), "
                         f"got {forbidden!r}")
    if folder is not None and not Path(folder).is_dir():
        raise ValueError(f"folder must be an existing folder or None, got "
                         f"{folder!r}")
    teacher = _Instructor(instructor, released)
    flags = _markers(submission)
    cells = []
    for index, cell in enumerate(submission["cells"]):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        if _normal(source) in teacher.given or not source.strip():
            continue
        meta = _meta(cell)
        if _is_locked(cell) and meta.get("grade_id") in teacher.locked_ids:
            continue   # the grader puts the instructor's version back
        parsed = _parse(index, source, flags)
        if parsed is not None:
            cells.append(parsed)
    flags += _Analysis(teacher, cells, list(forbidden), folder).run()
    if released is not None:
        flags += _unchanged(submission, released)
    unique = list(dict.fromkeys(flags))
    return sorted(unique, key=lambda f: (f.cell is None, f.cell or 0,
                                         f.line or 0))


# ------------------------------------------------------ the kernel's guard

GUARD_VERBS = {  # event -> (what was done, what was tried)
    "open": ("opened", "open"), "os.listdir": ("listed", "list"),
    "os.scandir": ("listed", "list"), "os.chdir": ("moved into", "move into"),
}


def flags_from_guard_log(path, folder):
    """Flags from the grading kernel's guard log (kernel_guard.py).

    path: the JSON-lines log, one object a line: {"event", "path", "action":
    "refused" | "outside"}; a missing log means nothing was logged. A file
    event gives "reads-files" ("tried to" when refused); a program started
    or the garbage collector walked gives "dynamic-code". folder: the
    grading folder; a path inside it is never flagged. One flag per event,
    action and path.
    """
    if folder is None or not Path(folder).is_dir():
        raise ValueError(f"folder must be an existing folder, got {folder!r}")
    log = Path(path)
    if not log.exists():
        return []
    if not log.is_file():
        raise ValueError(f"path must be a log file, got the folder {log}")
    base = os.path.realpath(folder)
    flags, seen = [], set()
    for number, line in enumerate(log.read_text(errors="replace").splitlines(),
                                  1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            entry = None
        if not isinstance(entry, dict) or not isinstance(entry.get("event"), str):
            flags.append(Flag("reads-files", None, None,
                              f"the guard log has an unreadable line {number}"))
            continue
        event, action = entry["event"], str(entry.get("action", ""))
        where = str(entry.get("path", ""))
        if (event, action, where) in seen:
            continue
        seen.add((event, action, where))
        tried = "tried to " if action == "refused" else ""
        if event.startswith(("subprocess", "os.system", "os.exec", "os.spawn",
                             "os.posix_spawn", "os.startfile", "pty")):
            flags.append(Flag("dynamic-code", None, None,
                              f"while graded, tried to start a program "
                              f"({event} {_short(where, 60)})"))
            continue
        if event.startswith("gc."):
            flags.append(Flag("dynamic-code", None, None,
                              f"while graded, tried to walk the garbage "
                              f"collector's objects ({event})"))
            continue
        full = os.path.realpath(os.path.join(base, where)) if where else ""
        if full and os.path.commonpath([base, full]) == base:
            continue
        done, attempted = GUARD_VERBS.get(event, ("used", "use"))
        flags.append(Flag("reads-files", None, None,
                          f"while graded, {tried + attempted if tried else done} "
                          f"{_short(where, 80)} ({event}), outside its folder"))
    return flags
