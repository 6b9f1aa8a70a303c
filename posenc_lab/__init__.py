"""posenc_lab: train short, test long (chapter 8). See README.md here."""

from .model import METHODS, TinyTransformer, rope_rotations  # noqa: F401
