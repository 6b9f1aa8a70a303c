"""Tests for posenc_plots.ch07_extension (chapter 7, beyond the training length).

Each figure's data must equal what posenc_core computes, so a wrong figure
fails here. The scaling dicts are written out independently of the module's
own ``scaled_frequencies`` wrapper.
"""

import inspect

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import ch07_extension as figs


def _expected(method, s, L, d=128, base=500000.0):
    dicts = {
        "none": None,
        "linear": {"type": "linear", "factor": s},
        "ntk": {"type": "ntk", "factor": s},
        "yarn": {"type": "yarn", "factor": s,
                 "original_max_position_embeddings": L},
        "llama3": {"type": "llama3", "factor": s, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0,
                   "original_max_position_embeddings": L},
    }
    return pc.rope_frequencies(d, base=base, scaling=dicts[method])


def _lines(ax):
    return {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}


@pytest.mark.parametrize("s, L", [(8, 8192), (3, 2048), (1, 4096)])
def test_scaled_frequencies_builds_the_right_scaling(s, L):
    for method in figs.METHODS:
        got = figs.scaled_frequencies(method, factor=s, original_length=L)
        np.testing.assert_allclose(got, _expected(method, s, L), rtol=1e-14)


def test_scaled_frequencies_rejects_unknown_method():
    with pytest.raises(ValueError, match="method"):
        figs.scaled_frequencies("dynamic", factor=2, original_length=100)


@pytest.mark.parametrize("s, L", [(8, 8192), (4, 2048)])
def test_turns_lines_are_turns_over_each_window(s, L):
    fig = figs.plot_turns(factor=s, original_length=L)
    lines = _lines(fig.axes[0])
    theta = pc.rope_frequencies(128, base=500000.0)
    assert set(lines) == {"training", *figs.METHODS}
    np.testing.assert_allclose(lines["training"].get_xdata(), np.arange(64))
    np.testing.assert_allclose(lines["training"].get_ydata(),
                               L * theta / (2 * np.pi), rtol=1e-14)
    for method in figs.METHODS:
        np.testing.assert_allclose(
            lines[method].get_ydata(),
            s * L * _expected(method, s, L) / (2 * np.pi), rtol=1e-14)
    # Position Interpolation maps the long window onto the training angles
    np.testing.assert_allclose(lines["linear"].get_ydata(),
                               lines["training"].get_ydata(), rtol=1e-12)
    # Independently of posenc_core's scaling code: YaRN keeps the pairs that
    # turn more than beta_fast = 32 times over L (they turn s times as much
    # over s L) and interpolates those turning less than beta_slow = 1 time
    # (back to the training turns); Llama 3 does the same by wavelength,
    # keeping lambda < L/4 and interpolating lambda > L.
    training = lines["training"].get_ydata()
    none = lines["none"].get_ydata()
    np.testing.assert_allclose(none, s * training, rtol=1e-12)
    fast, slow = training > 32 * 1.1, training < 1 * 0.9
    lam = 2 * np.pi / theta
    short, long = lam < L / 4, lam > L
    assert fast.any() and slow.any() and short.any() and long.any()
    yarn, llama3 = lines["yarn"].get_ydata(), lines["llama3"].get_ydata()
    np.testing.assert_allclose(yarn[fast], none[fast], rtol=1e-12)
    np.testing.assert_allclose(yarn[slow], training[slow], rtol=1e-12)
    np.testing.assert_allclose(llama3[short], none[short], rtol=1e-12)
    np.testing.assert_allclose(llama3[long], training[long], rtol=1e-12)


def test_turns_draws_only_the_requested_methods():
    fig = figs.plot_turns(methods=("none", "linear"))
    assert set(_lines(fig.axes[0])) == {"training", "none", "linear"}


def test_turns_uses_the_given_axes():
    fig, ax = plt.subplots()
    assert figs.plot_turns(ax=ax) is fig
    assert len(fig.axes) == 1 and _lines(ax)


@pytest.mark.parametrize("s, L", [(8, 8192), (16, 4096)])
def test_wavelength_panels_match_core(s, L):
    fig = figs.plot_wavelengths(factor=s, original_length=L)
    left, right = _lines(fig.axes[0]), _lines(fig.axes[1])
    theta = pc.rope_frequencies(128, base=500000.0)
    for method in figs.METHODS:
        new = _expected(method, s, L)
        np.testing.assert_allclose(left[method].get_xdata(),
                                   2 * np.pi / theta, rtol=1e-14)
        np.testing.assert_allclose(left[method].get_ydata(),
                                   2 * np.pi / new, rtol=1e-14)
        if method != "none":
            np.testing.assert_allclose(right[f"{method}-stretch"].get_ydata(),
                                       theta / new, rtol=1e-14)
    assert "none-stretch" not in right


def test_wavelengths_accepts_a_pair_of_axes():
    fig, axes = plt.subplots(1, 2)
    assert figs.plot_wavelengths(ax=axes) is fig
    assert all(_lines(a) for a in axes)


def test_figures_have_fixed_sizes():
    size_turns = figs.plot_turns().get_size_inches()
    size_wl = figs.plot_wavelengths().get_size_inches()
    assert tuple(figs.plot_turns(factor=3).get_size_inches()) == tuple(
        size_turns)
    assert tuple(figs.plot_wavelengths(original_length=1024)
                 .get_size_inches()) == tuple(size_wl)


def test_interactive_defaults_are_the_function_defaults():
    assert figs.INTERACTIVE == (figs.WAVELENGTHS, figs.TURNS)
    for fig in figs.INTERACTIVE:
        params = inspect.signature(fig.plot).parameters
        for name, value in fig.defaults().items():
            assert params[name].default == value


@pytest.mark.parametrize("spec", figs.INTERACTIVE, ids=lambda f: f.name)
def test_every_slider_position_draws(spec):
    for slider in spec.sliders:
        for value in slider.values():
            kwargs = spec.defaults()
            kwargs[slider.name] = value
            fig = spec.plot(**kwargs)
            assert fig.axes
            plt.close(fig)
