r"""A small decoder-only Transformer whose position method is an argument.

Written to be read next to the book: pre-LayerNorm blocks of causal
multi-head attention and an MLP, and one place where position enters for
each method. Every position table (sinusoidal rows, RoPE rotations, ALiBi
biases, T5 buckets) is computed by :mod:`posenc_core` in float64 and only
turned into a tensor here; the model re-implements no formula.

``method``:

``"none"``
    No position information at all; the causal mask is the only source of
    order (Kazemnejad et al. 2023; Haviv et al. 2022).
``"sinusoidal"``
    :func:`posenc_core.sinusoidal_encoding` added to the token embeddings
    (Vaswani et al. 2017).
``"learned"``
    A learned table of ``max_len`` absolute position embeddings, added to
    the token embeddings. Past its end the table has no row: with
    ``beyond="error"`` (the default) a longer input raises ``ValueError``;
    with ``beyond="clamp"`` every position ``pos >= max_len`` reuses the
    last row, ``max_len - 1``.
``"rope"``
    Queries and keys of every head rotated by
    :func:`posenc_core.apply_rope` (Su et al. 2021), ``layout``
    ``"interleaved"`` or ``"half"``, with the frequencies of
    :func:`posenc_core.rope_frequencies` and, after :meth:`set_rope_scaling`,
    their rescalings for a longer context (Position Interpolation, NTK-aware,
    YaRN with its attention temperature).
``"alibi"``
    :func:`posenc_core.alibi_bias` added to every head's scores
    (Press et al. 2022).
``"t5"``
    A learned scalar per head and per bucket of
    :func:`posenc_core.t5_relative_position_bucket` (causal buckets,
    ``num_buckets``, ``max_distance``), added to the scores and shared by
    all layers, as in T5 (Raffel et al. 2020).

``attention_fn`` (optional) replaces the attention step of every layer by
your own function ``attention_fn(q, k, v) -> y``: queries, keys and values
of shape ``(B, H, n, d_k)`` in, the weighted values ``softmax(S) V`` of the
same shape out; the function applies the causal mask and any position
information itself. It goes with the methods whose position does not enter
the attention (``"none"``, ``"sinusoidal"``, ``"learned"``); with
``method="none"`` it is the only place where position enters, as in the
book's eighth assignment, where students write ALiBi this way.

Position per layer (chapter 10), for ``"rope"``: ``rope_fraction`` and
``rope_convention`` rotate only part of each head, with the frequencies of
:func:`posenc_core.partial_rope_frequencies` (0 for the pairs that do not
turn): ``"spread"`` as GPT-NeoX's ``rotary_pct`` and transformers'
``partial_rotary_factor``, ``"proportional"`` as p-RoPE (Barbero et al.
2024) and Gemma 4's ``rope_type: "proportional"``; ``nope_layers`` lists
the layers that carry no position at all (Llama 4's every fourth layer),
and ``nope_temperature`` scales their queries by
:func:`posenc_core.nope_attention_temperature` of each position, as
Llama 4 does. The defaults rotate every pair of every layer, as before.
:meth:`TinyTransformer.layer_frequencies` returns each layer's
frequencies.

Shapes: ``B`` batch, ``n`` tokens, ``H`` heads, ``d_k`` head width.
"""

import math

import numpy as np
import torch
from torch import nn

import posenc_core as pc

__all__ = ["METHODS", "LAYOUTS", "BEYOND", "CONVENTIONS", "TinyTransformer",
           "rope_rotations"]

METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
LAYOUTS = ("interleaved", "half")
BEYOND = ("error", "clamp")
CONVENTIONS = ("spread", "proportional")


def rope_rotations(n, head_dim, *, base=10000.0, layout="interleaved",
                   scaling=None, frequencies=None):
    r"""The RoPE rotation of every position, as matrices, from posenc_core.

    Row ``j`` of ``M[pos]`` is :func:`posenc_core.apply_rope` of the unit
    vector :math:`e_j` at position ``pos``; since the rotation is linear,
    ``x @ M[pos]`` equals ``apply_rope(x, [pos])`` for every row vector
    ``x``. Frequencies come from :func:`posenc_core.rope_frequencies`
    (with ``scaling``, e.g. ``{"type": "linear", "factor": 4}``), or are
    ``frequencies`` if given (e.g. from
    :func:`posenc_core.partial_rope_frequencies`; a pair of frequency 0 does
    not turn).

    Returns
    -------
    M : ndarray of float64, shape (n, head_dim, head_dim)
    """
    if frequencies is None:
        theta = pc.rope_frequencies(head_dim, base=base, scaling=scaling)
    elif scaling is not None:
        raise ValueError("scaling must be None when frequencies are given")
    else:
        theta = np.asarray(frequencies, dtype=np.float64)
    eye = np.broadcast_to(np.eye(head_dim)[:, None, :],
                          (head_dim, n, head_dim))
    rows = pc.apply_rope(eye, n, layout=layout, frequencies=theta)
    return rows.transpose(1, 0, 2)  # (pos, j, :) = rotated e_j


class Attention(nn.Module):
    """Multi-head self-attention with an optional score bias.

    Causal by default (chapter 8); ``causal=False`` lets every token see
    every other, as in a vision Transformer (:mod:`posenc_lab.vision`).
    ``rotate`` (a function of ``(B, H, n, d_k)`` tensors) rotates queries
    and keys when the rotation is not one matrix per position (2-D RoPE).
    """

    def __init__(self, d_model, n_heads, *, causal=True):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.causal = bool(causal)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, *, rotations=None, bias=None, logit_scale=1.0,
                attention_fn=None, query_scale=None, rotate=None):
        B, n, _ = x.shape
        q, k, v = self.qkv(x).split(x.shape[-1], dim=-1)
        q, k, v = (t.view(B, n, self.n_heads, self.head_dim).transpose(1, 2)
                   for t in (q, k, v))                     # (B, H, n, d_k)
        if query_scale is not None:                        # Llama 4's NoPE
            q = q * query_scale[:, None]                   # temperature
        if attention_fn is not None:                       # the user's own
            y = attention_fn(q, k, v)
            if not isinstance(y, torch.Tensor) or y.shape != v.shape:
                raise ValueError(
                    f"attention_fn must return a tensor of the shape of v, "
                    f"(B, H, n, d_k) = {tuple(v.shape)}, got "
                    f"{tuple(y.shape) if isinstance(y, torch.Tensor) else y!r}")
            return self.out(y.transpose(1, 2).reshape(B, n, -1))
        if rotations is not None:                          # RoPE
            q = torch.einsum("bhnd,nde->bhne", q, rotations)
            k = torch.einsum("bhnd,nde->bhne", k, rotations)
        if rotate is not None:                             # 2-D RoPE
            q, k = rotate(q), rotate(k)
        S = q @ k.transpose(-2, -1) * (logit_scale / math.sqrt(self.head_dim))
        if bias is not None:                               # ALiBi, T5
            S = S + bias
        if self.causal:
            causal = torch.ones(n, n, dtype=torch.bool,
                                device=x.device).tril()
            S = S.masked_fill(~causal, float("-inf"))
        A = S.softmax(dim=-1)
        y = (A @ v).transpose(1, 2).reshape(B, n, -1)
        return self.out(y)


class Block(nn.Module):
    """A pre-LayerNorm block: attention, then an MLP, each residual."""

    def __init__(self, d_model, n_heads, *, causal=True):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = Attention(d_model, n_heads, causal=causal)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x, **position):
        x = x + self.attn(self.ln1(x), **position)
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    """A decoder-only character model: ``forward(idx) -> logits``.

    Parameters
    ----------
    vocab_size : int
    method : {"none", "sinusoidal", "learned", "rope", "alibi", "t5"}
    d_model, n_layers, n_heads : int
        Width, depth, heads; ``d_model`` divisible by ``n_heads``, and the
        head width ``d_k = d_model / n_heads`` even for ``"rope"``.
    max_len : int, optional
        Rows of the ``"learned"`` table (required for that method).
    beyond : {"error", "clamp"}
        What ``"learned"`` does with positions ``>= max_len``.
    base : float
        Base :math:`b` of ``"sinusoidal"`` and ``"rope"``.
    layout : {"interleaved", "half"}
        RoPE's pairing of dimensions.
    num_buckets, max_distance : int
        T5's :math:`N_b` and :math:`r_{\\max}`.
    rope_fraction : float
        For ``"rope"``: the fraction of each head's pairs that rotate, in
        ``[0, 1]`` (1: all of them, as before; 0: none, which is NoPE).
    rope_convention : {"spread", "proportional"}
        Which pairs turn, and how fast, when ``rope_fraction < 1``
        (:func:`posenc_core.partial_rope_frequencies`).
    nope_layers : sequence of int
        For ``"rope"``: the layers (counted from 0) with no position at all.
    nope_temperature : dict, optional
        For ``"rope"`` with ``nope_layers``: keyword arguments of
        :func:`posenc_core.nope_attention_temperature` (e.g.
        ``{"floor_scale": 64}``); ``{}`` takes its defaults, ``None`` (the
        default) applies no temperature.
    attention_fn : callable, optional
        ``attention_fn(q, k, v) -> y``, shapes ``(B, H, n, d_k)``: replaces
        the attention step (scores, causal mask, softmax, weighted sum) of
        every layer (see the module's docstring). Only with ``"none"``,
        ``"sinusoidal"`` or ``"learned"``.
    """

    def __init__(self, vocab_size, method, *, d_model=64, n_layers=2,
                 n_heads=4, max_len=None, beyond="error", base=10000.0,
                 layout="interleaved", num_buckets=32, max_distance=128,
                 attention_fn=None, rope_fraction=1.0,
                 rope_convention="spread", nope_layers=(),
                 nope_temperature=None):
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model),
                            ("n_layers", n_layers), ("n_heads", n_heads)):
            if isinstance(value, bool) or not isinstance(value, int) \
                    or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if d_model % n_heads:
            raise ValueError(
                f"d_model must be divisible by n_heads, got {d_model} and "
                f"{n_heads}")
        head_dim = d_model // n_heads
        if method == "rope" and head_dim % 2:
            raise ValueError(
                f"n_heads must leave an even head width d_k = d_model / "
                f"n_heads for rope, got d_model={d_model}, n_heads={n_heads} "
                f"(d_k={head_dim})")
        if method == "sinusoidal" and d_model % 2:
            raise ValueError(f"d_model must be even for sinusoidal, got {d_model}")
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if beyond not in BEYOND:
            raise ValueError(f"beyond must be one of {BEYOND}, got {beyond!r}")
        if method == "learned" and (isinstance(max_len, bool)
                                    or not isinstance(max_len, int)
                                    or max_len < 1):
            raise ValueError(
                f"max_len must be an integer >= 1 for learned, got {max_len!r}")
        if attention_fn is not None and not callable(attention_fn):
            raise ValueError(f"attention_fn must be a function (q, k, v) -> "
                             f"y or None, got {attention_fn!r}")
        if attention_fn is not None and method in ("rope", "alibi", "t5"):
            raise ValueError(
                f"attention_fn replaces the attention step, where method "
                f"{method!r} puts its position; use attention_fn with method "
                f"'none', 'sinusoidal' or 'learned'")
        if method == "t5":  # posenc_core checks num_buckets, max_distance
            pc.t5_relative_position_bucket(0, bidirectional=False,
                                           num_buckets=num_buckets,
                                           max_distance=max_distance)
        nope_layers = self._check_layers(method, n_layers, head_dim,
                                         base, rope_fraction,
                                         rope_convention, nope_layers,
                                         nope_temperature)
        self.rope_fraction = float(rope_fraction)
        self.rope_convention = rope_convention
        self.nope_layers = nope_layers
        self.nope_temperature = (None if nope_temperature is None
                                 else dict(nope_temperature))
        self.method, self.base, self.layout = method, float(base), layout
        self.max_len, self.beyond = max_len, beyond
        self.n_heads, self.head_dim = n_heads, head_dim
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.rope_scaling, self.logit_scale = None, 1.0
        self.attention_fn = attention_fn
        self.tok = nn.Embedding(vocab_size, d_model)
        if method == "learned":
            self.pos = nn.Embedding(max_len, d_model)
        if method == "t5":
            self.t5_bias = nn.Embedding(num_buckets, n_heads)
            nn.init.zeros_(self.t5_bias.weight)  # unseen buckets add 0
        self.blocks = nn.ModuleList(Block(d_model, n_heads)
                                    for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self._tables = {}

    @staticmethod
    def _check_layers(method, n_layers, head_dim, base, fraction, convention,
                      nope_layers, temperature):
        """The per-layer options' checks; the NoPE layers as a sorted tuple."""
        if isinstance(fraction, bool) or not isinstance(
                fraction, (int, float)) or not 0 <= fraction <= 1:
            raise ValueError(
                f"rope_fraction must be a number in [0, 1], got {fraction!r}")
        if convention not in CONVENTIONS:
            raise ValueError(f"rope_convention must be one of {CONVENTIONS}, "
                             f"got {convention!r}")
        try:
            layers = tuple(sorted(set(int(i) for i in nope_layers)))
            bad = any(isinstance(i, bool) or int(i) != i for i in nope_layers)
        except (TypeError, ValueError):
            layers, bad = (), True
        if bad or any(not 0 <= i < n_layers for i in layers):
            raise ValueError(
                f"nope_layers must be layer numbers 0..{n_layers - 1}, got "
                f"{nope_layers!r}")
        if temperature is not None and not isinstance(temperature, dict):
            raise ValueError(
                f"nope_temperature must be None or a dict of keyword "
                f"arguments of posenc_core.nope_attention_temperature, got "
                f"{temperature!r}")
        custom = (fraction != 1 or convention != "spread" or layers
                  or temperature is not None)
        if custom and method != "rope":
            raise ValueError(
                f"rope_fraction, rope_convention, nope_layers and "
                f"nope_temperature apply to method 'rope' only, not "
                f"{method!r}")
        if temperature is not None and not layers:
            raise ValueError("nope_temperature needs nope_layers: it scales "
                             "the queries of the layers without position")
        if method == "rope":  # posenc_core checks the fraction's pairs
            if fraction != 1 or convention != "spread":
                pc.partial_rope_frequencies(head_dim, fraction, base=base,
                                            convention=convention)
            if temperature is not None:
                pc.nope_attention_temperature([0.0], **temperature)
        return layers

    def layer_frequencies(self):
        """Each layer's RoPE frequencies, as the model uses them.

        A list of ``n_layers`` entries: for a rotary layer an array of
        ``d_k / 2`` frequencies (0 for a pair that does not turn; after
        :meth:`set_rope_scaling`, the rescaled ones), for a NoPE layer
        ``None``. For methods other than ``"rope"``: all ``None``.
        """
        if self.method != "rope":
            return [None] * len(self.blocks)
        theta = self._rope_frequencies()
        return [None if i in self.nope_layers else theta.copy()
                for i in range(len(self.blocks))]

    def _rope_frequencies(self):
        if self.rope_fraction == 1 and self.rope_convention == "spread":
            return pc.rope_frequencies(self.head_dim, base=self.base,
                                       scaling=self.rope_scaling)
        return pc.partial_rope_frequencies(
            self.head_dim, self.rope_fraction, base=self.base,
            convention=self.rope_convention)

    # ---- position tables, from posenc_core, cached per length

    def set_rope_scaling(self, scaling=None, *, temperature=False):
        """Rescale RoPE's frequencies for a longer context, without training.

        ``scaling`` is a dict of :func:`posenc_core.rope_frequencies`, e.g.
        ``{"type": "linear", "factor": 4}`` (Position Interpolation),
        ``{"type": "ntk", "factor": 4}`` or ``{"type": "yarn", "factor": 4,
        "original_max_position_embeddings": 64}``; ``None`` restores the
        trained frequencies. ``temperature=True`` multiplies every score by
        ``posenc_core.yarn_attention_scale(factor) ** 2`` (YaRN's
        :math:`1/t`; queries and keys are each scaled by the factor).
        """
        if self.method != "rope":
            raise ValueError(
                f"scaling applies only to method 'rope', not {self.method!r}")
        if scaling is not None and (self.rope_fraction != 1
                                    or self.rope_convention != "spread"):
            raise ValueError(
                f"scaling applies to a fully rotated head only, not "
                f"rope_fraction={self.rope_fraction} with "
                f"rope_convention={self.rope_convention!r}")
        if scaling is not None:
            pc.rope_frequencies(self.head_dim, base=self.base, scaling=scaling)
        self.rope_scaling = None if scaling is None else dict(scaling)
        self.logit_scale = 1.0
        if temperature:
            if scaling is None:
                raise ValueError("temperature needs a scaling with a factor")
            self.logit_scale = pc.yarn_attention_scale(scaling["factor"]) ** 2
        self._tables.clear()

    def _table(self, name, n, device, make):
        key = (name, n, str(device))
        if key not in self._tables:
            self._tables[key] = torch.as_tensor(
                make(), dtype=torch.get_default_dtype()
                if name != "bucket" else torch.long, device=device)
        return self._tables[key]

    def _positions(self, n, device):
        """What the method adds to the embeddings and passes to attention."""
        add, position = None, {"logit_scale": self.logit_scale}
        if self.attention_fn is not None:
            position["attention_fn"] = self.attention_fn
        if self.method == "sinusoidal":
            add = self._table("sin", n, device, lambda: pc.sinusoidal_encoding(
                n, self.tok.embedding_dim, base=self.base))
        elif self.method == "learned":
            if n > self.max_len and self.beyond == "error":
                raise ValueError(
                    f"beyond must be 'clamp' to run the learned table of "
                    f"max_len={self.max_len} positions on {n} tokens (it "
                    f"has no row past position {self.max_len - 1})")
            pos = torch.arange(n, device=device).clamp(max=self.max_len - 1)
            add = self.pos(pos)
        elif self.method == "rope" and self.rope_fraction == 1 \
                and self.rope_convention == "spread":
            position["rotations"] = self._table(
                "rope", n, device, lambda: rope_rotations(
                    n, self.head_dim, base=self.base, layout=self.layout,
                    scaling=self.rope_scaling))
        elif self.method == "rope":
            position["rotations"] = self._table(
                "partial", n, device, lambda: rope_rotations(
                    n, self.head_dim, layout=self.layout,
                    frequencies=self._rope_frequencies()))
        elif self.method == "alibi":
            position["bias"] = self._table(
                "alibi", n, device, lambda: pc.alibi_bias(n, self.n_heads))
        elif self.method == "t5":
            bucket = self._table(
                "bucket", n, device, lambda: pc.t5_relative_position_bucket(
                    pc.relative_positions(n), bidirectional=False,
                    num_buckets=self.num_buckets,
                    max_distance=self.max_distance))
            position["bias"] = self.t5_bias(bucket).permute(2, 0, 1)
        return add, position

    def _layer_positions(self, n, device):
        """What goes into the embeddings, and each layer's attention."""
        add, position = self._positions(n, device)
        if not self.nope_layers:
            return add, [position] * len(self.blocks)
        nope = {"logit_scale": self.logit_scale}
        if self.nope_temperature is not None:
            nope["query_scale"] = self._table(
                "temperature", n, device, lambda: pc.nope_attention_temperature(
                    np.arange(n, dtype=np.float64), **self.nope_temperature))
        return add, [nope if i in self.nope_layers else position
                     for i in range(len(self.blocks))]

    def forward(self, idx):
        """Logits ``(B, n, vocab_size)`` for token ids ``idx`` ``(B, n)``."""
        n = idx.shape[1]
        add, positions = self._layer_positions(n, idx.device)
        x = self.tok(idx)
        if add is not None:
            x = x + add
        for block, position in zip(self.blocks, positions, strict=True):
            x = block(x, **position)
        return self.head(self.ln_f(x))
