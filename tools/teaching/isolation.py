"""Where the students' code runs: a grading folder and a guarded kernel.

nbgrader runs a submission in ``autograded/STUDENT/NAME/`` of its course
(the kernel's working folder). That folder holds only what the handout
holds: the copy of ``posenc_core.py`` (and of ``posenc_lab/`` for the
assignments that import it) that nbgrader copies from the course's
``source/NAME/``, and the submission itself.

The kernel starts through ``kernel_guard.py`` (a copy in the worker's
private folder, run with ``python -I``: no PYTHONPATH, no user site, no
script folder on ``sys.path``). The guard removes the editable install's
path to the repository, puts the grading folder first on ``sys.path``,
installs the recorder of ``checker.py`` and an audit hook that refuses to
open or list anything under the repository (except the Python environment)
or under the grading work folder (except the grading folder), and logs the
files opened elsewhere. It is told where things are by environment
variables (``ENV_*`` below) in the kernel spec, which it deletes from the
kernel's environment. The records of each test cell are copied, as soon
as the cell ends, to a folder the kernel cannot reach
(``KernelPlace.snapshot_hooks``).

This keeps the instructor notebooks, the gradebook and the other
submissions out of reach of the code being graded. It is not a sandbox:
the code runs as the grading user, with its network and its files outside
those two folders.
"""

import json
import os
import secrets
import shutil
import sys
from pathlib import Path

from .sources import REPO

GUARD = Path(__file__).with_name("kernel_guard.py")
# Environment variables read (and deleted) by kernel_guard.py.
ENV_RECORDS = "POSENC_RECORDS"
ENV_REPO = "POSENC_REPO"
ENV_COURSE = "POSENC_COURSE_ROOT"
ENV_LOG = "POSENC_GUARD_LOG"
ENV_ALLOW = "POSENC_GUARD_ALLOW"
ENV_TMP = "POSENC_KERNEL_TMP"
# Variables that would hand the kernel a path to the repository or change
# how Python starts; removed from the environment of nbgrader and kernels.
DROPPED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE",
           "PYTHONSAFEPATH", "VIRTUAL_ENV", "PYTHONINSPECT")


def copy_handout(dest, lab=False):
    """Copy what the handout holds beside the notebooks into ``dest``.

    ``posenc_core.py``, and the package ``posenc_lab/`` when ``lab`` is
    true. Returns the names copied.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "posenc_core.py", dest / "posenc_core.py")
    copied = ["posenc_core.py"]
    target = dest / "posenc_lab"
    if lab and target.resolve() != (REPO / "posenc_lab").resolve():
        shutil.copytree(REPO / "posenc_lab", target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        copied.append("posenc_lab/")
    return copied


def base_environment(work):
    """Environment for nbgrader (release, grading workers) and its kernels.

    nbgrader calls ``alembic`` on PATH; user-level Jupyter and IPython
    configuration is kept out so that grading is reproducible; nothing
    points Python at the repository (PYTHONPATH and the like are removed).
    """
    work = Path(work)
    for name in ("jupyter_config", "runtime", "ipython"):
        (work / name).mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if key not in DROPPED and not key.startswith("POSENC_")}
    env.update({
        "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                 env.get("PATH", "")]),
        "JUPYTER_CONFIG_DIR": str(work / "jupyter_config"),
        "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(work / "ipython"),
        "MPLBACKEND": "Agg",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "PYTHONNOUSERSITE": "1",
    })
    return env


def plain_kernel(work):
    """A kernel spec "python3" that is this interpreter, unguarded.

    For ``release`` (nbgrader runs no student code there). Returns the
    JUPYTER_PATH that holds it.
    """
    data = Path(work) / "jupyter_data"
    _write_spec(data, [sys.executable, "-m", "ipykernel_launcher", "-f",
                       "{connection_file}"], {})
    return str(data)


def _write_spec(data, argv, env):
    kernel = Path(data) / "kernels" / "python3"
    kernel.mkdir(parents=True, exist_ok=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": argv, "env": env, "display_name": "Python 3",
        "language": "python"}, indent=1), encoding="utf-8")


class KernelPlace:
    """A grading worker's private folder and its guarded kernel spec.

    ``work`` is the grading work folder (every course of every worker, the
    templates, the logs): the kernel may read none of it but its grading
    folder. ``private`` (``work/kernel-N``) holds the copy of the guard
    (and of ``checker.py``, which it loads), the kernel spec, the records
    of the cell being checked and the guard's log of files opened.
    """

    def __init__(self, work, number):
        self.work = Path(work).resolve()
        self.private = self.work / f"kernel-{number}"
        self.records = None
        self.log = self.private / "files-opened.log"
        self.guard = self.private / "kernel_guard.py"
        self.data = self.private / "jupyter_data"
        self.tmp = self.private / "tmp"
        self.kept = self.private / "records-kept"

    def install(self):
        """Copy the guard (and checker.py, which it loads).

        The kernel spec is written by ``reset``, before each submission.
        """
        self.private.mkdir(parents=True, exist_ok=True)
        if not GUARD.is_file():
            raise RuntimeError(f"the kernel guard {GUARD} is missing")
        shutil.copyfile(GUARD, self.guard)
        shutil.copyfile(GUARD.with_name("checker.py"),
                        self.private / "checker.py")

    def environment(self, base):
        """The worker's environment: ``base`` with this kernel spec first."""
        return dict(base, JUPYTER_PATH=str(self.data))

    def reset(self):
        """A fresh records folder and an empty log, before each submission.

        The records folder has a new random name each time, written only
        into the kernel spec (the guard deletes it from the kernel's
        environment): the student's code cannot list the work folder, so
        it cannot find the folder to write forged records there, not even
        with a name it printed into an earlier feedback page.
        """
        if self.records is not None:
            shutil.rmtree(self.records, ignore_errors=True)
        self.records = self.private / f"records-{secrets.token_hex(16)}"
        self.records.mkdir(parents=True)
        shutil.rmtree(self.kept, ignore_errors=True)
        self.kept.mkdir()
        # The guard makes the kernel's own temporary folder in here; a
        # kernel that Jupyter shut down cannot remove it, so we do.
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir()
        self.log.write_text("", encoding="utf-8")
        # The kernel's connection file is in the Jupyter runtime folder of
        # the work folder; the rest of the work folder is closed to it.
        env = {ENV_RECORDS: str(self.records), ENV_REPO: str(REPO),
               ENV_COURSE: str(self.work), ENV_LOG: str(self.log),
               ENV_ALLOW: str(self.work / "runtime"), ENV_TMP: str(self.tmp),
               # matplotlib's folder where the guard lets it write (else it
               # tries ~/.config/matplotlib first, which the guard refuses
               # and logs, and every notebook that imports it is flagged)
               "MPLCONFIGDIR": str(Path.home() / ".cache" / "matplotlib")}
        _write_spec(self.data, [sys.executable, "-I", str(self.guard), "-f",
                                "{connection_file}"], env)

    def snapshot_hooks(self):
        """Hooks for nbclient that keep each test cell's records at once.

        ``(before, after)`` for ``Execute.on_cell_execute`` and
        ``Execute.on_cell_executed``: before a cell runs, its records file
        (if the student's code forged one) is deleted; right after it ran,
        the file the recorder wrote is copied to ``self.kept``, a folder of
        the grader that the kernel can neither list nor open. Phase 2 reads
        the copies, so a later cell that rewrites the records of an
        earlier test finds nothing to change. (Code that reaches the
        recorder itself inside the test cell still can.)
        """

        def target(cell):
            meta = cell.get("metadata", {}).get("nbgrader", {})
            gid = meta.get("grade_id") if isinstance(meta, dict) else None
            if (cell.get("cell_type") == "code" and meta.get("grade")
                    and not meta.get("solution") and isinstance(gid, str)
                    and "/" not in gid and not gid.startswith(".")):
                return f"{gid}.json"
            return None

        def before(cell, cell_index, **_):
            name = target(cell)
            if name and self.records is not None:
                (self.records / name).unlink(missing_ok=True)

        def after(cell, cell_index, **_):
            name = target(cell)
            if name and self.records is not None:
                source = self.records / name
                if source.is_file() and not source.is_symlink():
                    shutil.copyfile(source, self.kept / name)

        return before, after

    def files_opened(self):
        """Paths the guard logged (opened outside the allowed places)."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        return [line.strip() for line in text.splitlines() if line.strip()]
