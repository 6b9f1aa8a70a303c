"""Fuzzing every public posenc_core function with valid and invalid input.

Three promises are checked with hypothesis, for every name in
``posenc_core.__all__`` (a new public function fails
``test_every_public_function_is_fuzzed`` until it is added here):

1. Valid input, drawn at random (ints or numpy integers, lists or arrays of
   any real dtype, negative and fractional positions, extreme bases, empty
   sequences), gives the same result as a plain loop-based reference written
   from the docstring's formula, with no warning.
2. Invalid input (NaN, inf, wrong types, dtypes and shapes, out-of-range
   values) raises ``ValueError`` (as every docstring promises; a
   ``TypeError`` fails) whose message names the offending argument;
   arbitrary junk raises nothing else; finite input
   whose result would overflow float64 is refused instead of turning into
   inf or NaN.
3. Results that would not fit in memory are refused up front: the call
   raises ``ValueError`` saying how many elements it would have, and
   tracemalloc (which sees numpy's buffers) shows it allocated next to
   nothing first.

The profile is fixed (``derandomize=True``), so runs are reproducible, and
every example is small: this file takes seconds.
"""

import cmath
import inspect
import math
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posenc_core as pc

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                database=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

# ------------------------------------------------------------ references
# Plain loops over the formulas in the docstrings, with Python's math
# module: slow, obvious, and independent of posenc_core's vectorised code.


def _f(v):
    return float(v)


def ref_frequencies(d_model, base=10000.0):
    d = int(d_model)
    return np.array([_f(base) ** (-2.0 * i / d) for i in range(d // 2)])


def ref_wavelengths(d_model, base=10000.0):
    return np.array([2 * math.pi / w for w in ref_frequencies(d_model, base)])


def _ref_positions(positions):
    if isinstance(positions, (int, np.integer)):
        return [float(p) for p in range(int(positions))]
    return [float(p) for p in np.asarray(positions).tolist()]


def ref_sinusoidal_encoding(positions, d_model, base=10000.0,
                            layout="interleaved"):
    d, pos = int(d_model), _ref_positions(positions)
    P = np.zeros((len(pos), d))
    for r, p in enumerate(pos):
        for i, w in enumerate(ref_frequencies(d, base)):
            s, c = (2 * i, 2 * i + 1) if layout == "interleaved" else (
                i, d // 2 + i)
            P[r, s], P[r, c] = math.sin(p * w), math.cos(p * w)
    return P


def ref_relative_shift_matrix(delta, d_model, base=10000.0):
    d = int(d_model)
    M = np.zeros((d, d))
    for i, w in enumerate(ref_frequencies(d, base)):
        c, s = math.cos(_f(delta) * w), math.sin(_f(delta) * w)
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return M


def ref_binary_encoding(positions, n_bits):
    if isinstance(positions, (int, np.integer)):
        pos = range(int(positions))
    else:
        pos = [int(p) for p in np.asarray(positions).tolist()]
    return np.array([[(p >> j) & 1 for j in range(int(n_bits))]
                     for p in pos], dtype=np.int64).reshape(-1, int(n_bits))


def _softmax_rows(S):
    A = np.zeros_like(S)
    for i, row in enumerate(S):
        top = max(row)
        e = [math.exp(s - top) for s in row]
        A[i] = [v / sum(e) for v in e]
    return A


def ref_self_attention(x, w_q, w_k, w_v, bias=None, causal=False):
    x, w_q, w_k, w_v = (np.asarray(a, dtype=np.float64)
                        for a in (x, w_q, w_k, w_v))
    n = x.shape[0]
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            S[i, j] = sum(q[i] * k[j]) / math.sqrt(q.shape[1])
            if bias is not None:
                S[i, j] += np.asarray(bias, dtype=np.float64)[i, j]
            if causal and j > i:
                S[i, j] = -math.inf
    A = _softmax_rows(S)
    return A @ v, A


def ref_apply_rope(x, positions, base=10000.0, layout="interleaved",
                   frequencies=None):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    theta = (ref_frequencies(d, base) if frequencies is None
             else [float(t) for t in np.asarray(frequencies).tolist()])
    pos = _ref_positions(positions)
    lead = int(np.prod(x.shape[:-2]))
    out = x.copy().reshape(lead, x.shape[-2], d)
    flat = x.reshape(lead, x.shape[-2], d)
    for b in range(flat.shape[0]):
        for r, p in enumerate(pos):
            for i, t in enumerate(theta):
                a, c = (2 * i, 2 * i + 1) if layout == "interleaved" else (
                    i, i + d // 2)
                x1, x2 = flat[b, r, a], flat[b, r, c]
                cs, sn = math.cos(p * t), math.sin(p * t)
                out[b, r, a] = x1 * cs - x2 * sn
                out[b, r, c] = x2 * cs + x1 * sn
    return out.reshape(x.shape)


def ref_t5_relative_position_bucket(relative_position, bidirectional=True,
                                    num_buckets=32, max_distance=128):
    # Mesh TensorFlow's _relative_position_bucket, one value at a time, in
    # float32 as there (and in Hugging Face transformers), with the float32
    # logarithm the docstring specifies: math.log's, rounded to float32.
    f32 = np.float32
    out = []
    rel = np.asarray(relative_position)
    for r in rel.ravel().tolist():
        r, n, ret = int(r), int(num_buckets), 0
        if bidirectional:
            n //= 2
            ret += n if r > 0 else 0
            r = abs(r)
        else:
            r = max(-r, 0)
        max_exact = n // 2
        if r < max_exact:
            ret += r
        else:
            large = (f32(math.log(f32(r) / f32(max_exact)))
                     / f32(math.log(int(max_distance) / max_exact))
                     * f32(n - max_exact))
            ret += min(max_exact + int(large), n - 1)
        out.append(ret)
    return np.array(out, dtype=np.int64).reshape(rel.shape)


def ref_alibi_slopes(n_heads):
    # The function from the ALiBi paper's repository (ofirpress/attention_with
    # _linear_biases, models/transformer.py).
    def get_slopes(n):
        def power_of_2(n):
            start = 2 ** (-2 ** -(math.log2(n) - 3))
            return [start * start**i for i in range(n)]

        if math.log2(n).is_integer():
            return power_of_2(n)
        closest = 2 ** math.floor(math.log2(n))
        return (power_of_2(closest)
                + get_slopes(2 * closest)[0::2][: n - closest])

    return np.array(get_slopes(int(n_heads)))


def ref_relative_positions(n, max_distance=None):
    n = int(n)
    k = math.inf if max_distance is None else int(max_distance)
    return np.array([[int(max(-k, min(k, j - i))) for j in range(n)]
                     for i in range(n)], dtype=np.int64).reshape(n, n)


def ref_alibi_bias(n, n_heads):
    m = ref_alibi_slopes(n_heads)
    return np.array([[[-mh * abs(i - j) for j in range(int(n))]
                      for i in range(int(n))] for mh in m]).reshape(
        int(n_heads), int(n), int(n))


def ref_rope_frequencies(head_dim, base=10000.0, scaling=None):
    # transformers' _compute_*_parameters (modeling_rope_utils.py), loops
    d, base = int(head_dim), _f(base)
    if scaling is None:
        return np.array([base ** (-2.0 * i / d) for i in range(d // 2)])
    p = dict(scaling)
    kind = p.pop("type", p.pop("rope_type", None))
    f = _f(p.get("partial_rotary_factor", 1.0))
    out = [0.0] * (d // 2)
    if kind == "proportional":
        s = _f(p.get("factor", 1.0))
        for i in range(int(f * d // 2)):
            out[i] = base ** (-2.0 * i / d) / s
        return np.array(out)
    r = int(d * f)
    pairs = (r + 1) // 2
    theta = [base ** (-2.0 * i / r) for i in range(pairs)]
    s = _f(p.get("factor", 1.0))
    if kind == "default":
        new = theta
    elif kind == "linear":
        new = [t / s for t in theta]
    elif kind in ("ntk", "dynamic"):
        if kind == "ntk":
            stretch = s
        else:
            L = _f(p["max_position_embeddings"])
            n = max(_f(p.get("seq_len", L)), L)
            stretch = s * n / L - (s - 1)
        nb = base * stretch ** (r / (r - 2))
        new = [nb ** (-2.0 * i / r) for i in range(pairs)]
    elif kind == "longrope":
        L = _f(p["original_max_position_embeddings"])
        seq = p.get("seq_len")
        ext = p["long_factor"] if seq is not None and _f(seq) > L \
            else p["short_factor"]
        ext = [float(e) for e in np.asarray(ext).tolist()]
        new = [t / e for t, e in zip(theta, ext, strict=True)]
    elif kind == "yarn":
        # YaRN's reference code (jquesnelle/yarn, scaled_rope/LlamaYaRN...).
        L = _f(p["original_max_position_embeddings"])

        def dim(rot):
            return r * math.log(L / (rot * 2 * math.pi)) / (2 * math.log(base))

        low = dim(_f(p.get("beta_fast", 32)))
        high = dim(_f(p.get("beta_slow", 1)))
        if p.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, r - 1)
        if low == high:
            high += 0.001
        new = []
        for i, t in enumerate(theta):
            ramp = min(max((i - low) / (high - low), 0.0), 1.0)
            keep = 1 - ramp
            new.append(t / s * (1 - keep) + t * keep)
    else:
        # llama3, as transformers' _compute_llama3_parameters
        L = _f(p["original_max_position_embeddings"])
        lo = _f(p.get("low_freq_factor", 1))
        hi = _f(p.get("high_freq_factor", 4))
        new = []
        for t in theta:
            wl = 2 * math.pi / t
            if wl < L / hi:
                new.append(t)
            elif wl > L / lo:
                new.append(t / s)
            else:
                mu = (L / wl - lo) / (hi - lo)
                new.append((1 - mu) * t / s + mu * t)
    out[:pairs] = new
    return np.array(out)


def ref_rope_attention_factor(scaling):
    if scaling is None:
        return 1.0
    p = dict(scaling)
    kind = p.pop("type", p.pop("rope_type", None))
    if kind not in ("yarn", "longrope"):
        return 1.0
    if "attention_factor" in p:
        return _f(p["attention_factor"])

    def m(s, c=1.0):
        return 1.0 if s <= 1 else 0.1 * c * math.log(s) + 1.0

    L = _f(p["original_max_position_embeddings"])
    if kind == "yarn":
        s = _f(p["factor"])
        if p.get("mscale") and p.get("mscale_all_dim"):
            return m(s, _f(p["mscale"])) / m(s, _f(p["mscale_all_dim"]))
        return m(s)
    s = _f(p["factor"]) if "factor" in p else _f(
        p["max_position_embeddings"]) / L
    return 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(L))


def ref_yarn_attention_scale(factor):
    return 0.1 * math.log(_f(factor)) + 1.0


def ref_rope_decay_bound(distances, head_dim, base=10000.0, frequencies=None):
    d = int(head_dim)
    theta = (ref_frequencies(d, base) if frequencies is None
             else [float(t) for t in np.asarray(frequencies).tolist()])
    out = []
    for r in _ref_positions(distances):
        S, total = 0j, 0.0
        for t in theta:
            S += cmath.exp(1j * r * t)
            total += abs(S)
        out.append(total / (d // 2))
    return np.array(out)


def ref_rope_layout_permutation(head_dim):
    d = int(head_dim)
    return np.array(list(range(0, d, 2)) + list(range(1, d, 2)),
                    dtype=np.int64)


def ref_round_significand(x, bits):
    b = int(bits)

    def one(v):
        if v == 0:
            return 0.0
        q = Fraction(v)
        e = math.floor(math.log2(abs(v)))  # 2**e <= |v| < 2**(e+1)
        while Fraction(2) ** e > abs(q):
            e -= 1
        while Fraction(2) ** (e + 1) <= abs(q):
            e += 1
        unit = Fraction(2) ** (e - b + 1)
        return float(round(q / unit) * unit)  # round(): ties to even

    arr = np.asarray(x, dtype=np.float64)
    return np.array([one(v) for v in arr.ravel().tolist()]).reshape(arr.shape)


def ref_shaw_attention(x, w_q, w_k, w_v, table_k, table_v=None,
                       causal=False):
    # The naive form: build the (n, n, d) tensors a^K and a^V of eqs. 3-4.
    x, w_q, w_k, w_v, tk = (np.asarray(a, dtype=np.float64)
                            for a in (x, w_q, w_k, w_v, table_k))
    n, k = x.shape[0], (tk.shape[0] - 1) // 2
    q, kk, v = x @ w_q, x @ w_k, x @ w_v
    aK = np.zeros((n, n, tk.shape[1]))
    for i in range(n):
        for j in range(n):
            aK[i, j] = tk[max(-k, min(k, j - i)) + k]
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            S[i, j] = q[i] @ (kk[j] + aK[i, j]) / math.sqrt(q.shape[1])
            if causal and j > i:
                S[i, j] = -math.inf
    A = _softmax_rows(S)
    z = A @ v
    if table_v is not None:
        tv = np.asarray(table_v, dtype=np.float64)
        for i in range(n):
            for j in range(n):
                z[i] += A[i, j] * tv[max(-k, min(k, j - i)) + k]
    return z, A



def ref_partial_rope_frequencies(head_dim, fraction, base=10000.0,
                                 convention="spread"):
    d, f, b = int(head_dim), _f(fraction), _f(base)
    out = [0.0] * (d // 2)
    if convention == "spread":
        r = int(d * f)
        for i in range(0, (r + 1) // 2):
            out[i] = b ** (-2.0 * i / r)
    else:
        for i in range(int(f * d // 2)):
            out[i] = b ** (-2.0 * i / d)
    return np.array(out)


def ref_nope_attention_temperature(positions, floor_scale=8192.0,
                                   attn_scale=0.1):
    return np.array([1.0 + _f(attn_scale) * math.log(
        1.0 + math.floor((p + 1.0) / _f(floor_scale)))
        for p in _ref_positions(positions)])


# ---- chapter 9: 2-D positions, one token and one pair at a time


def ref_apply_rope_angles(x, angles, layout="interleaved"):
    x = np.asarray(x, dtype=np.float64)
    a = np.asarray(angles, dtype=np.float64)
    lead = np.broadcast_shapes(x.shape[:-2], a.shape[:-2])
    n, d = x.shape[-2:]
    m = int(np.prod(lead, dtype=int))
    xb = np.broadcast_to(x, (*lead, n, d)).reshape(m, n, d)
    ab = np.broadcast_to(a, (*lead, n, d // 2)).reshape(m, n, d // 2)
    out = np.zeros(xb.shape)
    for b in range(xb.shape[0]):
        for t in range(n):
            for i in range(d // 2):
                p, q = (2 * i, 2 * i + 1) if layout == "interleaved" else (
                    i, i + d // 2)
                c, s = math.cos(ab[b, t, i]), math.sin(ab[b, t, i])
                out[b, t, p] = xb[b, t, p] * c - xb[b, t, q] * s
                out[b, t, q] = xb[b, t, q] * c + xb[b, t, p] * s
    return out.reshape(*lead, n, d)


def ref_sincos_2d_encoding(height, width, d, base=10000.0, layout="mae"):
    h, w, d, q = int(height), int(width), int(d), int(d) // 4
    P = np.zeros((h * w, d))
    for r in range(h):
        for c in range(w):
            for j in range(q):
                om = _f(base) ** (-j / q)
                vals = {"sx": math.sin(c * om), "cx": math.cos(c * om),
                        "sy": math.sin(r * om), "cy": math.cos(r * om)}
                order = (["sx", "cx", "sy", "cy"] if layout == "mae"
                         else ["sy", "sx", "cy", "cx"])
                for k, name in enumerate(order):
                    P[r * w + c, k * q + j] = vals[name]
    return P


def _ref_axial(coords, head_dim, base, two_pi, row_first):
    c = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    d, q = int(head_dim), int(head_dim) // 4
    out = np.zeros((c.shape[0], d // 2))
    for t, (y, x) in enumerate(c.tolist()):
        first, second = (y, x) if row_first else (x, y)
        for j in range(q):
            om = _f(base) ** (-4.0 * j / d) * (2 * math.pi if two_pi else 1)
            out[t, j], out[t, q + j] = first * om, second * om
    return out


def ref_rope_axial_angles(coords, head_dim, base=100.0):
    return _ref_axial(coords, head_dim, base, False, False)


def ref_dinov3_rope_angles(coords, head_dim, base=100.0):
    return _ref_axial(coords, head_dim, base, True, True)


def ref_rope_mixed_frequencies(head_dim, n_heads, base=10.0, rng=None):
    d, q = int(head_dim), int(head_dim) // 4
    gen = rng if isinstance(rng, np.random.Generator) else \
        np.random.default_rng(int(rng))
    out = np.zeros((int(n_heads), d // 2, 2))
    for h in range(int(n_heads)):
        th = gen.uniform(0.0, 2 * math.pi)
        for j in range(q):
            mu = _f(base) ** (-4.0 * j / d)
            out[h, j] = [mu * math.cos(th), mu * math.sin(th)]
            out[h, q + j] = [mu * math.cos(th + math.pi / 2),
                             mu * math.sin(th + math.pi / 2)]
    return out


def ref_rope_mixed_angles(coords, freqs):
    c = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    f = np.asarray(freqs, dtype=np.float64)
    out = np.zeros((f.shape[0], c.shape[0], f.shape[1]))
    for h in range(f.shape[0]):
        for t, (y, x) in enumerate(c.tolist()):
            for i in range(f.shape[1]):
                out[h, t, i] = f[h, i, 0] * x + f[h, i, 1] * y
    return out


def ref_normalized_patch_coordinates(height, width, normalize="separate"):
    h, w = int(height), int(width)
    sh, sw = {"separate": (h, w), "max": (max(h, w),) * 2,
              "min": (min(h, w),) * 2}[normalize]
    return np.array([[2 * (r + 0.5) / sh - 1, 2 * (c + 0.5) / sw - 1]
                     for r in range(h) for c in range(w)]).reshape(-1, 2)


def ref_augment_coordinates(coords, shift=(0.0, 0.0), jitter=(1.0, 1.0),
                            rescale=1.0):
    c = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    sh = [float(v) for v in np.asarray(shift).tolist()]
    jt = [float(v) for v in np.asarray(jitter).tolist()]
    return np.array([[_f(rescale) * jt[k] * (row[k] + sh[k])
                      for k in range(2)] for row in c.tolist()]).reshape(-1, 2)


def ref_sample_coordinate_augmentation(rng, shift=None, jitter=None,
                                       rescale=None):
    gen = rng if isinstance(rng, np.random.Generator) else \
        np.random.default_rng(int(rng))
    # one scalar draw at a time, in DINOv3's order: shift, jitter, rescale
    d = (np.zeros(2) if shift is None
         else np.array([gen.uniform(-_f(shift), _f(shift)) for _ in "yx"]))
    J = (np.ones(2) if jitter is None
         else np.array([math.exp(gen.uniform(-math.log(_f(jitter)),
                                             math.log(_f(jitter))))
                        for _ in "yx"]))
    s = 1.0 if rescale is None else math.exp(gen.uniform(
        -math.log(_f(rescale)), math.log(_f(rescale))))
    return d, J, s



def ref_mrope_position_ids(segments, spatial_merge_size=2,
                           variant="qwen2-vl", tokens_per_second=4,
                           next_text="largest"):
    m, rows, start = int(spatial_merge_size), [], 0
    blocks = []
    for seg in segments:
        if isinstance(seg, (int, np.integer)):
            seg = ("text", seg)
        if seg[0] == "text":
            blocks.append(("text", int(seg[1]), None))
            continue
        t, h, w = (int(g) for g in seg[1])
        sec = _f(seg[2]) if len(seg) == 3 else 1.0
        if variant == "qwen3-vl" and seg[0] == "video":
            blocks += [(seg[0], (1, h, w), sec)] * t
        else:
            blocks.append((seg[0], (t, h, w), sec))
    for kind, size, sec in blocks:
        if kind == "text":
            for k in range(size):
                rows.append((start + k,) * 3)
            start += size
            continue
        t, h, w = size[0], size[1] // m, size[2] // m
        block = []
        for k in range(t):
            tau = (math.floor(k * (_f(tokens_per_second) * sec))
                   if variant == "qwen2.5-vl" and kind == "video" else k)
            for y in range(h):
                for x in range(w):
                    block.append((start + tau, start + y, start + x))
        rows += block
        start = (max(max(r) for r in block) + 1 if next_text == "largest"
                 else start + max(h, w))
    return np.array(rows, dtype=np.int64).reshape(-1, 3).T


def ref_mrope_pair_axes(mrope_section, layout="chunked"):
    dt, dh, dw = (int(v) for v in mrope_section)
    n = dt + dh + dw
    if layout == "chunked":
        return np.array([0] * dt + [1] * dh + [2] * dw, dtype=np.int64)
    return np.array([1 if i % 3 == 1 and i < 3 * dh else
                     2 if i % 3 == 2 and i < 3 * dw else 0
                     for i in range(n)], dtype=np.int64)


def ref_mrope_angles(position_ids, head_dim, mrope_section, base=10000.0,
                     layout="chunked"):
    ids = np.asarray(position_ids, dtype=np.float64)
    axes = ref_mrope_pair_axes(mrope_section, layout)
    om = ref_frequencies(int(head_dim), base)
    return np.array([[ids[axes[i], t] * om[i] for i in range(len(axes))]
                     for t in range(ids.shape[1])]).reshape(-1, len(axes))


def _ref_B(m, base, d):
    return sum(math.cos(m * base ** (-2.0 * i / d)) for i in range(d // 2))


def ref_rope_supported_length(base, head_dim, max_length=2**24):
    b, d = _f(base), int(head_dim)
    for m in range(int(max_length)):
        if _ref_B(m, b, d) < 0:
            return m
    return int(max_length)


def ref_rope_base_lower_bound(length, head_dim):
    # the docstring's search, with plain loops: up from b = e**0.001 in
    # steps of 0.01 (supported length below L/4) or 0.001 in log b, then
    # bisection to 1e-12
    L, d = int(length), int(head_dim)
    if L <= 2:
        return 1.0

    def first_fail(logb):
        return next((m for m in range(L)
                     if _ref_B(m, math.exp(logb), d) < 0), None)

    logb, step = 1e-3, 0.0
    while (m := first_fail(logb)) is not None:
        step = 1e-2 if m < L / 4 else 1e-3
        logb += step
    lo, hi = (max(logb - step, 0.0) if step else logb), logb
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if first_fail(mid) is None:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


# chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)


def ref_roberta_position_ids(input_ids, padding_idx=1,
                             past_key_values_length=0):
    ids = np.asarray(input_ids, dtype=np.float64)
    rows = ids.reshape(ids.shape[0] if ids.ndim == 2 else 1, ids.shape[-1])
    out = np.zeros(rows.shape, dtype=np.int64)
    for b in range(rows.shape[0]):
        seen = 0  # non-padding tokens so far, this one included
        for j in range(rows.shape[1]):
            alpha = int(rows[b, j] != int(padding_idx))
            seen += alpha
            out[b, j] = ((seen + int(past_key_values_length)) * alpha
                         + int(padding_idx))
    return out.reshape(ids.shape)


def _ref_stream(length, window, n_sinks):
    # StartRecentKVCache applied after each token, as in eval_long_ppl.py:
    # append the token, then keep the first n_sinks and the last
    # window - n_sinks once the cache holds more than window
    cache = []
    for t in range(int(length)):
        cache.append(t)
        if len(cache) > int(window):
            cache = (cache[:int(n_sinks)]
                     + cache[len(cache) - (int(window) - int(n_sinks)):])
    return cache


def ref_streaming_cache(length, window, n_sinks=4):
    return np.array(_ref_stream(length, window, n_sinks), dtype=np.int64)


def ref_streaming_positions(length, window, n_sinks=4, positions="cache"):
    kept = _ref_stream(length, window, n_sinks)
    return np.array(kept if positions == "original" else
                    list(range(len(kept))), dtype=np.int64)


def ref_softmax_with_sink(scores, sink_logits):
    s = np.asarray(scores, dtype=np.float64)
    xi = np.broadcast_to(np.asarray(sink_logits, dtype=np.float64),
                         s.shape[:-1]).reshape(-1).tolist()
    rows = s.reshape(-1, s.shape[-1]).tolist()
    out = np.zeros((len(rows), s.shape[-1]))
    for r, row in enumerate(rows):
        # the sink is one more column, dropped after the softmax
        top = max(*row, xi[r])
        den = math.exp(xi[r] - top) + sum(math.exp(v - top) for v in row)
        for j, v in enumerate(row):
            out[r, j] = math.exp(v - top) / den
    return out.reshape(s.shape)


def ref_rope_stale_key_angles(key_positions, head_dim, base=10000.0,
                              scaling=None, cached_length=1, length=1):
    # the frequencies of a pass of length n (transformers' seq_len =
    # max(position_ids) + 1) for the scalings that follow the length; the
    # others have one set of frequencies
    kind = scaling.get("type", scaling.get("rope_type"))

    def omega(n):
        return ref_rope_frequencies(
            head_dim, base, dict(scaling, seq_len=n)
            if kind in ("longrope", "dynamic") else scaling).tolist()

    then, now = omega(int(cached_length)), omega(int(length))
    pos = _ref_positions(key_positions)
    out = np.zeros((len(pos), int(head_dim) // 2))
    for k, ell in enumerate(pos):
        for i in range(int(head_dim) // 2):
            # a fresh pass rotates by ell * now, the cache holds ell * then
            out[k, i] = ell * now[i] - ell * then[i] + 0.0
    return out


def ref_mla_params(rng, d_model, n_heads, kv_lora_rank, qk_nope_head_dim,
                   qk_rope_head_dim, v_head_dim, q_lora_rank=None):
    # the matrices in the docstring's order, each drawn one entry at a
    # time, row by row: N(0, 1/fan_in) for weights, N(1, 0.1**2) for norms
    gen = np.random.default_rng(int(rng))
    D, H, dc = int(d_model), int(n_heads), int(kv_lora_rank)
    nope, dr, dv = (int(qk_nope_head_dim), int(qk_rope_head_dim),
                    int(v_head_dim))
    rq = None if q_lora_rank is None else int(q_lora_rank)
    q_rows = H * (nope + dr)
    shapes = ([("q_proj.weight", (q_rows, D))] if rq is None else
              [("q_a_proj.weight", (rq, D)), ("q_a_layernorm.weight", (rq,)),
               ("q_b_proj.weight", (q_rows, rq))])
    shapes += [("kv_a_proj_with_mqa.weight", (dc + dr, D)),
               ("kv_a_layernorm.weight", (dc,)),
               ("kv_b_proj.weight", (H * (nope + dv), dc)),
               ("o_proj.weight", (D, H * dv))]
    out = {}
    for name, shape in shapes:
        values = []
        for _ in range(math.prod(shape)):
            z = gen.standard_normal()
            values.append(1.0 + 0.1 * z if len(shape) == 1
                          else z / math.sqrt(shape[1]))
        out[name] = np.array(values).reshape(shape)
    out.update(n_heads=H, kv_lora_rank=dc, qk_nope_head_dim=nope,
               qk_rope_head_dim=dr, v_head_dim=dv, q_lora_rank=rq)
    return out


def _ref_rotate(v, position, base, layout):
    # R_position on one vector, pairs (2i, 2i+1) or (i, i + d/2), with
    # omega_i = base**(-2i/d), d the vector's width
    d, out = len(v), list(v)
    for i in range(d // 2):
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (
            i, i + d // 2)
        t = position * _f(base) ** (-2.0 * i / d)
        out[a] = v[a] * math.cos(t) - v[b] * math.sin(t)
        out[b] = v[b] * math.cos(t) + v[a] * math.sin(t)
    return out


def _ref_matvec(w, v):
    return [sum(row[k] * v[k] for k in range(len(v))) for row in w]


def _ref_rms_norm(v, weight):
    ms = sum(t * t for t in v) / len(v)
    return [t / math.sqrt(ms + 1e-6) * g for t, g in zip(v, weight, strict=True)]


def ref_mla_attention_logits(x, positions, params, absorbed=False,
                             base=10000.0, layout="interleaved",
                             rope="decoupled"):
    H, dc = int(params["n_heads"]), int(params["kv_lora_rank"])
    nope, dr = int(params["qk_nope_head_dim"]), int(params["qk_rope_head_dim"])
    dv = int(params["v_head_dim"])
    P = {k: np.asarray(v, dtype=np.float64).tolist()
         for k, v in params.items() if k.endswith(".weight")}
    X = np.asarray(x, dtype=np.float64).tolist()
    pos = _ref_positions(positions)
    q, c, kr = [], [], []
    for t, xt in enumerate(X):  # each token: its query, latent, rotary key
        if params.get("q_lora_rank") is None:
            q.append(_ref_matvec(P["q_proj.weight"], xt))
        else:
            cq = _ref_rms_norm(_ref_matvec(P["q_a_proj.weight"], xt),
                               P["q_a_layernorm.weight"])
            q.append(_ref_matvec(P["q_b_proj.weight"], cq))
        kv = _ref_matvec(P["kv_a_proj_with_mqa.weight"], xt)
        c.append(_ref_rms_norm(kv[:dc], P["kv_a_layernorm.weight"]))
        kr.append(_ref_rotate(kv[dc:], pos[t], base, layout))
    S = np.zeros((H, len(X), len(X)))
    for h in range(H):
        w_uk = P["kv_b_proj.weight"][h * (nope + dv):h * (nope + dv) + nope]
        for m in range(len(X)):
            qh = q[m][h * (nope + dr):(h + 1) * (nope + dr)]
            qc, qr = qh[:nope], qh[nope:]
            if rope == "coupled":
                qc = _ref_rotate(qc, pos[m], base, layout)
            for ell in range(len(X)):
                if absorbed:  # W^UK_h^T q^C_{m,h}, dotted with the latent
                    qt = [sum(w_uk[r][k] * qc[r] for r in range(nope))
                          for k in range(dc)]
                    first = sum(qt[k] * c[ell][k] for k in range(dc))
                else:  # the key rebuilt from the latent (and rotated)
                    kc = _ref_matvec(w_uk, c[ell])
                    if rope == "coupled":
                        kc = _ref_rotate(kc, pos[ell], base, layout)
                    first = sum(a * b for a, b in zip(qc, kc, strict=True))
                second = 0.0
                if rope == "decoupled":
                    qr_m = _ref_rotate(qr, pos[m], base, layout)
                    second = sum(a * b for a, b in zip(qr_m, kr[ell], strict=True))
                S[h, m, ell] = (first + second) / math.sqrt(nope + dr)
    return S

# chapter 11 (kv cache, padding, packing, layouts)


def ref_kv_cache_bytes(kind, *, n_layers, n_heads=None, head_dim=None,
                       n_kv_heads=None, kv_lora_rank=None,
                       qk_rope_head_dim=None, tokens=1, bytes_per_value=2):
    # DeepSeek-V2's Table 1: values cached per token and layer
    if kind == "mla":
        per_layer = int(kv_lora_rank) + int(qk_rope_head_dim)
    else:
        heads = {"mha": n_heads, "gqa": n_kv_heads, "mqa": 1}[kind]
        per_layer = 2 * int(heads) * int(head_dim)
    values = 0
    for _ in range(int(tokens)):
        for _ in range(int(n_layers)):
            values += per_layer
    if isinstance(bytes_per_value, (int, np.integer)):
        return values * int(bytes_per_value)
    return float(values) * float(bytes_per_value)


def _ref_rows(a):
    """The rows of a (n,) or (batch, n) array, as lists."""
    return [r.tolist() for r in a] if a.ndim == 2 else [a.tolist()]


def ref_position_ids_from_attention_mask(attention_mask, *, fill_value=0):
    a = np.asarray(attention_mask)
    out = []
    for row in _ref_rows(a):
        seen, ids = 0, []
        for alpha in row:
            if int(alpha) == 1:
                seen += 1
                ids.append(seen - 1)
            else:
                ids.append(int(fill_value))
        out.append(ids)
    return np.array(out, dtype=np.int64).reshape(a.shape)


def ref_packed_position_ids(lengths, *, start=0):
    return np.array([int(start) + k for n in np.asarray(lengths).tolist()
                     for k in range(int(n))], dtype=np.int64)


def ref_packed_sequence_indices(position_ids):
    a = np.asarray(position_ids)
    out = []
    for row in _ref_rows(a):
        s, ids = 0, []
        for j, p in enumerate(row):
            if j > 0 and int(p) - int(row[j - 1]) != 1:
                s += 1
            ids.append(s)
        out.append(ids)
    return np.array(out, dtype=np.int64).reshape(a.shape)


def ref_packed_attention_mask(lengths, *, causal=True):
    doc = [k for k, n in enumerate(np.asarray(lengths).tolist())
           for _ in range(int(n))]
    n = len(doc)
    return np.array([[doc[m] == doc[el] and (el <= m or not causal)
                      for el in range(n)] for m in range(n)],
                    dtype=bool).reshape(n, n)


def _ref_half_order(d):
    return list(range(0, d, 2)) + list(range(1, d, 2))


def ref_permute_rotary_half(w, n_heads):
    w = np.asarray(w, dtype=np.float64)
    d = w.shape[0] // int(n_heads)
    out = np.zeros(w.shape)
    for h in range(int(n_heads)):
        for j, pj in enumerate(_ref_half_order(d)):
            out[h * d + j] = w[h * d + pj]
    return out


def ref_unpermute_rotary_half(w, n_heads):
    w = np.asarray(w, dtype=np.float64)
    d = w.shape[0] // int(n_heads)
    out = np.zeros(w.shape)
    for h in range(int(n_heads)):
        for j, pj in enumerate(_ref_half_order(d)):
            out[h * d + pj] = w[h * d + j]
    return out


# ---- chapter 10: a model's layers (position_layout)

_LAYOUT_WORDS = ("rope", "nope", "alibi", "full", "sliding", "chunked",
                 "spread", "proportional")
_LAYOUT_NUMBERS = ("layer", "head_dim", "rotated_pairs", "window", "chunk",
                   "base", "fraction", "attention_factor",
                   "inverse_frequencies", "long_inverse_frequencies",
                   "alibi_slopes")


def _layout_parts(result):
    """position_layout's list of dicts as a tuple of arrays (words as
    int64 codes, None as an empty array), for the generic comparisons."""
    if not (isinstance(result, list) and result
            and isinstance(result[0], dict)):
        return result
    parts = []
    for layer in result:
        words = [layer["kind"], layer["attention"], layer["convention"]]
        parts.append(np.array([-1 if w is None else _LAYOUT_WORDS.index(w)
                               for w in words], dtype=np.int64))
        for key in _LAYOUT_NUMBERS:
            v = layer[key]
            parts.append(np.zeros(0) if v is None
                         else np.atleast_1d(np.asarray(v, dtype=np.float64)))
        t = layer["temperature"]
        parts.append(np.zeros(0) if t is None else np.array(
            [_f(t["floor_scale"]), _f(t["attn_scale"])]))
    return tuple(parts)


def ref_position_layout(config):
    """The docstring's rules for the keys VALID draws: layer_types,
    no_rope_layers or no_rope_layer_interval, attention_chunk_size,
    sliding_window, rope_theta, rope_scaling, partial_rotary_factor,
    Llama 4's temperature keys, alibi."""
    n = int(config["num_hidden_layers"])
    d = config.get("head_dim") or (int(config["hidden_size"])
                                   // int(config["num_attention_heads"]))
    d = int(d)
    alibi = config.get("alibi") is True
    flags = config.get("no_rope_layers")
    if flags is None and config.get("no_rope_layer_interval") is not None:
        k = int(config["no_rope_layer_interval"])
        flags = [int((i + 1) % k != 0) for i in range(n)]
    if flags is None or alibi:
        flags = [0 if alibi else 1] * n
    names = {"full_attention": "full", "sliding_attention": "sliding",
             "chunked_attention": "chunked"}
    if config.get("layer_types") is not None:
        attention = [names[t] for t in config["layer_types"]]
    elif config.get("attention_chunk_size") is not None and any(flags):
        attention = ["chunked" if f else "full" for f in flags]
    else:
        attention = ["full"] * n
    tuning = config.get("attn_temperature_tuning", False)
    base = _f(config.get("rope_theta", 10000.0))
    p = dict(config.get("rope_scaling") or {})
    kind = p.pop("rope_type", p.pop("type", "default"))
    f = p.pop("partial_rotary_factor",
              config.get("partial_rotary_factor", 1.0))
    p.pop("seq_len", None)
    scaling = {"type": kind, "partial_rotary_factor": f, **p}
    out = []
    for i in range(n):
        layer = {"layer": i, "kind": "rope" if flags[i] else "nope",
                 "attention": attention[i], "head_dim": d, "window": None,
                 "chunk": None, "rotated_pairs": 0, "base": None,
                 "fraction": None, "convention": None,
                 "attention_factor": None, "inverse_frequencies": None,
                 "long_inverse_frequencies": None, "temperature": None,
                 "alibi_slopes": None}
        if attention[i] == "sliding":
            layer["window"] = int(config["sliding_window"])
        if attention[i] == "chunked":
            layer["chunk"] = int(config["attention_chunk_size"])
        if alibi:
            layer["kind"] = "alibi"
            layer["alibi_slopes"] = ref_alibi_slopes(
                config["num_attention_heads"])
        elif not flags[i]:
            if tuning:
                layer["temperature"] = {
                    "floor_scale": config.get("floor_scale", 8192),
                    "attn_scale": config.get("attn_scale", 0.1)}
        else:
            prop = kind == "proportional"
            layer.update(
                base=base, fraction=_f(f),
                convention="proportional" if prop else "spread",
                rotated_pairs=(int(_f(f) * d // 2) if prop
                               else (int(d * _f(f)) + 1) // 2),
                inverse_frequencies=ref_rope_frequencies(d, base, scaling),
                attention_factor=ref_rope_attention_factor(scaling))
            if kind == "longrope":
                L = _f(scaling["original_max_position_embeddings"])
                layer["long_inverse_frequencies"] = ref_rope_frequencies(
                    d, base, dict(scaling, seq_len=L + 1))
        out.append(layer)
    return out

REFERENCES = {name[4:]: fn for name, fn in globals().items()
              if name.startswith("ref_")}

# ----------------------------------------------------- valid strategies


def ints(lo, hi):
    """An int in [lo, hi], as a Python int or a numpy integer."""
    return st.tuples(st.integers(lo, hi),
                     st.sampled_from([int, np.int64, np.int32])).map(
        lambda t: t[1](t[0]))


def evens(lo, hi):
    return ints(lo // 2, hi // 2).map(lambda h: type(h)(2 * h))


def reals(lo, hi):
    return st.one_of(
        st.floats(lo, hi, allow_nan=False),
        st.floats(lo, hi, allow_nan=False).map(np.float64),
        st.integers(math.ceil(lo), math.floor(hi)))


bases = st.one_of(reals(1.001, 1e8), st.sampled_from([10000, 1e4, 500000.0,
                                                      1.5, 2]))


def as_array_like(values, kinds=("list", "f64", "f32", "int")):
    """A list of numbers as a list or an array of one of a few dtypes."""
    def convert(kind):
        if kind == "list":
            return list(values)
        if kind == "f32" and all(abs(v) < 1e38 for v in values):
            return np.asarray(values, dtype=np.float32)
        if kind == "int" and all(float(v).is_integer() for v in values):
            return np.asarray(values, dtype=np.int64)
        return np.asarray(values, dtype=np.float64)

    return st.sampled_from(kinds).map(convert)


def frequency_lists(d):
    """``d // 2`` frequencies (one per pair) as any array-like."""
    return st.lists(st.floats(0, 10, allow_nan=False), min_size=int(d) // 2,
                    max_size=int(d) // 2).flatmap(as_array_like)


def positions_strategy(n_max=8, bound=1e6):
    floats = st.lists(st.floats(-bound, bound, allow_nan=False),
                      max_size=n_max)
    integers = st.lists(st.integers(-int(bound), int(bound)), max_size=n_max)
    return st.one_of(ints(0, n_max),
                     st.one_of(floats, integers).flatmap(as_array_like))


def matrix(rows, cols, scale):
    return st.lists(st.floats(-scale, scale, allow_nan=False),
                    min_size=rows * cols, max_size=rows * cols).map(
        lambda v: np.asarray(v, dtype=np.float64).reshape(rows, cols))


@st.composite
def frequencies_kw(draw):
    return {"d_model": draw(evens(2, 128)), "base": draw(bases)}


@st.composite
def sinusoidal_kw(draw):
    return {"positions": draw(positions_strategy()),
            "d_model": draw(evens(2, 48)), "base": draw(bases),
            "layout": draw(st.sampled_from(["interleaved", "concat"]))}


@st.composite
def shift_kw(draw):
    return {"delta": draw(reals(-1e6, 1e6)), "d_model": draw(evens(2, 24)),
            "base": draw(bases)}


@st.composite
def binary_kw(draw):
    n_bits = draw(ints(1, 63))
    # positions of 2**n_bits and more roll over; up to 2**53 are exact
    top = 2**53
    pos = draw(st.one_of(
        ints(0, 40),
        st.lists(st.one_of(st.integers(0, 2**min(int(n_bits), 53)),
                           st.integers(0, top)), max_size=8).flatmap(
            lambda v: as_array_like(v, ("list", "int")))))
    return {"positions": pos, "n_bits": n_bits}


@st.composite
def attention_kw(draw, shaw=False):
    n = draw(st.integers(0, 5))
    d_model = draw(st.integers(1, 4))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    scale = draw(st.sampled_from([1.0, 10.0, 1e3]))
    kw = {"x": draw(matrix(n, d_model, scale)),
          "w_q": draw(matrix(d_model, d_k, 1.0)),
          "w_k": draw(matrix(d_model, d_k, 1.0)),
          "w_v": draw(matrix(d_model, d_v, 1.0)),
          "causal": draw(st.booleans())}
    if shaw:
        rows = 2 * draw(st.integers(0, 6)) + 1
        kw["table_k"] = draw(matrix(rows, d_k, 3.0))
        kw["table_v"] = draw(st.one_of(st.none(), matrix(rows, d_v, 3.0)))
    elif draw(st.booleans()):
        bias = draw(matrix(n, n, 50.0))
        masked = draw(matrix(n, n, 1.0)) > 0.5
        np.fill_diagonal(masked, False)  # every row keeps its own key
        bias[masked] = -np.inf
        kw["bias"] = bias
    for name in ("x", "w_q", "w_k", "w_v"):
        if kw[name].size:
            kw[name] = draw(st.sampled_from([kw[name], kw[name].tolist()]))
    return kw


@st.composite
def rope_kw(draw):
    d = draw(evens(2, 12))
    lead = draw(st.lists(st.integers(1, 2), max_size=2))
    pos = draw(positions_strategy(5))
    n = int(pos) if isinstance(pos, (int, np.integer)) else len(pos)
    shape = (*lead, n, int(d))
    size = int(np.prod(shape))
    x = np.asarray(draw(st.lists(st.floats(-10, 10, allow_nan=False),
                                 min_size=size, max_size=size))).reshape(shape)
    # (a list loses the shape of an empty array)
    forms = [x, x.astype(np.float32)] + ([x.tolist()] if x.size else [])
    kw = {"x": draw(st.sampled_from(forms)),
          "positions": pos, "base": draw(bases),
          "layout": draw(st.sampled_from(["interleaved", "half"]))}
    if draw(st.booleans()):
        kw["frequencies"] = draw(frequency_lists(d))
    return kw


@st.composite
def scaling_dicts(draw, head_dim):
    d = int(head_dim)
    kind = draw(st.sampled_from(["linear", "ntk", "yarn", "llama3",
                                 "default", "proportional", "dynamic",
                                 "longrope"]))
    f = draw(st.one_of(st.none(), st.sampled_from([1.0, 0.5, 0.25, 1]),
                       reals(0.0, 1.0)))
    r = d if f is None else int(d * float(f))
    if kind in ("ntk", "dynamic") and r < 4 or kind == "yarn" and (
            r % 2 or r == 0):
        f, r = None, d
    if kind in ("ntk", "dynamic") and d == 2:
        kind = "linear"
    p = {draw(st.sampled_from(["type", "rope_type"])): kind}
    if f is not None:
        p["partial_rotary_factor"] = f
    if kind != "default" and (kind not in ("proportional", "longrope")
                              or draw(st.booleans())):
        p["factor"] = draw(reals(1.0, 1e3))
    if kind in ("yarn", "llama3", "longrope"):
        low = 2.0 if kind == "longrope" else 1.0
        p["original_max_position_embeddings"] = draw(reals(low, 1e6))
    if kind == "yarn" and draw(st.booleans()):
        slow = draw(st.floats(0.01, 50))
        p["beta_slow"], p["beta_fast"] = slow, slow + draw(st.floats(0.01, 50))
    if kind == "yarn" and draw(st.booleans()):
        p["truncate"] = draw(st.booleans())
    if kind == "yarn" and draw(st.booleans()):
        p["mscale"] = draw(st.sampled_from([0, 0.707, 1.0, 1]))
        p["mscale_all_dim"] = draw(st.sampled_from([0, 1.0, 0.5]))
    if kind in ("yarn", "longrope") and draw(st.booleans()):
        p["attention_factor"] = draw(reals(0.1, 3.0))
    if kind == "llama3" and draw(st.booleans()):
        low = draw(st.floats(0.01, 50))
        p["low_freq_factor"] = low
        p["high_freq_factor"] = low + draw(st.floats(0.01, 50))
    if kind == "dynamic":
        p["max_position_embeddings"] = draw(reals(1.0, 1e6))
    if kind == "longrope":
        pairs = (r + 1) // 2
        for key in ("short_factor", "long_factor"):
            p[key] = draw(st.lists(st.floats(0.5, 100), min_size=pairs,
                                   max_size=pairs).flatmap(
                lambda v: as_array_like(v, ("list", "f64"))))
        if "factor" not in p:
            p["max_position_embeddings"] = draw(reals(1.0, 1e7))
    if kind in ("dynamic", "longrope") and draw(st.booleans()):
        p["seq_len"] = draw(reals(1.0, 1e7))
    return p


@st.composite
def rope_frequencies_kw(draw):
    d = draw(evens(2, 256))
    return {"head_dim": d, "base": draw(bases),
            "scaling": draw(st.one_of(st.none(), scaling_dicts(int(d))))}


@st.composite
def t5_kw(draw):
    bidirectional = draw(st.booleans())
    smallest = 4 if bidirectional else 2
    nb = draw(ints(smallest, 128))
    n = int(nb) // 2 if bidirectional else int(nb)
    rel = draw(st.one_of(
        st.integers(-10**6, 10**6),
        st.lists(st.one_of(st.integers(-10**6, 10**6),
                           st.integers(-2**53, 2**53)),
                 max_size=12).flatmap(lambda v: as_array_like(
                     v, ("list", "int"))),
        st.lists(st.integers(-300, 300), min_size=6, max_size=6).map(
            lambda v: np.asarray(v).reshape(2, 3))))
    return {"relative_position": rel, "bidirectional": bidirectional,
            "num_buckets": nb, "max_distance": draw(ints(n // 2 + 1, 10**4))}


@st.composite
def decay_kw(draw):
    d = draw(evens(2, 32))
    kw = {"distances": draw(positions_strategy(6, 1e5)), "head_dim": d,
          "base": draw(bases)}
    if draw(st.booleans()):
        kw["frequencies"] = draw(frequency_lists(d))
    return kw


@st.composite
def round_kw(draw):
    values = st.one_of(st.floats(-1e300, 1e300, allow_nan=False),
                       st.floats(-1e3, 1e3, allow_nan=False),
                       st.integers(-2**40, 2**40))
    x = draw(st.one_of(values, st.lists(values, max_size=8).flatmap(
        as_array_like)))
    return {"x": x, "bits": draw(ints(1, 53))}



@st.composite
def partial_kw(draw):
    return {"head_dim": draw(evens(2, 256)),
            "fraction": draw(st.one_of(reals(0.0, 1.0), st.sampled_from(
                [0, 0.25, 0.4, 0.5, 0.75, 1, np.float64(0.3)]))),
            "base": draw(bases),
            "convention": draw(st.sampled_from(["spread", "proportional"]))}


@st.composite
def nope_kw(draw):
    pos = draw(st.one_of(
        ints(0, 40),
        st.lists(st.one_of(st.floats(0, 1e6, allow_nan=False),
                           st.integers(0, 10**6)),
                 max_size=8).flatmap(as_array_like)))
    return {"positions": pos, "floor_scale": draw(reals(0.5, 1e5)),
            "attn_scale": draw(reals(0.0, 10.0))}


# ---- chapter 9


def coords_strategy(n_max=5, bound=1e3):
    return st.integers(0, n_max).flatmap(lambda n: st.lists(
        st.floats(-bound, bound, allow_nan=False), min_size=2 * n,
        max_size=2 * n).map(lambda v: np.asarray(v).reshape(-1, 2)).flatmap(
            lambda a: st.sampled_from([a, a.astype(np.float32)]
                                      + ([a.tolist()] if a.size else []))))


def fours(lo, hi):
    return ints(lo // 4, hi // 4).map(lambda q: type(q)(4 * q))


@st.composite
def rope_angles_kw(draw):
    d = int(draw(evens(2, 10)))
    n = draw(st.integers(0, 4))
    lead = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    x = draw(matrix(int(np.prod(lead, dtype=int)) * n, d, 10.0)).reshape(
        *lead, n, d)
    alead = lead[len(lead) - draw(st.integers(0, len(lead))):]
    a = draw(matrix(int(np.prod(alead, dtype=int)) * n, d // 2, 1e3)).reshape(
        *alead, n, d // 2)
    return {"x": draw(st.sampled_from([x, x.astype(np.float32)])),
            "angles": a,
            "layout": draw(st.sampled_from(["interleaved", "half"]))}


@st.composite
def sincos_2d_kw(draw):
    return {"height": draw(ints(1, 5)), "width": draw(ints(1, 5)),
            "d": draw(fours(4, 24)), "base": draw(bases),
            "layout": draw(st.sampled_from(["mae", "timm"]))}


@st.composite
def axial_kw(draw):
    return {"coords": draw(coords_strategy()), "head_dim": draw(fours(4, 24)),
            "base": draw(bases)}


@st.composite
def mixed_freqs_kw(draw):
    return {"head_dim": draw(fours(4, 24)), "n_heads": draw(ints(1, 4)),
            "base": draw(bases), "rng": draw(ints(0, 2**31))}


@st.composite
def mixed_angles_kw(draw):
    h, p = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    f = draw(matrix(h * p, 2, 10.0)).reshape(h, p, 2)
    return {"coords": draw(coords_strategy()), "freqs": f}


@st.composite
def augment_kw(draw):
    pos = st.floats(1e-3, 1e3)
    return {"coords": draw(coords_strategy()),
            "shift": draw(st.tuples(st.floats(-10, 10), st.floats(-10, 10))),
            "jitter": draw(st.tuples(pos, pos).flatmap(
                lambda t: as_array_like(list(t), ("list", "f64")))),
            "rescale": draw(reals(1e-3, 1e3).filter(lambda v: v > 0))}


@st.composite
def sample_aug_kw(draw):
    return {"rng": draw(ints(0, 2**31)),
            "shift": draw(st.one_of(st.none(), reals(0, 10))),
            "jitter": draw(st.one_of(st.none(), reals(1, 100))),
            "rescale": draw(st.one_of(st.none(), reals(1, 100)))}



@st.composite
def mrope_ids_kw(draw):
    merge = int(draw(ints(1, 3)))
    variant = draw(st.sampled_from(["qwen2-vl", "qwen2.5-vl", "qwen3-vl"]))
    segs = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["int", "text", "image", "video"]))
        if kind in ("int", "text"):
            n = draw(ints(0, 4))
            segs.append(n if kind == "int" else ("text", n))
            continue
        grid = (draw(st.integers(1, 3)) if kind == "video" else 1,
                merge * draw(st.integers(1, 3)), merge * draw(st.integers(1, 3)))
        grid = draw(st.sampled_from([grid, list(grid)]))
        if kind == "video" and draw(st.booleans()):
            segs.append(("video", grid, draw(reals(0.0, 4.0))))
        else:
            segs.append((kind, grid))
    return {"segments": segs, "spatial_merge_size": merge,
            "variant": variant, "tokens_per_second": draw(reals(0.0, 50.0)),
            "next_text": draw(st.sampled_from(["largest", "spatial"]))}


@st.composite
def mrope_section_kw(draw):
    sec = draw(st.lists(st.integers(0, 8), min_size=3, max_size=3).filter(
        lambda v: sum(v) > 0))
    return {"mrope_section": draw(st.sampled_from([sec, tuple(sec)])),
            "layout": draw(st.sampled_from(["chunked", "interleaved"]))}


@st.composite
def mrope_angles_kw(draw):
    kw = draw(mrope_section_kw())
    n = draw(st.integers(0, 5))
    ids = draw(st.lists(st.integers(0, 10**5), min_size=3 * n,
                        max_size=3 * n)).copy()
    ids = np.asarray(ids, dtype=np.int64).reshape(3, n)
    return {"position_ids": draw(st.sampled_from([ids, ids.astype(float)])),
            "head_dim": 2 * sum(kw["mrope_section"]),
            "mrope_section": kw["mrope_section"], "base": draw(bases),
            "layout": kw["layout"]}


# chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)


@st.composite
def roberta_kw(draw):
    pad = int(draw(ints(0, 4)))
    shape = draw(st.one_of(st.tuples(st.integers(0, 6)),
                           st.tuples(st.integers(1, 3), st.integers(0, 5))))
    ids = np.asarray(draw(st.lists(st.integers(0, 6), min_size=math.prod(
        shape), max_size=math.prod(shape))), dtype=np.int64).reshape(shape)
    return {"input_ids": draw(st.sampled_from(
                [ids, ids.astype(np.int32), ids.astype(float)]
                + ([ids.tolist()] if ids.size else []))),
            "padding_idx": draw(st.sampled_from([int, np.int64]))(pad),
            "past_key_values_length": draw(st.one_of(
                ints(0, 1000), st.just(2**53 - 100)))}


@st.composite
def streaming_kw(draw, positions=False):
    sinks = draw(ints(0, 5))
    kw = {"length": draw(ints(0, 40)),
          "window": type(sinks)(int(sinks) + int(draw(ints(1, 10))))}
    if draw(st.booleans()) or int(sinks) != 4:
        kw["n_sinks"] = sinks
    if positions and draw(st.booleans()):
        kw["positions"] = draw(st.sampled_from(["cache", "original"]))
    return kw


def _no_empty_row(kw):
    s = np.asarray(kw["scores"], dtype=np.float64)
    z = np.broadcast_to(np.asarray(kw["sink_logits"], dtype=np.float64),
                        s.shape[:-1])
    return not (np.isneginf(s).all(axis=-1) & np.isneginf(z)).any()


@st.composite
def sink_kw(draw):
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    n = draw(st.integers(1, 5))
    # +-1e308 in one row: s - max(s) overflows to -inf (a weight of 0)
    value = st.one_of(st.floats(-50, 50), st.just(-INF),
                      st.sampled_from([1e308, -1e308]),
                      st.floats(-1e308, 1e308))
    a = np.asarray(draw(st.lists(value, min_size=math.prod(lead) * n,
                                 max_size=math.prod(lead) * n)),
                   dtype=np.float64).reshape(*lead, n)
    kinds = [a] + ([a.tolist()] if a.size else [])
    if np.all(np.abs(a[np.isfinite(a)]) < 1e38):
        kinds.append(a.astype(np.float32))
    if np.all(np.abs(a) < 2**53) and np.all(a == np.round(a)):
        kinds.append(a.astype(np.int64))
    # a scalar, or one per leading index, as a suffix of the leading shape
    # with some axes of length 1 (xi[:, None])
    tail = lead[len(lead) - draw(st.integers(0, len(lead))):]
    shape = tuple(k if draw(st.booleans()) else 1 for k in tail)
    xi = np.asarray(draw(st.lists(st.one_of(st.floats(-50, 50),
                                            st.just(-INF)),
                                  min_size=math.prod(shape),
                                  max_size=math.prod(shape))),
                    dtype=np.float64).reshape(shape)
    sink = draw(st.sampled_from(
        [xi] + ([xi.tolist()] if xi.size else [])  # [] loses the shape
        + ([float(xi), np.float64(xi)] if not shape else [])))
    return {"scores": draw(st.sampled_from(kinds)), "sink_logits": sink}


@st.composite
def stale_kw(draw):
    d = draw(evens(2, 16))
    kind = draw(st.sampled_from(["longrope", "dynamic", "other"]))
    L = int(draw(ints(2, 40)))  # the training length the passes cross
    if kind == "longrope":
        factors = st.lists(st.floats(0.5, 100), min_size=int(d) // 2,
                           max_size=int(d) // 2)
        scaling = {"type": "longrope", "short_factor": draw(factors),
                   "long_factor": draw(factors),
                   "original_max_position_embeddings": L,
                   "factor": draw(reals(1.0, 1e3))}
    elif kind == "dynamic" and int(d) >= 4:
        scaling = {"rope_type": "dynamic", "factor": draw(reals(1.0, 1e3)),
                   "max_position_embeddings": L}
    else:  # the others give 0
        scaling = draw(scaling_dicts(d))
    if draw(st.booleans()):
        scaling["seq_len"] = L  # replaced by the lengths
    if scaling.get("type", scaling.get("rope_type")) not in ("longrope",
                                                             "dynamic"):
        scaling.pop("seq_len", None)
    kw = {"key_positions": draw(positions_strategy(n_max=6, bound=1e4)),
          "head_dim": d, "scaling": scaling,
          "cached_length": draw(ints(1, 2 * L)),
          "length": draw(ints(1, 3 * L))}
    if draw(st.booleans()):
        kw["base"] = draw(bases)
    return kw


@st.composite
def mla_params_kw(draw):
    nope, rope = draw(ints(0, 4)), draw(evens(0, 4))
    if int(nope) + int(rope) == 0:
        rope = type(rope)(2)
    kw = {"rng": draw(ints(0, 2**31)), "d_model": draw(ints(1, 8)),
          "n_heads": draw(ints(1, 3)), "kv_lora_rank": draw(ints(1, 6)),
          "qk_nope_head_dim": nope, "qk_rope_head_dim": rope,
          "v_head_dim": draw(ints(1, 4))}
    if draw(st.booleans()):
        kw["q_lora_rank"] = draw(st.one_of(st.none(), ints(1, 5)))
    return kw


def _mla_weights(seed, d_model, n_heads, kv_lora_rank, qk_nope_head_dim,
                 qk_rope_head_dim, v_head_dim, q_lora_rank=None, **_):
    """MLA weights under transformers' names, made here (not by
    posenc_core), with the five sizes; q_lora_rank only when set."""
    g = np.random.default_rng(int(seed))
    D, H, dc = int(d_model), int(n_heads), int(kv_lora_rank)
    nope, dr, dv = (int(qk_nope_head_dim), int(qk_rope_head_dim),
                    int(v_head_dim))
    p = {}
    if q_lora_rank is None:
        p["q_proj.weight"] = g.normal(size=(H * (nope + dr), D))
    else:
        rq = int(q_lora_rank)
        p["q_a_proj.weight"] = g.normal(size=(rq, D))
        p["q_a_layernorm.weight"] = 1 + 0.1 * g.normal(size=rq)
        p["q_b_proj.weight"] = g.normal(size=(H * (nope + dr), rq)) / 2
        p["q_lora_rank"] = q_lora_rank
    p["kv_a_proj_with_mqa.weight"] = g.normal(size=(dc + dr, D))
    p["kv_a_layernorm.weight"] = 1 + 0.1 * g.normal(size=dc)
    p["kv_b_proj.weight"] = g.normal(size=(H * (nope + dv), dc)) / 2
    p["o_proj.weight"] = g.normal(size=(D, H * dv))
    p.update(n_heads=n_heads, kv_lora_rank=kv_lora_rank,
             qk_nope_head_dim=qk_nope_head_dim,
             qk_rope_head_dim=qk_rope_head_dim, v_head_dim=v_head_dim)
    return p


@st.composite
def mla_logits_kw(draw):
    sizes = draw(mla_params_kw())
    params = _mla_weights(sizes["rng"], **sizes)
    if draw(st.booleans()):
        params["q_lora_rank"] = sizes.get("q_lora_rank")  # None too
    n, d = draw(st.integers(0, 4)), int(sizes["d_model"])
    x = draw(matrix(n, d, 3.0))
    kw = {"x": draw(st.sampled_from([x, x.tolist()] if n else [x])),
          "positions": draw(st.one_of(
              st.just(n), st.lists(st.floats(-1e3, 1e3), min_size=n,
                                   max_size=n).flatmap(as_array_like))),
          "params": params}
    rope = draw(st.sampled_from(["decoupled", "none", "coupled"]))
    if rope == "coupled" and int(sizes["qk_nope_head_dim"]) % 2:
        rope = "decoupled"
    if rope != "decoupled" or draw(st.booleans()):
        kw["rope"] = rope
    for key, values in (("absorbed", st.booleans()), ("base", bases),
                        ("layout", st.sampled_from(["interleaved", "half"]))):
        if draw(st.booleans()):
            kw[key] = draw(values)
    return kw


MLA_SIZES = {"d_model": 16, "n_heads": 2, "kv_lora_rank": 8,
             "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 3}
MLA = _mla_weights(0, **MLA_SIZES)
MLA_Q = _mla_weights(1, **MLA_SIZES, q_lora_rank=6)
MLA_X = np.random.default_rng(2).normal(size=(3, 16))


# ---- chapter 11 (kv cache, padding, packing, layouts)


@st.composite
def kv_kw(draw):
    kind = draw(st.sampled_from(["mha", "gqa", "mqa", "mla"]))
    kw = {"kind": kind, "n_layers": draw(ints(1, 100))}
    if draw(st.booleans()):
        kw["tokens"] = draw(st.one_of(ints(0, 40), ints(0, 10**7)))
    if draw(st.booleans()):
        kw["bytes_per_value"] = draw(st.one_of(
            ints(1, 4), st.sampled_from([0.5, 2.0, np.float32(0.5), 1]),
            reals(1e-3, 8.0).filter(lambda v: v > 0)))
    if kind == "mla":
        kw["kv_lora_rank"] = draw(ints(1, 1024))
        kw["qk_rope_head_dim"] = draw(ints(0, 128))
        for name in ("n_heads", "head_dim"):  # not used, may be given
            if draw(st.booleans()):
                kw[name] = draw(ints(1, 64))
        return kw
    kw["head_dim"] = draw(ints(1, 256))
    if kind == "gqa":
        kw["n_kv_heads"] = draw(ints(1, 8))
        kw["n_heads"] = type(kw["n_kv_heads"])(
            int(kw["n_kv_heads"]) * draw(st.integers(1, 8)))
    elif kind == "mha":
        kw["n_heads"] = draw(ints(1, 64))
        if draw(st.booleans()):
            kw["n_kv_heads"] = np.int64(kw["n_heads"])
    else:
        if draw(st.booleans()):
            kw["n_heads"] = draw(ints(1, 64))
        if draw(st.booleans()):
            kw["n_kv_heads"] = draw(ints(1, 1))
    return kw


def zero_one_masks():
    @st.composite
    def draw_mask(draw):
        batch = draw(st.one_of(st.none(), st.integers(1, 3)))
        n = draw(st.integers(0, 6))
        size = n if batch is None else batch * n
        a = np.asarray(draw(st.lists(st.integers(0, 1), min_size=size,
                                     max_size=size)), dtype=np.int64)
        a = a.reshape(n) if batch is None else a.reshape(batch, n)
        return draw(st.sampled_from([a, a.astype(bool), a.astype(float),
                                     a.astype(np.int8), a.tolist()]))

    return draw_mask()


ids_62 = st.one_of(ints(-5, 5), st.sampled_from([2**62, -(2**62)]))


def lengths_strategy():
    return st.lists(st.integers(1, 5), min_size=1, max_size=5).flatmap(
        lambda v: st.sampled_from([v, tuple(v), np.asarray(v),
                                   np.asarray(v, dtype=float),
                                   np.asarray(v, dtype=np.int32)]))


@st.composite
def packed_ids_kw(draw):
    batch = draw(st.one_of(st.none(), st.integers(1, 3)))
    n = draw(st.integers(1, 8))
    rows = []
    for _ in range(1 if batch is None else batch):
        first = draw(st.one_of(st.integers(-3, 10),
                               st.sampled_from([2**53 - 16, 30 - 2**53])))
        steps = draw(st.lists(st.sampled_from([1, 1, 1, 0, 2, -4, -1]),
                              min_size=n - 1, max_size=n - 1))
        row = [first]
        for step in steps:
            row.append(row[-1] + step)
        rows.append(row)
    a = np.asarray(rows, dtype=np.int64)
    a = a.reshape(n) if batch is None else a
    forms = [a, a.tolist()] + (
        [a.astype(float)] if np.abs(a).max() < 2**50 else [])
    return {"position_ids": draw(st.sampled_from(forms))}


@st.composite
def rotary_rows_kw(draw):
    n_heads, d = draw(ints(1, 3)), int(draw(evens(2, 8)))
    rows = int(n_heads) * d
    cols = draw(st.one_of(st.none(), st.integers(0, 3)))
    w = draw(matrix(rows, 1 if cols is None else cols, 10.0))
    w = w.reshape(rows) if cols is None else w
    forms = [w, w.astype(np.float32), np.round(w).astype(np.int64)] + (
        [w.tolist()] if w.size else [])
    return {"w": draw(st.sampled_from(forms)), "n_heads": n_heads}


@st.composite
def position_layout_kw(draw):
    """A config: heads by head_dim or hidden_size / num_attention_heads,
    RoPE with a scaling as rope_frequencies', NoPE layers by list or
    interval, layer types or Llama 4's chunks, or ALiBi."""
    n = draw(st.integers(1, 6))
    heads = draw(st.integers(1, 4))
    d = draw(evens(2, 16))
    config = {"num_hidden_layers": draw(st.sampled_from([n, np.int64(n)]))}
    if draw(st.booleans()):
        config["head_dim"] = d
    else:
        config.update(hidden_size=int(d) * heads, num_attention_heads=heads)
    if draw(st.booleans()):
        config["rope_theta"] = draw(bases)
    scaling = draw(st.one_of(st.none(), scaling_dicts(int(d))))
    if scaling is not None:
        config["rope_scaling"] = scaling
    if draw(st.booleans()):
        config["alibi"] = True
        config["num_attention_heads"] = heads
        return {"config": config}
    nope = draw(st.sampled_from(["none", "list", "interval"]))
    if nope == "list":
        config["no_rope_layers"] = draw(st.lists(
            st.sampled_from([0, 1, True, False]), min_size=n, max_size=n))
    elif nope == "interval":
        config["no_rope_layer_interval"] = draw(ints(1, 4))
    if nope != "none" and draw(st.booleans()):
        config["attn_temperature_tuning"] = True
        if draw(st.booleans()):
            config["floor_scale"] = draw(reals(1.0, 1e5))
            config["attn_scale"] = draw(reals(0.0, 1.0))
    if draw(st.booleans()):
        config["layer_types"] = draw(st.lists(st.sampled_from(
            ["full_attention", "sliding_attention", "chunked_attention"]),
            min_size=n, max_size=n))
        config["sliding_window"] = draw(ints(1, 10**6))
        config["attention_chunk_size"] = draw(ints(1, 10**6))
    elif draw(st.booleans()):
        config["attention_chunk_size"] = draw(ints(1, 10**6))
    return {"config": config}


VALID = {
    "frequencies": frequencies_kw(),
    "wavelengths": frequencies_kw(),
    "sinusoidal_encoding": sinusoidal_kw(),
    "relative_shift_matrix": shift_kw(),
    "binary_encoding": binary_kw(),
    "self_attention": attention_kw(),
    "apply_rope": rope_kw(),
    "t5_relative_position_bucket": t5_kw(),
    "alibi_slopes": st.fixed_dictionaries({"n_heads": ints(1, 300)}),
    "alibi_bias": st.fixed_dictionaries({"n": ints(0, 12),
                                         "n_heads": ints(1, 12)}),
    "relative_positions": st.fixed_dictionaries(
        {"n": ints(0, 12), "max_distance": st.one_of(st.none(),
                                                     ints(0, 15))}),
    "rope_frequencies": rope_frequencies_kw(),
    "yarn_attention_scale": st.fixed_dictionaries(
        {"factor": reals(1.0, 1e12)}),
    "partial_rope_frequencies": partial_kw(),
    "rope_attention_factor": st.fixed_dictionaries({"scaling": st.one_of(
        st.none(), evens(2, 64).flatmap(scaling_dicts))}),
    "nope_attention_temperature": nope_kw(),
    "rope_supported_length": st.fixed_dictionaries(
        {"base": st.one_of(reals(1.001, 1e4), st.sampled_from([10000, 2])),
         "head_dim": evens(2, 16)},
        optional={"max_length": ints(1, 3000)}),
    "rope_base_lower_bound": st.one_of(
        st.fixed_dictionaries({"length": ints(1, 24),
                               "head_dim": evens(4, 8)}),
        st.fixed_dictionaries({"length": ints(1, 2), "head_dim": evens(2, 2)})),
    "rope_decay_bound": decay_kw(),
    "rope_layout_permutation": st.fixed_dictionaries(
        {"head_dim": evens(2, 512)}),
    "round_significand": round_kw(),
    "shaw_attention": attention_kw(shaw=True),
    # chapter 9
    "apply_rope_angles": rope_angles_kw(),
    "sincos_2d_encoding": sincos_2d_kw(),
    "rope_axial_angles": axial_kw(),
    "rope_mixed_frequencies": mixed_freqs_kw(),
    "rope_mixed_angles": mixed_angles_kw(),
    "normalized_patch_coordinates": st.fixed_dictionaries(
        {"height": ints(1, 6), "width": ints(1, 6),
         "normalize": st.sampled_from(["separate", "max", "min"])}),
    "augment_coordinates": augment_kw(),
    "sample_coordinate_augmentation": sample_aug_kw(),
    "dinov3_rope_angles": axial_kw(),
    "mrope_position_ids": mrope_ids_kw(),
    "mrope_pair_axes": mrope_section_kw(),
    "mrope_angles": mrope_angles_kw(),
    # chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)
    "roberta_position_ids": roberta_kw(),
    "streaming_cache": streaming_kw(),
    "streaming_positions": streaming_kw(positions=True),
    "softmax_with_sink": sink_kw().filter(_no_empty_row),
    "rope_stale_key_angles": stale_kw(),
    "mla_params": mla_params_kw(),
    "mla_attention_logits": mla_logits_kw(),
    # chapter 11 (kv cache, padding, packing, layouts)
    "kv_cache_bytes": kv_kw(),
    "position_ids_from_attention_mask": st.fixed_dictionaries(
        {"attention_mask": zero_one_masks()},
        optional={"fill_value": ids_62}),
    "packed_position_ids": st.fixed_dictionaries(
        {"lengths": lengths_strategy()}, optional={"start": ids_62}),
    "packed_sequence_indices": packed_ids_kw(),
    "packed_attention_mask": st.fixed_dictionaries(
        {"lengths": lengths_strategy()},
        optional={"causal": st.sampled_from([True, False, np.True_,
                                             np.False_])}),
    "permute_rotary_half": rotary_rows_kw(),
    "unpermute_rotary_half": rotary_rows_kw(),
    # chapter 10: a model's layers
    "position_layout": position_layout_kw(),
}

# Absolute tolerance against the reference: trigonometric results at
# positions up to 1e6 carry ~1e-10 of rounding in the angle.
ATOL = {"yarn_attention_scale": 1e-12}


def test_every_public_function_is_fuzzed():
    assert set(pc.__all__) == set(VALID) == set(REFERENCES)


def test_every_parameter_has_a_bad_value_catalogue():
    for name in pc.__all__:
        params = set(inspect.signature(getattr(pc, name)).parameters)
        assert params == set(BAD[name]), name


def _call(name, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning is a failure here
        return getattr(pc, name)(**kw)


def _parts(got, want=None):
    """A result as a tuple of parts: a dict's values (mla_params), after
    checking its keys are the reference's, in the same order; a list of
    layer dicts (position_layout) as :func:`_layout_parts` gives it."""
    if isinstance(got, list):  # position_layout's layers
        return _layout_parts(got)
    if isinstance(got, dict):
        if want is not None:
            assert list(got) == list(want)
        return tuple(got.values())
    return got if isinstance(got, tuple) else (got,)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_input_matches_loop_reference(name):
    @FUZZ
    @given(VALID[name])
    def check(kw):
        got = _call(name, kw)
        want = REFERENCES[name](**kw)
        for g, w in zip(_parts(got, want), _parts(want), strict=True):
            if g is None:  # mla_params' q_lora_rank
                assert w is None
                continue
            if isinstance(g, float):
                assert g == pytest.approx(w, rel=1e-12)
                continue
            if type(g) is int:  # a count (rope_supported_length)
                assert g == w
                continue
            assert isinstance(g, (np.ndarray, np.generic))
            assert g.shape == np.shape(w)
            if np.asarray(w).dtype == bool:  # a mask
                assert g.dtype == bool
                np.testing.assert_array_equal(g, w)
            elif np.issubdtype(np.asarray(w).dtype, np.integer):
                assert g.dtype == np.int64
                np.testing.assert_array_equal(g, w)
            else:
                assert g.dtype == np.float64
                assert np.all(np.isfinite(g))
                np.testing.assert_allclose(
                    g, w, rtol=1e-9, atol=ATOL.get(name, 1e-8))

    check()


# ---------------------------------------------------- invalid arguments
# For each function and argument, values that break the docstring's
# contract whatever the other (valid) arguments are.

NAN, INF = float("nan"), float("inf")
NOT_A_NUMBER = [None, "8", b"8", 2 + 1j, [8], {}, object(), NAN, INF, -INF,
                True, np.array([2.0, 4.0])]
BAD_EVEN = [*NOT_A_NUMBER, 0, -2, 3, 7, 8.0, np.float64(8), np.int64(-4),
            10**30]
BAD_BASE = [*NOT_A_NUMBER, 1, 1.0, 0.99, 0, -10, np.float32(1.0), 10**400]
BAD_REAL = [None, "1", 1j, [1.0], {}, NAN, INF, -INF, True, np.array(1.0)]
BAD_COUNT = [None, "3", 1j, [3], NAN, INF, -1, 2.5, 3.0, True, -(10**30),
             10**30]
BAD_BOOL = [None, "yes", 0.5, 2, -1, [True], NAN, np.array([True, False])]
BAD_POSITIONS = [None, "abc", b"1", 2.5, NAN, -1, 10**30, [[0.0, 1.0]],
                 [NAN], [INF, 0.0], [-INF], [True, False], ["a"], [1j],
                 [[1], [1, 2]], {}, {1: 2}, object(), np.array(3.0),
                 np.zeros((2, 2)), np.array([1 + 1j]), np.array([1, None])]
BAD_ARRAY = [None, "abc", 1.0, NAN, [[NAN, 0.0]], [[INF, 1.0]],
             [[True, False]], [["a", "b"]], [[1j, 0]], [[1], [1, 2]], {},
             object(), np.zeros(0)]
BAD_LAYOUT = [None, "", "Interleaved", "half ", 0, b"half", ["half"],
              np.array(["half", "concat"])]
BAD_SCALING = [
    "linear", 2.0, ["linear"], {}, {"type": "foo", "factor": 2},
    {"type": "linear"}, {"type": "linear", "factor": 0.5},
    {"type": "linear", "factor": NAN}, {"type": "linear", "factor": INF},
    {"type": "linear", "factor": "2"}, {"type": "linear", "factor": True},
    {"type": "linear", "factor": 2, "extra": 1},
    {"type": "yarn", "factor": 2},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 0},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": -5},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 64,
     "beta_fast": 1, "beta_slow": 32},
    {"type": "llama3", "factor": 8, "original_max_position_embeddings": 64,
     "low_freq_factor": 4, "high_freq_factor": 1},
    {"type": "llama3", "factor": 8, "original_max_position_embeddings": NAN},
    {"type": "default", "factor": 2},
    {"type": "default", "partial_rotary_factor": 1.5},
    {"type": "default", "partial_rotary_factor": -0.1},
    {"type": "default", "partial_rotary_factor": NAN},
    {"type": "default", "partial_rotary_factor": "0.5"},
    {"type": ["yarn"]}, {"type": None}, {"rope_type": 3},
    {"type": "proportional", "factor": 0.5},
    {"type": "dynamic", "factor": 2},
    {"type": "dynamic", "factor": 2, "max_position_embeddings": 0},
    {"type": "dynamic", "factor": 2, "max_position_embeddings": 64,
     "seq_len": -1},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 64,
     "truncate": "no"},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 64,
     "truncate": 1},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 64,
     "mscale": -1},
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 64,
     "attention_factor": 0},
    {"type": "longrope"},
    {"type": "longrope", "short_factor": [1.0] * 4,
     "original_max_position_embeddings": 64},
    {"type": "longrope", "short_factor": [0.0] * 4, "long_factor": [1.0] * 4,
     "original_max_position_embeddings": 64},
    {"type": "longrope", "short_factor": [NAN] * 4, "long_factor": [1.0] * 4,
     "original_max_position_embeddings": 64},
    {"type": "longrope", "short_factor": "1111", "long_factor": [1.0] * 4,
     "original_max_position_embeddings": 64},
    {"type": "longrope", "short_factor": [[1.0] * 4],
     "long_factor": [1.0] * 4, "original_max_position_embeddings": 64},
]
# refused by rope_frequencies only (the frequencies cannot be computed;
# rope_attention_factor, which needs no head, accepts them)
BAD_SCALING_FREQUENCIES = [
    {"type": "ntk", "factor": 1e300},  # the new base would overflow
    # head_dim 8: two rotated dimensions are too few for NTK
    {"type": "ntk", "factor": 2, "partial_rotary_factor": 0.25},
    {"type": "dynamic", "factor": 2, "max_position_embeddings": 64,
     "partial_rotary_factor": 0.25},
    # three rotated dimensions: YaRN's ramp needs an even width
    {"type": "yarn", "factor": 2, "original_max_position_embeddings": 64,
     "partial_rotary_factor": 0.375},
    # four pairs need four stretches
    {"type": "longrope", "short_factor": [1.0] * 3, "long_factor": [1.0] * 4,
     "original_max_position_embeddings": 64},
    {"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [1.0] * 5,
     "original_max_position_embeddings": 64, "seq_len": 100},
]
BAD_SCALING_ATTENTION = [
    {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0],
     "original_max_position_embeddings": 64},  # no factor, no length
    {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0],
     "original_max_position_embeddings": 1, "factor": 2},  # ln 1 = 0
    {"type": "yarn", "factor": 1e300, "original_max_position_embeddings": 64,
     "mscale": 1e308, "mscale_all_dim": 1},  # overflows
]


BAD_SECTION = [None, "abc", 3, {}, np.array(2), [1, 2], [1, 2, 3, 4],
               [-1, 2, 3], [1.5, 2, 3], [0, 0, 0], [True, 1, 1],
               np.array([1.0, 2.0, 3.0]), [[1], [2], [3]]]


BAD_COORDS = [None, "abc", 1.0, NAN, [1.0, 2.0], [[1.0, 2.0, 3.0]],
              [[NAN, 0.0]], [[INF, 1.0]], [[True, False]], [["a", "b"]],
              [[1j, 0]], [[1], [1, 2]], {}, object(), np.zeros((2, 2, 2))]


BAD_FREQUENCIES = ["x", 1.0, [-1.0] * 2, [NAN] * 2, [INF] * 2,
                   [[1.0, 1.0]], [1.0] * 3, [1.0], [True, False], [1j, 1j],
                   {}]


# chapter 11 (kv cache, padding, packing, layouts)
BAD_LENGTHS = [None, "abc", b"3", 3, np.int64(3), 2.5, [], [0], [-1], [2, 0],
               [1.5], [NAN], [INF], [True], [[1, 2]], [[1], [1, 2]], {},
               object(), np.zeros(0), np.array(3), [1j], ["a"],
               np.array([1, None])]
BAD_ID = [None, "0", b"0", 1.0, 0.5, NAN, INF, True, [0], np.float64(1),
          2**62 + 1, -(2**62) - 1, 10**30]
BAD_ROWS = [None, "abc", 1.0, NAN, [NAN] * 8, [[INF, 1.0, 1.0]] * 8,
            [True] * 8, ["a"] * 8, [1j] * 8, [[1], [1, 2]], {}, object(),
            np.zeros(0), np.zeros((0, 3)), np.zeros(5), np.zeros((6, 3)),
            np.zeros((2, 2, 2)), np.zeros((2, 4, 3))]
_LAYOUT_BASE = {"num_hidden_layers": 4, "head_dim": 8,
                "no_rope_layers": [1, 1, 1, 0],
                "layer_types": ["sliding_attention", "full_attention",
                                "chunked_attention", "full_attention"],
                "sliding_window": 16, "attention_chunk_size": 32}
BAD_LAYOUT_CONFIG = [None, "config", 3, [("num_hidden_layers", 2)],
                     object()] + [{**_LAYOUT_BASE, **change} for change in (
    {"num_hidden_layers": 0}, {"num_hidden_layers": 2.5},
    {"num_hidden_layers": None}, {"num_hidden_layers": 3},  # lists of 4
    {"head_dim": 7}, {"head_dim": "8"}, {"head_dim": -2},
    {"head_dim": None, "hidden_size": 10, "num_attention_heads": 3},
    {"head_dim": None, "hidden_size": 8},
    {"rope_theta": 1.0}, {"rope_theta": NAN}, {"rope_theta": "1e4"},
    {"rope_scaling": "linear"}, {"rope_scaling": {"type": "linear"}},
    {"rope_scaling": {"type": "quadratic", "factor": 2}},
    {"rope_scaling": {"rope_type": ["linear"], "factor": 2}},
    {"rope_scaling": {"rope_type": np.array(["linear", "yarn"]),
                      "factor": 2}},
    {"rope_scaling": {"type": "linear", "factor": 0.5}},
    {"rope_parameters": [10000.0]},
    {"rope_parameters": {"full_attention": {"rope_theta": 1e4}}},
    {"partial_rotary_factor": 1.5},
    {"no_rope_layers": [1, 1, 2, 0]}, {"no_rope_layers": [1, 1]},
    {"no_rope_layers": "1110"}, {"no_rope_layers": [1, 1, 0.5, 0]},
    {"no_rope_layers": None, "no_rope_layer_interval": 0},
    {"layer_types": ["full_attention"] * 3},
    {"layer_types": ["linear_attention"] * 4}, {"layer_types": "full"},
    {"sliding_window": 0}, {"sliding_window": None},
    {"attention_chunk_size": 1.5},
    {"position_embedding_type": "absolute"},
    {"alibi": True, "num_attention_heads": 0},
    {"attn_temperature_tuning": True, "floor_scale": 0},
    {"attn_temperature_tuning": True, "attn_scale": -1.0},
    {"global_head_dim": 5},
)]


BAD = {
    "frequencies": {"d_model": BAD_EVEN, "base": BAD_BASE},
    "wavelengths": {"d_model": BAD_EVEN, "base": BAD_BASE},
    "sinusoidal_encoding": {"positions": BAD_POSITIONS, "d_model": BAD_EVEN,
                            "base": BAD_BASE,
                            "layout": [*BAD_LAYOUT, "half"]},
    "relative_shift_matrix": {"delta": BAD_REAL, "d_model": BAD_EVEN,
                              "base": BAD_BASE},
    "binary_encoding": {
        "positions": [*BAD_POSITIONS, [1.5], [-1], [2**70], [2.0**60]],
        "n_bits": [*BAD_COUNT, 0, 64, 10**9]},
    "self_attention": {"x": BAD_ARRAY + [[1.0, 2.0]],
                       "w_q": BAD_ARRAY + [np.zeros((5, 2))],
                       "w_k": BAD_ARRAY + [np.zeros((5, 2))],
                       "w_v": BAD_ARRAY + [np.zeros((5, 2))],
                       "bias": BAD_ARRAY[1:] + [np.zeros((7, 7)), [[INF]],
                                            np.ones((2, 2), dtype=bool),
                                            np.full((2, 2), 1j)],
                       "causal": BAD_BOOL},
    "apply_rope": {"x": [*BAD_ARRAY, [1.0, 2.0], np.zeros((2, 3)),
                         np.zeros((2, 0)), np.zeros((5, 2))],
                   "positions": BAD_POSITIONS, "base": BAD_BASE,
                   "layout": [*BAD_LAYOUT, "concat"],
                   "frequencies": BAD_FREQUENCIES},
    "t5_relative_position_bucket": {
        "relative_position": [None, "3", 1.5, NAN, INF, [1.5], [NAN],
                              [True], [2**60], [1j], [[1], [1, 2]], {},
                              object()],
        "bidirectional": BAD_BOOL,
        "num_buckets": [*BAD_COUNT, 1, 2**200],
        "max_distance": [*BAD_COUNT[:-1], 0, 1, 8, 10**400]},
    "alibi_slopes": {"n_heads": [*BAD_COUNT, 0]},
    "alibi_bias": {"n": BAD_COUNT, "n_heads": [*BAD_COUNT, 0]},
    "relative_positions": {"n": BAD_COUNT,
                           "max_distance": BAD_COUNT[1:-1]},
    "rope_frequencies": {"head_dim": BAD_EVEN, "base": BAD_BASE,
                         "scaling": [*BAD_SCALING,
                                     *BAD_SCALING_FREQUENCIES]},
    "rope_attention_factor": {"scaling": [*BAD_SCALING,
                                          *BAD_SCALING_ATTENTION]},
    "yarn_attention_scale": {"factor": [*BAD_REAL, 0.5, 0, -2]},
    "partial_rope_frequencies": {
        "head_dim": BAD_EVEN, "fraction": [*BAD_REAL, -0.1, 1.5, 2, -1e-300],
        "base": BAD_BASE,
        "convention": [None, "", "Spread", "half", "p-rope", 0, b"spread",
                       np.array(["spread", "proportional"]),
                       ["spread"]]},
    "rope_supported_length": {
        "base": BAD_BASE, "head_dim": BAD_EVEN,
        "max_length": [*BAD_COUNT, 0, 2**24 + 1]},
    "rope_base_lower_bound": {
        "length": [*BAD_COUNT, 0, 2**17 + 1], "head_dim": BAD_EVEN},
    "nope_attention_temperature": {
        "positions": [*BAD_POSITIONS, [-1.0], [0, -3], [0.0, -1e-9]],
        "floor_scale": [*BAD_REAL, 0, 0.0, -1, -8192],
        "attn_scale": [*BAD_REAL, -0.1, -1]},
    "rope_decay_bound": {"distances": BAD_POSITIONS, "head_dim": BAD_EVEN,
                         "base": BAD_BASE,
                         "frequencies": BAD_FREQUENCIES},
    "rope_layout_permutation": {"head_dim": BAD_EVEN},
    "round_significand": {
        "x": [None, "1", NAN, INF, [1.0, NAN], [[INF]], [True], [1j],
              [[1], [1, 2]], {}, object(), [1.7976931348623157e308]],
        "bits": [*BAD_COUNT, 0, 54]},
    "shaw_attention": {
        "x": BAD_ARRAY + [[1.0, 2.0]],
        "w_q": BAD_ARRAY + [np.zeros((5, 2))],
        "w_k": BAD_ARRAY + [np.zeros((5, 2))],
        "w_v": BAD_ARRAY + [np.zeros((5, 2))],
        "table_k": BAD_ARRAY + [np.zeros((2, 2)), np.zeros((3, 5))],
        "table_v": BAD_ARRAY[1:] + [np.zeros((5, 1)), np.zeros((2, 2))],
        "causal": BAD_BOOL},
    # chapter 9
    "apply_rope_angles": {
        "x": [*BAD_ARRAY, [1.0, 2.0], np.zeros((2, 3)), np.zeros((2, 0)),
              np.zeros((5, 4))],
        "angles": [*BAD_ARRAY[:-1], np.zeros((3, 3)), np.zeros((2, 2)),
                   np.zeros(2), np.zeros((4, 2, 2))],
        "layout": [*BAD_LAYOUT, "concat"]},
    "sincos_2d_encoding": {"height": [*BAD_COUNT, 0], "width": [*BAD_COUNT, 0],
                           "d": [*BAD_EVEN, 2, 6], "base": BAD_BASE,
                           "layout": [*BAD_LAYOUT, "interleaved", "MAE"]},
    "rope_axial_angles": {"coords": BAD_COORDS, "head_dim": [*BAD_EVEN, 2, 6],
                          "base": BAD_BASE},
    "rope_mixed_frequencies": {"head_dim": [*BAD_EVEN, 2, 6],
                               "n_heads": [*BAD_COUNT, 0],
                               "base": BAD_BASE,
                               "rng": [-1, 2.5, "0", NAN, [0], {}, True]},
    "rope_mixed_angles": {"coords": BAD_COORDS,
                          "freqs": [*BAD_ARRAY, np.zeros((2, 2)),
                                    np.zeros((1, 2, 3)), np.zeros((0, 2, 2)),
                                    np.zeros((1, 0, 2)), [[[NAN, 0.0]]]]},
    "normalized_patch_coordinates": {
        "height": [*BAD_COUNT, 0], "width": [*BAD_COUNT, 0],
        "normalize": [*BAD_LAYOUT, "mean", "Separate"]},
    "augment_coordinates": {
        "coords": BAD_COORDS,
        "shift": [None, "ab", 1.0, [1.0], [1.0, 2.0, 3.0], [NAN, 0.0],
                  [INF, 0.0], [True, False], {}, [[0.0, 0.0]]],
        "jitter": [None, "ab", 1.0, [1.0], [0.0, 1.0], [-1.0, 1.0],
                   [NAN, 1.0], [1.0, INF], {}],
        "rescale": [*BAD_REAL, 0.0, -1.0]},
    "sample_coordinate_augmentation": {
        "rng": [None, -1, 2.5, "0", NAN, [0], {}, True],
        "shift": [*BAD_REAL[1:], -0.1],
        "jitter": [*BAD_REAL[1:], 0.5, 0, -2],
        "rescale": [*BAD_REAL[1:], 0.99, 0, -2]},
    "dinov3_rope_angles": {"coords": BAD_COORDS,
                           "head_dim": [*BAD_EVEN, 2, 6], "base": BAD_BASE},
    "mrope_position_ids": {
        "segments": [None, "abc", 3, 2.5, {}, object(), np.array(3),
                     [-1], [2.5], [True], [("text",)], [("text", -1)],
                     [("text", 1.5)], [("audio", 3)], [(b"text", 2)],
                     [np.array(["text"])], [[]], [("image",)],
                     [("image", (1, 3, 4))], [("image", (0, 2, 2))],
                     [("image", (1, 2))], [("image", (1, 2, 2), 1.0)],
                     [("image", "122")], [("image", (1.0, 2, 2))],
                     [("video", (1, 2, 2), -1.0)], [("video", (1, 2, 2), NAN)],
                     [("video", (1, 2, 2), INF)], [("video", (1, 2, 2), "1")],
                     [("video", (1, 2, 2), 1.0, 2)],
                     [("video", np.ones((3, 1), dtype=int))]],
        "spatial_merge_size": [*BAD_COUNT, 0, 3],
        "variant": [*BAD_LAYOUT, "qwen2_vl", "Qwen2-VL"],
        "tokens_per_second": [*BAD_REAL, -1.0],
        "next_text": [*BAD_LAYOUT, "max"]},
    "mrope_pair_axes": {"mrope_section": BAD_SECTION,
                        "layout": [*BAD_LAYOUT, "half"]},
    "mrope_angles": {
        "position_ids": [*BAD_ARRAY, [[1, 2]], np.zeros((2, 3)),
                         np.zeros((3, 2, 2)), np.zeros(3)],
        "head_dim": [*BAD_EVEN, 10, 4],
        "mrope_section": BAD_SECTION + [[2, 2, 2]],
        "base": BAD_BASE, "layout": [*BAD_LAYOUT, "half"]},
    # chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)
    "roberta_position_ids": {
        "input_ids": [None, "abc", b"1", 3, 2.5, NAN, [1.5], [NAN], [INF],
                      [True, False], ["a"], [1j], [[1], [1, 2]], {},
                      object(), np.zeros((1, 1, 1)), [2.0**60],
                      np.array([1, None])],
        "padding_idx": [*BAD_COUNT, 2**53 + 1, np.uint64(2**63)],
        "past_key_values_length": [*BAD_COUNT, 2**53 + 1]},
    # window 10**30 > n_sinks is valid; n_sinks >= window is not
    "streaming_cache": {"length": [*BAD_COUNT, 2**63],
                        "window": [*BAD_COUNT[:-1], 0, 1, 2],
                        "n_sinks": [*BAD_COUNT, 6, 7]},
    "streaming_positions": {"length": [*BAD_COUNT, 2**63],
                            "window": [*BAD_COUNT[:-1], 0, 1, 2],
                            "n_sinks": [*BAD_COUNT, 6, 7],
                            "positions": [*BAD_LAYOUT, "Cache", "stream",
                                          "original "]},
    "softmax_with_sink": {
        "scores": [None, "abc", b"1", 1.0, NAN, [NAN], [INF], [0.0, INF],
                   [[1], [1, 2]], [True], ["a"], [1j], {}, object(),
                   np.zeros((2, 0)), np.zeros(0), np.array([1, None]),
                   [10**400, 0], np.zeros((3, 3)),
                   [[0.0, 1.0, 2.0], [-INF, -INF, -INF]]],
        "sink_logits": [None, "1", b"1", 1j, NAN, INF, [NAN, 0.0],
                        [INF, 0.0], [0.0, 0.0, 0.0], np.zeros((3, 1)),
                        np.zeros((2, 2)), [True, False], {}, object(),
                        ["a", "b"], [[1], [1, 2]], 10**400]},
    # a seq_len of the scaling's own is replaced here, so it is no bad value
    "rope_stale_key_angles": {
        "key_positions": BAD_POSITIONS, "head_dim": BAD_EVEN,
        "base": BAD_BASE,
        "scaling": [None, *(v for v in [*BAD_SCALING,
                                         *BAD_SCALING_FREQUENCIES]
                            if not (isinstance(v, dict) and "seq_len" in v)),
                    {"type": np.array(["longrope", "dynamic"]), "factor": 2},
                    {"type": ["dynamic"], "factor": 2}],
        "cached_length": [*BAD_COUNT[:-1], 0, 10**400],
        "length": [*BAD_COUNT[:-1], 0, 10**400]},
    # 10**30 widths: refused for the result's size
    "mla_params": {
        "rng": [None, -1, 2.5, "0", NAN, [0], {}, True, np.float64(1)],
        "d_model": [*BAD_COUNT, 0], "n_heads": [*BAD_COUNT, 0],
        "kv_lora_rank": [*BAD_COUNT, 0], "qk_nope_head_dim": BAD_COUNT,
        "qk_rope_head_dim": [*BAD_COUNT, 1, 3, np.int64(-2)],
        "v_head_dim": [*BAD_COUNT, 0], "q_lora_rank": [*BAD_COUNT[1:], 0]},
    "mla_attention_logits": {
        "x": [*BAD_ARRAY, [1.0, 2.0], np.zeros((3, 5)), np.zeros((2, 16)),
              np.zeros((3, 16, 1))],
        "positions": [*BAD_POSITIONS, 2, [0.0, 1.0]],
        "params": [None, "abc", [], 3, {}, MLA_Q["q_a_proj.weight"],
                   *(dict(MLA_Q, **{k: v}) for k, v in [
                       ("n_heads", 2.0), ("n_heads", -1), ("n_heads", 3),
                       ("n_heads", None), ("kv_lora_rank", None),
                       ("kv_lora_rank", 0), ("qk_nope_head_dim", True),
                       ("qk_rope_head_dim", 3), ("qk_rope_head_dim", -2),
                       ("v_head_dim", 0), ("v_head_dim", "3"),
                       ("q_lora_rank", 4), ("q_lora_rank", "6"),
                       ("q_lora_rank", 0), ("q_a_proj.weight", "abc"),
                       ("q_b_proj.weight", np.zeros((12, 5))),
                       ("kv_a_layernorm.weight", np.full(8, NAN)),
                       ("kv_b_proj.weight", np.zeros((3, 3))),
                       ("kv_a_proj_with_mqa.weight", None)]),
                   dict(MLA_Q, qk_nope_head_dim=0, qk_rope_head_dim=0),
                   {k: v for k, v in MLA_Q.items() if k != "kv_b_proj.weight"},
                   {k: v for k, v in MLA_Q.items() if k != "n_heads"}],
        "absorbed": BAD_BOOL, "base": BAD_BASE,
        "layout": [*BAD_LAYOUT, "concat"],
        "rope": [*BAD_LAYOUT, "Decoupled", "rotary"]},
    # chapter 11 (kv cache, padding, packing, layouts)
    "kv_cache_bytes": {
        "kind": [*BAD_LAYOUT, "GQA", "mha ", "mhla"],
        "n_layers": [*BAD_COUNT, 0],
        # (any number of heads, 10**30 too, shares n_kv_heads groups)
        "n_heads": [*BAD_COUNT[:-1], 0, 7, np.float64(8)],
        "head_dim": [*BAD_COUNT, 0],
        "n_kv_heads": [*BAD_COUNT, 0, 3, 16, np.array([2, 2])],
        # None is the base call's (gqa) value; any other is refused there
        "kv_lora_rank": [*BAD_COUNT[1:], 0, 512],
        "qk_rope_head_dim": [*BAD_COUNT[1:], 64],
        "tokens": BAD_COUNT,
        "bytes_per_value": [*BAD_REAL, 0, 0.0, -1, -0.5, 1e308]},
    "position_ids_from_attention_mask": {
        "attention_mask": [None, "abc", b"1", 1, True, np.array(1), [2],
                           [-1], [0.5], [NAN], [INF], [1j], ["1"],
                           [[1], [1, 0]], [[[1]]], np.zeros((2, 2, 2)),
                           {}, object(), np.array([1, None])],
        "fill_value": BAD_ID},
    "packed_position_ids": {"lengths": BAD_LENGTHS, "start": BAD_ID},
    "packed_sequence_indices": {
        "position_ids": [None, "abc", b"1", 1, 1.0, NAN, [], [[]],
                         np.zeros((2, 0)), [1.5], [NAN], [INF], [True],
                         [1j], ["a"], [[1], [1, 2]], [2.0**60],
                         np.zeros((2, 2, 2)), {}, object(),
                         np.array([1, None])]},
    "packed_attention_mask": {
        "lengths": BAD_LENGTHS,
        "causal": [*BAD_BOOL, 0, 1, np.int64(1), "True"]},
    "permute_rotary_half": {"w": BAD_ROWS,
                            "n_heads": [*BAD_COUNT, 0, 3, 8]},
    "unpermute_rotary_half": {"w": BAD_ROWS,
                              "n_heads": [*BAD_COUNT, 0, 3, 8]},
    # chapter 10: a model's layers; each bad config is the base call's
    # with one key changed
    "position_layout": {"config": BAD_LAYOUT_CONFIG},
}

# One valid call per function that the bad values are put into; chosen so
# that the catalogue's shapes ([1.0]*3 frequencies, (5, 2) weights) are
# wrong and its overflowing values ([1e300] frequencies, 1e300 tables)
# overflow.
BASE_CALL = {
    "frequencies": {"d_model": 8},
    "wavelengths": {"d_model": 8},
    "sinusoidal_encoding": {"positions": 3, "d_model": 8},
    "relative_shift_matrix": {"delta": 2, "d_model": 4},
    "binary_encoding": {"positions": [0, 5, 9], "n_bits": 4},
    "self_attention": {"x": np.eye(2), "w_q": np.eye(2), "w_k": np.eye(2),
                       "w_v": np.eye(2), "bias": np.zeros((2, 2))},
    "apply_rope": {"x": np.ones((3, 4)), "positions": [0, 1e3, 2.5]},
    "t5_relative_position_bucket": {"relative_position": [-3, 0, 40]},
    "alibi_slopes": {"n_heads": 4},
    "alibi_bias": {"n": 3, "n_heads": 2},
    "relative_positions": {"n": 4, "max_distance": 2},
    "rope_frequencies": {"head_dim": 8},
    "yarn_attention_scale": {"factor": 4},
    "partial_rope_frequencies": {"head_dim": 8, "fraction": 0.5},
    "rope_supported_length": {"base": 500.0, "head_dim": 16},
    "rope_base_lower_bound": {"length": 20, "head_dim": 8},
    "rope_attention_factor": {"scaling": {
        "type": "yarn", "factor": 8, "original_max_position_embeddings": 64}},
    "nope_attention_temperature": {"positions": [0, 5, 20],
                                   "floor_scale": 4},
    "rope_decay_bound": {"distances": [0, 1e3, -2.5], "head_dim": 4},
    "rope_layout_permutation": {"head_dim": 8},
    "round_significand": {"x": [1.0, 3.0], "bits": 8},
    "shaw_attention": {"x": np.ones((2, 2)), "w_q": np.eye(2),
                       "w_k": np.eye(2), "w_v": np.eye(2),
                       "table_k": np.ones((3, 2)),
                       "table_v": np.ones((3, 2))},
    # chapter 9
    "apply_rope_angles": {"x": np.ones((3, 4)), "angles": np.ones((3, 2))},
    "sincos_2d_encoding": {"height": 2, "width": 3, "d": 8},
    "rope_axial_angles": {"coords": [[0.0, 1.0], [2.0, 3.5]], "head_dim": 8},
    "rope_mixed_frequencies": {"head_dim": 8, "n_heads": 2, "rng": 0},
    "rope_mixed_angles": {"coords": [[0.0, 1.0], [2.0, 3.5]],
                          "freqs": np.ones((2, 4, 2))},
    "normalized_patch_coordinates": {"height": 2, "width": 3},
    "augment_coordinates": {"coords": [[0.0, 1.0], [2.0, 3.5]],
                            "shift": [0.1, 0.2], "jitter": [1.5, 0.5],
                            "rescale": 2.0},
    "sample_coordinate_augmentation": {"rng": 0, "shift": 0.1, "jitter": 2.0,
                                       "rescale": 2.0},
    "dinov3_rope_angles": {"coords": [[0.0, 1.0], [2.0, 3.5]], "head_dim": 8},
    "mrope_position_ids": {"segments": [2, ("image", (1, 4, 2)),
                                        ("video", (2, 2, 2), 0.5), 1],
                           "variant": "qwen2.5-vl"},
    "mrope_pair_axes": {"mrope_section": [1, 1, 2]},
    "mrope_angles": {"position_ids": [[0, 1, 2], [0, 1, 1], [0, 1, 5]],
                     "head_dim": 8, "mrope_section": [1, 1, 2]},
    # chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)
    "roberta_position_ids": {"input_ids": [[0, 5, 6, 2], [0, 5, 2, 1]],
                             "past_key_values_length": 3},
    "streaming_cache": {"length": 10, "window": 6, "n_sinks": 2},
    "streaming_positions": {"length": 10, "window": 6, "n_sinks": 2,
                            "positions": "original"},
    "softmax_with_sink": {"scores": [[0.0, 1.0, -INF], [2.0, -1.0, 0.5]],
                          "sink_logits": [0.5, -INF]},
    "rope_stale_key_angles": {
        "key_positions": [0, 3, 7.5, 100], "head_dim": 8,
        "scaling": {"type": "longrope", "short_factor": [1.0, 1.0, 1.5, 2.0],
                    "long_factor": [1.0, 2.0, 4.0, 8.0],
                    "original_max_position_embeddings": 64},
        "cached_length": 40, "length": 100},
    "mla_params": {"rng": 0, "d_model": 16, "n_heads": 2, "kv_lora_rank": 8,
                   "qk_nope_head_dim": 4, "qk_rope_head_dim": 2,
                   "v_head_dim": 3, "q_lora_rank": 6},
    "mla_attention_logits": {"x": MLA_X, "positions": [0.0, 2.5, 7.0],
                             "params": MLA_Q, "absorbed": True},
    # chapter 11 (kv cache, padding, packing, layouts)
    "kv_cache_bytes": {"kind": "gqa", "n_layers": 2, "n_heads": 8,
                       "head_dim": 4, "n_kv_heads": 2, "tokens": 3},
    "position_ids_from_attention_mask": {"attention_mask": [[0, 1, 1],
                                                            [1, 1, 1]],
                                         "fill_value": 1},
    "packed_position_ids": {"lengths": [3, 2], "start": 1},
    "packed_sequence_indices": {"position_ids": [[0, 1, 2, 0],
                                                 [5, 6, 0, 1]]},
    "packed_attention_mask": {"lengths": [2, 1], "causal": False},
    "permute_rotary_half": {"w": np.arange(24.0).reshape(8, 3),
                            "n_heads": 2},
    "unpermute_rotary_half": {"w": np.arange(24.0).reshape(8, 3),
                              "n_heads": 2},
    # chapter 10: a model's layers
    "position_layout": {"config": _LAYOUT_BASE},
}

CASES = [(name, param, i) for name in sorted(BAD)
         for param in sorted(BAD[name]) for i in range(len(BAD[name][param]))]


def _named(message, *params):
    """Does a refusal name one of ``params`` (or the result's size)?"""
    return any(p in message for p in (*params, "elements"))


def _expect_refusal(name, kw, param):
    with pytest.raises(ValueError) as info:
        _call(name, kw)
    message = str(info.value)
    assert _named(message, param), (name, param, message)
    return message


def _same(got, want):
    for g, w in zip(_parts(got, want), _parts(want), strict=True):
        if g is None or w is None:
            assert g is w
            continue
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-8)


def test_base_calls_are_valid():
    """The calls the bad values go into are valid: the loop reference's
    result, with no warning (so a refusal below is the bad value's)."""
    assert set(BASE_CALL) == set(pc.__all__)
    for name, kw in BASE_CALL.items():
        _same(_call(name, kw), REFERENCES[name](**kw))


@pytest.mark.parametrize("name, param, i", CASES,
                         ids=[f"{n}-{p}-{i}" for n, p, i in CASES])
def test_bad_argument_is_refused_with_its_name(name, param, i):
    kw = dict(BASE_CALL[name])
    kw[param] = BAD[name][param][i]
    _expect_refusal(name, kw, param)


@pytest.mark.parametrize("name", sorted(VALID))
def test_bad_argument_in_random_valid_call(name):
    """One bad argument put into random valid calls is still refused."""
    params = sorted(BAD[name])

    @FUZZ
    @given(VALID[name], st.sampled_from(params), st.data())
    def check(kw, param, data):
        bad = data.draw(st.sampled_from(BAD[name][param]), label="bad")
        kw = dict(kw, **{param: bad})
        try:
            got = _call(name, kw)
        except ValueError as err:  # a TypeError fails the test
            assert _named(str(err), param), (param, str(err))
            return
        # Accepted: then the bad value must have been valid here after all
        # (e.g. a shape that happens to fit); the result must be right.
        _same(got, REFERENCES[name](**kw))

    check()


junk = st.one_of(
    st.none(), st.booleans(), st.text(max_size=3), st.binary(max_size=2),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10**30, 10**30), st.complex_numbers(max_magnitude=10),
    st.lists(st.one_of(st.integers(-5, 5), st.floats(allow_nan=True)),
             max_size=4),
    st.lists(st.lists(st.floats(-3, 3), max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from([np.zeros((2, 2)), np.ones((1, 4)), np.arange(6.0),
                     np.zeros((1, 2, 2)), np.array([np.inf]),
                     np.array(["x"]), np.array([1 + 1j])]))


@pytest.mark.parametrize("name", sorted(VALID))
def test_junk_raises_only_value_error(name):
    """Any junk in any argument: a ValueError naming an argument, or a
    finite result."""
    params = list(inspect.signature(getattr(pc, name)).parameters)

    @FUZZ
    @given(st.fixed_dictionaries({p: junk for p in params}),
           st.sets(st.sampled_from(params)))
    def check(values, use):
        kw = dict(BASE_CALL[name])
        kw.update({p: values[p] for p in use})
        try:
            got = _call(name, kw)
        except ValueError as err:  # a TypeError fails the test
            # it names an argument: one given junk, or one the junk made
            # invalid (num_buckets=512 with the default max_distance)
            assert _named(str(err), *params), (sorted(use), str(err))
            return
        for g in _parts(got):
            if g is None:
                continue
            g = np.asarray(g)
            assert g.dtype in (np.float64, np.int64, np.bool_)
            assert np.all(np.isfinite(g))

    check()


# ------------------------------------------------------------ overflow
# Finite input whose exact result is beyond float64: refused, not inf/NaN.

OVERFLOW = [
    ("wavelengths", {"d_model": 1000, "base": 1.7e308}, "base"),
    ("rope_frequencies", {"head_dim": 4,
                          "scaling": {"type": "ntk", "factor": 1e200}},
     "factor"),
    ("apply_rope", {"x": [[1.7e308, -1.7e308]], "positions": [0.7]}, "x"),
    ("apply_rope", {"x": [[1.0, 1.0]], "positions": [1e300],
                    "frequencies": [1e300]}, "frequencies"),
    # the overflowing angle is neither the first pair's nor the first
    # position's: a check that looks at one of those only lets it pass
    ("apply_rope", {"x": np.ones((2, 4)), "positions": [0.5, 1e300],
                    "frequencies": [0.0, 1e300]}, "frequencies"),
    ("rope_decay_bound", {"distances": [1e300], "head_dim": 2,
                          "frequencies": [1e300]}, "frequencies"),
    ("self_attention", {"x": np.full((2, 2), 1e200),
                        "w_q": np.full((2, 2), 1e200), "w_k": np.eye(2),
                        "w_v": np.eye(2)}, "x"),
    ("self_attention", {"x": np.ones((2, 2)), "w_q": np.eye(2),
                        "w_k": np.eye(2), "w_v": np.full((2, 2), 1e308)},
     "w_v"),
    ("self_attention", {"x": np.eye(2) * 1e154, "w_q": np.eye(2),
                        "w_k": np.eye(2), "w_v": np.eye(2),
                        "bias": [[1.7e308, 0], [0, 1.7e308]]}, "bias"),
    ("shaw_attention", {"x": np.eye(2), "w_q": np.eye(2) * 1e200,
                        "w_k": np.eye(2), "w_v": np.eye(2),
                        "table_k": np.full((3, 2), 1e200)}, "table_k"),
    ("round_significand", {"x": [1.7976931348623157e308], "bits": 8}, "x"),
    ("nope_attention_temperature", {"positions": [0.0, 1e300],
                                    "floor_scale": 1e-300}, "floor_scale"),
    ("nope_attention_temperature", {"positions": [1e300],
                                    "attn_scale": 1e307}, "attn_scale"),
    ("t5_relative_position_bucket", {"relative_position": [5, 10**6],
                                     "max_distance": 10**400},
     "max_distance"),
    # chapter 9
    ("apply_rope_angles", {"x": [[1.7e308, -1.7e308]], "angles": [[0.7]]},
     "x"),
    ("dinov3_rope_angles", {"coords": [[0.0, 1e308]], "head_dim": 4}, "coords"),
    ("rope_mixed_angles", {"coords": [[1e200, 1e200]],
                           "freqs": [[[1e200, 1e200]]]}, "coords"),
    ("augment_coordinates", {"coords": [[1e308, 0.0]], "jitter": [10.0, 1.0]},
     "coords"),
    ("mrope_position_ids", {"segments": [("video", (3, 2, 2), 10.0)],
                            "variant": "qwen2.5-vl",
                            "tokens_per_second": 1e308},
     "tokens_per_second"),
    # chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)
    ("rope_stale_key_angles", {
        "key_positions": [1e307], "head_dim": 2,
        "scaling": {"type": "longrope", "short_factor": [1.0],
                    "long_factor": [1e-3],
                    "original_max_position_embeddings": 4},
        "cached_length": 2, "length": 10}, "key_positions"),
    ("mla_attention_logits", {"x": MLA_X * 1e200, "positions": 3,
                              "params": MLA}, "x"),
    # the latent's RMSNorm would divide by inf: scores of 0, not refused
    ("mla_attention_logits", {"x": MLA_X * 1e160, "positions": 3,
                              "params": MLA, "rope": "none"}, "x"),
    # chapter 11 (kv cache, padding, packing, layouts)
    ("kv_cache_bytes", {"kind": "mqa", "n_layers": 10**20,
                        "head_dim": 10**20, "bytes_per_value": 0.5},
     "n_layers"),
    ("kv_cache_bytes", {"kind": "mla", "n_layers": 1, "kv_lora_rank": 1,
                        "qk_rope_head_dim": 0, "bytes_per_value": 1e308},
     "bytes_per_value"),
    ("kv_cache_bytes", {"kind": "mha", "n_layers": 2**31, "n_heads": 2**31,
                        "head_dim": 2**31}, "head_dim"),
]


@pytest.mark.parametrize("name, kw, param", OVERFLOW,
                         ids=[f"{n}-{p}" for n, _, p in OVERFLOW])
def test_overflow_is_refused(name, kw, param):
    _expect_refusal(name, kw, param)


# -------------------------------------------------------------- memory


def _view(shape, value=1.0):
    """A read-only array of any shape that takes 8 bytes of memory."""
    return np.broadcast_to(np.float64(value), shape)


W = np.ones((1, 1))
HUGE = [
    ("frequencies", {"d_model": 2**28 + 2}),
    ("frequencies", {"d_model": 10**30}),
    ("wavelengths", {"d_model": 2**28 + 2}),
    ("sinusoidal_encoding", {"positions": 2**20, "d_model": 2**10}),
    ("sinusoidal_encoding", {"positions": 10**20, "d_model": 2}),
    ("sinusoidal_encoding", {"positions": [0.0, 1.0], "d_model": 2**27}),
    ("relative_shift_matrix", {"delta": 1, "d_model": 2**14 + 2}),
    ("binary_encoding", {"positions": 2**27, "n_bits": 2}),
    ("binary_encoding", {"positions": 10**30, "n_bits": 63}),
    ("self_attention", {"x": _view((20000, 1)), "w_q": W, "w_k": W,
                        "w_v": W}),
    ("self_attention", {"x": _view((2**10, 1)), "w_q": W, "w_k": W,
                        "w_v": _view((1, 2**18))}),
    ("self_attention", {"x": _view((2**28, 1)), "w_q": W, "w_k": W,
                        "w_v": W}),
    ("apply_rope", {"x": _view((2**15, 2**14)), "positions": 2**15}),
    ("t5_relative_position_bucket", {"relative_position":
                                     np.broadcast_to(0, (2**28,))}),
    ("alibi_slopes", {"n_heads": 2**28}),
    ("alibi_bias", {"n": 2**14, "n_heads": 1}),
    ("alibi_bias", {"n": 10**10, "n_heads": 10**10}),
    ("relative_positions", {"n": 2**14 + 1}),
    ("rope_frequencies", {"head_dim": 2**28 + 2}),
    ("partial_rope_frequencies", {"head_dim": 2**28 + 2, "fraction": 0.5}),
    ("nope_attention_temperature", {"positions": 2**28}),
    ("rope_supported_length", {"base": 1e4, "head_dim": 2**28}),
    ("rope_base_lower_bound", {"length": 100, "head_dim": 2**28}),
    ("rope_decay_bound", {"distances": 2**20, "head_dim": 2**10}),
    ("rope_layout_permutation", {"head_dim": 2**28}),
    ("round_significand", {"x": _view((2**28,)), "bits": 8}),
    ("shaw_attention", {"x": _view((20000, 1)), "w_q": W, "w_k": W,
                        "w_v": W, "table_k": np.ones((3, 1))}),
    ("shaw_attention", {"x": _view((2**12, 1)), "w_q": W, "w_k": W,
                        "w_v": W, "table_k": _view((2**16 + 1, 1))}),
    # chapter 9
    ("apply_rope_angles", {"x": _view((2**14, 2**14)),
                           "angles": _view((2**14, 2**13))}),
    ("apply_rope_angles", {"x": _view((2**10, 1, 2**8, 2)),
                           "angles": _view((2**10, 2**8, 1))}),
    ("sincos_2d_encoding", {"height": 2**12, "width": 2**12, "d": 16}),
    ("sincos_2d_encoding", {"height": 10**10, "width": 10**10, "d": 4}),
    ("rope_axial_angles", {"coords": _view((2**20, 2)), "head_dim": 2**10}),
    ("rope_mixed_frequencies", {"head_dim": 2**20, "n_heads": 2**10,
                                "rng": 0}),
    ("rope_mixed_angles", {"coords": _view((2**16, 2)),
                           "freqs": _view((2**6, 2**8, 2))}),
    ("normalized_patch_coordinates", {"height": 2**14, "width": 2**14}),
    ("augment_coordinates", {"coords": _view((2**27, 2))}),
    ("dinov3_rope_angles", {"coords": _view((2**20, 2)), "head_dim": 2**10}),
    ("mrope_position_ids", {"segments": [("image", (1, 2**15, 2**15))],
                            "spatial_merge_size": 1}),
    ("mrope_position_ids", {"segments": [10**30]}),
    ("mrope_position_ids", {"segments": [("video", (10**12, 2, 2))],
                            "variant": "qwen3-vl"}),
    ("mrope_pair_axes", {"mrope_section": [2**27, 0, 1]}),
    ("mrope_angles", {"position_ids": _view((3, 2**21)), "head_dim": 2**8,
                      "mrope_section": [2**6, 2**5, 2**5]}),
    # chapter 11 (RoBERTa, StreamingLLM, MLA, sinks, stale keys)
    ("roberta_position_ids", {"input_ids": _view((2**28,))}),
    ("roberta_position_ids", {"input_ids": _view((2**14, 2**14))}),
    ("streaming_cache", {"length": 2**28, "window": 2**28}),
    ("streaming_cache", {"length": 10**18, "window": 10**17}),
    ("streaming_cache", {"length": 2**28, "window": 10**30}),
    ("streaming_positions", {"length": 2**28, "window": 2**28}),
    ("streaming_positions", {"length": 10**18, "window": 10**17,
                             "positions": "original"}),
    ("softmax_with_sink", {"scores": _view((2**28,)), "sink_logits": 0.0}),
    ("softmax_with_sink", {"scores": _view((2**14, 2**14)),
                           "sink_logits": _view((2**14,))}),
    ("rope_stale_key_angles", {"key_positions": 2**20, "head_dim": 2**10,
                               "scaling": {"type": "default"},
                               "cached_length": 1, "length": 2}),
    ("rope_stale_key_angles", {"key_positions": _view((2**28,)),
                               "head_dim": 2,
                               "scaling": {"type": "dynamic", "factor": 2,
                                           "max_position_embeddings": 4},
                               "cached_length": 1, "length": 8}),
    ("mla_params", {"rng": 0, "d_model": 2**14, "n_heads": 2**14,
                    "kv_lora_rank": 8, "qk_nope_head_dim": 4,
                    "qk_rope_head_dim": 2, "v_head_dim": 3}),
    ("mla_params", {"rng": 0, "d_model": 10**30, "n_heads": 1,
                    "kv_lora_rank": 8, "qk_nope_head_dim": 4,
                    "qk_rope_head_dim": 2, "v_head_dim": 3}),
    # each matrix fits (2**26 entries), all of them together do not
    ("mla_params", {"rng": 0, "d_model": 2**13, "n_heads": 1,
                    "kv_lora_rank": 2**13, "qk_nope_head_dim": 4,
                    "qk_rope_head_dim": 2, "v_head_dim": 3,
                    "q_lora_rank": 2**13}),
    ("mla_attention_logits", {"x": _view((2**14, 16)), "positions": 2**14,
                              "params": MLA}),
    ("mla_attention_logits", {"x": _view((2**28, 16)), "positions": 2**28,
                              "params": MLA}),
    # chapter 11 (kv cache, padding, packing, layouts)
    ("position_ids_from_attention_mask",
     {"attention_mask": np.broadcast_to(np.True_, (2**28,))}),
    ("position_ids_from_attention_mask",
     {"attention_mask": np.broadcast_to(np.int8(1), (2**15, 2**14))}),
    ("packed_position_ids", {"lengths": [2**27, 1]}),
    # an int64 sum of these wraps around to a small number
    ("packed_position_ids", {"lengths": [2**53] * 2048}),
    ("packed_position_ids", {"lengths": np.broadcast_to(np.int64(1),
                                                        (2**28,))}),
    ("packed_sequence_indices", {"position_ids": _view((2**28,))}),
    ("packed_sequence_indices", {"position_ids": _view((2**14, 2**14 + 1))}),
    ("packed_attention_mask", {"lengths": [2**14, 2**14]}),
    ("packed_attention_mask", {"lengths": [2**53] * 2048}),
    ("permute_rotary_half", {"w": _view((2**28, 1)), "n_heads": 1}),
    ("unpermute_rotary_half", {"w": _view((2**28,)), "n_heads": 2}),
    # chapter 10: a model's layers
    ("position_layout", {"config": {"num_hidden_layers": 2**20,
                                    "head_dim": 2**10}}),
    ("position_layout", {"config": {"num_hidden_layers": 10**30,
                                    "head_dim": 8}}),
]


def test_every_function_with_a_size_is_checked_for_huge_sizes():
    no_size = {"yarn_attention_scale", "sample_coordinate_augmentation",
               "rope_attention_factor",
               # chapter 11 (kv cache, padding, packing, layouts)
               "kv_cache_bytes"}
    assert {name for name, _ in HUGE} | no_size == set(pc.__all__)


@pytest.mark.parametrize("name, kw", HUGE,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(HUGE)])
def test_huge_result_is_refused_up_front(name, kw):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="elements"):
            _call(name, kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20, f"{name} allocated {peak / 2**20:.0f} MiB first"
