"""nbval passes twice in a row, the second time with another hash seed.

``scripts/test.sh`` runs nbval (strict: stdout, stderr, text/plain and
text/html outputs compared exactly with the stored ones) on every chapter
once. This test runs nbval on each chapter a second time, in a separate
pytest process whose kernel gets a different ``PYTHONHASHSEED`` (so output
that depends on the order of a set or on ``hash()`` shows up) and another
time zone. Since the stored outputs come from a third, earlier run, every
CI run checks that three executions agree, at the cost of one extra
execution per chapter rather than a second full test suite.

Each notebook runs in its own subprocess with nbval's own runner: the
stored outputs are compared by the same code, with the same rules (the
ipywidgets slider cells, tagged ``nbval-ignore-output``, run but their
output is not compared), as in the suite. nbclient was not used: now and
then it waits out the whole cell timeout after a cell that displays
ipywidgets (benchmarks/README.md, "Determinism"); nbval's runner does not.

Images are not compared (nbval does not by default: PNG bytes depend on the
matplotlib version that stored them). Two complete builds of the book,
images included, are compared file by file by
``benchmarks/run.py --build`` (see benchmarks/README.md).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def test_there_are_chapters():
    assert len(NOTEBOOKS) >= 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_nbval_passes_again_with_another_hash_seed(path):
    env = dict(os.environ, PYTHONHASHSEED="2718281", TZ="Pacific/Kiritimati")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
           "-p", "no:xdist", "-q", "--nbval", "--nbval-cell-timeout=600",
           str(path.relative_to(ROOT))]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout
