"""Teacher-side, never released: the values of
08_train_short_test_long.json's ``derived`` (see tools/teaching/variants.py),
computed from the variant's constant c of ALiBi's slopes 2^(-c h/H), at the
share p = 0.9 that Question 3 (b) compares with L: part (c) of Question 4's
prompt and model answer, for the experiment's H = 4 heads, L = 32 and
n = 256. With the public c = 8 they give the public notebook's text back.
The losses the model answer quotes were measured with the public slopes; a
variant's model answer says so.
"""

import numpy as np

HEADS, L, N = 4, 32, 256
WORDS = {0: "none", 1: "one", 2: "two", 3: "three", 4: "four"}
WORDS_ZH = {1: "一", 2: "两", 3: "三"}
TENTHS = {"0.9": ("nine tenths", "十分之九")}


def _heads(slope, p):
    c = int(slope["c"])
    a = 2.0 ** (-c * np.arange(1, HEADS + 1) / HEADS)
    share = -np.expm1(-a * L) / -np.expm1(-a * N)
    reach = np.ceil(-np.log1p(-float(p)) / a).astype(int)
    return c, a, share, reach


def _fraction(a):
    inverse = 1 / a
    if abs(inverse - round(inverse)) < 1e-9:
        return f"1/{round(inverse)}"
    return f"{a:.3f}"


def _list(items, conjunction="and"):
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else (
        ", ".join(items[:-1]) + f" {conjunction} " + items[-1])


def _far(share):
    return [h + 1 for h in range(HEADS) if share[h] < 0.5]


def prompt_c_en(slope):
    _c, _a, share, _r = _heads(slope, "0.9")
    far = _far(share)
    if not far:
        return ("although Question 3 shows that,\nwith equal content scores, "
                f"its flattest head, head 4, puts {1 - share[-1]:.1%} of its\n"
                "attention farther back than the last $L$ keys of a "
                "256-character window?")
    verb = "puts most of its" if len(far) == 1 else "put most of their"
    return ("although Question 3 shows that,\nwith equal content scores, "
            f"{WORDS[len(far)]} of its four heads {verb}\nattention farther "
            "back than the last $L$ keys of a 256-character window?")


def prompt_c_zh(slope):
    _c, _a, share, _r = _heads(slope, "0.9")
    far = _far(share)
    if not far:
        return ("第 3 题表明，在内容分数相同时，它最平缓的头（头 4）把 "
                f"{1 - share[-1]:.1%} 的注意力放在 256 个字符的窗口中比最后 $L$ "
                "个键更远的地方；那为什么它的损失没有上升？")
    return ("第 3 题表明，在内容分数相同时，它的四个头中有"
            f"{WORDS_ZH[len(far)]}个把大部分注意力放在 256 个字符的窗口中比"
            "最后 $L$ 个键更远的地方；那为什么它的损失没有上升？")


def answer_c_en(slope):
    p = "0.9"   # the share that Question 3 (b) compares with L
    c, a, share, reach = _heads(slope, p)
    near = [h + 1 for h in range(HEADS) if share[h] >= 0.5]
    far = _far(share)
    tenths = TENTHS[p][0]
    if c == 8:
        return (
            f"Heads 1 and 2 (slopes {_fraction(a[0])} and\n{_fraction(a[1])}) "
            "keep nearly all their weight on the last 32 keys "
            f"({share[0]:.4f} and {share[1]:.3f}\nat $n = 256$), so for them a "
            "long input looks like a training window. Question 3 (b)\nsays "
            f"the same for every length: {tenths} of head 1's attention "
            f"fall\non its {reach[0]} nearest keys and of head 2's on its "
            f"{reach[1]} nearest, about $L$,\nwhile heads 3 and 4 need "
            f"{reach[2]} and {reach[3]}.\nHeads 3 and 4 spread theirs further "
            f"back ({share[2]:.3f} and {share[3]:.3f} on the last 32\nkeys), "
            "but as a smooth average over more keys of the same text; they\n"
            "already averaged over up to 32 keys in training, and an average "
            "over more\nkeys of the same kind changes little.")
    text = (f"(The ALiBi losses quoted here and in (d) were measured with "
            "the public slopes, ALiBi's constant 8; this variant's slopes "
            f"$2^{{-{c}h/4}}$ are those of your students' models, whose "
            "ALiBi losses differ.) ")
    if near:
        text += (f"Head{'s' * (len(near) > 1)} {_list(near)} (slope"
                 f"{'s' * (len(near) > 1)} "
                 f"{_list(_fraction(a[h - 1]) for h in near)}) keep"
                 f"{'s' * (len(near) == 1)} most of "
                 f"{'their' if len(near) > 1 else 'its'} weight on the last "
                 f"32 keys ({_list(f'{share[h - 1]:.3f}' for h in near)} at "
                 f"$n = 256$), so for {'them' if len(near) > 1 else 'it'} a "
                 "long input looks like a training window. ")
    text += (f"Question 3 (b) says the same for every length: {tenths} of "
             "each head's attention fall on its "
             f"{_list(reach)} nearest keys (heads 1 to 4), against $L = 32$.")
    if far:
        text += (f"\nHead{'s' * (len(far) > 1)} {_list(far)} spread"
                 f"{'s' * (len(far) == 1)} "
                 f"{'theirs' if len(far) > 1 else 'its'} further back ("
                 f"{_list(f'{share[h - 1]:.3f}' for h in far)} on the last 32 "
                 "keys), but as a smooth average over more keys of the same "
                 "text; an average over more keys of the same kind changes "
                 "little.")
    return text


def answer_c_zh(slope):
    p = "0.9"   # the share that Question 3 (b) compares with L
    c, a, share, reach = _heads(slope, p)
    near = [h + 1 for h in range(HEADS) if share[h] >= 0.5]
    far = _far(share)
    tenths = TENTHS[p][1]
    if c == 8:
        return (
            f"头 1 和头 2（斜率 {_fraction(a[0])} 和 {_fraction(a[1])}）把几乎"
            "全部权重放在最后 32 个键上（$n = 256$ 时分别为 "
            f"{share[0]:.4f} 和 {share[1]:.3f}），所以对它们来说，长输入看起来"
            f"就像一个训练窗口。第 3 题 (b) 说明这对每个长度都成立：头 1 的"
            f"{tenths}的注意力落在它最近的 {reach[0]} 个键上，头 2 的落在最近的 "
            f"{reach[1]} 个键上，约为 $L$；而头 3 和头 4 分别需要 {reach[2]} 和 "
            f"{reach[3]} 个。头 3 和头 4 把注意力分散到更远处（在最后 32 个键上"
            f"分别为 {share[2]:.3f} 和 {share[3]:.3f}），但这只是对同一段文本中"
            "更多键的平滑平均；它们在训练中就已经对多达 32 个键求平均，对更多"
            "同类的键求平均，变化不大。")
    text = ("（这里和 (d) 中引用的 ALiBi 损失是用公开版本的斜率，即 ALiBi "
            "的常数 8，测得的；本变体的"
            f"斜率 $2^{{-{c}h/4}}$ 才是学生模型所用的，他们的 ALiBi 损失会不同。）")
    if near:
        text += (f"头 {'、'.join(map(str, near))}（斜率 "
                 f"{'、'.join(_fraction(a[h - 1]) for h in near)}）把大部分"
                 "权重放在最后 32 个键上（$n = 256$ 时为 "
                 f"{'、'.join(f'{share[h - 1]:.3f}' for h in near)}），所以对"
                 f"{'它们' if len(near) > 1 else '它'}来说，长输入看起来就像一个"
                 "训练窗口。")
    text += (f"第 3 题 (b) 说明这对每个长度都成立：每个头{tenths}的注意力分别落在"
             f"它最近的 {'、'.join(map(str, reach))} 个键上（头 1 到头 4），"
             "而 $L = 32$。")
    if far:
        text += (f"头 {'、'.join(map(str, far))} 把注意力分散到更远处（在最后 "
                 f"32 个键上为 {'、'.join(f'{share[h - 1]:.3f}' for h in far)}"
                 "），但这只是对同一段文本中更多键的平滑平均，对更多同类的键"
                 "求平均，变化不大。")
    return text
