"""Release: the student versions of the assignments, and what they import."""

import contextlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .course import Course
from .sources import (
    GRADING,
    REPO,
    SOURCE,
    discover,
    instructor_notebook,
    leaks,
    points,
    uses_lab,
)
from .variants import describe, load_spec


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


@contextlib.contextmanager
def release_environment(work):
    """The environment nbgrader's generate_assignment needs, for a while.

    nbgrader calls ``alembic`` on PATH; user-level Jupyter configuration is
    kept out, so that a release is reproducible. (No student code runs
    while releasing.)
    """
    work = Path(work)
    for name in ("jupyter_config", "runtime", "ipython", "jupyter_data"):
        (work / name).mkdir(parents=True, exist_ok=True)
    saved = dict(os.environ)
    os.environ.update({
        "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                 os.environ.get("PATH", "")]),
        "JUPYTER_CONFIG_DIR": str(work / "jupyter_config"),
        "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
        "JUPYTER_DATA_DIR": str(work / "jupyter_data"),
        "JUPYTER_PLATFORM_DIRS": "1", "IPYTHONDIR": str(work / "ipython")})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def kernel_metadata():
    """``(kernelspec, language_info)`` as JupyterLab writes them into a
    notebook when its kernel, ipykernel's ``python3``, starts."""
    import platform

    from ipykernel.ipkernel import IPythonKernel
    from ipykernel.kernelspec import get_kernel_dict

    spec = get_kernel_dict()
    info = dict(IPythonKernel.language_info,
                version=platform.python_version())
    return ({"display_name": spec["display_name"],
             "language": spec["language"], "name": "python3"}, info)


def with_kernel_metadata(text):
    """A released notebook (its JSON ``text``) storing the kernel metadata
    JupyterLab writes on opening it, so that a student's untouched
    notebook does not open "modified" (issue 25): the sources store the
    bare "Python 3" and no language_info but the name."""
    nb = json.loads(text)
    nb["metadata"]["kernelspec"], nb["metadata"]["language_info"] = (
        kernel_metadata())
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def release(out_dir, names, source=SOURCE, force=False, variant_seed=None,
            instructor_dir=None, language="en"):
    """Write the student versions of ``names`` to ``out_dir``.

    With ``variant_seed`` (an int, the teacher's secret), the class-specific
    variants (``sources.instructor_notebook``); nothing in the handout
    reveals the seed. With ``language="zh_CN"``, the Chinese edition of the
    assignments (markdown translated, code identical; graded like the
    English ones). With ``instructor_dir``, also the instructor versions
    (of the variant) as ``instructor_dir/NAME/NAME.ipynb``, for the
    ``source/`` folder of an nbgrader course.
    """
    available = discover(source)
    out_dir = Path(out_dir)
    existing = [n for n in names if (out_dir / f"{n}.ipynb").exists()]
    if existing and not force:
        raise SystemExit(
            f"error: {out_dir} already has {existing[0]}.ipynb; use --force "
            "to overwrite the student versions there")
    notebooks = {name: instructor_notebook(name, available[name], variant_seed,
                                           language=language)
                 for name in names}
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="posenc-release-") as tmp, \
            release_environment(tmp):
        print("Loading nbgrader...", flush=True)
        course = Course(Path(tmp) / "course")
        for number, name in enumerate(names, 1):
            released = course.generate(name, notebooks[name])
            text = released.read_text(encoding="utf-8")
            problems = leaks(text, notebooks[name])
            if variant_seed is not None:
                problems += leaks(text, available[name])
            if problems:
                raise SystemExit(
                    f"refusing to release {name}: the student version "
                    f"would contain {problems[0]}")
            (out_dir / f"{name}.ipynb").write_text(
                with_kernel_metadata(text), encoding="utf-8")
            auto, manual, _ = points(notebooks[name])
            print(f"[{number}/{len(names)}] {out_dir / (name + '.ipynb')}  "
                  f"({auto:g} points autograded + {manual:g} by hand)",
                  flush=True)
    if instructor_dir is not None:
        for name in names:
            folder = Path(instructor_dir) / name
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / f"{name}.ipynb"
            if target.exists() and not force:
                raise SystemExit(f"error: {target} exists; use --force to "
                                 "overwrite it")
            target.write_text(json.dumps(notebooks[name], indent=1,
                                         ensure_ascii=False) + "\n",
                              encoding="utf-8")
        print(f"Wrote the instructor versions to {instructor_dir} (keep "
              "them from the students).")
    if variant_seed is not None:
        for name in names:
            spec = load_spec(GRADING / f"{name}.json")
            print(f"{name}: " + "\n  ".join(describe(spec, variant_seed)))
    copied = copy_handout(out_dir, any(uses_lab(available[name])
                                       for name in names))
    kind = "" if variant_seed is None else " (class variant)"
    print(f"Released {len(names)} assignment(s){kind} to {out_dir}, with a "
          f"copy of {' and '.join(copied)} that the notebooks import.")
