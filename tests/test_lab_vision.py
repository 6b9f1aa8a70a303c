"""posenc_lab.vision: the tables against posenc_core, the resizing against
timm, the data, the quick preset (runs, deterministic, the committed file).

timm is imported through tests/timm_modules.py (its position-embedding
module as shipped, without torchvision); a missing timm fails this file.
"""

import copy
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from timm_modules import pos_embed

import posenc_core as pc
from posenc_lab import vision as v
from posenc_lab.model import Block

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "results" / "ch09" / "quick" / "results.json"
ACC_TOL = 3 / 64  # three of the 64 test images
LOSS_TOL = 5e-3


def _model(method, **kw):
    torch.manual_seed(0)
    kw = {"image_size": 8, "patch_size": 2, "d_model": 32, "n_layers": 2,
          "n_heads": 2, **kw}
    return v.VisionTransformer(method, rng=np.random.default_rng(5), **kw)


# ---- every table comes from posenc_core


@pytest.mark.parametrize("g", [4, 7])
def test_sincos_table_is_posenc_core(g):
    table = _model("sincos").position_table(g)[0].numpy()
    assert table.shape == (1 + g * g, 32)
    np.testing.assert_array_equal(table[0], 0.0)  # class token: zeros (MAE)
    np.testing.assert_allclose(table[1:], pc.sincos_2d_encoding(g, g, 32),
                               atol=1e-6)


@pytest.mark.parametrize("g", [4, 9])
def test_axial_angles_are_posenc_core(g):
    model = _model("rope_axial")
    angles = model.rope_angles(g).numpy()
    coords = np.indices((g, g)).reshape(2, -1).T
    np.testing.assert_array_equal(angles[0], 0.0)  # class token unrotated
    np.testing.assert_allclose(
        angles[1:], pc.rope_axial_angles(coords, 16, base=100.0), rtol=1e-6)
    np.testing.assert_array_equal(v.grid_coordinates(g, g), coords)


def test_mixed_frequencies_and_angles_are_posenc_core():
    model = _model("rope_mixed")
    rng = np.random.default_rng(5)  # the model's generator, from the start
    for layer in range(2):
        expected = pc.rope_mixed_frequencies(16, 2, base=10.0, rng=rng)
        np.testing.assert_allclose(model.freqs[layer].detach().numpy(),
                                   expected, rtol=1e-6)
    with torch.no_grad():  # any (learned) frequencies, not only the first
        model.freqs.normal_()
    g = 5
    coords = v.grid_coordinates(g, g)
    for layer in range(2):
        angles = model.rope_angles(g, layer).detach().numpy()
        assert angles.shape == (2, 1 + g * g, 8)
        np.testing.assert_array_equal(angles[:, 0], 0.0)
        np.testing.assert_allclose(
            angles[:, 1:], pc.rope_mixed_angles(
                coords, model.freqs[layer].detach().numpy()), atol=1e-5)
    assert model.rope_angles(g, 0).requires_grad  # the frequencies learn


@pytest.mark.parametrize("g", [4, 6])
def test_dinov3_angles_are_posenc_core(g):
    model = _model("rope_dinov3").eval()
    expected = pc.dinov3_rope_angles(pc.normalized_patch_coordinates(g, g),
                                     16, base=100.0)
    angles = model.rope_angles(g).numpy()
    np.testing.assert_array_equal(angles[0], 0.0)
    np.testing.assert_allclose(angles[1:], expected, rtol=1e-6, atol=1e-7)


def test_dinov3_rescale_draws_as_posenc_core_in_training_only():
    model = _model("rope_dinov3_rescale")
    rng = copy.deepcopy(model.rng)
    coords = pc.normalized_patch_coordinates(4, 4)
    model.train()
    for _ in range(3):  # a new draw each call, as posenc_core draws it
        shift, jitter, eta = pc.sample_coordinate_augmentation(rng,
                                                               rescale=2.0)
        assert 0.5 <= eta <= 2.0
        expected = pc.dinov3_rope_angles(pc.augment_coordinates(
            coords, shift=shift, jitter=jitter, rescale=eta), 16)
        np.testing.assert_allclose(model.rope_angles(4).numpy()[1:],
                                   expected, rtol=1e-6, atol=1e-7)
    model.eval()  # no augmentation at evaluation: rope_dinov3's angles
    np.testing.assert_allclose(
        model.rope_angles(4).numpy()[1:], pc.dinov3_rope_angles(coords, 16),
        rtol=1e-6, atol=1e-7)


def test_rotate_pairs_is_apply_rope_angles():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 2, 10, 8))
    angles = rng.uniform(-7, 7, size=(2, 10, 4))  # one table per head
    t = torch.as_tensor(angles)
    got = v.rotate_pairs(torch.as_tensor(x), t.cos(), t.sin()).numpy()
    np.testing.assert_allclose(got, pc.apply_rope_angles(x, angles),
                               atol=1e-12)


def test_learned_clamp_reuses_the_edge_rows():
    model = _model("learned_clamp")
    table = model.position_table(6)[0]
    pos = model.pos_embed[0]
    assert torch.equal(table[0], pos[0])  # the class row
    for r, c in [(0, 0), (2, 3), (3, 3), (5, 1), (4, 5), (5, 5)]:
        row = 1 + min(r, 3) * 4 + min(c, 3)
        assert torch.equal(table[1 + r * 6 + c], pos[row]), (r, c)
    assert torch.equal(model.position_table(4), model.pos_embed)


def test_learned_resize_is_resample_abs_pos_embed():
    model = _model("learned_resize")
    assert torch.equal(model.position_table(4), model.pos_embed)
    np.testing.assert_array_equal(
        model.position_table(7).detach().numpy(),
        pos_embed.resample_abs_pos_embed(model.pos_embed, [7, 7],
                                         [4, 4]).detach().numpy())


# ---- resizing a learned grid: timm's resample_abs_pos_embed


@pytest.mark.parametrize("prefix", [0, 1, 2])
@pytest.mark.parametrize("old,new", [((4, 4), (7, 7)), ((6, 6), (3, 3)),
                                     ((3, 5), (6, 4)), ((4, 4), (4, 9))])
@pytest.mark.parametrize("interpolation,antialias", [
    ("bicubic", True), ("bicubic", False), ("bilinear", True),
    ("nearest", False)])
def test_resample_is_timms(prefix, old, new, interpolation, antialias):
    torch.manual_seed(1)
    posemb = torch.randn(1, prefix + old[0] * old[1], 12)
    ours = v.resample_abs_pos_embed(posemb, new, old, num_prefix_tokens=prefix,
                                    interpolation=interpolation,
                                    antialias=antialias)
    theirs = pos_embed.resample_abs_pos_embed(
        posemb, list(new), list(old), num_prefix_tokens=prefix,
        interpolation=interpolation, antialias=antialias)
    assert ours.shape == (1, prefix + new[0] * new[1], 12)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    torch.testing.assert_close(ours[:, :prefix], posemb[:, :prefix])


def test_resample_defaults_and_dtype_are_timms():
    posemb = torch.randn(1, 1 + 25, 8, dtype=torch.float64)
    ours = v.resample_abs_pos_embed(posemb, (8, 8))  # square old grid
    theirs = pos_embed.resample_abs_pos_embed(posemb, [8, 8])
    assert ours.dtype == theirs.dtype == torch.float64
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    assert v.resample_abs_pos_embed(posemb, (5, 5)) is posemb
    with pytest.raises(ValueError, match="old_size"):
        v.resample_abs_pos_embed(posemb, (8, 8), (4, 5))


# ---- the blocks without the causal mask


def test_blocks_without_causal_mask_see_the_future():
    torch.manual_seed(0)
    x = torch.randn(1, 6, 16)
    y = x.clone()
    y[0, -1] = torch.randn(16) * 3  # change the last token only
    for causal in (True, False):
        torch.manual_seed(0)
        block = Block(16, 2, causal=causal)
        first = (block(x) - block(y))[0, 0].abs().max().item()
        assert first > 1e-3 if not causal else first < 1e-5, (causal, first)
    torch.manual_seed(0)
    default = Block(16, 2)
    torch.manual_seed(0)
    assert torch.equal(default(x), Block(16, 2, causal=True)(x))


def test_every_method_runs_on_larger_grids_and_nope_is_a_set():
    images = torch.rand(3, 12, 12)
    for method in v.METHODS:
        model = _model(method).eval()
        with torch.no_grad():
            assert model(images).shape == (3, 10), method
            assert model(images[:, :8, :8]).shape == (3, 10)
    # without positions, shuffling whole patches changes nothing
    model = _model("none").eval()
    patches = images.reshape(3, 6, 2, 6, 2)
    shuffled = patches.flip(1).flip(3).reshape(3, 12, 12)
    with torch.no_grad():
        torch.testing.assert_close(model(images), model(shuffled))
        model = _model("rope_axial").eval()
        assert not torch.allclose(model(images), model(shuffled))


# ---- data


def test_digits_and_split():
    images, labels = v.load_digits()
    assert images.shape == (1797, 8, 8) and labels.shape == (1797,)
    assert images.min() == 0.0 and images.max() == 1.0
    assert sorted(set(labels.tolist())) == list(range(10))
    (tx, ty), (sx, sy) = v.split_digits(images, labels)
    assert len(tx) == 1297 and len(sx) == 500
    assert not set(map(bytes, tx)) & set(map(bytes, sx))  # disjoint images


def test_canvas_and_zoom_images():
    digits = v.load_digits()[0][:5]
    placed = v.place_digits(digits, 20, [[0, 0], [12, 12], [3, 7], [0, 12],
                                         [5, 5]])
    np.testing.assert_array_equal(placed[2, 3:11, 7:15], digits[2])
    assert placed[2].sum() == pytest.approx(digits[2].sum())
    with pytest.raises(ValueError, match="offsets"):
        v.place_digits(digits[:1], 12, [[0, 5]])
    canvas = v.canvas_images(digits, 24, np.random.default_rng(0))
    np.testing.assert_allclose(canvas.sum((1, 2)), digits.sum((1, 2)),
                               rtol=1e-6)  # the same digit, unscaled
    base = v.canvas_images(digits, 12, np.random.default_rng(0))
    np.testing.assert_array_equal(v.zoom_images(base, 12), base)
    zoomed = v.zoom_images(base, 24)
    assert zoomed.shape == (5, 24, 24)  # bilinear x2: 4 times the ink
    np.testing.assert_allclose(zoomed.sum((1, 2)), 4 * base.sum((1, 2)),
                               rtol=0.05)
    cfg = v.PRESETS["full"]
    a = v.test_images(cfg, digits, "canvas", 24)
    np.testing.assert_array_equal(a, v.test_images(cfg, digits, "canvas", 24))


def test_patchify_is_row_major():
    images = torch.arange(16.0).reshape(1, 4, 4)
    patches = v.patchify(images, 2)
    np.testing.assert_array_equal(patches[0, 1].numpy(), [2, 3, 6, 7])
    np.testing.assert_array_equal(patches[0, 2].numpy(), [8, 9, 12, 13])


# ---- bad input


@pytest.mark.parametrize("kw,name", [
    ({"method": "rope"}, "method"),
    ({"patch_size": 5}, "image_size"),
    ({"n_heads": 16}, "n_heads"),  # d_k = 2: not a multiple of 4
    ({"d_model": 0}, "d_model"),
])
def test_model_errors_name_the_argument(kw, name):
    args = {"method": "rope_axial", "image_size": 12, "patch_size": 2,
            "d_model": 32, "n_heads": 2}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        v.VisionTransformer(args.pop("method"), **args)


@pytest.mark.parametrize("change,name", [
    ({"methods": ("rope",)}, "methods"),
    ({"steps": 0}, "steps"),
    ({"eval_sizes": (8,)}, "eval_sizes"),
    ({"eval_sizes": (25,)}, "eval_sizes"),
    ({"eval_examples": 501}, "eval_examples"),
    ({"seeds": (0, 0)}, "seeds"),
    ({"device": "nonsense"}, "device"),
    ({"dinov3_rescale": 0.5}, "dinov3_rescale"),
])
def test_config_errors_name_the_setting(change, name):
    with pytest.raises(ValueError, match=name):
        replace(v.PRESETS["quick"], **change).check()
    with pytest.raises(ValueError, match="preset"):
        v.config_from("slow")
    with pytest.raises(ValueError, match="unknown"):
        v.config_from("quick", epochs=3)


def test_images_must_be_square_and_divisible():
    model = _model("none")
    with pytest.raises(ValueError, match="images"):
        model(torch.zeros(1, 8, 9))


# ---- the quick preset: runs, deterministic, the committed numbers


@pytest.fixture(scope="module")
def stored():
    return json.loads(COMMITTED.read_text())


@pytest.fixture(scope="module")
def quick_runs():
    cfg = v.PRESETS["quick"]
    digits = v.split_digits(*v.load_digits())
    return {m: v.run_one(cfg, m, 0, digits) for m in v.METHODS}


def test_quick_preset_learns_and_evaluates_every_size(quick_runs):
    cfg = v.PRESETS["quick"]
    for method, run in quick_runs.items():
        first, last = run["train_loss"][0][1], run["train_loss"][-1][1]
        assert last < first, method
        for mode in v.MODES:
            assert list(run["eval"][mode]) == [str(s) for s in cfg.eval_sizes]
            for res in run["eval"][mode].values():
                assert 0 <= res["accuracy"] <= 1 and res["images"] == 64
        assert run["eval"]["zoom"]["12"] == run["eval"]["canvas"]["12"]
    # the learned table has a row per patch and the class token
    assert quick_runs["learned_resize"]["n_params"] \
        == quick_runs["none"]["n_params"] + 37 * 32


@pytest.mark.parametrize("method", ["rope_mixed", "rope_dinov3_rescale"])
def test_quick_runs_are_deterministic(quick_runs, method):
    again = v.run_one(v.PRESETS["quick"], method, 0)
    for key in ("train_loss", "eval", "n_params"):
        assert again[key] == quick_runs[method][key], key


def test_committed_quick_run_is_reproduced(stored, quick_runs):
    """The committed quick run (``python -m posenc_lab.vision --preset quick
    --out results/ch09/quick``), seed 0, again: exactly on the machine and
    torch that made it, else within tolerances."""
    assert stored["schema"] == v.SCHEMA
    assert v.config_from_json(stored["config"]) == v.PRESETS["quick"]
    assert len(stored["runs"]) == len(v.METHODS) * 3
    env = stored["environment"]
    here = v._ex.environment(v.PRESETS["quick"])
    same = all(env[k] == here[k] for k in ("cpu", "torch", "torch_threads"))
    for run in stored["runs"]:
        if run["seed"] != 0:
            continue
        ours = quick_runs[run["method"]]
        for mode in v.MODES:
            for size, res in run["eval"][mode].items():
                got = ours["eval"][mode][size]
                if same:
                    assert got == res, (run["method"], mode, size)
                else:
                    assert abs(got["accuracy"] - res["accuracy"]) <= ACC_TOL
                    assert abs(got["loss"] - res["loss"]) <= LOSS_TOL * 10


def test_committed_summary_is_summarize_of_its_runs(stored):
    assert stored["summary"] == v.summarize(stored["runs"])
    acc = stored["summary"]["canvas"]["rope_axial"]["24"]["accuracy"]
    assert acc["n"] == 3
    values = [r["eval"]["canvas"]["24"]["accuracy"] for r in stored["runs"]
              if r["method"] == "rope_axial"]
    assert acc["mean"] == pytest.approx(np.mean(values), abs=1e-5)
    assert acc["std"] == pytest.approx(np.std(values, ddof=1), abs=1e-5)


def test_command_writes_results_and_refuses_a_full_folder(tmp_path, capsys):
    out = tmp_path / "q"
    v.main(["--preset", "quick", "--methods", "none,rope_axial", "--seeds",
            "1", "--steps", "3", "--eval-sizes", "12,16", "--jobs", "1",
            "--out", str(out), "--no-progress"])
    results = json.loads((out / "results.json").read_text())
    assert results["schema"] == v.SCHEMA
    assert [r["method"] for r in results["runs"]] == ["none", "rope_axial"]
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "none-seed0.json", "rope_axial-seed0.json"]
    assert results["config"]["steps"] == 3
    assert results["environment"]["torch"] == torch.__version__
    assert math.isfinite(results["wall_time_s"])
    with pytest.raises(SystemExit):
        v.main(["--preset", "quick", "--out", str(out), "--no-progress"])
    assert "not empty" in capsys.readouterr().err


def test_load_results_finds_the_committed_files():
    assert v.load_results("quick")["schema"] == v.SCHEMA
    with pytest.raises(ValueError, match="name"):
        v.load_results("nowhere")


def test_collect_results_of_an_interrupted_run(tmp_path):
    out = tmp_path / "q"
    args = ["--preset", "quick", "--methods", "none,sincos", "--seeds", "2",
            "--steps", "2", "--eval-sizes", "12", "--jobs", "1",
            "--no-progress"]
    v.main(args + ["--out", str(out)])
    whole = json.loads((out / "results.json").read_text())
    assert whole["complete"] is True
    (out / "runs" / "sincos-seed1.json").unlink()
    v.main(args + ["--out", str(out), "--collect"])
    part = json.loads((out / "results.json").read_text())
    assert part["complete"] is False and part["missing"] == ["sincos-seed1"]
    assert part["runs"] == whole["runs"][:3]  # seed 0 of both, then none 1
    assert part["summary"] == v.summarize(whole["runs"][:3])
    with pytest.raises(ValueError, match="out"):
        v.collect_results(v.PRESETS["quick"], tmp_path / "empty")
