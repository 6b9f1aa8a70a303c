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


def independent_angles(method, s, L, d=128, base=500000.0):
    """theta_i' of each method from the papers' reference code, in numpy."""
    theta = base ** (-np.arange(0, d, 2) / d)
    if method == "none":
        return theta
    if method == "linear":  # Position Interpolation
        return theta / s
    if method == "ntk":
        return (base * s ** (d / (d - 2))) ** (-np.arange(0, d, 2) / d)
    if method == "yarn":  # jquesnelle/yarn: _yarn_find_correction_range
        def dim(turns):
            return d * np.log(L / (turns * 2 * np.pi)) / (2 * np.log(base))
        low = max(np.floor(dim(32.0)), 0)
        high = min(np.ceil(dim(1.0)), d - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
        keep = 1 - ramp  # extrapolation weight
        return theta / s * (1 - keep) + theta * keep
    # llama3 (Llama 3.1's apply_scaling), low 1, high 4
    wavelength = 2 * np.pi / theta
    smooth = (L / wavelength - 1.0) / (4.0 - 1.0)
    middle = (1 - smooth) * theta / s + smooth * theta
    return np.where(wavelength < L / 4.0, theta,
                    np.where(wavelength > L / 1.0, theta / s, middle))


def check_turns(fig, factor, original_length):
    ax = fig.axes[0]
    s, L = factor, original_length
    theta = independent_angles("none", s, L)
    lines = _lines(ax)
    train = L * theta / (2 * np.pi)
    assert np.allclose(lines["training"].get_ydata(), train, rtol=1e-12)
    for method in figs.METHODS:
        assert np.allclose(lines[method].get_ydata(), s * L * independent_angles(
            method, s, L) / (2 * np.pi), rtol=1e-9, atol=0), method
    slow = np.flatnonzero(train < 1)
    (span,) = ax.patches
    assert span.get_x() == slow[0] - 0.5
    assert span.get_x() + span.get_width() == theta.size - 0.5
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[0].endswith(f"({slow.size})")
    assert sum(f"over sL = {s * L:,}" in t for t in texts) == len(figs.METHODS)
    assert f"L = {L:,}, s = {s}" in ax.get_title()
    return tuple(lines[m].get_ydata() for m in (*figs.METHODS, "training"))


def check_wavelengths(fig, factor, original_length):
    ax1, ax2 = fig.axes[:2]
    s, L = factor, original_length
    theta = independent_angles("none", s, L)
    out = []
    for method in figs.METHODS:
        new = independent_angles(method, s, L)
        line = _lines(ax1)[method]
        assert np.allclose(line.get_xdata(), 2 * np.pi / theta, rtol=1e-12)
        assert np.allclose(line.get_ydata(), 2 * np.pi / new, rtol=1e-9)
        out.append(line.get_ydata())
        if method != "none":
            stretch = _lines(ax2)[f"{method}-stretch"]
            assert np.allclose(stretch.get_ydata(), theta / new, rtol=1e-9)
    for ax in (ax1, ax2):  # dotted lines at 32, 4 and 1 turn over L
        marks = [ln.get_xdata()[0] for ln in ax.get_lines()
                 if ln.get_linestyle() == ":"]
        assert marks == pytest.approx([L / 32, L / 4, L])
    assert [t.get_position()[0] for t in ax2.texts] == pytest.approx(
        [L / 32, L / 4, L])
    assert ax2.get_ylim() == pytest.approx((0.9, 1.12 * s))
    assert f"L = {L:,}, s = {s}" in fig.get_suptitle()
    return tuple(out)


@pytest.mark.parametrize("spec", figs.INTERACTIVE, ids=lambda f: f.name)
def test_every_slider_position_draws_what_the_papers_say(spec):
    """Each slider over its whole range: every method's line is its angles
    from the papers' reference formulas (written out here, not through
    posenc_core), the shading and dotted lines sit where L puts them, so
    each move of a slider changes what is drawn as it should."""
    check = {"ch07_turns": check_turns,
             "ch07_wavelengths": check_wavelengths}[spec.name]
    for slider in spec.sliders:
        before = None
        for value in slider.values():
            kwargs = spec.defaults()
            kwargs[slider.name] = value
            fig = spec.plot(**kwargs)
            drawn = check(fig, **kwargs)
            if before is not None:  # the move changed what is drawn
                assert any(not np.allclose(a, b)
                           for a, b in zip(drawn, before, strict=True))
            before = drawn
            plt.close(fig)


def test_unseen_angles_lines_are_the_angles_of_the_pair():
    s, L, pair = 8, 8192, 50
    fig = figs.plot_unseen_angles(pair=pair, factor=s, original_length=L)
    ax = fig.axes[0]
    lines = _lines(ax)
    assert set(lines) == {"none", "linear"}
    omega = pc.rope_frequencies(128, base=500000.0)[pair]
    r = np.arange(s * L)
    np.testing.assert_allclose(lines["none"].get_xdata(), r)
    np.testing.assert_allclose(lines["none"].get_ydata(),
                               np.degrees(r * omega), rtol=1e-12)
    np.testing.assert_allclose(lines["linear"].get_ydata(),
                               np.degrees(r * omega / s), rtol=1e-12)
    band = next(p for p in ax.patches if p.get_gid() == "seen")
    top = band.get_path().vertices[:, 1].max()
    top = ax.transData.inverted().transform(
        band.get_transform().transform((0, top)))[1]
    np.testing.assert_allclose(top, np.degrees((L - 1) * omega), rtol=1e-9)
    # a slow pair: as is it leaves the band at L, interpolated it stays
    # below the angle of a distance of L
    none_y = lines["none"].get_ydata()
    assert np.isclose(none_y[L - 1], top) and none_y[L] > top
    assert lines["linear"].get_ydata().max() < np.degrees(L * omega)
    # sized for the book's column (672 px at >= 80 px per inch)
    assert fig.get_size_inches()[0] <= 8.4


@pytest.mark.parametrize("kwargs", [{"pair": 64}, {"pair": -1},
                                    {"pair": 2.5}, {"factor": 0.5}])
def test_unseen_angles_rejects_bad_arguments(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        figs.plot_unseen_angles(**kwargs)
