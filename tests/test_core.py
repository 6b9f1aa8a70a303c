"""Unit tests of posenc_core: known values, shapes, properties, bad input."""

import doctest
import inspect
import math
import sys

import numpy as np
import pytest

import posenc_core as pc


def test_doctests():
    result = doctest.testmod(pc, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= len(pc.__all__)
    assert result.failed == 0


def test_every_public_function_is_documented_with_formula_and_example():
    for name in pc.__all__:
        doc = getattr(pc, name).__doc__
        assert "Parameters" in doc and "Returns" in doc, name
        assert ">>>" in doc, name
        assert "math" in doc or "$" in doc or "\\" in doc, name


def test_module_imports_only_numpy_and_the_standard_library():
    import ast
    import pathlib

    tree = ast.parse(pathlib.Path(pc.__file__).read_text())
    imported = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    # numpy is the only third-party dependency; the standard library is fine
    # (functools and warnings carry the deprecated keyword of
    # relative_shift_matrix)
    assert "numpy" in imported
    assert imported - {"numpy"} <= set(sys.stdlib_module_names), imported


# ------------------------------------------------------------ sinusoidal


def test_frequencies_known_values():
    np.testing.assert_allclose(pc.frequencies(8), [1, 0.1, 0.01, 0.001])
    np.testing.assert_allclose(pc.frequencies(4, base=100.0), [1, 0.1])
    assert pc.frequencies(512).dtype == np.float64


def test_wavelengths_published_range():
    lam = pc.wavelengths(512)
    assert lam.shape == (256,)
    assert lam[0] == pytest.approx(2 * np.pi)
    # 2*pi*10000**(510/512), "about 60,611" and not 10000*2*pi = 62,832.
    assert lam[-1] == pytest.approx(2 * np.pi * 10000 ** (510 / 512))
    assert round(lam[-1]) == 60611
    np.testing.assert_allclose(lam[1:] / lam[:-1], 10000 ** (2 / 512))


def test_sinusoidal_matches_paper_formula_elementwise():
    d, base = 6, 50.0
    P = pc.sinusoidal_encoding([0, 1.5, 7], d, base=base)
    for r, pos in enumerate([0, 1.5, 7]):
        for i in range(d // 2):
            w = base ** (-2 * i / d)
            assert P[r, 2 * i] == pytest.approx(np.sin(pos * w), abs=1e-15)
            assert P[r, 2 * i + 1] == pytest.approx(np.cos(pos * w), abs=1e-15)


def test_sinusoidal_concat_is_a_column_permutation():
    Pi = pc.sinusoidal_encoding(20, 8)
    Pc = pc.sinusoidal_encoding(20, 8, layout="concat")
    np.testing.assert_array_equal(Pc[:, :4], Pi[:, 0::2])
    np.testing.assert_array_equal(Pc[:, 4:], Pi[:, 1::2])


def test_sinusoidal_int_means_range_and_shapes():
    np.testing.assert_array_equal(
        pc.sinusoidal_encoding(5, 4), pc.sinusoidal_encoding(np.arange(5), 4))
    assert pc.sinusoidal_encoding(0, 4).shape == (0, 4)
    assert pc.sinusoidal_encoding(np.int32(3), 2).shape == (3, 2)
    P = pc.sinusoidal_encoding(1000, 128)
    assert P.dtype == np.float64
    assert np.all(np.abs(P) <= 1)
    # every sin/cos pair has norm one, so |PE(pos)|^2 = d_model / 2
    np.testing.assert_allclose((P**2).sum(axis=1), 64)


@pytest.mark.parametrize("k", [0, 1, 5, -3, 0.5, 123.25])
def test_relative_shift_identity(k):
    d = 16
    M = pc.relative_shift_matrix(k, d, base=100.0)
    for p in [0, 2, 7.5, 40]:
        np.testing.assert_allclose(
            M @ pc.sinusoidal_encoding([p], d, base=100.0)[0],
            pc.sinusoidal_encoding([p + k], d, base=100.0)[0], atol=1e-12)
    np.testing.assert_allclose(M @ M.T, np.eye(d), atol=1e-12)
    # block-diagonal: nothing outside the 2x2 blocks
    mask = np.kron(np.eye(d // 2), np.ones((2, 2))).astype(bool)
    assert np.all(M[~mask] == 0)


def test_relative_shift_matrix_delta_keyword_and_deprecated_k():
    """The shift is called delta, as in notation.md; the old keyword k still
    works, with a DeprecationWarning, and gives the same matrix."""
    M = pc.relative_shift_matrix(delta=2.5, d_model=8, base=100.0)
    np.testing.assert_array_equal(M, pc.relative_shift_matrix(2.5, 8,
                                                              base=100.0))
    with pytest.warns(DeprecationWarning, match="delta"):
        M_old = pc.relative_shift_matrix(k=2.5, d_model=8, base=100.0)
    np.testing.assert_array_equal(M_old, M)
    assert list(inspect.signature(pc.relative_shift_matrix).parameters) == [
        "delta", "d_model", "base"]
    # both names for the one argument: refused, naming both
    for call in (lambda: pc.relative_shift_matrix(1, 8, k=2),
                 lambda: pc.relative_shift_matrix(delta=1, d_model=8, k=2)):
        with pytest.raises(ValueError, match="delta.*k"):
            call()
    # the deprecated keyword is checked like the new one
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError,
                                                         match="delta"):
        pc.relative_shift_matrix(k=np.nan, d_model=8)


def test_relative_shift_composes():
    np.testing.assert_allclose(
        pc.relative_shift_matrix(2, 8) @ pc.relative_shift_matrix(3, 8),
        pc.relative_shift_matrix(5, 8), atol=1e-12)


def test_binary_encoding():
    B = pc.binary_encoding(8, 3)
    assert B.dtype.kind == "i"
    np.testing.assert_array_equal(B[5], [1, 0, 1])
    np.testing.assert_array_equal(B[6], [0, 1, 1])
    np.testing.assert_array_equal(B @ (2 ** np.arange(3)), np.arange(8))
    np.testing.assert_array_equal(pc.binary_encoding([1023], 10)[0], 1)


def test_binary_encoding_rolls_over():
    """Bits n_bits and up are dropped: pos + 2**n_bits reads as pos."""
    for n_bits in (1, 3, 8):
        p = np.arange(2**n_bits)
        B = pc.binary_encoding(p, n_bits)
        for lap in (1, 2, 7):
            np.testing.assert_array_equal(
                pc.binary_encoding(p + lap * 2**n_bits, n_bits), B)
        # the int form counts past the top as well
        np.testing.assert_array_equal(pc.binary_encoding(3 * 2**n_bits,
                                                         n_bits),
                                      np.tile(B, (3, 1)))
    np.testing.assert_array_equal(pc.binary_encoding([8, 13, 2**53], 3),
                                  [[0, 0, 0], [1, 0, 1], [0, 0, 0]])
    # the low bits of a large position, not its top ones
    np.testing.assert_array_equal(pc.binary_encoding([2**40 + 6], 4)[0],
                                  [0, 1, 1, 0])


# -------------------------------------------------------------- attention


def _qkv(n=5, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)), rng.normal(size=(d, 3)),
            rng.normal(size=(d, 3)), rng.normal(size=(d, 2)))


def test_self_attention_matches_formula():
    x, wq, wk, wv = _qkv()
    out, A = pc.self_attention(x, wq, wk, wv)
    S = (x @ wq) @ (x @ wk).T / np.sqrt(3)
    E = np.exp(S)
    A_ref = E / E.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(A, A_ref, rtol=1e-12)
    np.testing.assert_allclose(out, A_ref @ (x @ wv), rtol=1e-12)
    assert out.shape == (5, 2)


def test_self_attention_is_permutation_equivariant_without_mask():
    x, wq, wk, wv = _qkv(6)
    perm = np.random.default_rng(1).permutation(6)
    out, A = pc.self_attention(x, wq, wk, wv)
    out_p, A_p = pc.self_attention(x[perm], wq, wk, wv)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(A_p, A[np.ix_(perm, perm)], atol=1e-12)


def test_self_attention_causal_and_bias():
    x, wq, wk, wv = _qkv(4)
    _, A = pc.self_attention(x, wq, wk, wv, causal=True)
    assert np.all(np.triu(A, 1) == 0)
    np.testing.assert_allclose(A.sum(axis=1), 1)
    # a huge negative bias on one key removes it
    bias = np.zeros((4, 4))
    bias[:, 2] = -np.inf
    _, A = pc.self_attention(x, wq, wk, wv, bias=bias)
    assert np.all(A[:, 2] == 0)
    # a bias that is constant along each row changes nothing
    _, A0 = pc.self_attention(x, wq, wk, wv)
    _, A1 = pc.self_attention(x, wq, wk, wv, bias=np.arange(4.0)[:, None]
                              * np.ones((4, 4)))
    np.testing.assert_allclose(A0, A1, atol=1e-12)


def test_self_attention_stable_for_large_scores():
    x = np.eye(3) * 1e4
    _, A = pc.self_attention(x, np.eye(3), np.eye(3), np.eye(3))
    assert np.all(np.isfinite(A))
    np.testing.assert_allclose(A, np.eye(3))


# ------------------------------------------------------------------ RoPE


def test_rope_rotates_pairs_interleaved_and_half():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    t = [1.0, 0.01]
    got = pc.apply_rope(x, [3])
    c, s = np.cos(3 * np.array(t)), np.sin(3 * np.array(t))
    np.testing.assert_allclose(got[0], [
        1 * c[0] - 2 * s[0], 2 * c[0] + 1 * s[0],
        3 * c[1] - 4 * s[1], 4 * c[1] + 3 * s[1]])
    got = pc.apply_rope(x, [3], layout="half")
    np.testing.assert_allclose(got[0], [
        1 * c[0] - 3 * s[0], 2 * c[1] - 4 * s[1],
        3 * c[0] + 1 * s[0], 4 * c[1] + 2 * s[1]])


def _rope_score_by_hand(q, k, m, n, layout, base=10000.0):
    """Re sum_i q_i conj(k_i) exp(1j (m - n) theta_i), pair i being
    x[2i] + 1j x[2i+1] (interleaved) or x[i] + 1j x[i + d/2] (half)."""
    d = len(q)
    total = 0.0
    for i in range(d // 2):
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        angle = (m - n) * base ** (-2 * i / d)
        total += (complex(q[a], q[b]) * complex(k[a], -k[b])
                  * complex(math.cos(angle), math.sin(angle))).real
    return total


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_relative_property(layout):
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, 32))
    def score(m, n):
        return (pc.apply_rope(q, [m], layout=layout)
                @ pc.apply_rope(k, [n], layout=layout).T).item()
    assert score(10, 3) == pytest.approx(score(107, 100), abs=1e-10)
    assert score(2.5, 0) == pytest.approx(score(1002.5, 1000), abs=1e-9)
    assert score(0, 0) == pytest.approx((q @ k.T).item())
    # the score of the rotation RoPE defines (counterclockwise by m theta_i,
    # on the layout's pairs): another direction or pairing fails here
    for m, n in [(10, 3), (3, 10), (2.5, 0), (0, 41)]:
        assert score(m, n) == pytest.approx(
            _rope_score_by_hand(q[0], k[0], m, n, layout), abs=1e-10)
    # norms are kept
    r = pc.apply_rope(q, [77], layout=layout)
    assert np.linalg.norm(r) == pytest.approx(np.linalg.norm(q))


def test_rope_layouts_differ_by_a_permutation():
    d = 8
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    x = np.random.default_rng(2).normal(size=(5, d))
    inter = pc.apply_rope(x, 5)
    half = pc.apply_rope(x[:, perm], 5, layout="half")
    np.testing.assert_allclose(half, inter[:, perm], atol=1e-12)


def test_rope_batch_axes_and_custom_frequencies():
    x = np.random.default_rng(3).normal(size=(2, 3, 4, 6))
    out = pc.apply_rope(x, [0, 1, 2, 3])
    assert out.shape == x.shape and out.dtype == np.float64
    np.testing.assert_allclose(out[1, 2], pc.apply_rope(x[1, 2], 4))
    np.testing.assert_allclose(pc.apply_rope(x, 4, frequencies=np.zeros(3)), x)
    f = pc.rope_frequencies(6, scaling={"type": "linear", "factor": 2})
    np.testing.assert_allclose(pc.apply_rope(x, 4, frequencies=f),
                               pc.apply_rope(x, [0, 0.5, 1, 1.5]))


def test_rope_frequencies_scalings():
    d = 128
    theta = pc.rope_frequencies(d)
    np.testing.assert_allclose(theta, pc.frequencies(d))
    lin = pc.rope_frequencies(d, scaling={"type": "linear", "factor": 4})
    np.testing.assert_allclose(lin, theta / 4)
    ntk = pc.rope_frequencies(d, scaling={"type": "ntk", "factor": 4})
    assert ntk[0] == theta[0]
    assert ntk[-1] == pytest.approx(theta[-1] / 4, rel=1e-12)
    assert np.all(ntk[1:] < theta[1:]) and np.all(ntk >= theta / 4 - 1e-15)


def _yarn_by_hand(d, base, s, L, beta_fast=32.0, beta_slow=1.0):
    """NTK-by-parts as YaRN's reference code (and transformers') computes it:
    a linear ramp over the pair index between the correction dimensions."""
    def correction_dim(rotations):
        return d * math.log(L / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(d // 2):
        theta = base ** (-2 * i / d)
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        out.append(theta / s * ramp + theta * (1 - ramp))
    return np.array(out), low, high


@pytest.mark.parametrize("d, base, s, L, fast, slow", [
    (128, 10000.0, 16.0, 4096, 32.0, 1.0),
    (64, 500000.0, 4.0, 8192, 16.0, 2.0),
    (32, 10000.0, 2.0, 100, 32.0, 1.0),  # the ramp is clipped at 0
])
def test_rope_frequencies_yarn_by_parts(d, base, s, L, fast, slow):
    theta = pc.rope_frequencies(d, base=base)
    yarn = pc.rope_frequencies(d, base=base, scaling={
        "type": "yarn", "factor": s, "original_max_position_embeddings": L,
        "beta_fast": fast, "beta_slow": slow})
    expected, low, high = _yarn_by_hand(d, base, s, L, fast, slow)
    np.testing.assert_allclose(yarn, expected, rtol=1e-13)
    # the middle band is there and is neither end's value
    i = np.arange(d // 2)
    ramp = (i > low) & (i < high)
    assert ramp.any()
    assert np.all((yarn[ramp] < theta[ramp]) & (yarn[ramp] > theta[ramp] / s))
    # pairs turning more than beta_fast times over L are kept exactly,
    # those turning less than beta_slow times are interpolated by s
    turns = L * theta / (2 * np.pi)
    np.testing.assert_allclose(yarn[turns > fast * 1.1],
                               theta[turns > fast * 1.1])
    np.testing.assert_allclose(yarn[turns < slow * 0.9],
                               theta[turns < slow * 0.9] / s)


def test_yarn_attention_scale():
    assert pc.yarn_attention_scale(16) == pytest.approx(0.1 * np.log(16) + 1)
    assert pc.yarn_attention_scale(1) == 1.0


@pytest.mark.parametrize("d, base, s, L, low, high", [
    (128, 500000.0, 8.0, 8192, 1.0, 4.0),
    (64, 10000.0, 4.0, 2048, 2.0, 8.0),
])
def test_rope_frequencies_llama3_bands(d, base, s, L, low, high):
    theta = pc.rope_frequencies(d, base=base)
    out = pc.rope_frequencies(d, base=base, scaling={
        "type": "llama3", "factor": s, "original_max_position_embeddings": L,
        "low_freq_factor": low, "high_freq_factor": high})
    # Llama 3.1's reference code, pair by pair
    expected, bands = [], []
    for t in theta.tolist():
        lam = 2 * math.pi / t
        if lam < L / high:
            expected.append(t)
            bands.append("kept")
        elif lam > L / low:
            expected.append(t / s)
            bands.append("divided")
        else:
            mu = (L / lam - low) / (high - low)
            expected.append((1 - mu) * t / s + mu * t)
            bands.append("smooth")
    np.testing.assert_allclose(out, expected, rtol=1e-13)
    assert {"kept", "smooth", "divided"} <= set(bands)
    mid = np.array(bands) == "smooth"
    assert np.all((out[mid] < theta[mid]) & (out[mid] > theta[mid] / s))


# ----------------------------------------------------- relative position


def test_relative_positions():
    R = pc.relative_positions(5)
    assert R[1, 4] == 3 and R[4, 1] == -3 and R.dtype.kind == "i"
    R = pc.relative_positions(6, max_distance=2)
    assert R.max() == 2 and R.min() == -2 and R[0, 5] == 2
    assert pc.relative_positions(0).shape == (0, 0)


def test_t5_buckets_known_values():
    b = pc.t5_relative_position_bucket
    # bidirectional: 16 buckets a side; 0..7 exact, then log up to 128
    np.testing.assert_array_equal(b(np.arange(-7, 1)), np.arange(7, -1, -1))
    np.testing.assert_array_equal(b(np.arange(1, 8)), 16 + np.arange(1, 8))
    assert b(-128) == 15 and b(-10000) == 15 and b(10000) == 31
    assert b(-8) == 8 and b(-12) == 9 and b(-16) == 10
    # causal: positive offsets (future keys) all in bucket 0
    c = pc.t5_relative_position_bucket(np.arange(0, 50), bidirectional=False)
    assert np.all(c == 0)
    np.testing.assert_array_equal(
        pc.t5_relative_position_bucket(-np.arange(16), bidirectional=False),
        np.arange(16))
    assert pc.t5_relative_position_bucket(-127, bidirectional=False) == 31
    out = b(np.zeros((2, 3), dtype=int))
    assert out.shape == (2, 3) and out.dtype == np.int64


def _t5_one_by_one(rel, bidirectional=True, num_buckets=32,
                   max_distance=128):
    """T5's formula in float32, one value at a time (Python loop)."""
    f32, out = np.float32, []
    n = num_buckets // 2 if bidirectional else num_buckets
    e = n // 2
    scale = f32(math.log(max_distance / e))
    for r in np.ravel(rel).tolist():
        side = n if bidirectional and r > 0 else 0
        dist = abs(r) if bidirectional else max(-r, 0)
        if dist < e:
            out.append(side + dist)
            continue
        ratio = f32(math.log(f32(dist) / f32(e)))
        out.append(side + min(e + int(ratio / scale * f32(n - e)), n - 1))
    return np.array(out).reshape(np.shape(rel))


@pytest.mark.parametrize("bidirectional, num_buckets, max_distance", [
    (True, 32, 128), (False, 32, 128), (True, 7, 3), (False, 301, 10**6),
    (True, 64, 10**15),
    # f32(2**25 + 1) = 2**25: max_distance is still in bucket 2**25, not in
    # the last one, so no table can be clipped at max_distance
    (False, 2**26, 2**25 + 1),
])
def test_t5_buckets_are_the_formula_value_by_value(bidirectional, num_buckets,
                                                    max_distance):
    """The vectorised lookup (a table of the buckets up to max_distance)
    gives what the formula gives value by value, whatever the input range
    and shape."""
    rng = np.random.default_rng(num_buckets)
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets,
              max_distance=max_distance)
    for rel in (rng.integers(-300, 300, size=(5, 40)),
                rng.integers(-3 * max_distance, 3 * max_distance, size=500),
                rng.integers(-2**53, 2**53, size=50),
                np.array([-max_distance - 1, -max_distance, -max_distance + 1,
                          max_distance, 0, -(2**53), 2**53]),
                np.arange(-1000, 1000, dtype=np.int32),
                np.array(-77)):
        np.testing.assert_array_equal(
            pc.t5_relative_position_bucket(rel, **kw),
            _t5_one_by_one(rel, **kw), err_msg=str(kw))


def test_t5_buckets_monotone_in_distance():
    d = np.arange(0, 400)
    for bidirectional in (True, False):
        b = pc.t5_relative_position_bucket(-d, bidirectional=bidirectional)
        assert np.all(np.diff(b) >= 0)


def test_alibi_slopes_paper_values():
    np.testing.assert_allclose(pc.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_allclose(pc.alibi_slopes(16), 2.0 ** (-np.arange(1, 17) / 2))
    # 6 heads: the 4-head slopes, then every other 8-head slope
    np.testing.assert_allclose(pc.alibi_slopes(6),
                               [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3])


def test_alibi_bias():
    B = pc.alibi_bias(4, 2)
    assert B.shape == (2, 4, 4)
    np.testing.assert_allclose(B[1], -pc.alibi_slopes(2)[1]
                               * np.abs(np.subtract.outer(range(4), range(4))))
    assert not np.signbit(B[:, 0, 0]).any()


# -------------------------------------------------------------- bad input


BAD_CALLS = [
    (lambda: pc.frequencies(7), "d_model", "even"),
    (lambda: pc.frequencies(0), "d_model", "positive"),
    (lambda: pc.frequencies(-4), "d_model", "positive"),
    (lambda: pc.frequencies(8.0), "d_model", "integer"),
    (lambda: pc.frequencies(True), "d_model", "integer"),
    (lambda: pc.frequencies(8, base=1.0), "base", "> 1"),
    (lambda: pc.frequencies(8, base=np.nan), "base", "finite"),
    (lambda: pc.wavelengths(8, base="10"), "base", "finite"),
    (lambda: pc.sinusoidal_encoding(-1, 8), "positions", ">= 0"),
    (lambda: pc.sinusoidal_encoding(4, 8, layout="half"), "layout",
     "interleaved"),
    (lambda: pc.sinusoidal_encoding([[1, 2]], 8), "positions", "1-D"),
    (lambda: pc.sinusoidal_encoding([1, np.inf], 8), "positions", "finite"),
    (lambda: pc.sinusoidal_encoding("abc", 8), "positions", "1-D"),
    (lambda: pc.sinusoidal_encoding([True], 8), "positions", "dtype"),
    (lambda: pc.sinusoidal_encoding(10**6, 10**6), "elements", "at most"),
    (lambda: pc.relative_shift_matrix(np.nan, 8), "delta", "finite"),
    (lambda: pc.relative_shift_matrix(1, 5), "d_model", "even"),
    (lambda: pc.binary_encoding(4, 0), "n_bits", "1 to 63"),
    (lambda: pc.binary_encoding(4, 64), "n_bits", "1 to 63"),
    (lambda: pc.binary_encoding([2**54], 3), "positions", "integer"),
    (lambda: pc.binary_encoding([-1], 3), "positions", "non-negative"),
    (lambda: pc.binary_encoding([1.5], 3), "positions", "integer"),
    (lambda: pc.self_attention(np.ones(3), np.ones((3, 2)), np.ones((3, 2)),
                               np.ones((3, 2))), "x", "2-D"),
    (lambda: pc.self_attention(np.ones((2, 3)), np.ones((4, 2)),
                               np.ones((3, 2)), np.ones((3, 2))), "w_q",
     "shape"),
    (lambda: pc.self_attention(np.ones((2, 3)), np.ones((3, 2)),
                               np.ones((3, 5)), np.ones((3, 2))), "w_k",
     "columns"),
    (lambda: pc.self_attention(np.ones((2, 3)), *[np.ones((3, 2))] * 3,
                               bias=np.ones((3, 3))), "bias", "(2, 2)"),
    (lambda: pc.self_attention(np.ones((2, 3)), *[np.ones((3, 2))] * 3,
                               bias=np.full((2, 2), np.nan)), "bias", "-inf"),
    (lambda: pc.self_attention(np.ones((2, 3)), *[np.ones((3, 2))] * 3,
                               bias=np.full((2, 2), -np.inf)), "bias",
     "at least one key"),
    (lambda: pc.self_attention(np.ones((2, 3)), *[np.ones((3, 2))] * 3,
                               causal="yes"), "causal", "True or False"),
    (lambda: pc.apply_rope(np.ones((2, 3)), 2), "x", "even"),
    (lambda: pc.apply_rope(np.ones(4), 1), "x", "(..., n, d)"),
    (lambda: pc.apply_rope(np.ones((2, 4)), 3), "positions", "one position"),
    (lambda: pc.apply_rope(np.ones((2, 4)), 2, layout="concat"), "layout",
     "half"),
    (lambda: pc.apply_rope(np.ones((2, 4)), 2, frequencies=[1.0]),
     "frequencies", "2"),
    (lambda: pc.t5_relative_position_bucket([1.5]), "relative_position",
     "integer"),
    (lambda: pc.t5_relative_position_bucket(1, num_buckets=2), "num_buckets",
     ">= 4"),
    (lambda: pc.t5_relative_position_bucket(1, max_distance=8),
     "max_distance", "> 8"),
    (lambda: pc.alibi_slopes(0), "n_heads", ">= 1"),
    (lambda: pc.alibi_bias(-2, 4), "n", ">= 0"),
    (lambda: pc.relative_positions(3, max_distance=-1), "max_distance",
     ">= 0"),
    (lambda: pc.relative_positions(3.0), "n", "integer"),
    (lambda: pc.rope_frequencies(9), "head_dim", "even"),
    (lambda: pc.rope_frequencies(8, scaling={"type": "magic", "factor": 2}),
     "scaling type", "linear"),
    (lambda: pc.rope_frequencies(8, scaling="linear"), "scaling", "dict"),
    (lambda: pc.rope_frequencies(8, scaling={"type": "linear"}), "scaling",
     "factor"),
    (lambda: pc.rope_frequencies(8, scaling={"type": "linear", "factor": 0.5}),
     "factor", ">= 1"),
    (lambda: pc.rope_frequencies(8, scaling={"type": "linear", "factor": 2,
                                             "beta_fast": 3}),
     "scaling", "beta_fast"),
    (lambda: pc.rope_frequencies(8, scaling={"type": "yarn", "factor": 2}),
     "scaling", "original_max_position_embeddings"),
    (lambda: pc.rope_frequencies(8, scaling={
        "type": "llama3", "factor": 2, "original_max_position_embeddings": 64,
        "low_freq_factor": 4, "high_freq_factor": 2}), "high_freq_factor",
     "at least"),
    (lambda: pc.rope_frequencies(2, scaling={"type": "ntk", "factor": 2}),
     "head_dim", "at least 4"),
    (lambda: pc.yarn_attention_scale(0.5), "factor", ">= 1"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_raises_value_error_naming_argument(call, name, allowed):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert name in message
    assert allowed in message
