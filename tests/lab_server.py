"""A JupyterLab server for the browser tests and the benchmark.

``jupyter lab`` on a free port, without a token, serving ``folder``, with
its own settings and workspaces (so a learner's settings change nothing),
every notebook cell rendered (JupyterLab 4 renders only those in view by
default), and the repository on the kernels' ``PYTHONPATH``. Used by
``tests/test_jupyterlab.py``'s fixture and ``benchmarks/run.py --only
jupyterlab``.
"""

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(folder, state, timeout=240.0):
    """Serve ``folder`` with JupyterLab; yields its URL.

    ``state``: an empty folder for the settings, workspaces and log (not
    inside ``folder``). Raises ``RuntimeError`` with the log's end if the
    server does not answer within ``timeout`` seconds.
    """
    state = Path(state)
    settings = state / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}')
    port = free_port()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser",
           f"--port={port}", "--ip=127.0.0.1",
           "--ServerApp.token=", "--ServerApp.password=",
           f"--ServerApp.root_dir={folder}",
           f"--LabApp.user_settings_dir={state / 'settings'}",
           f"--LabApp.workspaces_dir={state / 'workspaces'}",
           "--LabApp.news_url=None", "--LabApp.check_for_updates_class="
           "jupyterlab.NeverCheckForUpdate",
           # window.jupyterapp, to run the notebook's commands
           "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    log_path = state / "lab.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=folder)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    urllib.request.urlopen(f"{url}/api/status", timeout=5)
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.flush()
                        raise RuntimeError(
                            "jupyter lab did not start:\n"
                            + log_path.read_text()[-3000:]) from None
                    time.sleep(1)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
