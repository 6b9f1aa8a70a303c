"""Tests for posenc_plots.ch03_frequencies: the figures show posenc_core's
numbers, and every slider position draws without error."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import Interactive
from posenc_plots import ch03_frequencies as figs


def test_waves_are_the_sine_columns():
    pairs = (0, 3, 9)
    fig = figs.plot_waves(d_model=32, base=100.0, pairs=pairs, n_positions=50)
    lines = fig.axes[0].get_lines()
    assert len(lines) == len(pairs)
    for line, i in zip(lines, pairs, strict=True):
        x, y = line.get_xdata(), line.get_ydata()
        assert x[0] == 0 and x[-1] == 49
        expected = pc.sinusoidal_encoding(x, 32, base=100.0)[:, 2 * i]
        np.testing.assert_allclose(y, expected)
        # and the column is sin(x * omega_i), as the chapter says
        np.testing.assert_allclose(
            y, np.sin(x * pc.frequencies(32, base=100.0)[i]))


def test_wavelength_plot_data():
    fig = figs.plot_wavelengths(d_model=64, base=1000.0, seq_len=100)
    ax = fig.axes[0]
    lam = pc.wavelengths(64, base=1000.0)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), lam)
    fast, slow = ax.collections[:2]
    np.testing.assert_allclose(fast.get_offsets()[:, 1], lam[lam <= 100])
    np.testing.assert_allclose(slow.get_offsets()[:, 1], lam[lam > 100])
    np.testing.assert_allclose(slow.get_offsets()[:, 0],
                               np.flatnonzero(lam > 100))
    levels = [line.get_ydata()[0] for line in ax.get_lines()[1:]]
    assert np.isclose(levels[0], 2 * np.pi)
    assert np.isclose(levels[1], 2 * np.pi * 1000.0)
    assert levels[2] == 100
    assert "60,611.5" in figs.plot_wavelengths().axes[0].get_title()


def test_wavelengths_by_base():
    bases = (10.0, 1e4)
    fig = figs.plot_wavelengths_by_base(bases=bases, d_model=16, seq_len=50)
    lines = fig.axes[0].get_lines()
    for line, base in zip(lines[:len(bases)], bases, strict=True):
        np.testing.assert_allclose(line.get_ydata(),
                                   pc.wavelengths(16, base=base))
    n_slow = int((pc.wavelengths(16, base=1e4) > 50).sum())
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[1].startswith(f"$b$ = 10,000: {n_slow} pairs")


def test_distance_matrix_is_the_pairwise_distances():
    fig = figs.plot_distance_matrix(n_positions=40, d_model=16, base=50.0)
    image = fig.axes[0].get_images()[0].get_array()
    P = pc.sinusoidal_encoding(40, 16, base=50.0)
    brute = np.linalg.norm(P[:, None, :] - P[None, :, :], axis=-1)
    np.testing.assert_allclose(image, brute, atol=1e-6)


def test_distance_profile_and_nearest_marker():
    fig = figs.plot_distance_profile(d_model=8, n_positions=7000)
    ax = fig.axes[0]
    curve, neighbour, marker = ax.get_lines()
    P = pc.sinusoidal_encoding(7000, 8)
    np.testing.assert_allclose(curve.get_ydata(),
                               np.linalg.norm(P - P[0], axis=1))
    assert np.isclose(neighbour.get_ydata()[0], np.linalg.norm(P[1] - P[0]))
    # the near repeat discussed in the chapter: 6283 is close to 2000*pi
    assert marker.get_xdata()[0] == 6283
    # ... and the legend leaves it visible (it used to sit on top of it)
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    dot = ax.transData.transform((6283, marker.get_ydata()[0]))
    assert not box.contains(*dot)
    # with d_model = 512 the nearest position is the neighbour
    ax512 = figs.plot_distance_profile(d_model=512, n_positions=1000).axes[0]
    assert ax512.get_lines()[2].get_xdata()[0] == 1


def test_distance_profile_single_position():
    fig = figs.plot_distance_profile(d_model=4, n_positions=1)
    assert len(fig.axes[0].get_lines()) == 1


def test_base_formatting():
    assert figs._fmt(10000.0) == "10,000"
    assert figs._fmt(1e12) == "$10^{12}$"
    assert figs._fmt(2.5e12) == r"$2.5 \times 10^{12}$"
    assert figs._fmt(10**4.25) == "17,783"  # never "1.778e+04"
    assert figs._fmt(10**0.25) == "1.778"


def test_interactive_specs():
    assert figs.INTERACTIVE == (figs.WAVELENGTHS, figs.DISTANCE)
    for spec in figs.INTERACTIVE:
        assert isinstance(spec, Interactive)
        assert spec.caption
    defaults = figs.WAVELENGTHS.defaults()
    assert defaults == {"d_model": 512, "base": 10000.0, "seq_len": 512}


def check_wavelengths(fig, d_model, base, seq_len):
    """The figure against the wavelengths 2 pi base^(2i/d) written out."""
    ax = fig.axes[0]
    i = np.arange(d_model // 2)
    lam = 2 * np.pi * base ** (2 * i / d_model)
    curve, two_pi, bound, seq = ax.lines
    assert np.array_equal(curve.get_xdata(), i)
    assert np.allclose(curve.get_ydata(), lam, rtol=1e-12, atol=0)
    fast, slow = ax.collections
    long = lam > seq_len
    assert np.allclose(fast.get_offsets(), np.column_stack([i, lam])[~long])
    assert np.allclose(slow.get_offsets(), np.column_stack([i, lam])[long])
    assert list(two_pi.get_ydata()) == pytest.approx([2 * np.pi] * 2)
    assert list(bound.get_ydata()) == pytest.approx([2 * np.pi * base] * 2)
    assert list(seq.get_ydata()) == [seq_len] * 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        rf"wavelength $\leq$ {seq_len:g} ({int((~long).sum())} pairs)",
        f"wavelength > {seq_len:g} ({int(long.sum())} pairs)",
        r"$2\pi b$ (never reached)"]
    assert ax.get_title().endswith(f"longest wavelength {lam[-1]:,.1f}")
    return curve.get_ydata(), long, seq.get_ydata()


def check_distance(fig, d_model, base):
    """The figure against ||PE(D) - PE(0)||^2 = sum_i 2 - 2 cos(D w_i)."""
    ax = fig.axes[0]
    shift = np.arange(1000)
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    dist = np.sqrt((2 - 2 * np.cos(np.outer(shift, omega))).sum(axis=1))
    curve, neighbour, point = ax.lines
    assert np.array_equal(curve.get_xdata(), shift)
    assert np.allclose(curve.get_ydata(), dist, rtol=0, atol=1e-9)
    assert neighbour.get_ydata()[0] == pytest.approx(dist[1], abs=1e-9)
    (nearest,), (height,) = point.get_xdata(), point.get_ydata()
    assert nearest >= 1 and height == pytest.approx(dist[nearest], abs=1e-9)
    assert height <= dist[1:].min() + 1e-9  # (ties may pick either)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        f"neighbour distance {neighbour.get_ydata()[0]:.3f}",
        rf"nearest: $\Delta$ = {nearest}, distance {height:.3f}"]
    assert ax.get_ylim()[0] == 0
    # the legend sits in the lower corner away from the red dot
    assert ax.get_legend()._loc == (3 if nearest > 999 / 2 else 4)
    return curve.get_ydata(), nearest


@pytest.mark.parametrize("spec", figs.INTERACTIVE, ids=lambda s: s.name)
def test_every_slider_position_draws_what_the_formulas_say(spec):
    """Each slider over its whole range: lines, points, legends and titles
    are the wavelengths (distances) computed independently, so each move of
    a slider changes them as it should."""
    check = {"ch03_wavelengths": check_wavelengths,
             "ch03_distance": check_distance}[spec.name]
    defaults = spec.defaults()
    for slider in spec.sliders:
        values = slider.values()
        assert values[0] == pytest.approx(
            10.0**slider.min if slider.log else slider.min)
        assert values[-1] == pytest.approx(
            10.0**slider.max if slider.log else slider.max)
        before = None
        for n, value in enumerate(values):
            fig = spec.plot(**{**defaults, slider.name: value})
            drawn = check(fig, **{**defaults, slider.name: value})
            if before is not None:  # the move changed what is drawn
                assert any(np.shape(a) != np.shape(b) or not np.allclose(a, b)
                           for a, b in zip(drawn, before, strict=True))
            before = drawn
            # text is laid out (drawn) at both ends and every 16th value
            if n % 16 == 0 or n == len(values) - 1:
                fig.set_dpi(20)
                fig.canvas.draw()
            plt.close(fig)
