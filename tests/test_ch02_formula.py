"""Tests for posenc_plots.ch02_formula: the figures must show posenc_core's numbers."""

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import Interactive
from posenc_plots import ch02_formula as figs


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_heatmap_shows_the_matrix():
    P = pc.sinusoidal_encoding(30, 16)
    fig = figs.plot_encoding_heatmap(P, pos=7)
    ax = fig.axes[0]
    assert np.array_equal(ax.images[0].get_array(), P)
    assert ax.images[0].get_clim() == (-1.0, 1.0)
    assert ax.get_xlabel() == "dimension" and ax.get_ylabel() == "position"
    assert ax.lines[0].get_ydata()[0] == 7


def test_waves_are_the_columns():
    fine = np.linspace(0, 20, 81)
    P = pc.sinusoidal_encoding(fine, 32)
    dims = [0, 3, 10]
    ints = np.arange(21)
    fig = figs.plot_waves(fine, P, dims, points=(ints, P[::4]))
    lines = fig.axes[0].lines
    curves, dots = lines[0::2], lines[1::2]
    for line, dim in zip(curves, dims, strict=True):
        assert np.array_equal(line.get_xdata(), fine)
        assert np.array_equal(line.get_ydata(), P[:, dim])
        assert line.get_label() == f"dim {dim}"
    for line, dim in zip(dots, dims, strict=True):
        assert np.array_equal(line.get_ydata(), P[::4, dim])


def test_vector_shows_sines_and_cosines():
    v = pc.sinusoidal_encoding([13], 12)[0]
    fig = figs.plot_vector(v)
    sin_line, cos_line = fig.axes[0].lines[:2]
    assert np.array_equal(sin_line.get_xdata(), np.arange(0, 12, 2))
    assert np.array_equal(sin_line.get_ydata(), v[0::2])
    assert np.array_equal(cos_line.get_ydata(), v[1::2])


@pytest.mark.parametrize("d_model, expected", [
    (2, [0]), (4, [0, 2]), (8, [0, 2, 4]), (64, [0, 8, 16, 32]),
    (256, [0, 32, 64, 128])])
def test_wave_dimensions(d_model, expected):
    dims = figs.wave_dimensions(d_model)
    assert dims == expected
    assert all(d % 2 == 0 and 0 <= d < d_model for d in dims)


@pytest.mark.parametrize("d_model, base, pos", [
    (64, 10000.0, 20), (2, 10 ** 0.5, 0), (256, 1e6, 99), (10, 100.0, 55)])
def test_explore_encoding_matches_posenc_core(d_model, base, pos):
    fig = figs.explore_encoding(d_model=d_model, base=base, pos=pos)
    heat_ax, wave_ax, vec_ax = fig.axes[:3]
    P = pc.sinusoidal_encoding(figs.N_POSITIONS, d_model, base=base)
    assert np.array_equal(heat_ax.images[0].get_array(), P)
    assert heat_ax.lines[0].get_ydata()[0] == pos
    dims = figs.wave_dimensions(d_model)
    wave_lines = [ln for ln in wave_ax.lines if ln.get_label().startswith("dim")]
    assert [ln.get_label() for ln in wave_lines] == [f"dim {d}" for d in dims]
    for line, dim in zip(wave_lines, dims, strict=True):
        x = np.asarray(line.get_xdata())
        expected = pc.sinusoidal_encoding(x, d_model, base=base)[:, dim]
        assert np.allclose(line.get_ydata(), expected)
        assert x[0] == 0 and x[-1] == figs.N_POSITIONS - 1
    sin_line, cos_line = vec_ax.lines[:2]
    assert np.array_equal(sin_line.get_ydata(), P[pos, 0::2])
    assert np.array_equal(cos_line.get_ydata(), P[pos, 1::2])
    assert vec_ax.get_title() == f"PE({pos})"


def test_interactive_spec():
    assert figs.INTERACTIVE == (figs.EXPLORE_ENCODING,)
    spec = figs.EXPLORE_ENCODING
    assert isinstance(spec, Interactive) and spec.caption
    sliders = {s.name: s for s in spec.sliders}
    assert set(sliders) == {"d_model", "base", "pos"}
    assert all(v % 2 == 0 and v > 0 for v in sliders["d_model"].values())
    assert sliders["base"].log and min(sliders["base"].values()) > 1
    assert max(sliders["pos"].values()) < figs.N_POSITIONS
    assert spec.defaults() == {"d_model": 64, "base": 10000.0, "pos": 20}


def sinusoids(positions, d_model, base):
    """PE(pos) written out from the paper's formula (no posenc_core)."""
    pos = np.asarray(positions, dtype=float)[:, None]
    angle = pos / base ** (np.arange(0, d_model, 2)[None, :] / d_model)
    P = np.empty((pos.shape[0], d_model))
    P[:, 0::2], P[:, 1::2] = np.sin(angle), np.cos(angle)
    return P


def test_every_slider_position_draws_the_encoding_it_should():
    """Each slider over its whole range: heatmap, waves, the line at pos and
    the vector PE(pos) are the formula's values, so moving d_model, base or
    pos changes them as it should."""
    spec = figs.EXPLORE_ENCODING
    defaults = spec.defaults()
    for slider in spec.sliders:
        before = None
        for value in slider.values():
            values = {**defaults, slider.name: value}
            d_model, base, pos = values["d_model"], values["base"], values[
                "pos"]
            fig = spec.plot(**values)
            heat_ax, wave_ax, vec_ax = fig.axes[:3]
            P = sinusoids(np.arange(100), d_model, base)
            image = heat_ax.images[0].get_array()
            assert np.allclose(image, P, rtol=0, atol=1e-9)
            assert list(heat_ax.lines[0].get_ydata()) == [pos, pos]
            written = f"{base:,.0f}" if base >= 1000 else f"{base:.3g}"
            assert heat_ax.get_title() == (
                f"$d_{{\\mathrm{{model}}}} = {d_model}$, base $b$ = {written}")
            assert "e+" not in written
            m = d_model // 2  # pairs 0, m/8, m/4, m/2: their sine columns
            dims = [2 * i for i in sorted({0, m // 8, m // 4, m // 2})]
            waves = wave_ax.lines[:-1]
            assert [ln.get_label() for ln in waves] == [f"dim {d}"
                                                        for d in dims]
            for line, dim in zip(waves, dims, strict=True):
                x = np.asarray(line.get_xdata())
                assert np.allclose(line.get_ydata(),
                                   sinusoids(x, d_model, base)[:, dim],
                                   rtol=0, atol=1e-9)
            assert list(wave_ax.lines[-1].get_xdata()) == [pos, pos]
            sin_line, cos_line = vec_ax.lines[:2]
            assert np.array_equal(sin_line.get_xdata(),
                                  np.arange(0, d_model, 2))
            assert np.allclose(sin_line.get_ydata(), P[pos, 0::2], atol=1e-9)
            assert np.allclose(cos_line.get_ydata(), P[pos, 1::2], atol=1e-9)
            assert vec_ax.get_title() == f"PE({pos})"
            now = (image.shape, image.sum(), pos)
            assert now != before  # the move changed what is drawn
            before = now
            plt.close(fig)


def test_corners_of_the_slider_grid_draw():
    spec = figs.EXPLORE_ENCODING
    names = [s.name for s in spec.sliders]
    ranges = [(s.values()[0], s.values()[-1]) for s in spec.sliders]
    for combo in itertools.product(*ranges):
        fig = spec.plot(**dict(zip(names, combo, strict=True)))
        assert np.all(np.isfinite(fig.axes[0].images[0].get_array()))
        plt.close(fig)


def test_overview_draws_the_matrix_and_its_columns_as_waves():
    fig = figs.plot_encoding_overview(n_positions=100, d_model=128,
                                      dims=(0, 16, 48))
    matrix, waves = fig.axes[:2]
    P = pc.sinusoidal_encoding(100, 128)
    assert np.array_equal(matrix.images[0].get_array(), P)
    lam = pc.wavelengths(128)
    for r, (line, dim) in enumerate(zip(waves.lines, (0, 16, 48),
                                        strict=True)):
        x, y = line.get_data()  # position down the y-axis, value across
        assert np.allclose(x - 2.5 * r, pc.sinusoidal_encoding(y, 128)[:, dim])
        assert y[0] == 0 and y[-1] == 99
    labels = [t.get_text() for t in waves.get_xticklabels()]
    assert labels == [f"dim {d}\n$\\lambda = {lam[d // 2]:,.1f}$"
                      for d in (0, 16, 48)]
    # the same rows, top to bottom, in both panels
    assert matrix.get_ylim() == waves.get_ylim() == (99.5, -0.5)


@pytest.mark.parametrize("dims", [(), (0, 128), (-1,)])
def test_overview_refuses_columns_outside_the_matrix(dims):
    with pytest.raises(ValueError, match="dims"):
        figs.plot_encoding_overview(d_model=128, dims=dims)
