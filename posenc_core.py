r"""Positional encodings for Transformers, in plain numpy.

This module is the single source of the mathematics used by the book: every
chapter, exercise and in-page script computes with these functions or is
tested against them. Each function implements one equation, states it in its
docstring, names the paper it comes from and refuses bad input with a
``ValueError`` that names the argument and says what is allowed.

All floating-point results are ``float64``. Nothing runs at import time.

References
----------
.. [Vaswani2017] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017.
.. [Shaw2018] P. Shaw, J. Uszkoreit, A. Vaswani, "Self-Attention with Relative
   Position Representations", NAACL 2018.
.. [Raffel2020] C. Raffel et al., "Exploring the Limits of Transfer Learning
   with a Unified Text-to-Text Transformer", JMLR 21, 2020 (T5).
.. [Press2022] O. Press, N. Smith, M. Lewis, "Train Short, Test Long:
   Attention with Linear Biases Enables Input Length Extrapolation",
   ICLR 2022 (ALiBi).
.. [Su2021] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position
   Embedding", arXiv:2104.09864, 2021.
.. [Chen2023] S. Chen et al., "Extending Context Window of Large Language
   Models via Positional Interpolation", arXiv:2306.15595, 2023.
.. [Peng2023] B. Peng et al., "YaRN: Efficient Context Window Extension of
   Large Language Models", arXiv:2309.00071, 2023.
.. [Llama3] A. Grattafiori et al., "The Llama 3 Herd of Models",
   arXiv:2407.21783, 2024 (RoPE scaling released with Llama 3.1).
.. [Barbero2024] F. Barbero, A. Vitvitskyi, C. Perivolaropoulos,
   R. Pascanu, P. Velickovic, "Round and Round We Go! What Makes Rotary
   Positional Encodings Useful?", arXiv:2410.06205, ICLR 2025 (p-RoPE).
.. [Ding2024] Y. Ding et al., "LongRoPE: Extending LLM Context Window Beyond
   2 Million Tokens", arXiv:2402.13753, ICML 2024.
.. [Men2024] X. Men, M. Xu, B. Wang, Q. Zhang, H. Lin, X. Han, W. Chen,
   "Base of RoPE Bounds Context Length", arXiv:2405.14591, NeurIPS 2024.
.. [Su2024base] J. Su, "Transformer升级之路：18、RoPE的底数选择原则",
   kexue.fm/archives/10122, 2024.
.. [Nakanishi2025] K. M. Nakanishi, "Scalable-Softmax Is Superior for
   Attention", arXiv:2501.19399, 2025.
.. [He2022] K. He et al., "Masked Autoencoders Are Scalable Vision
   Learners", CVPR 2022, arXiv:2111.06377 (MAE).
.. [Heo2024] B. Heo, S. Park, D. Han, S. Yun, "Rotary Position Embedding
   for Vision Transformer", ECCV 2024, arXiv:2403.13298.
.. [Simeoni2025] O. Simeoni et al., "DINOv3", arXiv:2508.10104, 2025.
.. [Wang2024] P. Wang et al., "Qwen2-VL: Enhancing Vision-Language Model's
   Perception of the World at Any Resolution", arXiv:2409.12191, 2024.
.. [Bai2025] S. Bai et al., "Qwen2.5-VL Technical Report",
   arXiv:2502.13923, 2025.
.. [Bai2025b] S. Bai et al., "Qwen3-VL Technical Report", arXiv:2511.21631,
   2025.
.. [Wei2025] X. Wei et al., "VideoRoPE: What Makes for Good Video Rotary
   Position Embedding?", ICML 2025, arXiv:2502.05173.
.. [DeepSeekV2] DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and
   Efficient Mixture-of-Experts Language Model", arXiv:2405.04434, 2024
   (Multi-head Latent Attention).
.. [DeepSeekV3] DeepSeek-AI, "DeepSeek-V3 Technical Report",
   arXiv:2412.19437, 2024.
.. [Shazeer2019] N. Shazeer, "Fast Transformer Decoding: One Write-Head is
   All You Need", arXiv:1911.02150, 2019 (multi-query attention).
.. [Ainslie2023] J. Ainslie et al., "GQA: Training Generalized Multi-Query
   Transformer Models from Multi-Head Checkpoints", EMNLP 2023,
   arXiv:2305.13245.
.. [Xiao2024] G. Xiao, Y. Tian, B. Chen, S. Han, M. Lewis, "Efficient
   Streaming Language Models with Attention Sinks", ICLR 2024,
   arXiv:2309.17453 (StreamingLLM); code: github.com/mit-han-lab/streaming-llm.
.. [Liu2019] Y. Liu et al., "RoBERTa: A Robustly Optimized BERT
   Pretraining Approach", arXiv:1907.11692, 2019.
.. [Ott2019] M. Ott et al., "fairseq: A Fast, Extensible Toolkit for
   Sequence Modeling", NAACL 2019 (demonstrations).
.. [OpenAI2025] OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card",
   arXiv:2508.10925, 2025.
.. [Miller2023] E. Miller, "Attention Is Off By One", blog post,
   evanmiller.org/attention-is-off-by-one.html, 2023.
.. [Kazemnejad2023] A. Kazemnejad et al., "The Impact of Positional
   Encoding on Length Generalization in Transformers", NeurIPS 2023.
.. [Llama4] Meta AI, "The Llama 4 Herd", Meta AI blog, 2025.
.. [Gemma3] Gemma Team, "Gemma 3 Technical Report", arXiv:2503.19786, 2025.
.. [SmolLM3] E. Bakouch et al., "SmolLM3: Smol, Multilingual, Long-Context
   Reasoner", Hugging Face blog, 2025.
.. [Baichuan2023] A. Yang et al., "Baichuan 2: Open Large-scale Language
   Models", arXiv:2309.10305, 2023.
.. [Cohere2025] Cohere, "Command A: An Enterprise-Ready Large Language
   Model", 2025.
"""

import functools
import warnings

import numpy as np

__all__ = [
    "sinusoidal_encoding",
    "frequencies",
    "wavelengths",
    "relative_shift_matrix",
    "binary_encoding",
    "self_attention",
    "apply_rope",
    "t5_relative_position_bucket",
    "alibi_slopes",
    "alibi_bias",
    "relative_positions",
    "rope_frequencies",
    "yarn_attention_scale",
    # chapter 10
    "partial_rope_frequencies",
    "nope_attention_temperature",
    "rope_attention_factor",
    "rope_supported_length",
    "rope_base_lower_bound",
    # chapter 6
    "rope_decay_bound",
    "rope_layout_permutation",
    "round_significand",
    # chapter 5
    "shaw_attention",
    # chapter 9
    "apply_rope_angles",
    "sincos_2d_encoding",
    "rope_axial_angles",
    "rope_mixed_frequencies",
    "rope_mixed_angles",
    "normalized_patch_coordinates",
    "augment_coordinates",
    "sample_coordinate_augmentation",
    "dinov3_rope_angles",
    "mrope_position_ids",
    "mrope_pair_axes",
    "mrope_angles",
    # chapter 10: a model's layers
    "position_layout",
    # chapter 11
    "kv_cache_bytes",
    "position_ids_from_attention_mask",
    "packed_position_ids",
    "packed_sequence_indices",
    "packed_attention_mask",
    "permute_rotary_half",
    "unpermute_rotary_half",
    "roberta_position_ids",
    "streaming_cache",
    "streaming_positions",
    "mla_params",
    "mla_attention_logits",
    "softmax_with_sink",
    "rope_stale_key_angles",
]

#: Largest number of elements a result may have (2**27 float64 = 1 GiB).
#: Bigger requests are refused up front instead of by the operating system.
MAX_ELEMENTS = 2**27

_LAYOUTS = ("interleaved", "concat")
_ROPE_LAYOUTS = ("interleaved", "half")
#: Optional scaling key without a default (its absence means something).
_UNSET = "unset"
_SCALING_KEYS = {
    "default": {"partial_rotary_factor": 1.0},
    "linear": {"factor": None, "partial_rotary_factor": 1.0},
    "ntk": {"factor": None, "partial_rotary_factor": 1.0},
    "dynamic": {
        "factor": None,
        "max_position_embeddings": None,
        "seq_len": _UNSET,
        "partial_rotary_factor": 1.0,
    },
    "yarn": {
        "factor": None,
        "original_max_position_embeddings": None,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "truncate": True,
        "attention_factor": _UNSET,
        "mscale": _UNSET,
        "mscale_all_dim": _UNSET,
        "partial_rotary_factor": 1.0,
    },
    "llama3": {
        "factor": None,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": None,
        "partial_rotary_factor": 1.0,
    },
    "longrope": {
        "short_factor": None,
        "long_factor": None,
        "original_max_position_embeddings": None,
        "factor": _UNSET,
        "max_position_embeddings": _UNSET,
        "attention_factor": _UNSET,
        "seq_len": _UNSET,
        "partial_rotary_factor": 1.0,
    },
    "proportional": {"factor": 1.0, "partial_rotary_factor": 1.0},
}


# ----------------------------------------------------------------- checks


def _renamed_parameter(old, new, position):
    """Accept the keyword ``old`` for the parameter ``new``, with a warning.

    ``new`` is the ``position``-th parameter (from 0); the wrapper's
    signature, as :func:`inspect.signature` reports it, is the function's
    own, so ``old`` is accepted but no longer advertised.
    """
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                if new in kwargs or len(args) > position:
                    raise ValueError(
                        f"{fn.__name__}: give {new}, not also the deprecated "
                        f"name {old} for the same argument"
                    )
                warnings.warn(
                    f"{fn.__name__}({old}=...) is deprecated; the argument "
                    f"is now called {new}, as in the book's notation",
                    DeprecationWarning, stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_int(name, value, minimum, what=None):
    if not _is_int(value) or value < minimum:
        what = what or f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(value)


def _check_d(name, value):
    if not _is_int(value) or value <= 0 or value % 2:
        raise ValueError(
            f"{name} must be a positive even integer, got {value!r}"
        )
    return int(value)


def _check_real(name, value, *, low=None, low_open=True, what):
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not (
        isinstance(value, bool))
    if ok:
        try:
            value = float(value)
        except OverflowError:  # an int beyond the float64 range
            ok = False
        ok = ok and np.isfinite(value) and (
            low is None or (value > low if low_open else value >= low)
        )
    if not ok:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return value


def _check_base(base):
    return _check_real("base", base, low=1.0, what="a finite number > 1")


def _check_size(*shape):
    count = 1
    for s in shape:
        count *= int(s)
    if count > MAX_ELEMENTS:
        raise ValueError(
            f"the result would have {count} elements (shape {tuple(shape)}); "
            f"at most {MAX_ELEMENTS} are allowed"
        )


def _float_array(name, value, what, finite=True):
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be {what} ({err})") from None
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer)
        or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must be {what}, got dtype {arr.dtype}")
    kind = "i" if np.issubdtype(arr.dtype, np.integer) else "f"
    if arr.size > MAX_ELEMENTS:  # e.g. a broadcast view: refuse the copy
        raise ValueError(
            f"{name} has {arr.size} elements; at most {MAX_ELEMENTS} are "
            "allowed")
    # float64 input is used as it is (not copied); integers are finite
    arr = arr.astype(np.float64, copy=False)
    if finite and kind != "i" and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be {what}, with finite values only")
    return arr


def _positions(positions, name="positions"):
    """An int n gives 0..n-1; otherwise a 1-D array of finite reals."""
    what = f"an int n >= 0 or a 1-D array-like of finite real {name}"
    if _is_int(positions):
        n = _check_int(name, positions, 0, what)
        _check_size(n)
        return np.arange(n, dtype=np.float64)
    pos = _float_array(name, positions, what)
    if pos.ndim != 1:
        raise ValueError(f"{name} must be {what}, got shape {pos.shape}")
    return pos


def _integer_array(name, value, what):
    arr = _float_array(name, value, what)
    if np.any(arr != np.round(arr)) or np.any(np.abs(arr) > 2.0**53):
        raise ValueError(f"{name} must be {what}, got non-integer values")
    return arr.astype(np.int64)


# ------------------------------------------------------ absolute sinusoids


def frequencies(d_model, *, base=10000.0):
    r"""Angular frequency of each sin/cos pair of the sinusoidal encoding.

    .. math::

        \omega_i = \mathrm{base}^{-2i/d_{\mathrm{model}}},
        \qquad i = 0, \dots, d_{\mathrm{model}}/2 - 1

    from [Vaswani2017]_, section 3.5. Pair ``i`` occupies dimensions ``2i``
    and ``2i+1`` (interleaved layout).

    Parameters
    ----------
    d_model : int
        Model dimension, a positive even integer.
    base : float, optional
        Base of the geometric progression, a finite number > 1.

    Returns
    -------
    omega : ndarray of float64, shape (d_model // 2,)
        Decreasing from ``omega[0] == 1``.

    Examples
    --------
    >>> frequencies(8)
    array([1.   , 0.1  , 0.01 , 0.001])
    """
    d_model = _check_d("d_model", d_model)
    base = _check_base(base)
    _check_size(d_model // 2)
    i = np.arange(d_model // 2, dtype=np.float64)
    return base ** (-2.0 * i / d_model)


def wavelengths(d_model, *, base=10000.0):
    r"""Wavelength, in positions, of each sin/cos pair.

    .. math::

        \lambda_i = \frac{2\pi}{\omega_i}
        = 2\pi \cdot \mathrm{base}^{2i/d_{\mathrm{model}}}

    A geometric progression from :math:`2\pi` to
    :math:`2\pi\cdot\mathrm{base}^{(d_{\mathrm{model}}-2)/d_{\mathrm{model}}}`
    ([Vaswani2017]_, section 3.5).

    Parameters
    ----------
    d_model : int
        Model dimension, a positive even integer.
    base : float, optional
        A finite number > 1.

    Returns
    -------
    wavelength : ndarray of float64, shape (d_model // 2,)

    Examples
    --------
    >>> round(float(wavelengths(512)[-1]), 1)
    60611.5
    """
    with np.errstate(over="ignore"):
        lam = 2.0 * np.pi / frequencies(d_model, base=base)
    if not np.all(np.isfinite(lam)):
        raise ValueError(
            f"base must be small enough for every wavelength to fit in "
            f"float64, got {base!r}")
    return lam


def sinusoidal_encoding(positions, d_model, *, base=10000.0,
                        layout="interleaved"):
    r"""The sinusoidal position encoding matrix of [Vaswani2017]_.

    .. math::

        P_{\mathrm{pos},\,2i} = \sin(\mathrm{pos}\,\omega_i), \qquad
        P_{\mathrm{pos},\,2i+1} = \cos(\mathrm{pos}\,\omega_i), \qquad
        \omega_i = \mathrm{base}^{-2i/d_{\mathrm{model}}}

    Parameters
    ----------
    positions : int or array_like of real, shape (n,)
        An int ``n`` means positions ``0, 1, ..., n-1``; otherwise the
        positions themselves (integers or reals).
    d_model : int
        Model dimension, a positive even integer.
    base : float, optional
        A finite number > 1.
    layout : {"interleaved", "concat"}, optional
        ``"interleaved"`` puts pair ``i`` in columns ``2i`` (sin) and
        ``2i+1`` (cos), as in the paper. ``"concat"`` puts all sines first
        and all cosines after them: column ``i`` is ``sin(pos*omega_i)``
        and column ``d_model/2 + i`` is ``cos(pos*omega_i)``: the layout
        of tensor2tensor, fairseq and Marian. (tensor2tensor and fairseq
        also space their frequencies a little differently,
        :math:`\omega_i = \mathrm{base}^{-i/(d_{\mathrm{model}}/2 - 1)}`,
        which is this function with ``base`` raised to the power
        ``d_model / (d_model - 2)``.)

    Returns
    -------
    P : ndarray of float64, shape (n, d_model)
        Row ``t`` is :math:`PE(\mathrm{pos})` for ``pos = positions[t]``;
        every entry lies in [-1, 1].

    Examples
    --------
    >>> sinusoidal_encoding(2, 4).round(4)
    array([[0.    , 1.    , 0.    , 1.    ],
           [0.8415, 0.5403, 0.01  , 1.    ]])
    >>> sinusoidal_encoding([1], 4, layout="concat").round(4)
    array([[0.8415, 0.01  , 0.5403, 1.    ]])
    """
    if not isinstance(layout, str) or layout not in _LAYOUTS:
        raise ValueError(f"layout must be one of {_LAYOUTS}, got {layout!r}")
    d_model = _check_d("d_model", d_model)
    pos = _positions(positions)
    _check_size(pos.size, d_model)  # before allocating anything
    omega = frequencies(d_model, base=base)
    angle = pos[:, None] * omega[None, :]
    P = np.empty((pos.size, d_model))
    half = d_model // 2
    sin_cols, cos_cols = ((slice(0, None, 2), slice(1, None, 2))
                          if layout == "interleaved"
                          else (slice(0, half), slice(half, None)))
    np.sin(angle, out=P[:, sin_cols])  # straight into P, no temporaries
    np.cos(angle, out=P[:, cos_cols])
    return P


@_renamed_parameter("k", "delta", 0)
def relative_shift_matrix(delta, d_model, *, base=10000.0):
    r"""The linear map that moves an interleaved encoding by ``delta`` positions.

    By the angle-addition formulas, each sin/cos pair of the encoding
    rotates:

    .. math::

        \begin{pmatrix} \sin((\mathrm{pos}+\Delta)\,\omega_i) \\
                        \cos((\mathrm{pos}+\Delta)\,\omega_i) \end{pmatrix}
        = \begin{pmatrix} \cos \Delta\omega_i & \sin \Delta\omega_i \\
                          -\sin \Delta\omega_i & \cos \Delta\omega_i
          \end{pmatrix}
          \begin{pmatrix} \sin(\mathrm{pos}\,\omega_i) \\
                          \cos(\mathrm{pos}\,\omega_i) \end{pmatrix}

    so :math:`PE(\mathrm{pos}+\Delta) = M_\Delta\,PE(\mathrm{pos})` with
    :math:`M_\Delta` block-diagonal and independent of :math:`\mathrm{pos}`
    ([Vaswani2017]_, section 3.5; the paper writes the shift :math:`k`).

    Parameters
    ----------
    delta : float
        The shift :math:`\Delta`, any finite real (negative and fractional
        allowed). The old keyword ``k=`` still works but is deprecated: it
        raises a ``DeprecationWarning``.
    d_model : int
        Model dimension, a positive even integer.
    base : float, optional
        A finite number > 1.

    Returns
    -------
    M : ndarray of float64, shape (d_model, d_model)
        Orthogonal and block-diagonal with 2x2 blocks.

    Examples
    --------
    >>> M = relative_shift_matrix(delta=3, d_model=8)
    >>> bool(np.allclose(M @ sinusoidal_encoding([5], 8)[0],
    ...                  sinusoidal_encoding([8], 8)[0]))
    True
    """
    delta = _check_real("delta", delta, what="a finite real number")
    omega = frequencies(d_model, base=base)
    _check_size(d_model, d_model)
    cos, sin = np.cos(delta * omega), np.sin(delta * omega)
    M = np.zeros((d_model, d_model))
    idx = np.arange(0, d_model, 2)
    M[idx, idx] = cos
    M[idx, idx + 1] = sin
    M[idx + 1, idx] = -sin
    M[idx + 1, idx + 1] = cos
    return M


def binary_encoding(positions, n_bits):
    r"""The low ``n_bits`` bits of each position, least significant bit first.

    .. math::

        \mathrm{bit}_j(\mathrm{pos}) = \lfloor \mathrm{pos} / 2^j \rfloor \bmod 2
        = (\mathrm{pos} \gg j) \mathbin{\&} 1,
        \qquad j = 0, \dots, n_{\mathrm{bits}} - 1

    Like a counter with ``n_bits`` binary digits, the encoding rolls over:
    bits ``n_bits`` and above are dropped, so ``pos`` and
    ``pos + 2**n_bits`` have the same row. Bit ``j`` repeats every
    :math:`2^{j+1}` positions, and the whole row every
    :math:`2^{n_{\mathrm{bits}}}`. Column 0 flips at every step, like pair 0
    of the sinusoidal encoding, its fastest wave.

    Parameters
    ----------
    positions : int or array_like of int, shape (n,)
        An int ``n`` means ``0, ..., n-1``; otherwise non-negative integers,
        at most ``2**53`` (the integers that float64 holds exactly).
        Positions of ``2**n_bits`` and more roll over.
    n_bits : int
        Number of bits, 1 to 63.

    Returns
    -------
    B : ndarray of int64, shape (n, n_bits)
        Entries 0 or 1; row ``k`` holds the bits of ``positions[k] mod
        2**n_bits``.

    Examples
    --------
    >>> binary_encoding([5, 6], 3)
    array([[1, 0, 1],
           [0, 1, 1]])

    A 3-bit counter rolls over after 7 = 111: 8 reads 000 and 13 reads 101,
    like 5.

    >>> binary_encoding([7, 8, 13], 3)
    array([[1, 1, 1],
           [0, 0, 0],
           [1, 0, 1]])
    """
    n_bits = _check_int("n_bits", n_bits, 1, "an integer from 1 to 63")
    if n_bits > 63:
        raise ValueError(f"n_bits must be an integer from 1 to 63, got {n_bits}")
    what = "an int n >= 0 or a 1-D array-like of non-negative integers"
    if _is_int(positions):
        n = _check_int("positions", positions, 0, what)
        _check_size(n, n_bits)
        pos = np.arange(n, dtype=np.int64)
    else:
        pos = _integer_array("positions", positions, what)
        if pos.ndim != 1 or np.any(pos < 0):
            raise ValueError(f"positions must be {what}")
        _check_size(pos.size, n_bits)
    # (pos >> j) & 1 keeps bit j: the bits above n_bits - 1 roll over
    return (pos[:, None] >> np.arange(n_bits, dtype=np.int64)) & 1


# -------------------------------------------------------------- attention


def self_attention(x, w_q, w_k, w_v, *, bias=None, causal=False):
    r"""Single-head scaled dot-product self-attention ([Vaswani2017]_).

    .. math::

        S = \frac{(X W_Q)(X W_K)^\top}{\sqrt{d_k}} + B, \qquad
        A = \mathrm{softmax}_{\text{rows}}(S), \qquad
        \text{output} = A\,(X W_V)

    With ``causal=True``, the scores of keys at positions :math:`\ell`
    after the query's position :math:`m` (:math:`\ell > m`) are set to
    :math:`-\infty` before the softmax: the bias :math:`B^{\mathrm{causal}}`.

    Parameters
    ----------
    x : array_like, shape (n, d_model)
        One row per token.
    w_q, w_k : array_like, shape (d_model, d_k)
        Query and key projections.
    w_v : array_like, shape (d_model, d_v)
        Value projection.
    bias : array_like, shape (n, n), optional
        Added to the scores, e.g. from :func:`alibi_bias`; ``-inf`` entries
        mask a key, NaN is not allowed.
    causal : bool, optional
        Mask future keys.

    Returns
    -------
    output : ndarray of float64, shape (n, d_v)
    weights : ndarray of float64, shape (n, n)
        Each row sums to 1.

    Examples
    --------
    >>> x = np.eye(3)
    >>> out, A = self_attention(x, x, x, x, causal=True)
    >>> A[0].tolist()
    [1.0, 0.0, 0.0]
    >>> bool(np.allclose(A.sum(axis=1), 1))
    True
    """
    x = _float_array("x", x, "a 2-D array (n, d_model) of finite reals")
    if x.ndim != 2:
        raise ValueError(f"x must be a 2-D array (n, d_model), got shape {x.shape}")
    n, d_model = x.shape
    mats = {}
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        w = _float_array(name, w, f"a 2-D array ({d_model}, d) of finite reals")
        if w.ndim != 2 or w.shape[0] != d_model:
            raise ValueError(
                f"{name} must have shape ({d_model}, d) to match x, "
                f"got {w.shape}"
            )
        mats[name] = w
    if mats["w_q"].shape[1] != mats["w_k"].shape[1]:
        raise ValueError(
            "w_q and w_k must have the same number of columns d_k, got "
            f"{mats['w_q'].shape[1]} and {mats['w_k'].shape[1]}"
        )
    if mats["w_q"].shape[1] == 0:
        raise ValueError("w_q and w_k must have at least one column")
    if isinstance(causal, np.ndarray) or causal not in (True, False):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    _check_size(n, n)
    _check_size(n, max(mats["w_q"].shape[1], mats["w_v"].shape[1]))
    if bias is not None:
        what = f"an ({n}, {n}) array of reals or -inf"
        try:  # like _float_array, but -inf is allowed
            b = None if isinstance(bias, (str, bytes)) else np.asarray(bias)
        except (TypeError, ValueError):
            b = None
        if b is None or b.dtype == bool or not (
                np.issubdtype(b.dtype, np.integer)
                or np.issubdtype(b.dtype, np.floating)):
            got = repr(bias) if b is None else f"dtype {b.dtype}"
            raise ValueError(f"bias must be {what}, got {got}")
        b = b.astype(np.float64, copy=False)
        if b.shape != (n, n) or not (np.isfinite(b) | (b == -np.inf)).all():
            raise ValueError(
                f"bias must be {what}, got shape {b.shape}"
                + (" with NaN or +inf" if b.shape == (n, n) else ""))
    with np.errstate(over="ignore", invalid="ignore"):
        q, k, v = x @ mats["w_q"], x @ mats["w_k"], x @ mats["w_v"]
        scores = q @ k.T
        scores /= np.sqrt(q.shape[1])
    if not (np.isfinite(scores).all() and np.isfinite(v).all()):
        raise ValueError(
            "x, w_q, w_k or w_v is too large: the scores or the values "
            "overflow float64")
    # From here on, scores is ours: work in place (no (n, n) temporaries).
    if bias is not None:
        with np.errstate(over="ignore"):
            scores += b
        if (scores == np.inf).any():
            raise ValueError("bias is too large: scores + bias overflow float64")
    if causal:
        for i in range(n - 1):  # keys j > i of query i
            scores[i, i + 1:] = -np.inf
    top = scores.max(axis=1, keepdims=True) if n else scores
    if n and np.isneginf(top).any():
        raise ValueError(
            "bias must leave every query at least one key that is not -inf"
        )
    scores -= top
    weights = np.exp(scores, out=scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v, weights


# ------------------------------------------------------------------- RoPE


def apply_rope(x, positions, *, base=10000.0, layout="interleaved",
               frequencies=None):
    r"""Rotary position embedding: rotate each pair of dimensions.

    Each pair :math:`(x_1, x_2)` of a query or key at position
    :math:`\mathrm{pos}` is rotated by the angle :math:`\mathrm{pos}\,\omega_i`
    ([Su2021]_, eq. 34, where the frequencies are written :math:`\theta_i`):

    .. math::

        x_1' = x_1 \cos(\mathrm{pos}\,\omega_i)
             - x_2 \sin(\mathrm{pos}\,\omega_i), \qquad
        x_2' = x_2 \cos(\mathrm{pos}\,\omega_i)
             + x_1 \sin(\mathrm{pos}\,\omega_i),

    with :math:`\omega_i = b^{-2i/d}` (:math:`b` = ``base``), so that
    :math:`\langle R_m \mathbf q, R_\ell \mathbf k\rangle` depends on the
    positions only through :math:`r = \ell - m`.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        Queries or keys; ``d`` even. Leading axes (batch, heads) are kept.
    positions : int or array_like of real, shape (n,)
        An int ``n`` means ``0, ..., n-1``; otherwise one position per row.
    base : float, optional
        A finite number > 1; ignored when ``frequencies`` is given.
    layout : {"interleaved", "half"}, optional
        ``"interleaved"`` rotates pairs ``(2i, 2i+1)`` (RoFormer, GPT-J);
        ``"half"`` rotates pairs ``(i, i + d/2)`` (GPT-NeoX, and LLaMA in
        Hugging Face transformers).
    frequencies : array_like, shape (d // 2,), optional
        The angles per position :math:`\omega_i`, e.g. from
        :func:`rope_frequencies`; finite and non-negative.

    Returns
    -------
    ndarray of float64, same shape as ``x``

    Examples
    --------
    >>> apply_rope([[1.0, 0.0]], [np.pi / 2]).round(12)
    array([[0., 1.]])
    >>> apply_rope([[1.0, 0.0, 0.0, 0.0]], [1], layout="half").round(4)
    array([[0.5403, 0.    , 0.8415, 0.    ]])
    """
    what = "an array (..., n, d) of finite reals"
    # float64 x is used as it is (no copy); its finiteness is checked on the
    # result (a non-finite x makes it non-finite), so the happy path reads
    # x once; every error is still the one the checks in order would give
    x = _float_array("x", x, what, finite=False)
    try:
        pos, theta = _rope_arguments(x, positions, base, layout, frequencies)
    except ValueError:
        _float_array("x", x, what)  # a non-finite x is the first error
        raise
    with np.errstate(over="ignore"):
        angle = pos[:, None] * theta[None, :]
        # theta >= 0, so max|pos| * max(theta) is itself an entry of angle:
        # every angle is finite iff that one is (no pass over the table)
        largest = np.abs(pos).max() * theta.max() if angle.size else 0.0
    if not np.isfinite(largest):
        _float_array("x", x, what)
        raise ValueError(
            "positions times frequencies overflow float64: a position or "
            "a frequency is too large")
    out = np.empty(x.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        if layout == "interleaved":
            finite = _rotate_pairs(x, angle, out)
        else:
            finite = _rotate_halves(x, angle, out)
    if not finite:
        _float_array("x", x, what)
        raise ValueError("x is too large: its rotation overflows float64")
    return out


def _rope_arguments(x, positions, base, layout, frequencies):
    """apply_rope's checks of the shape, layout, positions and frequencies."""
    if x.ndim < 2 or x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(
            "x must be an array (..., n, d) with an even last axis d > 0, "
            f"got shape {x.shape}"
        )
    if not isinstance(layout, str) or layout not in _ROPE_LAYOUTS:
        raise ValueError(
            f"layout must be one of {_ROPE_LAYOUTS}, got {layout!r}"
        )
    d = x.shape[-1]
    pos = _positions(positions)
    if pos.size != x.shape[-2]:
        raise ValueError(
            f"positions must give one position per row of x (x.shape[-2] = "
            f"{x.shape[-2]}), got {pos.size}"
        )
    if frequencies is None:
        return pos, rope_frequencies(d, base=base)
    theta = _float_array(
        "frequencies", frequencies,
        f"a 1-D array of {d // 2} finite non-negative reals")
    if theta.shape != (d // 2,) or np.any(theta < 0):
        raise ValueError(
            f"frequencies must be a 1-D array of {d // 2} finite "
            f"non-negative reals (d = {d}), got shape {theta.shape}"
        )
    return pos, theta


def _all_finite(a):
    """True if every element of ``a`` is finite (one pass, no temporary
    unless the sum overflows)."""
    # einsum's sum reads a once, without pairwise summation (the check
    # needs no accuracy): faster than a.sum() on a slice in the cache
    axes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[:a.ndim]
    return bool(np.isfinite(np.einsum(axes + "->", a))) \
        or bool(np.isfinite(a).all())


def _rotate_pairs(x, angle, out):
    """Interleaved pairs: ``x_1 + i x_2`` times ``exp(i angle)``, one
    complex product per pair, written into ``out``; True if all finite.

    One leading slice at a time, so that each slice's check reads it while
    it is still in the cache."""
    rot = np.empty(angle.shape, np.complex128)
    np.cos(angle, out=rot.real)  # straight into place: no temporaries
    np.sin(angle, out=rot.imag)
    n, d = x.shape[-2:]
    if x.size == 0:
        return True
    if x.strides[-1] != x.itemsize:
        x = np.ascontiguousarray(x)
    xs = x.reshape(-1, n, d) if x.flags.c_contiguous else None
    if xs is None:  # a strided view: rotate it whole
        xc = x.view(np.complex128)
        np.multiply(xc, rot, out=out.view(np.complex128))
        return _all_finite(out)
    xc = xs.view(np.complex128)
    of = out.reshape(-1, n, d)
    oc = of.view(np.complex128)
    finite = True
    for k in range(len(xc)):
        np.multiply(xc[k], rot, out=oc[k])
        finite = finite and _all_finite(of[k])
    return finite


def _rotate_halves(x, angle, out):
    """Pairs ``(i, i + d/2)``: x1 cos - x2 sin and x2 cos + x1 sin on the
    two contiguous halves, written straight into ``out``."""
    cos, sin = np.cos(angle), np.sin(angle)
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    o1, o2 = out[..., :h], out[..., h:]
    np.multiply(x1, cos, out=o1)
    tmp = x2 * sin
    o1 -= tmp
    np.multiply(x2, cos, out=o2)
    np.multiply(x1, sin, out=tmp)
    o2 += tmp
    return _all_finite(out)


def rope_frequencies(head_dim, *, base=10000.0, scaling=None):
    r"""RoPE angles per position, optionally rescaled for a longer context.

    Without scaling, :math:`\omega_i = b^{-2i/d}` for
    :math:`i = 0, \dots, d/2 - 1` ([Su2021]_). With
    ``scaling = {"type": ..., "factor": s, ...}``:

    ``"linear"``, Position Interpolation ([Chen2023]_):
        :math:`\omega_i' = \omega_i / s`.
    ``"ntk"``, NTK-aware scaling:
        the base becomes :math:`b\, s^{d/(d-2)}`, which
        leaves :math:`\omega_0` and divides the slowest
        :math:`\omega_{d/2-1}` by exactly :math:`s`.
    ``"dynamic"``, dynamic NTK scaling as transformers'
        ``_compute_dynamic_ntk_parameters``: NTK-aware scaling whose factor
        follows the current length :math:`n` = ``seq_len`` (at least the
        configured :math:`L` = ``max_position_embeddings``, which is also
        the default): the base becomes :math:`b\,(s n / L - (s - 1))^{d/(d-2)}`,
        unchanged for :math:`n \le L`.
    ``"yarn"``, "NTK-by-parts" of YaRN ([Peng2023]_), as in the paper's
        reference code: with the training length ``L``
        (``original_max_position_embeddings``), pair :math:`i` makes
        :math:`\rho_i = L / \lambda_i` turns over the training length; the
        correction range :math:`[\lfloor i(\beta_{\mathrm{fast}})\rfloor,
        \lceil i(\beta_{\mathrm{slow}})\rceil]`, where
        :math:`i(\rho) = d \ln(L / (2\pi \rho)) / (2 \ln b)` is the pair
        index of a pair making :math:`\rho` turns over :math:`L`, is
        clipped to :math:`[0, d-1]`; with
        :math:`\gamma_i = 1 - \mathrm{clip}((i - low)/(high - low), 0, 1)`,
        :math:`\omega_i' = (1 - \gamma_i)\,\omega_i / s + \gamma_i\,\omega_i`.
        ``truncate=False`` (gpt-oss) leaves the range unrounded. The
        attention temperature is :func:`yarn_attention_scale` (with
        ``attention_factor``, ``mscale``, ``mscale_all_dim``:
        :func:`rope_attention_factor`).
    ``"llama3"``, released with Llama 3.1 ([Llama3]_): wavelengths
        :math:`\lambda_i = 2\pi/\omega_i` shorter than ``L/high_freq_factor``
        are kept, longer than ``L/low_freq_factor`` are divided by ``s``,
        and in between, with :math:`\beta_{\mathrm{slow}}` =
        ``low_freq_factor``, :math:`\beta_{\mathrm{fast}}` =
        ``high_freq_factor`` and :math:`\rho_i = L/\lambda_i`,
        :math:`\omega_i' = (1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i`
        with :math:`\gamma_i = (\rho_i - \beta_{\mathrm{slow}})
        /(\beta_{\mathrm{fast}}-\beta_{\mathrm{slow}})`. With
        ``high_freq_factor == low_freq_factor`` (Llama 4 Scout: both 1)
        there is no ramp: wavelengths longer than ``L/low_freq_factor``
        are divided by ``s``, the others kept (transformers' formula gives
        the same, and 0/0 = NaN for a wavelength exactly equal to it).
    ``"longrope"``, LongRoPE ([Ding2024]_, Phi-3), as transformers'
        ``_compute_longrope_parameters``: a searched stretch
        :math:`\kappa_i` per pair, :math:`\omega_i' = \omega_i/\kappa_i`,
        from ``short_factor`` unless ``seq_len`` exceeds
        ``original_max_position_embeddings``, then from ``long_factor``
        (transformers switches per forward pass).
    ``"default"`` and ``"proportional"``: no rescaling; with
        ``partial_rotary_factor`` :math:`f` these are the two conventions
        of :func:`partial_rope_frequencies` (``"spread"`` and
        ``"proportional"``, Gemma 4); ``"proportional"`` also divides by
        ``factor`` (default 1), as transformers does.

    Every type takes ``partial_rotary_factor`` :math:`f` (default 1), as
    transformers does: all but ``"proportional"`` then compute the formulas
    above for a head of width :math:`r = \lfloor f d\rfloor` (the
    ``"spread"`` convention) and give 0 to the pairs beyond its
    :math:`\lceil r/2 \rceil`.

    Parameters
    ----------
    head_dim : int
        Dimension of one attention head, a positive even integer.
    base : float, optional
        A finite number > 1.
    scaling : dict, optional
        ``{"type": "linear" | "ntk", "factor": s}``,
        ``{"type": "yarn", "factor": s, "original_max_position_embeddings":
        L, "beta_fast": 32, "beta_slow": 1}`` or ``{"type": "llama3",
        "factor": s, "low_freq_factor": 1, "high_freq_factor": 4,
        "original_max_position_embeddings": L}``. ``s >= 1``; keys with a
        value shown are optional. ``"rope_type"`` may be used for
        ``"type"``, as in Hugging Face configs. Also ``{"type": "default"}``,
        ``{"type": "proportional", "factor": 1}``, ``{"type": "dynamic",
        "factor": s, "max_position_embeddings": L, "seq_len": n}`` (``n``
        optional), ``{"type": "longrope", "short_factor": [...],
        "long_factor": [...], "original_max_position_embeddings": L,
        "seq_len": n}`` (one positive stretch per rotated pair; ``n``,
        ``factor``, ``max_position_embeddings`` and ``attention_factor``
        optional, the last three for :func:`rope_attention_factor`); yarn
        also takes ``truncate`` (a bool, default True), ``attention_factor``,
        ``mscale`` and ``mscale_all_dim``; every type takes
        ``partial_rotary_factor`` in [0, 1].

    Returns
    -------
    omega : ndarray of float64, shape (head_dim // 2,)
        The frequencies :math:`\omega_i` (or :math:`\omega_i'`), in radians
        per position; 0 for pairs that a partial factor leaves unrotated.

    Examples
    --------
    >>> rope_frequencies(4)
    array([1.  , 0.01])
    >>> rope_frequencies(4, scaling={"type": "linear", "factor": 2})
    array([0.5  , 0.005])
    >>> rope_frequencies(4, scaling={"type": "ntk", "factor": 2})
    array([1.   , 0.005])
    >>> rope_frequencies(8, scaling={"type": "default",
    ...                              "partial_rotary_factor": 0.5})
    array([1.  , 0.01, 0.  , 0.  ])
    """
    head_dim = _check_d("head_dim", head_dim)
    base = _check_base(base)
    _check_size(head_dim // 2)
    if scaling is None:
        i = np.arange(head_dim // 2, dtype=np.float64)
        return base ** (-2.0 * i / head_dim)
    kind, p = _scaling_params(scaling)
    f = p["partial_rotary_factor"]
    if kind == "proportional":
        return partial_rope_frequencies(
            head_dim, f, base=base, convention="proportional") / p["factor"]
    dim = int(head_dim * f)  # the rotated width r, as transformers
    omega = np.zeros(head_dim // 2)
    if dim == 0:
        return omega
    # 2i, over the rotated width: ceil(r/2) pairs, as transformers
    i = np.arange(0, dim, 2, dtype=np.float64) / 2.0
    theta = base ** (-2.0 * i / dim)
    if kind in ("ntk", "dynamic") and dim < 4:
        raise ValueError(
            f"head_dim must be at least 4 for NTK scaling, got {head_dim}"
            if dim == head_dim else
            "scaling['partial_rotary_factor'] must leave at least 4 rotated "
            f"dimensions for {kind} NTK scaling, got {dim}")
    if kind == "yarn" and dim % 2:
        raise ValueError(
            "scaling['partial_rotary_factor'] times head_dim must give an "
            f"even rotated width for YaRN, got {dim}")
    omega[:theta.size] = _scaled(kind, p, theta, i, dim, base)
    return omega


def _scaled(kind, p, theta, i, dim, base):
    """The frequencies ``theta`` of a head of width ``dim``, rescaled."""
    s = p.get("factor")
    if kind == "default":
        return theta
    if kind == "linear":
        return theta / s
    if kind in ("ntk", "dynamic"):
        if kind == "ntk":
            stretch = s
        else:
            L = p["max_position_embeddings"]
            n = max(p["seq_len"], L) if p["seq_len"] != _UNSET else L
            stretch = s * n / L - (s - 1.0)
        try:
            new_base = base * stretch ** (dim / (dim - 2))
        except OverflowError:
            new_base = np.inf
        if not np.isfinite(new_base):
            raise ValueError(
                "scaling['factor'] is too large for NTK scaling: the new "
                "base, base * factor**(d/(d-2)), overflows float64")
        return new_base ** (-2.0 * i / dim)
    L = p["original_max_position_embeddings"]
    if kind == "longrope":
        seq = p["seq_len"]
        key = "long_factor" if seq != _UNSET and seq > L else "short_factor"
        stretch = p[key]
        if stretch.shape != theta.shape:
            raise ValueError(
                f"scaling[{key!r}] must have one entry per rotated pair "
                f"({theta.size}), got shape {stretch.shape}")
        return theta / stretch
    if kind == "yarn":
        def correction_dim(rotations):
            return (dim * np.log(L / (rotations * 2 * np.pi))
                    / (2 * np.log(base)))

        low, high = correction_dim(p["beta_fast"]), correction_dim(
            p["beta_slow"])
        if p["truncate"]:
            low, high = np.floor(low), np.ceil(high)
        low, high = max(low, 0.0), min(high, dim - 1.0)
        if low == high:
            high += 0.001  # as in the reference code: avoid 0/0
        ramp = np.clip((i - low) / (high - low), 0.0, 1.0)
        keep = 1.0 - ramp
        return theta / s * (1.0 - keep) + theta * keep
    low_f, high_f = p["low_freq_factor"], p["high_freq_factor"]
    wavelen = 2 * np.pi / theta
    out = np.where(wavelen > L / low_f, theta / s, theta)
    if high_f == low_f:  # Llama 4: a step at L / low_f, no ramp
        return out
    mu = (L / wavelen - low_f) / (high_f - low_f)
    smooth = (1 - mu) * out / s + mu * out
    medium = (wavelen >= L / high_f) & (wavelen <= L / low_f)
    return np.where(medium, smooth, out)


def _scaling_params(scaling):
    kinds = tuple(_SCALING_KEYS)
    if not isinstance(scaling, dict):
        raise ValueError(
            f"scaling must be None or a dict with a 'type' in {kinds}, "
            f"got {scaling!r}"
        )
    scaling = dict(scaling)
    if "rope_type" in scaling and "type" not in scaling:
        scaling["type"] = scaling.pop("rope_type")
    kind = scaling.pop("type", None)
    if not isinstance(kind, str) or kind not in _SCALING_KEYS:
        raise ValueError(
            f"scaling type must be one of {kinds}, got {kind!r}"
        )
    allowed = _SCALING_KEYS[kind]
    unknown = sorted(set(scaling) - set(allowed), key=str)
    if unknown:
        raise ValueError(
            f"scaling of type {kind!r} takes the keys {sorted(allowed)}, "
            f"got unknown key(s) {unknown}"
        )
    p = {}
    for key, default in allowed.items():
        if key not in scaling:
            if default is None:
                raise ValueError(
                    f"scaling of type {kind!r} needs the key {key!r}"
                )
            p[key] = default
            continue
        p[key] = _scaling_value(key, scaling[key])
    if p.get("factor", 1.0) != _UNSET and p.get("factor", 1.0) < 1:
        raise ValueError(
            f"scaling['factor'] must be >= 1, got {p['factor']!r}"
        )
    if kind == "llama3" and not p["high_freq_factor"] >= p["low_freq_factor"]:
        raise ValueError(
            "scaling['high_freq_factor'] must be at least "
            f"scaling['low_freq_factor'], got {p['high_freq_factor']} and "
            f"{p['low_freq_factor']}"
        )
    if kind == "yarn" and not p["beta_fast"] > p["beta_slow"]:
        raise ValueError(
            "scaling['beta_fast'] must be greater than scaling['beta_slow'], "
            f"got {p['beta_fast']} and {p['beta_slow']}"
        )
    return kind, p


def _scaling_value(key, value):
    """One checked value of a scaling dict."""
    name = f"scaling[{key!r}]"
    if key == "truncate":
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        return bool(value)
    if key in ("short_factor", "long_factor"):
        what = "a 1-D array-like of finite reals > 0 (one per rotated pair)"
        arr = _float_array(name, value, what)
        if arr.ndim != 1 or np.any(arr <= 0):
            raise ValueError(f"{name} must be {what}, got {value!r}")
        return arr
    if key == "partial_rotary_factor":
        f = _check_real(name, value, low=0.0, low_open=False,
                        what="a finite number in [0, 1]")
        if f > 1:
            raise ValueError(f"{name} must be a finite number in [0, 1], "
                             f"got {value!r}")
        return f
    if key in ("mscale", "mscale_all_dim"):
        return _check_real(name, value, low=0.0, low_open=False,
                           what="a finite number >= 0")
    return _check_real(name, value, low=0.0, what="a finite number > 0")


def yarn_attention_scale(factor):
    r"""YaRN's attention temperature factor for a context-extension factor.

    .. math::

        \sqrt{1/t} = 0.1 \ln s + 1

    ([Peng2023]_, eq. 22). Queries and keys are both multiplied by it,
    so the logits grow by its square; 1 when ``s == 1``.

    Parameters
    ----------
    factor : float
        The scale factor ``s >= 1``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(yarn_attention_scale(16), 4)
    1.2773
    """
    s = _check_real("factor", factor, low=1.0, low_open=False,
                    what="a finite number >= 1")
    return float(0.1 * np.log(s) + 1.0)


# ------------------------------------------- chapter 10: today's models

_PARTIAL_CONVENTIONS = ("spread", "proportional")


def partial_rope_frequencies(head_dim, fraction, *, base=10000.0,
                             convention="spread"):
    r"""Angular frequencies of a head that rotates only a fraction of its pairs.

    Two conventions share the name "partial rotation" (and, in
    transformers, the config key ``partial_rotary_factor``) and differ in
    *which* frequencies the rotated pairs get. With :math:`f` =
    ``fraction``, :math:`d` = ``head_dim`` and :math:`b` = ``base``:

    ``"spread"`` (GPT-NeoX's ``rotary_pct``, GPT-J's ``rotary_dim``,
        transformers' ``partial_rotary_factor`` with every ``rope_type``
        except ``"proportional"``): the first :math:`r = \lfloor f d
        \rfloor` dimensions rotate, as a head of width :math:`r` would, so
        the whole spectrum from :math:`1` down to about :math:`b^{-1}` is
        spread over the rotated slice:

        .. math::

            \omega_i = b^{-2i/r}, \quad 0 \le i < \lceil r/2 \rceil;
            \qquad \omega_i = 0 \text{ beyond.}

    ``"proportional"`` (p-RoPE of [Barbero2024]_, shipped by Gemma 4 as
        ``rope_type: "proportional"`` with ``partial_rotary_factor``): the
        pairs keep the frequencies of the full head, the
        :math:`k = \lfloor f d / 2 \rfloor` fastest rotate and the slowest
        are dropped (frequency 0):

        .. math::

            \omega_i = b^{-2i/d}, \quad 0 \le i < k; \qquad
            \omega_i = 0 \text{ beyond.}

    The counts are transformers' (``int(head_dim * partial_rotary_factor)``
    in ``_compute_default_rope_parameters`` and the other ``_compute_*``
    functions of ``modeling_rope_utils.py``; ``int(partial_rotary_factor *
    head_dim // 2)`` in ``_compute_proportional_rope_parameters``). An odd
    :math:`r` gives :math:`\lceil r/2 \rceil` pairs with exponents
    :math:`2i/r`, as there.

    Which dimensions the pairs are. Entry :math:`i` of the result is the
    frequency of pair :math:`i`; where that pair sits in the head depends on
    the library:

    * transformers' partial rotation (GPT-NeoX, Phi, StableLM, ...)
      rotates the slice ``x[..., :2 * ceil(r/2)]`` in the "half" layout
      *of that slice*, pairs :math:`(i, i + r/2)`, and passes the rest
      through: ``apply_rope(x[..., :r], n, layout="half",
      frequencies=omega[:r // 2])`` beside ``x[..., r:]`` (even :math:`r`);
    * GPT-J's ``rotary_dim`` rotates interleaved pairs :math:`(2i, 2i+1)`
      of the first ``rotary_dim`` dimensions: ``apply_rope(x, n,
      frequencies=omega)`` on the whole head; transformers' GLM does the
      same (``repeat_interleave`` of the first half of cos and sin in
      ``modeling_glm.apply_rotary_pos_emb``, then the slice ``x[..., :r]``);
    * Gemma 4's proportional RoPE rotates the whole head in the "half"
      layout, pairs :math:`(i, i + d/2)`, with zeros for the dropped
      pairs: ``apply_rope(x, n, layout="half", frequencies=omega)``.

    With ``fraction = 1`` both conventions are :func:`rope_frequencies`.

    Parameters
    ----------
    head_dim : int
        Width :math:`d` of one head, a positive even integer.
    fraction : float
        The rotated fraction :math:`f`, in [0, 1].
    base : float, optional
        A finite number > 1.
    convention : {"spread", "proportional"}, optional

    Returns
    -------
    omega : ndarray of float64, shape (head_dim // 2,)
        One frequency per pair, in radians per position; 0 for pairs that do
        not rotate.

    See Also
    --------
    rope_frequencies : the same with ``scaling={"type": "default",
        "partial_rotary_factor": f}`` or ``{"type": "proportional", ...}``.

    Examples
    --------
    >>> partial_rope_frequencies(8, 0.5)
    array([1.  , 0.01, 0.  , 0.  ])
    >>> partial_rope_frequencies(8, 0.5, convention="proportional")
    array([1. , 0.1, 0. , 0. ])
    """
    head_dim = _check_d("head_dim", head_dim)
    f = _check_real("fraction", fraction, low=0.0, low_open=False,
                    what="a finite number in [0, 1]")
    if f > 1.0:
        raise ValueError(f"fraction must be a finite number in [0, 1], "
                         f"got {fraction!r}")
    base = _check_base(base)
    if not isinstance(convention, str) or (
            convention not in _PARTIAL_CONVENTIONS):
        raise ValueError(f"convention must be one of {_PARTIAL_CONVENTIONS}, "
                         f"got {convention!r}")
    _check_size(head_dim // 2)
    omega = np.zeros(head_dim // 2)
    if convention == "spread":
        r = int(head_dim * f)
        i = np.arange(0, r, 2, dtype=np.float64)  # 2i, as transformers
        omega[:i.size] = base ** (-i / r) if r else 0.0
    else:
        k = int(f * head_dim // 2)
        omega[:k] = base ** (-np.arange(0, 2 * k, 2, dtype=np.float64)
                             / head_dim)
    return omega


def nope_attention_temperature(positions, *, floor_scale=8192.0,
                               attn_scale=0.1):
    r"""Llama 4's query scale in its layers without position (NoPE).

    Llama 4 rotates no pair in every fourth layer; there, to keep attention
    from flattening as the context grows, each query is multiplied by a
    factor that grows like the logarithm of its position, in steps of
    ``floor_scale`` tokens ("attention temperature tuning"):

    .. math::

        \tau(\mathrm{pos}) = 1 + a \ln\bigl(1 + \lfloor
            (\mathrm{pos} + 1) / F \rfloor\bigr),

    with :math:`a` = ``attn_scale`` and :math:`F` = ``floor_scale``,
    exactly as ``Llama4TextAttention.forward`` in transformers computes it
    (``torch.log1p(torch.floor((positions + 1.0) / floor_scale)) *
    attn_scale + 1.0``, from meta-llama/llama-models), applied to the
    queries only (not the keys), after the optional L2 norm, and only in
    layers whose ``no_rope_layers`` entry is 0 when
    ``attn_temperature_tuning`` is on. The score of query :math:`m` is thus
    multiplied by :math:`\tau(m)`: a softmax with inverse temperature
    growing like :math:`\ln m`, the idea of scalable softmax
    ([Nakanishi2025]_, which transformers cites there). transformers counts
    positions in float32, so beyond :math:`2^{24}` its floor can differ
    from this float64 one by a step.

    Parameters
    ----------
    positions : int or array_like of real, shape (n,)
        An int ``n`` means ``0, ..., n-1``; otherwise the positions of the
        queries, each >= 0 (counted from 0, cache included).
    floor_scale : float, optional
        :math:`F > 0`, in tokens (Llama 4: 8192).
    attn_scale : float, optional
        :math:`a \ge 0` (Llama 4: 0.1).

    Returns
    -------
    tau : ndarray of float64, shape (n,)
        1 for the first ``F - 1`` positions, then growing step by step.

    Examples
    --------
    >>> nope_attention_temperature([0, 8190, 8191, 3 * 8192 - 1]).round(4)
    array([1.    , 1.    , 1.0693, 1.1386])
    """
    pos = _positions(positions)
    if np.any(pos < 0):
        raise ValueError("positions must be >= 0 (an int n >= 0 or a 1-D "
                         "array-like of finite real positions >= 0)")
    F = _check_real("floor_scale", floor_scale, low=0.0,
                    what="a finite number > 0")
    a = _check_real("attn_scale", attn_scale, low=0.0, low_open=False,
                    what="a finite number >= 0")
    with np.errstate(over="ignore"):
        steps = np.floor((pos + 1.0) / F)
        if not np.isfinite(steps).all():
            raise ValueError("positions / floor_scale overflows float64: "
                             "floor_scale is too small for these positions")
        tau = 1.0 + a * np.log1p(steps)
    if not np.isfinite(tau).all():
        raise ValueError("attn_scale is too large: the temperature "
                         "overflows float64")
    return tau


def rope_attention_factor(scaling):
    r"""The factor on cos and sin that a RoPE scaling brings with it.

    transformers' RoPE initialisation functions return the inverse
    frequencies (:func:`rope_frequencies`) and this factor, by which the
    rotary module multiplies cos and sin, so that every score between
    rotated queries and keys grows by its square. With :math:`s` =
    ``factor`` and :math:`m(s, c) = 1 + 0.1\,c \ln s` (1 for
    :math:`s \le 1`):

    ``"yarn"`` ([Peng2023]_, eq. 22; ``_compute_yarn_parameters``):
        ``attention_factor`` if given; else
        :math:`m(s, c_1)/m(s, c_2)` if ``mscale`` :math:`c_1` and
        ``mscale_all_dim`` :math:`c_2` are both given and non-zero
        (DeepSeek-V2/V3, whose ``mscale = mscale_all_dim = 1`` make it 1:
        DeepSeek's attention multiplies its softmax scale by
        :math:`m(s, c_2)^2` instead); else :math:`m(s, 1)`, which is
        :func:`yarn_attention_scale`.
    ``"longrope"`` ([Ding2024]_; ``_compute_longrope_parameters``):
        ``attention_factor`` if given; else, with :math:`s` = ``factor`` or
        (unset) ``max_position_embeddings / original_max_position_embeddings``
        and :math:`L` = ``original_max_position_embeddings``,
        :math:`\sqrt{1 + \ln s / \ln L}` (1 for :math:`s \le 1`).
    every other type: 1.

    Parameters
    ----------
    scaling : dict or None
        As for :func:`rope_frequencies`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(rope_attention_factor({"type": "yarn", "factor": 32,
    ...     "original_max_position_embeddings": 4096}), 6)
    1.346574
    >>> rope_attention_factor({"type": "yarn", "factor": 40, "mscale": 1,
    ...     "mscale_all_dim": 1, "original_max_position_embeddings": 4096})
    1.0
    >>> round(rope_attention_factor({"type": "longrope", "factor": 32,
    ...     "short_factor": [1], "long_factor": [1],
    ...     "original_max_position_embeddings": 4096}), 6)
    1.190238
    """
    if scaling is None:
        return 1.0
    kind, p = _scaling_params(scaling)

    def m(s, c=1.0):
        return 1.0 if s <= 1 else 0.1 * c * float(np.log(s)) + 1.0

    if kind not in ("yarn", "longrope"):
        return 1.0
    if p["attention_factor"] != _UNSET:
        return float(p["attention_factor"])
    L = p["original_max_position_embeddings"]
    if kind == "yarn":
        c1, c2 = p["mscale"], p["mscale_all_dim"]
        if c1 != _UNSET and c2 != _UNSET and c1 and c2:
            with np.errstate(over="ignore", invalid="ignore"):
                out = float(np.float64(m(p["factor"], c1))
                            / m(p["factor"], c2))
            if not np.isfinite(out):
                raise ValueError(
                    "scaling['mscale'] or scaling['mscale_all_dim'] is too "
                    "large: the attention factor overflows float64")
            return out
        return m(p["factor"])
    s = p["factor"]
    if s == _UNSET:
        if p["max_position_embeddings"] == _UNSET:
            raise ValueError(
                "scaling of type 'longrope' needs 'factor' or "
                "'max_position_embeddings' for its attention factor")
        s = p["max_position_embeddings"] / L
    if s <= 1:
        return 1.0
    if L <= 1:
        raise ValueError(
            "scaling['original_max_position_embeddings'] must be > 1 for "
            "LongRoPE's attention factor (it divides by its logarithm), "
            f"got {L!r}")
    return float(np.sqrt(1.0 + np.log(s) / np.log(L)))


def _first_negative_distance(theta, start, stop):
    """First integer distance m in [start, stop) with sum_i cos(m theta_i)
    < 0, or None; in growing blocks, so an early one costs little."""
    m0, size = start, 64
    while m0 < stop:
        m = np.arange(m0, min(m0 + size, stop), dtype=np.float64)
        neg = np.flatnonzero(np.cos(m[:, None] * theta).sum(axis=1) < 0)
        if neg.size:
            return m0 + int(neg[0])
        m0 += size
        size = min(2 * size, max(1, 2**22 // theta.size))
    return None


def _check_bound_args(head_dim):
    head_dim = _check_d("head_dim", head_dim)
    _check_size(head_dim // 2, 64)
    return head_dim


def rope_supported_length(base, head_dim, *, max_length=2**24):
    r"""The context length that a RoPE base supports, after Men et al.

    [Men2024]_ ask that a query still attends more to a key similar to it
    than to a random key at every distance of the context; for queries and
    keys with independent entries this is, up to a positive factor, the
    sign of

    .. math::

        B_{m} = \sum_{i=0}^{d/2-1} \cos(m\,\omega_i), \qquad
        \omega_i = b^{-2i/d}

    (their eq. 9, :math:`B_{m,\theta}`; the same sum is Su's criterion in
    [Su2024base]_). The supported length is the number of tokens
    :math:`L_b` over which it never turns negative: :math:`B_m \ge 0` for
    every distance :math:`m = 0, \dots, L_b - 1` and :math:`B_{L_b} < 0`.
    The base bounds the context from above: it is not monotone in
    :math:`b` (a slightly larger base can support fewer tokens, see
    :func:`rope_base_lower_bound`).

    Parameters
    ----------
    base : float
        :math:`b > 1`.
    head_dim : int
        :math:`d`, a positive even integer (all pairs rotate).
    max_length : int, optional
        Search no further than this many tokens, in [1, 2**24].

    Returns
    -------
    int
        :math:`L_b`; ``max_length`` if :math:`B_m \ge 0` for every
        :math:`m < ` ``max_length`` (the base supports at least that much).

    Examples
    --------
    >>> rope_supported_length(10000.0, 128)
    1707
    >>> rope_supported_length(500000.0, 128)
    18438
    """
    base = _check_base(base)
    head_dim = _check_bound_args(head_dim)
    max_length = _check_int("max_length", max_length, 1,
                            "an integer in [1, 2**24]")
    if max_length > 2**24:
        raise ValueError(f"max_length must be an integer in [1, 2**24], "
                         f"got {max_length!r}")
    theta = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    first = _first_negative_distance(theta, 0, max_length)
    return max_length if first is None else first


def rope_base_lower_bound(length, head_dim):
    r"""The smallest RoPE base that supports a context length (Men et al.).

    The smallest :math:`b` whose :func:`rope_supported_length` is at least
    ``length`` :math:`L`: :math:`B_m = \sum_i \cos(m\, b^{-2i/d}) \ge 0` for
    every distance :math:`m = 0, \dots, L - 1` ([Men2024]_, their
    Table 1 and Figure 1 with :math:`d = 128`; [Su2024base]_).

    The set of bases that support :math:`L` is not an interval: just
    above the bound there are bases that fail again (for :math:`d = 128`,
    :math:`L = 4096`: the bound is 26,952, yet 29,300 supports only 3,124
    tokens, and bases up to 58,800 still fail here and there). The search
    steps up from :math:`b = 1.001` by factors of 1.001 (1.01 while the
    supported length is below :math:`L/4`, where a window of valid bases
    cannot open), checks each candidate first at the distances where its
    neighbour failed, and refines the first base that passes by bisection
    to about 1e-12 relatively; a window of valid bases narrower than 0.1 %
    could be missed.

    With :math:`d = 128` this gives, for :math:`L` = 1,024, 2,048, 4,096,
    8,192, 16,384, 32,768, 65,536 and 131,072 tokens, the bounds 4,293,
    11,587, 26,952, 83,764, 231,640, 629,980, 2.090e6 and 4.869e6. Men et
    al.'s Table 1 lists 4.3e3, 1.6e4, 2.7e4, 8.4e4, 3.1e5, 6.4e5, 2.1e6
    and 7.8e6 for the lengths 1k to 128k: equal to two significant digits
    at 1k, 4k, 8k and 64k, within 2 % at 32k, and lower here at 2k, 16k
    and 128k (bases in a narrow window that a coarser scan passes over: at
    128k a scan by factors of 1.001 all the way finds 8.23e6 instead).
    Their fit :math:`b \approx 0.0424\,L^{1.628}` summarises the same
    curve.

    Parameters
    ----------
    length : int
        :math:`L \ge 1`, in tokens (at most 2**17 = 131,072: the search
        takes about a second at 4,096 and a minute or two at 131,072).
    head_dim : int
        :math:`d`, a positive even integer; :math:`d = 2` supports at most
        2 tokens whatever the base (:math:`\cos 2 < 0`).

    Returns
    -------
    float
        The bound; 1.0 for :math:`L \le 2`, which every base > 1 supports.

    Examples
    --------
    >>> round(rope_base_lower_bound(1024, 128))
    4293
    >>> rope_supported_length(rope_base_lower_bound(1024, 128), 128) >= 1024
    True
    """
    length = _check_int("length", length, 1, "an integer in [1, 2**17]")
    if length > 2**17:
        raise ValueError(f"length must be an integer in [1, 2**17], got "
                         f"{length!r}")
    head_dim = _check_bound_args(head_dim)
    if head_dim == 2 and length > 2:
        raise ValueError(
            "length must be at most 2 for head_dim 2: the one pair turns "
            f"by 1 radian per token and cos(2) < 0, got length {length}")
    i = np.arange(0, head_dim, 2, dtype=np.float64) / head_dim

    def fails(log_b, witnesses):
        """A distance < L where B turns negative for exp(log_b), or None."""
        theta = np.exp(-log_b * i)
        for w in witnesses[-3:]:
            half = max(16, int(4e-3 * w))
            hit = _first_negative_distance(theta, max(0, w - half),
                                           min(length, w + half + 1))
            if hit is not None:
                return hit
        return _first_negative_distance(theta, 0, length)

    if length <= 2:
        return 1.0  # B_0 = d/2 and B_1 > 0 for every base > 1
    log_b, witnesses = 1e-3, []
    while True:
        hit = fails(log_b, witnesses)
        if hit is None:
            break
        witnesses.append(hit)
        log_b += 1e-2 if hit < length / 4 else 1e-3
    lo, hi = log_b - (1e-2 if len(witnesses) and witnesses[-1] < length / 4
                      else 1e-3), log_b
    lo = max(lo, 0.0) if witnesses else hi
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if _first_negative_distance(np.exp(-mid * i), 0, length) is None:
            hi = mid
        else:
            lo = mid
    return float(np.exp(hi))


# ------------------------------------------------------ relative position


def relative_positions(n, *, max_distance=None):
    r"""Matrix of relative positions ``l - m`` (key minus query), optionally clipped.

    .. math::

        R_{m\ell} = \mathrm{clip}(\ell - m, -r_{\max}, r_{\max})

    for the query at position :math:`m` (row) and the key at :math:`\ell`
    (column), with :math:`r_{\max}` = ``max_distance``, as in [Shaw2018]_
    (who write the clip distance :math:`k`), where
    :math:`R_{m\ell} + r_{\max}` indexes a table of :math:`2r_{\max}+1`
    learned vectors.

    Parameters
    ----------
    n : int
        Sequence length, >= 0.
    max_distance : int, optional
        Clipping distance :math:`r_{\max} \ge 0`; no clipping when None.

    Returns
    -------
    R : ndarray of int64, shape (n, n)

    Examples
    --------
    >>> relative_positions(4, max_distance=2)
    array([[ 0,  1,  2,  2],
           [-1,  0,  1,  2],
           [-2, -1,  0,  1],
           [-2, -2, -1,  0]])
    """
    n = _check_int("n", n, 0)
    _check_size(n, n)
    idx = np.arange(n, dtype=np.int64)
    R = idx[None, :] - idx[:, None]
    if max_distance is not None:
        k = _check_int("max_distance", max_distance, 0,
                       "None or an integer >= 0")
        R = np.clip(R, -k, k)
    return R


# The float32 numbers x >= 1 whose logarithm lies within two units in the
# last place of float64 of a midpoint between two float32 numbers, found by
# scanning all 2**30 of them: there alone, two float64 logarithms accurate
# to one unit in the last place may round to different float32 values.
# Their float32 logarithm is pinned to the one that glibc's, numpy's and
# V8's float64 logarithms round to (so posenc.js's): bits of x -> bits of
# float32(log(x)).
_T5_LOG_PINNED = {
    0x41178FEB: 0x400FE5E8, 0x464D5B2B: 0x4117BCF1, 0x4665A9A6: 0x41198725,
    0x4C5D65A5: 0x418F034A, 0x4D604EBE: 0x419A352C, 0x4E85F412: 0x41A6B811,
    0x5EE8984E: 0x422E4A21, 0x65D890D3: 0x4254D1F8, 0x66A8C860: 0x42595E46,
    0x66ABBD63: 0x4259700E, 0x6F31A8EC: 0x42845A88, 0x79E7EC37: 0x42A1FFB7,
}


def _t5_relative_positions(relative_position):
    """The checked input as int64 (no copy if it is already), min and max.

    The checks and messages of ``_integer_array``; integer arrays skip its
    float64 copy. Integers up to 2**53 + 1 in size pass, as there (it
    rounds 2**53 + 1 to 2**53, which falls in the same bucket).
    """
    name = "relative_position"
    what = "an integer or an array-like of integers"
    arr = None
    if not isinstance(relative_position, (str, bytes)):
        try:
            arr = np.asarray(relative_position)
        except (TypeError, ValueError):
            arr = None
    if arr is None or arr.dtype.kind not in "iu":
        arr = _integer_array(name, relative_position, what)
    elif arr.size > MAX_ELEMENTS:
        raise ValueError(
            f"{name} has {arr.size} elements; at most {MAX_ELEMENTS} are "
            "allowed")
    if arr.size == 0:
        return arr.astype(np.int64, copy=False), 0, 0
    lo, hi = int(arr.min()), int(arr.max())
    if max(-lo, hi) > 2**53 + 1:
        raise ValueError(f"{name} must be {what}, got non-integer values")
    return arr.astype(np.int64, copy=False), lo, hi


def _t5_log32(x):
    """float32 logarithm of float32 x >= 1: the float64 one, rounded."""
    ratio = np.log(x.astype(np.float64)).astype(np.float32)
    bits = x.view(np.uint32)  # positive floats are ordered like their bits
    low, high = int(bits.min()), int(bits.max())
    for key, value in _T5_LOG_PINNED.items():
        if low <= key <= high:
            ratio.view(np.uint32)[bits == key] = value
    return ratio


def _t5_bucket(rel, bidirectional, n, max_exact, scale):
    """The bucket of each int64 relative position, one by one."""
    if bidirectional:
        bucket = np.where(rel > 0, n, 0)
        dist = np.abs(rel)
    else:
        bucket = np.zeros(rel.shape, dtype=np.int64)
        dist = -np.minimum(rel, 0)
    x = np.maximum(dist, max_exact).astype(np.float32) / np.float32(max_exact)
    large = _t5_log32(x) / scale * np.float32(n - max_exact)
    large = np.minimum(max_exact + large.astype(np.int64), n - 1)
    return bucket + np.where(dist < max_exact, dist, large)


def t5_relative_position_bucket(relative_position, *, bidirectional=True,
                                num_buckets=32, max_distance=128):
    r"""T5's bucket of each relative position ([Raffel2020]_, section 2.1).

    ``relative_position`` is ``key_position - query_position``, the book's
    :math:`r = \ell - m`. With ``bidirectional=True`` half the buckets are
    for keys after the query. Of the remaining :math:`N` buckets
    (:math:`N = N_{\mathrm{b}}`, or :math:`N_{\mathrm{b}}/2` when
    bidirectional), the first :math:`E = \lfloor N/2 \rfloor` hold the
    distances :math:`\delta = |r| < E`, one each; larger distances share
    logarithmic buckets up to :math:`r_{\max}` = ``max_distance``, beyond
    which all fall in the last one:

    .. math::

        \mathrm{bucket}(\delta) = \min\left(N - 1,\; E + \left\lfloor
        \frac{\ln(\delta/E)}{\ln(r_{\max}/E)}\,(N - E)
        \right\rfloor\right)

    Parameters
    ----------
    relative_position : int or array_like of int
        Any shape.
    bidirectional : bool, optional
        False for causal (decoder) attention: keys after the query
        (positive values) all go to bucket 0.
    num_buckets : int, optional
        Total number of buckets; at least 4 when bidirectional, 2 otherwise.
    max_distance : int, optional
        Distance where the last bucket starts; greater than the number of
        exact buckets.

    Returns
    -------
    ndarray of int64, same shape as ``relative_position``

    Notes
    -----
    The arithmetic is float32, as in the reference code (Mesh TensorFlow,
    Hugging Face transformers): the quotient :math:`r/E`, its logarithm, the
    division and the product, then truncation. The float32 logarithm is the
    float64 one rounded to float32, as in the book's ``posenc.js``, so the
    two agree bit for bit on every input. The reference implementations
    take their platform's float32 logarithm, which can be one unit in the
    last place away from it (torch's, from Intel MKL, for a few percent of
    inputs on some processors). That moves a bucket only where the exact
    value of the formula is an integer or within a few units in the last
    place of one: ``[-60]`` with ``bidirectional=False, num_buckets=72,
    max_distance=100`` is exactly on a boundary (:math:`E = 36`,
    :math:`36 + 36 \cdot \frac{1}{2} = 54`); it gets 53 here and in
    ``posenc.js``, and 53 or 54 from transformers depending on the machine.
    Elsewhere the buckets are transformers' bit for bit;
    ``tests/test_reference.py`` checks both claims on 35,000 settings.

    Examples
    --------
    >>> t5_relative_position_bucket([-3, 0, 3, 20, 200]).tolist()
    [3, 0, 19, 26, 31]
    >>> t5_relative_position_bucket([-20, 5], bidirectional=False).tolist()
    [17, 0]
    """
    rel, lo, hi = _t5_relative_positions(relative_position)
    if isinstance(bidirectional, np.ndarray) or (
            bidirectional not in (True, False)):
        raise ValueError(
            f"bidirectional must be True or False, got {bidirectional!r}")
    smallest = 4 if bidirectional else 2
    num_buckets = _check_int("num_buckets", num_buckets, smallest)
    if num_buckets > MAX_ELEMENTS:  # one table row per bucket
        raise ValueError(
            f"num_buckets must be at most {MAX_ELEMENTS}, got {num_buckets}")
    n = num_buckets // 2 if bidirectional else num_buckets
    max_exact = n // 2
    max_distance = _check_int(
        "max_distance", max_distance, max_exact + 1,
        f"an integer > {max_exact} (the number of exact buckets)")
    if max_distance >= 2**1023:  # max_distance / max_exact must be a float
        raise ValueError(
            f"max_distance must be below 2**1023, got {max_distance}")
    scale = np.float32(np.log(max_distance / max_exact))
    if rel.size == 0:
        return np.zeros(rel.shape, dtype=np.int64)
    # The bucket grows with the distance and, from max_distance on, stays in
    # the last one (almost always: checked below). So the buckets of the
    # relative positions in [first, last], at most [-max_distance,
    # max_distance], make a table that the whole input is looked up in.
    top = min(max(-lo, hi), max_distance)
    first = min(max(lo, -top), top if bidirectional else 1)
    last = min(max(hi, -top), top if bidirectional else 1)
    out = None
    if last - first <= rel.size // 2 + 1024:
        table = _t5_bucket(np.arange(first, last + 1), bidirectional, n,
                           max_exact, scale)
        if (lo >= first or table[0] == n - 1) and (
                hi <= last or not bidirectional or table[-1] == 2 * n - 1):
            index = np.subtract(rel.reshape(-1), first, dtype=np.int64)
            if lo < first or hi > last:  # (np.take's mode="clip" is slow)
                np.clip(index, 0, last - first, out=index)
            out = table.take(index).reshape(rel.shape)
    if out is None:
        out = _t5_bucket(rel, bidirectional, n, max_exact, scale)
    return out[()] if out.ndim == 0 else out


def alibi_slopes(n_heads):
    r"""The head-specific slopes of ALiBi ([Press2022]_, section 3).

    For :math:`H` heads, a power of two, the slopes are the geometric
    sequence :math:`a_h = 2^{-8h/H}`, :math:`h = 1, \dots, H` (the paper
    writes the slope :math:`m`). Otherwise, with :math:`H_0` the largest
    power of two below :math:`H`, the slopes for :math:`H_0` heads are
    followed by every other slope for :math:`2H_0` heads (the odd-numbered
    ones), taking the first :math:`H - H_0` of them, as in the paper's
    reference code.

    Parameters
    ----------
    n_heads : int
        Number of attention heads, >= 1.

    Returns
    -------
    slopes : ndarray of float64, shape (n_heads,)

    Examples
    --------
    >>> alibi_slopes(8).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    >>> alibi_slopes(3).tolist()
    [0.0625, 0.00390625, 0.25]
    """
    n_heads = _check_int("n_heads", n_heads, 1)
    _check_size(n_heads)
    p = 1 << (n_heads.bit_length() - 1)

    def power_of_two(count):
        return 2.0 ** (-8.0 * np.arange(1, count + 1) / count)

    if p == n_heads:
        return power_of_two(n_heads)
    extra = power_of_two(2 * p)[0::2][: n_heads - p]
    return np.concatenate([power_of_two(p), extra])


def alibi_bias(n, n_heads):
    r"""ALiBi's additive attention bias for each head ([Press2022]_).

    .. math::

        B^{(h)}_{m\ell} = -a_h\,|\ell - m|

    for the query at :math:`m` and the key at :math:`\ell`, with slopes
    :math:`a_h` from :func:`alibi_slopes`. With a causal mask only
    :math:`\ell \le m` is used, where this is :math:`a_h r` with
    :math:`r = \ell - m \le 0`, the paper's :math:`-m\,(i - j)` (slope
    :math:`m`, query :math:`i`, key :math:`j`).

    Parameters
    ----------
    n : int
        Sequence length, >= 0.
    n_heads : int
        Number of heads, >= 1.

    Returns
    -------
    B : ndarray of float64, shape (n_heads, n, n)

    Examples
    --------
    >>> alibi_bias(3, 1)[0]
    array([[ 0.        , -0.00390625, -0.0078125 ],
           [-0.00390625,  0.        , -0.00390625],
           [-0.0078125 , -0.00390625,  0.        ]])
    """
    n = _check_int("n", n, 0)
    n_heads = _check_int("n_heads", n_heads, 1)
    _check_size(n_heads, n, n)
    # 0 - |i - j| is +0.0 on the diagonal (negating 0.0 would give -0.0)
    minus_distance = 0.0 - np.abs(relative_positions(n))
    return alibi_slopes(n_heads)[:, None, None] * minus_distance[None]


# ---- chapter 6: rotary position embedding


def rope_decay_bound(distances, head_dim, *, base=10000.0, frequencies=None):
    r"""RoFormer's relative upper bound of a rotary score against distance.

    Write the score of a query at position :math:`m` and a key at
    :math:`\ell` as a sum over the :math:`d/2` pairs,
    :math:`\mathrm{Re}\sum_i u_i\,e^{\mathrm{i}\,r\,\omega_i}` with
    :math:`r = \ell - m` and :math:`u_i` the product of the conjugate of the
    query's pair ``i`` (as a complex number) and the key's. Summation by
    parts (Abel's transformation) gives
    :math:`|\sum_i u_i e^{\mathrm{i}r\omega_i}|
    \le \max_i |u_{i+1} - u_i| \sum_{j=1}^{d/2} |Z_j|`, with
    :math:`u_{d/2} = 0` ([Su2021]_, section 3.4.3, which writes
    :math:`h_i`, :math:`S_j`, :math:`\theta_i` and the relative position
    :math:`m - n`, query minus key). This function returns the part that
    depends on the relative position only, averaged over the pairs:

    .. math::

        D(r) = \frac{1}{d/2} \sum_{j=1}^{d/2} |Z_j|, \qquad
        Z_j = \sum_{i=0}^{j-1} e^{\mathrm{i}\,r\,\omega_i},
        \qquad \omega_i = b^{-2i/d}

    which RoFormer plots against the distance for :math:`d = 128` (its
    Figure 2). :math:`D(0) = (d/2 + 1)/2` and :math:`D(-r) = D(r)`, so it
    depends only on the distance :math:`\delta = |r|`.

    Parameters
    ----------
    distances : int or array_like of real, shape (n,)
        An int ``n`` means distances ``0, 1, ..., n-1``; otherwise the
        relative positions :math:`r` themselves (any finite reals; the sign
        does not matter).
    head_dim : int
        Dimension ``d`` of one attention head, a positive even integer.
    base : float, optional
        A finite number > 1; ignored when ``frequencies`` is given.
    frequencies : array_like, shape (head_dim // 2,), optional
        The angles per position :math:`\omega_i`, e.g. from
        :func:`rope_frequencies` with scaling; finite and non-negative.

    Returns
    -------
    D : ndarray of float64, shape (n,)
        Between 0 and ``(head_dim/2 + 1)/2``.

    Examples
    --------
    >>> rope_decay_bound([0, 1], 4).round(2).tolist()
    [1.5, 1.38]
    >>> float(rope_decay_bound([0], 128)[0])
    32.5
    """
    head_dim = _check_d("head_dim", head_dim)
    r = _positions(distances, "distances")
    if frequencies is None:
        theta = rope_frequencies(head_dim, base=base)
    else:
        theta = _float_array(
            "frequencies", frequencies,
            f"a 1-D array of {head_dim // 2} finite non-negative reals")
        if theta.shape != (head_dim // 2,) or np.any(theta < 0):
            raise ValueError(
                f"frequencies must be a 1-D array of {head_dim // 2} finite "
                f"non-negative reals (head_dim = {head_dim}), got shape "
                f"{theta.shape}"
            )
    _check_size(r.size, head_dim // 2)
    with np.errstate(over="ignore"):
        angle = r[:, None] * theta[None, :]
    if not np.all(np.isfinite(angle)):
        raise ValueError(
            "distances times frequencies overflow float64: a distance or "
            "a frequency is too large")
    S = np.cumsum(np.exp(1j * angle), axis=1)
    return np.abs(S).mean(axis=1)


def rope_layout_permutation(head_dim):
    r"""The reordering of dimensions that turns interleaved RoPE into half.

    Interleaved RoPE (RoFormer, GPT-J) rotates the pairs
    :math:`(2i, 2i+1)`; the half layout (GPT-NeoX, LLaMA in Hugging Face
    transformers) rotates :math:`(i, i + d/2)`. With

    .. math::

        p_j = 2j, \qquad p_{d/2 + j} = 2j + 1, \qquad
        j = 0, \dots, d/2 - 1,

    i.e. all even dimensions first, then all odd ones, the two are the same
    rotation in different coordinates:
    ``apply_rope(x[..., p], pos, layout="half")`` equals
    ``apply_rope(x, pos)[..., p]``. Since permuting both the query and the
    key leaves their dot product unchanged, a checkpoint trained with one
    layout runs with the other once the output dimensions of each head's
    query and key projections are permuted by ``p`` (its inverse is
    ``np.argsort(p)``).

    Parameters
    ----------
    head_dim : int
        Dimension ``d`` of one attention head, a positive even integer.

    Returns
    -------
    p : ndarray of int64, shape (head_dim,)
        A permutation of ``0, ..., head_dim - 1``.

    Examples
    --------
    >>> rope_layout_permutation(8)
    array([0, 2, 4, 6, 1, 3, 5, 7])
    """
    head_dim = _check_d("head_dim", head_dim)
    _check_size(head_dim)
    idx = np.arange(head_dim, dtype=np.int64)
    return np.concatenate([idx[0::2], idx[1::2]])


def round_significand(x, bits):
    r"""Round to the nearest number with ``bits`` significant bits.

    For :math:`x \ne 0` with :math:`2^e \le |x| < 2^{e+1}`,

    .. math::

        \mathrm{rnd}(x) = 2^{\,e - n_{\mathrm{sig}} + 1}\,
        \mathrm{round}\!\left(x\, 2^{-(e - n_{\mathrm{sig}} + 1)}\right),

    where :math:`\mathrm{round}` breaks ties to the even integer (IEEE 754
    round-to-nearest-even), and :math:`\mathrm{rnd}(0) = 0`. A binary
    floating-point format with an :math:`n_{\mathrm{sig}}`-bit significand
    (counting the implicit leading bit; ``bits`` here) stores exactly these
    numbers: ``bits=8`` models bfloat16, ``bits=11`` float16 (and TF32),
    ``bits=24`` float32. Numbers with :math:`|x| < 2^{n_{\mathrm{sig}}}`
    that are integers stay exact; above that the spacing is
    :math:`2^{e-n_{\mathrm{sig}}+1}`, e.g. bfloat16 rounds 257 to 256.

    Only the significand is modelled, not the exponent range: there is no
    overflow (float16 overflows above 65504) and no underflow to
    subnormals or zero. numpy has no bfloat16 type; this function is how
    the book emulates it.

    Parameters
    ----------
    x : array_like of real
        Any shape; finite values.
    bits : int
        Significand width :math:`n_{\mathrm{sig}}`, from 1 to 53 (53 is
        float64 itself).

    Returns
    -------
    ndarray of float64, same shape as ``x``

    Examples
    --------
    >>> round_significand([255, 256, 257, 258, 259], 8).tolist()
    [255.0, 256.0, 256.0, 258.0, 260.0]
    >>> round_significand([2049], 11).tolist()
    [2048.0]
    """
    bits = _check_int("bits", bits, 1, "an integer from 1 to 53")
    if bits > 53:
        raise ValueError(f"bits must be an integer from 1 to 53, got {bits}")
    x = _float_array("x", x, "an array-like of finite reals")
    mantissa, exponent = np.frexp(x)  # x = mantissa * 2**exponent
    with np.errstate(over="ignore"):
        out = np.ldexp(np.rint(np.ldexp(mantissa, bits)), exponent - bits)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "x is too large: it rounds up to 2**1024, beyond float64")
    return out


# ---- chapter 5: relative position representations


def _relative_table(name, table, d, rows=None):
    what = (f"a 2-D array (2k+1, {d}) of finite reals with an odd number "
            "of rows")
    table = _float_array(name, table, what)
    if (table.ndim != 2 or table.shape[1] != d or table.shape[0] % 2 == 0
            or (rows is not None and table.shape[0] != rows)):
        if rows is not None:
            what = f"a 2-D array ({rows}, {d}) of finite reals, like table_k"
        raise ValueError(f"{name} must be {what}, got shape {table.shape}")
    return table


def shaw_attention(x, w_q, w_k, w_v, table_k, table_v=None, *, causal=False):
    r"""Self-attention with relative position representations ([Shaw2018]_).

    Each pair of positions, the query at :math:`m` and the key at
    :math:`\ell`, gets learned vectors picked by the clipped relative
    position :math:`\mathrm{clip}(\ell - m, -r_{\max}, r_{\max})` (eqs. 3-4
    of the paper, with :math:`d_a = d_k`; the paper writes :math:`i, j` for
    the positions, :math:`k` for the clip distance, :math:`e_{ij}`,
    :math:`\alpha_{ij}` and :math:`z_i`):

    .. math::

        S_{m\ell} = \frac{x_m W_Q\,(x_\ell W_K + a^K_{m\ell})^\top}{\sqrt{d_k}},
        \qquad
        y_m = \sum_\ell A_{m\ell}\,(x_\ell W_V + a^V_{m\ell}),
        \qquad
        a^K_{m\ell} = w^K_{\mathrm{clip}(\ell-m,\,r_{\max})},\;
        a^V_{m\ell} = w^V_{\mathrm{clip}(\ell-m,\,r_{\max})}

    with :math:`A = \mathrm{softmax}_{\text{rows}}(S)`. The tables
    :math:`w^K, w^V` have :math:`2r_{\max}+1` rows, one per relative
    position :math:`r = -r_{\max}, \dots, r_{\max}`; row ``r + r_max``
    holds :math:`w_r`.

    The :math:`(n, n, d_k)` tensor :math:`a^K_{m\ell}` is never built. The
    position term of the logits is
    :math:`(Q\,{w^K}^\top)_{m,\,R_{m\ell}+r_{\max}}` with :math:`R` from
    :func:`relative_positions`: one :math:`(n, 2r_{\max}+1)` product, then a
    gather. The value term is :math:`\sum_r c_{mr} w^V_r` with
    :math:`c_{mr}` the attention that the query at :math:`m` pays to keys at
    clipped relative position :math:`r`. The position terms cost
    :math:`O(n(2r_{\max}+1)d_k + n^2)` time and memory on top of plain
    attention, instead of :math:`O(n^2 d_k)` for the tensor.

    Parameters
    ----------
    x : array_like, shape (n, d_model)
        One row per token.
    w_q, w_k : array_like, shape (d_model, d_k)
        Query and key projections.
    w_v : array_like, shape (d_model, d_v)
        Value projection.
    table_k : array_like, shape (2 r_max + 1, d_k)
        The key table :math:`w^K`; its number of rows (odd) sets the
        clipping distance :math:`r_{\max}`. With
        :math:`2r_{\max}+1 \ge 2n-1` rows no clipping happens.
    table_v : array_like, shape (2 r_max + 1, d_v), optional
        The value table :math:`w^V`, with as many rows as ``table_k``; no
        value term when None (the paper's section 4.3 finds it is not
        needed for translation).
    causal : bool, optional
        Mask keys after the query, as in decoder self-attention.

    Returns
    -------
    output : ndarray of float64, shape (n, d_v)
    weights : ndarray of float64, shape (n, n)
        :math:`A`; each row sums to 1.

    Examples
    --------
    With :math:`W_K = 0` only position speaks: :math:`w^K_{+1}` raises
    every key to the right of its query, the far ones too (clipped at
    :math:`r_{\max} = 1`):

    >>> x = np.eye(3)
    >>> w_k = np.zeros((3, 3))
    >>> table_k = np.array([[0.0, 0, 0], [0, 0, 0], [3, 3, 3]])  # r_max = 1
    >>> out, A = shaw_attention(x, x, w_k, x, table_k)
    >>> A.round(3)
    array([[0.081, 0.459, 0.459],
           [0.131, 0.131, 0.739],
           [0.333, 0.333, 0.333]])
    """
    what = "a 2-D array (n, d_model) of finite reals"
    x = _float_array("x", x, what)
    if x.ndim != 2:
        raise ValueError(f"x must be {what}, got shape {x.shape}")
    w_q = _float_array("w_q", w_q, f"a 2-D array ({x.shape[1]}, d_k) of "
                       "finite reals")
    if w_q.ndim != 2 or w_q.shape[0] != x.shape[1] or w_q.shape[1] == 0:
        raise ValueError(
            f"w_q must have shape ({x.shape[1]}, d_k) with d_k >= 1 to "
            f"match x, got {w_q.shape}"
        )
    n, d_k = x.shape[0], w_q.shape[1]
    table_k = _relative_table("table_k", table_k, d_k)
    _check_size(n, table_k.shape[0])
    k = (table_k.shape[0] - 1) // 2
    idx = relative_positions(n, max_distance=k) + k  # row of the table
    with np.errstate(over="ignore", invalid="ignore"):
        logits = (x @ w_q) @ table_k.T  # (n, 2k+1): q_i . w_r for every r
    if not np.all(np.isfinite(logits)):
        raise ValueError(
            "x, w_q or table_k is too large: the position logits "
            "(x @ w_q) @ table_k.T overflow float64")
    position = np.take_along_axis(logits, idx, axis=1)  # (n, n)
    out, weights = self_attention(x, w_q, w_k, w_v, causal=causal,
                                  bias=position / np.sqrt(d_k))
    if table_v is None:
        return out, weights
    table_v = _relative_table("table_v", table_v, out.shape[1],
                              rows=table_k.shape[0])
    width = 2 * k + 1
    flat = (np.arange(n)[:, None] * width + idx).ravel()
    c = np.bincount(flat, weights=weights.ravel(), minlength=n * width)
    with np.errstate(over="ignore", invalid="ignore"):
        out = out + c.reshape(n, width) @ table_v
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "w_v or table_v is too large: the output overflows float64")
    return out, weights


# ---- chapter 9: positions in two and three dimensions
#
# Coordinates of a patch are (row, column) = (y, x), counted from 0 at the
# top left; patches in row-major order (token r * width + c).

_SINCOS_2D_LAYOUTS = ("mae", "timm")
_NORMALIZE_COORDS = ("separate", "max", "min")


def _check_choice(name, value, options):
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def _check_coords(coords, name="coords"):
    """A 2-D array (n, 2) of finite reals, columns (row, column)."""
    what = "a 2-D array (n, 2) of finite reals (row, column) per token"
    c = _float_array(name, coords, what)
    if c.ndim != 2 or c.shape[1] != 2:
        raise ValueError(f"{name} must be {what}, got shape {c.shape}")
    return c


def _check_d4(name, value):
    if not _is_int(value) or value <= 0 or value % 4:
        raise ValueError(
            f"{name} must be a positive multiple of 4, got {value!r}")
    return int(value)


def _finite_angles(angles, what):
    if not np.all(np.isfinite(angles)):
        raise ValueError(
            f"{what} overflow float64: a coordinate or a frequency is too "
            "large")
    return angles


def apply_rope_angles(x, angles, *, layout="interleaved"):
    r"""Rotate each pair of dimensions of each row by a given angle.

    Pair :math:`i` of each row of ``x``, :math:`(x_1, x_2)`, is rotated
    by the angle :math:`\phi_i` given for that row (``angles[..., row,
    i]``):

    .. math::

        x_1' = x_1 \cos\phi_i - x_2 \sin\phi_i, \qquad
        x_2' = x_2 \cos\phi_i + x_1 \sin\phi_i.

    This is :func:`apply_rope` with the angle table given instead of
    computed: ``apply_rope(x, pos)`` is
    ``apply_rope_angles(x, pos[:, None] * rope_frequencies(d))``. Every
    2-D and 3-D rotary scheme of chapter 9 (axial, mixed, DINOv3's,
    M-RoPE) differs from 1-D RoPE only in its angle table.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        Queries or keys; ``d`` even.
    angles : array_like, shape (..., n, d // 2)
        Finite angles in radians; leading axes broadcast against those of
        ``x`` (e.g. one table per head, ``(n_heads, n, d // 2)``).
    layout : {"interleaved", "half"}, optional
        ``"interleaved"`` rotates pairs ``(2i, 2i+1)`` (RoFormer;
        naver-ai/rope-vit's ``apply_rotary_emb``, through
        ``torch.view_as_complex``); ``"half"`` rotates ``(i, i + d/2)``
        (``rotate_half`` in transformers' Qwen2-VL and in DINOv3's
        ``rope_apply``).

    Returns
    -------
    ndarray of float64, shape broadcast of x's and angles' leading axes
    + (n, d)

    Examples
    --------
    >>> apply_rope_angles([[1.0, 0.0, 1.0, 0.0]], [[np.pi / 2, 0.0]]).round(12)
    array([[0., 1., 1., 0.]])
    >>> apply_rope_angles([[1.0, 0.0]], [[1.0]]).round(4) == apply_rope(
    ...     [[1.0, 0.0]], [1]).round(4)
    array([[ True,  True]])
    """
    _check_choice("layout", layout, _ROPE_LAYOUTS)
    what = "an array (..., n, d) of finite reals with an even last axis d > 0"
    x = _float_array("x", x, what)
    if x.ndim < 2 or x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(f"x must be {what}, got shape {x.shape}")
    n, d = x.shape[-2:]
    awhat = f"an array (..., {n}, {d // 2}) of finite reals (x has n = {n}, d = {d})"
    a = _float_array("angles", angles, awhat)
    if a.ndim < 2 or a.shape[-2:] != (n, d // 2):
        raise ValueError(f"angles must be {awhat}, got shape {a.shape}")
    try:
        lead = np.broadcast_shapes(x.shape[:-2], a.shape[:-2])
    except ValueError:
        raise ValueError(
            f"angles' leading axes {a.shape[:-2]} do not broadcast against "
            f"x's {x.shape[:-2]}") from None
    _check_size(*lead, n, d)
    cos, sin = np.cos(a), np.sin(a)
    if layout == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
    else:
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
    out = np.empty((*lead, n, d))
    with np.errstate(over="ignore", invalid="ignore"):
        y1 = x1 * cos - x2 * sin
        y2 = x2 * cos + x1 * sin
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = y1, y2
    else:
        out[..., : d // 2], out[..., d // 2:] = y1, y2
    if not np.all(np.isfinite(out)):
        raise ValueError("x is too large: its rotation overflows float64")
    return out


def sincos_2d_encoding(height, width, d, *, base=10000.0, layout="mae"):
    r"""The fixed 2-D sin-cos position table of MAE, one row per patch.

    Each axis gets half of the ``d`` dimensions and the 1-D sinusoids of
    [Vaswani2017]_ with ``d / 4`` frequencies
    :math:`\omega_j = b^{-j/(d/4)}`, :math:`j = 0, \dots, d/4 - 1`
    (:math:`b` = ``base``). With the patch in row :math:`y` and column
    :math:`x`, MAE's layout ([He2022]_; facebookresearch/mae,
    ``util/pos_embed.py``, ``get_2d_sincos_pos_embed``) is

    .. math::

        P_{yW + x} = \bigl[\sin(x\omega_j)_j,\ \cos(x\omega_j)_j,\
                     \sin(y\omega_j)_j,\ \cos(y\omega_j)_j\bigr]

    (each block ``d / 4`` wide): the **first** half encodes the column
    :math:`x`. (MAE's code calls that half ``emb_h`` but fills it from
    ``np.meshgrid(grid_w, grid_h)[0]``, the column index, "here w goes
    first".) Sines and cosines are not interleaved, and the exponents are
    :math:`j/(d/4)`, not :math:`2i/d` of one 1-D table of width ``d``.

    Parameters
    ----------
    height, width : int
        The grid of patches, ``height`` rows and ``width`` columns (MAE
        only builds square grids; a rectangle follows the same code).
    d : int
        Width of the embedding, a positive multiple of 4.
    base : float, optional
        A finite number > 1 (timm's ``temperature``).
    layout : {"mae", "timm"}, optional
        ``"timm"`` is timm's ``build_sincos2d_pos_embed`` with its
        defaults (``timm/layers/pos_embed_sincos.py``): the same
        frequencies, but the row first and all sines before all cosines,
        :math:`[\sin(y\omega_j), \sin(x\omega_j), \cos(y\omega_j),
        \cos(x\omega_j)]`. The two tables hold the same columns in a
        different order; a checkpoint trained with one does not run with
        the other.

    Returns
    -------
    P : ndarray of float64, shape (height * width, d)
        Row ``y * width + x`` belongs to the patch in row ``y``, column
        ``x``. A class token, if any, gets a row of zeros in MAE
        (``cls_token=True``); it is not included here.

    Examples
    --------
    >>> P = sincos_2d_encoding(2, 3, 4)  # omega = [1], blocks of width 1
    >>> P[1 * 3 + 2].round(4)  # row 1, column 2: sin 2, cos 2, sin 1, cos 1
    array([ 0.9093, -0.4161,  0.8415,  0.5403])
    >>> sincos_2d_encoding(2, 3, 4, layout="timm")[5].round(4)
    array([ 0.8415,  0.9093,  0.5403, -0.4161])
    """
    _check_choice("layout", layout, _SINCOS_2D_LAYOUTS)
    height = _check_int("height", height, 1)
    width = _check_int("width", width, 1)
    d = _check_d4("d", d)
    base = _check_base(base)
    _check_size(height, width, d)
    q = d // 4
    omega = base ** (-np.arange(q, dtype=np.float64) / q)
    y, x = np.divmod(np.arange(height * width, dtype=np.float64), width)
    ax, ay = x[:, None] * omega, y[:, None] * omega
    if layout == "mae":
        blocks = [np.sin(ax), np.cos(ax), np.sin(ay), np.cos(ay)]
    else:
        blocks = [np.sin(ay), np.sin(ax), np.cos(ay), np.cos(ax)]
    return np.concatenate(blocks, axis=1)


def _axial_frequencies(head_dim, base):
    """rope-vit's and DINOv3's d/4 frequencies base**(-4j/d)."""
    j = np.arange(head_dim // 4, dtype=np.float64)
    return base ** (-4.0 * j / head_dim)


def rope_axial_angles(coords, head_dim, *, base=100.0):
    r"""Axial 2-D RoPE: half of the pairs turn with the column, half with
    the row.

    With the patch at row :math:`y`, column :math:`x` and the ``d / 4``
    frequencies :math:`\omega_j = b^{-4j/d}` (:math:`b` = ``base``,
    :math:`d` = ``head_dim``), pair :math:`i` turns by

    .. math::

        \phi_{j} = x\,\omega_j, \qquad \phi_{d/4 + j} = y\,\omega_j,
        \qquad j = 0, \dots, d/4 - 1,

    RoPE-Axial of [Heo2024]_, as naver-ai/rope-vit computes it
    (``deit/models_v2_rope.py``, ``compute_axial_cis`` with ``init_t_xy``:
    ``t_x = t % end_x`` first, then ``t_y = t // end_x``) and applies it,
    to interleaved pairs (``layout="interleaved"`` of
    :func:`apply_rope_angles`). The base is 100, not 10000: images have
    far fewer positions per axis than text (``rope_theta=100.0`` in all
    its models). No pair sees both axes, so the score of a query and a key
    depends on :math:`\Delta x` through one half of the pairs and on
    :math:`\Delta y` through the other: never on a diagonal direction as
    such. The class token is not rotated (rope-vit rotates
    ``q[:, :, 1:]`` only): give it no row here, or angle 0.

    Parameters
    ----------
    coords : array_like, shape (n, 2)
        (row, column) of each token, e.g.
        ``np.indices((h, w)).reshape(2, -1).T`` for an ``h`` x ``w``
        grid in row-major order; any finite reals (rope-vit's are
        integers).
    head_dim : int
        ``d``, a positive multiple of 4.
    base : float, optional
        A finite number > 1.

    Returns
    -------
    angles : ndarray of float64, shape (n, head_dim // 2)
        Columns ``0 .. d/4 - 1`` from the column :math:`x`, columns
        ``d/4 .. d/2 - 1`` from the row :math:`y`.

    Notes
    -----
    DINOv3's RoPE (:func:`dinov3_rope_angles`) is axial too but puts the
    row first, measures frequencies as periods with a factor
    :math:`2\pi`, and rotates halves instead of interleaved pairs.

    Examples
    --------
    >>> coords = np.indices((2, 3)).reshape(2, -1).T  # (row, column)
    >>> rope_axial_angles(coords, 8)[5]  # row 1, column 2
    array([2. , 0.2, 1. , 0.1])
    """
    c = _check_coords(coords)
    head_dim = _check_d4("head_dim", head_dim)
    base = _check_base(base)
    _check_size(c.shape[0], head_dim // 2)
    omega = _axial_frequencies(head_dim, base)
    with np.errstate(over="ignore", invalid="ignore"):
        angles = np.concatenate(
            [c[:, 1:2] * omega, c[:, 0:1] * omega], axis=1)
    return _finite_angles(angles, "coords times frequencies")


def _generator(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (_is_int(rng) and rng >= 0):
        return np.random.default_rng(None if rng is None else int(rng))
    raise ValueError(
        "rng must be a numpy Generator, a non-negative int seed or None, "
        f"got {rng!r}")


def rope_mixed_frequencies(head_dim, n_heads, *, base=10.0, rng=None):
    r"""RoPE-Mixed's initial frequencies: one random direction per head.

    Each head :math:`h` draws a direction :math:`\psi_h \sim
    U[0, 2\pi)`; with the magnitudes :math:`\omega_j = b^{-4j/d}`
    (:math:`b` = ``base``, :math:`d` = ``head_dim``), pair :math:`i` gets
    the 2-D frequency vector :math:`(f^x_{h,i}, f^y_{h,i})`:

    .. math::

        (f^x, f^y)_{h,j} = \omega_j(\cos\psi_h, \sin\psi_h), \qquad
        (f^x, f^y)_{h,d/4+j} = \omega_j\bigl(\cos(\psi_h + \tfrac{\pi}{2}),
        \sin(\psi_h + \tfrac{\pi}{2})\bigr),

    :math:`j = 0, \dots, d/4 - 1`: the first half of the pairs along the
    head's direction, the second half at right angles to it. These are
    the starting values of RoPE-Mixed's learnable frequencies
    ([Heo2024]_), as naver-ai/rope-vit initialises them
    (``deit/models_v2_rope.py``, ``init_random_2d_freqs``, called once per
    block with ``theta=rope_theta``; timm's ``init_random_2d_freqs``
    draws the same for all blocks at once). The mixed models use base 10
    (``rope_theta=10.0``), the axial ones 100.

    Parameters
    ----------
    head_dim : int
        ``d``, a positive multiple of 4.
    n_heads : int
        Number of heads, >= 1.
    base : float, optional
        A finite number > 1.
    rng : numpy.random.Generator, int or None, optional
        Source of the directions (an int is a seed for
        ``np.random.default_rng``); one ``rng.uniform(0, 2 pi)`` per head,
        in head order. rope-vit draws ``torch.rand(1) * 2 * pi``: the same
        distribution, not the same numbers.

    Returns
    -------
    freqs : ndarray of float64, shape (n_heads, head_dim // 2, 2)
        ``freqs[h, i]`` is :math:`(f^x_{h,i}, f^y_{h,i})`, the frequency of
        pair ``i`` along the column and along the row (rope-vit stores
        ``freqs[0]`` = x, ``freqs[1]`` = y, each ``(n_heads, d/2)``).
        Note the order: (x, y), while coordinates are (row, column).

    Examples
    --------
    >>> f = rope_mixed_frequencies(8, 2, rng=0)
    >>> f.shape
    (2, 4, 2)
    >>> np.linalg.norm(f, axis=-1).round(4)  # magnitudes 10**(-4j/8)
    array([[1.    , 0.3162, 1.    , 0.3162],
           [1.    , 0.3162, 1.    , 0.3162]])
    """
    head_dim = _check_d4("head_dim", head_dim)
    n_heads = _check_int("n_heads", n_heads, 1)
    base = _check_base(base)
    gen = _generator(rng)
    _check_size(n_heads, head_dim)
    psi = gen.uniform(0.0, 2.0 * np.pi, size=n_heads)[:, None]
    omega = _axial_frequencies(head_dim, base)[None, :]
    fx = np.concatenate([omega * np.cos(psi),
                         omega * np.cos(psi + np.pi / 2)], axis=1)
    fy = np.concatenate([omega * np.sin(psi),
                         omega * np.sin(psi + np.pi / 2)], axis=1)
    return np.stack([fx, fy], axis=-1)


def rope_mixed_angles(coords, freqs):
    r"""RoPE-Mixed's angles: each pair turns with a learned direction.

    Pair :math:`i` of head :math:`h`, at the patch in row :math:`y` and
    column :math:`x`, turns by

    .. math::

        \phi_{h,i} = f^x_{h,i}\, x + f^y_{h,i}\, y

    ([Heo2024]_; naver-ai/rope-vit, ``deit/models_v2_rope.py``,
    ``compute_mixed_cis``: ``t_x @ freqs[0] + t_y @ freqs[1]``, applied to
    interleaved pairs). A pair whose frequency vector points along a
    diagonal sees diagonal offsets, which no pair of axial RoPE does.

    Parameters
    ----------
    coords : array_like, shape (n, 2)
        (row, column) of each token.
    freqs : array_like, shape (n_heads, head_dim // 2, 2)
        :math:`(f^x, f^y)` of each head and pair, e.g. from
        :func:`rope_mixed_frequencies` (or learned); finite reals.

    Returns
    -------
    angles : ndarray of float64, shape (n_heads, n, head_dim // 2)

    Examples
    --------
    >>> freqs = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # pair 0 x, pair 1 y
    >>> rope_mixed_angles([[2.0, 5.0]], freqs)  # row 2, column 5
    array([[[5., 2.]]])
    """
    c = _check_coords(coords)
    what = "a 3-D array (n_heads, head_dim // 2, 2) of finite reals"
    f = _float_array("freqs", freqs, what)
    if f.ndim != 3 or f.shape[2] != 2 or f.shape[0] == 0 or f.shape[1] == 0:
        raise ValueError(f"freqs must be {what}, got shape {f.shape}")
    _check_size(f.shape[0], c.shape[0], f.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):
        angles = (c[None, :, 1:2] * f[:, None, :, 0]
                  + c[None, :, 0:1] * f[:, None, :, 1])
    return _finite_angles(angles, "coords times freqs")


def normalized_patch_coordinates(height, width, *, normalize="separate"):
    r"""DINOv3's patch coordinates: centres of the patches in (-1, 1).

    The patch in row :math:`r` and column :math:`c` of an
    :math:`H \times W` grid has

    .. math::

        y = 2\,\frac{r + 1/2}{S_H} - 1, \qquad
        x = 2\,\frac{c + 1/2}{S_W} - 1,

    with :math:`S_H = H, S_W = W` (``"separate"``, DINOv3's default),
    :math:`S_H = S_W = \max(H, W)` (``"max"``) or :math:`\min(H, W)`
    (``"min"``) ([Simeoni2025]_; facebookresearch/dinov3,
    ``dinov3/layers/rope_position_encoding.py``,
    ``RopePositionEmbedding.forward``). With ``"separate"`` every image,
    whatever its size, spans the same square (-1, 1)^2: a larger grid
    samples it more finely, which is interpolation built in. With
    ``"max"`` the longer side spans (-1, 1) and the shorter less; with
    ``"min"`` the longer side goes beyond.

    Parameters
    ----------
    height, width : int
        The grid, >= 1 each.
    normalize : {"separate", "max", "min"}, optional

    Returns
    -------
    coords : ndarray of float64, shape (height * width, 2)
        (row, column) = (y, x) of each patch, row-major.

    Examples
    --------
    >>> normalized_patch_coordinates(2, 4)[:4]
    array([[-0.5 , -0.75],
           [-0.5 , -0.25],
           [-0.5 ,  0.25],
           [-0.5 ,  0.75]])
    >>> normalized_patch_coordinates(2, 4, normalize="max")[0]
    array([-0.75, -0.75])
    """
    _check_choice("normalize", normalize, _NORMALIZE_COORDS)
    height = _check_int("height", height, 1)
    width = _check_int("width", width, 1)
    _check_size(height, width, 2)
    if normalize == "separate":
        sh, sw = height, width
    elif normalize == "max":
        sh = sw = max(height, width)
    else:
        sh = sw = min(height, width)
    r, c = np.divmod(np.arange(height * width, dtype=np.float64), width)
    return np.stack([2.0 * (r + 0.5) / sh - 1.0, 2.0 * (c + 0.5) / sw - 1.0],
                    axis=1)


def _pair(name, value, what, positive):
    arr = _float_array(name, value, what)
    if arr.shape != (2,) or (positive and np.any(arr <= 0)):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return arr


def augment_coordinates(coords, *, shift=(0.0, 0.0), jitter=(1.0, 1.0),
                        rescale=1.0):
    r"""DINOv3's coordinate augmentations, with given values.

    Each coordinate (row :math:`y`, column :math:`x`) is shifted, then
    stretched per axis, then scaled:

    .. math::

        y' = \eta\,J_y\,(y + \Delta_y), \qquad
        x' = \eta\,J_x\,(x + \Delta_x)

    with :math:`\Delta` = ``shift``, :math:`J` = ``jitter`` and
    :math:`\eta` = ``rescale``, in this order (facebookresearch/dinov3,
    ``dinov3/layers/rope_position_encoding.py``,
    ``RopePositionEmbedding.forward``, training only; [Simeoni2025]_).
    :func:`sample_coordinate_augmentation` draws the values as DINOv3
    does.

    Parameters
    ----------
    coords : array_like, shape (n, 2)
        (row, column) of each token, e.g. from
        :func:`normalized_patch_coordinates`.
    shift : array_like of 2 finite reals, optional
        :math:`(\Delta_y, \Delta_x)`, added.
    jitter : array_like of 2 finite reals > 0, optional
        :math:`(J_y, J_x)`, one factor per axis.
    rescale : float, optional
        :math:`\eta > 0`, one factor for both axes.

    Returns
    -------
    ndarray of float64, shape (n, 2)

    Examples
    --------
    >>> augment_coordinates([[0.5, -0.5]], shift=(0.5, 0.0),
    ...                     jitter=(2.0, 1.0), rescale=0.5)
    array([[ 1.  , -0.25]])
    """
    c = _check_coords(coords)
    d = _pair("shift", shift, "a pair of finite reals (row, column)", False)
    j = _pair("jitter", jitter,
              "a pair of finite reals > 0 (row, column)", True)
    s = _check_real("rescale", rescale, low=0.0, what="a finite number > 0")
    with np.errstate(over="ignore", invalid="ignore"):
        out = s * (j * (c + d))
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "coords, shift, jitter or rescale is too large: the result "
            "overflows float64")
    return out


def sample_coordinate_augmentation(rng, *, shift=None, jitter=None,
                                   rescale=None):
    r"""Draw DINOv3's coordinate augmentation for one image.

    As DINOv3 draws them, in this order (facebookresearch/dinov3,
    ``dinov3/layers/rope_position_encoding.py``,
    ``RopePositionEmbedding.forward``; [Simeoni2025]_):

    .. math::

        \Delta \sim U[-\Delta_{\max}, \Delta_{\max}]^2, \qquad
        \ln J \sim U[-\ln J_{\max}, \ln J_{\max}]^2, \qquad
        \ln \eta \sim U[-\ln \eta_{\max}, \ln \eta_{\max}],

    with :math:`\Delta_{\max}` = ``shift``, :math:`J_{\max}` = ``jitter``
    and :math:`\eta_{\max}` = ``rescale`` (``shift_coords``,
    ``jitter_coords``, ``rescale_coords`` there): a uniform shift per axis,
    a log-uniform stretch per axis in :math:`[1/J_{\max}, J_{\max}]` and
    one log-uniform scale in :math:`[1/\eta_{\max}, \eta_{\max}]`. An
    augmentation given as None is off (its identity value is returned;
    DINOv3's default for all three; its training recipes in
    ``dinov3/configs/train/``, the ViT-7B's and the distilled ViT-L's, set
    ``rescale_coords: 2`` and leave shift and jitter off). Pass the
    result to :func:`augment_coordinates`.

    Parameters
    ----------
    rng : numpy.random.Generator or int
        Source of the draws (an int seeds ``np.random.default_rng``).
        DINOv3 draws with torch: the same distributions, not the same
        numbers.
    shift : float >= 0 or None, optional
    jitter : float >= 1 or None, optional
    rescale : float >= 1 or None, optional
        (timm's ``_coord_aug_config`` requires these ranges; DINOv3 only
        takes the logarithm.)

    Returns
    -------
    shift : ndarray of float64, shape (2,)
        :math:`(\Delta_y, \Delta_x)`.
    jitter : ndarray of float64, shape (2,)
        :math:`(J_y, J_x)`.
    rescale : float
        :math:`\eta`.

    Examples
    --------
    >>> shift, jitter, eta = sample_coordinate_augmentation(0, rescale=2.0)
    >>> shift, jitter, 0.5 <= eta <= 2.0
    (array([0., 0.]), array([1., 1.]), True)
    """
    if rng is None:
        raise ValueError(
            "rng must be a numpy Generator or a non-negative int seed (the "
            "book seeds every draw), got None")
    gen = _generator(rng)
    sigma = None if shift is None else _check_real(
        "shift", shift, low=0.0, low_open=False, what="a finite number >= 0")
    lam = None if jitter is None else _check_real(
        "jitter", jitter, low=1.0, low_open=False, what="a finite number >= 1")
    big = None if rescale is None else _check_real(
        "rescale", rescale, low=1.0, low_open=False,
        what="a finite number >= 1")
    d = np.zeros(2) if sigma is None else gen.uniform(-sigma, sigma, size=2)
    if lam is None:
        J = np.ones(2)
    else:
        J = np.exp(gen.uniform(-np.log(lam), np.log(lam), size=2))
    eta = 1.0 if big is None else float(
        np.exp(gen.uniform(-np.log(big), np.log(big))))
    return d, J, eta


def dinov3_rope_angles(coords, head_dim, *, base=100.0):
    r"""DINOv3's RoPE angles: axial, row first, frequencies as periods.

    With the periods :math:`\tau_j = b^{4j/d}` (:math:`b` = ``base``,
    :math:`d` = ``head_dim``) and a token at (row :math:`y`, column
    :math:`x`), usually from :func:`normalized_patch_coordinates`:

    .. math::

        \phi_j = \frac{2\pi\,y}{\tau_j}, \qquad
        \phi_{d/4 + j} = \frac{2\pi\,x}{\tau_j}, \qquad j = 0, \dots, d/4 - 1,

    applied to halves, pair :math:`(i, i + d/2)` (``layout="half"`` of
    :func:`apply_rope_angles`) ([Simeoni2025]_; facebookresearch/dinov3,
    ``dinov3/layers/rope_position_encoding.py``, ``RopePositionEmbedding``:
    ``periods = base ** (2 * arange(D // 4) / (D // 2))``,
    ``angles = 2 * pi * coords[:, :, None] / periods``, flattened (row,
    then column) and tiled twice; ``rope_apply`` in
    ``dinov3/layers/attention.py`` rotates halves).

    Compared with :func:`rope_axial_angles` (rope-vit) at the same base:
    the same geometric spectrum, but the **row** takes the first quarter
    of the frequencies' slots, the angles carry a factor :math:`2\pi`
    (coordinates in (-1, 1) turn the fastest pair by at most one full turn
    across the image), and the pairs are halves, not neighbours. DINOv3
    also offers ``min_period``/``max_period`` instead of ``base`` (periods
    geometric from one to the other); all its configurations
    (``dinov3/configs``) use base 100.

    Parameters
    ----------
    coords : array_like, shape (n, 2)
        (row, column) of each token.
    head_dim : int
        ``d``, a positive multiple of 4.
    base : float, optional
        A finite number > 1.

    Returns
    -------
    angles : ndarray of float64, shape (n, head_dim // 2)

    Examples
    --------
    >>> dinov3_rope_angles([[0.5, -0.25]], 8) / np.pi  # 2 y / tau_j, ...
    array([[ 1.  ,  0.1 , -0.5 , -0.05]])
    """
    c = _check_coords(coords)
    head_dim = _check_d4("head_dim", head_dim)
    base = _check_base(base)
    _check_size(c.shape[0], head_dim // 2)
    omega = 2.0 * np.pi * _axial_frequencies(head_dim, base)
    with np.errstate(over="ignore", invalid="ignore"):
        angles = np.concatenate(
            [c[:, 0:1] * omega, c[:, 1:2] * omega], axis=1)
    return _finite_angles(angles, "coords times frequencies")


_MROPE_VARIANTS = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl")
_MROPE_NEXT_TEXT = ("largest", "spatial")
_MROPE_LAYOUTS = ("chunked", "interleaved")
_SEGMENT_WHAT = (
    "a list of segments: an int n >= 0 or ('text', n) for n text tokens, "
    "('image', (t, h, w)) or ('video', (t, h, w)) or ('video', (t, h, w), "
    "seconds_per_grid) with patch grids t >= 1 and h, w multiples of "
    "spatial_merge_size")


def _mrope_segments(segments, merge):
    """Normalised segments: ('text', n) or (kind, t, h, w, seconds)."""
    items = None
    if not isinstance(segments, (str, bytes, dict)):
        try:
            items = list(segments)
        except TypeError:
            pass
    if items is None:
        raise ValueError(f"segments must be {_SEGMENT_WHAT}, got {segments!r}")
    out = []
    for k, seg in enumerate(items):
        bad = ValueError(
            f"segments must be {_SEGMENT_WHAT}; segment {k} is {seg!r}")
        if _is_int(seg):
            seg = ("text", seg)
        if (not isinstance(seg, (tuple, list)) or not seg
                or not isinstance(seg[0], str)
                or seg[0] not in ("text", "image", "video")):
            raise bad
        if seg[0] == "text":
            if len(seg) != 2 or not _is_int(seg[1]) or seg[1] < 0:
                raise bad
            out.append(("text", int(seg[1])))
            continue
        if len(seg) not in (2, 3) or (seg[0] == "image" and len(seg) != 2):
            raise bad
        grid = seg[1]
        if (not isinstance(grid, (tuple, list, np.ndarray))
                or np.ndim(grid) != 1 or len(grid) != 3
                or not all(_is_int(g) and g >= 1 for g in grid)):
            raise bad
        t, h, w = (int(g) for g in grid)
        if h % merge or w % merge:
            raise ValueError(
                f"segments must be {_SEGMENT_WHAT}; segment {k} has h, w = "
                f"{h}, {w}, not multiples of spatial_merge_size = {merge}")
        seconds = 1.0
        if len(seg) == 3:
            seconds = _check_real(
                "segments", seg[2], low=0.0, low_open=False,
                what=f"{_SEGMENT_WHAT}; seconds_per_grid of segment {k} a "
                     "finite number >= 0")
        out.append((seg[0], t, h // merge, w // merge, seconds))
    return out


def mrope_position_ids(segments, *, spatial_merge_size=2,
                       variant="qwen2-vl", tokens_per_second=4,
                       next_text="largest"):
    r"""M-RoPE position ids (time, height, width) of a prompt of text,
    images and videos.

    A text token takes the same id on all three axes, one more than the
    token before. An image or video of patch grid :math:`(t, h, w)` is
    merged into :math:`t \times (h/\mu) \times (w/\mu)` tokens
    (:math:`\mu` = ``spatial_merge_size``), in (time, row, column) order;
    with the block starting at :math:`s`, its token at (frame :math:`k`,
    row :math:`y`, column :math:`x`) gets

    .. math::

        (\mathrm{pos}^t, \mathrm{pos}^h, \mathrm{pos}^w)
        = (s + \tau(k),\ s + y,\ s + x),

    and the text after it starts at :math:`s' = 1 + ` the largest id so
    far ([Wang2024]_; Qwen's ``get_rope_index``), so an image
    advances the count by :math:`\max(h, w)/\mu` whatever its area. The
    temporal id :math:`\tau(k)` depends on the model:

    ``"qwen2-vl"``: :math:`\tau(k) = k`, the index of the frame group
        (two frames per group: ``temporal_patch_size = 2``).
    ``"qwen2.5-vl"``: absolute time, :math:`\tau(k) =
        \lfloor k\,\nu\,\Delta_{\mathrm{sec}} \rfloor` with
        :math:`\nu` = ``tokens_per_second`` and :math:`\Delta_{\mathrm{sec}}`
        the video's seconds per grid (``second_per_grid_ts``,
        ``temporal_patch_size / fps``; 1 when not given) ([Bai2025]_);
        images keep :math:`\tau(k) = k` (their :math:`t` is 1).
    ``"qwen3-vl"``: each video is split into its :math:`t` frame groups,
        each placed like a one-frame image (:math:`\tau = 0`, its own
        start :math:`s`; images are not split), because Qwen3-VL's
        processor writes each group's time stamp as text
        (``<1.0 seconds>``) before it ([Bai2025b]_): time is read from
        those text tokens, not from the ids. Give the time
        stamps as text segments between single-frame videos to reproduce a
        real prompt; a video of :math:`t > 1` here places its groups back
        to back.

    As computed by transformers' ``get_rope_index`` of
    ``Qwen2VLModel``, ``Qwen2_5_VLModel`` and ``Qwen3VLModel``
    (``models/qwen2_vl/modeling_qwen2_vl.py`` etc., with
    ``get_vision_position_ids``), for one sequence without padding.

    Parameters
    ----------
    segments : list
        In prompt order: an int ``n`` or ``("text", n)`` for ``n`` text
        tokens (the vision start/end tokens around an image are text);
        ``("image", (t, h, w))`` and ``("video", (t, h, w))`` with the
        grid as ``image_grid_thw`` / ``video_grid_thw`` give it (patches
        before merging; ``h`` and ``w`` multiples of
        ``spatial_merge_size``), or ``("video", (t, h, w), seconds)``
        with its ``second_per_grid_ts`` (Qwen2.5-VL only).
    spatial_merge_size : int, optional
        :math:`\mu`, 2 in all released Qwen-VL models.
    variant : {"qwen2-vl", "qwen2.5-vl", "qwen3-vl"}, optional
    tokens_per_second : float, optional
        :math:`\nu` of Qwen2.5-VL (transformers' default 4); ignored by
        the other variants.
    next_text : {"largest", "spatial"}, optional
        Where the text after an image or video starts. ``"largest"``:
        one after the largest id so far, as the paper and Qwen's release
        code (transformers 4.x) do. ``"spatial"``: :math:`s +
        \max(h, w)/\mu`, as transformers 5 computes it (checked on
        5.24.0: ``current_pos += max(grid_thw[1], grid_thw[2]) //
        spatial_merge_size``). The two agree for images and for Qwen3-VL,
        and differ for a Qwen2-VL video with more frame groups than
        :math:`\max(h, w)/\mu`, and for a Qwen2.5-VL video whose time ids
        pass :math:`s + \max(h, w)/\mu - 1`: there transformers 5 gives
        the following text ids smaller than the video's last time ids.

    Returns
    -------
    ids : ndarray of int64, shape (3, n_tokens)
        Rows :math:`\mathrm{pos}^t, \mathrm{pos}^h, \mathrm{pos}^w`. The
        first token generated after the prompt continues at
        ``ids.max() + 1`` on all three axes (transformers'
        ``rope_deltas``).

    Notes
    -----
    transformers multiplies :math:`k\,\nu\,\Delta_{\mathrm{sec}}` in
    float32 (``second_per_grid_ts`` is a float32 tensor) before truncating;
    this function multiplies in float64, which can differ by one where the
    product is within float32 rounding of an integer.

    Examples
    --------
    Two text tokens, a 4 x 6 patch image (2 x 3 tokens after merging),
    one text token:

    >>> mrope_position_ids([2, ("image", (1, 4, 6)), 1])
    array([[0, 1, 2, 2, 2, 2, 2, 2, 5],
           [0, 1, 2, 2, 2, 3, 3, 3, 5],
           [0, 1, 2, 3, 4, 2, 3, 4, 5]])

    Qwen2.5-VL's example (transformers PR 35569): 3 groups of 2 x 2
    tokens, 25 ids per second, 2 seconds per group, then text at 101:

    >>> ids = mrope_position_ids([("video", (3, 4, 4), 2.0), 2],
    ...                          variant="qwen2.5-vl", tokens_per_second=25)
    >>> ids[0]
    array([  0,   0,   0,   0,  50,  50,  50,  50, 100, 100, 100, 100, 101,
           102])
    """
    merge = _check_int("spatial_merge_size", spatial_merge_size, 1)
    _check_choice("variant", variant, _MROPE_VARIANTS)
    _check_choice("next_text", next_text, _MROPE_NEXT_TEXT)
    nu = _check_real("tokens_per_second", tokens_per_second, low=0.0,
                     low_open=False, what="a finite number >= 0")
    segs = _mrope_segments(segments, merge)
    total = 0
    for seg in segs:
        total += seg[1] if seg[0] == "text" else seg[1] * seg[2] * seg[3]
    _check_size(3, total)  # before any work (and before the split below)
    if variant == "qwen3-vl":
        segs = [s for seg in segs for s in (
            [seg] if seg[0] != "video" else [(seg[0], 1, *seg[2:])] * seg[1])]
    parts, start = [], 0
    for seg in segs:
        if seg[0] == "text":
            parts.append(np.broadcast_to(start + np.arange(seg[1]),
                                         (3, seg[1])))
            start += seg[1]
            continue
        kind, t, h, w, seconds = seg
        k = np.arange(t, dtype=np.float64)
        if variant == "qwen2.5-vl" and kind == "video":
            with np.errstate(over="ignore", invalid="ignore"):
                tau = np.floor(k * (nu * seconds))
            if not np.all(np.isfinite(tau)) or tau.max() > 2.0**53:
                raise ValueError(
                    "tokens_per_second times seconds_per_grid is too large: "
                    "the time ids overflow")
        else:
            tau = k
        T, H, W = np.meshgrid(tau.astype(np.int64), np.arange(h),
                              np.arange(w), indexing="ij")
        block = start + np.stack([T.ravel(), H.ravel(), W.ravel()])
        parts.append(block)
        if next_text == "largest":
            start = int(block.max()) + 1
        else:
            start += max(h, w)
    if not parts:
        return np.zeros((3, 0), dtype=np.int64)
    return np.concatenate(parts, axis=1).astype(np.int64)


def _mrope_section(section):
    what = "a list of 3 integers >= 0 (pairs for time, height, width)"
    items = None
    if not isinstance(section, (str, bytes, dict)):
        try:
            items = list(section)
        except TypeError:
            pass
    if (items is None or len(items) != 3
            or not all(_is_int(s) and s >= 0 for s in items)
            or sum(int(s) for s in items) == 0):
        raise ValueError(
            f"mrope_section must be {what} with a positive sum, got "
            f"{section!r}")
    return [int(s) for s in items]


def mrope_pair_axes(mrope_section, *, layout="chunked"):
    r"""Which axis (0 time, 1 height, 2 width) each rotated pair follows.

    With ``mrope_section`` :math:`= (d_t, d_h, d_w)` pairs per axis,
    :math:`d_t + d_h + d_w = d/2`, pair :math:`i` takes axis
    :math:`\chi(i)`:

    ``"chunked"`` (Qwen2-VL and Qwen2.5-VL, [Wang2024]_): consecutive
        blocks, :math:`\chi(i) = 0` for :math:`i < d_t`, 1 for
        :math:`d_t \le i < d_t + d_h`, 2 after
        (transformers, ``Qwen2VLRotaryEmbedding.recomposition_frequencies``:
        ``freq.split(mrope_section)``, chunk ``i % 3``). Since pair
        :math:`i` has frequency :math:`b^{-2i/d}`, time gets the fastest
        pairs and width the slowest: [16, 24, 24] gives time the 16
        fastest of 64.
    ``"interleaved"`` (Qwen3-VL, [Bai2025b]_): the axes take turns,
        :math:`\chi(i) = 1` for :math:`i \equiv 1 \pmod 3,\ i < 3d_h`,
        :math:`\chi(i) = 2` for :math:`i \equiv 2 \pmod 3,\ i < 3d_w`, and
        time everywhere else (transformers,
        ``Qwen3VLTextRotaryEmbedding.recomposition_frequencies``:
        ``slice(offset, mrope_section[dim] * 3, 3)`` with offsets 1 and 2
        over a table of time), so that every axis spans the whole
        spectrum; [24, 20, 20] gives time pairs 0, 3, ..., 57 and the
        last four, 60-63. The slices stop at :math:`d/2`: where
        :math:`3d_h` or :math:`3d_w` passes it, the counts per axis are
        not ``mrope_section``'s ([2, 3, 3] gives time 3 pairs, height 3,
        width 2), in transformers as here.

    VideoRoPE ([Wei2025]_) argues for the opposite of the chunked order:
    time on the slowest pairs, where a long video does not wrap around.

    Parameters
    ----------
    mrope_section : sequence of 3 ints
        :math:`(d_t, d_h, d_w)`, each >= 0, as in the model's
        ``rope_parameters["mrope_section"]``.
    layout : {"chunked", "interleaved"}, optional

    Returns
    -------
    axes : ndarray of int64, shape (d_t + d_h + d_w,)

    Examples
    --------
    >>> mrope_pair_axes([2, 3, 3])
    array([0, 0, 1, 1, 1, 2, 2, 2])
    >>> mrope_pair_axes([2, 3, 3], layout="interleaved")
    array([0, 1, 2, 0, 1, 2, 0, 1])
    """
    section = _mrope_section(mrope_section)
    _check_choice("layout", layout, _MROPE_LAYOUTS)
    n = sum(section)
    _check_size(n)
    if layout == "chunked":
        return np.repeat(np.arange(3, dtype=np.int64), section)
    axes = np.zeros(n, dtype=np.int64)
    for axis, offset in ((1, 1), (2, 2)):
        axes[offset:3 * section[axis]:3] = axis
    return axes


def mrope_angles(position_ids, head_dim, mrope_section, *, base=10000.0,
                 layout="chunked"):
    r"""M-RoPE's angles: each pair turns with its own axis's id.

    .. math::

        \phi_i = \mathrm{pos}^{\chi(i)}\,\omega_i, \qquad
        \omega_i = b^{-2i/d},

    with :math:`\chi(i)` from :func:`mrope_pair_axes` and
    :math:`\mathrm{pos}^{0,1,2} = \mathrm{pos}^{t,h,w}` from
    :func:`mrope_position_ids`: a text token, whose three ids are equal,
    gets exactly 1-D RoPE. Apply with
    ``apply_rope_angles(x, angles, layout="half")``: transformers'
    Qwen-VL models rotate halves (``rotate_half``, the cos/sin tables
    built as ``torch.cat((freq, freq), dim=-1)``).

    Parameters
    ----------
    position_ids : array_like of int, shape (3, n)
        Time, height and width ids (any finite reals are accepted).
    head_dim : int
        :math:`d`, a positive even integer equal to
        ``2 * sum(mrope_section)``.
    mrope_section : sequence of 3 ints
    base : float, optional
        :math:`b`, ``rope_theta``; transformers' defaults are 1e6 for
        Qwen2-VL and Qwen2.5-VL and 5e5 for Qwen3-VL.
    layout : {"chunked", "interleaved"}, optional

    Returns
    -------
    angles : ndarray of float64, shape (n, head_dim // 2)

    Examples
    --------
    >>> ids = mrope_position_ids([1, ("image", (1, 2, 4))])  # 1 x 2 tokens
    >>> mrope_angles(ids, 8, [1, 1, 2])
    array([[0.   , 0.   , 0.   , 0.   ],
           [1.   , 0.1  , 0.01 , 0.001],
           [1.   , 0.1  , 0.02 , 0.002]])
    """
    section = _mrope_section(mrope_section)
    head_dim = _check_d("head_dim", head_dim)
    if head_dim != 2 * sum(section):
        raise ValueError(
            f"head_dim must be 2 * sum(mrope_section) = {2 * sum(section)}, "
            f"got {head_dim}")
    axes = mrope_pair_axes(section, layout=layout)
    what = "a 2-D array (3, n) of finite reals (time, height, width ids)"
    pos = _float_array("position_ids", position_ids, what)
    if pos.ndim != 2 or pos.shape[0] != 3:
        raise ValueError(f"position_ids must be {what}, got shape {pos.shape}")
    _check_size(pos.shape[1], head_dim // 2)
    omega = rope_frequencies(head_dim, base=base)
    with np.errstate(over="ignore", invalid="ignore"):
        angles = pos[axes].T * omega
    return _finite_angles(angles, "position_ids times frequencies")


# ---- chapter 10: a model's position layout, layer by layer

_ATTENTION_OF_LAYER_TYPE = {"full_attention": "full",
                            "sliding_attention": "sliding",
                            "chunked_attention": "chunked"}
_LLAMA4_TYPES = ("llama4", "llama4_text")


def _config_get(config, key, default=None):
    value = config.get(key, default)
    return default if value is None else value


def _config_int(config, key, minimum, default=None):
    value = _config_get(config, key, default)
    if value is None or not _is_int(value) or value < minimum:
        raise ValueError(f"config[{key!r}] must be an int >= {minimum}, "
                         f"got {config.get(key)!r}")
    return int(value)


def _layout_layer_types(config, n, rope_layer):
    """'full' | 'sliding' | 'chunked' for each layer."""
    types = config.get("layer_types")
    if types is not None:
        if (not isinstance(types, (list, tuple)) or len(types) != n):
            raise ValueError(
                f"config['layer_types'] must be a list of {n} layer types "
                f"(one per layer) from {sorted(_ATTENTION_OF_LAYER_TYPE)}, "
                f"got {types!r}")
        out = []
        for i, t in enumerate(types):
            if not isinstance(t, str) or t not in _ATTENTION_OF_LAYER_TYPE:
                raise ValueError(
                    f"config['layer_types'][{i}] must be one of "
                    f"{sorted(_ATTENTION_OF_LAYER_TYPE)}, got {t!r}")
            out.append(_ATTENTION_OF_LAYER_TYPE[t])
        return out
    window = config.get("sliding_window")
    pattern = config.get("sliding_window_pattern")
    if config.get("attention_chunk_size") is not None and any(rope_layer):
        # Llama 4: the RoPE layers attend in chunks, the NoPE layers to all
        return ["chunked" if r else "full" for r in rope_layer]
    if window is None or config.get("use_sliding_window") is False:
        return ["full"] * n
    if pattern is not None:  # Gemma 3, Cohere 2: every pattern-th is full
        p = _config_int(config, "sliding_window_pattern", 1)
        return ["sliding" if (i + 1) % p else "full" for i in range(n)]
    if config.get("max_window_layers") is not None:  # Qwen2
        first = _config_int(config, "max_window_layers", 0)
        return ["sliding" if i >= first else "full" for i in range(n)]
    return ["sliding"] * n  # Mistral: one window for every layer


def _layout_rope_layers(config, n):
    """True for each layer that rotates (no_rope_layers: 1 = RoPE)."""
    flags = config.get("no_rope_layers")
    interval = config.get("no_rope_layer_interval")
    if not flags:  # None or [] : transformers builds it from the interval
        if interval is None and config.get("model_type") not in (
                _LLAMA4_TYPES + ("smollm3",)):
            return [True] * n
        k = _config_int(config, "no_rope_layer_interval", 1, default=4)
        return [(i + 1) % k != 0 for i in range(n)]
    if not isinstance(flags, (list, tuple)) or len(flags) != n:
        raise ValueError(
            f"config['no_rope_layers'] must be a list of {n} flags (1 = the "
            f"layer uses RoPE, 0 = no position), got {flags!r}")
    out = []
    for i, v in enumerate(flags):
        if isinstance(v, (bool, np.bool_)) or (_is_int(v) and v in (0, 1)):
            out.append(bool(v))
        else:
            raise ValueError(f"config['no_rope_layers'][{i}] must be 0 or 1, "
                             f"got {v!r}")
    return out


def _layout_uses_alibi(config):
    pet = config.get("position_embedding_type")
    if pet is not None and pet not in ("alibi", "rope", "rotary"):
        raise ValueError(
            "config['position_embedding_type'] must be 'alibi', 'rope' or "
            f"'rotary' (position_layout covers RoPE, NoPE and ALiBi), got "
            f"{pet!r}")
    if config.get("model_type") == "baichuan" and not any(
            k in config for k in ("alibi", "use_alibi",
                                  "position_embedding_type")):
        # Baichuan 2's config.json is the same for both sizes; the model's
        # own code decides ([Baichuan2023]_, Section 2.4)
        raise ValueError(
            "config['model_type'] 'baichuan' does not say where positions "
            "are: Baichuan 2 7B uses RoPE and 13B ALiBi with the same keys; "
            "add config['use_alibi'] (True for 13B, False for 7B)")
    attn = config.get("attn_config")
    return bool(pet == "alibi" or config.get("alibi") is True
                or config.get("use_alibi") is True
                or config.get("model_type") == "bloom"
                or (isinstance(attn, dict) and attn.get("alibi") is True))


def _layout_rope_parameters(config, layer_type):
    """The rope parameters of one layer type, as a new dict with
    rope_theta, and the config key they came from."""
    rp = config.get("rope_parameters")
    if rp is not None:
        if not isinstance(rp, dict):
            raise ValueError(f"config['rope_parameters'] must be a dict, "
                             f"got {rp!r}")
        if any(k in _ATTENTION_OF_LAYER_TYPE for k in rp):
            params = rp.get(layer_type)
            key = f"rope_parameters[{layer_type!r}]"
            if not isinstance(params, dict):
                raise ValueError(f"config[{key!r}] must be a dict (the layer "
                                 f"type is in layer_types), got {params!r}")
        else:
            params, key = rp, "rope_parameters"
        params = dict(params)
        params.setdefault("rope_theta", _layout_theta(config))
        return params, key
    # transformers' legacy keys: rope_theta and rope_scaling; Gemma 3's
    # sliding layers use rope_local_base_freq and no scaling
    if (layer_type == "sliding_attention"
            and config.get("rope_local_base_freq") is not None):
        return ({"rope_type": "default",
                 "rope_theta": config["rope_local_base_freq"]},
                "rope_local_base_freq")
    scaling = config.get("rope_scaling")
    if scaling is not None and not isinstance(scaling, dict):
        raise ValueError(f"config['rope_scaling'] must be a dict or None, "
                         f"got {scaling!r}")
    params = dict(scaling or {})
    params.setdefault("rope_theta", _layout_theta(config))
    return params, "rope_scaling"


def _layout_theta(config):
    """rope_theta, or GPT-NeoX's rotary_emb_base, or 10000."""
    return _config_get(config, "rope_theta",
                       _config_get(config, "rotary_emb_base", 10000.0))


def _layout_scaling(config, params, key):
    """The scaling dict for rope_frequencies from one layer's parameters."""
    kind = params.get("rope_type", params.get("type", "default"))
    if not isinstance(kind, str) or kind not in _SCALING_KEYS:
        raise ValueError(f"config[{key!r}]['rope_type'] must be one of "
                         f"{tuple(_SCALING_KEYS)}, got {kind!r}")
    f = params.get("partial_rotary_factor")
    if f is None:
        f = _config_get(config, "partial_rotary_factor",
                        _config_get(config, "rotary_pct", 1.0))
    scaling = {"type": kind, "partial_rotary_factor": f}
    for k in _SCALING_KEYS[kind]:  # the length of a forward pass aside
        if (k not in ("partial_rotary_factor", "seq_len")
                and params.get(k) is not None):
            scaling[k] = params[k]
    top = ("original_max_position_embeddings", "max_position_embeddings")
    if kind in ("yarn", "llama3", "longrope"):
        L = config.get("original_max_position_embeddings",
                       config.get("max_position_embeddings"))
        if "original_max_position_embeddings" not in scaling and L:
            scaling["original_max_position_embeddings"] = L
    if kind in ("dynamic", "longrope") and config.get(top[1]) is not None:
        scaling.setdefault("max_position_embeddings", config[top[1]])
    if (kind == "yarn" and "factor" not in scaling
            and config.get(top[1]) and scaling.get(top[0])):
        scaling["factor"] = config[top[1]] / scaling[top[0]]
    return scaling


def position_layout(config):
    r"""Where a model puts positions, layer by layer, from its config.

    Reads a transformers-style config (the keys of a Hugging Face
    ``config.json``) and tells, for each layer, how it sees positions:
    RoPE with which frequencies ([Su2021]_, scaled as
    :func:`rope_frequencies`), no position at all (NoPE, [Kazemnejad2023]_)
    or ALiBi slopes ([Press2022]_); and over which keys it attends: all of
    them, a sliding window, or a chunk.

    The rules are transformers' (``configuration_*.py`` and
    ``modeling_rope_utils.py`` of version 5.24):

    * the head width :math:`d` is ``qk_rope_head_dim`` (DeepSeek's MLA,
      [DeepSeekV2]_), else ``head_dim``, else ``hidden_size //
      num_attention_heads``; Gemma 4's full-attention layers take
      ``global_head_dim`` (or ``per_layer_config[i]["head_dim"]``);
    * ``layer_types`` (``"full_attention"``, ``"sliding_attention"``,
      ``"chunked_attention"``) give the attention of each layer, with
      ``sliding_window`` and ``attention_chunk_size``; without it,
      ``attention_chunk_size`` makes the RoPE layers chunked (Llama 4,
      [Llama4]_), ``sliding_window_pattern`` :math:`p` makes every
      :math:`p`-th layer full and the others sliding (Gemma 3,
      [Gemma3]_), ``max_window_layers`` :math:`k` makes the layers from
      :math:`k` on sliding (Qwen2, if ``use_sliding_window``), and a lone
      ``sliding_window`` makes every layer sliding (Mistral);
    * ``no_rope_layers[i]`` is 1 where layer :math:`i` rotates and 0 where
      it is NoPE (Llama 4, SmolLM3 [SmolLM3]_); without it,
      ``no_rope_layer_interval`` :math:`k` (default 4 for Llama 4 and
      SmolLM3) makes every :math:`k`-th layer NoPE; ``model_type``
      ``"cohere2"`` (Command R7B, Command A [Cohere2025]_) has NoPE in
      every full-attention layer, as ``Cohere2Attention`` rotates only
      where it has a sliding window. Llama 4's NoPE layers
      scale their queries by :func:`nope_attention_temperature` when
      ``attn_temperature_tuning`` (default on there), with ``floor_scale``
      and ``attn_scale``;
    * ``rope_parameters`` (``rope_theta``, ``rope_type`` and the keys of
      :func:`rope_frequencies`), keyed by layer type when the types differ
      (Gemma 3 and 4); or the older ``rope_theta`` (default 10000) with
      ``rope_scaling`` (GPT-NeoX: ``rotary_emb_base``), and Gemma 3's
      ``rope_local_base_freq`` for the
      sliding layers; ``partial_rotary_factor`` (or GPT-NeoX's
      ``rotary_pct``) inside or beside them; ``original_max_position_
      embeddings`` and ``max_position_embeddings`` beside them fill the
      scaling keys that need them, as transformers does; keys that
      position_layout does not use (``mrope_section``, ...) are ignored;
    * ALiBi for every layer if ``alibi`` (Falcon), ``use_alibi``,
      ``attn_config["alibi"]`` (MPT) is true, ``position_embedding_type``
      is ``"alibi"``, or ``model_type`` is ``"bloom"``. Baichuan 2's
      config.json (``model_type: "baichuan"``) is the same for its 7B
      (RoPE) and 13B (ALiBi) models ([Baichuan2023]_, Section 2.4): it
      needs ``use_alibi``, else it is refused.

    Parameters
    ----------
    config : dict
        Needs ``num_hidden_layers`` and the head width (above).

    Returns
    -------
    layers : list of dict
        One dict per layer, with the keys

        ``layer`` (its index), ``kind`` (``"rope"``, ``"nope"`` or
        ``"alibi"``), ``attention`` (``"full"``, ``"sliding"`` or
        ``"chunked"``), ``window`` (``sliding_window`` for a sliding layer,
        else None), ``chunk`` (``attention_chunk_size`` for a chunked
        layer, else None), ``head_dim`` :math:`d`, ``rotated_pairs`` (0
        unless RoPE), and for RoPE layers (None otherwise): ``base``,
        ``fraction`` (the partial rotary factor), ``convention``
        (``"spread"`` or ``"proportional"``, as
        :func:`partial_rope_frequencies`), ``scaling`` (the dict given to
        :func:`rope_frequencies`), ``rope_parameters`` (the layer's
        parameters as read), ``inverse_frequencies`` (:math:`d/2` floats),
        ``long_inverse_frequencies`` (LongRoPE's beyond the original
        length, else None) and ``attention_factor``
        (:func:`rope_attention_factor`); ``temperature`` (``{"floor_scale":
        F, "attn_scale": a}`` for Llama 4's NoPE layers, else None);
        ``alibi_slopes`` (:func:`alibi_slopes` of ``num_attention_heads``
        for ALiBi layers, else None).

    Examples
    --------
    >>> layers = position_layout({"num_hidden_layers": 4, "head_dim": 8,
    ...     "rope_theta": 100.0, "no_rope_layers": [1, 1, 1, 0],
    ...     "attention_chunk_size": 8192})
    >>> [(x["kind"], x["attention"]) for x in layers]
    [('rope', 'chunked'), ('rope', 'chunked'), ('rope', 'chunked'), ('nope', 'full')]
    >>> layers[3]["temperature"] is None, layers[0]["chunk"]
    (True, 8192)
    >>> layers[0]["inverse_frequencies"]
    array([1.        , 0.31622777, 0.1       , 0.03162278])
    """
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict (the keys of a Hugging Face "
                         f"config.json), got {type(config).__name__}")
    n = _config_int(config, "num_hidden_layers", 1)
    if "qk_rope_head_dim" in config and config["qk_rope_head_dim"]:
        dim_key = "qk_rope_head_dim"
        d = config[dim_key]
    elif config.get("head_dim"):
        dim_key, d = "head_dim", config["head_dim"]
    else:
        dim_key = "hidden_size"
        hidden = _config_int(config, "hidden_size", 1)
        heads = _config_int(config, "num_attention_heads", 1)
        if hidden % heads:
            raise ValueError(
                "config['hidden_size'] must be a multiple of "
                "config['num_attention_heads'] when head_dim is not given, "
                f"got {hidden} and {heads}")
        d = hidden // heads
    if not _is_int(d) or d < 2 or d % 2:
        raise ValueError(f"config[{dim_key!r}] must give a positive even "
                         f"head width, got {d!r}")
    _check_size(n, d // 2)
    alibi = _layout_uses_alibi(config)
    rope_layer = [False] * n if alibi else _layout_rope_layers(config, n)
    attention = _layout_layer_types(config, n, rope_layer)
    if config.get("model_type") == "cohere2" and not alibi:
        # Cohere2Attention rotates in its sliding layers only
        rope_layer = [a == "sliding" for a in attention]
    slopes = None
    if alibi:
        slopes = alibi_slopes(_config_int(config, "num_attention_heads", 1))
    tuning = config.get("attn_temperature_tuning",
                        config.get("model_type") in _LLAMA4_TYPES)
    temperature = None
    if tuning:
        temperature = {"floor_scale": _config_get(config, "floor_scale", 8192),
                       "attn_scale": _config_get(config, "attn_scale", 0.1)}
        for key in temperature:
            try:
                nope_attention_temperature(1, **temperature)
            except ValueError as err:
                raise ValueError(f"config[{key!r}]: {err}") from err
    overrides = config.get("per_layer_config") or {}
    cache = {}
    layers = []
    for i in range(n):
        ltype = {"full": "full_attention", "sliding": "sliding_attention",
                 "chunked": "chunked_attention"}[attention[i]]
        head = d
        over = overrides.get(i, overrides.get(str(i))) if isinstance(
            overrides, dict) else None
        if isinstance(over, dict) and over.get("head_dim"):
            head, dim_key_i = over["head_dim"], f"per_layer_config[{i}]"
        elif ltype == "full_attention" and config.get("global_head_dim"):
            head, dim_key_i = config["global_head_dim"], "global_head_dim"
        else:
            dim_key_i = dim_key
        if not _is_int(head) or head < 2 or head % 2:
            raise ValueError(f"config[{dim_key_i!r}] must give a positive "
                             f"even head width, got {head!r}")
        layer = {"layer": i, "kind": "rope", "attention": attention[i],
                 "window": None, "chunk": None, "head_dim": int(head),
                 "rotated_pairs": 0, "base": None, "fraction": None,
                 "convention": None, "scaling": None,
                 "rope_parameters": None, "inverse_frequencies": None,
                 "long_inverse_frequencies": None, "attention_factor": None,
                 "temperature": None, "alibi_slopes": None}
        if attention[i] == "sliding":
            layer["window"] = _config_int(config, "sliding_window", 1)
        elif attention[i] == "chunked":
            layer["chunk"] = _config_int(config, "attention_chunk_size", 1)
        if alibi:
            layer["kind"] = "alibi"
            layer["alibi_slopes"] = slopes.copy()
        elif not rope_layer[i]:
            layer["kind"] = "nope"
            if temperature is not None:
                layer["temperature"] = dict(temperature)
        else:
            if (ltype, head) not in cache:
                cache[ltype, head] = _layout_rope(config, ltype, int(head))
            for k, v in cache[ltype, head].items():
                layer[k] = v.copy() if hasattr(v, "copy") else v
        layers.append(layer)
    return layers


def _layout_rope(config, layer_type, head):
    params, key = _layout_rope_parameters(config, layer_type)
    scaling = _layout_scaling(config, params, key)
    base = params["rope_theta"]
    try:
        base = _check_base(base)
    except ValueError as err:
        raise ValueError(f"config[{key!r}]['rope_theta']: {err}") from err
    try:
        omega = rope_frequencies(head, base=base, scaling=scaling)
        factor = rope_attention_factor(scaling)
        long = None
        if scaling["type"] == "longrope":
            long = rope_frequencies(head, base=base, scaling=dict(
                scaling,
                seq_len=scaling["original_max_position_embeddings"] + 1))
    except ValueError as err:
        raise ValueError(f"config[{key!r}]: {err}") from err
    f = float(scaling["partial_rotary_factor"])
    proportional = scaling["type"] == "proportional"
    pairs = (int(f * head // 2) if proportional
             else (int(head * f) + 1) // 2)
    return {"rotated_pairs": pairs, "base": base, "fraction": f,
            "convention": "proportional" if proportional else "spread",
            "scaling": scaling, "rope_parameters": params,
            "inverse_frequencies": omega, "long_inverse_frequencies": long,
            "attention_factor": factor}


# ---- chapter 11: positions at inference
#
# The KV cache, what it costs and which positions its keys carry; and the
# plumbing that brings positions to a model (padding, packing, weight
# layouts, RoPE-free offsets). Token indices are counted from 0 in the
# order the tokens arrive.

_KV_KINDS = ("mha", "gqa", "mqa", "mla")
_STREAMING_POSITIONS = ("cache", "original")


def _check_bytes_per_value(value):
    return _check_real("bytes_per_value", value, low=0.0,
                       what="a finite number > 0 (2 for bfloat16)")


def _check_id(name, value):
    # a position id: an integer that leaves int64 room for the positions
    # counted from it
    if not _is_int(value) or abs(int(value)) > 2**62:
        raise ValueError(
            f"{name} must be an integer with |{name}| <= 2**62, got "
            f"{value!r}")
    return int(value)


def kv_cache_bytes(kind, *, n_layers, n_heads=None, head_dim=None,
                   n_kv_heads=None, kv_lora_rank=None, qk_rope_head_dim=None,
                   tokens=1, bytes_per_value=2):
    r"""Bytes a KV cache holds for ``tokens`` tokens.

    The number of cached values per token, over
    :math:`n_{\mathrm{layers}}` layers (DeepSeek-V2 [DeepSeekV2]_, Table 1,
    where it is written :math:`l`), times ``bytes_per_value``:

    ===========================  ==============================================
    ``"mha"`` multi-head         :math:`2 H d_k\, n_{\mathrm{layers}}`
    ``"gqa"`` grouped-query      :math:`2 H_{kv} d_k\, n_{\mathrm{layers}}`
    ``"mqa"`` multi-query        :math:`2 d_k\, n_{\mathrm{layers}}`
    ``"mla"`` latent (MLA)       :math:`(d_c + d^R_h)\, n_{\mathrm{layers}}`
    ===========================  ==============================================

    A key and a value of width :math:`d_k` for each of the :math:`H`
    heads (MHA, [Vaswani2017]_), of the :math:`H_{kv}` = ``n_kv_heads``
    groups (GQA, [Ainslie2023]_) or of one shared head (MQA,
    [Shazeer2019]_); MLA caches the latent :math:`\mathbf c^{KV}` of
    width :math:`d_c` = ``kv_lora_rank`` and the one rotary key
    :math:`\mathbf k^R` of width :math:`d^R_h` = ``qk_rope_head_dim``
    that all heads share, as DeepSeek-V2 and V3 ([DeepSeekV3]_) describe
    it. transformers 5.24's ``DeepseekV3Attention`` caches exactly these
    two (``cache.update(kv_nope, k_rot, ...)``: the normalised latent as
    the "keys", the rotated shared key as the "values"); its 4.x versions
    cached the keys and values rebuilt for every head,
    :math:`H(d^{\mathrm{nope}}_h + d^R_h + d_v)\, n_{\mathrm{layers}}`
    values per token.

    Keys are cached after their rotation: a cached key carries the
    position it was rotated with (chapter 11).

    Parameters
    ----------
    kind : {"mha", "gqa", "mqa", "mla"}
    n_layers : int
        :math:`n_{\mathrm{layers}}`, the layers with a cache
        (``num_hidden_layers``), >= 1.
    n_heads : int, optional
        :math:`H` (``num_attention_heads``); needed for "mha" and "gqa".
    head_dim : int, optional
        :math:`d_k` (``head_dim``); needed for all but "mla".
    n_kv_heads : int, optional
        :math:`H_{kv}` (``num_key_value_heads``), needed for "gqa": a
        divisor of ``n_heads``. For "mqa" it may be given, as 1.
    kv_lora_rank, qk_rope_head_dim : int, optional
        :math:`d_c` and :math:`d^R_h`, needed for "mla" (DeepSeek-V3:
        512 and 64).
    tokens : int, optional
        Tokens in the cache, >= 0.
    bytes_per_value : float, optional
        2 for bfloat16 and float16, 1 for an 8-bit cache, 0.5 for 4 bits.

    Returns
    -------
    int or float
        An ``int`` when ``bytes_per_value`` is an integer, else a float.

    Examples
    --------
    Llama 3.1 8B (32 layers, 32 heads, 8 groups of width 128), 8192 tokens
    in bfloat16, is 1 GiB:

    >>> kv_cache_bytes("gqa", n_layers=32, n_heads=32, head_dim=128,
    ...                n_kv_heads=8, tokens=8192) / 2**30
    1.0

    DeepSeek-V2 takes :math:`d_c = 4 d_k` and :math:`d^R_h = d_k/2`: as
    much cache as GQA with 2.25 groups.

    >>> mla = kv_cache_bytes("mla", n_layers=1, kv_lora_rank=512,
    ...                      qk_rope_head_dim=64)
    >>> mla / kv_cache_bytes("mqa", n_layers=1, head_dim=128)
    2.25
    """
    _check_choice("kind", kind, _KV_KINDS)
    n_layers = _check_int("n_layers", n_layers, 1)
    tokens = _check_int("tokens", tokens, 0)
    exact = _is_int(bytes_per_value)
    bpv = _check_bytes_per_value(bytes_per_value)
    if kind == "mla":
        for name, value in (("n_kv_heads", n_kv_heads),):
            if value is not None:
                raise ValueError(
                    f"{name} must be None for kind 'mla' (MLA caches one "
                    f"latent per token), got {value!r}")
        for name, value in (("n_heads", n_heads), ("head_dim", head_dim)):
            if value is not None:  # not needed, but not junk either
                _check_int(name, value, 1)
        if kv_lora_rank is None or qk_rope_head_dim is None:
            raise ValueError(
                "kind 'mla' needs kv_lora_rank and qk_rope_head_dim")
        d_c = _check_int("kv_lora_rank", kv_lora_rank, 1)
        d_r = _check_int("qk_rope_head_dim", qk_rope_head_dim, 0)
        values = (d_c + d_r) * n_layers
    else:
        if kv_lora_rank is not None or qk_rope_head_dim is not None:
            raise ValueError(
                f"kv_lora_rank and qk_rope_head_dim are for kind 'mla' "
                f"only, not {kind!r}")
        if head_dim is None:
            raise ValueError(f"kind {kind!r} needs head_dim")
        head_dim = _check_int("head_dim", head_dim, 1)
        if kind == "mqa":
            if n_kv_heads is not None and (not _is_int(n_kv_heads)
                                           or n_kv_heads != 1):
                raise ValueError(
                    f"n_kv_heads must be 1 or None for kind 'mqa', got "
                    f"{n_kv_heads!r}")
            if n_heads is not None:
                _check_int("n_heads", n_heads, 1)
            groups = 1
        else:
            if n_heads is None:
                raise ValueError(f"kind {kind!r} needs n_heads")
            n_heads = _check_int("n_heads", n_heads, 1)
            if kind == "mha":
                if n_kv_heads is not None and (not _is_int(n_kv_heads)
                                               or n_kv_heads != n_heads):
                    raise ValueError(
                        f"n_kv_heads must be None or n_heads ({n_heads}) "
                        f"for kind 'mha', got {n_kv_heads!r}")
                groups = n_heads
            else:
                if n_kv_heads is None:
                    raise ValueError("kind 'gqa' needs n_kv_heads")
                groups = _check_int("n_kv_heads", n_kv_heads, 1)
                if n_heads % groups:
                    raise ValueError(
                        f"n_kv_heads must divide n_heads ({n_heads}), got "
                        f"{groups}")
        values = 2 * groups * head_dim * n_layers
    total = values * tokens
    # Python ints do not overflow; a result beyond int64 (8 EiB) is refused
    # rather than returned as an unbounded int or a float inf
    if total > 2**63 - 1 or total > (2**63 - 1) / bpv:
        raise ValueError(
            f"the sizes (n_layers, n_heads, n_kv_heads, head_dim, "
            f"kv_lora_rank, qk_rope_head_dim, tokens) give {total} cached "
            f"values, times bytes_per_value = {bytes_per_value!r}: more "
            "than 2**63 - 1 bytes")
    return total * int(bytes_per_value) if exact else total * bpv


def position_ids_from_attention_mask(attention_mask, *, fill_value=0):
    r"""Position ids of a left-padded batch, as transformers' generation.

    .. math::

        \mathrm{pos}_j = \Bigl(\sum_{j' \le j} \alpha_{j'}\Bigr) - 1
        \quad\text{where } \alpha_j = 1, \qquad
        \mathrm{pos}_j = \texttt{fill\_value} \quad\text{where }
        \alpha_j = 0,

    for the attention mask :math:`\alpha` of one row (1 for a token, 0 for
    padding): each sequence counts its own tokens from 0, wherever its
    padding ends. This is ``GenerationMixin._prepare_position_ids_for_
    generation`` of transformers 5.24 (``attention_mask.long().cumsum(-1)
    - 1``, then ``masked_fill(attention_mask == 0, 0)``). transformers 4.x
    filled padding with 1 (``masked_fill_(attention_mask == 0, 1)`` in the
    models' ``prepare_inputs_for_generation``), as some models still do
    (Qwen2.5-Omni): ``fill_value=1``. Padding is masked, so the value
    there changes no output. Without these ids a model numbers the slots
    ``0, 1, ..., n-1`` and a left-padded sequence starts at the number of
    its padding tokens. RoPE's scores depend on differences of positions
    only, so a RoPE model (Llama) computes the same logits up to
    rounding; a model with a table of absolute positions (GPT-2, BERT)
    reads other rows of it and computes other logits (chapter 11).

    Parameters
    ----------
    attention_mask : array_like of 0 and 1 (or bool), shape (n,) or (batch, n)
    fill_value : int, optional
        The id given to padding.

    Returns
    -------
    ndarray of int64, same shape as ``attention_mask``

    Examples
    --------
    >>> position_ids_from_attention_mask([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    array([[0, 0, 0, 1, 2],
           [0, 1, 2, 3, 4]])
    """
    what = "an array (n,) or (batch, n) of 0 and 1"
    if isinstance(attention_mask, (str, bytes)):
        raise ValueError(f"attention_mask must be {what}, got "
                         f"{attention_mask!r}")
    try:
        a = np.asarray(attention_mask)
    except (TypeError, ValueError) as err:
        raise ValueError(f"attention_mask must be {what} ({err})") from None
    if a.dtype == bool:
        a = a.view(np.uint8)  # no copy: _integer_array checks the size first
    a = _integer_array("attention_mask", a, what)
    if a.ndim not in (1, 2) or not np.isin(a, (0, 1)).all():
        raise ValueError(f"attention_mask must be {what}, got shape "
                         f"{a.shape} with values {np.unique(a)[:5].tolist()}")
    fill_value = _check_id("fill_value", fill_value)
    pos = np.cumsum(a, axis=-1) - 1
    pos[a == 0] = fill_value
    return pos


def _check_lengths(lengths):
    what = "a non-empty 1-D sequence of positive integer lengths"
    if _is_int(lengths):
        raise ValueError(f"lengths must be {what}, got {lengths!r}")
    arr = _integer_array("lengths", lengths, what)
    if arr.ndim != 1 or arr.size == 0 or (arr <= 0).any():
        raise ValueError(f"lengths must be {what}, got "
                         f"{np.asarray(lengths).tolist()!r}")
    # summed in float64 (exact below 2**53): an int64 sum of lengths up to
    # 2**53 each can wrap around and pass the check
    _check_size(int(arr.sum(dtype=np.float64)))
    return arr


def packed_position_ids(lengths, *, start=0):
    r"""Position ids of documents packed into one row, reset per document.

    Documents of lengths :math:`n_1, n_2, \dots` concatenated into one
    sequence get :math:`\mathrm{start}, \dots, \mathrm{start} + n_k - 1`
    each, as transformers' ``DataCollatorWithFlattening`` returns them
    (``position_ids_start``, default 0; RoBERTa-like models number from
    ``padding_idx + 1``). With these ids and
    :func:`packed_attention_mask`, each document is computed as if it
    were alone. transformers finds the documents back from such ids
    (:func:`packed_sequence_indices`).

    Parameters
    ----------
    lengths : sequence of int
        The documents' lengths, each >= 1.
    start : int, optional
        The id of every document's first token.

    Returns
    -------
    ndarray of int64, shape (sum(lengths),)

    Examples
    --------
    >>> packed_position_ids([3, 2, 4])
    array([0, 1, 2, 0, 1, 0, 1, 2, 3])
    """
    lengths = _check_lengths(lengths)
    start = _check_id("start", start)
    ends = np.cumsum(lengths)
    offsets = np.repeat(ends - lengths, lengths)
    return np.arange(ends[-1], dtype=np.int64) - offsets + start


def packed_sequence_indices(position_ids):
    r"""Which packed document each token belongs to, from its position ids.

    A new document starts wherever the id does not grow by exactly one:
    :math:`s_j = \#\{j' \le j : \mathrm{pos}_{j'} - \mathrm{pos}_{j'-1}
    \ne 1\}` (the first token counted as continuing), as transformers'
    ``masking_utils.find_packed_sequence_indices``, which builds the
    block-diagonal mask from them when ``position_ids`` are packed and no
    mask is given (transformers returns None when a row holds one
    document only; this function returns its zeros).

    Parameters
    ----------
    position_ids : array_like of int, shape (n,) or (batch, n)

    Returns
    -------
    ndarray of int64, same shape

    Examples
    --------
    >>> packed_sequence_indices([0, 1, 2, 0, 1, 0, 1, 2, 3])
    array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    """
    what = "an array (n,) or (batch, n) of integer position ids"
    pos = _integer_array("position_ids", position_ids, what)
    if pos.ndim not in (1, 2) or pos.shape[-1] == 0:
        raise ValueError(f"position_ids must be {what}, got shape "
                         f"{pos.shape}")
    first = pos[..., :1] - 1
    step = np.diff(pos, prepend=first, axis=-1)
    return np.cumsum(step != 1, axis=-1)


def packed_attention_mask(lengths, *, causal=True):
    r"""The block-diagonal mask of packed documents.

    .. math::

        B^{\mathrm{pack}}_{m\ell} = \begin{cases}
        0 & \mathrm{doc}(m) = \mathrm{doc}(\ell),\ \ell \le m, \\
        -\infty & \text{otherwise,} \end{cases}

    returned as True where :math:`B^{\mathrm{pack}}_{m\ell} = 0`, where
    query :math:`m` may attend to key :math:`\ell` (``causal=False``
    drops the condition :math:`\ell \le m`): no attention crosses a
    document boundary. As a bias for :func:`self_attention`:
    ``np.where(mask, 0.0, -np.inf)``.

    Parameters
    ----------
    lengths : sequence of int
        The documents' lengths, each >= 1.
    causal : bool, optional

    Returns
    -------
    ndarray of bool, shape (n, n), n = sum(lengths)

    Examples
    --------
    >>> packed_attention_mask([2, 1]).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [0, 0, 1]])
    """
    lengths = _check_lengths(lengths)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    n = int(lengths.sum())
    _check_size(n, n)
    doc = np.repeat(np.arange(lengths.size), lengths)
    mask = doc[:, None] == doc[None, :]
    if causal:
        mask &= np.tri(n, dtype=bool)
    return mask


def _check_rows(w, n_heads):
    what = "a 1-D or 2-D array whose first axis is n_heads * head_dim"
    w = _float_array("w", w, what)
    n_heads = _check_int("n_heads", n_heads, 1)
    if w.ndim not in (1, 2) or w.shape[0] % n_heads or (
            w.shape[0] // n_heads) % 2 or w.shape[0] == 0:
        raise ValueError(
            f"w must be {what} with an even head_dim (n_heads = {n_heads}), "
            f"got shape {w.shape}")
    return w, n_heads, w.shape[0] // n_heads


def permute_rotary_half(w, n_heads):
    r"""Reorder q/k projection rows from Meta's interleaved layout to half.

    Meta's Llama code rotates the pairs :math:`(2i, 2i+1)` of each head
    (complex numbers, ``torch.view_as_complex``); transformers' Llama
    rotates :math:`(i, i + d_k/2)` (``rotate_half``). The checkpoint
    converter ``convert_llama_weights_to_hf.py`` of transformers therefore
    reorders the output rows of each head of ``wq`` and ``wk``, even rows
    first, then odd:

    .. math::

        W'_{h d_k + j} = W_{h d_k + p_j}, \qquad
        p = (0, 2, \dots, d_k - 2,\ 1, 3, \dots, d_k - 1)

    (:func:`rope_layout_permutation`; the converter's ``permute(w,
    n_heads)``, ``w.view(n_heads, dim1 // n_heads // 2, 2, dim2)
    .transpose(1, 2).reshape(dim1, dim2)``). Query and key permuted alike
    leave every score unchanged, so the half-layout model with
    :math:`W'` computes what the interleaved one computes with
    :math:`W`; loaded without the permutation, it rotates the wrong pairs.
    The value and output projections are not touched.

    Parameters
    ----------
    w : array_like, shape (n_heads * head_dim, d_in) or (n_heads * head_dim,)
        The weight in torch's layout (one row per output feature), or a
        bias.
    n_heads : int
        Heads of this projection (``num_key_value_heads`` for ``wk``).

    Returns
    -------
    ndarray of float64, same shape as ``w``

    Examples
    --------
    >>> permute_rotary_half(np.arange(8.0), 2)
    array([0., 2., 1., 3., 4., 6., 5., 7.])
    """
    w, n_heads, head_dim = _check_rows(w, n_heads)
    p = rope_layout_permutation(head_dim)
    rows = (np.arange(n_heads)[:, None] * head_dim + p).ravel()
    return w[rows]


def unpermute_rotary_half(w, n_heads):
    r"""Reorder q/k projection rows from the half layout back to Meta's.

    The inverse of :func:`permute_rotary_half`,
    :math:`W_{h d_k + p_j} = W'_{h d_k + j}`: what a converter from
    transformers back to Meta's format applies.

    Parameters
    ----------
    w : array_like, shape (n_heads * head_dim, d_in) or (n_heads * head_dim,)
    n_heads : int

    Returns
    -------
    ndarray of float64, same shape as ``w``

    Examples
    --------
    >>> unpermute_rotary_half([0.0, 2.0, 1.0, 3.0], 1)
    array([0., 1., 2., 3.])
    """
    w, n_heads, head_dim = _check_rows(w, n_heads)
    p = rope_layout_permutation(head_dim)
    rows = (np.arange(n_heads)[:, None] * head_dim
            + np.argsort(p)).ravel()
    return w[rows]


def roberta_position_ids(input_ids, *, padding_idx=1,
                         past_key_values_length=0):
    r"""RoBERTa's position ids: counted from ``padding_idx + 1``.

    .. math::

        \mathrm{pos}_j = \bigl(\textstyle\sum_{j' \le j} \alpha_{j'}
        + c\bigr)\, \alpha_j + \texttt{padding\_idx},
        \qquad \alpha_j = [\,\mathrm{id}_j \ne \texttt{padding\_idx}\,],

    with :math:`c` = ``past_key_values_length``: transformers'
    ``create_position_ids_from_input_ids`` of ``modeling_roberta``
    (``cache_length`` in 5.24), after fairseq's ``make_positions``
    ([Liu2019]_, [Ott2019]_). Padding gets ``padding_idx`` itself, whose
    row of the table is never trained; the first token gets
    ``padding_idx + 1`` (2 for RoBERTa). The learned table of RoBERTa
    base has ``max_position_embeddings = 514`` rows, so 512 tokens fit:
    the 513th asks for row 514, which does not exist (an ``IndexError``
    in PyTorch), and a model whose ids start at 0 uses rows the checkpoint
    never trained for them.

    Parameters
    ----------
    input_ids : array_like of int, shape (n,) or (batch, n)
    padding_idx : int, optional
        The padding token's id (1 for RoBERTa).
    past_key_values_length : int, optional
        Tokens already in the cache, >= 0.

    Returns
    -------
    ndarray of int64, same shape as ``input_ids``

    Examples
    --------
    >>> roberta_position_ids([[0, 31414, 232, 2], [0, 31414, 2, 1]])
    array([[2, 3, 4, 5],
           [2, 3, 4, 1]])
    """
    what = "an array (n,) or (batch, n) of integer token ids"
    ids = _integer_array("input_ids", input_ids, what)
    if ids.ndim not in (1, 2):
        raise ValueError(f"input_ids must be {what}, got shape {ids.shape}")
    # ids are exact up to 2**53; so are the counts, bounded like them (a
    # larger int would overflow int64 or not convert at all)
    bounded = "an integer in [0, 2**53]"
    padding_idx = _check_int("padding_idx", padding_idx, 0, bounded)
    past = _check_int("past_key_values_length", past_key_values_length, 0,
                      bounded)
    for name, value in (("padding_idx", padding_idx),
                        ("past_key_values_length", past)):
        if value > 2**53:
            raise ValueError(f"{name} must be {bounded}, got {value!r}")
    mask = (ids != padding_idx).astype(np.int64)
    return (np.cumsum(mask, axis=-1) + past) * mask + padding_idx


def _check_window(length, window, n_sinks):
    length = _check_int("length", length, 0)
    n_sinks = _check_int("n_sinks", n_sinks, 0)
    window = _check_int("window", window, n_sinks + 1,
                        f"an integer > n_sinks ({n_sinks})")
    if length >= 2**63:  # the stream's indices are int64
        raise ValueError(f"length must be an integer in [0, 2**63), got "
                         f"{length!r}")
    _check_size(min(length, window))
    return length, window, n_sinks


def streaming_cache(length, *, window, n_sinks=4):
    r"""The tokens a StreamingLLM cache holds after ``length`` tokens.

    StreamingLLM ([Xiao2024]_) keeps the first :math:`n_{\mathrm{sink}}`
    tokens, the attention sinks, and the last
    :math:`n_{\mathrm{win}} - n_{\mathrm{sink}}`: while
    :math:`n \le n_{\mathrm{win}}` every token, then

    .. math::

        \{0, \dots, n_{\mathrm{sink}} - 1\} \cup
        \{n - (n_{\mathrm{win}} - n_{\mathrm{sink}}), \dots, n - 1\}.

    This is ``StartRecentKVCache.__call__`` of mit-han-lab/streaming-llm
    (``streaming_llm/kv_cache.py``), with ``start_size`` =
    :math:`n_{\mathrm{sink}}`, ``recent_size`` = :math:`n_{\mathrm{win}} -
    n_{\mathrm{sink}}` and ``cache_size`` = :math:`n_{\mathrm{win}}`,
    applied after each token (``examples/eval_long_ppl.py``): the next
    token attends to these :math:`\min(n, n_{\mathrm{win}})` keys and to
    itself. ``n_sinks=0`` is a plain sliding window; transformers'
    ``DynamicSlidingWindowLayer`` with ``sliding_window`` :math:`w` keeps
    the last :math:`w - 1` keys, ``window=w - 1, n_sinks=0``. transformers
    5.24 has no cache with sinks (the ``SinkCache`` of its 4.x versions is
    gone).

    Parameters
    ----------
    length : int
        :math:`n`, tokens seen so far, >= 0.
    window : int
        :math:`n_{\mathrm{win}}`, the cache's size, > ``n_sinks``.
    n_sinks : int, optional
        :math:`n_{\mathrm{sink}}`, 4 in the paper.

    Returns
    -------
    ndarray of int64, shape (min(length, window),)
        The cached tokens' indices in the stream, in cache order.

    Examples
    --------
    >>> streaming_cache(10, window=6, n_sinks=2)
    array([0, 1, 6, 7, 8, 9])
    """
    length, window, n_sinks = _check_window(length, window, n_sinks)
    if length <= window:
        return np.arange(length, dtype=np.int64)
    return np.concatenate([
        np.arange(n_sinks, dtype=np.int64),
        np.arange(length - (window - n_sinks), length, dtype=np.int64)])


def streaming_positions(length, *, window, n_sinks=4, positions="cache"):
    r"""The positions a StreamingLLM cache's keys are rotated with.

    ``"cache"``: a key's index in the cache, :math:`0, \dots,
    \min(n, n_{\mathrm{win}}) - 1`, as StreamingLLM's "pos_shift" attention
    ([Xiao2024]_, section 3.2; ``llama_pos_shift_attention_forward`` in
    ``streaming_llm/pos_shift/modify_llama.py``), which caches keys
    *before* the rotation and rotates all of them at every step with
    ``key_position_ids = torch.arange(kv_seq_len)``; the new token's
    query then has position :math:`\min(n, n_{\mathrm{win}})` ("query pos
    is min(cache_size, idx)"), so no distance exceeds
    :math:`n_{\mathrm{win}}`.

    ``"original"``: their positions in the stream (the indices of
    :func:`streaming_cache`), which a cache of keys rotated *before*
    caching keeps (transformers' caches): distances to the first tokens
    grow without bound past the training length, and the new query has
    position :math:`n`.

    Parameters
    ----------
    length : int
        :math:`n`, tokens seen so far, >= 0.
    window : int
        :math:`n_{\mathrm{win}}`, > ``n_sinks``.
    n_sinks : int, optional
    positions : {"cache", "original"}, optional

    Returns
    -------
    ndarray of int64, shape (min(length, window),)

    Examples
    --------
    >>> streaming_positions(10, window=6, n_sinks=2)
    array([0, 1, 2, 3, 4, 5])
    >>> streaming_positions(10, window=6, n_sinks=2, positions="original")
    array([0, 1, 6, 7, 8, 9])
    """
    _check_choice("positions", positions, _STREAMING_POSITIONS)
    kept = streaming_cache(length, window=window, n_sinks=n_sinks)
    if positions == "original":
        return kept
    return np.arange(kept.size, dtype=np.int64)


_MLA_ROPE = ("decoupled", "none", "coupled")
#: The epsilon of DeepSeek-V3's RMSNorm of the latent and of the query's
#: low-rank code (transformers' ``DeepseekV3RMSNorm`` default).
_MLA_EPS = 1e-6


def mla_params(rng, d_model, n_heads, *, kv_lora_rank, qk_nope_head_dim,
               qk_rope_head_dim, v_head_dim, q_lora_rank=None):
    r"""Random weights of one Multi-head Latent Attention layer.

    The matrices of DeepSeek-V2's MLA ([DeepSeekV2]_, section 2.1), under
    the names of transformers' ``DeepseekV3Attention`` parameters, each in
    torch's layout (one row per output feature), so that
    ``attention.load_state_dict({k: torch.from_numpy(v) for k, v in
    params.items() if k.endswith(".weight")})`` loads them:

    ``kv_a_proj_with_mqa.weight``, :math:`(d_c + d^R_h) \times
    d_{\mathrm{model}}`
        :math:`W^{DKV}` (the latent :math:`\mathbf c^{KV}`) stacked on
        :math:`W^{KR}` (the shared rotary key :math:`\mathbf k^R`);
    ``kv_a_layernorm.weight``, :math:`(d_c,)`
        the RMSNorm of the latent;
    ``kv_b_proj.weight``, :math:`H(d^{\mathrm{nope}}_h + d_v) \times d_c`
        per head, :math:`W^{UK}_h` (keys) over :math:`W^{UV}_h` (values);
    ``q_proj.weight``, :math:`H(d^{\mathrm{nope}}_h + d^R_h) \times
    d_{\mathrm{model}}`
        per head, the query's part without position over its rotary part;
        with ``q_lora_rank`` instead ``q_a_proj.weight``,
        ``q_a_layernorm.weight``, ``q_b_proj.weight`` (DeepSeek-V2's
        compressed query);
    ``o_proj.weight``, :math:`d_{\mathrm{model}} \times H d_v`.

    Weights are drawn from :math:`\mathcal N(0, 1/\mathrm{fan\_in})`, the
    norms' weights from :math:`\mathcal N(1, 0.1^2)`. The dict also holds
    the sizes, as ints, under their config names (``n_heads`` for
    ``num_attention_heads``).

    Parameters
    ----------
    rng : numpy.random.Generator or int
        The generator, or a seed for one.
    d_model : int
        :math:`d_{\mathrm{model}}` (``hidden_size``).
    n_heads : int
        :math:`H` (``num_attention_heads``).
    kv_lora_rank : int
        :math:`d_c`, the latent's width (DeepSeek-V3: 512).
    qk_nope_head_dim : int
        :math:`d^{\mathrm{nope}}_h`, each head's query/key width without
        position (128).
    qk_rope_head_dim : int
        :math:`d^R_h`, the rotary width, even (64).
    v_head_dim : int
        :math:`d_v` (128).
    q_lora_rank : int, optional
        :math:`d'_c`, the query's latent width (1536); None: a full
        query projection.

    Returns
    -------
    dict
        The arrays (float64) under transformers' names, and the sizes.

    Examples
    --------
    >>> p = mla_params(0, 16, 2, kv_lora_rank=8, qk_nope_head_dim=4,
    ...                qk_rope_head_dim=2, v_head_dim=3)
    >>> {k: v.shape for k, v in p.items() if k.endswith(".weight")}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'q_proj.weight': (12, 16), 'kv_a_proj_with_mqa.weight': (10, 16),
     'kv_a_layernorm.weight': (8,), 'kv_b_proj.weight': (14, 8),
     'o_proj.weight': (16, 6)}
    """
    if rng is None or isinstance(rng, bool) or not (
            _is_int(rng) and rng >= 0
            or isinstance(rng, np.random.Generator)):
        raise ValueError(
            "rng must be a numpy Generator or an integer seed >= 0, got "
            f"{rng!r}")
    gen = np.random.default_rng(rng)
    d_model = _check_int("d_model", d_model, 1)
    n_heads = _check_int("n_heads", n_heads, 1)
    d_c = _check_int("kv_lora_rank", kv_lora_rank, 1)
    nope = _check_int("qk_nope_head_dim", qk_nope_head_dim, 0)
    rope = qk_rope_head_dim
    if not (_is_int(rope) and rope >= 0 and rope % 2 == 0):
        raise ValueError("qk_rope_head_dim must be an even integer >= 0, "
                         f"got {rope!r}")
    rope = int(rope)
    if nope + rope == 0:
        raise ValueError("qk_nope_head_dim + qk_rope_head_dim must be > 0")
    v = _check_int("v_head_dim", v_head_dim, 1)
    if q_lora_rank is not None:
        q_lora_rank = _check_int("q_lora_rank", q_lora_rank, 1)
    q_rows = n_heads * (nope + rope)
    shapes = {}
    if q_lora_rank is None:
        shapes["q_proj.weight"] = (q_rows, d_model)
    else:
        shapes["q_a_proj.weight"] = (q_lora_rank, d_model)
        shapes["q_a_layernorm.weight"] = (q_lora_rank,)
        shapes["q_b_proj.weight"] = (q_rows, q_lora_rank)
    shapes["kv_a_proj_with_mqa.weight"] = (d_c + rope, d_model)
    shapes["kv_a_layernorm.weight"] = (d_c,)
    shapes["kv_b_proj.weight"] = (n_heads * (nope + v), d_c)
    shapes["o_proj.weight"] = (d_model, n_heads * v)
    total = 0  # all the matrices together must fit
    for shape in shapes.values():
        count = 1
        for k in shape:
            count *= k
        total += count
    _check_size(total)
    params = {}
    for name, shape in shapes.items():
        if name.endswith("layernorm.weight"):
            params[name] = 1.0 + 0.1 * gen.standard_normal(shape)
        else:
            params[name] = gen.standard_normal(shape) / np.sqrt(shape[1])
    params.update(n_heads=n_heads, kv_lora_rank=d_c, qk_nope_head_dim=nope,
                  qk_rope_head_dim=rope, v_head_dim=v,
                  q_lora_rank=q_lora_rank)
    return params


def _rms_norm(x, weight):
    mean_square = np.mean(x * x, axis=-1, keepdims=True)
    if not np.isfinite(mean_square).all():  # it would divide by inf: 0
        raise ValueError("x or params is too large: the RMSNorm overflows "
                         "float64")
    return x / np.sqrt(mean_square + _MLA_EPS) * weight


def _mla_sizes(params):
    if not isinstance(params, dict):
        raise ValueError("params must be a dict from mla_params, got "
                         f"{type(params).__name__}")
    try:
        sizes = {k: params[k] for k in (
            "n_heads", "kv_lora_rank", "qk_nope_head_dim",
            "qk_rope_head_dim", "v_head_dim")}
    except KeyError as err:
        raise ValueError(f"params must be a dict from mla_params: no "
                         f"{err.args[0]!r}") from None
    for key, low in (("n_heads", 1), ("kv_lora_rank", 1),
                     ("qk_nope_head_dim", 0), ("qk_rope_head_dim", 0),
                     ("v_head_dim", 1)):
        sizes[key] = _check_int(f"params[{key!r}]", sizes[key], low)
    if sizes["qk_rope_head_dim"] % 2:
        raise ValueError("params['qk_rope_head_dim'] must be even, got "
                         f"{sizes['qk_rope_head_dim']}")
    if sizes["qk_nope_head_dim"] + sizes["qk_rope_head_dim"] == 0:
        raise ValueError("params['qk_nope_head_dim'] + "
                         "params['qk_rope_head_dim'] must be > 0")
    if params.get("q_lora_rank") is not None:
        _check_int("params['q_lora_rank']", params["q_lora_rank"], 1)
    return sizes


def _mla_weight(params, name, shape):
    if name not in params:
        raise ValueError(f"params must be a dict from mla_params: no {name!r}")
    w = _float_array(f"params[{name!r}]", params[name],
                     f"an array of shape {shape}")
    if w.shape != shape:
        raise ValueError(f"params[{name!r}] must have shape {shape} (from "
                         f"params' sizes and the columns of x), got "
                         f"{w.shape}")
    return w


def mla_attention_logits(x, positions, params, *, absorbed=False,
                         base=10000.0, layout="interleaved",
                         rope="decoupled"):
    r"""Multi-head Latent Attention's scores, naive or absorbed.

    Each token :math:`\ell` caches the latent :math:`\mathbf c^{KV}_\ell =
    \mathrm{RMSNorm}(W^{DKV}\mathbf x_\ell)` and the shared rotary key
    :math:`\mathbf k^R_\ell = R_\ell W^{KR}\mathbf x_\ell`; head
    :math:`h`'s score of query :math:`m` and key :math:`\ell` is
    ([DeepSeekV2]_, eqs. 14-19)

    .. math::

        S^{(h)}_{m\ell} = \frac{
        \mathbf q^{C\,\top}_{m,h}\,W^{UK}_h\,\mathbf c^{KV}_\ell
        + (R_m \mathbf q^R_{m,h})^\top \mathbf k^R_\ell}
        {\sqrt{d^{\mathrm{nope}}_h + d^R_h}}.

    ``absorbed=False`` rebuilds the keys :math:`\mathbf k^C_{\ell,h} =
    W^{UK}_h \mathbf c^{KV}_\ell` from the cache, as transformers'
    ``DeepseekV3Attention.expand_kv`` does; ``absorbed=True`` multiplies
    :math:`W^{UK}_h` into the query instead, :math:`\tilde{\mathbf q}_{m,h}
    = W^{UK\top}_h \mathbf q^C_{m,h}`, and takes its dot product with the
    cached latent itself: the same numbers (float64 rounding), without
    ever forming a key per head.

    ``rope`` chooses the design:

    ``"decoupled"`` (DeepSeek-V2/V3)
        as above: position lives in the separate rotary part only.
    ``"none"``
        the first term only: absorption is exact without position.
    ``"coupled"``
        the design the paper rules out ([DeepSeekV2]_, section 2.1.3):
        no separate part; the query and the rebuilt key are rotated,
        :math:`(R_m\mathbf q^C_{m,h})^\top R_\ell W^{UK}_h
        \mathbf c^{KV}_\ell`. :math:`R_\ell` now sits between the cached
        latent and :math:`W^{UK}_h` and changes with :math:`\ell`, so no
        one matrix can be absorbed into the query. ``absorbed=True`` then
        computes what absorbing anyway gives,
        :math:`(W^{UK\top}_h R_m \mathbf q^C_{m,h})^\top
        \mathbf c^{KV}_\ell`, which is *not* the score (chapter 11 shows
        the difference): the keys would have to be rebuilt and rotated
        for every cached token.

    The rotary part uses :math:`\omega_i = b^{-2i/d^R_h}`.
    ``layout="interleaved"`` rotates pairs :math:`(2i, 2i+1)`, DeepSeek's
    weights and transformers' ``rope_interleave=True`` (the default of
    ``DeepseekV3Config``, ``apply_rotary_pos_emb_interleave``, which
    rotates the interleaved pairs and writes them out as halves: the same
    dot products); ``"half"`` rotates :math:`(i, i + d^R_h/2)`
    (``rope_interleave=False``). The latent's RMSNorm has
    :math:`\epsilon = 10^{-6}`; the scale is transformers' default
    without YaRN's ``mscale_all_dim`` (DeepSeek-V3's released config
    multiplies it by :math:`(0.1 \ln 40 + 1)^2`).

    Parameters
    ----------
    x : array_like, shape (n, d_model)
    positions : int or array_like of real, shape (n,)
        An int ``n`` means ``0, ..., n-1``.
    params : dict
        From :func:`mla_params` (or transformers' state dict as numpy
        arrays, with the five sizes added).
    absorbed : bool, optional
    base : float, optional
        :math:`b` (``rope_theta``).
    layout : {"interleaved", "half"}, optional
    rope : {"decoupled", "none", "coupled"}, optional
        ``"coupled"`` needs an even ``qk_nope_head_dim``.

    Returns
    -------
    ndarray of float64, shape (n_heads, n, n)
        Row = query, column = key; no mask (apply the causal mask before
        the softmax).

    Examples
    --------
    >>> p = mla_params(0, 16, 2, kv_lora_rank=8, qk_nope_head_dim=4,
    ...                qk_rope_head_dim=2, v_head_dim=3)
    >>> x = np.random.default_rng(1).normal(size=(5, 16))
    >>> naive = mla_attention_logits(x, 5, p)
    >>> bool(np.allclose(naive, mla_attention_logits(x, 5, p, absorbed=True)))
    True
    >>> coupled = [mla_attention_logits(x, 5, p, rope="coupled", absorbed=a)
    ...            for a in (False, True)]
    >>> bool(np.allclose(*coupled))
    False
    """
    sizes = _mla_sizes(params)
    H, d_c = sizes["n_heads"], sizes["kv_lora_rank"]
    nope, d_r, d_v = (sizes["qk_nope_head_dim"], sizes["qk_rope_head_dim"],
                      sizes["v_head_dim"])
    x = _float_array("x", x, "a 2-D array (n, d_model) of finite reals")
    if x.ndim != 2:
        raise ValueError(f"x must be a 2-D array (n, d_model), got shape "
                         f"{x.shape}")
    n, d_model = x.shape
    if not isinstance(absorbed, (bool, np.bool_)):
        raise ValueError(f"absorbed must be True or False, got {absorbed!r}")
    _check_choice("layout", layout, _ROPE_LAYOUTS)
    _check_choice("rope", rope, _MLA_ROPE)
    base = _check_base(base)
    pos = _positions(positions)
    if pos.size != n:
        raise ValueError(f"positions must give one position per row of x "
                         f"({n}), got {pos.size}")
    if rope == "coupled" and nope % 2:
        raise ValueError("rope='coupled' rotates the keys rebuilt from the "
                         "latent: qk_nope_head_dim must be even, got "
                         f"{nope}")
    _check_size(H, n, max(n, d_c, nope + d_r))
    # an overflow is refused below (the RMSNorm, apply_rope, the scores)
    with np.errstate(over="ignore", invalid="ignore"):
        q_rows = H * (nope + d_r)
        if params.get("q_lora_rank") is None:
            q = x @ _mla_weight(params, "q_proj.weight", (q_rows, d_model)).T
        else:
            r_q = params["q_lora_rank"]
            cq = x @ _mla_weight(params, "q_a_proj.weight", (r_q, d_model)).T
            cq = _rms_norm(cq, _mla_weight(params, "q_a_layernorm.weight",
                                           (r_q,)))
            q = cq @ _mla_weight(params, "q_b_proj.weight", (q_rows, r_q)).T
        q = q.reshape(n, H, nope + d_r).transpose(1, 0, 2)
        q_c, q_r = q[..., :nope], q[..., nope:]
        ckv = x @ _mla_weight(params, "kv_a_proj_with_mqa.weight",
                              (d_c + d_r, d_model)).T
        c = _rms_norm(ckv[:, :d_c], _mla_weight(params, "kv_a_layernorm.weight",
                                                (d_c,)))
        w_uk = _mla_weight(params, "kv_b_proj.weight",
                           (H * (nope + d_v), d_c)).reshape(H, nope + d_v, d_c)
        w_uk = w_uk[:, :nope]  # (H, nope, d_c): W^UK_h
        if rope == "coupled":
            q_c = apply_rope(q_c, pos, base=base, layout=layout) if nope else q_c
        if absorbed:
            scores = np.einsum("hnd,hdc,lc->hnl", q_c, w_uk, c)
        else:
            k_c = np.einsum("hdc,lc->hld", w_uk, c)  # rebuilt keys
            if rope == "coupled" and nope:
                k_c = apply_rope(k_c, pos, base=base, layout=layout)
            scores = q_c @ k_c.transpose(0, 2, 1)
        if rope == "decoupled" and d_r:
            k_r = apply_rope(ckv[:, d_c:], pos, base=base, layout=layout)
            q_r = apply_rope(q_r, pos, base=base, layout=layout)
            scores = scores + q_r @ k_r.T  # one rotary key for every head
        scores = scores / np.sqrt(nope + d_r)
        if not np.isfinite(scores).all():
            raise ValueError("x or params is too large: the scores overflow "
                             "float64")
    return scores


def softmax_with_sink(scores, sink_logits):
    r"""The softmax of attention scores with a learned sink logit.

    .. math::

        A_{m\ell} = \frac{e^{S_{m\ell}}}
        {e^{\xi_h} + \sum_{\ell'} e^{S_{m\ell'}}}

    gpt-oss ([OpenAI2025]_) gives each head :math:`h` a learned logit
    :math:`\xi_h` that joins every row of scores as one more column and is
    dropped after the softmax: a query may give part of its attention to
    nothing (the row sums to less than 1), which is what the first tokens
    otherwise do as attention sinks ([Xiao2024]_). This is transformers'
    ``GptOssAttention`` (``eager_attention_forward``:
    ``torch.cat([attn_weights, sinks], dim=-1)``, softmax, then
    ``probs[..., :-1]``). :math:`\xi_h = 0` is Miller's "softmax plus one"
    ([Miller2023]_); :math:`\xi_h \to -\infty` the plain softmax.

    Parameters
    ----------
    scores : array_like, shape (..., n_keys)
        :math:`S`, scaled and masked (``-inf`` for a masked key; NaN and
        ``+inf`` are not allowed).
    sink_logits : float or array_like
        :math:`\xi`, broadcast against ``scores.shape[:-1]``: a scalar,
        or one per head as ``xi[:, None]`` for scores (H, n, n_keys).
        ``-inf`` is allowed (no sink).

    Returns
    -------
    ndarray of float64, same shape as ``scores``
        Each row sums to :math:`1 - e^{\xi_h}/(e^{\xi_h} +
        \sum_{\ell'} e^{S_{m\ell'}})`.

    Examples
    --------
    >>> softmax_with_sink([0.0, 0.0, 0.0], 0.0)
    array([0.25, 0.25, 0.25])
    >>> softmax_with_sink([[0.0, -np.inf]], -np.inf)
    array([[1., 0.]])
    """
    what = "an array (..., n_keys) of finite reals or -inf"
    try:
        s = None if isinstance(scores, (str, bytes)) else np.asarray(scores)
    except (TypeError, ValueError):
        s = None
    if s is None or s.dtype == bool or not (
            np.issubdtype(s.dtype, np.integer)
            or np.issubdtype(s.dtype, np.floating)):
        raise ValueError(f"scores must be {what}, got {scores!r}")
    if s.size > MAX_ELEMENTS:  # e.g. a broadcast view: refuse the copy
        raise ValueError(f"scores has {s.size} elements; at most "
                         f"{MAX_ELEMENTS} are allowed")
    s = s.astype(np.float64)
    if s.ndim < 1 or s.shape[-1] == 0 or np.isnan(s).any() or (
            s == np.inf).any():
        raise ValueError(f"scores must be {what}, got shape {s.shape}"
                         + (" with NaN or +inf" if s.size else ""))
    try:
        z = None if isinstance(sink_logits, (str, bytes)) else np.asarray(
            sink_logits)
    except (TypeError, ValueError):
        z = None
    if z is None or z.dtype == bool or not (
            np.issubdtype(z.dtype, np.integer)
            or np.issubdtype(z.dtype, np.floating)):
        raise ValueError("sink_logits must be a real number or an array of "
                         f"them, got {sink_logits!r}")
    z = z.astype(np.float64)
    if np.isnan(z).any() or (z == np.inf).any():
        raise ValueError("sink_logits must be finite or -inf, got NaN or "
                         "+inf")
    try:
        z = np.broadcast_to(z, s.shape[:-1])[..., None]
    except ValueError:
        raise ValueError(
            f"sink_logits must broadcast against scores.shape[:-1] = "
            f"{s.shape[:-1]}, got shape {z.shape}") from None
    top = np.maximum(s.max(axis=-1, keepdims=True), z)
    if np.isneginf(top).any():
        raise ValueError("scores and sink_logits leave a row with every "
                         "logit -inf")
    # s - top and z - top are <= 0; one that overflows to -inf (1e308
    # below a top of 1e308) has the weight 0 it would have anyway
    with np.errstate(over="ignore"):
        e = np.exp(s - top)
        return e / (e.sum(axis=-1, keepdims=True) + np.exp(z - top))


def rope_stale_key_angles(key_positions, head_dim, *, base=10000.0,
                          scaling, cached_length, length):
    r"""How far off cached keys are after RoPE's frequencies changed.

    A key at position :math:`\ell` cached during a pass of length
    :math:`n_0` was rotated by :math:`\ell\,\omega_i(n_0)`; a scaling whose
    frequencies depend on the length (LongRoPE's switch from
    ``short_factor`` to ``long_factor`` once the length exceeds
    ``original_max_position_embeddings``, [Ding2024]_; dynamic NTK) gives
    the queries of a later pass of length :math:`n` the frequencies
    :math:`\omega_i(n)`. A fresh pass would have rotated the key by
    :math:`\ell\,\omega_i(n)`; the cached one is behind by

    .. math::

        \Delta\phi_{\ell,i} = \ell\,\bigl(\omega_i(n) - \omega_i(n_0)\bigr),

    and its scores with the new queries are no longer functions of
    :math:`\ell - m` alone. transformers recomputes the frequencies from
    ``max(position_ids) + 1`` of each pass
    (``dynamic_rope_update``) and never re-rotates the cache: after
    ``apply_rope_angles(k_cached, delta, layout="half")`` the cached keys
    equal a fresh pass's. Zero for scalings that do not depend on the
    length.

    Parameters
    ----------
    key_positions : int or array_like of real, shape (n_keys,)
        :math:`\ell`; an int ``n`` means ``0, ..., n-1``.
    head_dim : int
        :math:`d`, positive and even.
    base : float, optional
    scaling : dict
        As for :func:`rope_frequencies`, e.g. ``{"type": "longrope",
        "short_factor": [...], "long_factor": [...],
        "original_max_position_embeddings": L}``; its ``seq_len`` is set
        here.
    cached_length : int
        :math:`n_0`, the length (``max(position_ids) + 1``) of the pass
        that cached the keys, >= 1.
    length : int
        :math:`n`, that of the current pass, >= 1.

    Returns
    -------
    ndarray of float64, shape (n_keys, head_dim // 2)

    Examples
    --------
    >>> longrope = {"type": "longrope", "short_factor": [1.0, 1.0],
    ...             "long_factor": [1.0, 4.0],
    ...             "original_max_position_embeddings": 8}
    >>> rope_stale_key_angles(3, 4, scaling=longrope, cached_length=6,
    ...                       length=12)
    array([[ 0.    ,  0.    ],
           [ 0.    , -0.0075],
           [ 0.    , -0.015 ]])
    """
    if not isinstance(scaling, dict):
        raise ValueError(f"scaling must be a dict as for rope_frequencies, "
                         f"got {scaling!r}")
    n0 = _check_int("cached_length", cached_length, 1)
    n1 = _check_int("length", length, 1)
    for name, n in (("cached_length", n0), ("length", n1)):
        if n > float(np.finfo(np.float64).max):  # seq_len is a float
            raise ValueError(f"{name} must be an integer >= 1 below 2**1024, "
                             f"got {n!r}")
    pos = _positions(key_positions, "key_positions")
    head_dim = _check_d("head_dim", head_dim)
    _check_size(pos.size, head_dim // 2)
    kind = scaling.get("type", scaling.get("rope_type"))
    if isinstance(kind, str) and kind in ("longrope", "dynamic"):  # follow n
        then, now = (rope_frequencies(head_dim, base=base,
                                      scaling=dict(scaling, seq_len=n))
                     for n in (n0, n1))
    else:
        then = now = rope_frequencies(head_dim, base=base, scaling=scaling)
    with np.errstate(over="ignore", invalid="ignore"):
        delta = pos[:, None] * (now - then) + 0.0  # no -0.0 at position 0
    return _finite_angles(delta, "key_positions times frequencies")
