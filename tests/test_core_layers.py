"""Chapter 10's core functions: properties and published values.

Partial rotation in its two conventions, Llama 4's NoPE-layer query
temperature. Their agreement with transformers is in
tests/test_reference_layers.py.
"""

import math

import numpy as np
import pytest

import posenc_core as pc

# ------------------------------------------------------ partial rotation


@pytest.mark.parametrize("d, base", [(2, 10.0), (64, 1e4), (128, 5e5)])
@pytest.mark.parametrize("convention", ["spread", "proportional"])
def test_full_fraction_is_plain_rope(d, base, convention):
    got = pc.partial_rope_frequencies(d, 1.0, base=base,
                                      convention=convention)
    np.testing.assert_array_equal(got, pc.rope_frequencies(d, base=base))


@pytest.mark.parametrize("convention", ["spread", "proportional"])
def test_zero_fraction_rotates_nothing(convention):
    got = pc.partial_rope_frequencies(64, 0.0, convention=convention)
    np.testing.assert_array_equal(got, np.zeros(32))


@pytest.mark.parametrize("d, f", [(64, 0.25), (128, 0.5), (80, 0.4),
                                  (256, 0.25), (96, 0.75)])
def test_spread_is_a_narrower_head(d, f):
    # the rotated slice behaves as a head of width r = f d: the whole
    # spectrum, 1 down to b**(-(r-2)/r), over r/2 pairs
    r = int(d * f)
    got = pc.partial_rope_frequencies(d, f, base=1e4)
    np.testing.assert_array_equal(got[:r // 2], pc.rope_frequencies(r))
    np.testing.assert_array_equal(got[r // 2:], 0.0)


@pytest.mark.parametrize("d, f", [(64, 0.25), (128, 0.5), (80, 0.4),
                                  (512, 0.25), (96, 0.75)])
def test_proportional_keeps_the_fastest_pairs(d, f):
    k = int(f * d // 2)
    full = pc.rope_frequencies(d, base=1e6)
    got = pc.partial_rope_frequencies(d, f, base=1e6,
                                      convention="proportional")
    np.testing.assert_array_equal(got[:k], full[:k])
    np.testing.assert_array_equal(got[k:], 0.0)


def test_odd_rotated_width_follows_transformers():
    # r = int(10 * 0.5) = 5 is odd: 3 pairs with exponents 0, 2/5, 4/5
    got = pc.partial_rope_frequencies(10, 0.5, base=100.0)
    np.testing.assert_allclose(got, [1.0, 100 ** -0.4, 100 ** -0.8, 0, 0],
                               rtol=1e-15)


def _longest(omega):
    return 2 * np.pi / omega[omega > 0].min()


@pytest.mark.parametrize("d, base, log10_ratio", [
    (128, 1e4, 2.8125),       # a typical head with the original base
    (128, 5e5, 4.007),        # Llama 3's base
    (512, 1e6, 4.430),        # Gemma 4's global layers
    (256, 1e7, 5.086),        # Qwen3-Next / Qwen3.5's head and base
])
def test_longest_wavelength_at_a_quarter(d, base, log10_ratio):
    # at f = 1/4 the longest rotated wavelengths are 2 pi b**(1 - 8/d)
    # (spread, r = d/4) and 2 pi b**(1/4 - 2/d) (proportional): a ratio
    # b**(3/4 - 6/d), five orders of magnitude only for bases near 1e7
    s = pc.partial_rope_frequencies(d, 0.25, base=base)
    p = pc.partial_rope_frequencies(d, 0.25, base=base,
                                    convention="proportional")
    assert _longest(s) == pytest.approx(2 * np.pi * base ** (1 - 8 / d),
                                        rel=1e-12)
    assert _longest(p) == pytest.approx(2 * np.pi * base ** (0.25 - 2 / d),
                                        rel=1e-12)
    ratio = _longest(s) / _longest(p)
    assert ratio == pytest.approx(base ** (0.75 - 6 / d), rel=1e-12)
    assert math.log10(ratio) == pytest.approx(log10_ratio, abs=5e-4)


def test_spread_and_proportional_share_the_fastest_pair_only():
    s = pc.partial_rope_frequencies(128, 0.25, base=1e4)
    p = pc.partial_rope_frequencies(128, 0.25, base=1e4,
                                    convention="proportional")
    assert s[0] == p[0] == 1.0
    assert np.all(s[1:16] < p[1:16])  # spread steps down faster


def test_partial_rotation_leaves_the_other_dimensions_alone():
    # apply_rope with the zeros rotates the kept pairs and copies the rest
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 16))
    omega = pc.partial_rope_frequencies(16, 0.25, convention="proportional")
    y = pc.apply_rope(x, 5, layout="half", frequencies=omega)
    moved = np.r_[0:2, 8:10]  # pairs (0, 8) and (1, 9)
    still = np.setdiff1d(np.arange(16), moved)
    np.testing.assert_array_equal(y[:, still], x[:, still])
    assert not np.allclose(y[1:, moved], x[1:, moved])


# -------------------------------------------------- NoPE temperature


def test_temperature_steps_every_floor_scale_tokens():
    F = 8192
    pos = np.array([0, F - 2, F - 1, 2 * F - 2, 2 * F - 1, 5 * F - 1])
    got = pc.nope_attention_temperature(pos)
    k = np.array([0, 0, 1, 1, 2, 5])  # floor((pos + 1) / F)
    np.testing.assert_allclose(got, 1 + 0.1 * np.log(1 + k), rtol=1e-15)


def test_temperature_is_one_below_the_floor_and_grows_like_log():
    tau = pc.nope_attention_temperature(40, floor_scale=4.0, attn_scale=0.5)
    assert np.all(tau[:3] == 1.0) and tau[3] > 1.0
    assert np.all(np.diff(tau) >= 0)
    # at the step k it is 1 + a ln(1 + k): 1 + 0.5 ln 11 at the last one
    assert tau[-1] == pytest.approx(1 + 0.5 * math.log(11), rel=1e-15)


def test_temperature_without_scale_is_one():
    np.testing.assert_array_equal(
        pc.nope_attention_temperature(10**4, attn_scale=0.0), 1.0)


def test_temperature_of_an_int_is_of_its_range():
    np.testing.assert_array_equal(
        pc.nope_attention_temperature(7, floor_scale=2.0),
        pc.nope_attention_temperature(np.arange(7), floor_scale=2.0))


# ------------------------------- rope_frequencies: the new scaling types


@pytest.mark.parametrize("d, f", [(64, 0.25), (80, 0.4), (10, 0.5)])
def test_default_and_proportional_types_are_the_two_conventions(d, f):
    for kind, convention in (("default", "spread"),
                             ("proportional", "proportional")):
        got = pc.rope_frequencies(d, base=500.0, scaling={
            "type": kind, "partial_rotary_factor": f})
        want = pc.partial_rope_frequencies(d, f, base=500.0,
                                           convention=convention)
        np.testing.assert_array_equal(got, want)
    got = pc.rope_frequencies(d, scaling={
        "type": "proportional", "partial_rotary_factor": f, "factor": 4})
    np.testing.assert_allclose(got, pc.partial_rope_frequencies(
        d, f, convention="proportional") / 4, rtol=1e-15)


def test_partial_factor_scales_a_narrower_head():
    # every type on a quarter of a 128-wide head is that type on a 32-wide
    # head, followed by zeros
    for scaling in ({"type": "linear", "factor": 4},
                    {"type": "ntk", "factor": 4},
                    {"type": "yarn", "factor": 8,
                     "original_max_position_embeddings": 2048},
                    {"type": "llama3", "factor": 8,
                     "original_max_position_embeddings": 8192}):
        got = pc.rope_frequencies(128, scaling=dict(
            scaling, partial_rotary_factor=0.25))
        np.testing.assert_array_equal(
            got[:16], pc.rope_frequencies(32, scaling=scaling))
        np.testing.assert_array_equal(got[16:], 0.0)


def test_dynamic_is_plain_up_to_its_length_then_ntk():
    kw = {"type": "dynamic", "factor": 1.0, "max_position_embeddings": 2048}
    plain = pc.rope_frequencies(64)
    for n in (None, 10, 2048):
        scaling = kw if n is None else dict(kw, seq_len=n)
        np.testing.assert_allclose(pc.rope_frequencies(64, scaling=scaling),
                                   plain, rtol=1e-15)
    # factor 1 at 4 L: NTK-aware scaling by 4
    np.testing.assert_allclose(
        pc.rope_frequencies(64, scaling=dict(kw, seq_len=8192)),
        pc.rope_frequencies(64, scaling={"type": "ntk", "factor": 4.0}),
        rtol=1e-13)


def test_yarn_truncate_false_moves_the_ramp_ends():
    kw = {"type": "yarn", "factor": 32.0,
          "original_max_position_embeddings": 4096}
    cut = pc.rope_frequencies(64, base=150000.0, scaling=kw)
    exact = pc.rope_frequencies(64, base=150000.0,
                                scaling=dict(kw, truncate=False))
    assert not np.allclose(cut, exact, rtol=1e-6)
    # both keep the fastest pair and interpolate the slowest
    assert cut[0] == exact[0] == 1.0
    assert exact[-1] == pytest.approx(pc.rope_frequencies(
        64, base=150000.0)[-1] / 32, rel=1e-12)


def test_attention_factor_of_yarn_is_yarn_attention_scale():
    for s in (1.0, 4.0, 32.0, 40.0):
        assert pc.rope_attention_factor({
            "type": "yarn", "factor": s,
            "original_max_position_embeddings": 4096}) == pytest.approx(
            pc.yarn_attention_scale(s), rel=1e-15)


def test_attention_factor_of_the_other_types_is_one():
    for scaling in (None, {"type": "default"}, {"type": "linear", "factor": 8},
                    {"type": "llama3", "factor": 8,
                     "original_max_position_embeddings": 8192},
                    {"type": "proportional", "factor": 2}):
        assert pc.rope_attention_factor(scaling) == 1.0


def test_longrope_attention_factor_from_the_two_lengths():
    # Phi-3 mini 128k: 131072 / 4096 = 32, sqrt(1 + ln 32 / ln 4096)
    got = pc.rope_attention_factor({
        "type": "longrope", "short_factor": [1.0], "long_factor": [1.0],
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072})
    assert got == pytest.approx(math.sqrt(1 + 5 / 12), rel=1e-15)


# --------------------------------------------- Men et al.'s base bound


def _B(m, base, d):
    return sum(math.cos(m * base ** (-2 * i / d)) for i in range(d // 2))


def test_supported_length_is_the_first_negative_distance():
    for base, d in [(10000.0, 128), (500.0, 32), (1e6, 64), (3.0, 8)]:
        L = pc.rope_supported_length(base, d)
        assert all(_B(m, base, d) >= 0 for m in range(L))
        assert _B(L, base, d) < 0


def test_supported_length_stops_at_max_length():
    # head_dim 4, a huge base: cos m + cos(m b**-1/2) >= 0 for a long while
    assert pc.rope_supported_length(1e20, 4, max_length=500) == 500
    assert pc.rope_supported_length(10000.0, 128, max_length=100) == 100


@pytest.mark.parametrize("L, bound, paper", [
    (1024, 4293.44, 4.3e3), (2048, 11587.24, 1.6e4), (4096, 26952.3, 2.7e4),
    (8192, 83763.8, 8.4e4)])
def test_bound_reproduces_men_et_al_table(L, bound, paper):
    # Men et al. (2024), Table 1 / Figure 1, d = 128: equal to two digits
    # at 1k, 4k and 8k; at 2k a window of valid bases opens at 11,587,
    # below the paper's 1.6e4
    got = pc.rope_base_lower_bound(L, 128)
    assert got == pytest.approx(bound, rel=1e-5)
    if L != 2048:
        assert float(f"{got:.2g}") == paper
    assert pc.rope_supported_length(got, 128) >= L
    assert pc.rope_supported_length(got * (1 - 1e-9), 128) < L


def test_bound_is_the_smallest_base_on_a_fine_scan():
    for L, d in [(64, 16), (100, 32), (200, 8)]:
        b = pc.rope_base_lower_bound(L, d)
        below = np.geomspace(1.0001, b * (1 - 1e-9), 4000)
        assert all(pc.rope_supported_length(x, d) < L for x in below)
        assert pc.rope_supported_length(b, d) >= L


def test_bases_above_the_bound_can_fail_again():
    bound = pc.rope_base_lower_bound(4096, 128)
    assert bound < 29300.0
    assert pc.rope_supported_length(29300.0, 128) == 3124


def test_bound_of_tiny_lengths():
    assert pc.rope_base_lower_bound(2, 64) == 1.0
    assert pc.rope_base_lower_bound(2, 2) == 1.0
    with pytest.raises(ValueError, match="length"):
        pc.rope_base_lower_bound(3, 2)
