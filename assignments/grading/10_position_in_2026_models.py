"""Teacher-side, never released: the values of
10_position_in_2026_models.json's ``derived`` (see tools/teaching/variants.py),
computed from the variant's exponent k (omega_i = b^(-k i/r) in the spread
convention, b^(-k i/d) in the proportional one): the model answer and
grading guide of Question 4, for GEMMA_STYLE (d = 256, a global layer with
proportional f = 0.25 at base 10^6, sliding layers at base 10^4 with a
window of 512) and a context of 131,072 tokens. With k = 2 they give the
public notebook's text back."""

import numpy as np

D, F, GLOBAL, LOCAL, WINDOW, CONTEXT = 256, 0.25, 1e6, 1e4, 512, 131072


def _n(x):
    """A number as the answer quotes it: three significant figures."""
    if x >= 1e7:
        mantissa, exponent = f"{x:.2e}".split("e")
        return f"${float(mantissa):.2g} \\times 10^{{{int(exponent)}}}$"
    if x >= 100:
        return f"{round(x, 2 - int(np.floor(np.log10(x)))):,.0f}"
    return f"{x:.3g}"


def _facts(exponent):
    k = int(exponent["n"])
    pairs = int(F * D // 2)
    lam_a = 2 * np.pi * GLOBAL ** (k * (pairs - 1) / D)
    r = int(D * F)
    lam_b = 2 * np.pi * GLOBAL ** (k * (r // 2 - 1) / r)
    lam_local = 2 * np.pi * LOCAL ** (k * np.arange(D // 2) / D)
    return {"k": k, "pairs": pairs, "a": lam_a, "b": lam_b,
            "ratio": lam_b / lam_a, "c": lam_local[-1],
            "turning": int((lam_local <= WINDOW).sum()),
            "cycles": CONTEXT / lam_a}


def answer_en(exponent):
    f = _facts(exponent)
    head = (
        f"(a) The global layer's `rope_type` is `\"proportional\"`: "
        f"{f['pairs']} of the\n128 pairs rotate, the fastest, with the "
        "frequencies of the whole head, and\nthe other 96 carry no "
        f"position. The slowest rotating pair has a wavelength\nof about "
        f"{_n(f['a'])} positions")
    if f["cycles"] >= 20:
        head += (f", so it turns some {_n(f['cycles'])} times over 131,072 "
                 "tokens: no\nrotating pair alone tells far positions apart "
                 "(only the combination of\ntheir phases does, and it can "
                 "nearly repeat), and the 96 position-free\npairs match far "
                 "keys by content alone.")
    elif f["cycles"] >= 1:
        head += (f", so it turns only some {_n(f['cycles'])} times over "
                 "131,072 tokens: the\nslowest rotating pairs still tell far "
                 "positions apart, coarsely.")
    else:
        head += (", longer than the context: the slowest rotating pairs "
                 "turn less\nthan once over 131,072 tokens, so even the "
                 "global layer tells far\npositions apart in them.")
    return head + (
        f"\n\n(b) Read as spread, the first 64 dimensions would rotate with "
        "the whole\nspectrum, the slowest at a wavelength of about "
        f"{_n(f['b'])} positions,\nsome {_n(f['ratio'])} times longer: "
        "another model. Both readings give 128\nfrequencies, 32 of them not "
        "0, so every weight loads and every shape\nfits; only the scores "
        "change, silently.\n\n(c) The sliding layers rotate all 128 pairs "
        f"at base 10,000; the longest\nwavelength is about {_n(f['c'])} "
        f"positions, far beyond their window of 512\nkeys: only "
        f"{f['turning']} pairs complete a turn within the window, the "
        "others\nmeasure offsets inside it. Order and short distances come "
        "from the\nsliding layers (and the causal mask); beyond 512 tokens, "
        "position reaches\nthe model only through the global layer's "
        "rotating pairs and what the causal\nmask lets it infer (Haviv et "
        "al., 2022, arXiv:2203.16634).")


def answer_zh(exponent):
    f = _facts(exponent)
    head = (
        f"(a) 全局层的 `rope_type` 是 `\"proportional\"`：128 对中有 "
        f"{f['pairs']} 对旋转，即最快的那些，用整个头的频率；其余 96 对不携带"
        f"位置。旋转的维度对中最慢的一对波长约为 {_n(f['a'])} 个位置")
    if f["cycles"] >= 20:
        head += (f"，所以它在 131,072 个词元内约转 {_n(f['cycles'])} 圈：没有"
                 "哪一对旋转的维度对能单独区分远处的位置（只有它们相位的组合才能，而这种"
                 "组合可能近乎重复），96 个不携带位置的维度对只凭内容匹配远处的键。")
    elif f["cycles"] >= 1:
        head += (f"，所以它在 131,072 个词元内只转约 {_n(f['cycles'])} 圈："
                 "最慢的旋转维度对仍能粗略地区分远处的位置。")
    else:
        head += ("，比上下文还长：最慢的旋转维度对在 131,072 个词元内转不满一圈，"
                 "所以全局层也能在它们上面区分远处的位置。")
    return head + (
        "\n\n(b) 若按 spread 理解，前 64 个维度会以整个频谱旋转，最慢的一对"
        f"波长约为 {_n(f['b'])} 个位置，约长 {_n(f['ratio'])} 倍：这是另"
        "一个模型。两种理解都给出 128 个频率，其中 32 个不为 0，所以每个权重"
        "都能加载，每个形状都吻合；只有分数在悄无声息地改变。\n\n(c) 滑动窗口层"
        f"以底数 10,000 旋转全部 128 对；最长波长约为 {_n(f['c'])} 个位置，远超"
        f"它们 512 个键的窗口：只有 {f['turning']} 对在窗口内转满一圈，其余的"
        "维度对度量窗口内的偏移。顺序和短距离来自滑动窗口层（以及因果掩码）；"
        "超过 512 个词元的位置信息只能通过全局层中旋转的维度对，以及因果掩码能让"
        "模型推断出的东西，到达模型（Haviv 等人，2022，arXiv:2203.16634）。")


def grading_en(exponent):
    f = _facts(exponent)
    return (f"1 point for (a) and (b): {f['pairs']} rotating pairs, longest "
            f"about {_n(f['a'])}\nagainst about {_n(f['b'])} read as spread, "
            "and no error because the\nshapes agree; 1 point for (c): about "
            f"{_n(f['c'])} against a window of 512,\nand where order and "
            "distance come from.")


def grading_zh(exponent):
    f = _facts(exponent)
    return (f"(a) 和 (b) 1 分：{f['pairs']} 对旋转，最长约 {_n(f['a'])}，按 "
            f"spread 理解则约为 {_n(f['b'])}，且因为形状一致而不报错；(c) 1 分：约 "
            f"{_n(f['c'])}，对比 512 的窗口，并说明顺序和距离从哪里来。")
