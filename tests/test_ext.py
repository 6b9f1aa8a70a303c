"""The Sphinx extension's output merging (_ext/posenc_widgets.py)."""

import sys
from pathlib import Path

from nbformat.v4 import new_output

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
import posenc_widgets  # noqa: E402


def stream(text, name="stdout"):
    return new_output("stream", name=name, text=text)


def test_a_print_split_by_a_flush_reads_as_printed():
    """print("a") can reach the executor as "a" and "\\n": joined exactly."""
    outputs = [stream("noise 0.1: 100%"), stream("\nnoise 1.0: 4%\n")]
    merged = posenc_widgets.merge_streams(outputs)
    assert [o["text"] for o in merged] == ["noise 0.1: 100%\nnoise 1.0: 4%\n"]


def test_streams_are_joined_only_when_consecutive():
    figure = new_output("display_data", data={"text/plain": "<Figure>"})
    outputs = [stream("a\n"), stream("b\n"), figure, stream("c\n"),
               stream("w\n", name="stderr"), stream("d\n")]
    merged = posenc_widgets.merge_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "a\nb\n"),
        ("display_data", None, None),
        ("stream", "stdout", "c\n"),
        ("stream", "stderr", "w\n"),
        ("stream", "stdout", "d\n"),
    ]


def test_the_build_uses_it():
    """setup() puts merge_streams where myst-nb's renderer looks it up."""
    from myst_nb.core import render

    class App:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    posenc_widgets.setup(App())
    assert render.coalesce_streams is posenc_widgets.merge_streams
