"""Property-based tests of posenc_core with hypothesis."""

import cmath
import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc_core as pc

d_models = st.integers(1, 64).map(lambda h: 2 * h)
bases = st.floats(1.5, 1e6)
reals = st.floats(-1e4, 1e4, allow_nan=False)


@given(d_models, bases, st.lists(reals, min_size=1, max_size=6), reals)
def test_shift_identity_for_any_pos_and_delta(d, base, ps, delta):
    M = pc.relative_shift_matrix(delta, d, base=base)
    P = pc.sinusoidal_encoding(ps, d, base=base)
    shifted = pc.sinusoidal_encoding(np.asarray(ps) + delta, d, base=base)
    # angles up to ~2e4 rad: rounding of pos*omega costs ~1e-12
    np.testing.assert_allclose(P @ M.T, shifted, atol=1e-9)


@given(d_models, bases, reals, reals, st.integers(-500, 500))
def test_dot_product_depends_only_on_offset(d, base, p, q, shift):
    P = pc.sinusoidal_encoding([p, q, p + shift, q + shift], d, base=base)
    assert P[0] @ P[1] == pytest.approx(P[2] @ P[3], abs=1e-8)
    # sin(a) sin(b) + cos(a) cos(b) = cos(a - b), pair by pair
    omega = [base ** (-2 * i / d) for i in range(d // 2)]
    expected = sum(math.cos(w * (p - q)) for w in omega)
    assert P[0] @ P[1] == pytest.approx(expected, abs=1e-8)


@given(d_models, bases, st.lists(reals, min_size=1, max_size=5))
def test_encoding_bounded_with_unit_pairs(d, base, ps):
    P = pc.sinusoidal_encoding(ps, d, base=base)
    assert P.shape == (len(ps), d)
    assert np.all(np.abs(P) <= 1.0)
    np.testing.assert_allclose(P[:, 0::2] ** 2 + P[:, 1::2] ** 2, 1.0)


def rope_score(q, k, m, n, base, layout):
    """q rotated to position m, dotted with k rotated to n, by hand.

    Pair i is the complex number x[a] + 1j * x[b], with (a, b) = (2i, 2i+1)
    interleaved or (i, i + d/2) half, turned counterclockwise by the angle
    position * theta_i: the score is Re sum_i q_i conj(k_i) e^{1j (m-n)
    theta_i}. A rotation the other way or another pairing gives another
    number.
    """
    d = len(q)
    half = d // 2
    total = 0.0
    for i in range(half):
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half)
        theta = base ** (-2 * i / d)
        total += (complex(q[a], q[b]) * complex(k[a], -k[b])
                  * cmath.exp(1j * (m - n) * theta)).real
    return total


@given(d_models, bases, st.sampled_from(["interleaved", "half"]),
       st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 10_000),
       st.integers(0, 2**32 - 1))
def test_rope_score_depends_only_on_offset(d, base, layout, m, n, shift, seed):
    q, k = np.random.default_rng(seed).normal(size=(2, 1, d))

    def score(a, b):
        qa = pc.apply_rope(q, [a], base=base, layout=layout)
        kb = pc.apply_rope(k, [b], base=base, layout=layout)
        return (qa @ kb.T).item()

    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert score(m, n) == pytest.approx(score(m + shift, n + shift),
                                        abs=1e-9 * scale)
    # and it is the score of the rotation RoPE defines, not of another one
    assert score(m, n) == pytest.approx(
        rope_score(q[0], k[0], m, n, base, layout), abs=1e-9 * scale)


@given(st.integers(2, 200), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_attention_rows_are_distributions(n, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) * 5
    w = rng.normal(size=(3, d, 4))
    for causal in (False, True):
        out, A = pc.self_attention(x, *w, causal=causal)
        assert np.all(A >= 0)
        np.testing.assert_allclose(A.sum(axis=1), 1.0)
        if causal:
            assert np.all(np.triu(A, 1) == 0)


@given(st.lists(st.integers(0, 2**20 - 1), min_size=1, max_size=20))
def test_binary_encoding_round_trip(ps):
    B = pc.binary_encoding(ps, 20)
    np.testing.assert_array_equal(B @ (2 ** np.arange(20)), ps)


@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=50),
       st.booleans(), st.integers(2, 64), st.integers(0, 500))
def test_t5_buckets_in_range(rel, bidirectional, half, extra):
    num_buckets = 2 * half
    n = num_buckets // 2 if bidirectional else num_buckets
    max_distance = n // 2 + 1 + extra
    b = pc.t5_relative_position_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets,
        max_distance=max_distance)
    assert np.all((b >= 0) & (b < num_buckets))
    rel = np.asarray(rel)
    if bidirectional:
        assert np.all((b >= n) == (rel > 0))
    else:
        assert np.all(b[rel >= 0] == 0)


@given(st.integers(1, 300))
def test_alibi_slopes_in_range_and_distinct(n_heads):
    m = pc.alibi_slopes(n_heads)
    assert m.shape == (n_heads,)
    assert np.all((m > 0) & (m < 1))
    assert len(np.unique(m)) == n_heads


@given(st.integers(2, 128).map(lambda h: 2 * h), st.floats(1.0, 64.0),
       st.sampled_from(["linear", "ntk", "yarn", "llama3"]),
       st.integers(64, 65536))
def test_scaled_frequencies_stay_between_theta_over_s_and_theta(d, s, kind, L):
    params = {"type": kind, "factor": s}
    if kind in ("yarn", "llama3"):
        params["original_max_position_embeddings"] = L
    theta = pc.rope_frequencies(d)
    got = pc.rope_frequencies(d, scaling=params)
    assert got.shape == theta.shape
    assert np.all(got <= theta * (1 + 1e-12))
    assert np.all(got >= theta / s * (1 - 1e-12))


junk = st.one_of(
    st.none(), st.text(max_size=3), st.floats(allow_nan=True),
    st.integers(-10**20, 10**20), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@given(junk, junk)
def test_junk_arguments_raise_value_error_only(a, b):
    """Junk is refused with a ValueError naming an argument (the one the
    junk went to, or one it conflicts with: a num_buckets too large for the
    default max_distance) or the size of the result; or it is accepted,
    being valid after all."""
    calls = [
        (pc.sinusoidal_encoding, {"positions": a, "d_model": b}),
        (pc.frequencies, {"d_model": a}),
        (pc.wavelengths, {"d_model": 8, "base": a}),
        (pc.relative_shift_matrix, {"delta": a, "d_model": b}),
        (pc.binary_encoding, {"positions": a, "n_bits": b}),
        (pc.apply_rope, {"x": a, "positions": b}),
        (pc.t5_relative_position_bucket,
         {"relative_position": a, "num_buckets": b}),
        (pc.alibi_slopes, {"n_heads": a}),
        (pc.alibi_bias, {"n": a, "n_heads": b}),
        (pc.relative_positions, {"n": a, "max_distance": b}),
        (pc.rope_frequencies, {"head_dim": 8, "scaling": a}),
        (pc.yarn_attention_scale, {"factor": a}),
    ]
    for fn, kwargs in calls:
        names = "|".join(["elements", *inspect.signature(fn).parameters])
        try:
            fn(**kwargs)
        except ValueError as err:
            assert re.search(names, str(err)), (fn.__name__, str(err))
