"""Teacher-side, never released: the values of 05_relative_position.json's
``derived`` (see tools/teaching/variants.py), computed from the variant's
constants: Question 6's model answer on ALiBi's 8 heads (the constant c of
the slopes 2^(-c h/H)), on the sign of Question 1's relative_position and
on which buckets Question 5 asks for. With the public values they give the
public notebook's text back."""

import math
from fractions import Fraction

NEAR, FAR, HEADS = 200, 1500, 8


def _slope_tex(c, h):
    """a_h = 2^(-c h / 8) in TeX, exact."""
    power = Fraction(c * h, HEADS)
    if power.denominator == 1:
        return f"1/{2 ** power.numerator:,}".replace(",", "{,}")
    return f"2^{{-{power}}} \\approx {2.0 ** -power:.3f}"


def _percent(w):
    pct = 100 * w
    if pct >= 10:
        return f"{pct:.0f}"
    if pct >= 0.1:
        return f"{pct:.1g}"
    mantissa, exponent = f"{pct:.1e}".split("e")
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"


def _numbers(slope):
    c = int(slope["c"])
    a1, a8 = 2.0 ** (-c / HEADS), 2.0 ** (-c)
    gap1, gap8 = (FAR - NEAR) * a1, (FAR - NEAR) * a8
    return c, gap1, gap8, math.exp(-gap8)


def alibi_en(slope):
    c, gap1, gap8, w = _numbers(slope)
    gets = "gets" if w < 0.5 else "still gets"
    return (
        "Every head\nstill prefers the nearer key, by $1300\\,a_h$ in the "
        f"score: {gap1:.3g} in head 1\n($a_1 = {_slope_tex(c, 1)}$), about "
        f"{gap8:.2g} in head 8 ($a_8 = {_slope_tex(c, 8)}$), where for equal\n"
        f"content scores the far key {gets} $e^{{-{gap8:.3g}}} \\approx "
        f"{_percent(w)}\\%$ of the near\none's weight.")


def alibi_zh(slope):
    c, gap1, gap8, w = _numbers(slope)
    gets = "只得到" if w < 0.5 else "仍得到"
    return (
        "每个头仍然偏向较近的键，分数相差 $1300\\,a_h$：在头 1 中为 "
        f"{gap1:.3g}（$a_1 = {_slope_tex(c, 1)}$），在头 8 中约为 {gap8:.2g}"
        f"（$a_8 = {_slope_tex(c, 8)}$），此时若内容分数相同，远处的键{gets}"
        f"近处键权重的 $e^{{-{gap8:.3g}}} \\approx {_percent(w)}\\%$。")


def question5_en(last):
    if last["q"] == "1":
        return "($\\delta^* \\approx 112.4$, Question 5; in an encoder from 91,"
    return ("($\\delta^* \\approx 112.4$, Question 5's closed form for the "
            "last bucket alone,\nnot the last three that this variant's "
            "Question 5 asks for; in an encoder from 91,")


def question5_zh(last):
    if last["q"] == "1":
        return "（$\\delta^* \\approx 112.4$，见第 5 题；在编码器中从 91 起"
    return ("（$\\delta^* \\approx 112.4$，由第 5 题的闭式解只对最后一个桶算出，"
            "而不是本变体第 5 题所问的最后三个桶；在编码器中从 91 起")


def sign_en(sign):
    text = "T5: a key before the query has $r = -\\delta$."
    if sign["neg"]:
        text += (" (This variant's `relative_position`,\n$m - \\ell$, is "
                 "then $+\\delta$: the buckets are those of $r$.)")
    return text


def sign_zh(sign):
    text = "T5：位于查询之前的键有 $r = -\\delta$。"
    if sign["neg"]:
        text += ("（本变体的 `relative_position` 即 $m - \\ell$，于是为 "
                 "$+\\delta$：桶仍是 $r$ 的桶。）")
    return text


def _three(last):
    return last["q"] != "1"


def find_en(last):
    which = "the last three buckets start" if _three(last) else (
        "the last bucket starts")
    return f"Find where {which} for any\nsetting"


def find_zh(last):
    which = "最后三个桶" if _three(last) else "最后一个桶"
    return f"请对任意设置求出{which}从哪里开始"


def solution_doc(last):
    where = "one of T5's last three buckets" if _three(last) else (
        "T5's last bucket")
    return f"from which on keys fall in {where}."


def solution_comment(last):
    q = int(last["q"])
    bucket = "bucket N - 1" if q == 1 else f"one of the buckets N - {q} to N - 1"
    return (
        f"# A distance delta >= E is in {bucket} when\n"
        f"    #   E + floor(ln(delta/E) / ln(r_max/E) * (N - E)) >= N - {q},\n"
        f"    # that is when ln(delta/E) / ln(r_max/E) * (N - E) >= N - {q} - E\n"
        f"    # (the floor of x reaches the integer N - {q} - E exactly when x "
        "does), so\n"
        f"    #   delta >= E * (r_max/E) ** ((N - {q} - E) / (N - E)).")


def last_name(last):
    """The buckets Question 5 asks for, in its check messages."""
    return "the last three buckets" if _three(last) else "the last bucket"


def prompt6_en(last):
    if not _three(last):
        return "Question 5 tells you where its last bucket starts"
    return ("Question 5's closed form with $N - 1$ in place of $N - 3$\n"
            "tells you where its last bucket starts")


def prompt6_zh(last):
    if not _three(last):
        return "第 5 题告诉你它的最后一个桶从哪里开始"
    return "把第 5 题闭式解中的 $N - 3$ 换成 $N - 1$，就能知道它的最后一个桶从哪里开始"


def intro_en(last):
    which = ("T5's last three buckets start" if _three(last) else
             "T5's last bucket starts")
    return f"5. derive where {which}, the distance from which"


def intro_zh(last):
    which = "T5 的最后三个桶" if _three(last) else "T5 的最后一个桶"
    return f"5. 推导 {which}从哪里开始，即从哪个距离起"


def chapter_ref(last):
    """Chapter 5b's numbers (91 and 113) are those of the last bucket."""
    return ", so delta*" if _three(last) else " (chapter 5b), so delta*"
