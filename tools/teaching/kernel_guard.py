"""Startup script of the grading kernel: ``python -I kernel_guard.py -f FILE``.

The kernel spec of a grading course runs this script instead of
``ipykernel_launcher`` (the arguments after it are ipykernel's). Before any
student code runs, it

1. reads its settings from the environment variables below and deletes them
   from ``os.environ``;
2. puts the grading folder first on ``sys.path`` and removes every way back
   into the repository: the editable install of posenc-book (its meta-path
   finder ``__editable___posenc_book_*_finder``, its path hooks), every
   ``sys.path`` entry inside the repository that is not the Python
   environment, and modules already imported from there; so ``import
   posenc_core`` finds the grading folder's copy or nothing;
3. installs an audit hook (``sys.addaudithook``, which cannot be removed)
   that refuses with PermissionError
   - to open, list or change anything under the repository (except reading
     ``sys.prefix`` and ``sys.base_prefix``: the ``.venv`` may live in the
     repository) or under the course root (except the grading folder and
     the records folder), and the guard log itself (also its truncation or
     a change of its flags);
   - to write (open for writing, create, remove, rename, copy to...)
     anywhere but the grading folder, the records folder, the kernel's own
     temporary folder, /dev and the font and matplotlib caches: so not
     into the Python environment (a ``.pth`` file or a module there would
     run in later processes), nor into Jupyter's configuration or the home
     folder;
   - to start programs (``subprocess``, ``os.system``, ``os.exec*``,
     ``posix_spawn``) and to walk the garbage collector's objects (which
     would reach the hook);
   every refusal, and every file opened outside the allowed places, is a
   JSON line in the guard log;
   the kernel gets a fresh temporary folder of its own (TMPDIR, in
   POSENC_KERNEL_TMP) with IPython's folder (IPYTHONDIR) in it, so that nothing a
   kernel writes there reaches the next kernel, and the system's temporary
   folder, where the teacher's files may be, stays out of its reach;
4. installs ``builtins.__posenc_grading__``, the recorder of
   ``checker.py`` (loaded from this script's folder), writing to the
   records folder;
5. starts ipykernel.

Environment variables (all optional):

POSENC_GRADING_FOLDER  the folder of the notebook being graded (default: cwd)
POSENC_REPO            the repository (default: two folders above this file)
POSENC_COURSE_ROOT     the temporary nbgrader course (default: none)
POSENC_RECORDS         where the recorder writes <grade_id>.json (default: no
                       recorder is installed)
POSENC_GUARD_LOG       the guard log, appended to, one JSON object a line:
                       {"event", "path", "action": "refused" | "outside"}
                       (default: no log)
POSENC_KERNEL_TMP      where the kernel's own temporary folder is made (the
                       caller removes it: a kernel that Jupyter shuts down
                       is killed, its atexit does not run; default: the
                       system's temporary folder)
POSENC_GUARD_ALLOW     further folders or files, os.pathsep-separated, that
                       the kernel may read without a log line even under the
                       course root (writing there is still refused). The
                       connection file given with -f needs no entry.

Read without a log line: the grading folder, the records folder, the Python
prefixes and site-packages, /dev, /proc, /sys, /usr, /etc, the kernel's own
temporary folder, font and matplotlib caches, ~/.ipython, the Jupyter
configuration and data folders, the connection file.

Limits: the hook sees Python's own file operations (``open``, ``os``,
``shutil``, ``pathlib``, ``numpy.load``, ``sqlite3``...), not C code that
calls the C library directly (``ctypes``); a symbolic link swapped between
the check and the open is not caught. The static flags of flags.py report
both kinds of code to the teacher.
"""

import atexit
import builtins
import importlib.util
import json
import os
import posix
import shutil
import site
import stat
import sys
import tempfile

SETTINGS = ("POSENC_GRADING_FOLDER", "POSENC_REPO", "POSENC_COURSE_ROOT",
            "POSENC_RECORDS", "POSENC_GUARD_LOG", "POSENC_GUARD_ALLOW",
            "POSENC_KERNEL_TMP")
# event -> (indices of the paths it reads, indices of the paths it writes)
PATH_EVENTS = {
    "open": ((0,), ()),  # a write when its mode or flags say so
    "os.listdir": ((0,), ()),
    "os.scandir": ((0,), ()),
    "os.chdir": ((0,), ()),
    "os.listxattr": ((0,), ()),
    "os.getxattr": ((0,), ()),
    "os.mkdir": ((), (0,)),
    "os.rmdir": ((), (0,)),
    "os.remove": ((), (0,)),
    "os.rename": ((), (0, 1)),
    "os.link": ((0,), (1,)),
    "os.symlink": ((0,), (1,)),
    "os.truncate": ((), (0,)),
    "os.chmod": ((), (0,)),
    "os.chown": ((), (0,)),
    "os.utime": ((), (0,)),
    "os.setxattr": ((), (0,)),
    "os.removexattr": ((), (0,)),
    "shutil.copyfile": ((0,), (1,)),
    "shutil.copymode": ((0,), (1,)),
    "shutil.copystat": ((0,), (1,)),
    "shutil.copytree": ((0,), (1,)),
    "shutil.move": ((), (0, 1)),
    "shutil.rmtree": ((), (0,)),
    "shutil.make_archive": ((2,), (0,)),
    "shutil.unpack_archive": ((0,), (1,)),
    "sqlite3.connect": ((), (0,)),
    "dbm.open": ((), (0,)),
}
WRITE_FLAGS = (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
PROGRAM_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                  "os.spawn", "os.startfile", "pty.spawn")
GC_EVENTS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents")


def _settings(environ):
    """The POSENC_* settings, deleted from ``environ``."""
    values = {name: environ.pop(name, "") for name in SETTINGS}
    here = os.path.dirname(os.path.abspath(__file__))
    return {
        "folder": os.path.realpath(values["POSENC_GRADING_FOLDER"]
                                   or os.getcwd()),
        "repo": os.path.realpath(values["POSENC_REPO"]
                                 or os.path.dirname(os.path.dirname(here))),
        "course": (os.path.realpath(values["POSENC_COURSE_ROOT"])
                   if values["POSENC_COURSE_ROOT"] else None),
        "records": (os.path.realpath(values["POSENC_RECORDS"])
                    if values["POSENC_RECORDS"] else None),
        "log": values["POSENC_GUARD_LOG"] or None,
        "allow": [os.path.realpath(p) for p in
                  values["POSENC_GUARD_ALLOW"].split(os.pathsep) if p],
        "tmp": (os.path.realpath(values["POSENC_KERNEL_TMP"])
                if values["POSENC_KERNEL_TMP"] else None),
        "here": here,
    }


def _inside(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def remove_repository_imports(repo, folder, prefixes):
    """Leave no import path into ``repo``; put ``folder`` first on sys.path."""

    def from_repo(obj):
        module = getattr(obj, "__module__", None) or getattr(
            type(obj), "__module__", "")
        return str(module).startswith("__editable___posenc_book")

    sys.meta_path[:] = [finder for finder in sys.meta_path
                        if not from_repo(finder)]
    sys.path_hooks[:] = [hook for hook in sys.path_hooks if not from_repo(hook)]

    def keep(entry):
        if "__editable__" in entry:
            return False
        real = os.path.realpath(entry or os.getcwd())
        if _inside(real, folder):
            return True
        return not _inside(real, repo) or any(_inside(real, p) for p in prefixes)

    sys.path[:] = [folder] + [entry for entry in sys.path
                              if isinstance(entry, str) and keep(entry)
                              and os.path.realpath(entry or ".") != folder]
    for key in list(sys.path_importer_cache):
        if not isinstance(key, str) or not keep(key):
            del sys.path_importer_cache[key]
    for name, module in list(sys.modules.items()):
        filename = getattr(module, "__file__", None)
        if name != "__main__" and (
                name.startswith("__editable___posenc_book")
                or (isinstance(filename, str) and not keep(filename))):
            del sys.modules[name]
    importlib.invalidate_caches()


def _make_resolver():
    """A realpath that uses only functions captured now (the student's code
    may replace os.path.realpath or os.lstat later)."""
    lstat, readlink, getcwd = posix.lstat, posix.readlink, posix.getcwd
    is_link, fsdecode = stat.S_ISLNK, os.fsdecode

    def resolve(path):
        path = fsdecode(path)
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        parts = [part for part in path.split("/") if part]
        done, hops = [], 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                if done:
                    done.pop()
                continue
            candidate = "/" + "/".join(done + [part])
            try:
                mode = lstat(candidate).st_mode
            except OSError:
                done.append(part)
                continue
            if is_link(mode):
                hops += 1
                if hops > 40:
                    raise PermissionError("too many symbolic links")
                target = readlink(candidate)
                if target.startswith("/"):
                    done = []
                parts = [p for p in target.split("/") if p] + parts
            else:
                done.append(part)
        return "/" + "/".join(done)

    return resolve


def _allowed_places(settings):
    home = os.path.expanduser("~")
    places = [settings["folder"], sys.prefix, sys.base_prefix, sys.exec_prefix,
              sys.base_exec_prefix, "/dev", "/proc", "/sys", "/usr", "/etc",
              tempfile.gettempdir(), "/var/cache/fontconfig",
              os.path.join(home, ".cache", "fontconfig"),
              os.path.join(home, ".fontconfig"),
              os.path.join(home, ".cache", "matplotlib"),
              os.path.join(home, ".config", "matplotlib"),
              os.path.join(home, ".ipython")]
    places += site.getsitepackages()
    for name in ("MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_CONFIG_DIR",
                 "JUPYTER_DATA_DIR"):
        if os.environ.get(name):
            places.append(os.environ[name])
    if settings["records"]:
        places.append(settings["records"])
    return places


def _connection_file(argv):
    for index, arg in enumerate(argv):
        if arg == "-f" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--f=") or arg.startswith("-f="):
            return arg.split("=", 1)[1]
    return None


def _writable_places(settings, private):
    home = os.path.expanduser("~")
    places = [settings["folder"], tempfile.gettempdir(), "/dev",
              "/var/cache/fontconfig", os.path.join(home, ".cache", "fontconfig"),
              os.path.join(home, ".cache", "matplotlib")]
    if os.environ.get("MPLCONFIGDIR"):
        places.append(os.environ["MPLCONFIGDIR"])
    if settings["records"]:
        places.append(settings["records"])
    if private:
        places.append(private)
    return places


def install_guard(settings, argv=(), private=None):
    """Install the audit hook described in the module docstring.

    ``private``: the kernel's own temporary folder (IPython's folder in it).
    """
    resolve = _make_resolver()
    real = os.path.realpath
    prefixes = tuple(real(p) for p in {sys.prefix, sys.base_prefix,
                                       sys.exec_prefix, sys.base_exec_prefix})
    # This script and checker.py are public code (tracebacks and warnings
    # read their lines); the connection file is read by ipykernel.
    exempt = [settings["folder"], os.path.join(settings["here"], "checker.py"),
              os.path.join(settings["here"], "kernel_guard.py")]
    exempt += settings["allow"]
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        if os.environ.get(name):
            exempt.append(os.environ[name])
    connection = _connection_file(list(argv))
    if connection:
        exempt.append(connection)
    if settings["records"]:
        exempt.append(settings["records"])
    if private:
        exempt.append(private)
    exempt = tuple(real(p) for p in exempt) + prefixes
    closed = tuple(p for p in (settings["repo"], settings["course"]) if p)
    log_path = real(settings["log"]) if settings["log"] else None
    allowed = tuple(real(p) for p in _allowed_places(settings)) + exempt
    writable = tuple(real(p) for p in _writable_places(settings, private))
    writable_closed = tuple(real(p) for p in (settings["folder"],
                                              settings["records"], private)
                            if p)
    log_file = (open(settings["log"], "a", buffering=1, encoding="utf-8")  # noqa: SIM115
                if settings["log"] else None)
    log_fd = log_file.fileno() if log_file is not None else -1
    dumps, events, programs, walks = (json.dumps, dict(PATH_EVENTS),
                                      frozenset(PROGRAM_EVENTS),
                                      frozenset(GC_EVENTS))
    permission_error, is_int, is_str = PermissionError, int, str
    write_flags = WRITE_FLAGS

    def inside(path, roots):
        for root in roots:
            if path == root or path.startswith(root + "/") or root == "/":
                return True
        return False

    def quiet_program(event, args):
        # platform.processor() runs `uname -p` (torch asks while importing)
        return (event == "subprocess.Popen" and len(args) > 1
                and isinstance(args[1], list | tuple)
                and list(args[1]) == ["uname", "-p"])

    def log(event, path, action):
        if log_file is not None:
            log_file.write(dumps({"event": event, "path": path,
                                  "action": action}) + "\n")

    def refuse(event, path, shown, message):
        # Python's own bytecode cache is written where it can be, quietly
        if not (path.endswith(".pyc") and "/__pycache__/" in path):
            log(event, path, "refused")
        raise permission_error(f"the grading kernel may not {message} "
                               f"{shown!r}: only the files of the notebook's "
                               "own folder are available")

    def check(event, path, write):
        if path is None:
            path = "."
        if isinstance(path, is_int):  # an open file descriptor
            return
        try:
            full = resolve(path)
        except Exception:  # noqa: BLE001 - unresolvable: refuse
            log(event, repr(path)[:300], "refused")
            raise permission_error(f"{event}: {path!r} refused") from None
        if full == log_path:
            refuse(event, full, path, "use")
        if write:
            if inside(full, closed) and not inside(full, writable_closed):
                refuse(event, full, path, "write")
            if not inside(full, writable):
                refuse(event, full, path, "write")
        elif inside(full, closed) and not inside(full, exempt):
            refuse(event, full, path, "use")
        if not inside(full, allowed):
            log(event, full, "outside")

    def hook(event, args):
        spec = events.get(event)
        if event in ("os.truncate", "fcntl.fcntl", "fcntl.lockf") and args \
                and args[0] == log_fd:
            raise permission_error("the guard log is not the kernel's to change")
        if spec is None:
            if event in programs:
                if quiet_program(event, args):
                    return
                log(event, repr(args[:2])[:300], "refused")
                raise permission_error(
                    "the grading kernel does not start other programs")
            if event in walks:
                log(event, "", "refused")
                raise permission_error(
                    "the grading kernel does not give out the garbage "
                    "collector's objects")
            return
        reads, writes = spec
        if event == "open" and len(args) > 2:
            mode, flags = args[1], args[2]
            if (isinstance(flags, is_int) and flags & write_flags) or (
                    isinstance(mode, is_str)
                    and ("w" in mode or "a" in mode or "x" in mode
                         or "+" in mode)):
                reads, writes = (), (0,)
        for index in reads:
            if index < len(args):
                check(event, args[index], False)
        for index in writes:
            if index < len(args):
                check(event, args[index], True)

    sys.addaudithook(hook)


def install_recorder(settings):
    """builtins.__posenc_grading__ = checker.Recorder(records folder)."""
    if not settings["records"]:
        return
    path = os.path.join(settings["here"], "checker.py")
    spec = importlib.util.spec_from_file_location("_posenc_checker", path)
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    setattr(builtins, checker.RECORDER_NAME,  # noqa: B010
            checker.Recorder(settings["records"]))


def main():
    settings = _settings(os.environ)
    prefixes = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)]
    # The recorder's module is read before the hook closes the repository.
    install_recorder(settings)
    remove_repository_imports(settings["repo"], settings["folder"], prefixes)
    from ipykernel import kernelapp  # imported before the hook: faster start

    # IPython's folder (history, startup files, configuration, which is
    # code) is the kernel's own: nothing it writes there reaches the next
    # submission's kernel.
    # The temporary folder too: the system's (/tmp) may hold the teacher's
    # files or other kernels' folders, which the kernel may not change.
    if settings["tmp"]:
        os.makedirs(settings["tmp"], exist_ok=True)
    private = tempfile.mkdtemp(prefix="posenc-kernel-", dir=settings["tmp"])
    os.environ["TMPDIR"] = tempfile.tempdir = private
    os.environ["IPYTHONDIR"] = os.path.join(private, "ipython")
    os.mkdir(os.environ["IPYTHONDIR"])
    # A kernel that Jupyter shuts down is killed: atexit is a best effort,
    # POSENC_KERNEL_TMP is the caller's to remove.
    atexit.register(shutil.rmtree, private, True)
    install_guard(settings, sys.argv[1:], private)
    del settings
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
