"""Teacher-side, never released: the values of 02_sinusoidal_formula.json's
``derived`` (see tools/teaching/variants.py): the comments of Question 4's
solutions, computed from the variant's exponent k (the tutorial's encoding
is this variant's formula with the base b^(4/k)). With k = 2 they give the
public notebook's text back."""

from fractions import Fraction


def _k(exponent):
    return int(exponent["n"])


def comment_base(exponent):
    k = _k(exponent)
    text = ("# (base ** 2) ** (2k / d_model): the paper's formula with "
            "base ** 2.")
    if k == 2:
        return text
    power = Fraction(4, k)
    return ("# (base ** 2) ** (2k / d_model) = (base ** (" + str(power)
            + f")) ** ({k}k / d_model):\n    # this variant's formula (the "
            f"exponent {k}k / d_model) with base ** ({power}).")


def comment_fix(exponent):
    k = _k(exponent)
    if k == 2:
        return ("# pair index k: its exponent 2 * i / d_model is twice the "
                "paper's\n    # 2k / d_model. The smallest fix: the exponent "
                "i / d_model.")
    half = Fraction(k, 2)
    return ("# pair index k: its exponent 2 * i / d_model is 4k / d_model, "
            f"not this\n    # variant's {k}k / d_model. The smallest fix: the "
            f"exponent {float(half)} * i / d_model.")
