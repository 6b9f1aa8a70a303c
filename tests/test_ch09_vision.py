"""Tests for chapter 9's figures (posenc_plots.ch09_vision).

The mathematics is posenc_core's (tests/test_core_vision.py); here: that the
figures draw what their docstrings say, computed through posenc_core, that
the claims the chapter makes of them hold, and that the in-page figure's
data file is up to date. Each test would fail if its subject were wrong.
"""

import base64
import re

import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import ch09_vision as figs


def grid(h, w):
    return np.stack(np.divmod(np.arange(h * w), w), axis=1).astype(float)


# ------------------------------------------------------- similarity_map


@pytest.mark.parametrize("scheme", figs.SCHEMES)
@pytest.mark.parametrize("side,row,col", [(2, 0, 1), (7, 3, 3), (14, 5, 8),
                                          (9, 8, 0)])
def test_similarity_is_one_at_the_query_and_at_most_one(scheme, side, row,
                                                        col):
    S = figs.similarity_map(scheme, side, row, col, base=100.0)
    assert S.shape == (side, side)
    assert S[row, col] == pytest.approx(1.0, abs=1e-12)
    assert np.all(S <= 1.0 + 1e-12) and np.all(S >= -1.0 - 1e-12)


def test_sincos_similarity_is_the_sum_of_cosines_of_the_offsets():
    d, side, base = 64, 9, 10000.0
    omega = base ** (-4.0 * np.arange(d // 4) / d)
    S = figs.similarity_map("sincos", side, 2, 6, base=base)
    for y, x in [(0, 0), (8, 1), (2, 6), (5, 5)]:
        expected = (np.cos((x - 6) * omega).sum()
                    + np.cos((y - 2) * omega).sum()) / (d / 2)
        assert S[y, x] == pytest.approx(expected, abs=1e-12)


def test_rotary_similarity_is_the_mean_cosine_of_the_angle_differences():
    side = 6
    coords = grid(side, side)
    for scheme, angles in (
            ("axial", pc.rope_axial_angles(coords, 64, base=100.0)),
            ("raster", np.arange(36)[:, None] * pc.rope_frequencies(
                64, base=100.0)),
            ("dinov3", pc.dinov3_rope_angles(
                pc.normalized_patch_coordinates(side, side), 64,
                base=100.0))):
        S = figs.similarity_map(scheme, side, 1, 4, base=100.0)
        k = 1 * side + 4
        expected = np.cos(angles - angles[k]).mean(axis=1).reshape(side,
                                                                    side)
        np.testing.assert_allclose(S, expected, atol=1e-12, err_msg=scheme)


def test_mixed_similarity_averages_the_heads():
    side, base = 5, 10.0
    freqs = figs.mixed_frequencies(base)
    angles = pc.rope_mixed_angles(grid(side, side), freqs)
    k = 2 * side + 3
    expected = np.cos(angles - angles[:, k:k + 1]).mean(axis=(0, 2))
    S = figs.similarity_map("mixed", side, 2, 3, base=base)
    np.testing.assert_allclose(S.ravel(), expected, atol=1e-12)
    # the heads differ: one head alone gives another map
    one = figs.similarity_map("mixed", side, 2, 3, base=base,
                              freqs=freqs[:1])
    assert not np.allclose(one, S)


def test_axial_similarity_is_a_column_part_plus_a_row_part():
    S = figs.similarity_map("axial", 10, 4, 4, base=100.0)
    # by symmetry of the two halves: S(dy, dx) = (A(dx) + A(dy)) / 2
    A = 2 * S[4, :] - 1.0           # row of the query: dy = 0, A(0) = 1
    expected = (A[None, :] + A[:, None]) / 2
    np.testing.assert_allclose(S, expected, atol=1e-12)


def test_raster_order_joins_the_ends_of_rows():
    # the chapter's claim: the end of row 5 is closer to the start of row 6
    S = figs.similarity_map("raster", 14, 5, 13, base=100.0)
    assert S[6, 0] > S[6, 13]


def test_dinov3_zooms_and_axial_extends():
    S14 = figs.similarity_map("dinov3", 14, 5, 8, base=100.0)
    S42 = figs.similarity_map("dinov3", 42, 16, 25, base=100.0)
    np.testing.assert_allclose(S42[1::3, 1::3], S14, atol=1e-12)
    A14 = figs.similarity_map("axial", 14, 5, 8, base=100.0)
    A42 = figs.similarity_map("axial", 42, 16, 25, base=100.0)
    assert not np.allclose(A42[1::3, 1::3], A14)
    # axial RoPE: the same offsets in patches give the same similarity
    np.testing.assert_allclose(A42[16 - 5:16 + 9, 25 - 8:25 + 6], A14,
                               atol=1e-12)


def test_bad_scheme_is_refused():
    with pytest.raises(ValueError, match="scheme"):
        figs.similarity_map("learned", 4, 0, 0, base=100.0)
    with pytest.raises(ValueError, match="scheme"):
        figs.scheme_angles("sincos", 4, base=100.0)
    with pytest.raises(ValueError, match="scheme"):
        figs.score_offsets("sincos", np.ones(8), np.ones(8))


# ------------------------------------------------------- score_offsets


def interaction(S):
    c = S.shape[0] // 2
    return S - S[:, [c]] - S[[c], :] + S[c, c]


@pytest.mark.parametrize("seed", range(5))
def test_axial_scores_have_no_interaction_and_mixed_ones_do(seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 64))
    S = figs.score_offsets("axial", q, k, max_offset=5)
    assert S.shape == (11, 11)
    assert np.abs(interaction(S)).max() < 1e-10 * np.abs(S).max()
    freqs = figs.mixed_frequencies(10.0, n_heads=1, seed=seed)
    M = figs.score_offsets("mixed", q, k, max_offset=5, freqs=freqs)
    assert np.abs(interaction(M)).max() > 0.05 * np.abs(M).max()


def test_score_offsets_is_the_rotated_dot_product():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 16))
    S = figs.score_offsets("axial", q, k, max_offset=2, base=100.0)
    for dy, dx in [(0, 0), (-2, 1), (2, 2), (1, -2)]:
        a = pc.rope_axial_angles([[0.0, 0.0], [dy, dx]], 16, base=100.0)
        qr = pc.apply_rope_angles(q[None], a[:1])[0]
        kr = pc.apply_rope_angles(k[None], a[1:])[0]
        assert S[dy + 2, dx + 2] == pytest.approx(qr @ kr, rel=1e-12)


# ------------------------------------------------------- the figures


def test_plot_similarity_draws_the_map_and_its_profiles():
    fig = figs.plot_similarity(row=5, col=8, side=14, base=100.0, scheme=2)
    ax, bx = [a for a in fig.axes if not hasattr(a, "_colorbar")]
    S = figs.similarity_map("axial", 14, 5, 8, base=100.0)
    np.testing.assert_array_equal(ax.images[0].get_array(), S)
    query = next(line for line in ax.lines if line.get_gid() == "query")
    assert list(query.get_xdata()) == [8] and list(query.get_ydata()) == [5]
    lines = {line.get_gid(): line for line in bx.lines}
    np.testing.assert_array_equal(lines["row"].get_ydata(), S[5])
    np.testing.assert_array_equal(lines["col"].get_ydata(), S[:, 8])
    np.testing.assert_array_equal(lines["diag"].get_xdata(), np.arange(-5, 6))
    np.testing.assert_array_equal(lines["diag"].get_ydata(),
                                  S[np.arange(0, 11), np.arange(3, 14)])
    assert "axial" in ax.get_title()


def test_a_query_outside_the_image_moves_to_its_edge():
    fig = figs.plot_similarity(row=31, col=20, side=6, base=100.0, scheme=1)
    ax = fig.axes[0]
    np.testing.assert_array_equal(
        ax.images[0].get_array(),
        figs.similarity_map("sincos", 6, 5, 5, base=100.0))
    assert "(row 5, column 5)" in fig.axes[1].get_title()


def test_live_similarity_redraws_what_a_new_figure_draws():
    live = figs.live_similarity()
    for values in ({"row": 0, "col": 0, "side": 3, "base": 10.0,
                    "scheme": 3},
                   {"row": 9, "col": 2, "side": 20, "base": 1e5,
                    "scheme": 4}):
        live.update(**values)
        fresh = figs.plot_similarity(**values)
        np.testing.assert_array_equal(live.figure.axes[0].images[0]
                                      .get_array(),
                                      fresh.axes[0].images[0].get_array())
        assert live.figure.axes[0].get_title() == fresh.axes[0].get_title()


def test_plot_diagonal_interaction_shows_a_zero_and_a_nonzero_map():
    fig = figs.plot_diagonal_interaction(seed=0, max_offset=4)
    images = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    assert len(images) == 4
    axial, axial_rest, mixed, mixed_rest = images
    np.testing.assert_allclose(axial_rest, interaction(axial), atol=1e-12)
    assert np.abs(axial_rest).max() < 1e-10 * np.abs(axial).max()
    assert np.abs(mixed_rest).max() > 0.05 * np.abs(mixed).max()


# ------------------------------------------------------- the data file


def _mixed_js_parts(text):
    head, data, tail = re.fullmatch(r'(.*"ch09-mixed", ")([^"]*)(".*)', text,
                                    re.S).groups()
    return head + tail, np.frombuffer(base64.b64decode(data), "<f8")


def test_mixed_data_file_is_up_to_date():
    """``python -m posenc_plots.ch09_vision`` writes it: the same text and
    the same numbers, to the last bits that a different CPU's sin and cos
    round differently (the committed file was made on another machine)."""
    text, stored = _mixed_js_parts(
        figs.MIXED_DATA_PATH.read_text(encoding="utf-8"))
    fresh_text, fresh = _mixed_js_parts(figs.mixed_data_js())
    assert text == fresh_text and stored.shape == fresh.shape
    np.testing.assert_allclose(stored, fresh, rtol=1e-13, atol=1e-15)


def test_mixed_data_holds_every_base_of_the_slider_in_order():
    data = figs.mixed_data().reshape(-1, figs.N_HEADS, figs.HEAD_DIM // 2, 2)
    bases = figs.SIMILARITY.sliders[3].values()
    assert figs.SIMILARITY.sliders[3].name == "base"
    assert len(data) == len(bases)
    for block, base in zip(data, bases, strict=True):
        np.testing.assert_array_equal(block, figs.mixed_frequencies(base))


# ------------------------------------------------------- M-RoPE figures


def test_mrope_prompt_is_text_image_text_video_text():
    seg = figs.mrope_prompt(img_h=6, img_w=10, frames=12, fps=4.0)
    assert [s[0] for s in seg] == ["text", "image", "text", "video", "text"]
    assert seg[1][1] == (1, 6, 10)
    assert seg[3][1] == (6, 8, 8) and seg[3][2] == pytest.approx(0.5)


@pytest.mark.parametrize("values", [
    {}, {"img_h": 2, "img_w": 32, "frames": 32, "fps": 0.5},
    {"img_h": 30, "img_w": 4, "frames": 2, "fps": 3.5}])
def test_plot_mrope_ids_draws_posenc_core_ids(values):
    fig = figs.plot_mrope_ids(**values)
    segments = figs.mrope_prompt(**values)
    for ax, variant in zip(fig.axes, ("qwen2-vl", "qwen2.5-vl"),
                           strict=True):
        ids = pc.mrope_position_ids(segments, variant=variant,
                                    tokens_per_second=4)
        lines = {line.get_gid(): line for line in ax.lines}
        for row, gid in zip(ids, "thw", strict=True):
            np.testing.assert_array_equal(lines[gid].get_ydata(), row)
        np.testing.assert_array_equal(lines["token"].get_ydata(),
                                      np.arange(ids.shape[1]))
        assert f"largest id {ids.max()}" in ax.get_title()
        # the shaded spans cover exactly the image's and the video's tokens
        spans = [p for p in ax.patches]
        assert len(spans) == 2
        n_image = (values.get("img_h", 8) // 2) * (values.get("img_w", 12)
                                                   // 2)
        assert spans[0].get_x() == pytest.approx(5 - 0.5)
        assert spans[0].get_width() == pytest.approx(n_image)


def test_mrope_ids_grow_slower_than_tokens_and_time_follows_seconds():
    fig = figs.plot_mrope_ids(img_h=32, img_w=32, frames=16, fps=2.0)
    top, bottom = fig.axes
    n = len(top.lines[0].get_xdata())
    assert top.lines[1].get_ydata().max() < n / 4
    # Qwen2.5-VL: 4 ids per second, 1 second per group at 2 fps
    t = bottom.lines[1].get_ydata()
    assert np.diff(np.unique(t[5 + 256 + 4:5 + 256 + 4 + 8 * 16])).tolist() \
        == [4] * 7


@pytest.mark.parametrize("time_span,space_span", [(100.0, 32), (10.0, 2),
                                                  (1e4, 64)])
def test_plot_pair_axes_draws_the_turns_of_each_axis(time_span, space_span):
    fig = figs.plot_pair_axes(time_span=time_span, space_span=space_span)
    for ax, (_, section, layout, base) in zip(fig.axes, figs.MROPE_MODELS,
                                              strict=True):
        axes = pc.mrope_pair_axes(section, layout=layout)
        omega = pc.rope_frequencies(128, base=base)
        spans = np.array([time_span, space_span, space_span])
        lines = {line.get_gid(): line for line in ax.lines}
        for axis, name in enumerate(("time", "height", "width")):
            i = np.flatnonzero(axes == axis)
            np.testing.assert_array_equal(lines[name].get_xdata(), i)
            np.testing.assert_allclose(lines[name].get_ydata(),
                                       spans[axis] * omega[i] / (2 * np.pi),
                                       rtol=1e-12)
        assert ax.get_yscale() == "log"


def test_chunked_layout_gives_time_the_fastest_pairs():
    fig = figs.plot_pair_axes()
    chunked, interleaved = fig.axes
    lines = {line.get_gid(): line for line in chunked.lines}
    assert lines["time"].get_xdata().tolist() == list(range(16))
    assert lines["width"].get_xdata().min() == 40
    assert lines["width"].get_ydata().max() < 1e-3
    inter = {line.get_gid(): line for line in interleaved.lines}
    assert inter["width"].get_xdata().min() == 2
    assert inter["width"].get_ydata().max() > 1
    assert "13" in chunked.get_title().splitlines()[1]


# ------------------------------------------ the experiment: zoom and canvas


def _results():
    from posenc_lab import vision

    return vision.load_results("full")


def _fake_results():
    """Two seeds of two methods with known accuracies."""
    runs = []
    for method, offset in (("none", 0.0), ("rope_axial", 0.5)):
        for seed in (1, 0):   # out of order: the functions sort them
            acc = {mode: {str(s): {"accuracy": offset + seed / 10 + s / 1000
                                   + (0.2 if mode == "canvas" else 0.0)}
                          for s in (12, 24)} for mode in ("zoom", "canvas")}
            runs.append({"method": method, "seed": seed, "eval": acc})
    return {"config": {"eval_sizes": [12, 24], "image_size": 12,
                       "eval_examples": 7},
            "runs": runs}


def test_experiment_methods_are_the_labs():
    from posenc_lab import vision

    assert figs.EXPERIMENT_METHODS == vision.METHODS
    assert set(figs.METHOD_LABELS.en) == set(vision.METHODS)


def test_experiment_accuracy_orders_seeds_and_sizes():
    sizes, acc = figs.experiment_accuracy(_fake_results(), "zoom",
                                          "rope_axial")
    assert sizes.tolist() == [12, 24]
    np.testing.assert_allclose(acc, [[0.512, 0.524], [0.612, 0.624]])
    for bad in (("side", "none"), ("zoom", "sincos")):
        with pytest.raises(ValueError, match="mode" if bad[0] == "side"
                           else "method"):
            figs.experiment_accuracy(_fake_results(), *bad)


def test_zoom_canvas_figure_draws_the_mean_of_the_seeds():
    results = _results()
    fig = figs.plot_zoom_canvas(results)
    for panel, mode in zip(fig.axes, ("zoom", "canvas"), strict=True):
        lines = {line.get_gid(): line for line in panel.get_lines()
                 if line.get_gid() and line.get_marker() == "o"}
        assert set(lines) == set(figs.EXPERIMENT_METHODS)
        for method, line in lines.items():
            summary = results["summary"][mode][method]
            expected = [summary[str(s)]["accuracy"]["mean"]
                        for s in results["config"]["eval_sizes"]]
            np.testing.assert_allclose(line.get_ydata(), expected, atol=1e-5)
            np.testing.assert_array_equal(line.get_xdata(),
                                          results["config"]["eval_sizes"])


def test_accuracy_table_holds_mean_and_spread_once_per_size():
    table = figs.accuracy_table(_fake_results()).splitlines()
    assert table[0] == ("| method | 12 px | zoom 24 px | canvas 24 px |")
    none = table[2].split(" | ")
    assert none[0] == "| none (NoPE)"
    # seeds 0 and 1: mean of x and x + 0.1, sample std 0.1 / sqrt 2
    assert none[1:] == ["0.06 ± 0.07", "0.07 ± 0.07", "0.27 ± 0.07 |"]


def test_live_run_text_and_progress():
    run = {"method": "rope_dinov3", "seed": 2,
           "train_loss": [[0, 2.5], [9, 0.25]],
           "eval": {m: {"24": {"accuracy": 0.5}, "12": {"accuracy": 0.875}}
                    for m in ("zoom", "canvas")}}
    lines = figs.format_live_run(run).splitlines()
    assert lines[0] == ("normalised RoPE (DINOv3), seed 2: training loss "
                        "2.500 at step 0, 0.250 at step 9")
    assert lines[1].split(":")[1].split() == ["12", "24"]
    assert lines[2].split(":")[1].split() == ["0.875", "0.500"]
    assert lines[3].startswith("accuracy, canvas:")
