"""posenc_lab: train short, test long, on the reader's CPU (chapter 8).

A small decoder-only Transformer in PyTorch whose position method is an
argument, the data it learns from, and one command that trains every method
with several seeds and writes the results as JSON. All position tables come
from :mod:`posenc_core`. See ``posenc_lab/README.md`` for the API, the
command and the layout of the results (``results/ch08/``).

Modules
-------
model
    :class:`~posenc_lab.model.TinyTransformer`,
    :func:`~posenc_lab.model.rope_rotations`, ``METHODS``.
data
    The text (*Alice's Adventures in Wonderland*), its split and batches;
    the copying task.
experiment
    :class:`~posenc_lab.experiment.Config`, ``PRESETS``,
    :func:`~posenc_lab.experiment.run_experiment`,
    :func:`~posenc_lab.experiment.run_one`,
    :func:`~posenc_lab.experiment.summarize`.
vision
    Chapter 9's experiment, zoom versus canvas: a small vision Transformer
    (:class:`~posenc_lab.vision.VisionTransformer`, the same blocks without
    the causal mask) on handwritten digits with eight 2-D position
    methods; ``python -m posenc_lab.vision --out DIR``.
"""

from .model import METHODS, TinyTransformer, rope_rotations

__all__ = ["METHODS", "TinyTransformer", "rope_rotations"]
