"""A class variant's instructor material states the variant's mathematics.

For every assignment, three seeds and both languages, the model answers,
grading guides and the comments of the solutions and tests of a variant's
instructor notebook (``release --instructor-dir``) must quote the numbers
of the variant's own constants, computed here with ``posenc_core``, and
none of the public notebook's (issue 24). The numbers are computed
independently of the teacher-side modules that write them.
"""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import posenc_core as pc

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from teaching.sources import (  # noqa: E402
    cell_source,
    discover,
    instructor_notebook,
    nbgrader_meta,
)
from teaching.variants import draw_parameters, load_spec  # noqa: E402

GRADING = REPO / "assignments" / "grading"
SEEDS = (11, 20261201, 104)


def material(nb):
    """Model answers and grading guides, and the comments of code cells."""
    parts = []
    for cell in nb["cells"]:
        src = cell_source(cell)
        if cell["cell_type"] == "markdown" and nbgrader_meta(cell).get(
                "solution"):
            parts.append(src)
        elif cell["cell_type"] == "code":
            parts += [line.split("#", 1)[1] for line in src.splitlines()
                      if "#" in line]
    return re.sub(r"\s+", " ", "\n".join(parts))


def _k(values, key="n"):
    return int(re.sub(r"\D", "", values["exponent"][key]))


def _tex(x):
    return f"{x:,.1f}".replace(",", "{,}") if x < 1000 else (
        f"{x:,.0f}".replace(",", "{,}"))


def expect_01(v, zh):
    w = int(re.search(r"< (\d)", v["window"]["mask"]).group(1))
    have = [f"1/\\min(m+1, {w})", f"slots m-{w - 1}..m"]
    have.append(f"在 {w} 个键的窗口下" if zh else f"with its window of {w} keys")
    gone = ["of keys at slots 0..m. Token w sees tokens 0..w"]
    gone.append("它留在原位置、并且它之前的各位置上是相同的词元时" if zh else
                "only if it stays in its slot and the slots before it")
    return have, gone


def expect_02(v, zh):
    k = _k(v)
    return ([f"this variant's formula (the exponent {k}k / d_model)",
             f"the exponent {k / 2} * i / d_model"],
            ["The smallest fix: the exponent i / d_model.",
             "the paper's formula with base ** 2."])


def expect_03(v, zh):
    k = _k(v)
    longest = pc.wavelengths(512, base=100.0 ** (k / 2)).max()
    text = (f"{round(longest, 2 - int(np.floor(np.log10(longest)))):,.0f}"
            if longest >= 100 else f"{longest:.3g}")
    return ([f"100^{{{k * 255}/512}} \\approx {text}$",
             '"the longest wavelength is 2 pi b^'],
            ["100^{510/512}", "\\approx 617$", '"the longest wavelength is '
             '2 pi b"'])


def expect_04(v, zh):
    return [], []   # Question 4 (no matrix shifts bits) has no variant


def expect_05(v, zh):
    c = int(v["slope"]["c"])
    slopes = pc.alibi_slopes(8) ** (c / 8)
    gap1, gap8 = 1300 * slopes[0], 1300 * slopes[-1]
    have = [f"e^{{-{gap8:.3g}}}",
            (f"在头 1 中为 {gap1:.3g}" if zh else f"{gap1:.3g} in head 1")]
    gone = ["e^{-5.08}", "在头 1 中为 650" if zh else "650 in head 1"]
    if v["sign"]["neg"]:
        have.append("relative_position")
    return have, gone


def expect_06(v, zh):
    k = _k(v, "ki")
    bound = pc.rope_decay_bound([500], 16, base=10000.0 ** (k / 2))[0]
    return [f"(d/2) D(r) = 8 * {bound:.3f}"], ["8 * 0.805 = 6.4"]


def expect_07(v, zh):
    k = _k(v)
    omega = pc.rope_frequencies(128, base=500000.0 ** (k / 2))
    first = int(np.flatnonzero(8192 * omega < 2 * np.pi)[0])
    factor = 8 ** (126 / (2 * first))
    return ([f"i_0 = {first}$", f"\\approx {_tex(factor)}$"],
            ["i_0 = 35$", "8^{126/70}", "42.2"])


def expect_08(v, zh):
    c, p = int(v["slope"]["c"]), 0.9   # Question 3 (b)'s comparison
    a = pc.alibi_slopes(4) ** (c / 8)
    share = -np.expm1(-32 * a) / -np.expm1(-256 * a)
    reach = np.ceil(-np.log1p(-p) / a).astype(int)
    have = [f"{share[-1]:.3f}", f"2^{{-{c}h/4}}"]
    have += [str(r) for r in reach]
    gone = ["0.9997", "148 和 590" if zh else "148 and 590"]
    return have, gone


def expect_09(v, zh):
    # Question 5 (zoom versus canvas) has nothing a variant changes; the
    # comment of Question 3's solution states the variant's frequencies
    k = _k(v)
    omega = pc.rope_axial_angles([[0.0, 1.0]], 8, base=100.0 ** (k / 4))[0]
    assert np.isclose(omega[1], 100.0 ** (-k / 8))   # b^(-k j/d) at j = 1
    return [f"b^(-{k}j/d)"], ["b^(-4j/d)"]


def expect_10(v, zh):
    k = _k(v)
    omega = pc.partial_rope_frequencies(256, 0.25, base=1e6 ** (k / 2),
                                        convention="proportional")
    longest = 2 * np.pi / omega[omega > 0].min()
    text = f"{round(longest, 2 - int(np.floor(np.log10(longest)))):,.0f}"
    return ([f"{text} 个位置" if zh else f"{text} positions"],
            ["约为 178 个位置" if zh else "about 178 positions",
             "58,500"])


EXPECT = {name: globals()[f"expect_{name[:2]}"] for name in discover()}


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(EXPECT))
def test_variant_instructor_material_states_the_variant(name, seed,
                                                        language):
    path = discover()[name]
    values = draw_parameters(load_spec(GRADING / f"{name}.json"), seed)
    have, gone = EXPECT[name](values, language != "en")
    text = material(instructor_notebook(name, path, seed, language=language))
    public = material(instructor_notebook(name, path, language=language))
    if not have and not gone:   # nothing of the variant in this material
        assert text == public, f"{name}: a variant changes its material"
    for piece in have:
        assert piece in text, (
            f"{name}, seed {seed}, {language}: the variant's instructor "
            f"material does not state {piece!r}")
    assert not have or any(piece not in public for piece in have), (
        f"{name}: all of {have} are in the public notebook too, so this test "
        "cannot tell the variant's from the public mathematics")
    for piece in gone:
        assert piece in public, f"{name}: {piece!r} is not in the public one"
        assert piece not in text, (
            f"{name}, seed {seed}, {language}: the variant's instructor "
            f"material still states the public {piece!r}")
