"""Opening a chapter in JupyterLab changes nothing (issue 25).

When a notebook opens, JupyterLab starts its kernel and writes the
kernel's spec (``name``, ``display_name``, ``language``) into
``metadata.kernelspec`` and the kernel's ``language_info`` into
``metadata.language_info``. Where the stored values differ, the notebook is
"modified" the moment it opens and closing it untouched asks to save. The
stored metadata must therefore be what the book's kernel (ipykernel's
``python3``) reports. ``tests/test_jupyterlab.py`` checks the same in a real
JupyterLab.
"""

from pathlib import Path

import nbformat
import pytest
from ipykernel.ipkernel import IPythonKernel
from jupyter_client.kernelspec import KernelSpecManager

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def expected_kernelspec():
    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language,
            "name": "python3"}


def expected_language_info():
    """The kernel's language_info but its Python version.

    The version is that of whoever executed the notebook last (nbconvert
    and nbval store it too); every other field is fixed by ipykernel.
    """
    info = dict(IPythonKernel.language_info)
    info.pop("version")
    return info


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 9


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_kernel_metadata_is_what_jupyterlab_writes(path):
    meta = nbformat.read(path, as_version=4).metadata
    assert dict(meta.get("kernelspec", {})) == expected_kernelspec(), (
        f"{path.name}: metadata.kernelspec is not what JupyterLab writes on "
        f"opening it, so the notebook would open modified")
    info = dict(meta.get("language_info", {}))
    version = info.pop("version", None)
    assert info == expected_language_info(), path.name
    assert isinstance(version, str) and version.startswith("3."), path.name


def test_the_expected_kernelspec_is_ipykernels():
    # A guard on the test itself: the display name JupyterLab shows for the
    # book's kernel is ipykernel's, not the bare "Python 3".
    assert expected_kernelspec()["display_name"] == "Python 3 (ipykernel)"
