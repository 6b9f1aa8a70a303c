"""Release: the student versions of the assignments, and what they import."""

import os
import shutil
import tempfile
from pathlib import Path

from .course import Course, environment
from .sources import REPO, SOURCE, discover, leaks, points, uses_lab


def release(out_dir, names, source=SOURCE, force=False):
    """Write the student versions of ``names`` to ``out_dir``."""
    available = discover(source)
    out_dir = Path(out_dir)
    existing = [n for n in names if (out_dir / f"{n}.ipynb").exists()]
    if existing and not force:
        raise SystemExit(
            f"error: {out_dir} already has {existing[0]}.ipynb; use --force "
            "to overwrite the student versions there")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="posenc-release-") as tmp:
        os.environ.update(environment(tmp))
        print("Loading nbgrader...", flush=True)
        course = Course(Path(tmp) / "course")
        for number, name in enumerate(names, 1):
            released = course.generate(name, available[name])
            text = released.read_text(encoding="utf-8")
            problems = leaks(text, available[name])
            if problems:
                raise SystemExit(
                    f"refusing to release {name}: the student version "
                    f"would contain {problems[0]}")
            shutil.copyfile(released, out_dir / f"{name}.ipynb")
            auto, manual, _ = points(available[name])
            print(f"[{number}/{len(names)}] {out_dir / (name + '.ipynb')}  "
                  f"({auto:g} points autograded + {manual:g} by hand)",
                  flush=True)
    shutil.copyfile(REPO / "posenc_core.py", out_dir / "posenc_core.py")
    copied = "posenc_core.py"
    lab = out_dir / "posenc_lab"
    if any(uses_lab(available[name]) for name in names) and (
            lab.resolve() != (REPO / "posenc_lab").resolve()):
        shutil.copytree(REPO / "posenc_lab", lab, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        copied += " and posenc_lab/"
    print(f"Released {len(names)} assignment(s) to {out_dir}, with a copy of "
          f"{copied} that the notebooks import.")
