"""Chapter 9's position maths against the implementations people run.

* timm 1.0.31 (``timm/layers/pos_embed_sincos.py``, imported as shipped
  through ``tests/timm_modules.py``, without torchvision): the 2-D sin-cos
  table, RoPE-Mixed's initialisation and angles, DINOv3's coordinates,
  rotary embedding and augmentations.
* The authors' repositories, which the tests cannot import (they are not
  packages, and CI has no network): values computed by running their code,
  pasted below with the repository, file and commit they came from.
  facebookresearch/mae's table is plain numpy and is copied here whole.

A missing reference package fails the test, never skips it.
"""

import numpy as np
import pytest
import torch
from timm_modules import TIMM_VERSION, pos_embed_sincos

import posenc_core as pc

ROWS_COLS = [(1, 1), (2, 3), (5, 4), (7, 7), (3, 10)]


def test_reference_versions_are_the_pinned_ones():
    assert TIMM_VERSION == "1.0.31"


def _grid(h, w):
    return np.indices((h, w)).reshape(2, -1).T  # (row, column), row-major


# ------------------------------------------------------ 2-D sin-cos (MAE)
# facebookresearch/mae, util/pos_embed.py at commit
# efb2a8062c206524e35e47d04501ed4f544c0ae8, the three functions as they
# are there (only np.float, removed from numpy, is np.float64; and the
# square grid_size is a pair, which the code's reshape already allows).


def _mae_get_2d_sincos_pos_embed(embed_dim, grid_hw):
    grid_h = np.arange(grid_hw[0], dtype=np.float32)
    grid_w = np.arange(grid_hw[1], dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0)
    grid = grid.reshape([2, 1, grid_hw[0], grid_hw[1]])
    return _mae_from_grid(embed_dim, grid)


def _mae_from_grid(embed_dim, grid):
    emb_h = _mae_1d(embed_dim // 2, grid[0])  # (H*W, D/2)
    emb_w = _mae_1d(embed_dim // 2, grid[1])  # (H*W, D/2)
    return np.concatenate([emb_h, emb_w], axis=1)  # (H*W, D)


def _mae_1d(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.
    omega = 1. / 10000**omega  # (D/2,)
    pos = pos.reshape(-1)  # (M,)
    out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)  # (M, D)


@pytest.mark.parametrize("h, w", ROWS_COLS)
@pytest.mark.parametrize("d", [4, 16, 768])
def test_sincos_2d_matches_mae(h, w, d):
    ref = _mae_get_2d_sincos_pos_embed(d, (h, w))
    np.testing.assert_allclose(pc.sincos_2d_encoding(h, w, d), ref,
                               atol=1e-12)


def test_mae_first_half_is_the_column():
    # MAE names its first half emb_h, but fills it from the column index
    P = _mae_get_2d_sincos_pos_embed(8, (3, 4))
    row1, col1 = P[1 * 4 + 0], P[0 * 4 + 1]
    np.testing.assert_allclose(col1[:2], [np.sin(1.0), np.sin(0.01)])
    np.testing.assert_allclose(row1[4:6], [np.sin(1.0), np.sin(0.01)])
    np.testing.assert_allclose(pc.sincos_2d_encoding(3, 4, 8)[[4, 1]],
                               [row1, col1], atol=1e-15)


@pytest.mark.parametrize("h, w", ROWS_COLS)
@pytest.mark.parametrize("d, base", [(4, 10000.0), (32, 10000.0),
                                     (64, 100.0)])
def test_sincos_2d_timm_layout_matches_build_sincos2d_pos_embed(h, w, d, base):
    ref = pos_embed_sincos.build_sincos2d_pos_embed(
        [h, w], dim=d, temperature=base, dtype=torch.float64).numpy()
    got = pc.sincos_2d_encoding(h, w, d, base=base, layout="timm")
    np.testing.assert_allclose(got, ref, atol=1e-6)  # timm: float32 bands
    if h > 1 or w > 1:  # the layouts differ, as documented
        assert not np.allclose(pc.sincos_2d_encoding(h, w, d, base=base),
                               ref, atol=1e-3)


# ------------------------------------------------------- axial (rope-vit)
# naver-ai/rope-vit, deit/models_v2_rope.py at commit
# ce85c2e56c5ff3aadc10e1a849872081f7b86293: torch.angle of
# compute_axial_cis(dim=8, end_x=3, end_y=2, theta=100.0), run with
# torch 2 (float32, printed to 8 digits). init_t_xy(3, 2) gives
# t_x = [0 1 2 0 1 2] (t % end_x) and t_y = [0 0 0 1 1 1].
ROPE_VIT_AXIAL = np.array([[0.0, 0.0, 0.0, 0.0],
                           [1.0, 0.1, 0.0, 0.0],
                           [2.0, 0.19999999, 0.0, 0.0],
                           [0.0, 0.0, 1.0, 0.1],
                           [1.0, 0.1, 1.0, 0.1],
                           [2.0, 0.19999999, 1.0, 0.1]])


def test_axial_matches_rope_vit():
    got = pc.rope_axial_angles(_grid(2, 3), 8)  # 2 rows, 3 columns
    np.testing.assert_allclose(got, ROPE_VIT_AXIAL, atol=1e-7)


# ------------------------------------------------------- mixed (rope-vit)
# Same file and commit: torch.manual_seed(0); f = init_random_2d_freqs(
# dim=8, num_heads=2, theta=10.0), shape (2 = x/y, heads, d/2), printed.
ROPE_VIT_MIXED_FREQS = np.array(
    [[[-0.99972343, -0.3161403, -0.02351829, -0.00743714],
      [0.11424103, 0.03612619, 0.993453, 0.31415743]],
     [[0.02351821, 0.00743711, -0.99972343, -0.3161403],
      [-0.9934531, -0.31415746, 0.1142412, 0.03612624]]])
# ... and torch.angle(compute_mixed_cis(f.reshape(2, 1, -1), *init_t_xy(3,
# 2), num_heads=2))[0], shape (heads, N, d/2).
ROPE_VIT_MIXED_ANGLES = np.array(
    [[[0.0, 0.0, 0.0, 0.0],
      [-0.99972343, -0.3161403, -0.02351829, -0.00743714],
      [-1.9994469, -0.6322806, -0.04703658, -0.01487427],
      [0.02351821, 0.00743711, -0.99972343, -0.3161403],
      [-0.9762052, -0.30870318, -1.0232418, -0.32357743],
      [-1.9759287, -0.6248435, -1.04676, -0.33101457]],
     [[0.0, 0.0, 0.0, 0.0],
      [0.11424104, 0.03612619, 0.993453, 0.31415743],
      [0.22848208, 0.07225237, 1.986906, 0.62831485],
      [-0.9934531, -0.31415746, 0.1142412, 0.03612624],
      [-0.879212, -0.2780313, 1.1076943, 0.35028365],
      [-0.764971, -0.24190511, 2.1011472, 0.6644411]]])


def _to_ours(f):
    """rope-vit's / timm's (2 = x/y, heads, d/2) as (heads, d/2, 2)."""
    return np.moveaxis(np.asarray(f, dtype=np.float64), 0, -1)


def test_mixed_angles_match_rope_vit():
    got = pc.rope_mixed_angles(_grid(2, 3), _to_ours(ROPE_VIT_MIXED_FREQS))
    np.testing.assert_allclose(got, ROPE_VIT_MIXED_ANGLES, atol=1e-6)


def _structure(f):
    """Magnitudes and directions of (heads, d/2, 2) frequencies."""
    mag = np.linalg.norm(f, axis=-1)
    ang = np.arctan2(f[..., 1], f[..., 0])
    return mag, ang


def _check_mixed_structure(f, head_dim, base):
    q = head_dim // 4
    mag, ang = _structure(f)
    np.testing.assert_allclose(
        mag, np.broadcast_to(np.tile(base ** (-4.0 * np.arange(q) / head_dim),
                                     2), mag.shape), rtol=1e-6)
    # one direction per head for the first quarter of slots, and that
    # direction turned by +90 degrees for the second
    turn = np.angle(np.exp(1j * (ang[:, q:] - ang[:, :q])))
    np.testing.assert_allclose(turn, np.pi / 2, atol=1e-5)
    np.testing.assert_allclose(np.angle(np.exp(1j * (ang[:, :q] - ang[:, :1]))),
                               0.0, atol=1e-5)
    return ang[:, 0]


def test_mixed_frequencies_have_rope_vit_structure():
    for f in (_to_ours(ROPE_VIT_MIXED_FREQS),
              pc.rope_mixed_frequencies(8, 2, rng=0)):
        _check_mixed_structure(f, 8, 10.0)


def test_mixed_frequencies_match_timm_in_distribution():
    heads, d = 64, 32
    torch.manual_seed(0)
    ref = pos_embed_sincos.init_random_2d_freqs(d, 4, heads, temperature=10.0,
                                                dtype=torch.float64)
    ours = pc.rope_mixed_frequencies(d, 4 * heads, rng=0)
    phase = {}
    for name, f in (("timm", _to_ours(ref.reshape(2, 4 * heads, -1).numpy())),
                    ("ours", ours)):
        phase[name] = np.mod(_check_mixed_structure(f, d, 10.0), 2 * np.pi)
    # both draw the head's direction uniformly on [0, 2 pi): compare the
    # two samples of 256 directions (Kolmogorov-Smirnov distance < 0.15;
    # a direction fixed to [0, pi) would give 0.5)
    a, b = np.sort(phase["timm"]), np.sort(phase["ours"])
    grid = np.linspace(0, 2 * np.pi, 201)
    ks = np.max(np.abs(np.searchsorted(a, grid) - np.searchsorted(b, grid)))
    assert ks / a.size < 0.15
    for p in phase.values():  # and each looks uniform
        assert abs(p.mean() - np.pi) < 0.4


@pytest.mark.parametrize("h, w", [(2, 3), (4, 4), (3, 5)])
def test_mixed_angles_match_timm(h, w):
    d, heads = 16, 3
    f = pc.rope_mixed_frequencies(d, heads, rng=1)
    t_x, t_y = pos_embed_sincos.get_mixed_grid([h, w], grid_indexing="xy",
                                               dtype=torch.float64)
    freqs = torch.from_numpy(np.moveaxis(f, -1, 0)).float()  # (2, heads, d/2)
    emb = pos_embed_sincos.get_mixed_freqs(freqs, t_x, t_y,
                                           dtype=torch.float64).numpy()
    sin, cos = emb[..., :d], emb[..., d:]  # interleaved: f0 f0 f1 f1 ...
    got = pc.rope_mixed_angles(_grid(h, w), f)
    np.testing.assert_allclose(np.sin(got), sin[..., 0::2], atol=1e-5)
    np.testing.assert_allclose(np.cos(got), cos[..., 1::2], atol=1e-5)


# ---------------------------------------------------------------- DINOv3
# facebookresearch/dinov3, dinov3/layers/rope_position_encoding.py at
# commit 6876159a11b4df116f30f667f8c9888617df0751: RopePositionEmbedding(
# embed_dim=16, num_heads=2, base=100.0, normalize_coords=...,
# dtype=torch.float64)(H=2, W=3) gives sin, cos (HW, 8); below
# atan2(sin, cos) of token 5 (row 1, column 2), periods = [1, 10].
DINOV3_ANGLES_TOKEN5 = {
    "separate": [3.14159265, 0.31415927, -2.0943951, 0.41887902],
    "max": [0.0, 0.0, -2.0943951, 0.41887902],
    "min": [3.14159265, 0.31415927, 3.14159265, 0.9424778],
}


@pytest.mark.parametrize("normalize", sorted(DINOV3_ANGLES_TOKEN5))
def test_dinov3_matches_its_repository(normalize):
    c = pc.normalized_patch_coordinates(2, 3, normalize=normalize)
    angles = pc.dinov3_rope_angles(c, 8)
    want = np.tile(DINOV3_ANGLES_TOKEN5[normalize], 2)  # halves: tile(2)
    got = np.tile(angles[5], 2)
    np.testing.assert_allclose(np.angle(np.exp(1j * (got - want))), 0.0,
                               atol=1e-7)


@pytest.mark.parametrize("h, w", ROWS_COLS)
@pytest.mark.parametrize("normalize", ["separate", "max", "min"])
def test_normalized_coordinates_match_timm(h, w, normalize):
    ref = pos_embed_sincos.make_coords_dinov3(
        h, w, normalize_coords=normalize, dtype=torch.float64).numpy()
    got = pc.normalized_patch_coordinates(h, w, normalize=normalize)
    np.testing.assert_allclose(got, ref, atol=1e-7)


def _dinov3_timm(d, base, normalize, h, w, **aug):
    rope = pos_embed_sincos.RotaryEmbeddingDinoV3(
        d, temperature=base, normalize_coords=normalize, **aug)
    emb = rope.get_embed([h, w]).double().numpy()
    return emb[:, :d], emb[:, d:]  # sin, cos, each (HW, d), half layout


@pytest.mark.parametrize("h, w", [(2, 3), (6, 4), (1, 5)])
@pytest.mark.parametrize("normalize", ["separate", "max", "min"])
@pytest.mark.parametrize("d, base", [(8, 100.0), (64, 100.0), (16, 10.0)])
def test_dinov3_rotary_matches_timm(h, w, normalize, d, base):
    sin, cos = _dinov3_timm(d, base, normalize, h, w)
    a = pc.dinov3_rope_angles(
        pc.normalized_patch_coordinates(h, w, normalize=normalize), d,
        base=base)
    np.testing.assert_allclose(np.tile(np.sin(a), 2), sin, atol=2e-6)
    np.testing.assert_allclose(np.tile(np.cos(a), 2), cos, atol=2e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dinov3_augmentations_match_timm(seed):
    """timm's RotaryEmbeddingDinoV3 in training, and the values it drew
    (replayed from the same torch seed in DINOv3's order: shift, jitter,
    rescale), put through augment_coordinates."""
    h, w, d = 3, 4, 16
    aug = {"shift_coords": 0.3, "jitter_coords": 1.5, "rescale_coords": 2.0}
    rope = pos_embed_sincos.RotaryEmbeddingDinoV3(d, temperature=100.0,
                                                  **aug)
    rope.train()
    torch.manual_seed(seed)
    emb = rope.get_embed([h, w]).double().numpy()
    torch.manual_seed(seed)
    f32 = {"dtype": torch.float32}
    shift = torch.empty(2, **f32).uniform_(-0.3, 0.3).double().numpy()
    lj, lr = np.log(1.5), np.log(2.0)
    jitter = torch.empty(2, **f32).uniform_(-lj, lj).exp().double().numpy()
    scale = torch.empty(1, **f32).uniform_(-lr, lr).exp().item()
    c = pc.augment_coordinates(pc.normalized_patch_coordinates(h, w),
                               shift=shift, jitter=jitter, rescale=scale)
    a = pc.dinov3_rope_angles(c, d)
    np.testing.assert_allclose(np.tile(np.sin(a), 2), emb[:, :d], atol=1e-5)
    # the order matters: scaling before shifting gives other angles
    wrong = pc.normalized_patch_coordinates(h, w) * jitter * scale + shift
    assert not np.allclose(np.sin(pc.dinov3_rope_angles(wrong, d)),
                           np.sin(a), atol=1e-3)


def test_sampled_augmentation_has_dinov3_ranges():
    rng = np.random.default_rng(0)
    draws = [pc.sample_coordinate_augmentation(rng, shift=0.3, jitter=1.5,
                                               rescale=2.0)
             for _ in range(2000)]
    shift = np.array([d[0] for d in draws])
    jitter = np.log(np.array([d[1] for d in draws]))
    scale = np.log(np.array([d[2] for d in draws]))
    assert shift.min() >= -0.3 and shift.max() <= 0.3
    assert abs(shift.std() - 0.3 / np.sqrt(3)) < 0.01  # uniform
    assert np.abs(jitter).max() <= np.log(1.5)
    assert abs(jitter.std() - np.log(1.5) / np.sqrt(3)) < 0.01  # log-uniform
    assert abs(scale.std() - np.log(2.0) / np.sqrt(3)) < 0.02
    # the two axes are drawn independently
    assert abs(np.corrcoef(jitter[:, 0], jitter[:, 1])[0, 1]) < 0.1


# ------------------------------------------------------------------ M-RoPE
# transformers 5.24.0's own get_rope_index and multimodal rotary
# embeddings, on tiny random models (no weights, no hub).

import transformers  # noqa: E402
from transformers import (  # noqa: E402
    Qwen2_5_VLConfig,
    Qwen2VLConfig,
    Qwen3VLConfig,
)
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (  # noqa: E402
    Qwen2_5_VLModel,
)
from transformers.models.qwen2_vl.modeling_qwen2_vl import (  # noqa: E402
    Qwen2VLModel,
    Qwen2VLRotaryEmbedding,
)
from transformers.models.qwen3_vl.modeling_qwen3_vl import (  # noqa: E402
    Qwen3VLModel,
    Qwen3VLTextConfig,
    Qwen3VLTextRotaryEmbedding,
)


def test_transformers_is_the_pinned_release():
    assert transformers.__version__ == "5.24.0"


def _text_config(section, theta, interleaved=False, head_dim=16):
    rope = {"rope_type": "default", "rope_theta": theta,
            "mrope_section": list(section)}
    if interleaved:
        rope["mrope_interleaved"] = True
    return dict(hidden_size=2 * head_dim, intermediate_size=32,
                num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, head_dim=head_dim, vocab_size=64,
                bos_token_id=0, eos_token_id=1, pad_token_id=2,
                rope_parameters=rope)


@pytest.fixture(scope="module")
def qwen_models():
    torch.manual_seed(0)
    vision = dict(depth=1, num_heads=2, spatial_merge_size=2, patch_size=2)
    q2 = Qwen2VLModel(Qwen2VLConfig(
        text_config=_text_config([2, 3, 3], 1e6),
        vision_config=dict(vision, embed_dim=16, hidden_size=32,
                           mlp_ratio=2)))
    q25 = Qwen2_5_VLModel(Qwen2_5_VLConfig(
        text_config=_text_config([2, 3, 3], 1e6),
        vision_config=dict(vision, hidden_size=16, intermediate_size=32,
                           out_hidden_size=32, tokens_per_second=25,
                           fullatt_block_indexes=[0], window_size=8)))
    q3 = Qwen3VLModel(Qwen3VLConfig(
        text_config=_text_config([4, 2, 2], 5e5, interleaved=True),
        vision_config=dict(vision, hidden_size=16, intermediate_size=32,
                           out_hidden_size=32, deepstack_visual_indexes=[],
                           num_position_embeddings=16)))
    return {"qwen2-vl": q2, "qwen2.5-vl": q25, "qwen3-vl": q3}


SECONDS = [0.25, 0.5, 1.0, 1.5, 2.0]  # exact in float32: no rounding ties


def _random_prompt(rng, variant):
    """Our segments, and the same prompt as transformers takes it."""
    segments, types, images, videos, seconds = [], [], [], [], []
    for _ in range(rng.integers(1, 7)):
        kind = rng.choice(["text", "image", "video"], p=[0.4, 0.3, 0.3])
        if kind == "text":
            n = int(rng.integers(1, 6))
            segments.append(n)
            types += [0] * n
            continue
        # a vision block sits between <|vision_start|> and <|vision_end|>,
        # text tokens (transformers groups token types, so two blocks with
        # no text between would read as one)
        segments.append(1)
        types.append(0)
        # (images have t = 1 in Qwen's processors; t = 2 checks that only
        # videos are put on the clock)
        t = (int(rng.integers(1, 3)) if kind == "image"
             else int(rng.integers(1, 6)))
        h, w = (2 * int(v) for v in rng.integers(1, 5, size=2))
        if kind == "image":
            segments.append(("image", (t, h, w)))
            images.append((t, h, w))
            types += [1] * (t * h * w // 4)
        elif variant == "qwen3-vl":
            # Qwen3-VL's processor writes "<k seconds>" before each frame
            # group: text between the groups of one video
            videos.append((t, h, w))
            for _ in range(t):
                n = int(rng.integers(1, 4))
                segments += [n, ("video", (1, h, w))]
                types += [0] * n + [2] * (h * w // 4)
        else:
            s = float(rng.choice(SECONDS))
            segments.append(("video", (t, h, w), s))
            videos.append((t, h, w))
            seconds.append(s)
            types += [2] * (t * h * w // 4)
        segments.append(1)
        types.append(0)
    return segments, types, images, videos, seconds


def _hf_ids(model, variant, types, images, videos, seconds):
    kw = {"input_ids": torch.zeros(1, len(types), dtype=torch.long),
          "mm_token_type_ids": torch.tensor([types], dtype=torch.int32),
          "image_grid_thw": torch.tensor(images) if images else None,
          "video_grid_thw": torch.tensor(videos) if videos else None}
    if variant == "qwen2.5-vl" and seconds:
        kw["second_per_grid_ts"] = torch.tensor(seconds)
    ids, deltas = model.get_rope_index(**kw)
    return ids[:, 0].numpy(), int(deltas[0, 0])


@pytest.mark.parametrize("variant", ["qwen2-vl", "qwen2.5-vl", "qwen3-vl"])
def test_mrope_ids_match_get_rope_index(qwen_models, variant):
    rng = np.random.default_rng(["qwen2-vl", "qwen2.5-vl",
                                 "qwen3-vl"].index(variant))
    differ = 0
    for _ in range(60):
        segments, types, images, videos, seconds = _random_prompt(rng,
                                                                  variant)
        want, delta = _hf_ids(qwen_models[variant], variant, types, images,
                              videos, seconds)
        got = pc.mrope_position_ids(segments, variant=variant,
                                    tokens_per_second=25,
                                    next_text="spatial")
        np.testing.assert_array_equal(got, want)
        assert got.max() + 1 - got.shape[1] == delta  # rope_deltas
        largest = pc.mrope_position_ids(segments, variant=variant,
                                        tokens_per_second=25)
        # the two rules agree unless a block spans more frame groups
        # (or Qwen2.5-VL time ids) than merged rows and columns: with no
        # block of t > 1 they agree
        if all(g[1][0] == 1 for g in segments if not isinstance(g, int)):
            np.testing.assert_array_equal(largest, want)
        differ += not np.array_equal(largest, want)
    if variant != "qwen3-vl":
        assert differ > 0  # the random videos do reach the difference


def test_mrope_largest_rule_matches_qwen_release_code():
    # Qwen's get_rope_index as released with Qwen2-VL / Qwen2.5-VL
    # (transformers 4.x: st_idx = llm_pos_ids_list[-1].max() + 1), worked
    # by hand. Qwen2-VL, 2 text, a video of 4 frame groups of 1 x 1
    # merged tokens, 1 text: time 2..5, text at 6 (transformers 5: 3).
    ids = pc.mrope_position_ids([2, ("video", (4, 2, 2)), 1])
    np.testing.assert_array_equal(ids, [[0, 1, 2, 3, 4, 5, 6],
                                        [0, 1, 2, 2, 2, 2, 6],
                                        [0, 1, 2, 2, 2, 2, 6]])
    spatial = pc.mrope_position_ids([2, ("video", (4, 2, 2)), 1],
                                    next_text="spatial")
    assert spatial[0, -1] == 3
    # Qwen2.5-VL's own example (huggingface/transformers PR 35569, by the
    # Qwen team): 3 groups of 2 x 2, 25 ids per second, fps 1 and 2 frames
    # a group (2 seconds), then text from 101
    ids = pc.mrope_position_ids([("video", (3, 4, 4), 2.0), 5],
                                variant="qwen2.5-vl", tokens_per_second=25)
    np.testing.assert_array_equal(
        ids[0], [0] * 4 + [50] * 4 + [100] * 4 + [101, 102, 103, 104, 105])
    np.testing.assert_array_equal(ids[1, :12], [0, 0, 1, 1] * 3)
    np.testing.assert_array_equal(ids[2, :12], [0, 1, 0, 1] * 3)


@pytest.mark.parametrize("section, layout, cls, interleaved", [
    ([2, 3, 3], "chunked", Qwen2VLRotaryEmbedding, False),
    ([16, 24, 24], "chunked", Qwen2VLRotaryEmbedding, False),
    ([4, 2, 2], "interleaved", Qwen3VLTextRotaryEmbedding, True),
    ([24, 20, 20], "interleaved", Qwen3VLTextRotaryEmbedding, True),
])
def test_mrope_angles_match_the_rotary_embeddings(section, layout, cls,
                                                  interleaved):
    head_dim = 2 * sum(section)
    theta = 1e6 if layout == "chunked" else 5e5
    cfg = _text_config(section, theta, interleaved, head_dim)
    config = (Qwen2VLConfig(text_config=cfg).text_config
              if cls is Qwen2VLRotaryEmbedding else Qwen3VLTextConfig(**cfg))
    rope = cls(config)
    rng = np.random.default_rng(sum(section))
    ids = rng.integers(0, 40, size=(3, 50))
    cos, sin = rope(torch.zeros(1, dtype=torch.float32),
                    torch.from_numpy(ids)[:, None, :])
    angles = pc.mrope_angles(ids, head_dim, section, base=theta,
                             layout=layout)
    # half layout: the table twice; float32 angles of up to 40 radians
    tol = 1e-6 * 40
    np.testing.assert_allclose(np.tile(np.cos(angles), 2), cos[0].numpy(),
                               atol=tol)
    np.testing.assert_allclose(np.tile(np.sin(angles), 2), sin[0].numpy(),
                               atol=tol)
    other = "interleaved" if layout == "chunked" else "chunked"
    assert not np.allclose(np.cos(pc.mrope_angles(
        ids, head_dim, section, base=theta, layout=other)),
        cos[0].numpy()[:, :head_dim // 2], atol=1e-3)


def test_mrope_pair_axes_match_recomposition():
    # transformers' recomposition_frequencies applied to a table whose
    # entry on axis a is a: it returns the axis of each pair
    for section, cls, interleaved in [([16, 24, 24], Qwen2VLRotaryEmbedding,
                                       False),
                                      ([24, 20, 20],
                                       Qwen3VLTextRotaryEmbedding, True),
                                      ([2, 3, 3], Qwen3VLTextRotaryEmbedding,
                                       True)]:
        cfg = _text_config(section, 1e4, interleaved, 2 * sum(section))
        config = (Qwen2VLConfig(text_config=cfg).text_config
                  if cls is Qwen2VLRotaryEmbedding
                  else Qwen3VLTextConfig(**cfg))
        rope = cls(config)
        table = torch.arange(3.0)[:, None, None, None].expand(
            3, 1, 1, sum(section)).clone()
        axes = rope.recomposition_frequencies(table)[0, 0, :sum(section)]
        layout = "interleaved" if interleaved else "chunked"
        np.testing.assert_array_equal(pc.mrope_pair_axes(section,
                                                         layout=layout),
                                      axes.numpy().astype(int))
