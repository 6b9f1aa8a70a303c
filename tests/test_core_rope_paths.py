"""apply_rope's paths (issue 29): the complex product on contiguous
interleaved pairs, the strided and broadcast views, the half layout, and
checks of x made on the result, in the order they always had."""

import numpy as np
import pytest

import posenc_core as pc


def _formula(x, pos, layout):
    """The docstring's two real formulas, pair by pair."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    theta = pc.rope_frequencies(d)
    angle = np.asarray(pos, dtype=np.float64)[:, None] * theta
    cos, sin = np.cos(angle), np.sin(angle)
    if layout == "interleaved":
        i1, i2 = np.arange(0, d, 2), np.arange(1, d, 2)
    else:
        i1, i2 = np.arange(d // 2), np.arange(d // 2, d)
    out = np.empty_like(x)
    out[..., i1] = x[..., i1] * cos - x[..., i2] * sin
    out[..., i2] = x[..., i2] * cos + x[..., i1] * sin
    return out


RNG = np.random.default_rng(29)
BASE = RNG.normal(size=(3, 2, 12, 8))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("make", [
    lambda: BASE,                                     # C-contiguous
    lambda: BASE[:, :, ::2],                          # rows strided
    lambda: np.asfortranarray(BASE),                  # last axis strided
    lambda: BASE.transpose(1, 0, 2, 3),               # leading axes swapped
    lambda: np.broadcast_to(BASE[0, 0], (4, 12, 8)),  # a broadcast view
    lambda: (BASE * 10).astype(np.int64),             # integers
    lambda: BASE.astype(np.float32),                  # float32
    lambda: BASE[0, 0].tolist(),                      # a list, 2-D
    lambda: BASE[..., :0, :],                         # no rows
], ids=["contiguous", "strided-rows", "fortran", "transposed", "broadcast",
        "int", "float32", "list", "empty"])
def test_every_input_gives_the_formula(make, layout):
    x = make()
    n = np.shape(x)[-2]
    pos = np.arange(n) * 1.5
    before = np.array(x, copy=True)
    out = pc.apply_rope(x, pos, layout=layout)
    assert out.dtype == np.float64 and out.shape == np.shape(x)
    assert out.flags.c_contiguous and out.flags.owndata
    np.testing.assert_allclose(out, _formula(x, pos, layout), rtol=1e-14,
                               atol=1e-14)
    np.testing.assert_array_equal(np.asarray(x), before)  # x untouched


def test_float64_input_is_not_copied_and_not_aliased():
    x = BASE.copy()
    out = pc.apply_rope(x, 12)
    assert not np.shares_memory(out, x)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_a_non_finite_x_is_named_first(bad, layout):
    """The x error comes first, as when x was checked before anything else:
    alone, and together with a bad layout, shape, positions or frequencies."""
    x = BASE.copy()
    x[1, 0, 5, 3] = bad
    with pytest.raises(ValueError, match="x must be .*finite values only"):
        pc.apply_rope(x, 12, layout=layout)
    for kw in ({"layout": "neox"}, {"positions": 11},
               {"frequencies": [1.0, 2.0]}, {"positions": [1e308] * 12}):
        kw = {"positions": 12, "layout": layout, **kw}
        with pytest.raises(ValueError, match="x must be .*finite values only"):
            pc.apply_rope(x, **kw)
    with pytest.raises(ValueError, match="x must be .*finite values only"):
        pc.apply_rope(x[..., :7], 12)  # odd width, and non-finite


def test_overflow_is_still_refused_on_every_path():
    for layout in ("interleaved", "half"):
        for x in (np.full((2, 3, 4), 1.7e308), np.full((3, 4), 1.7e308)[:, ::1],
                  np.asfortranarray(np.full((2, 3, 4), 1.7e308))):
            with pytest.raises(ValueError, match="x is too large"):
                pc.apply_rope(x, [0.0, 1.0, 2.0], layout=layout)
