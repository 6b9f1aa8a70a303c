"""Chapter 9's 2-D position maths: properties that break if it is wrong.

Checks against the implementations people run are in
tests/test_reference_vision.py; bad input in tests/test_robustness.py.
"""

import numpy as np
import pytest

import posenc_core as pc


def _grid(h, w):
    return np.indices((h, w)).reshape(2, -1).T


def _rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------- apply_rope_angles


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_apply_rope_angles_is_apply_rope_with_its_table(layout):
    x = _rng().normal(size=(2, 5, 8))
    pos = np.array([0.0, 1.0, 3.0, -2.0, 7.5])
    angles = pos[:, None] * pc.rope_frequencies(8, base=50.0)
    np.testing.assert_allclose(
        pc.apply_rope_angles(x, angles, layout=layout),
        pc.apply_rope(x, pos, base=50.0, layout=layout), atol=1e-13)


def test_apply_rope_angles_pairs_and_heads():
    x = np.zeros((1, 4))
    x[0, 1] = 1.0  # the second dimension: pair 0 interleaved, pair 1 half
    a = np.array([[0.0, np.pi / 2]])
    np.testing.assert_allclose(pc.apply_rope_angles(x, a), x, atol=1e-15)
    # half layout: dims (1, 3) are pair 1, turned by pi/2: (1, 0) -> (0, 1)
    np.testing.assert_allclose(pc.apply_rope_angles(x, a, layout="half"),
                               [[0.0, 0.0, 0.0, 1.0]], atol=1e-15)
    # one table per head broadcasts against x without heads
    heads = _rng(1).normal(size=(3, 2, 2))
    out = pc.apply_rope_angles(_rng(2).normal(size=(2, 4)), heads)
    assert out.shape == (3, 2, 4)


def test_apply_rope_angles_keeps_norms():
    x = _rng().normal(size=(3, 6, 8))
    a = _rng(1).normal(size=(3, 6, 4)) * 10
    np.testing.assert_allclose(np.linalg.norm(pc.apply_rope_angles(x, a),
                                              axis=-1),
                               np.linalg.norm(x, axis=-1), rtol=1e-13)


# ------------------------------------------------------------ 2-D sin-cos


def test_sincos_2d_blocks_are_1d_tables_of_the_axes():
    h, w, d = 4, 6, 16
    P = pc.sincos_2d_encoding(h, w, d)
    y, x = _grid(h, w).T
    # a 1-D table of width d/2 with base b spaces exponents 2i/(d/2) =
    # i/(d/4): the same frequencies, in concat layout
    col = pc.sinusoidal_encoding(x, d // 2, layout="concat")
    row = pc.sinusoidal_encoding(y, d // 2, layout="concat")
    np.testing.assert_allclose(P, np.hstack([col, row]), atol=1e-14)
    T = pc.sincos_2d_encoding(h, w, d, layout="timm")
    q = d // 4
    np.testing.assert_allclose(
        T, np.hstack([row[:, :q], col[:, :q], row[:, q:], col[:, q:]]),
        atol=1e-14)


def test_sincos_2d_rows_are_distinct_and_bounded():
    P = pc.sincos_2d_encoding(5, 7, 32)
    assert P.shape == (35, 32) and np.abs(P).max() <= 1.0
    gram = P @ P.T
    np.testing.assert_allclose(np.diag(gram), 16.0)  # d/2 sin^2 + cos^2
    assert (gram - np.diag(np.diag(gram)) < 16.0 - 1e-6).all()


# ---------------------------------------------------------- axial RoPE


def _scores(q, k, angles_q, angles_k, layout="interleaved"):
    return (pc.apply_rope_angles(q, angles_q, layout=layout)
            * pc.apply_rope_angles(k, angles_k, layout=layout)).sum(-1)


@pytest.mark.parametrize("scheme", ["axial", "mixed", "dinov3"])
def test_2d_rope_scores_depend_on_the_offset_only(scheme):
    d = 16
    f = pc.rope_mixed_frequencies(d, 1, rng=3)

    def angles(c):
        if scheme == "axial":
            return pc.rope_axial_angles(c, d)
        if scheme == "mixed":
            return pc.rope_mixed_angles(c, f)[0]
        return pc.dinov3_rope_angles(c, d)

    layout = "half" if scheme == "dinov3" else "interleaved"
    q, k = _rng(4).normal(size=(2, 1, d))
    cq, ck = np.array([[1.0, 2.0]]), np.array([[4.0, -1.0]])
    shift = np.array([[2.5, -7.0]])
    s1 = _scores(q, k, angles(cq), angles(ck), layout)
    s2 = _scores(q, k, angles(cq + shift), angles(ck + shift), layout)
    np.testing.assert_allclose(s1, s2, atol=1e-12)
    # ... and on the offset, not only its length
    swapped = _scores(q, k, angles(cq[:, ::-1]), angles(ck[:, ::-1]), layout)
    assert not np.allclose(s1, swapped)


def test_axial_halves_take_column_then_row():
    a = pc.rope_axial_angles([[3.0, 0.0], [0.0, 5.0]], 8, base=100.0)
    np.testing.assert_allclose(a, [[0, 0, 3, 0.3], [5, 0.5, 0, 0]],
                               atol=1e-15)


def test_axial_no_pair_sees_a_diagonal():
    # every pair's angle is a multiple of one axis: a diagonal step
    # (1, 1) turns each pair by exactly what one of the axis steps does
    d = 16
    diag = pc.rope_axial_angles([[1.0, 1.0]], d)
    row = pc.rope_axial_angles([[1.0, 0.0]], d)
    col = pc.rope_axial_angles([[0.0, 1.0]], d)
    np.testing.assert_allclose(diag, row + col, atol=1e-15)
    assert ((row == 0) | (col == 0)).all()


def test_dinov3_is_axial_with_row_first_and_two_pi():
    c = _rng(5).normal(size=(7, 2))
    np.testing.assert_allclose(
        pc.dinov3_rope_angles(c, 16, base=100.0),
        2 * np.pi * pc.rope_axial_angles(c[:, ::-1], 16, base=100.0),
        atol=1e-13)


# ---------------------------------------------------------- RoPE-Mixed


def test_mixed_frequencies_are_seeded_and_per_head():
    a = pc.rope_mixed_frequencies(16, 4, rng=7)
    b = pc.rope_mixed_frequencies(16, 4, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 8, 2)
    direction = np.arctan2(a[:, 0, 1], a[:, 0, 0])
    assert np.unique(direction.round(8)).size == 4  # one per head
    # with base 10 the magnitudes fall 10x over the quarter, not 100x
    mag = np.linalg.norm(a[0], axis=-1)
    np.testing.assert_allclose(mag[:4], 10.0 ** (-4 * np.arange(4) / 16))


def test_mixed_with_axis_directions_is_axial():
    # direction 0: the first half along x, the second along y: axial RoPE
    d = 8
    mu = 10.0 ** (-4 * np.arange(d // 4) / d)
    f = np.zeros((1, d // 2, 2))
    f[0, : d // 4, 0] = mu
    f[0, d // 4:, 1] = mu
    c = _grid(3, 4)
    np.testing.assert_allclose(pc.rope_mixed_angles(c, f)[0],
                               pc.rope_axial_angles(c, d, base=10.0),
                               atol=1e-15)


def test_mixed_sees_a_diagonal():
    f = np.array([[[1.0, 1.0]]]) / np.sqrt(2)  # one pair along (1, 1)
    a = pc.rope_mixed_angles([[1.0, 1.0], [1.0, -1.0]], f)
    np.testing.assert_allclose(a[0, :, 0], [np.sqrt(2), 0.0], atol=1e-15)


# ---------------------------------------------------------------- DINOv3


@pytest.mark.parametrize("h, w", [(1, 1), (4, 7), (16, 16)])
def test_separate_coordinates_fill_the_same_square(h, w):
    c = pc.normalized_patch_coordinates(h, w)
    assert (np.abs(c) < 1).all()
    np.testing.assert_allclose(c.mean(axis=0), 0.0, atol=1e-15)
    np.testing.assert_allclose(c[0], [-1 + 1 / h, -1 + 1 / w])
    np.testing.assert_allclose(c[w - 1], [-1 + 1 / h, 1 - 1 / w])  # row 0
    # doubling the grid samples the same square twice as finely
    c2 = pc.normalized_patch_coordinates(2 * h, 2 * w)
    assert np.isclose(c2.max(), 1 - 1 / (2 * max(h, w)))


def test_max_and_min_normalisation():
    assert np.abs(pc.normalized_patch_coordinates(2, 4, normalize="max")
                  ).max() < 1
    assert np.abs(pc.normalized_patch_coordinates(2, 4, normalize="min")
                  ).max() > 1  # the longer side goes beyond
    np.testing.assert_allclose(
        pc.normalized_patch_coordinates(3, 3, normalize="min"),
        pc.normalized_patch_coordinates(3, 3))


def test_augment_coordinates_order_and_identity():
    c = _rng(6).normal(size=(5, 2))
    np.testing.assert_array_equal(pc.augment_coordinates(c), c)
    got = pc.augment_coordinates(c, shift=(0.1, -0.2), jitter=(2.0, 0.5),
                                 rescale=3.0)
    np.testing.assert_allclose(got, 3.0 * (np.array([2.0, 0.5])
                                           * (c + [0.1, -0.2])))


def test_sample_coordinate_augmentation_is_seeded_and_off_by_default():
    a = pc.sample_coordinate_augmentation(3, shift=0.1, jitter=2, rescale=2)
    b = pc.sample_coordinate_augmentation(3, shift=0.1, jitter=2, rescale=2)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    d, J, s = pc.sample_coordinate_augmentation(3)
    np.testing.assert_array_equal(d, [0.0, 0.0])
    np.testing.assert_array_equal(J, [1.0, 1.0])
    assert s == 1.0
    # jitter is per axis, rescale one factor
    _, J, s = pc.sample_coordinate_augmentation(0, jitter=4.0, rescale=4.0)
    assert J[0] != J[1] and 0.25 <= min(J) <= max(J) <= 4.0


# ---------------------------------------------------------------- M-RoPE


def test_mrope_text_only_is_1d():
    ids = pc.mrope_position_ids([3, ("text", 2)])
    np.testing.assert_array_equal(ids, np.tile(np.arange(5), (3, 1)))
    angles = pc.mrope_angles(ids, 16, [2, 3, 3], base=100.0)
    np.testing.assert_allclose(
        angles, np.arange(5)[:, None] * pc.rope_frequencies(16, base=100.0),
        atol=1e-15)
    assert pc.mrope_position_ids([]).shape == (3, 0)


def test_mrope_image_block_and_next_text():
    # transformers' docstring example: temporal 3, height 2, width 2 merged
    ids = pc.mrope_position_ids([("video", (3, 4, 4))])
    np.testing.assert_array_equal(ids[0], [0] * 4 + [1] * 4 + [2] * 4)
    np.testing.assert_array_equal(ids[1], [0, 0, 1, 1] * 3)
    np.testing.assert_array_equal(ids[2], [0, 1, 0, 1] * 3)
    # a wide image: 1 x 3 merged tokens after 4 text, then text at 4 + 3
    ids = pc.mrope_position_ids([4, ("image", (1, 2, 6)), 2])
    np.testing.assert_array_equal(ids[:, 4:7], [[4, 4, 4], [4, 4, 4],
                                                [4, 5, 6]])
    np.testing.assert_array_equal(ids[:, 7:], [[7, 8]] * 3)


def test_mrope_merge_size_counts_merged_tokens():
    for merge in (1, 2, 4):
        ids = pc.mrope_position_ids([("image", (1, 8, 4))],
                                    spatial_merge_size=merge)
        assert ids.shape[1] == 32 // merge**2
        assert ids[1].max() == 8 // merge - 1
        assert ids[2].max() == 4 // merge - 1
    with pytest.raises(ValueError, match="spatial_merge_size"):
        pc.mrope_position_ids([("image", (1, 3, 4))])


def test_mrope_absolute_time_of_qwen25():
    seg = [("video", (4, 2, 2), 0.5)]  # 1 token per group
    ids = pc.mrope_position_ids(seg, variant="qwen2.5-vl",
                                tokens_per_second=2)
    np.testing.assert_array_equal(ids[0], [0, 1, 2, 3])
    ids = pc.mrope_position_ids(seg, variant="qwen2.5-vl",
                                tokens_per_second=3)
    np.testing.assert_array_equal(ids[0], [0, 1, 3, 4])  # floor(1.5 k)
    # Qwen2-VL ignores time; images are never scaled
    np.testing.assert_array_equal(pc.mrope_position_ids(seg)[0],
                                  [0, 1, 2, 3])
    img = pc.mrope_position_ids([("image", (1, 4, 4))],
                                variant="qwen2.5-vl", tokens_per_second=25)
    np.testing.assert_array_equal(img[0], [0] * 4)
    # (an image grid of two frame groups is counted 0, 1 as in Qwen2-VL)
    img = pc.mrope_position_ids([("image", (2, 2, 2))],
                                variant="qwen2.5-vl", tokens_per_second=25)
    np.testing.assert_array_equal(img[0], [0, 1])


def test_mrope_qwen3_splits_videos_into_frame_groups():
    ids = pc.mrope_position_ids([("video", (2, 4, 2))], variant="qwen3-vl")
    # each group of 2 x 1 tokens starts where the last ended + max(2, 1)
    np.testing.assert_array_equal(ids, [[0, 0, 2, 2], [0, 1, 2, 3],
                                        [0, 0, 2, 2]])
    split = pc.mrope_position_ids([("video", (1, 4, 2)),
                                   ("video", (1, 4, 2))], variant="qwen3-vl")
    np.testing.assert_array_equal(ids, split)


def test_mrope_pair_axes_layouts():
    chunked = pc.mrope_pair_axes([16, 24, 24])
    assert (chunked[:16] == 0).all() and (chunked[16:40] == 1).all()
    assert (chunked[40:] == 2).all()  # width gets the slowest pairs
    inter = pc.mrope_pair_axes([24, 20, 20], layout="interleaved")
    assert np.bincount(inter).tolist() == [24, 20, 20]
    np.testing.assert_array_equal(inter[:6], [0, 1, 2, 0, 1, 2])
    np.testing.assert_array_equal(inter[60:], [0, 0, 0, 0])
    # every axis spans the spectrum: its fastest and slowest pairs
    for a in range(3):
        assert np.flatnonzero(inter == a)[0] <= 2
        assert np.flatnonzero(inter == a)[-1] >= 57


def test_mrope_angles_follow_the_axes():
    ids = np.array([[5, 5], [1, 2], [7, 3]])
    omega = pc.rope_frequencies(8, base=10000.0)
    got = pc.mrope_angles(ids, 8, [1, 1, 2])
    np.testing.assert_allclose(got, [[5 * omega[0], 1 * omega[1],
                                      7 * omega[2], 7 * omega[3]],
                                     [5 * omega[0], 2 * omega[1],
                                      3 * omega[2], 3 * omega[3]]])
    with pytest.raises(ValueError, match="head_dim"):
        pc.mrope_angles(ids, 10, [1, 1, 2])
