"""Teacher-side, never released: the values of 07_context_extension.json's
``derived`` (see tools/teaching/variants.py), computed from the variant's
exponent k: part (c) of Question 5's model answer and grading guide, for
the running example (d = 128, b = 500000, L = 8192, s = 8). With k = 2
they give the public notebook's text back.

NTK-aware scaling with the factor s_ntk stretches pair i by
s_ntk^(2i/(d-2)) for every exponent k (its base b s_ntk^(2d/(k(d-2)))), so
Question 4's factor is s^((d-2)/(2 i_0)), i_0 the first pair that turns
less than once over L: only i_0 depends on k.
"""

import numpy as np

D, BASE, L, S = 128, 500000.0, 8192, 8


def _numbers(exponent):
    k = int(exponent["n"])
    omega = BASE ** (-k * np.arange(D // 2) / D)
    first = int(np.flatnonzero(L * omega / (2 * np.pi) < 1)[0])
    assert str(first) == exponent["first"], (first, exponent["first"])
    factor = S ** ((D - 2) / (2 * first))
    stretch = lambda i: factor ** (2 * i / (D - 2))  # noqa: E731
    mid = round(first * 4 / 7)
    return first, factor, stretch, mid


def _f(x):
    return f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def _tex(x):
    return _f(x).replace(",", "{,}")


def _times(x):
    words = {5: "five"}
    n = int(x // S)
    return words.get(n, f"{n:,}")


def part_c_en(exponent):
    first, factor, stretch, mid = _numbers(exponent)
    F, T = _f(factor), _tex(factor)
    return (
        f"(c) The first slow pair is $i_0 = {first}$, so the factor is\n"
        f"$8^{{{D - 2}/{2 * first}}} \\approx {T}$. It stretches pair $i$ by\n"
        f"${T}^{{2i/{D - 2}}}$: pair {first} by exactly 8 (as PI), the "
        f"slowest pair, {D // 2 - 1}, by\n{F}, more than {_times(factor)} "
        f"times what PI needs, and the fast pairs just before\nthe first "
        f"slow one almost as much as PI (pair {first - 1} by "
        f"{stretch(first - 1):.1f}, pair {mid} by\n{stretch(mid):.1f}), "
        "where YaRN keeps the pairs that turn more than 32 times and "
        "blends\nonly those in between. So the slow pairs cover only a part "
        "of the arc\nthey saw in training (the slowest about "
        f"$8/{T} \\approx {S / factor:.2g}$ of it),\n")


def part_c_zh(exponent):
    first, factor, stretch, mid = _numbers(exponent)
    F, T = _f(factor), _tex(factor)
    times = {5: "五"}.get(int(factor // S), f" {int(factor // S):,} ")
    return (
        f"(c) 第一个慢维度对是 $i_0 = {first}$，所以因子为 "
        f"$8^{{{D - 2}/{2 * first}}} \\approx {T}$。它把第 $i$ 个维度对拉伸 "
        f"${T}^{{2i/{D - 2}}}$ 倍：第 {first} 个维度对恰好拉伸 8 倍（与位置"
        f"内插相同），最慢的第 {D // 2 - 1} 个维度对拉伸 {F} 倍，是位置内插"
        f"所需的{times}倍多；而紧挨在第一个慢维度对之前的快维度对几乎被拉伸得"
        f"和位置内插一样多（第 {first - 1} 个 {stretch(first - 1):.1f} 倍，"
        f"第 {mid} 个 {stretch(mid):.1f} 倍），而 YaRN 保持转过 32 圈以上的"
        "维度对不变，只对介于两者之间的维度对做混合。所以慢维度对只覆盖了它们"
        "在训练中见过的圆弧的一部分（最慢的约为 "
        f"$8/{T} \\approx {S / factor:.2g}$），")


def grading_c_en(exponent):
    _first, factor, _stretch, _mid = _numbers(exponent)
    return (f"factor of about {factor:,.0f} with the stretches it gives (the "
            f"slowest pair about\n{factor:,.0f}, far more than 8;")


def grading_c_zh(exponent):
    _first, factor, _stretch, _mid = _numbers(exponent)
    return (f"给出约 {factor:,.0f} 的因子及其带来的拉伸（最慢的维度对约 "
            f"{factor:,.0f} 倍，远超 8 倍；")


def comment_rho(exponent):
    """Question 3's solution: the pair i with rho turns, for omega_i =
    b^(-k i/d)."""
    k = exponent["n"]
    return (f"# rho = L b^(-{k}i/d) / (2 pi)  <=>  i = d ln(L / (2 pi rho)) "
            f"/ ({k} ln b)")
