"""Tests for posenc_plots.ch10_models (chapter 10, position in the models of
2026): the spectrum figure draws what posenc_core computes, in both
conventions, and refuses what it cannot draw."""

import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import ch10_models as figs


def _artists(fig):
    ax = fig.axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines()}
    dots = {c.get_gid(): c for c in ax.collections}
    spans = [p for p in ax.patches if p.get_gid() == "dropped"]
    return ax, lines, dots, spans


@pytest.mark.parametrize("fraction, convention, base, head_dim", [
    (0.25, "proportional", 1e6, 512), (0.25, "spread", 1e6, 512),
    (0.5, 0, 10000.0, 128), (0.75, 1, 500000.0, 96), (1.0, 1, 100.0, 16)])
def test_spectrum_draws_the_core_frequencies(fraction, convention, base,
                                             head_dim):
    name = figs.CONVENTIONS[convention] if isinstance(convention, int) \
        else convention
    fig = figs.plot_spectrum(fraction=fraction, convention=convention,
                             base=base, head_dim=head_dim)
    ax, lines, dots, spans = _artists(fig)
    omega = pc.partial_rope_frequencies(head_dim, fraction, base=base,
                                        convention=name)
    np.testing.assert_allclose(lines["full"].get_ydata(),
                               2 * np.pi / pc.rope_frequencies(
                                   head_dim, base=base), rtol=1e-14)
    kept = np.flatnonzero(omega)
    offsets = dots["rotated"].get_offsets()
    np.testing.assert_array_equal(offsets[:, 0], kept)
    np.testing.assert_allclose(offsets[:, 1], 2 * np.pi / omega[kept],
                               rtol=1e-14)
    assert len(spans) == (kept.size < head_dim // 2)
    assert f"{kept.size} of {head_dim // 2} pairs rotate" in ax.get_title()
    assert ax.get_yscale() == "log"


def test_the_conventions_differ_where_the_chapter_says():
    ax_p = _artists(figs.plot_spectrum(convention="proportional"))[0]
    ax_s = _artists(figs.plot_spectrum(convention="spread"))[0]
    assert "longest wavelength 188" in ax_p.get_title()
    assert "longest wavelength 5,063,256" in ax_s.get_title()


def test_no_rotated_pair_draws_an_empty_figure():
    ax, lines, dots, spans = _artists(figs.plot_spectrum(fraction=0.0))
    assert dots["rotated"].get_offsets().shape[0] == 0
    assert len(spans) == 1 and "no pair rotates" in ax.get_title()


def test_the_live_figure_redraws_as_a_fresh_one():
    live = figs.live_spectrum()
    for values in ({"fraction": 0.0}, {"fraction": 1.0, "convention": 0},
                   {"fraction": 0.3, "head_dim": 16, "base": 100.0}):
        live.update(**values)
        fresh = figs.plot_spectrum(**values)
        assert live.figure.axes[0].get_title() == fresh.axes[0].get_title()
        assert len(live.figure.axes[0].patches) == len(fresh.axes[0].patches)
        np.testing.assert_array_equal(
            live.figure.axes[0].collections[0].get_offsets(),
            fresh.axes[0].collections[0].get_offsets())


@pytest.mark.parametrize("bad", [2, -1, 0.5, "interleaved", None])
def test_a_wrong_convention_is_refused(bad):
    with pytest.raises(ValueError, match="convention"):
        figs.plot_spectrum(convention=bad)


def test_every_slider_position_draws():
    for slider in figs.SPECTRUM.sliders:
        values = slider.values()
        for value in (values[0], values[len(values) // 2], values[-1]):
            figs.plot_spectrum(**{slider.name: value})
