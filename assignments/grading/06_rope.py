"""Teacher-side, never released: the values of 06_rope.json's ``derived``
(see tools/teaching/variants.py): the comment of Question 3's slow query
and key, computed from the variant's exponent k (omega_i = b^(-k i/d), the
usual formula at the base b^(k/2)) for d = 16 and b = 10000. With k = 2 it
gives the public notebook's text back."""

import numpy as np

D, BASE, R = 16, 10000.0, 500


def _decay_bound(r, k):
    """RoFormer's D(r) = (1/(d/2)) sum_j |Z_j|, Z_j = sum_{i<j} e^(i r w_i)."""
    omega = BASE ** (-k * np.arange(D // 2) / D)
    return float(np.abs(np.cumsum(np.exp(1j * r * omega))).mean())


def comment_slow(exponent):
    k = int(exponent["ki"][:-1])
    omega = BASE ** (-k * (D // 2 - 1) / D)
    bound = _decay_bound(R, k)
    power = "(d - 2)/d" if k == 2 else f"{k}(d - 2)/(2d)"
    score = np.cos(R * omega)
    mantissa, exponent_ = f"{omega:.1e}".split("e")
    per = f"{mantissa}e{int(exponent_)}"
    return (
        f"# omega = b^(-{power}), {per} radians per position for d = 16 "
        f"and\n    # b = 10000, so cos(500 * omega) = {score:.2f}. D(r) does not "
        "forbid it: it\n    # is only a bound, |score| <= max_i |h_(i+1) - h_i| "
        "* (d/2) * D(r),\n    # and for this q and k that is (d/2) D(r) = 8 * "
        f"{bound:.3f} = {8 * bound:.1f} at\n    # r = 500, far above the score "
        f"{score:.2f}.")


def comment_bits(bits):
    """Question 4's bug with the variant's significand width: from 2^(b-1)
    to 2^b radians an angle is rounded to a whole radian."""
    b = int(bits)
    which = "in bfloat16" if b == 8 else f"with {b} significand bits"
    return (f"# {which} an angle between {2 ** (b - 1)} and {2 ** b} radians "
            "is rounded to a\n    # whole radian, and from "
            f"{2 ** b + 1} on not every position stays distinct\n"
            f"    # ({2 ** b + 1} -> {2 ** b}).")
