"""Tests of chapter 5: posenc_core.shaw_attention and posenc_plots.ch05."""

import doctest

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc_core as pc
from posenc_plots import ch05_relative as figs

# ------------------------------------------------- shaw_attention: values


def naive_shaw(x, w_q, w_k, w_v, table_k, table_v=None, causal=False):
    """Shaw et al. (2018), eqs. 3-4, with the full (n, n, d) tensors."""
    n = x.shape[0]
    k = (table_k.shape[0] - 1) // 2
    idx = np.clip(np.arange(n)[None, :] - np.arange(n)[:, None], -k, k) + k
    a_k = table_k[idx]  # (n, n, d_k): what the fast version never builds
    q, key, v = x @ w_q, x @ w_k, x @ w_v
    e = np.einsum("id,ijd->ij", q, key[None, :, :] + a_k) / np.sqrt(
        q.shape[1])
    if causal:
        e = np.where(np.tri(n, dtype=bool), e, -np.inf)
    alpha = np.exp(e - e.max(axis=1, keepdims=True))
    alpha /= alpha.sum(axis=1, keepdims=True)
    z = alpha @ v
    if table_v is not None:
        z = z + np.einsum("ij,ijd->id", alpha, table_v[idx])
    return z, alpha


def random_problem(n, k, d_model=6, d_k=4, d_v=5, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)),
            rng.normal(size=(2 * k + 1, d_k)),
            rng.normal(size=(2 * k + 1, d_v)))


@pytest.mark.parametrize("n, k", [(1, 0), (2, 0), (7, 2), (7, 6), (5, 10),
                                  (12, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_shaw_matches_naive_tensor(n, k, causal):
    x, w_q, w_k, w_v, t_k, t_v = random_problem(n, k, seed=n + k)
    out, A = pc.shaw_attention(x, w_q, w_k, w_v, t_k, t_v, causal=causal)
    ref_out, ref_A = naive_shaw(x, w_q, w_k, w_v, t_k, t_v, causal=causal)
    np.testing.assert_allclose(A, ref_A, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=1), 1.0)
    if causal:
        assert np.all(A[np.triu_indices(n, 1)] == 0)


def test_shaw_without_value_table_matches_naive():
    x, w_q, w_k, w_v, t_k, _ = random_problem(8, 2, seed=3)
    out, A = pc.shaw_attention(x, w_q, w_k, w_v, t_k)
    ref_out, ref_A = naive_shaw(x, w_q, w_k, w_v, t_k)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    np.testing.assert_allclose(A, ref_A, rtol=1e-12)


def test_shaw_zero_tables_is_plain_attention():
    x, w_q, w_k, w_v, t_k, t_v = random_problem(6, 2, seed=1)
    out, A = pc.shaw_attention(x, w_q, w_k, w_v, 0 * t_k, 0 * t_v)
    ref_out, ref_A = pc.self_attention(x, w_q, w_k, w_v)
    np.testing.assert_allclose(out, ref_out, rtol=1e-13)
    np.testing.assert_allclose(A, ref_A, rtol=1e-13)


def test_shaw_k0_carries_no_position():
    # One vector for every pair adds q_i . w_0 to a whole row: softmax
    # cancels it (Shaw et al. 2018, Table 2: k = 0 loses the order).
    x, w_q, w_k, w_v, t_k, _ = random_problem(6, 0, seed=2)
    _, A = pc.shaw_attention(x, w_q, w_k, w_v, t_k)
    np.testing.assert_allclose(A, pc.self_attention(x, w_q, w_k, w_v)[1],
                               rtol=1e-12)


def test_shaw_sees_order_plain_attention_does_not():
    x, w_q, w_k, w_v, t_k, t_v = random_problem(7, 2, seed=4)
    rev = x[::-1]
    plain, _ = pc.self_attention(x, w_q, w_k, w_v)
    plain_rev, _ = pc.self_attention(rev, w_q, w_k, w_v)
    np.testing.assert_allclose(plain_rev, plain[::-1], rtol=1e-12)
    shaw, _ = pc.shaw_attention(x, w_q, w_k, w_v, t_k, t_v)
    shaw_rev, _ = pc.shaw_attention(rev, w_q, w_k, w_v, t_k, t_v)
    assert not np.allclose(shaw_rev, shaw[::-1])


def test_shaw_clipping_far_keys_share_a_row():
    # With k = 1 and the content term switched off, every key at distance
    # >= 1 on the same side gets the same weight.
    x, w_q, _, w_v, t_k, _ = random_problem(9, 1, seed=5)
    _, A = pc.shaw_attention(x, w_q, np.zeros_like(w_q), w_v, t_k)
    i = 4
    assert np.allclose(A[i, i + 1:], A[i, i + 1])
    assert np.allclose(A[i, :i], A[i, 0])


def test_shaw_doctest():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(pc.shaw_attention, "shaw_attention",
                            globs={"np": np, **vars(pc)}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_shaw_public():
    assert "shaw_attention" in pc.__all__


# ------------------------------------------------- shaw_attention: errors


@pytest.mark.parametrize(
    "change, name",
    [
        (dict(x=np.zeros(4)), "x"),
        (dict(x=[["a"]]), "x"),
        (dict(w_q=np.zeros((5, 4))), "w_q"),
        (dict(w_q=np.zeros((6, 0))), "w_q"),
        (dict(table_k=np.zeros((4, 4))), "table_k"),  # even number of rows
        (dict(table_k=np.zeros((5, 3))), "table_k"),  # wrong width
        (dict(table_k=np.zeros(5)), "table_k"),
        (dict(table_k=np.full((5, 4), np.nan)), "table_k"),
        (dict(table_v=np.zeros((3, 5))), "table_v"),  # rows != table_k
        (dict(table_v=np.zeros((5, 4))), "table_v"),  # width != d_v
        (dict(w_v=np.zeros((5, 5))), "w_v"),
        (dict(causal="yes"), "causal"),
    ],
)
def test_shaw_bad_input(change, name):
    x, w_q, w_k, w_v, t_k, t_v = random_problem(4, 2)
    args = dict(x=x, w_q=w_q, w_k=w_k, w_v=w_v, table_k=t_k, table_v=t_v)
    causal = change.pop("causal", False)
    args.update(change)
    with pytest.raises(ValueError, match=name):
        pc.shaw_attention(**args, causal=causal)


# ------------------------------------------------------------ the figures


def test_shift_matrix_shows_the_matrix():
    fig = figs.shift_matrix(k=2.5, d_model=8, base=100.0)
    img = fig.axes[0].images[0].get_array()
    np.testing.assert_array_equal(
        img, pc.relative_shift_matrix(2.5, 8, base=100.0))


def test_dot_vs_distance_data():
    fig = figs.dot_vs_distance(d_model=16, base=1000.0, max_distance=10,
                               anchors=(20, 300))
    lines = fig.axes[0].get_lines()
    delta = np.arange(-10, 11)
    P = pc.sinusoidal_encoding(20 + delta, 16, base=1000.0)
    np.testing.assert_allclose(lines[0].get_ydata(), P @ P[10])
    for line, p in zip(lines[1:3], (20, 300), strict=True):
        P = pc.sinusoidal_encoding(p + delta, 16, base=1000.0)
        np.testing.assert_allclose(line.get_xdata(), delta)
        np.testing.assert_allclose(line.get_ydata(), P @ P[10], atol=1e-12)


def test_projected_scores_data():
    d, k, n = 16, 3, 20
    fig = figs.projected_scores(d_model=d, k=k, n=n, seed=7)
    imgs = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    P = pc.sinusoidal_encoding(n, d)
    rng = np.random.default_rng(7)
    w_q = rng.normal(size=(d, d)) / np.sqrt(d)
    w_k = rng.normal(size=(d, d)) / np.sqrt(d)
    np.testing.assert_allclose(imgs[0], P @ P.T / 4)
    np.testing.assert_allclose(imgs[1], (P @ w_q) @ (P @ w_k).T / 4)
    shifted = pc.sinusoidal_encoding(np.arange(n) + k, d)
    np.testing.assert_allclose(imgs[2], P @ shifted.T / 4, atol=1e-12)


def test_shaw_index_data():
    fig = figs.shaw_index(n=6, max_distance=2)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(),
                                  pc.relative_positions(6, max_distance=2))
    assert len(ax.texts) == 36


def test_memory_cost_data():
    fig = figs.memory_cost(d_model=512, max_distance=16)
    full, table, clipped = fig.axes[0].get_lines()[:3]
    L = full.get_xdata()
    np.testing.assert_allclose(full.get_ydata(), 4.0 * L**2 * 512)
    np.testing.assert_allclose(table.get_ydata(), 4.0 * (2 * L - 1) * 512)
    np.testing.assert_allclose(clipped.get_ydata(), 4.0 * 33 * 512)


def test_heatmaps_data():
    maps = [np.eye(3), np.arange(9.0).reshape(3, 3)]
    fig = figs.heatmaps(maps, ["a", "b"], labels=["x", "y", "z"])
    imgs = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    for img, m in zip(imgs, maps, strict=True):
        np.testing.assert_array_equal(img, m)


@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (8, 40)])
def test_t5_buckets_data(num_buckets, max_distance):
    fig = figs.t5_buckets(num_buckets=num_buckets, max_distance=max_distance)
    for ax, bidirectional in zip(fig.axes, (True, False), strict=True):
        line = ax.get_lines()[0]
        r = line.get_xdata()
        assert r[0] == -int(1.5 * max_distance)
        np.testing.assert_array_equal(
            line.get_ydata(),
            pc.t5_relative_position_bucket(
                r, bidirectional=bidirectional, num_buckets=num_buckets,
                max_distance=max_distance))


def test_alibi_slopes_data():
    fig = figs.alibi_slopes(head_counts=(8, 6, 12))
    for line, n in zip(fig.axes[0].get_lines(), (8, 6, 12), strict=True):
        np.testing.assert_allclose(line.get_ydata(),
                                   -np.log2(pc.alibi_slopes(n)))


@pytest.mark.parametrize("n_heads, n", [(8, 12), (12, 5), (1, 2)])
def test_alibi_biases_data(n_heads, n):
    fig = figs.alibi_biases(n_heads=n_heads, n=n)
    img = np.asarray(fig.axes[0].images[0].get_array())
    np.testing.assert_array_equal(figs.mosaic_blocks(img, n, n_heads),
                                  pc.alibi_bias(n, n_heads))


def test_alibi_attention_data_without_content():
    # content = 0: the weights are the softmax of the bias alone.
    n, h = 10, 4
    fig = figs.alibi_attention(n_heads=h, n=n, content=0.0)
    img = np.asarray(fig.axes[0].images[0].get_array())
    A = figs.mosaic_blocks(img, n, h)
    B = pc.alibi_bias(n, h)
    E = np.where(np.tri(n, dtype=bool), np.exp(B), 0.0)
    np.testing.assert_allclose(A, E / E.sum(axis=2, keepdims=True))


def test_alibi_attention_data_with_content():
    n, h, content, seed = 6, 3, 2.0, 1
    fig = figs.alibi_attention(n_heads=h, n=n, content=content, seed=seed)
    img = np.asarray(fig.axes[0].images[0].get_array())
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8))
    w_q = content * rng.normal(size=(8, 8)) / np.sqrt(8)
    w_k = rng.normal(size=(8, 8)) / np.sqrt(8)
    B = pc.alibi_bias(n, h)
    for head, A in enumerate(figs.mosaic_blocks(img, n, h)):
        ref = pc.self_attention(x, w_q, w_k, np.eye(8), bias=B[head],
                                causal=True)[1]
        np.testing.assert_allclose(A, ref)


# ---------- slider sweeps: what is drawn, against independent formulas


def _omega(d_model, base=10000.0):
    return base ** (-np.arange(0, d_model, 2) / d_model)


def _sinusoids(positions, d_model):
    angle = np.outer(positions, _omega(d_model))
    return np.stack([np.sin(angle), np.cos(angle)], axis=2).reshape(
        len(positions), d_model)


def _close(a, b, atol=1e-9):
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=0,
                                                      atol=atol)


def _tiles(image, n, h):
    """Cut a mosaic (8 tiles a row, one blank row/column between tiles)."""
    cols = min(8, h)
    return np.stack([image[r * (n + 1): r * (n + 1) + n,
                           c * (n + 1): c * (n + 1) + n]
                     for r, c in (divmod(head, cols) for head in range(h))])


def _paper_slopes(n):
    """get_slopes from the ALiBi paper's code (Press et al.)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(np.log2(n) - 3))
        return [start * start**i for i in range(n)]
    if np.log2(n).is_integer():
        return power_of_2(n)
    c = 2 ** int(np.floor(np.log2(n)))
    return power_of_2(c) + _paper_slopes(2 * c)[0::2][: n - c]


def check_shift_matrix(fig, k, d_model, base):
    M = np.zeros((d_model, d_model))
    for i, w in enumerate(_omega(d_model, base)):
        c, s = np.cos(k * w), np.sin(k * w)  # sin(a+b), cos(a+b) from a
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = [[c, s], [-s, c]]
    image = fig.axes[0].images[0].get_array()
    assert _close(image, M, 1e-12)
    assert f"= {k:g}, d_model = {d_model}" in fig.axes[0].get_title()
    return (image,)


def check_dot_vs_distance(fig, d_model, base):
    r = np.arange(-60, 61)
    expected = np.cos(np.outer(r, _omega(d_model, base))).sum(axis=1)
    lines = fig.axes[0].lines
    assert len(lines) == 5  # the closed form, three anchors, the zero line
    for line in lines[:4]:  # PE(m).PE(m + r) = sum_i cos(r w_i) for every m
        assert np.array_equal(line.get_xdata(), r)
        assert _close(line.get_ydata(), expected)
    return (lines[0].get_ydata(),)


def check_projected_scores(fig, d_model, k, seed):
    n = 48
    P = _sinusoids(np.arange(n), d_model)
    rng = np.random.default_rng(seed)
    w_q = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
    w_k = rng.normal(size=(d_model, d_model)) / np.sqrt(d_model)
    r = np.arange(n)[None, :] - np.arange(n)[:, None]  # key - query
    shift = np.cos(np.multiply.outer(r + k, _omega(d_model))).sum(axis=2)
    expected = (P @ P.T, (P @ w_q) @ (P @ w_k).T, shift)
    images = [ax.images[0] for ax in fig.axes if ax.images][:3]
    for im, S in zip(images, expected, strict=True):
        assert _close(im.get_array(), S / np.sqrt(d_model))
        assert im.get_clim() == pytest.approx(
            (S.min() / np.sqrt(d_model), S.max() / np.sqrt(d_model)))
    titles = [ax.get_title() for ax in fig.axes if ax.images][:3]
    assert f"seed {seed}" in titles[1] and f"M_{{{k}}}" in titles[2]
    return tuple(im.get_array() for im in images)


def check_shaw_index(fig, n, max_distance):
    ax = fig.axes[0]
    k = max_distance
    R = np.clip(np.arange(n)[None, :] - np.arange(n)[:, None], -k, k)
    assert np.array_equal(ax.images[0].get_array(), R)
    lim = max(k, 1)
    assert ax.images[0].get_clim() == (-lim, lim)
    assert [t.get_text() for t in ax.texts] == [str(v) for v in R.ravel()]
    assert [t.get_position() for t in ax.texts] == [
        (j, i) for i in range(n) for j in range(n)]
    assert f"r_max = {k}: {2 * k + 1} table rows" in ax.get_title()
    return R, np.array([lim, 2 * k + 1])  # past n - 1 only colours, title


def check_memory(fig, d_model, max_distance):
    ax = fig.axes[0]
    max_len = np.unique(np.geomspace(16, 100_000, 60).astype(np.int64))
    rows = (max_len**2 * d_model, (2 * max_len - 1) * d_model,
            (2 * max_distance + 1) * d_model + 0 * max_len)
    for line, count in zip(ax.lines[:3], rows, strict=True):
        assert np.array_equal(line.get_xdata(), max_len)
        assert _close(line.get_ydata(), 4.0 * count, 0)
    assert f"r_max = {max_distance}" in ax.get_legend().get_texts()[2].get_text()
    assert ax.get_title() == f"d = {d_model}"
    return tuple(line.get_ydata() for line in ax.lines[:3])


def check_t5_buckets(fig, num_buckets, max_distance):
    torch = pytest.importorskip("torch")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    span = int(1.5 * max_distance)
    r = np.arange(-span, span + 1)  # key - query, as transformers takes it
    out = []
    for ax, bidirectional in zip(fig.axes, (True, False), strict=True):
        expected = t5.T5Attention._relative_position_bucket(
            torch.tensor(r), bidirectional=bidirectional,
            num_buckets=num_buckets, max_distance=max_distance).numpy()
        step, *marks = ax.lines
        assert step.get_drawstyle() == "steps-mid"
        assert np.array_equal(step.get_xdata(), r)
        assert np.array_equal(step.get_ydata(), expected)
        exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
        edges = [-max_distance, -exact] + (
            [exact, max_distance] if bidirectional else [])
        assert [m.get_xdata()[0] for m in marks] == edges
        assert f"{num_buckets} buckets, max_distance = {max_distance}" in (
            ax.get_title())
        out.append(step.get_ydata())
    return tuple(out)


def check_alibi_bias(fig, n_heads, n):
    ax = fig.axes[0]
    slopes = np.array(_paper_slopes(n_heads))
    distance = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
    image = ax.images[0].get_array()
    assert _close(_tiles(image, n, n_heads),
                  -slopes[:, None, None] * distance, 1e-15)
    gaps = np.ma.getmaskarray(image) | np.isnan(np.ma.filled(image, np.nan))
    assert gaps.sum() == image.size - n_heads * n * n  # NaN between tiles
    assert [t.get_text() for t in ax.texts] == [
        f"$a = 2^{{{np.log2(m):g}}}$" for m in slopes]
    assert f"n = {n}" in ax.get_title()
    return (np.ma.filled(image, np.nan),)


def check_alibi_attention(fig, n_heads, n, content):
    ax = fig.axes[0]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 8))
    w_q = content * rng.normal(size=(8, 8)) / np.sqrt(8)
    w_k = rng.normal(size=(8, 8)) / np.sqrt(8)
    slopes = np.array(_paper_slopes(n_heads))
    i = np.arange(n)
    S = (x @ w_q) @ (x @ w_k).T / np.sqrt(8) - slopes[:, None, None] * abs(
        i[None, :] - i[:, None])
    S = np.where(i[None, :] <= i[:, None], S, -np.inf)  # causal
    A = np.exp(S - S.max(axis=2, keepdims=True))
    A /= A.sum(axis=2, keepdims=True)
    image = ax.images[0].get_array()
    assert _close(_tiles(image, n, n_heads), A, 1e-12)
    assert [t.get_text() for t in ax.texts] == [
        f"head {h + 1}" for h in range(n_heads)]
    assert f"content = {content:g}" in ax.get_title()
    return (np.ma.filled(image, np.nan),)


CHECKS = {
    "ch05_shift_matrix": check_shift_matrix,
    "ch05_dot_vs_distance": check_dot_vs_distance,
    "ch05_projected_scores": check_projected_scores,
    "ch05_shaw_index": check_shaw_index,
    "ch05_memory": check_memory,
    "ch05_t5_buckets": check_t5_buckets,
    "ch05_alibi_bias": check_alibi_bias,
    "ch05_alibi_attention": check_alibi_attention,
}


@pytest.mark.parametrize("spec", figs.INTERACTIVE, ids=lambda s: s.name)
def test_every_slider_position_draws_what_the_formulas_say(spec):
    """Each slider over its whole range: the drawn data are the chapter's
    formulas computed independently (the paper's ALiBi slopes, transformers'
    T5 buckets, sums of cosines), so each move of a slider changes what is
    drawn as it should."""
    check = CHECKS[spec.name]
    defaults = spec.defaults()
    for slider in spec.sliders:
        before = None
        for value in slider.values():
            values = {**defaults, slider.name: value}
            fig = spec.plot(**values)
            drawn = check(fig, **values)
            if before is not None:  # the move changed what is drawn
                assert any(not _close(a, b, 0) for a, b in zip(
                    drawn, before, strict=True)), (spec.name, values)
            before = drawn
            plt.close(fig)


def test_interactive_specs_are_listed():
    names = [spec.name for spec in figs.INTERACTIVE]
    assert len(names) == len(set(names))
    for spec in figs.INTERACTIVE:
        assert spec.caption
        spec.plot(**spec.defaults())


# ------------------------------------ claims of the chapter's prose, checked


# T5 buckets and ALiBi slopes against transformers: tests/test_reference.py


def test_t5_encoder_facts():
    r = np.arange(-300, 301)
    b = pc.t5_relative_position_bucket(r)
    assert sorted(set(range(32)) - set(b.tolist())) == [16]
    assert b[300 + 90] == 30 and b[300 + 91] == 31
    causal = pc.t5_relative_position_bucket(r, bidirectional=False)
    assert causal[300 - 112] == 30 and causal[300 - 113] == 31


def test_scalar_biases_draws_t5_buckets_and_alibi_lines():
    fig = figs.scalar_biases(n_heads=8, span=160)
    left, right = fig.axes
    r = np.arange(-160, 1)
    (t5,) = [line for line in left.get_lines() if line.get_gid() == "t5"]
    np.testing.assert_array_equal(t5.get_xdata(), r)
    np.testing.assert_array_equal(
        t5.get_ydata(), pc.t5_relative_position_bucket(r, bidirectional=False))
    alibi = {line.get_gid(): line for line in right.get_lines()}
    assert sorted(alibi) == sorted(f"alibi-{h}" for h in range(1, 9))
    for h, a in enumerate(pc.alibi_slopes(8), start=1):
        np.testing.assert_allclose(alibi[f"alibi-{h}"].get_ydata(), a * r)
    fig.canvas.draw()
    assert fig.get_tightbbox().width <= 672 / 80  # readable in the column


@pytest.mark.parametrize("kwargs", [{"n_heads": 0}, {"span": 2.5},
                                    {"n_heads": True}])
def test_scalar_biases_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        figs.scalar_biases(**kwargs)


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_heatmaps_fit_the_column_readably(count):
    fig = figs.heatmaps([np.eye(5)] * count, ["t"] * count)
    fig.canvas.draw()
    assert fig.get_tightbbox().width <= 672 / 80
