"""Teacher-side, never released: the values of 03_frequencies.json's
``derived`` (see tools/teaching/variants.py), computed from the variant's
exponent k: the model answer and grading guide of Question 4 (base 100,
d_model = 512, documents of 4,096 tokens) and the comment of Question 5's
solution. With k = 2 they give the public notebook's text back."""

import math

import numpy as np

D, BASE, LENGTH = 512, 100.0, 4096
WORDS = "zero one two three four five six seven eight nine ten".split()
WORDS_ZH = "零一二三四五六七八九十"


def _k(exponent):
    return int(exponent["n"])


def _ki(k):
    return "i" if k == 1 else f"{k}i"


def _wavelengths(k, base=BASE):
    # the paper's wavelengths at the base b^(k/2): 2 pi b^(k i / d)
    return 2 * np.pi * base ** (k * np.arange(D // 2) / D)


def _about(x):
    """Three significant figures, with a thousands separator."""
    if x >= 100:
        return f"{round(x, 2 - int(math.floor(math.log10(x)))):,.0f}"
    return f"{x:.3g}"


def _facts(k):
    lam = _wavelengths(k)
    cycling = int((lam <= LENGTH).sum())
    return {
        "tex": f"{k * (D // 2 - 1)}/{D}", "longest": _about(lam[-1]),
        "ratio": f"{BASE ** (k / D):.3f}", "cycling": cycling,
        "slow": D // 2 - cycling, "cycles": int(LENGTH // lam[-1]),
        "turn": LENGTH / lam[-1], "b10k": _about(_wavelengths(k, 1e4)[-1]),
        "equiv": _about(BASE ** (k / 2)),
        "need": _about((LENGTH / (2 * np.pi)) ** (D / (k * (D // 2 - 1)))),
    }


def _count(n, words, space=""):
    return words[n] if n < len(words) else f"{space}{n:,}{space}"


def answer_en(exponent):
    k, f = _k(exponent), _facts(_k(exponent))
    if f["slow"] == 0:
        text = (
            f"With base 100 the wavelengths run from $2\\pi$ to\n"
            f"$2\\pi\\cdot 100^{{{f['tex']}}} \\approx {f['longest']}$ "
            f"positions (neighbour ratio about\n{f['ratio']}). All 256 pairs "
            f"complete at least {_count(f['cycles'], WORDS)} full cycles "
            f"within 4,096\ntokens: no pair is a slow one that grows steadily "
            "over the document\nand acts as a coarse position counter. Every "
            "column repeats many\ntimes, so two distant positions (like 100 "
            "and 3,000) are told apart\nonly by how the phases of all pairs "
            "combine; such combinations can\nnearly repeat, and the encodings "
            "of far-apart positions can come\ncloser than the model can "
            "reliably distinguish. The base should be\nlarge enough that the "
            "longest wavelength exceeds the document length\n")
        if k == 2:
            return text + f"(base 10,000 gives about {f['b10k']})."
        return text + (
            f"(with this variant's exponent ${_ki(k)}/d_{{\\mathrm{{model}}}}$ "
            f"even base 10,000 gives only about {f['b10k']}; it takes a base "
            f"above about {f['need']}).")
    text = (
        f"This variant's exponent ${_ki(k)}/d_{{\\mathrm{{model}}}}$ makes base "
        f"100 the paper's formula with the base $100^{{{k}/2}} = "
        f"{f['equiv']}$. The wavelengths run from $2\\pi$ to\n"
        f"$2\\pi\\cdot 100^{{{f['tex']}}} \\approx {f['longest']}$ positions "
        f"(neighbour ratio about {f['ratio']}), longer than the\ndocument: "
        f"{f['cycling']} of the 256 pairs complete a full cycle within "
        f"4,096 tokens, and the\n{f['slow']} slowest turn less than once "
        f"(the slowest by about {f['turn']:.2f} of a turn). Those slow\npairs "
        "grow steadily over the document and act as a coarse position\n"
        "counter, so positions 100 and 3,000 differ clearly in them, while "
        "the\nfast pairs tell neighbours apart. ")
    if f["turn"] < 0.5:
        return text + (
            "The idea is sound: it is the paper's own encoding at base "
            f"{f['equiv']}, as long as the documents stay well below "
            f"{f['longest']} tokens.")
    return text + (
        "The idea works, with little margin: the longest wavelength is only\n"
        f"about {f['longest']} positions, so documents much longer than "
        "4,096 tokens would make every pair cycle.")


def answer_zh(exponent):
    k, f = _k(exponent), _facts(_k(exponent))
    if f["slow"] == 0:
        text = (
            f"底数为 100 时，波长从 $2\\pi$ 到 $2\\pi\\cdot 100^{{{f['tex']}}} "
            f"\\approx {f['longest']}$ 个位置（相邻比值约为 {f['ratio']}）。"
            f"全部 256 对在 4,096 个词元内都至少完成"
            f"{_count(f['cycles'], WORDS_ZH, ' ')}个完整周期：没有哪一对是在整篇"
            "文档中稳定增长、充当粗略位置计数器的慢维度对。每一列都重复很多次，"
            "所以两个相距很远的位置（如 100 和 3,000）只能靠所有对的相位如何"
            "组合来区分；这样的组合可能近乎重复，相距很远的位置的编码可能会"
            "靠得比模型能可靠区分的还要近。底数应当足够大，使最长波长超过"
            "文档长度")
        if k == 2:
            return text + f"（底数 10,000 给出约 {f['b10k']}）。"
        return text + (
            f"（在本变体的指数 ${_ki(k)}/d_{{\\mathrm{{model}}}}$ 下，即使底数 "
            f"10,000 也只给出约 {f['b10k']}；底数要大于约 {f['need']} 才行）。")
    text = (
        f"本变体的指数 ${_ki(k)}/d_{{\\mathrm{{model}}}}$ 使底数 100 等同于论文"
        f"公式取底数 $100^{{{k}/2}} = {f['equiv']}$。波长从 $2\\pi$ 到 "
        f"$2\\pi\\cdot 100^{{{f['tex']}}} \\approx {f['longest']}$ 个位置"
        f"（相邻比值约为 {f['ratio']}），比文档还长：256 对中有 "
        f"{f['cycling']} 对在 4,096 个词元内完成一个完整周期，最慢的 "
        f"{f['slow']} 对转不到一圈（最慢的一对约转 {f['turn']:.2f} 圈）。"
        "这些慢维度对在整篇文档中稳定增长，充当粗略的位置计数器，所以位置 "
        "100 和 3,000 在它们上面明显不同，而快维度对区分相邻的位置。")
    if f["turn"] < 0.5:
        return text + (
            f"这个想法是合理的：它就是论文自己的编码取底数 {f['equiv']}，"
            f"只要文档远短于 {f['longest']} 个词元。")
    return text + (
        f"这个想法可行，但余量很小：最长波长只有约 {f['longest']} 个位置，"
        "所以比 4,096 长得多的文档会让每一对都循环。")


def grading_en(exponent):
    f = _facts(_k(exponent))
    if f["slow"] == 0:
        text = (f"1 point for the computed range (longest about "
                f"{f['longest']}, shorter\nthan 4,096, so every pair "
                "cycles); 1 point for the consequence (no\nslow pair, far "
                "positions can look alike).")
    else:
        text = (f"1 point for the computed range (longest about "
                f"{f['longest']}, longer than 4,096, so the {f['slow']} "
                "slowest pairs turn less than once); 1 point for the "
                "consequence (slow pairs count positions, far positions "
                "stay distinct).")
    if _k(exponent) != 2:
        text += (" A range computed with the paper's exponent (longest "
                 "about 617) gets no point.")
    return text


def grading_zh(exponent):
    f = _facts(_k(exponent))
    if f["slow"] == 0:
        text = (f"算出范围（最长约 {f['longest']}，短于 4,096，所以每一对都会"
                "循环），得 1 分；指出后果（没有慢维度对，远处的位置可能看起来"
                "相似），得 1 分。")
    else:
        text = (f"算出范围（最长约 {f['longest']}，长于 4,096，所以最慢的 "
                f"{f['slow']} 对转不到一圈），得 1 分；指出后果（慢维度对为"
                "位置计数，远处的位置仍可区分），得 1 分。")
    if _k(exponent) != 2:
        text += "按论文的指数算出的范围（最长约 617）不得分。"
    return text


def wrong_longest(exponent):
    """Question 5's bug, one pair past the end: 2 pi b^(k/2)."""
    power = {2: "", 4: "^2", 3: "^(3/2)", 1: "^(1/2)"}
    return f"2 pi b{power[_k(exponent)]}"


def omega_doc(exponent):
    """The docstring of Question 1's function: omega_i = b**(-k i/d_model)."""
    return f"b**(-{_ki(_k(exponent))}/d_model)"


def bound_message(exponent):
    """Question 2's visible check: the longest wavelength is not the one of
    pair d_model/2, one past the last, 2 pi b^(k/2) (the paper's 2 pi b)."""
    k = _k(exponent)
    if k == 2:
        return "the longest wavelength is not 2*pi*base (the bound the paper quotes): "
    return (f"the longest wavelength is not 2*pi*base**{k / 2:g} (the "
            "wavelength of pair d_model/2, which does not exist): ")
