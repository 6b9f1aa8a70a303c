r"""Zoom versus canvas: a small vision Transformer tested on larger images.

``python -m posenc_lab.vision --out DIR`` trains a small vision
Transformer on handwritten digits with each 2-D position method and several
seeds, at one resolution, and tests it on larger images made two ways:

*zoom*
    the same picture at more pixels: a training image (a 12 x 12 canvas
    with a digit on it) resized bilinearly to ``S x S``, so the digit grows
    with the image and covers more patches;
*canvas*
    objects of the same size on a larger image: the digit at its training
    size (8 x 8 pixels) placed at a random spot of an ``S x S`` canvas, so
    only the number of patches around it grows.

At ``S = 12`` both are the training distribution. A zoom keeps where
things are relative to the image and changes how far apart (in patches)
they are; a canvas keeps the distances in patches and lets positions run
past the trained grid. Position schemes that count in patches and those
that count in fractions of the image fare differently on the two, which is
what chapter 9 measures.

The model is chapter 8's :class:`posenc_lab.model.Block` without the causal
mask (``causal=False``), a linear patch embedding of ``patch_size x
patch_size`` pixels, a class token (ViT) whose output is classified, and
one of :data:`METHODS`. Every position table comes from
:mod:`posenc_core`; the model only turns it into tensors
(``tests/test_lab_vision.py`` checks them):

``"none"``
    no position information (the patches are a set).
``"learned_resize"``
    a learned table of one row per patch of the training grid and one for
    the class token (ViT, timm's ``pos_embed``), added to the tokens; on a
    larger grid it is resized by :func:`resample_abs_pos_embed` (timm's:
    class row kept, the grid bicubic with antialiasing), as timm's
    ``dynamic_img_size`` does.
``"learned_clamp"``
    the same table *not resized*: patch ``(r, c)`` of a larger grid takes
    the row of ``(min(r, g - 1), min(c, g - 1))`` of the trained ``g x g``
    grid, so the trained top-left block keeps its rows and everything
    beyond the last trained row or column reuses the edge (chapter 8's
    ``beyond="clamp"``, per axis).
``"sincos"``
    :func:`posenc_core.sincos_2d_encoding` (MAE) added to the patch tokens
    of each grid, with integer patch coordinates (extrapolated on a larger
    grid); the class token gets zeros, as MAE's table does.
``"rope_axial"``
    :func:`posenc_core.rope_axial_angles` of the integer patch coordinates
    (Heo et al. 2024, base 100), queries and keys rotated in every layer;
    the class token unrotated.
``"rope_mixed"``
    RoPE-Mixed (Heo et al. 2024): per layer, per head learnable
    frequencies initialised by :func:`posenc_core.rope_mixed_frequencies`
    (base 10, as rope-vit's mixed models), angles
    :func:`posenc_core.rope_mixed_angles` of the integer coordinates.
``"rope_dinov3"``
    :func:`posenc_core.dinov3_rope_angles` of
    :func:`posenc_core.normalized_patch_coordinates` (patch centres in
    (-1, 1), DINOv3, base 100): a larger grid covers the same range,
    finer.
``"rope_dinov3_rescale"``
    the same, trained with DINOv3's coordinate rescaling (one factor per
    step drawn by :func:`posenc_core.sample_coordinate_augmentation`,
    ``rescale=2`` as DINOv3's released models, applied by
    :func:`posenc_core.augment_coordinates`); none at evaluation.

All RoPE variants rotate interleaved pairs ``(2i, 2i+1)`` (rope-vit's
layout; DINOv3 rotates halves, the same up to a permutation of a head's
dimensions, which a model trained from scratch does not see).

Data: scikit-learn's copy of the UCI handwritten digits (1797 images of
8 x 8 pixels, 17 grey levels), committed as
``posenc_lab/data/digits.csv.gz`` (see ``posenc_lab/data/README.md``); a
fixed split of 1297 training and 500 test digits, the same for every run.
Training images place a digit at a random spot of a 12 x 12 canvas each
step; the test images are drawn once from a fixed generator, the same for
every method and seed.

Shapes: ``B`` batch, ``S`` image side in pixels, ``g`` patches per side,
``n = g * g`` patches, ``H`` heads, ``d_k`` head width.
"""

import gzip
import hashlib
import math
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import posenc_core as pc

from . import experiment as _ex
from .model import Block

__all__ = [
    "METHODS",
    "MODES",
    "SCHEMA",
    "DIGITS_PATH",
    "DIGITS_SHA256",
    "RESULTS_DIR",
    "VisionConfig",
    "PRESETS",
    "VisionTransformer",
    "config_from",
    "config_from_json",
    "canvas_images",
    "collect_results",
    "evaluate",
    "grid_coordinates",
    "load_digits",
    "load_results",
    "patchify",
    "place_digits",
    "resample_abs_pos_embed",
    "rotate_pairs",
    "run_experiment",
    "run_one",
    "split_digits",
    "summarize",
    "test_images",
    "zoom_images",
]

METHODS = ("none", "learned_resize", "learned_clamp", "sincos", "rope_axial",
           "rope_mixed", "rope_dinov3", "rope_dinov3_rescale")
MODES = ("zoom", "canvas")
SCHEMA = "posenc_lab.vision_results/1"
DIGITS_PATH = Path(__file__).resolve().parent / "data" / "digits.csv.gz"
DIGITS_SHA256 = \
    "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results" / "ch09"
DIGIT = 8        # the digits are 8 x 8 pixels
TEST_DIGITS = 500
SPLIT_SEED = 0   # the fixed train/test split
TEST_SEED = 9    # the fixed test images


# ------------------------------------------------------------ the data


def load_digits(path=DIGITS_PATH):
    """The 1797 digits: images ``(1797, 8, 8)`` float32 in [0, 1], labels.

    Reads scikit-learn's ``digits.csv.gz`` (64 grey levels 0..16 and the
    label per line), checks its sha256 and divides by 16.
    """
    raw = Path(path).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != DIGITS_SHA256:
        raise ValueError(f"path must be the committed digits.csv.gz "
                         f"(sha256 {DIGITS_SHA256}), got {digest} for {path}")
    table = np.loadtxt(gzip.decompress(raw).decode().splitlines(),
                       delimiter=",", dtype=np.int64)
    images = (table[:, :64] / 16.0).astype(np.float32).reshape(-1, DIGIT, DIGIT)
    return images, table[:, 64]


def split_digits(images, labels):
    """The fixed split: ``(train_x, train_y), (test_x, test_y)``, 500 test
    digits chosen by ``numpy.random.default_rng(0).permutation``."""
    order = np.random.default_rng(SPLIT_SEED).permutation(len(images))
    test, train = order[:TEST_DIGITS], order[TEST_DIGITS:]
    return (images[train], labels[train]), (images[test], labels[test])


def place_digits(digits, size, offsets):
    """Digits ``(B, 8, 8)`` pasted on black ``size x size`` canvases with
    their top-left pixel at ``offsets`` ``(B, 2)`` (row, column)."""
    digits = np.asarray(digits, dtype=np.float32)
    offsets = np.asarray(offsets)
    if size < DIGIT or offsets.min(initial=0) < 0 \
            or offsets.max(initial=0) > size - DIGIT:
        raise ValueError(f"offsets must lie in [0, size - 8] = [0, "
                         f"{size - DIGIT}] and size >= 8, got size {size}")
    out = np.zeros((len(digits), size, size), dtype=np.float32)
    rows = offsets[:, 0, None, None] + np.arange(DIGIT)[None, :, None]
    cols = offsets[:, 1, None, None] + np.arange(DIGIT)[None, None, :]
    out[np.arange(len(digits))[:, None, None], rows, cols] = digits
    return out


def canvas_images(digits, size, rng):
    """Each digit at a random spot of a ``size x size`` canvas (uniform
    integer offsets in ``[0, size - 8]``)."""
    offsets = rng.integers(0, size - DIGIT + 1, size=(len(digits), 2))
    return place_digits(digits, size, offsets)


def zoom_images(images, size):
    """Images ``(B, S0, S0)`` resized bilinearly to ``size x size``
    (``torch.nn.functional.interpolate``, ``align_corners=False``, no
    antialiasing; the identity at ``size == S0``)."""
    x = torch.as_tensor(np.asarray(images, dtype=np.float32))[:, None]
    if x.shape[-1] == size:
        return x[:, 0].numpy()
    return F.interpolate(x, size=(size, size), mode="bilinear",
                         align_corners=False)[:, 0].numpy()


def test_images(cfg, digits, mode, size):
    """The test images of one mode and size, the same for every method
    and seed: offsets from ``numpy.random.default_rng([9, size])``
    (canvas) or ``default_rng([9, image_size])`` (zoom: a training-size
    image, then resized)."""
    if mode == "canvas":
        return canvas_images(digits, size, np.random.default_rng(
            [TEST_SEED, size]))
    base = canvas_images(digits, cfg.image_size, np.random.default_rng(
        [TEST_SEED, cfg.image_size]))
    return zoom_images(base, size)


def patchify(images, patch_size):
    """Images ``(B, S, S)`` -> patches ``(B, n, p*p)``, row-major (patch
    ``r * g + c`` is row ``r``, column ``c``)."""
    B, S, _ = images.shape
    g = S // patch_size
    x = images.reshape(B, g, patch_size, g, patch_size).permute(0, 1, 3, 2, 4)
    return x.reshape(B, g * g, patch_size * patch_size)


def grid_coordinates(height, width):
    """Integer patch coordinates ``(height * width, 2)``: (row, column) of
    each patch in row-major order, float64."""
    rows, cols = np.divmod(np.arange(height * width), width)
    return np.stack([rows, cols], axis=-1).astype(np.float64)


# --------------------------------------------- resizing a learned grid


def resample_abs_pos_embed(posemb, new_size, old_size=None,
                           num_prefix_tokens=1, interpolation="bicubic",
                           antialias=True):
    """Resize a learned table of absolute positions to a new grid.

    timm's ``timm.layers.resample_abs_pos_embed`` (checked against it in
    ``tests/test_lab_vision.py``): the first ``num_prefix_tokens`` rows
    (class and register tokens) are kept as they are; the other rows,
    read as an ``old_size`` grid (square if not given), are resized to
    ``new_size`` by ``torch.nn.functional.interpolate`` (``bicubic`` with
    ``antialias=True`` by default, computed in float32, corners not
    aligned) and put back after them.

    Parameters
    ----------
    posemb : Tensor, shape (1, num_prefix_tokens + h * w, d)
    new_size, old_size : (int, int)
        (height, width) of the grid, in patches.

    Returns
    -------
    Tensor, shape (1, num_prefix_tokens + new_h * new_w, d), posemb's dtype
    """
    n = posemb.shape[1] - num_prefix_tokens
    if old_size is None:
        side = math.isqrt(n)
        old_size = (side, side)
    if old_size[0] * old_size[1] != n:
        raise ValueError(f"old_size must hold the {n} grid rows of posemb, "
                         f"got {tuple(old_size)}")
    if tuple(new_size) == tuple(old_size):
        return posemb
    prefix, grid = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    d = grid.shape[-1]
    grid = grid.float().reshape(1, old_size[0], old_size[1], d)
    grid = F.interpolate(grid.permute(0, 3, 1, 2), size=tuple(new_size),
                         mode=interpolation, antialias=antialias)
    grid = grid.permute(0, 2, 3, 1).reshape(1, -1, d).to(posemb.dtype)
    return torch.cat([prefix, grid], dim=1)


# ------------------------------------------------------------ the model


def rotate_pairs(x, cos, sin):
    """Rotate interleaved pairs ``(2i, 2i+1)`` of ``x`` ``(..., n, d_k)``
    by the angles whose cosines and sines are ``cos``, ``sin``
    ``(..., n, d_k/2)`` (broadcast): :func:`posenc_core.apply_rope_angles`
    in torch, so that gradients flow to learnable angles."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin],
                       dim=-1).flatten(-2)


class VisionTransformer(nn.Module):
    """A small ViT: ``forward(images (B, S, S)) -> logits (B, n_classes)``.

    Parameters
    ----------
    method : one of :data:`METHODS`
    image_size : int
        The training side ``S0`` in pixels; the learned tables have
        ``(S0 / patch_size)**2`` grid rows. Any ``S`` divisible by
        ``patch_size`` runs.
    patch_size, d_model, n_layers, n_heads, n_classes : int
        ``d_k = d_model / n_heads`` divisible by 4 for the RoPE methods
        (half of a head's pairs for each axis).
    axial_base, mixed_base, dinov3_base : float
        Bases of ``rope_axial`` (100), ``rope_mixed`` (10), ``rope_dinov3``
        (100).
    rescale : float
        DINOv3's ``rescale_coords`` for ``rope_dinov3_rescale`` (2).
    rng : numpy.random.Generator
        Draws RoPE-Mixed's initial frequencies and the rescaling of each
        training step (``default_rng(0)`` if None).
    """

    def __init__(self, method, *, image_size=16, patch_size=2, d_model=64,
                 n_layers=2, n_heads=4, n_classes=10, axial_base=100.0,
                 mixed_base=10.0, dinov3_base=100.0, rescale=2.0, rng=None):
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        for name, value in (("image_size", image_size),
                            ("patch_size", patch_size), ("d_model", d_model),
                            ("n_layers", n_layers), ("n_heads", n_heads),
                            ("n_classes", n_classes)):
            if isinstance(value, bool) or not isinstance(value, int) \
                    or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if image_size % patch_size:
            raise ValueError(f"image_size must be divisible by patch_size, "
                             f"got {image_size} and {patch_size}")
        if d_model % n_heads:
            raise ValueError(f"d_model must be divisible by n_heads, got "
                             f"{d_model} and {n_heads}")
        head_dim = d_model // n_heads
        if method.startswith("rope") and head_dim % 4:
            raise ValueError(
                f"n_heads must leave a head width d_k = d_model / n_heads "
                f"divisible by 4 for {method} (half of its pairs per axis), "
                f"got d_k={head_dim}")
        if method == "sincos" and d_model % 4:
            raise ValueError(f"d_model must be divisible by 4 for sincos, "
                             f"got {d_model}")
        self.method, self.patch_size = method, patch_size
        self.grid = image_size // patch_size
        self.n_heads, self.head_dim, self.d_model = n_heads, head_dim, d_model
        self.axial_base, self.mixed_base = float(axial_base), float(mixed_base)
        self.dinov3_base, self.rescale = float(dinov3_base), float(rescale)
        self.rng = np.random.default_rng(0) if rng is None else rng
        self.embed = nn.Linear(patch_size * patch_size, d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))
        nn.init.trunc_normal_(self.cls, std=0.02)
        if method.startswith("learned"):  # timm: trunc normal, std 0.02
            self.pos_embed = nn.Parameter(
                torch.zeros(1, 1 + self.grid ** 2, d_model))
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
        if method == "rope_mixed":  # (layers, H, d_k/2, 2): x, y per pair
            freqs = np.stack([pc.rope_mixed_frequencies(
                head_dim, n_heads, base=self.mixed_base, rng=self.rng)
                for _ in range(n_layers)])
            self.freqs = nn.Parameter(torch.as_tensor(
                freqs, dtype=torch.get_default_dtype()))
        self.blocks = nn.ModuleList(Block(d_model, n_heads, causal=False)
                                    for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)
        self._tables = {}

    # ---- position tables, from posenc_core

    def _cached(self, key, make, device):
        key = (*key, str(device))
        if key not in self._tables:
            self._tables[key] = torch.as_tensor(
                make(), dtype=torch.get_default_dtype(), device=device)
        return self._tables[key]

    def position_table(self, g):
        """What is added to the ``1 + g*g`` tokens (class first) on a
        ``g x g`` grid, ``(1, 1 + g*g, d)``, or None."""
        device = self.embed.weight.device
        if self.method == "learned_resize":
            return resample_abs_pos_embed(self.pos_embed, (g, g),
                                          (self.grid, self.grid))
        if self.method == "learned_clamp":
            rc = np.minimum(grid_coordinates(g, g), self.grid - 1)
            rows = 1 + rc[:, 0] * self.grid + rc[:, 1]
            index = torch.as_tensor(np.concatenate([[0], rows]),
                                    dtype=torch.long, device=device)
            return self.pos_embed[:, index]
        if self.method == "sincos":
            def make():
                table = pc.sincos_2d_encoding(g, g, self.d_model)
                return np.concatenate([np.zeros((1, self.d_model)), table])
            return self._cached(("sincos", g), make, device)[None]
        return None

    def rope_angles(self, g, layer=0):
        """The rotation angles of the ``1 + g*g`` tokens on a ``g x g``
        grid, ``(1 + g*g, d_k/2)`` (or ``(H, 1 + g*g, d_k/2)`` for
        RoPE-Mixed), class token first with angle 0 (unrotated); None for
        the methods without RoPE. With ``rope_dinov3_rescale`` in training
        mode, each call draws a new rescaling."""
        device = self.embed.weight.device
        zero = np.zeros((1, self.head_dim // 2))
        if self.method == "rope_axial":
            return self._cached(("axial", g), lambda: np.concatenate([
                zero, pc.rope_axial_angles(grid_coordinates(g, g),
                                           self.head_dim,
                                           base=self.axial_base)]), device)
        if self.method == "rope_mixed":
            coords = self._cached(("coords", g),
                                  lambda: grid_coordinates(g, g), device)
            freqs = self.freqs[layer]              # (H, d_k/2, 2): x, y
            angles = (coords[None, :, None, 1] * freqs[:, None, :, 0]
                      + coords[None, :, None, 0] * freqs[:, None, :, 1])
            return F.pad(angles, (0, 0, 1, 0))     # class token: angle 0
        if self.method.startswith("rope_dinov3"):
            coords = pc.normalized_patch_coordinates(g, g)
            if self.method.endswith("rescale") and self.training:
                shift, jitter, eta = pc.sample_coordinate_augmentation(
                    self.rng, rescale=self.rescale)
                coords = pc.augment_coordinates(coords, shift=shift,
                                                jitter=jitter, rescale=eta)
                angles = pc.dinov3_rope_angles(coords, self.head_dim,
                                               base=self.dinov3_base)
                return torch.as_tensor(np.concatenate([zero, angles]),
                                       dtype=torch.get_default_dtype(),
                                       device=device)
            return self._cached(("dinov3", g), lambda: np.concatenate([
                zero, pc.dinov3_rope_angles(coords, self.head_dim,
                                            base=self.dinov3_base)]), device)
        return None

    def forward(self, images):
        """Logits ``(B, n_classes)`` for images ``(B, S, S)``."""
        S = images.shape[-1]
        if images.ndim != 3 or images.shape[-2] != S or S % self.patch_size:
            raise ValueError(
                f"images must be (B, S, S) with S divisible by patch_size "
                f"{self.patch_size}, got {tuple(images.shape)}")
        g = S // self.patch_size
        x = self.embed(patchify(images, self.patch_size))
        x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1)
        add = self.position_table(g)
        if add is not None:
            x = x + add
        rope = self.method.startswith("rope")
        angles = self.rope_angles(g) if rope else None
        for layer, block in enumerate(self.blocks):
            position = {}
            if rope:
                if self.method == "rope_mixed":
                    angles = self.rope_angles(g, layer)
                cos, sin = angles.cos(), angles.sin()
                position["rotate"] = lambda t, c=cos, s=sin: rotate_pairs(
                    t, c, s)
            x = block(x, **position)
        return self.head(self.ln_f(x[:, 0]))


# ------------------------------------------------------------ the experiment


@dataclass(frozen=True)
class VisionConfig:
    """Every setting of the experiment; stored in the JSON as it ran."""

    methods: tuple = METHODS
    seeds: tuple = (0, 1, 2)
    # model
    image_size: int = 12
    patch_size: int = 2
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    axial_base: float = 100.0
    mixed_base: float = 10.0
    dinov3_base: float = 100.0
    dinov3_rescale: float = 2.0
    # training
    batch_size: int = 32
    steps: int = 1000
    lr: float = 2e-3
    warmup: int = 50
    # evaluation
    eval_sizes: tuple = (12, 18, 24, 36)
    eval_examples: int = 200
    # machine
    device: str = "cpu"
    threads: int = 1
    log_every: int = 25

    def check(self):
        """Raise ``ValueError`` naming the first bad setting."""
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ValueError(f"methods must be a non-empty selection of "
                             f"{METHODS}, got {list(self.methods)}")
        for name in ("image_size", "patch_size", "d_model", "n_layers",
                     "n_heads", "batch_size", "steps", "eval_examples",
                     "threads", "log_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) \
                    or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup must be an integer >= 0, got "
                             f"{self.warmup!r}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct integers, got "
                             f"{self.seeds}")
        if self.image_size < DIGIT:
            raise ValueError(f"image_size must be >= 8 (a digit), got "
                             f"{self.image_size}")
        if self.eval_examples > TEST_DIGITS:
            raise ValueError(f"eval_examples must be at most {TEST_DIGITS}, "
                             f"got {self.eval_examples}")
        if not self.eval_sizes or any(
                not isinstance(s, int) or s < self.image_size
                or s % self.patch_size for s in self.eval_sizes):
            raise ValueError(
                f"eval_sizes must be sides >= image_size {self.image_size} "
                f"divisible by patch_size {self.patch_size}, got "
                f"{self.eval_sizes}")
        if not self.dinov3_rescale >= 1:
            raise ValueError(f"dinov3_rescale must be >= 1, got "
                             f"{self.dinov3_rescale}")
        try:
            device = torch.device(self.device)
        except (RuntimeError, TypeError) as err:
            raise ValueError(f"device must be a torch device such as 'cpu' "
                             f"or 'cuda', got {self.device!r}") from err
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device is {self.device!r}, but torch sees no "
                             f"CUDA GPU here")
        for method in self.methods:  # the model's own checks, up front
            self.model(method, 0)

    def model(self, method, seed):
        return VisionTransformer(
            method, image_size=self.image_size, patch_size=self.patch_size,
            d_model=self.d_model, n_layers=self.n_layers,
            n_heads=self.n_heads, axial_base=self.axial_base,
            mixed_base=self.mixed_base, dinov3_base=self.dinov3_base,
            rescale=self.dinov3_rescale,
            rng=np.random.default_rng([seed, 2]))


PRESETS = {
    "full": VisionConfig(),
    # the tests' configuration: a second or two per method
    "quick": VisionConfig(d_model=32, n_layers=1, n_heads=2, batch_size=16,
                          steps=60, warmup=5, eval_sizes=(12, 24),
                          eval_examples=64, log_every=10),
    # the chapter's live training: one method and seed at the full
    # settings (the committed run of that seed, about a minute)
    "live": VisionConfig(methods=("rope_axial",), seeds=(0,)),
}


@torch.no_grad()
def evaluate(model, images, labels, device, tokens_per_batch=1 << 15):
    """Accuracy and mean cross-entropy (nats) on ``images`` ``(B, S, S)``."""
    n = (images.shape[-1] // model.patch_size) ** 2 + 1
    chunk = max(1, tokens_per_batch // n)
    right, loss = 0, 0.0
    x_all = torch.as_tensor(images)
    y_all = torch.as_tensor(labels)
    for s in range(0, len(x_all), chunk):
        logits = model(x_all[s: s + chunk].to(device))
        y = y_all[s: s + chunk].to(device)
        loss += F.cross_entropy(logits, y, reduction="sum").item()
        right += (logits.argmax(-1) == y).sum().item()
    return {"accuracy": round(right / len(x_all), 5),
            "loss": round(loss / len(x_all), 5), "images": len(x_all)}


def run_one(cfg, method, seed, digits=None, tick=lambda k: None):
    """Train and evaluate one (method, seed); returns a JSON-able dict.

    Deterministic on one machine: weights from ``torch.manual_seed(seed)``,
    batches from ``numpy.random.default_rng(seed)``, RoPE-Mixed's initial
    frequencies and DINOv3's rescalings from ``default_rng([seed, 2])``;
    ``cfg.threads`` threads and deterministic algorithms, restored after.
    ``tick(k)`` is called after every training step (a progress line).
    """
    with _ex._deterministic(cfg):
        return _run_one(cfg, method, seed, digits, tick)


def _run_one(cfg, method, seed, digits, tick):
    start = time.perf_counter()
    (train_x, train_y), (test_x, test_y) = digits or split_digits(
        *load_digits())
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = cfg.model(method, seed).to(cfg.device)
    run = {"method": method, "seed": seed,
           "n_params": sum(p.numel() for p in model.parameters())}
    labels = torch.as_tensor(train_y)

    def next_batch():
        pick = rng.integers(0, len(train_x), cfg.batch_size)
        x = torch.as_tensor(canvas_images(train_x[pick], cfg.image_size, rng))
        return x, labels[pick], torch.ones(cfg.batch_size, dtype=torch.bool)

    run["train_loss"] = _ex._train(model, next_batch, cfg.steps, cfg.lr,
                                   cfg.warmup, cfg, tick)
    digits_x = test_x[:cfg.eval_examples]
    digits_y = test_y[:cfg.eval_examples]
    run["eval"] = {mode: {} for mode in MODES}
    for size in cfg.eval_sizes:
        for mode in MODES:
            if size == cfg.image_size and mode == "canvas":
                run["eval"][mode][str(size)] = run["eval"]["zoom"][str(size)]
                continue  # at the training size both are the same images
            images = test_images(cfg, digits_x, mode, size)
            run["eval"][mode][str(size)] = evaluate(model, images, digits_y,
                                                    cfg.device)
    run["wall_time_s"] = round(time.perf_counter() - start, 2)
    return run


def summarize(runs):
    """Mean, sample standard deviation, min, max and n over seeds:
    ``{mode: {method: {size: {"accuracy": {...}, "loss": {...}}}}}``,
    sizes as JSON strings, modes ``"zoom"`` and ``"canvas"``."""
    out = {}
    for mode in MODES:
        group = {}
        for run in runs:
            for size, res in run["eval"][mode].items():
                slot = group.setdefault(run["method"], {}).setdefault(size, {})
                for metric in ("accuracy", "loss"):
                    slot.setdefault(metric, []).append(res[metric])
        out[mode] = {method: {size: {m: _ex._mean_spread(v)
                                     for m, v in by.items()}
                              for size, by in sizes.items()}
                     for method, sizes in group.items()}
    return out


def load_results(name="full"):
    """A committed results file: ``results/ch09/<name>/results.json``
    (found from this file, whatever the working folder), as a dict."""
    import json

    path = RESULTS_DIR / name / "results.json"
    if not path.exists():
        raise ValueError(f"name must be a folder of {RESULTS_DIR} with a "
                         f"results.json, got {name!r}")
    return json.loads(path.read_text())


def _worker(cfg, method, seed, queue):
    """One run in a worker process; progress goes back through ``queue``."""
    steps = [0, time.perf_counter()]

    def tick(k):
        steps[0] += k
        if time.perf_counter() - steps[1] > 0.25:
            queue.put(steps[0])
            steps[:] = [0, time.perf_counter()]

    run = run_one(cfg, method, seed, None, tick)
    queue.put(steps[0])
    return run


def run_experiment(cfg, out, *, overwrite=False, progress=True, jobs=1):
    """Every method and seed of ``cfg``; writes ``out``/results.json.

    As :func:`posenc_lab.experiment.run_experiment`: refuses a non-empty
    ``out`` unless ``overwrite``; each finished run goes at once to
    ``out/runs/<method>-seed<k>.json``; ``jobs`` worker processes, with
    the same numbers for any ``jobs``.
    """
    cfg.check()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a folder, got the file {out}")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise ValueError(f"out must be an empty or new folder (or pass "
                         f"overwrite), {out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    for old in [out / "results.json", *(out / "runs").glob("*.json")]:
        old.unlink(missing_ok=True)
    digits = split_digits(*load_digits())
    env = _ex.environment(cfg)
    env["jobs"] = jobs
    results = {"schema": SCHEMA, "config": asdict(cfg), "environment": env,
               "load_average_start": _ex._load(), "load_average_during": [],
               "data": {"file": "posenc_lab/data/digits.csv.gz",
                        "sha256": DIGITS_SHA256,
                        "train_images": len(digits[0][0]),
                        "test_images": cfg.eval_examples},
               "runs": []}
    # seed by seed, so that an interrupted run has every method of its
    # first seeds
    todo = [(method, seed) for seed in cfg.seeds for method in cfg.methods]
    start = time.perf_counter()
    bar = _ex._progress(cfg.steps * len(todo), progress)

    def finished(run):
        results["runs"].append(run)
        results["load_average_during"].append(_ex._load())
        _ex.write_json(out / "runs" / f"{run['method']}-seed{run['seed']}.json",
                       run)

    try:
        if jobs == 1:
            for method, seed in todo:
                bar.set_description(f"{method} seed {seed}")
                finished(run_one(cfg, method, seed, digits, bar.update))
        else:
            _ex._run_parallel(cfg, todo, jobs, bar, finished, worker=_worker)
    finally:
        bar.close()
    order = {key: i for i, key in enumerate(todo)}
    results["runs"].sort(key=lambda r: order[r["method"], r["seed"]])
    results["wall_time_s"] = round(time.perf_counter() - start, 1)
    results["load_average_end"] = _ex._load()
    results["complete"] = True
    results["summary"] = summarize(results["runs"])
    _ex.write_json(out / "results.json", results)
    return results


def collect_results(cfg, out):
    """``out``/results.json from the runs an interrupted (or still
    running) experiment has finished, ``out/runs/*.json``.

    The same layout as :func:`run_experiment`'s, with ``"complete"``
    False if runs of ``cfg`` are missing (``"missing"`` lists them),
    ``wall_time_s`` None (unknown) and the summary over the runs there.
    """
    import json

    cfg.check()
    out = Path(out)
    todo = [(method, seed) for seed in cfg.seeds for method in cfg.methods]
    found = {}
    for path in sorted((out / "runs").glob("*.json")):
        run = json.loads(path.read_text())
        found[run["method"], run["seed"]] = run
    runs = [found[key] for key in todo if key in found]
    if not runs:
        raise ValueError(f"out must hold finished runs in {out / 'runs'}, "
                         f"found none of the {len(todo)} runs of cfg")
    env = _ex.environment(cfg)
    results = {"schema": SCHEMA, "config": asdict(cfg), "environment": env,
               "load_average_start": None, "load_average_during": [],
               "data": {"file": "posenc_lab/data/digits.csv.gz",
                        "sha256": DIGITS_SHA256,
                        "train_images": len(load_digits()[0]) - TEST_DIGITS,
                        "test_images": cfg.eval_examples},
               "runs": runs, "wall_time_s": None,
               "load_average_end": _ex._load(),
               "complete": len(runs) == len(todo),
               "missing": [f"{m}-seed{k}" for m, k in todo
                           if (m, k) not in found],
               "summary": summarize(runs)}
    _ex.write_json(out / "results.json", results)
    return results


def config_from_json(stored):
    """The :class:`VisionConfig` stored in a results file's ``"config"``."""
    return VisionConfig(**{k: tuple(v) if isinstance(v, list) else v
                           for k, v in stored.items()})


def config_from(preset="full", **changes):
    """A preset with some settings changed (``None`` values are ignored)."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {tuple(PRESETS)}, got "
                         f"{preset!r}")
    names = {f.name for f in fields(VisionConfig)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}")
    return replace(PRESETS[preset],
                   **{k: v for k, v in changes.items() if v is not None})


# ------------------------------------------------------------ the command


def _ints(text):
    return tuple(int(v) for v in text.split(","))


def _names(text):
    return tuple(v.strip() for v in text.split(",") if v.strip())


def main(argv=None):
    """``python -m posenc_lab.vision --out DIR [options]``."""
    import argparse
    import os

    ap = argparse.ArgumentParser(
        prog="python -m posenc_lab.vision",
        description="Zoom versus canvas: a small vision Transformer trained "
                    "at one resolution with each 2-D position method, tested "
                    "on larger images; writes OUT/results.json.")
    ap.add_argument("--out", required=True, help="output folder (new or empty)")
    ap.add_argument("--overwrite", action="store_true",
                    help="write into a non-empty --out, replacing its results")
    ap.add_argument("--preset", default="full", choices=tuple(PRESETS))
    ap.add_argument("--methods", type=_names,
                    help=f"comma-separated, of {', '.join(METHODS)}")
    ap.add_argument("--seeds", type=int, metavar="N",
                    help="run seeds 0..N-1 (default: 3)")
    for flag, dest in (("--image-size", "image_size"),
                       ("--patch-size", "patch_size"), ("--d-model", "d_model"),
                       ("--n-layers", "n_layers"), ("--n-heads", "n_heads"),
                       ("--batch-size", "batch_size"), ("--steps", "steps"),
                       ("--eval-examples", "eval_examples")):
        ap.add_argument(flag, type=int, dest=dest)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--eval-sizes", type=_ints, dest="eval_sizes",
                    help="test image sides in pixels (default 16,24,32,48)")
    ap.add_argument("--device", help="cpu (default), cuda, cuda:1, mps ...")
    ap.add_argument("--threads", type=int,
                    help="torch CPU threads per run (default 1)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="runs side by side in worker processes (default 2, "
                         "or 1 on one core; the numbers do not depend on it)")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--collect", action="store_true",
                    help="train nothing: write OUT/results.json from the "
                         "runs in OUT/runs (an interrupted experiment), "
                         "marked incomplete if some are missing")
    args = ap.parse_args(argv)
    changes = {k: v for k, v in vars(args).items()
               if k not in ("out", "overwrite", "preset", "seeds", "jobs",
                            "no_progress", "collect")}
    if args.seeds is not None:
        changes["seeds"] = tuple(range(args.seeds))
    try:
        cfg = config_from(args.preset, **changes)
        if args.collect:
            results = collect_results(cfg, args.out)
            print(f"wrote {args.out}/results.json ({len(results['runs'])} "
                  f"runs, {len(results['missing'])} missing)",
                  file=sys.stderr)
            return
        results = run_experiment(cfg, args.out, overwrite=args.overwrite,
                                 progress=not args.no_progress, jobs=args.jobs)
    except ValueError as err:
        ap.error(str(err))
    print(f"wrote {args.out}/results.json ({len(results['runs'])} runs, "
          f"{results['wall_time_s']:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    # run as the module posenc_lab.vision, so that worker processes find
    # _worker under its own name
    from posenc_lab.vision import main as _main

    _main()
