"""Build the book afresh and compare it, file by file, with another build.

Two clean builds of the book (every notebook executed) must be identical:
same files, same bytes, for text (HTML, JS, CSS, JSON, notebooks) and
images alike. ``.ci/run`` calls this after ``scripts/book.sh``::

    python tools/compare_builds.py _build/html

builds the book a second time into a temporary folder (the same commands as
``scripts/book.sh``: ``jupyter-book build -W -n --keep-going`` of the
English edition, then ``tools/i18n.py build-zh`` and the same build of the
Chinese edition into ``html/zh``), compares the two ``html`` trees, both
editions, and exits 1, printing a diff of every differing text file, if
they differ. With no argument it builds twice. ``--allow-missing`` is
passed to ``build-zh`` (as ``scripts/book.sh --allow-missing`` does). ``.doctrees``,
``.buildinfo``, the execution cache and the execution reports are not part
of the book and are not compared. ``benchmarks/run.py --build`` uses the
same functions and also times the builds.
"""

import argparse
import difflib
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".html", ".js", ".css", ".txt", ".json", ".ipynb", ".md",
                 ".py", ".svg", ".xml", ".map", ""}
NOT_COMPARED = {".doctrees", ".buildinfo", ".jupyter_cache", "reports"}


def build_env():
    """The environment of a build: this Python's bin first on PATH."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    return env


# The Chinese source tree: always at the same place (as scripts/book.sh
# writes it), so that two builds read their sources from the same paths.
ZH_SRC = ROOT / "_build" / "zh_src"


def build(out, allow_missing=False):
    """Build both editions into ``out/_build/html`` (Chinese in ``zh/``);
    return (seconds, process of the first failing step or the last one)."""
    jb = Path(sys.executable).parent / "jupyter-book"
    jb = str(jb) if jb.exists() else "jupyter-book"
    flags = ["-W", "-n", "--keep-going"]
    steps = [
        ([jb, "build", str(ROOT), "--path-output", str(out), *flags], {}),
        ([sys.executable, str(ROOT / "tools" / "i18n.py"), "build-zh",
          str(ZH_SRC)] + (["--allow-missing"] if allow_missing else []), {}),
        ([jb, "build", str(ZH_SRC), "--path-output", str(out / "zh"), *flags],
         {"POSENC_LANG": "zh_CN"}),
    ]
    t0 = time.perf_counter()
    for cmd, extra in steps:
        done = subprocess.run(cmd, cwd=ROOT, env=dict(build_env(), **extra),
                              capture_output=True, text=True)
        if done.returncode:
            break
    else:
        shutil.move(out / "zh" / "_build" / "html", out / "_build" / "html" / "zh")
    return time.perf_counter() - t0, done


def _files(tree):
    return {p.relative_to(tree) for p in tree.rglob("*") if p.is_file()
            and not NOT_COMPARED & set(p.relative_to(tree).parts)}


def compare_trees(a, b):
    """Files that differ between two builds: (text, binary, only in one)."""
    files_a, files_b = _files(a), _files(b)
    missing = sorted(str(p) for p in files_a ^ files_b)
    diff_text, diff_bin = [], []
    for rel in sorted(files_a & files_b):
        if not filecmp.cmp(a / rel, b / rel, shallow=False):
            (diff_text if rel.suffix in TEXT_SUFFIXES else diff_bin).append(
                str(rel))
    return diff_text, diff_bin, missing


def text_diff(a, b, rel, limit=60):
    """A unified diff of one text file, one HTML tag per line."""
    def lines(path):
        return path.read_text(errors="replace").replace("><", ">\n<"
                                                         ).splitlines()

    diff = difflib.unified_diff(lines(a / rel), lines(b / rel), "a/" + rel,
                                "b/" + rel, n=1, lineterm="")
    return "\n".join(line[:300] for line in list(diff)[:limit])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html", nargs="?",
                    help="an existing build's html folder (default: build "
                    "twice)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary builds")
    ap.add_argument("--allow-missing", action="store_true",
                    help="English where a Chinese translation is missing "
                    "(development only)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="posenc-build-"))
    trees = [Path(args.html).resolve()] if args.html else []
    try:
        for run in "ab"[:2 - len(trees)]:
            seconds, done = build(tmp / run, args.allow_missing)
            print(f"clean build {run}: {seconds:.0f} s, exit code "
                  f"{done.returncode}")
            if done.returncode:
                print(done.stdout[-3000:], done.stderr[-3000:])
                return 1
            trees.append(tmp / run / "_build" / "html")
        text, binary, missing = compare_trees(*trees)
        for rel in text:
            print(text_diff(*trees, rel))
        for what, files in (("text", text), ("image/binary", binary),
                            ("present in one build only", missing)):
            print(f"differing {what} files: {len(files)}"
                  + (": " + ", ".join(files) if files else ""))
        same = not (text or binary or missing)
        print("the two builds are identical" if same else
              f"the two builds differ ({trees[0]} and {trees[1]})")
        if not same:
            args.keep = True
        return 0 if same else 1
    finally:
        if args.keep:
            print(f"builds kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
