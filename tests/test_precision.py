"""Numerical precision of the encodings at long context.

1. ``sinusoidal_encoding`` and ``apply_rope`` (float64) agree with a
   40-digit mpmath evaluation of the same formulas to 1e-9 at positions up
   to 10**6, for several model widths, bases and both layouts.
2. Lower precisions, as models run them: the angle ``pos * theta_i``
   computed in float32 (as Hugging Face transformers does, from a float32
   ``inv_freq``), in float16 and in bfloat16 (emulated by
   ``posenc_core.round_significand``, checked here against PyTorch's real
   bfloat16). The thresholds below are the ones documented in
   ``benchmarks/README.md`` ("Precision") and taught in chapter 6
   (``chapters/06_rope.ipynb``, "Precision: angles at long context").
"""

import mpmath
import numpy as np
import pytest
import torch

import posenc_core as pc

mpmath.mp.dps = 40
RNG = np.random.default_rng(20240601)
# Integer and fractional positions up to 10**6, the extremes included.
POSITIONS = np.concatenate([
    [0.0, 1.0, 2.5, 255.0, 4097.0, 65535.5, 999_999.0, 1e6],
    RNG.integers(0, 10**6, size=6).astype(float),
    RNG.uniform(0, 1e6, size=4),
])


def mp_frequencies(d, base):
    # theta_i = base ** (-2i/d) with the exponent as an exact fraction
    return [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d)
            for i in range(d // 2)]


def mp_angles(positions, d, base):
    omega = mp_frequencies(d, base)
    return [[mpmath.mpf(float(p)) * w for w in omega] for p in positions]


@pytest.mark.parametrize("d, base", [(64, 10000.0), (512, 10000.0),
                                     (768, 10000.0), (128, 500000.0),
                                     (96, 1e6)])
@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_sinusoidal_matches_mpmath_to_1e_9(d, base, layout):
    got = pc.sinusoidal_encoding(POSITIONS, d, base=base, layout=layout)
    half = d // 2
    err = 0.0
    for r, row in enumerate(mp_angles(POSITIONS, d, base)):
        for i, a in enumerate(row):
            s, c = (2 * i, 2 * i + 1) if layout == "interleaved" else (
                i, half + i)
            err = max(err, abs(float(mpmath.sin(a) - got[r, s])),
                      abs(float(mpmath.cos(a) - got[r, c])))
    assert err <= 1e-9, err
    # the exact angles are not trivial: large positions wrap many times
    assert POSITIONS.max() / (2 * np.pi) > 1e5


@pytest.mark.parametrize("d, base", [(64, 10000.0), (128, 500000.0),
                                     (200, 10000.0)])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_matches_mpmath_to_1e_9(d, base, layout):
    x = RNG.normal(size=(2, POSITIONS.size, d))  # (heads, n, d)
    got = pc.apply_rope(x, POSITIONS, base=base, layout=layout)
    err = 0.0
    for r, row in enumerate(mp_angles(POSITIONS, d, base)):
        for i, a in enumerate(row):
            j, k = (2 * i, 2 * i + 1) if layout == "interleaved" else (
                i, i + d // 2)
            c, s = mpmath.cos(a), mpmath.sin(a)
            for h in range(x.shape[0]):
                x1, x2 = mpmath.mpf(x[h, r, j]), mpmath.mpf(x[h, r, k])
                err = max(err, abs(float(x1 * c - x2 * s - got[h, r, j])),
                          abs(float(x2 * c + x1 * s - got[h, r, k])))
    assert err <= 1e-9 * np.abs(x).max(), err


def test_rope_with_scaled_frequencies_matches_mpmath():
    # Frequencies given explicitly (here YaRN's): rotation by pos * theta_i
    # with those float64 theta_i, exactly.
    theta = pc.rope_frequencies(64, scaling={
        "type": "yarn", "factor": 16, "original_max_position_embeddings": 4096})
    x = RNG.normal(size=(POSITIONS.size, 64))
    got = pc.apply_rope(x, POSITIONS, frequencies=theta)
    for r, p in enumerate(POSITIONS):
        for i, t in enumerate(theta):
            a = mpmath.mpf(float(p)) * mpmath.mpf(float(t))
            c, s = mpmath.cos(a), mpmath.sin(a)
            x1, x2 = mpmath.mpf(x[r, 2 * i]), mpmath.mpf(x[r, 2 * i + 1])
            assert abs(float(x1 * c - x2 * s - got[r, 2 * i])) <= 1e-9
            assert abs(float(x2 * c + x1 * s - got[r, 2 * i + 1])) <= 1e-9


# ------------------------------------------------ lower precision angles

D, BASE = 128, 10000.0
THETA = pc.rope_frequencies(D, base=BASE)


def worst_angle_error(positions, fmt):
    """Largest |computed - exact| angle over all pairs, per position."""
    pos = np.asarray(positions, dtype=np.float64)
    exact = pos[:, None] * THETA[None, :]  # float64: error < 1e-9 (above)
    if fmt == "float32":  # as transformers' LlamaRotaryEmbedding
        i = torch.arange(0, D, 2, dtype=torch.int64).float()
        inv_freq = 1.0 / (BASE ** (i / D))
        angle = torch.tensor(pos, dtype=torch.float32)[:, None] * inv_freq
        angle = angle.double().numpy()
    else:  # position, theta and their product all rounded to the format
        bits = {"float16": 11, "bfloat16": 8}[fmt]
        rnd = pc.round_significand
        angle = rnd(rnd(pos, bits)[:, None] * rnd(THETA, bits)[None, :],
                    bits)
    return np.abs(angle - exact).max(axis=1)


def test_bfloat16_emulation_is_pytorch_bfloat16():
    pos = np.concatenate([np.arange(0, 5000), RNG.uniform(0, 1e6, 500)])
    bf16 = torch.bfloat16
    real = (torch.tensor(pos).to(bf16)[:, None]
            * torch.tensor(THETA).to(bf16)[None, :]).double().numpy()
    rnd = pc.round_significand
    emulated = rnd(rnd(pos, 8)[:, None] * rnd(THETA, 8)[None, :], 8)
    np.testing.assert_array_equal(emulated, real)


def test_float32_angles_err_by_about_pos_times_2_to_minus_24():
    pos = np.unique(np.concatenate([RNG.integers(1, 10**6, 2000),
                                    2.0 ** np.arange(1, 21), [1e6]]))
    err = worst_angle_error(pos, "float32")
    # position, 1/theta and the product each round once: < 3 ulps
    assert np.all(err <= 3 * pos * 2.0**-24)
    # documented thresholds (benchmarks/README.md, chapter 6)
    assert worst_angle_error([32768], "float32")[0] < 2.0**-9
    assert worst_angle_error([65536], "float32")[0] >= 2.0**-9 * 0.99
    assert 0.01 < worst_angle_error([1e6], "float32")[0] < 0.1
    assert err.max() < 0.1  # usable, if coarse, up to a million


def test_bfloat16_and_float16_angles_break_down_within_hundreds():
    # Positions themselves: the first integer each format cannot hold.
    ints = np.arange(5000.0)
    assert ints[pc.round_significand(ints, 8) != ints][0] == 257
    assert ints[pc.round_significand(ints, 11) != ints][0] == 2049
    # Angles: bfloat16 errs by a tenth of a radian before position 100 and
    # by a whole radian at 257; float16 by a tenth of a radian at 255.
    bf16 = worst_angle_error(np.arange(1, 300), "bfloat16")
    fp16 = worst_angle_error(np.arange(1, 300), "float16")
    assert bf16[:100].max() > 0.09 and bf16[256] >= 1.0  # index 256 = pos 257
    assert 0.1 < fp16[:255].max() < 0.2
    # float32, for comparison, errs by 1e-5 there
    assert worst_angle_error([255], "float32")[0] < 1e-5
