"""Shared fixtures.

``book_html``: the built HTML book. ``$POSENC_BOOK_HTML`` if set (e.g.
``_build/html`` after ``scripts/book.sh``); otherwise it is built once per
test process into a temporary folder from the notebooks' stored outputs
(nbval checks those against a fresh run in the same test session), with
warnings as errors.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest
import yaml
from hypothesis import settings

matplotlib.use("Agg")  # figures are drawn off screen in every test

import matplotlib.pyplot as plt  # noqa: E402

# Property tests draw the same examples on every run and every worker, and
# never time anything.
settings.register_profile("book", max_examples=60, deadline=None,
                          derandomize=True)
settings.load_profile("book")

ROOT = Path(__file__).resolve().parent.parent
TOC = Path(os.environ.get("POSENC_TOC", ROOT / "_toc.yml"))


@pytest.fixture(scope="session")
def book_html(tmp_path_factory):
    given = os.environ.get("POSENC_BOOK_HTML")
    if given:
        html = Path(given).resolve()
        assert (html / "index.html").is_file(), f"no book in {html}"
        return html
    out = tmp_path_factory.mktemp("book")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["execute"]["execute_notebooks"] = "off"
    config["sphinx"]["local_extensions"] = {
        name: str(ROOT / path)
        for name, path in config["sphinx"]["local_extensions"].items()}
    config_path = out / "_config.yml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    cmd = [sys.executable, "-m", "jupyter_book", "build", str(ROOT),
           "--path-output", str(out), "--config", str(config_path),
           "--toc", str(TOC), "-W", "-n", "--keep-going"]
    jb = shutil.which("jupyter-book", path=str(Path(sys.executable).parent))
    if jb:
        cmd[:3] = [jb]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return out / "_build" / "html"


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every figure a test drew, so memory stays flat."""
    yield
    plt.close("all")


@pytest.fixture(scope="session")
def browser():
    """Headless chromium for the browser tests (tests/test_browser.py,
    test_browser_page.py, test_jupyterlab.py): one per worker, since
    Playwright's sync API refuses a second instance in the same thread."""
    import test_browser

    yield from test_browser.browser_context()
