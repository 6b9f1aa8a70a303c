"""Tests for posenc_plots.ch04_binary: the figures show posenc_core's
numbers, and every slider position draws without error."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import Interactive
from posenc_plots import ch04_binary as figs


def test_heatmaps_are_the_bits_and_the_encoding():
    fig = figs.plot_counter_and_encoding(n_positions=32, n_bits=5,
                                         d_model=10, base=100.0)
    bits = fig.axes[0].get_images()[0].get_array()
    enc = fig.axes[1].get_images()[0].get_array()
    np.testing.assert_array_equal(bits, pc.binary_encoding(32, 5))
    np.testing.assert_allclose(enc, pc.sinusoidal_encoding(32, 10, base=100.0))
    # least significant bit first: column 0 alternates 0, 1, 0, 1, ...
    np.testing.assert_array_equal(bits[:, 0], np.arange(32) % 2)


def test_heatmap_of_a_counter_that_rolls_over():
    """More positions than 2**n_bits: the bits repeat (chapter 4's figure)."""
    fig = figs.plot_counter_and_encoding(n_positions=40, n_bits=3, d_model=8)
    bits = fig.axes[0].get_images()[0].get_array()
    assert bits.shape == (40, 3)
    pos = np.arange(40)
    np.testing.assert_array_equal(bits, (pos[:, None] >> np.arange(3)) & 1)
    np.testing.assert_array_equal(bits[8:], bits[:-8])


def test_bit_waves_follow_the_sign_of_the_sines():
    n_bits, n = 3, 20
    fig = figs.plot_bit_waves(n_positions=n, n_bits=n_bits)
    assert len(fig.axes) == n_bits
    pos = np.arange(n)
    for j, ax in enumerate(fig.axes):
        steps, wave = ax.get_lines()[:2]
        np.testing.assert_array_equal(steps.get_xdata(), pos)
        # bit j of pos, written from the definition floor(pos / 2^j) mod 2
        np.testing.assert_array_equal(steps.get_ydata(), (pos >> j) & 1)
        x = wave.get_xdata()
        np.testing.assert_allclose(
            wave.get_ydata(), (1 - np.sin(np.pi * (x + 0.5) / 2**j)) / 2,
            atol=1e-12)
        # the bit is 1 exactly where the rescaled wave is above 1/2
        at_integers = (1 - np.sin(np.pi * (pos + 0.5) / 2**j)) / 2
        np.testing.assert_array_equal((at_integers > 0.5).astype(int),
                                      (pos >> j) & 1)


def test_position_bars():
    fig = figs.plot_position(pos=13, n_bits=6, d_model=8, base=100.0)
    ax_b, ax_p = fig.axes
    heights = [p.get_height() for p in ax_b.patches]
    np.testing.assert_array_equal(heights, [1, 0, 1, 1, 0, 0])
    values = [p.get_height() for p in ax_p.patches]
    np.testing.assert_allclose(values,
                               pc.sinusoidal_encoding([13], 8, base=100.0)[0])
    assert "001101" in ax_b.get_title()
    assert "rolls over" not in ax_b.get_title()


def test_position_overflow():
    fig = figs.plot_position(pos=21, n_bits=4, d_model=4)
    ax_b, ax_p = fig.axes
    heights = [p.get_height() for p in ax_b.patches]
    np.testing.assert_array_equal(heights, pc.binary_encoding([5], 4)[0])
    assert "rolls over" in ax_b.get_title() and "shows 5" in ax_b.get_title()
    values = [p.get_height() for p in ax_p.patches]
    np.testing.assert_allclose(values, pc.sinusoidal_encoding([21], 4)[0])


def test_neighbour_steps():
    fig = figs.plot_neighbour_steps(n_positions=40, n_bits=6, d_model=8)
    bits_line, sin_line = fig.axes[0].get_lines()
    flips = np.array([bin(p ^ (p + 1)).count("1") for p in range(39)])
    np.testing.assert_allclose(bits_line.get_ydata(), np.sqrt(flips))
    P = pc.sinusoidal_encoding(40, 8)
    np.testing.assert_allclose(sin_line.get_ydata(),
                               np.linalg.norm(P[1:] - P[:-1], axis=1))


def test_two_panel_figures_accept_axes():
    fig, axes = plt.subplots(1, 2)
    assert figs.plot_position(ax=axes) is fig
    assert figs.plot_counter_and_encoding(ax=axes) is fig
    with pytest.raises(ValueError, match="two Axes"):
        figs.plot_position(ax=[axes[0]])


def test_interactive_specs():
    assert figs.INTERACTIVE == (figs.POSITION,)
    assert isinstance(figs.POSITION, Interactive)
    assert figs.POSITION.defaults() == {"pos": 13, "n_bits": 8, "d_model": 16}


def check_position(fig, pos, n_bits, d_model):
    """Bars against pos's bits (pos >> j) & 1 and its sinusoids, written out
    independently of posenc_core; titles say what the counter shows."""
    ax_b, ax_p = fig.axes
    bits = [(pos >> j) & 1 for j in range(n_bits)]  # rolls over past 2^n
    assert [p.get_height() for p in ax_b.patches] == bits
    assert [p.get_x() + p.get_width() / 2 for p in ax_b.patches] == list(
        range(n_bits))
    shown = pos % 2**n_bits
    written = "".join(str(b) for b in reversed(bits))
    assert int(written, 2) == shown
    title = ax_b.get_title()  # the bits, and what a rolled-over counter shows
    assert f"$\\mathrm{{pos}} = {pos}$" in title and written in title
    assert (f"shows {shown} =" in title) == (shown != pos)
    angle = pos / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    row = np.stack([np.sin(angle), np.cos(angle)], axis=1).ravel()
    heights = np.array([p.get_height() for p in ax_p.patches])
    assert np.allclose(heights, row, rtol=0, atol=1e-12)
    assert ax_p.get_title().startswith(
        f"$PE({pos})$, $d_{{\\mathrm{{model}}}} = {d_model}$,")
    return bits, heights


@pytest.mark.parametrize("spec", figs.INTERACTIVE, ids=lambda s: s.name)
def test_every_slider_position_draws_the_bits_and_sinusoids(spec):
    """Each slider over its whole range: both bar charts and both titles
    are the bits and sinusoids of pos, computed independently, so each move
    of a slider changes them as it should."""
    defaults = spec.defaults()
    for slider in spec.sliders:
        values = slider.values()
        assert values[0] == slider.min and values[-1] == slider.max
        before = None
        for n, value in enumerate(values):
            fig = spec.plot(**{**defaults, slider.name: value})
            bits, heights = check_position(fig, **{**defaults,
                                                   slider.name: value})
            if before is not None:  # the move changed what is drawn
                assert (bits != before[0] or heights.shape != before[1].shape
                        or not np.allclose(heights, before[1]))
            before = (bits, heights)
            # text is laid out (drawn) at both ends and every 16th value
            if n % 16 == 0 or n == len(values) - 1:
                fig.set_dpi(20)
                fig.canvas.draw()
            plt.close(fig)
