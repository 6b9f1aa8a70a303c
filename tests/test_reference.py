"""posenc_core against independent implementations used in the field.

Hugging Face transformers (with PyTorch) is the reference here: its XLM and
Marian sinusoidal tables, GPT-J and LLaMA rotary embeddings, T5 buckets,
BLOOM's ALiBi slopes and its RoPE scaling functions. These are required test
dependencies (requirements-test.txt): a missing package fails, never skips.

The T5 buckets are also scanned against the book's own posenc.js, run by
Node.js (which the book's build needs; without it those two tests skip).
"""

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama
from transformers.models.marian.modeling_marian import (
    MarianSinusoidalPositionalEmbedding,
)
from transformers.models.t5.modeling_t5 import T5Attention
from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings

import posenc_core as pc


def test_reference_versions_are_the_pinned_ones():
    # The comparisons below were written against these releases.
    assert transformers.__version__.startswith("5.")
    assert torch.__version__.startswith("2.")


@pytest.mark.parametrize("n, d", [(50, 16), (1000, 512), (7, 2)])
def test_sinusoidal_interleaved_matches_xlm(n, d):
    ref = create_sinusoidal_embeddings(n, d, torch.empty(n, d)).numpy()
    np.testing.assert_allclose(pc.sinusoidal_encoding(n, d), ref, atol=1e-6)


@pytest.mark.parametrize("n, d", [(50, 16), (1000, 512)])
def test_sinusoidal_concat_matches_marian(n, d):
    ref = MarianSinusoidalPositionalEmbedding(n, d).create_weight().numpy()
    got = pc.sinusoidal_encoding(n, d, layout="concat")
    np.testing.assert_allclose(got, ref, atol=1e-6)


def _angles(n, d, base=10000.0):
    pos = torch.arange(n, dtype=torch.float64)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    return pos[:, None] * base ** (-i / d)[None, :]


@pytest.mark.parametrize("n, d, base", [(9, 8, 10000.0), (64, 128, 500000.0)])
def test_rope_half_matches_llama(n, d, base):
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 1, 3, n, d))  # (batch, heads, n, d)
    emb = torch.cat([_angles(n, d, base)] * 2, dim=-1)[None]
    ref_q, ref_k = modeling_llama.apply_rotary_pos_emb(
        torch.tensor(q), torch.tensor(k), emb.cos(), emb.sin())
    for x, ref in ((q, ref_q), (k, ref_k)):
        got = pc.apply_rope(x, n, base=base, layout="half")
        np.testing.assert_allclose(got, ref.numpy(), atol=1e-12)


@pytest.mark.parametrize("n, d", [(9, 8), (64, 64)])
def test_rope_interleaved_matches_gptj(n, d):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, n, 4, d))  # GPT-J: (batch, n, heads, d)
    ang = _angles(n, d)[None].expand(2, n, d // 2)
    ref = modeling_gptj.apply_rotary_pos_emb(
        torch.tensor(x), ang.sin(), ang.cos()).numpy()
    got = pc.apply_rope(np.swapaxes(x, 1, 2), n)  # ours: (..., n, d)
    np.testing.assert_allclose(np.swapaxes(got, 1, 2), ref, atol=1e-12)


def test_gptj_table_is_our_concat_encoding():
    ref = modeling_gptj.create_sinusoidal_positions(100, 64).numpy()
    got = pc.sinusoidal_encoding(100, 64, layout="concat")
    np.testing.assert_allclose(got, ref, atol=1e-5)


# ------------------------------------------------------------ T5 buckets
# A broad scan: every num_buckets from 2 to 260 and some up to 4097, both
# directions, max_distance from just above the exact buckets up to 10**6;
# for each, every distance within 3 of a step of the exact formula below
# 60,000 (where a rounding difference can show), the exact buckets, 64
# random distances and far ones up to 2**53.

F32 = np.float32


def _t5_settings():
    out = []
    for bidirectional in (True, False):
        for num_buckets in [*range(2, 261), 320, 500, 512, 1000, 1024,
                            4097]:
            if num_buckets < (4 if bidirectional else 2):
                continue
            n = num_buckets // 2 if bidirectional else num_buckets
            e = n // 2
            spans = {*range(e + 1, e + 51), 20, 64, 100, 128, 256,
                     *np.geomspace(e + 51, 10**6, 14).astype(int).tolist()}
            out += [(bidirectional, num_buckets, md)
                    for md in sorted(spans) if md > e]
    return out


def _t5_positions(bidirectional, num_buckets, max_distance, reach=60000):
    n = num_buckets // 2 if bidirectional else num_buckets
    e = n // 2
    steps = e * (max_distance / e) ** (np.arange(1, n - e) / (n - e))
    steps = np.floor(steps[steps < reach]).astype(np.int64)
    rng = np.random.default_rng([num_buckets, max_distance])
    dist = np.unique(np.concatenate([
        (steps[:, None] + np.arange(-3, 4)).ravel(), np.arange(e + 3),
        rng.integers(0, reach, 64),
        [max_distance - 1, max_distance, max_distance + 1, 2 * max_distance,
         reach, 10**6, 2**31, 2**40, 2**53]]))
    dist = dist[dist >= 0]
    return np.concatenate([-dist, dist[dist > 0]]) if bidirectional else -dist


def _t5_formula(rel, bidirectional, num_buckets, max_distance, log):
    """transformers' arithmetic written out in numpy, ``log`` given."""
    n = num_buckets // 2 if bidirectional else num_buckets
    e = n // 2
    dist = np.abs(rel) if bidirectional else np.maximum(-rel, 0)
    x = np.maximum(dist, e).astype(F32) / F32(e)
    large = log(x) / F32(math.log(max_distance / e)) * F32(n - e)
    large = np.minimum(e + large.astype(np.int64), n - 1)
    side = np.where(rel > 0, n, 0) if bidirectional else 0
    return side + np.where(dist < e, dist, large), x


def _log_rounded(x):
    """The float64 logarithm rounded to float32 (glibc's, through math)."""
    return np.array([math.log(v) for v in x.tolist()], F32)


def test_t5_scan_covers_what_it_says():
    settings = _t5_settings()
    assert len(settings) > 34000
    assert {(True, 32, 128), (False, 32, 128), (True, 8, 20),
            (False, 72, 100), (True, 4097, 10**6), (False, 257, 129),
            (True, 260, 10**6)} <= set(settings)
    rel = _t5_positions(False, 32, 128)
    assert rel.min() == -(2**53) and set(range(-18, 1)) <= set(rel.tolist())
    total = sum(_t5_positions(*s).size for s in settings)
    assert total > 10_000_000


def test_t5_buckets_match_transformers_over_a_broad_scan():
    """Bit for bit, except where torch's float32 logarithm is not ours.

    transformers computes in float32 with torch's logarithm. We check that
    our transcription of its arithmetic, fed torch's logarithm, gives its
    buckets everywhere, and that posenc_core gives them wherever torch's
    float32 logarithm of the quotient is the float64 one rounded (ours).
    Where it is not (torch uses Intel MKL, which on some processors is one
    unit in the last place off for a few percent of inputs), a bucket can
    differ only at an exact or nearly exact boundary: counted and shown.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # many small calls: threads only cost here
    differ = []
    try:
        for bidirectional, num_buckets, max_distance in _t5_settings():
            rel = _t5_positions(bidirectional, num_buckets, max_distance)
            kw = dict(bidirectional=bidirectional, num_buckets=num_buckets,
                      max_distance=max_distance)
            ref = T5Attention._relative_position_bucket(
                torch.from_numpy(rel), **kw).numpy()
            got = pc.t5_relative_position_bucket(rel, **kw)
            via_torch, x = _t5_formula(
                rel, **kw, log=lambda v: torch.log(torch.from_numpy(v))
                .numpy())
            np.testing.assert_array_equal(via_torch, ref, err_msg=str(kw))
            same_log = (torch.log(torch.from_numpy(x)).numpy()
                        == np.log(x.astype(np.float64)).astype(F32))
            assert np.array_equal(got[same_log], ref[same_log]), kw
            for i in np.flatnonzero(got != ref):
                differ.append((rel[i], kw, got[i], ref[i]))
    finally:
        torch.set_num_threads(threads)
    # each difference is one bucket, at a quotient torch rounds otherwise
    assert all(abs(g - r) == 1 for _, _, g, r in differ), differ[:5]
    print(f"{len(differ)} buckets differ from transformers' on this machine")


def test_t5_exact_boundary_example():
    # 60/36 = (100/36)**(1/2): exactly on the boundary of bucket 54; float32
    # rounding puts it below, as in posenc.js. The formula, exactly:
    e, n, md = 36, 72, 100
    assert math.isclose(math.log(60 / e) / math.log(md / e) * (n - e), 18)
    kw = dict(bidirectional=False, num_buckets=72, max_distance=100)
    assert pc.t5_relative_position_bucket([-60], **kw).tolist() == [53]
    ref = T5Attention._relative_position_bucket(torch.tensor([-60]), **kw)
    assert ref.item() in (53, 54)  # 54 with torch's float32 log on AMD


def test_t5_logarithm_is_the_float64_one_rounded():
    """posenc_core's float32 logarithm against math.log, rounded."""
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.uniform(1, 2, 20000), rng.uniform(1, 1e4, 20000),
        np.exp(rng.uniform(0, 88, 20000))]).astype(F32)
    pinned = np.array(list(pc._T5_LOG_PINNED), np.uint32).view(F32)
    x = np.concatenate([x, pinned])
    np.testing.assert_array_equal(pc._t5_log32(x), _log_rounded(x))


NODE = shutil.which("node")
POSENC_JS = Path(__file__).resolve().parent.parent / "_assets/posenc/posenc.js"


def _node(script, *args):
    if NODE is None:
        pytest.skip("Node.js (needed to build the book) is not installed")
    done = subprocess.run([NODE, "-e", script, str(POSENC_JS), *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_t5_buckets_match_posenc_js_over_the_scan(tmp_path):
    """posenc.js's T5 buckets are posenc_core's over the whole scan."""
    settings = _t5_settings()
    rels = [_t5_positions(*s) for s in settings]
    head = np.array([[b, nb, md, len(r)] for (b, nb, md), r
                     in zip(settings, rels, strict=True)], np.float64)
    head.tofile(tmp_path / "head.bin")
    np.concatenate(rels).astype(np.float64).tofile(tmp_path / "rel.bin")
    _node("""
        const fs = require("fs");
        require(process.argv[1]);
        const t5 = globalThis.posenc.core.t5_relative_position_bucket;
        const dir = process.argv[2];
        const f64 = (name) => {
          const b = fs.readFileSync(dir + "/" + name);
          return new Float64Array(b.buffer, b.byteOffset, b.length / 8);
        };
        const head = f64("head.bin"), rel = f64("rel.bin");
        const out = new Float64Array(rel.length);
        let at = 0;
        for (let s = 0; s < head.length; s += 4) {
          const o = {bidirectional: head[s] === 1, num_buckets: head[s + 1],
                     max_distance: head[s + 2]};
          const r = Array.from(rel.subarray(at, at + head[s + 3]));
          out.set(t5(r, o), at);
          at += head[s + 3];
        }
        fs.writeFileSync(dir + "/out.bin", Buffer.from(out.buffer));
    """, str(tmp_path))
    got_js = np.fromfile(tmp_path / "out.bin", dtype=np.float64)
    at = 0
    for (bidirectional, nb, md), rel in zip(settings, rels, strict=True):
        ours = pc.t5_relative_position_bucket(
            rel, bidirectional=bidirectional, num_buckets=nb,
            max_distance=md)
        js = got_js[at:at + rel.size]
        at += rel.size
        assert np.array_equal(js, ours), (bidirectional, nb, md)
    assert at == got_js.size


def test_t5_pinned_logarithms_are_posenc_js_ones():
    """At the 12 float32 inputs where two float64 logarithms may round
    differently, V8's (posenc.js's) and posenc_core's agree."""
    x = np.array(list(pc._T5_LOG_PINNED), np.uint32).view(F32)
    out = _node("""
        const xs = JSON.parse(process.argv[2]);
        console.log(JSON.stringify(xs.map((x) => Math.fround(Math.log(x)))));
    """, json.dumps(x.astype(np.float64).tolist()))
    js = np.array(json.loads(out), np.float64)
    np.testing.assert_array_equal(js, pc._t5_log32(x).astype(np.float64))
    # and each pinned value is within one float32 unit of the true log
    for xi, yi in zip(x.tolist(), pc._t5_log32(x).tolist(), strict=True):
        assert abs(yi - math.log(xi)) <= np.spacing(F32(yi))


@pytest.mark.parametrize("n_heads", [1, 2, 3, 5, 6, 8, 12, 16, 20, 32, 40, 64])
def test_alibi_slopes_match_bloom(n_heads):
    ref = _get_alibi_slopes(n_heads, "cpu").numpy()
    np.testing.assert_allclose(pc.alibi_slopes(n_heads), ref, rtol=1e-6)


def _config(head_dim, base, params):
    return transformers.LlamaConfig(
        hidden_size=head_dim * 4, num_attention_heads=4, head_dim=head_dim,
        max_position_embeddings=131072,
        rope_parameters={"rope_theta": base, **params})


SCALINGS = [
    (128, 500000.0, {"rope_type": "llama3", "factor": 8.0,
                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192}),
    (64, 10000.0, {"rope_type": "llama3", "factor": 4.0,
                   "low_freq_factor": 2.0, "high_freq_factor": 8.0,
                   "original_max_position_embeddings": 2048}),
    (128, 10000.0, {"rope_type": "yarn", "factor": 16.0,
                    "original_max_position_embeddings": 4096,
                    "beta_fast": 32.0, "beta_slow": 1.0}),
    (64, 10000.0, {"rope_type": "yarn", "factor": 4.0,
                   "original_max_position_embeddings": 2048,
                   "beta_fast": 16.0, "beta_slow": 2.0}),
    (128, 10000.0, {"rope_type": "linear", "factor": 4.0}),
]


@pytest.mark.parametrize("head_dim, base, params", SCALINGS)
def test_rope_scaling_matches_transformers(head_dim, base, params):
    ref, _ = ROPE_INIT_FUNCTIONS[params["rope_type"]](
        _config(head_dim, base, params), "cpu")
    got = pc.rope_frequencies(head_dim, base=base, scaling=params)
    np.testing.assert_allclose(got, ref.numpy(), rtol=2e-6)


@pytest.mark.parametrize("factor", [1.0, 2.0, 16.0, 40.0])
def test_yarn_attention_scale_matches_transformers(factor):
    params = {"rope_type": "yarn", "factor": factor,
              "original_max_position_embeddings": 4096}
    _, ref = ROPE_INIT_FUNCTIONS["yarn"](_config(128, 10000.0, params), "cpu")
    assert pc.yarn_attention_scale(factor) == pytest.approx(ref, rel=1e-12)


def test_ntk_matches_dynamic_ntk_at_its_target_length():
    # transformers' "dynamic" NTK scaling changes the base to
    # base * (f * seq_len / L - (f - 1)) ** (d / (d - 2)); with f = 1 this is
    # our NTK-aware base * s ** (d / (d - 2)) for s = seq_len / L.
    params = {"rope_type": "dynamic", "factor": 1.0}
    config = _config(128, 10000.0, params)
    config.max_position_embeddings = 2048
    ref, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=4 * 2048)
    got = pc.rope_frequencies(128, scaling={"type": "ntk", "factor": 4.0})
    np.testing.assert_allclose(got, ref.numpy(), rtol=2e-6)
