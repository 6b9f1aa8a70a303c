"""Tests for posenc_plots.ch01_order: the figures must show posenc_core's numbers."""

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import Interactive
from posenc_plots import ch01_order as figs


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def reference_weights(amplitude, d_model, seed=0):
    """The chapter's recipe, written out independently of the module."""
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(5, d_model))
    w_q, w_k, w_v = rng.normal(size=(3, d_model, d_model // 2)) / np.sqrt(d_model)
    P = pc.sinusoidal_encoding(5, d_model)
    first, second = [0, 1, 2, 3, 4], [2, 1, 0, 3, 4]
    _, A1 = pc.self_attention(E[first] + amplitude * P, w_q, w_k, w_v)
    _, A2 = pc.self_attention(E[second] + amplitude * P, w_q, w_k, w_v)
    # A2 indexed by word: word w sits in slot second.index(w)
    slots = [second.index(w) for w in range(5)]
    return A1, A2[np.ix_(slots, slots)]


def test_random_parameters_follow_the_notebook_recipe():
    rng = np.random.default_rng(0)
    E = rng.normal(size=(5, 16))
    W = rng.normal(size=(3, 16, 8)) / np.sqrt(16)
    got = figs.random_parameters(5, 16, 8, seed=0)
    for a, b in zip(got, (E, *W), strict=True):
        assert np.array_equal(a, b)


def test_phrases_are_the_sources_example():
    assert [figs.TICKET_WORDS[w] for w in figs.SECOND] == [
        "Guangzhou", "to", "Shenyang", "de", "ticket"]
    assert sorted(figs.FIRST) == sorted(figs.SECOND) == list(range(5))


@pytest.mark.parametrize("amplitude, d_model", [(0.0, 16), (1.0, 16), (2.5, 4),
                                                (0.7, 64)])
def test_ticket_weights_match_posenc_core(amplitude, d_model):
    A1, A2 = figs.ticket_weights(amplitude, d_model)
    R1, R2 = reference_weights(amplitude, d_model)
    assert np.allclose(A1, R1) and np.allclose(A2, R2)
    assert np.allclose(A1.sum(axis=1), 1) and np.allclose(A2.sum(axis=1), 1)


@pytest.mark.parametrize("d_model", [4, 16, 64])
def test_without_position_the_phrases_agree_word_by_word(d_model):
    A1, A2 = figs.ticket_weights(0.0, d_model)
    assert np.allclose(A1, A2)


def test_with_position_the_phrases_differ():
    A1, A2 = figs.ticket_weights(1.0, 16)
    assert np.abs(A1 - A2).max() > 0.1


def test_heatmaps_show_the_weights_and_their_difference():
    fig = figs.attention_with_position(amplitude=1.0, d_model=16)
    A1, A2 = reference_weights(1.0, 16)
    images = [ax.images[0].get_array() for ax in fig.axes]
    assert len(images) == 3
    assert np.allclose(images[0], A1)
    assert np.allclose(images[1], A2)
    assert np.allclose(images[2], np.abs(A1 - A2))
    # the cell labels are the weights
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels == [f"{v:.2f}" for v in A1.ravel()]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(
        figs.TICKET_WORDS)


def test_heatmaps_accept_given_axes():
    fig, axes = plt.subplots(1, 3)
    A = np.full((5, 5), 0.2)
    assert figs.plot_order_heatmaps(A, A, ax=axes) is fig
    assert np.allclose(axes[2].images[0].get_array(), 0)


def test_query_weights_bars_have_the_given_heights():
    w1 = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    w2 = w1[::-1]
    fig = figs.plot_query_weights(w1, w2)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert np.allclose(heights[:5], w1) and np.allclose(heights[5:], w2)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(figs.TICKET_WORDS)


def test_encoding_vs_order_shows_the_weights_and_the_three_changes():
    plain1, plain2 = figs.ticket_weights(0.0, 16)
    enc1, enc2 = figs.ticket_weights(1.0, 16)
    ticket = 4
    fig = figs.plot_encoding_vs_order(plain1[ticket], plain2[ticket],
                                      enc1[ticket], enc2[ticket])
    weights_ax, changes_ax = fig.axes
    heights = np.array([p.get_height() for p in weights_ax.patches]).reshape(4, 5)
    assert np.allclose(heights, [plain1[ticket], plain2[ticket], enc1[ticket],
                                 enc2[ticket]])
    changes = np.array([p.get_height() for p in changes_ax.patches]).reshape(3, 5)
    assert np.allclose(changes[0], 0)     # reordering without the encoding
    assert np.allclose(changes[1], np.abs(enc1[ticket] - plain1[ticket]))
    assert np.allclose(changes[2], np.abs(enc2[ticket] - enc1[ticket]))
    assert changes[1].max() > 0.1 and changes[2].max() > 0.01
    # the changes on their own scale (not 0..1, where 0.048 would vanish),
    # and the effect of the order written on its bars
    assert weights_ax.get_ylim() == (0, 1)
    assert np.isclose(changes_ax.get_ylim()[1], 1.35 * changes.max())
    assert [t.get_text() for t in changes_ax.texts] == [
        f"{v:.3f}" for v in changes[2]]
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == list(
            figs.TICKET_WORDS)


def test_interactive_spec():
    assert figs.INTERACTIVE == (figs.ATTENTION_WITH_POSITION,)
    spec = figs.ATTENTION_WITH_POSITION
    assert isinstance(spec, Interactive) and spec.caption
    assert {s.name for s in spec.sliders} == {"amplitude", "d_model"}
    d_model = next(s for s in spec.sliders if s.name == "d_model")
    assert d_model.is_int and all(v % 2 == 0 for v in d_model.values())
    assert spec.defaults() == {"amplitude": 1.0, "d_model": 16}


def independent_weights(amplitude, d_model, seed=0):
    """Both phrases' weights by word from the formulas alone (no posenc_core):
    the sinusoids written out, a softmax by hand."""
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(5, d_model))
    w_q, w_k, _ = rng.normal(size=(3, d_model, d_model // 2)) / np.sqrt(d_model)
    angle = np.arange(5)[:, None] / 10000.0 ** (
        np.arange(0, d_model, 2)[None, :] / d_model)
    P = np.stack([np.sin(angle), np.cos(angle)], axis=2).reshape(5, d_model)

    def weights(X):
        S = (X @ w_q) @ (X @ w_k).T / np.sqrt(d_model // 2)
        e = np.exp(S - S.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    second = [2, 1, 0, 3, 4]  # 广州 到 沈阳 的 机票, as word ids
    slot = [second.index(w) for w in range(5)]
    return weights(E + amplitude * P), weights(E[second] + amplitude * P)[
        np.ix_(slot, slot)]


def test_every_slider_position_draws_what_the_weights_say():
    """Each slider over its whole range: the three heatmaps, their cell
    labels and titles are the weights computed independently for those
    values, so each move of a slider changes them as it should."""
    spec = figs.ATTENTION_WITH_POSITION
    defaults = spec.defaults()
    for slider in spec.sliders:
        before = None
        for value in slider.values():
            values = {**defaults, slider.name: value}
            fig = spec.plot(**values)
            A1, A2 = independent_weights(values["amplitude"],
                                         int(values["d_model"]))
            diff = np.abs(A1 - A2)
            axes = fig.axes
            assert len(axes) == 3
            for ax, expected in zip(axes, (A1, A2, diff), strict=True):
                assert np.allclose(ax.images[0].get_array(), expected,
                                   rtol=0, atol=1e-12)
                assert [t.get_text() for t in ax.texts] == [
                    f"{v:.2f}" for v in expected.ravel()]
            assert axes[2].get_title() == f"|difference|, max {diff.max():.2f}"
            assert fig.get_suptitle() == (
                f"amplitude of the position encoding = {values['amplitude']:g}"
                f", $d_{{\\mathrm{{model}}}} = {int(values['d_model'])}$")
            if values["amplitude"] == 0:  # no position: the phrases agree
                assert np.allclose(diff, 0, atol=1e-12)
            if before is not None:  # the move changed what is drawn
                assert not np.allclose(axes[0].images[0].get_array(), before)
            before = axes[0].images[0].get_array()
            plt.close(fig)


def test_corners_of_the_slider_grid_draw():
    ranges = [(s.values()[0], s.values()[-1]) for s in
              figs.ATTENTION_WITH_POSITION.sliders]
    names = [s.name for s in figs.ATTENTION_WITH_POSITION.sliders]
    for combo in itertools.product(*ranges):
        fig = figs.attention_with_position(**dict(zip(names, combo, strict=True)))
        assert np.all(np.isfinite(fig.axes[0].images[0].get_array()))
        plt.close(fig)


@pytest.mark.parametrize("amplitude, d_model, seed", [(1.0, 16, 0),
                                                      (2.0, 8, 3)])
def test_reordering_effect_shows_the_change_of_every_weight(amplitude,
                                                            d_model, seed):
    fig = figs.plot_reordering_effect(amplitude, d_model, seed=seed)
    plain, encoded = (ax.images[0].get_array() for ax in fig.axes[:2])
    R1, R2 = reference_weights(amplitude, d_model, seed)
    assert np.abs(plain).max() < 1e-12  # permutation equivariance
    assert np.allclose(encoded, np.abs(R1 - R2)) and encoded.max() > 0.01
    assert [t.get_text() for t in fig.axes[1].texts] == [
        f"{v:.2f}" for v in np.abs(R1 - R2).ravel()]
    # one colour scale for both panels, and the largest change in the title
    assert {ax.images[0].get_clim() for ax in fig.axes[:2]} == {
        (0.0, max(0.25, np.abs(R1 - R2).max()))}
    assert f"{np.abs(R1 - R2).max():.2f}" in fig.axes[1].get_title()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(
        figs.TICKET_WORDS)


def test_reordering_effect_draws_into_given_axes():
    fig, ax = plt.subplots(1, 2)
    assert figs.plot_reordering_effect(ax=ax) is fig
    assert all(a.images for a in ax)
