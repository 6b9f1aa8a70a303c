"""Tests for chapter 6: the RoPE functions of posenc_core and the figures.

Each test would fail if its subject were wrong: published or hand-computed
values, properties that define the function, and errors on bad input.
"""

import cmath
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_core as pc
from posenc_plots import ch06_rope as figs

# ------------------------------------------------------- rope_decay_bound


def naive_bound(r, d, base=10000.0):
    """RoFormer section 3.4.3, written out with Python loops."""
    theta = [base ** (-2 * k / d) for k in range(d // 2)]
    total = 0.0
    for j in range(1, d // 2 + 1):
        S_j = sum(np.exp(1j * r * theta[k]) for k in range(j))
        total += abs(S_j)
    return total / (d // 2)


@pytest.mark.parametrize("d", [2, 4, 8, 64, 128, 256])
def test_decay_bound_at_zero_is_mean_of_1_to_half_d(d):
    # |S_j| = j at r = 0, so the mean over j = 1..d/2 is (d/2 + 1)/2
    assert pc.rope_decay_bound([0], d)[0] == pytest.approx((d // 2 + 1) / 2)


@pytest.mark.parametrize("d,base", [(4, 10000.0), (16, 100.0), (128, 1e4)])
def test_decay_bound_matches_the_written_out_sum(d, base):
    r = np.array([0.0, 1.0, 2.5, 7.0, 50.0, 250.0, -3.0])
    expected = [naive_bound(x, d, base) for x in r]
    np.testing.assert_allclose(pc.rope_decay_bound(r, d, base=base),
                               expected, rtol=1e-12)


def test_decay_bound_values_for_head_dim_128():
    B = pc.rope_decay_bound(257, 128)
    assert B.shape == (257,)
    assert B[0] == 32.5
    assert round(float(B[1]), 2) == 31.54
    assert round(float(B[50]), 2) == 12.63
    assert round(float(B[100]), 2) == 10.23
    assert round(float(B[250]), 2) == 6.55
    # the decay is not monotone: the minimum on 0..256 is at 236
    assert int(np.argmin(B)) == 236
    assert np.any(np.diff(B) > 0)


def test_decay_bound_is_even_and_frequencies_argument_agrees():
    r = np.arange(0, 40, 0.5)
    np.testing.assert_allclose(pc.rope_decay_bound(r, 32),
                               pc.rope_decay_bound(-r, 32), rtol=1e-12)
    theta = pc.rope_frequencies(32, base=500.0)
    np.testing.assert_allclose(
        pc.rope_decay_bound(r, 32, frequencies=theta),
        pc.rope_decay_bound(r, 32, base=500.0), rtol=1e-12)
    # frequencies all zero: nothing rotates, no decay
    flat = pc.rope_decay_bound(r, 32, frequencies=np.zeros(16))
    np.testing.assert_allclose(flat, 8.5)


def partial_sums(r, d, base=10000.0):
    """S_j = sum_{i<j} e^{1j r theta_i} for j = 1..d/2, with Python loops."""
    out, total = [], 0j
    for i in range(d // 2):
        total += cmath.exp(1j * r * base ** (-2 * i / d))
        out.append(total)
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 32), st.integers(0, 2**31 - 1),
       st.integers(-2000, 2000))
def test_decay_bound_bounds_the_rotary_score(half, seed, r):
    """RoFormer 3.4.3, step by step: the score is Re sum_i h_i e^{1j r
    theta_i}, with h_i = q_i conj(k_i) (pairs as complex numbers); Abel
    summation turns it into Re sum_j (h_{j-1} - h_j) S_j, so
    |score| <= max_j |h_{j-1} - h_j| * (d/2) * B(r)."""
    d = 2 * half
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 1, d))
    m, n = 3000 + r, 3000
    score = float(pc.apply_rope(q, [m])[0] @ pc.apply_rope(k, [n])[0])
    h = (q[0, 0::2] + 1j * q[0, 1::2]) * np.conj(k[0, 0::2] + 1j * k[0, 1::2])
    theta = [10000.0 ** (-2 * i / d) for i in range(half)]
    direct = sum(h[i] * cmath.exp(1j * r * theta[i]) for i in range(half))
    assert score == pytest.approx(direct.real, abs=1e-9)
    S = partial_sums(r, d)
    h = np.append(h, 0.0)  # h_{d/2} = 0
    abel = sum((h[j] - h[j + 1]) * S[j] for j in range(half))
    assert abel == pytest.approx(direct, abs=1e-9)
    bound = np.abs(np.diff(h)).max() * half * pc.rope_decay_bound([r], d)[0]
    assert abs(score) <= bound * (1 + 1e-9) + 1e-12


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 32), st.integers(-2000, 2000))
def test_decay_bound_is_attained(half, r):
    """The bound is tight: with h_{j-1} - h_j = conj(S_j) / |S_j| (so that
    max |h_{j-1} - h_j| = 1) and k = (1, 0) in every pair, the score at
    distance r is (d/2) B(r) exactly. A bound too large fails here."""
    d = 2 * half
    S = partial_sums(r, d)
    if min(abs(s) for s in S) < 1e-9:
        return  # no direction to align with
    h = [0j] * (half + 1)
    for j in range(half, 0, -1):
        h[j - 1] = h[j] + np.conj(S[j - 1]) / abs(S[j - 1])
    q = np.array([[v for z in h[:half] for v in (z.real, z.imag)]])
    k = np.tile([1.0, 0.0], (1, half))
    score = float(pc.apply_rope(q, [r])[0] @ pc.apply_rope(k, [0])[0])
    B = pc.rope_decay_bound([r], d)[0]
    assert score == pytest.approx(half * B, rel=1e-9)
    assert B == pytest.approx(sum(abs(s) for s in S) / half, rel=1e-12)


@pytest.mark.parametrize("kwargs", [
    dict(distances=[0], head_dim=3),
    dict(distances=[0], head_dim=0),
    dict(distances=[0], head_dim=8.0),
    dict(distances=[0], head_dim=8, base=1.0),
    dict(distances=[np.inf], head_dim=8),
    dict(distances=[[0, 1]], head_dim=8),
    dict(distances=-1, head_dim=8),
    dict(distances=[0], head_dim=8, frequencies=[1.0, 0.1]),
    dict(distances=[0], head_dim=4, frequencies=[1.0, -0.1]),
    dict(distances=2**20, head_dim=2**10),
])
def test_decay_bound_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        pc.rope_decay_bound(**kwargs)


def test_decay_bound_error_names_the_argument():
    with pytest.raises(ValueError, match="head_dim"):
        pc.rope_decay_bound([0], 5)
    with pytest.raises(ValueError, match="frequencies"):
        pc.rope_decay_bound([0], 4, frequencies=[1.0])


# ------------------------------------------------ rope_layout_permutation


def test_layout_permutation_known_value_and_is_a_permutation():
    assert pc.rope_layout_permutation(2).tolist() == [0, 1]
    assert pc.rope_layout_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    for d in (2, 4, 6, 128):
        p = pc.rope_layout_permutation(d)
        assert p.dtype == np.int64
        assert sorted(p.tolist()) == list(range(d))


@pytest.mark.parametrize("d", [2, 4, 8, 64, 128])
def test_layout_permutation_equals_the_hf_conversion_reshape(d):
    # convert_llama_weights_to_hf.py: w.view(heads, d // 2, 2, -1)
    # .transpose(1, 2).reshape(d, -1) reorders one head's rows like this
    rows = np.arange(d).reshape(d // 2, 2).T.reshape(-1)
    assert pc.rope_layout_permutation(d).tolist() == rows.tolist()


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 16), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_layout_permutation_maps_interleaved_to_half(half, n, seed):
    d = 2 * half
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, n, d))
    pos = rng.uniform(-1000, 1000, size=n)
    p = pc.rope_layout_permutation(d)
    np.testing.assert_allclose(
        pc.apply_rope(x[..., p], pos, layout="half"),
        pc.apply_rope(x, pos)[..., p], atol=1e-9)
    inv = np.argsort(p)
    np.testing.assert_allclose(
        pc.apply_rope(x[..., inv], pos),
        pc.apply_rope(x, pos, layout="half")[..., inv], atol=1e-9)


@pytest.mark.parametrize("bad", [0, 3, -2, 4.0, "8", None, True])
def test_layout_permutation_rejects_bad_head_dim(bad):
    with pytest.raises(ValueError, match="head_dim"):
        pc.rope_layout_permutation(bad)


# ------------------------------------------------------ round_significand


def test_round_significand_bfloat16_and_float16_integers():
    rs = pc.round_significand
    assert rs([255, 256, 257, 258, 259, 4097], 8).tolist() == [
        255, 256, 256, 258, 260, 4096]
    assert rs([2047, 2048, 2049, 2051], 11).tolist() == [
        2047, 2048, 2048, 2052]
    # integers below 2**bits are exact, 2**bits + 1 is not
    for bits in (8, 11, 24):
        ints = np.arange(2**bits + 1, dtype=np.float64)
        assert np.array_equal(rs(ints, bits), ints)
        assert rs([2**bits + 1], bits)[0] == 2**bits
    assert len(np.unique(rs(np.arange(8192.0), 8))) == 897


def test_round_significand_zero_sign_and_shape():
    out = pc.round_significand(np.array([[0.0, -0.0], [-257.0, 1e-300]]), 8)
    assert out.shape == (2, 2) and out.dtype == np.float64
    assert out[0, 0] == 0.0 and out[1, 0] == -256.0
    assert out[1, 1] == pytest.approx(1e-300, rel=2**-8)
    assert pc.round_significand(3.0, 2).shape == ()
    assert pc.round_significand([1.1], 53)[0] == 1.1


@settings(max_examples=200, deadline=None)
@given(st.floats(6.2e-5, 65000.0), st.booleans())
def test_round_significand_11_bits_is_numpy_float16(x, negative):
    x = -x if negative else x
    assert pc.round_significand([x], 11)[0] == float(np.float16(x))


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e30, 1e30, allow_subnormal=False))
def test_round_significand_24_bits_is_numpy_float32(x):
    if x != 0 and abs(x) < 1.2e-38:
        return  # float32 subnormals are not modelled
    assert pc.round_significand([x], 24)[0] == float(np.float32(x))


def test_round_significand_8_bits_is_torch_bfloat16():
    import torch  # a test requirement: missing, it fails rather than skips

    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.normal(scale=10.0 ** rng.integers(-6, 7, size=2000)),
        np.arange(0, 70000, 7, dtype=np.float64),
        np.arange(256, 512) + 0.5,
    ]).astype(np.float32)
    expected = torch.from_numpy(x).bfloat16().float().numpy()
    assert np.array_equal(pc.round_significand(x, 8), expected)


@settings(max_examples=100, deadline=None)
@given(st.floats(-1e12, 1e12), st.integers(1, 53))
def test_round_significand_properties(x, bits):
    y = pc.round_significand([x], bits)[0]
    assert abs(y - x) <= abs(x) * 2.0**-bits  # half a unit in the last place
    assert pc.round_significand([y], bits)[0] == y  # idempotent
    assert pc.round_significand([-x], bits)[0] == -y  # odd function
    if y != 0:
        m, _ = np.frexp(y)  # y has at most `bits` significant bits
        assert float(np.ldexp(m, bits)).is_integer()


@pytest.mark.parametrize("x,bits,match", [
    ([1.0], 0, "bits"),
    ([1.0], 54, "bits"),
    ([1.0], 8.0, "bits"),
    ([1.0], True, "bits"),
    ([np.nan], 8, "x"),
    ([np.inf], 8, "x"),
    ("257", 8, "x"),
    ([1 + 2j], 8, "x"),
])
def test_round_significand_rejects_bad_input(x, bits, match):
    with pytest.raises(ValueError, match=match):
        pc.round_significand(x, bits)


# ----------------------------------------------------------------- figures


def _line(fig, gid):
    found = [ln for ax in fig.axes for ln in ax.lines if ln.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


def rotate(xy, angle):
    """A 2-D vector turned counterclockwise by ``angle``, by hand."""
    x, y = xy
    return np.array([x * math.cos(angle) - y * math.sin(angle),
                     x * math.sin(angle) + y * math.cos(angle)])


def check_rotating_pair(fig, m, n, pair, head_dim=8, base=10000.0):
    theta = base ** (-2 * pair / head_dim)
    q, k = rotate(figs.Q_PAIR, m * theta), rotate(figs.K_PAIR, n * theta)
    np.testing.assert_allclose(_line(fig, "q_rotated").get_xydata()[1], q,
                               atol=1e-12)
    np.testing.assert_allclose(_line(fig, "k_rotated").get_xydata()[1], k,
                               atol=1e-12)
    track = _line(fig, "q_track").get_xydata()
    expected = [rotate(figs.Q_PAIR, p * theta) for p in range(m + 1)]
    np.testing.assert_allclose(track, expected, atol=1e-12)
    assert f"q.k = {q @ k:.3f}" in fig.axes[0].get_title()


@pytest.mark.parametrize("m,n,pair", [(3, 1, 0), (0, 7, 2), (40, 40, 3)])
def test_rotating_pair_draws_the_rotation(m, n, pair):
    check_rotating_pair(figs.plot_rotating_pair(m=m, n=n, pair=pair), m, n,
                        pair)


def test_score_matrices_are_the_two_score_tables():
    fig = figs.plot_score_matrices(n=12, head_dim=6, base=50.0, seed=3)
    rope = fig.axes[0].images[0].get_array()
    added = fig.axes[1].images[0].get_array()
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 6))
    for m, n in [(0, 0), (5, 2), (2, 5), (11, 7)]:
        # pair i turned by (m - n) theta_i relative to the other, by hand
        expected = sum(
            (rotate(q[2 * i:2 * i + 2], m * 50.0 ** (-2 * i / 6))
             @ rotate(k[2 * i:2 * i + 2], n * 50.0 ** (-2 * i / 6)))
            for i in range(3))
        assert rope[m, n] == pytest.approx(expected, abs=1e-12)
    P = pc.sinusoidal_encoding(12, 6, base=50.0)
    np.testing.assert_allclose(added, (q + P) @ (k + P).T)
    # rotary: constant along diagonals; added sinusoid: not
    np.testing.assert_allclose(rope[1:, 1:], rope[:-1, :-1], atol=1e-12)
    assert not np.allclose(added[1:, 1:], added[:-1, :-1])


def test_score_matrices_use_given_query_and_key():
    q, k = np.arange(8.0), np.ones(8)
    fig = figs.plot_score_matrices(q=q, k=k, n=5)
    rope = fig.axes[0].images[0].get_array()
    Q = pc.apply_rope(np.tile(q, (5, 1)), 5)
    K = pc.apply_rope(np.tile(k, (5, 1)), 5)
    np.testing.assert_allclose(rope, Q @ K.T)


@pytest.mark.parametrize("head_dim,base,max_distance",
                         [(128, 1e4, 256), (8, 10.0, 64), (256, 1e6, 4096)])
def test_decay_figure_plots_rope_decay_bound(head_dim, base, max_distance):
    fig = figs.plot_decay_bound(head_dim=head_dim, base=base,
                                max_distance=max_distance)
    line = _line(fig, "bound")
    np.testing.assert_array_equal(line.get_xdata(), np.arange(max_distance + 1))
    np.testing.assert_allclose(
        line.get_ydata(),
        pc.rope_decay_bound(max_distance + 1, head_dim, base=base))


def test_layout_figure_shows_rotations_and_permutation():
    fig = figs.plot_layouts(m=4, head_dim=8, base=100.0)
    R_int, Pi, R_half = (fig.axes[i].images[0].get_array() for i in range(3))
    # by hand: a 2-D rotation by 4 theta_i on pairs (2i, 2i+1), resp.
    # (i, i + 4), with theta_i = 100 ** (-2i/8)
    for layout, R in (("interleaved", R_int), ("half", R_half)):
        expected = np.zeros((8, 8))
        for i in range(4):
            a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + 4)
            c, s = math.cos(4 * 100.0 ** (-i / 4)), math.sin(4 * 100.0 ** (-i / 4))
            expected[np.ix_([a, b], [a, b])] = [[c, -s], [s, c]]
        np.testing.assert_allclose(R, expected, atol=1e-12)
    x = np.random.default_rng(0).normal(size=8)
    np.testing.assert_allclose(R_int @ x, pc.apply_rope([x], [4], base=100.0)[0])
    np.testing.assert_allclose(
        R_half @ x, pc.apply_rope([x], [4], base=100.0, layout="half")[0])
    np.testing.assert_allclose(Pi @ R_int @ Pi.T, R_half, atol=1e-12)
    np.testing.assert_array_equal(Pi @ np.arange(8),
                                  pc.rope_layout_permutation(8))


def naive_table_error(max_position, d, angle_bits, table_bits):
    rs = pc.round_significand
    theta = pc.rope_frequencies(d)
    out, worst = [], 0.0
    for p in range(max_position + 1):
        angle = rs(rs([float(p)], angle_bits)[0] * rs(theta, angle_bits),
                   angle_bits)
        cos, sin = np.cos(angle), np.sin(angle)
        if table_bits:
            cos, sin = rs(cos, table_bits), rs(sin, table_bits)
        err = max(np.abs(cos - np.cos(p * theta)).max(),
                  np.abs(sin - np.sin(p * theta)).max())
        worst = max(worst, err)
        out.append(worst)
    return np.array(out)


@pytest.mark.parametrize("angle_bits,table_bits", [(8, None), (11, None),
                                                   (24, None), (24, 8)])
def test_table_error_matches_a_position_by_position_loop(angle_bits,
                                                         table_bits):
    got = figs.table_error(300, 16, angle_bits=angle_bits,
                           table_bits=table_bits, chunk=7)
    np.testing.assert_allclose(
        got, naive_table_error(300, 16, angle_bits, table_bits), rtol=1e-12)
    assert np.all(np.diff(got) >= 0)


def test_table_error_known_behaviour():
    assert np.all(figs.table_error(500, 32, angle_bits=53) == 0)
    # bfloat16: position 257 is stored as 256, a whole radian off for pair 0
    assert figs.table_error(300, 128, angle_bits=8)[-1] > 0.8
    # cos/sin stored in bfloat16 cost at most 2**-9 when angles are exact
    stored = figs.table_error(2000, 64, angle_bits=53, table_bits=8)
    assert 2**-10 < stored[-1] <= 2**-9


def test_table_error_figure_lines_are_table_error():
    fig = figs.plot_table_error(max_position=3000, head_dim=16)
    assert [ln.get_gid() for ln in fig.axes[0].lines[:4]] == [
        s[0] for s in figs.SCHEMES]
    for label, angle_bits, table_bits in figs.SCHEMES:
        line = _line(fig, label)
        expected = figs.table_error(3000, 16, angle_bits=angle_bits,
                                    table_bits=table_bits)[1:]
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 3001))
        np.testing.assert_allclose(line.get_ydata(), expected)


def test_float16_line_stops_at_its_largest_finite_number():
    fig = figs.plot_table_error(max_position=70000, head_dim=4)
    assert _line(fig, "angles in float16").get_xdata()[-1] == 65504
    assert _line(fig, "angles in bfloat16").get_xdata()[-1] == 70000


def decay_bound_by_hand(max_distance, head_dim, base):
    """B(r) for r = 0..max_distance, vectorised over r, written afresh."""
    r = np.arange(max_distance + 1)[:, None]
    theta = base ** (-2.0 * np.arange(head_dim // 2) / head_dim)
    S = np.cumsum(np.exp(1j * r * theta), axis=1)
    return np.abs(S).mean(axis=1)


def test_every_slider_value_draws_what_it_says():
    """Each slider moved alone over its whole range: what is drawn is the
    data of that value, computed here by hand (so a figure that ignores a
    slider, or rotates the wrong way, fails)."""
    assert figs.INTERACTIVE == (figs.ROTATING_PAIR, figs.DECAY_BOUND)
    spec = figs.ROTATING_PAIR
    defaults = spec.defaults()
    for slider in spec.sliders:
        for value in slider.values():
            kw = {**defaults, slider.name: value}
            fig = spec.plot(**kw)
            check_rotating_pair(fig, kw["m"], kw["n"], kw["pair"])
            plt.close(fig)
    spec = figs.DECAY_BOUND
    defaults = spec.defaults()
    for slider in spec.sliders:
        drawn = []
        for value in slider.values():
            kw = {**defaults, slider.name: value}
            fig = spec.plot(**kw)
            line = _line(fig, "bound")
            np.testing.assert_array_equal(
                line.get_xdata(), np.arange(kw["max_distance"] + 1))
            expected = decay_bound_by_hand(kw["max_distance"],
                                           kw["head_dim"], kw["base"])
            np.testing.assert_allclose(line.get_ydata(), expected,
                                       rtol=1e-9, err_msg=str(kw))
            drawn.append(np.asarray(line.get_ydata()))
            plt.close(fig)
        # every step of the slider changes the curve
        for a, b in zip(drawn, drawn[1:], strict=False):
            assert a.shape != b.shape or not np.allclose(a, b), slider.name


@pytest.mark.parametrize("plot", [figs.plot_score_matrices,
                                  figs.plot_layouts])
def test_static_figures_fit_the_column_readably(plot):
    # the book's column shows a figure at most 672 px wide: at >= 80
    # displayed pixels per figure inch (issue 23), at most 8.4 in
    fig = plot()
    fig.canvas.draw()
    assert fig.get_tightbbox().width <= 672 / 80
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "_(" not in titles and "$" in titles  # mathtext, not ASCII TeX
