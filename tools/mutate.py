"""Plant classic bugs one at a time and check that the tests catch each.

A mutation run, on demand (not in CI; about 50 minutes on two shared
cores, 10 of them building the book and running the browser tests)::

    .venv/bin/python tools/mutate.py                 # every mutant
    .venv/bin/python tools/mutate.py --list          # the catalogue
    .venv/bin/python tools/mutate.py --only t5-cap js-rope-sign
    .venv/bin/python tools/mutate.py --no-browser    # skip the JS mutants

The repository is copied (``git archive HEAD``, or the working tree with
``--worktree``) into a temporary folder; the working tree is never touched.
Each mutant replaces one piece of code (``posenc_core.py``, ``posenc.js``,
a chapter's plotting module or script) by a plausible bug, then runs the
tests that should notice it, file by file with ``-x``; the bug is *caught*
when at least one of them fails. Test files that already fail on the
unmodified copy are reported and not counted. Mutants of ``posenc.js`` and
of the chapter scripts run the browser tests (Chromium, Playwright) against
a copy of a book built once from the unmodified copy, with the mutated
script put in its ``_static`` folder.

The result, a Markdown table, goes to stdout and to ``--out`` (by default
``tools/mutate-result.md``), rewritten after each mutant, so that a run cut
short leaves what it finished. A target's baseline (on the unmodified copy)
runs when a mutant first needs it; ``--first PREFIX ...`` runs the mutants
whose names start so first. The exit status is 1 if a mutant survives.
"""

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CORE = ["tests/test_core.py", "tests/test_core_properties.py",
        "tests/test_robustness.py", "tests/test_precision.py"]
REFERENCE = "tests/test_reference.py"
BROWSER = "tests/test_browser.py"


@dataclasses.dataclass
class Mutant:
    name: str
    what: str
    path: str
    edits: list  # (old, new): each old must occur exactly once
    tests: list  # "file" or "file::-k expression"


def m(name, what, path, edits, tests):
    return Mutant(name, what, path, edits, tests)


PC = "posenc_core.py"
JS = "_assets/posenc/posenc.js"
# posenc.js rotates a pair in two places (apply_rope, apply_rope_angles)
_JS_PAIR = ("        var i1 = layout === \"interleaved\" ? 2 * i : i;\n"
            "        var i2 = layout === \"interleaved\" ? 2 * i + 1 : i + half;\n"
            "        var x1 = row[i1], x2 = row[i2];\n")
_JS_ROTATE = ("        out[i1] = x1 * c - x2 * s;\n"
              "        out[i2] = x2 * c + x1 * s;")
_JS_ROTATE_BACK = ("        out[i1] = x1 * c + x2 * s;\n"
                   "        out[i2] = x2 * c - x1 * s;")
JS_TESTS = [f"{BROWSER}::core_agrees or widget", f"{REFERENCE}::posenc_js"]
LAB_EXP = "posenc_lab/experiment.py"
LAB_RUNS = "tests/test_lab_runs.py"
I18N = "tools/i18n.py"
I18N_TESTS = "tests/test_i18n.py"
EXT = "_ext/posenc_widgets.py"
EXT_TESTS = "tests/test_ext.py"
V9 = ["tests/test_core_vision.py", "tests/test_reference_vision.py"]

MUTANTS = [
    # ---------------------------------------------------- posenc_core.py
    m("sin-cos-swapped", "sinusoidal_encoding: sin and cos swapped", PC,
      [("np.sin(angle, out=P[:, sin_cols])", "np.cos(angle, out=P[:, sin_cols])"),
       ("np.cos(angle, out=P[:, cos_cols])", "np.sin(angle, out=P[:, cos_cols])")],
      [*CORE, f"{REFERENCE}::sinusoidal or gptj", "tests/test_ch02_formula.py"]),
    m("doubled-exponent", "frequencies: base**(-2(2i)/d), the index doubled",
      PC, [("return base ** (-2.0 * i / d_model)",
            "return base ** (-4.0 * i / d_model)")],
      [*CORE, f"{REFERENCE}::sinusoidal or gptj", "tests/test_ch02_formula.py"]),
    m("shift-matrix-transposed", "relative_shift_matrix rotates backwards",
      PC, [("    M[idx, idx + 1] = sin\n    M[idx + 1, idx] = -sin",
            "    M[idx, idx + 1] = -sin\n    M[idx + 1, idx] = sin")],
      [*CORE, "tests/test_ch05_relative.py"]),
    m("binary-bits-reversed", "binary_encoding: most significant bit first",
      PC, [("return (pos[:, None] >> np.arange(n_bits, dtype=np.int64)) & 1",
            "return (pos[:, None] >> np.arange(n_bits - 1, -1, -1)) & 1")],
      [*CORE, "tests/test_ch04_binary.py"]),
    m("causal-mask-transposed", "self_attention masks the past, not the "
      "future", PC,
      [("scores[i, i + 1:] = -np.inf", "scores[i + 1:, i] = -np.inf")],
      [*CORE, "tests/test_ch01_order.py", "tests/test_ch05_relative.py"]),
    m("no-sqrt-scaling", "self_attention divides the scores by d_k, not "
      "sqrt(d_k)", PC,
      [("scores /= np.sqrt(q.shape[1])", "scores /= q.shape[1]")],
      [*CORE, "tests/test_ch01_order.py", "tests/test_ch05_relative.py"]),
    m("rope-sign", "apply_rope rotates clockwise (the wrong direction)", PC,
      [("    np.sin(angle, out=rot.imag)\n",
        "    np.sin(angle, out=rot.imag)\n    rot.imag *= -1\n"),
       ("    o1 -= tmp\n", "    o1 += tmp\n"),
       ("    o2 += tmp\n", "    o2 -= tmp\n")],
      [*CORE, f"{REFERENCE}::rope", "tests/test_ch06_rope.py"]),
    m("rope-half-pairing", 'apply_rope pairs (2i, 2i+1) for layout="half"',
      PC, [('        if layout == "interleaved":\n'
            '            finite = _rotate_pairs(',
            '        if True:\n            finite = _rotate_pairs(')],
      [*CORE, f"{REFERENCE}::rope", "tests/test_ch06_rope.py"]),
    m("rope-finite-unchecked", "apply_rope: a non-finite x passes (its "
      "check on the result skipped)", PC,
      [("    if not finite:\n        _float_array(\"x\", x, what)\n",
        "    if False:\n        _float_array(\"x\", x, what)\n")],
      [*CORE]),
    m("rope-angle-unchecked", "apply_rope: positions times frequencies "
      "that overflow pass (the largest angle taken from the first pair)", PC,
      [("largest = np.abs(pos).max() * theta.max() if angle.size else 0.0",
        "largest = np.abs(pos).max() * theta[0] if angle.size else 0.0")],
      # (theta[0] is the largest for rope_frequencies: only frequencies
      # given out of order tell the two apart)
      [*CORE]),
    m("layout-permutation", "rope_layout_permutation: odds before evens",
      PC, [("return np.concatenate([idx[0::2], idx[1::2]])",
            "return np.concatenate([idx[1::2], idx[0::2]])")],
      [*CORE, "tests/test_ch06_rope.py"]),
    m("rope-frequency-exponent", "rope_frequencies: base**(-4i/d)", PC,
      [("        return base ** (-2.0 * i / head_dim)\n    kind, p =",
        "        return base ** (-4.0 * i / head_dim)\n    kind, p ="),
       ("    theta = base ** (-2.0 * i / dim)\n",
        "    theta = base ** (-4.0 * i / dim)\n")],
      [*CORE, f"{REFERENCE}::rope", "tests/test_ch06_rope.py"]),
    m("linear-multiplies", "Position Interpolation multiplies by s", PC,
      [('    if kind == "linear":\n        return theta / s',
        '    if kind == "linear":\n        return theta * s')],
      [*CORE, f"{REFERENCE}::scaling", "tests/test_ch07_extension.py"]),
    m("ntk-exponent", "NTK-aware base: base * s, without d/(d-2)", PC,
      [("new_base = base * stretch ** (dim / (dim - 2))",
        "new_base = base * stretch")],
      [*CORE, f"{REFERENCE}::ntk", "tests/test_ch07_extension.py"]),
    m("yarn-bounds-swapped", "YaRN: beta_fast and beta_slow swapped", PC,
      [('correction_dim(p["beta_fast"]), correction_dim(\n'
        '            p["beta_slow"])',
        'correction_dim(p["beta_slow"]), correction_dim(\n'
        '            p["beta_fast"])')],
      [*CORE, f"{REFERENCE}::scaling", "tests/test_ch07_extension.py"]),
    m("yarn-ramp-reversed", "YaRN: the ramp runs the other way", PC,
      [("keep = 1.0 - ramp", "keep = ramp")],
      [*CORE, f"{REFERENCE}::scaling", "tests/test_ch07_extension.py"]),
    m("yarn-floor-ceil", "YaRN: ceil and floor of the correction range "
      "swapped (the middle band moves by one pair)", PC,
      [("low, high = np.floor(low), np.ceil(high)",
        "low, high = np.ceil(low), np.floor(high)")],
      [*CORE, f"{REFERENCE}::scaling", "tests/test_ch07_extension.py"]),
    m("llama3-smooth-reversed", "Llama 3: the smooth band interpolates the "
      "wrong way", PC,
      [("smooth = (1 - mu) * out / s + mu * out",
        "smooth = mu * out / s + (1 - mu) * out")],
      [*CORE, f"{REFERENCE}::scaling", "tests/test_ch07_extension.py"]),
    m("yarn-temperature", "yarn_attention_scale with log10", PC,
      [("return float(0.1 * np.log(s) + 1.0)",
        "return float(0.1 * np.log10(s) + 1.0)")],
      [*CORE, f"{REFERENCE}::yarn", "tests/test_ch07_extension.py"]),
    m("decay-bound-mean", "rope_decay_bound divides by d/2 + 1", PC,
      [("return np.abs(S).mean(axis=1)",
        "return np.abs(S).sum(axis=1) / (S.shape[1] + 1)")],
      [*CORE, "tests/test_ch06_rope.py"]),
    m("round-significand-floor", "round_significand truncates", PC,
      [("np.ldexp(np.rint(np.ldexp(mantissa, bits))",
        "np.ldexp(np.trunc(np.ldexp(mantissa, bits))")],
      [*CORE, "tests/test_ch06_rope.py"]),
    m("relative-sign", "relative_positions: i - j instead of j - i", PC,
      [("R = idx[None, :] - idx[:, None]", "R = idx[:, None] - idx[None, :]")],
      [*CORE, "tests/test_ch05_relative.py"]),
    m("shaw-sign", "shaw_attention looks up w_{i-j} instead of w_{j-i}", PC,
      [("idx = relative_positions(n, max_distance=k) + k",
        "idx = k - relative_positions(n, max_distance=k)")],
      [*CORE, "tests/test_ch05_relative.py"]),
    m("t5-cap", "T5: the last bucket is n, not n - 1 (off by one)", PC,
      [("large = np.minimum(max_exact + large.astype(np.int64), n - 1)",
        "large = np.minimum(max_exact + large.astype(np.int64), n)")],
      [*CORE, REFERENCE, "tests/test_ch05_relative.py"]),
    m("t5-zero-side", "T5: relative position 0 in the keys-after half", PC,
      [("bucket = np.where(rel > 0, n, 0)", "bucket = np.where(rel >= 0, n, 0)")],
      [*CORE, REFERENCE, "tests/test_ch05_relative.py"]),
    m("t5-exact-count", "T5: one exact bucket too many (n // 2 + 1)", PC,
      [("    max_exact = n // 2\n    max_distance = _check_int(",
        "    max_exact = n // 2 + 1\n    max_distance = _check_int(")],
      [*CORE, REFERENCE, "tests/test_ch05_relative.py"]),
    m("t5-numpy-float32-log", "T5: numpy's float32 logarithm (the bug of "
      "issue 16)", PC,
      [("ratio = np.log(x.astype(np.float64)).astype(np.float32)",
        "ratio = np.log(x)")],
      [*CORE, REFERENCE, "tests/test_ch05_relative.py"]),
    m("alibi-slope-off-by-one", "alibi_slopes: 2**(-8h/n) for h = 0..n-1",
      PC, [("return 2.0 ** (-8.0 * np.arange(1, count + 1) / count)",
            "return 2.0 ** (-8.0 * np.arange(0, count) / count)")],
      [*CORE, f"{REFERENCE}::alibi", "tests/test_ch05_relative.py"]),
    m("alibi-odd-heads", "alibi_slopes: the even-numbered extra slopes", PC,
      [("extra = power_of_two(2 * p)[0::2][: n_heads - p]",
        "extra = power_of_two(2 * p)[1::2][: n_heads - p]")],
      [*CORE, f"{REFERENCE}::alibi", "tests/test_ch05_relative.py"]),
    m("alibi-bias-sign", "alibi_bias rewards distance", PC,
      [("minus_distance = 0.0 - np.abs(relative_positions(n))",
        "minus_distance = 0.0 + np.abs(relative_positions(n))")],
      [*CORE, "tests/test_ch05_relative.py"]),
    # ---- chapter 9: 2-D and 3-D positions
    m("sincos-2d-axes-swapped", "sincos_2d_encoding: MAE's first half "
      "from the row", PC,
      [("blocks = [np.sin(ax), np.cos(ax), np.sin(ay), np.cos(ay)]",
        "blocks = [np.sin(ay), np.cos(ay), np.sin(ax), np.cos(ax)]")],
      V9),
    m("axial-row-first", "rope_axial_angles: the row on the first half "
      "(DINOv3's order in rope-vit's scheme)", PC,
      [("[c[:, 1:2] * omega, c[:, 0:1] * omega]",
        "[c[:, 0:1] * omega, c[:, 1:2] * omega]")], V9),
    m("axial-exponent-1d", "rope-vit's and DINOv3's frequencies spaced "
      "as 1-D RoPE's, base**(-2j/d)", PC,
      [("return base ** (-4.0 * j / head_dim)",
        "return base ** (-2.0 * j / head_dim)")], V9),
    m("mixed-no-quarter-turn", "rope_mixed_frequencies: the second half "
      "along the head's direction, not at right angles", PC,
      [("omega * np.cos(psi + np.pi / 2)", "omega * np.cos(psi)"),
       ("omega * np.sin(psi + np.pi / 2)", "omega * np.sin(psi)")], V9),
    m("dinov3-no-two-pi", "dinov3_rope_angles: periods read as "
      "frequencies (no 2 pi)", PC,
      [("omega = 2.0 * np.pi * _axial_frequencies(head_dim, base)",
        "omega = _axial_frequencies(head_dim, base)")], V9),
    m("coords-corner", "normalized_patch_coordinates: patch corners, not "
      "centres", PC,
      [("np.stack([2.0 * (r + 0.5) / sh - 1.0, 2.0 * (c + 0.5) / sw - 1.0],",
        "np.stack([2.0 * r / sh - 1.0, 2.0 * c / sw - 1.0],")], V9),
    m("augment-shift-last", "augment_coordinates: shift after the "
      "stretch", PC,
      [("out = s * (j * (c + d))", "out = s * (j * c) + d")], V9),
    m("rope-angles-sign", "apply_rope_angles: rotation the wrong way", PC,
      [("y1 = x1 * cos - x2 * sin", "y1 = x1 * cos + x2 * sin"),
       ("y2 = x2 * cos + x1 * sin", "y2 = x2 * cos - x1 * sin")], V9),
    m("mrope-merge-off-by-one", "mrope_position_ids: one column too many "
      "in the merged grid", PC,
      [("out.append((seg[0], t, h // merge, w // merge, seconds))",
        "out.append((seg[0], t, h // merge, w // merge + 1, seconds))")],
      V9),
    m("mrope-next-text-overlaps", "mrope_position_ids: the text after an "
      "image starts at the largest id, not one after", PC,
      [("start = int(block.max()) + 1", "start = int(block.max())")], V9),
    m("mrope-spatial-counts-time", "mrope_position_ids, next_text="
      "'spatial': the advance counts the frame groups", PC,
      [("start += max(h, w)", "start += max(t, h, w)")], V9),
    m("mrope-images-timed", "mrope_position_ids: Qwen2.5-VL scales an "
      "image's time id too", PC,
      [('if variant == "qwen2.5-vl" and kind == "video":',
        'if variant == "qwen2.5-vl":')], V9),
    m("mrope-qwen3-unsplit", "mrope_position_ids: Qwen3-VL's videos kept "
      "whole", PC,
      [('    if variant == "qwen3-vl":\n        segs = [s for seg in segs',
        '    if False:\n        segs = [s for seg in segs')], V9),
    m("mrope-interleave-offsets", "mrope_pair_axes: Qwen3-VL's height and "
      "width offsets swapped", PC,
      [("for axis, offset in ((1, 1), (2, 2)):",
        "for axis, offset in ((1, 2), (2, 1)):")], V9),
    m("mrope-chunks-reversed", "mrope_pair_axes: width on the fastest "
      "pairs, time on the slowest", PC,
      [("return np.repeat(np.arange(3, dtype=np.int64), section)",
        "return np.repeat(np.arange(3, dtype=np.int64)[::-1], "
        "section[::-1])")], V9),
    # --------------------------------------- posenc_lab (issue 29)
    m("lab-torch-seed-constant", "run_one seeds torch with 0 for every seed "
      "(the 'mean over seeds' would measure batch order only)", LAB_EXP,
      [("    torch.manual_seed(seed)\n    rng", "    torch.manual_seed(0)\n    rng")],
      [LAB_RUNS]),
    m("lab-eval-seed-constant", "copying evaluation examples the same for "
      "every seed", LAB_EXP,
      [("eval_rng = np.random.default_rng([seed, 1])",
        "eval_rng = np.random.default_rng([0, 1])")],
      [LAB_RUNS]),
    m("lab-eval-from-training-rng", "copying evaluation examples drawn from "
      "the training batches' generator (they follow the number of steps)",
      LAB_EXP, [("eval_rng = np.random.default_rng([seed, 1])",
                 "eval_rng = rng")],
      [LAB_RUNS]),
    m("lab-values-rotated", "RoPE rotates the values as well as the keys",
      "posenc_lab/model.py",
      [('            k = torch.einsum("bhnd,nde->bhne", k, rotations)\n',
        '            k = torch.einsum("bhnd,nde->bhne", k, rotations)\n'
        '            v = torch.einsum("bhnd,nde->bhne", v, rotations)\n')],
      [LAB_RUNS, "tests/test_lab.py"]),
    m("lab-stretch-longest", "stretching RoPE with the longest length's "
      "factor at every length", LAB_EXP,
      [("_rope_scaling(kind, n / L, L)", "_rope_scaling(kind, longest / L, L)")],
      [LAB_RUNS]),
    m("lab-yarn-no-temperature", "YaRN evaluated without its temperature",
      LAB_EXP, [('temperature=kind == "yarn")', "temperature=False)")],
      [LAB_RUNS]),
    m("lab-temperature-ignored", "the model ignores the temperature "
      "(logit_scale) in its scores", "posenc_lab/model.py",
      [("* (logit_scale / math.sqrt(self.head_dim))",
        "* (1.0 / math.sqrt(self.head_dim))")],
      [LAB_RUNS, "tests/test_lab.py"]),
    m("lab-valid-in-training", "the validation text joins the training "
      "windows", LAB_EXP,
      [("_lm_batches(train_ids, cfg.batch_size",
        "_lm_batches(np.concatenate([train_ids, valid_ids]), cfg.batch_size")],
      [LAB_RUNS]),
    m("lab-finetune-on-valid", "RoPE's fine-tunings train on the validation "
      "text", LAB_EXP,
      [("_lm_batches(train_ids, batch, L_new, rng)",
        "_lm_batches(valid_ids, batch, L_new, rng)")],
      [LAB_RUNS]),
    m("lab-corpus-whole-text", "load_corpus trains on the whole book", LAB_EXP,
      [("return vocab, vocab.encode(train), vocab.encode(valid)",
        "return vocab, vocab.encode(text), vocab.encode(valid)")],
      [LAB_RUNS]),
    # ------------------------------------- tools/i18n.py (issue 29)
    m("i18n-update-drops-fuzzy", "a second update drops the fuzzy flag of a "
      "translation under review", I18N,
      [('e.flags = [f for f in prior.flags if f == "fuzzy"] if prior.msgstr '
        'else []', "e.flags = []")],
      [f"{I18N_TESTS}::twice or stats_count"]),
    m("i18n-update-drops-previous", "a second update drops the previous "
      "English of a fuzzy translation", I18N,
      [("e.previous = prior.previous if e.fuzzy else None", "e.previous = None")],
      [f"{I18N_TESTS}::twice or stats_count"]),
    m("i18n-stats-fuzzy-translated", "stats counts fuzzy translations as "
      "translated", I18N,
      [('"translated": sum(e.translated for e in active)',
        '"translated": sum(bool(e.msgstr) for e in active)')],
      [f"{I18N_TESTS}::twice or stats_count or complete"]),
    m("i18n-check-no-link", "the markup check ignores URLs", I18N,
      [('("label", _LABEL), ("link", _URL),', '("label", _LABEL),')],
      [f"{I18N_TESTS}::markup"]),
    m("i18n-check-no-link-target", "the markup check ignores link targets",
      I18N, [('("link target", _LINK)', '')],
      [f"{I18N_TESTS}::markup"]),
    m("i18n-check-no-inline-code", "the markup check ignores inline code",
      I18N, [('("inline code", _CODE),', '')],
      [f"{I18N_TESTS}::markup"]),
    m("i18n-check-no-label", "the markup check ignores labels", I18N,
      [('("label", _LABEL), ', '')],
      [f"{I18N_TESTS}::markup"]),
    m("i18n-check-no-math", "the markup check ignores math", I18N,
      [('("math", _MATH), ', '')],
      [f"{I18N_TESTS}::markup"]),
    m("i18n-check-no-fences", "the markup check ignores fences, options and "
      "$$ lines", I18N,
      [("    if _fence_lines(msgid) != _fence_lines(msgstr):",
        "    if False:")],
      [f"{I18N_TESTS}::markup"]),
    m("i18n-notebook-drops-outputs", "translated notebooks lose their code "
      "cells' outputs", I18N,
      [('            elif translate_outputs:\n'
        '                _translate_outputs(cell)\n',
        '            else:\n'
        '                cell.outputs = []\n')],
      [f"{I18N_TESTS}::same_code"]),
    # --------------------------------- _ext/posenc_widgets.py (issue 29)
    m("ext-keeps-cdn-scripts", "the extension keeps require.js and the "
      "widgets' HTML manager from their CDNs", EXT,
      [('r"require\\.js|require\\.min\\.js|html-manager|embed-amd|'
        'sphinx-thebe"', 'r"sphinx-thebe"')],
      [EXT_TESTS]),
    m("ext-keeps-widget-state", "the extension keeps stored widget state "
      "(a drop needs both a CDN name and the state type)", EXT,
      [("            if _DROP.search(text) or kind == (",
        "            if _DROP.search(text) and kind == (")],
      [EXT_TESTS]),
    m("ext-keeps-thebe", "the extension keeps sphinx-thebe's scripts", EXT,
      [('|embed-amd|sphinx-thebe"\n    r"|thebe_selector|THEBE_JS_URL")',
        '|embed-amd"\n    r"")')],
      [EXT_TESTS]),
    # ------------------------------------- citations (issue 29)
    m("cite-label-style", "citations as numbered labels ([1]): the "
      "configuration's reference style", "_config.yml",
      [("bibtex_reference_style: author_year_round",
        "bibtex_reference_style: label")],
      ["tests/test_citation_style.py"]),
    m("cite-style-not-registered-round", "the extension registers plain "
      "author-year (square brackets) under the book's style name",
      "_ext/posenc_bibliography.py",
      [("        reference_style(), force=True)",
        "        __import__('sphinxcontrib.bibtex.style.referencing.author_year',"
        " fromlist=['x']).AuthorYearReferenceStyle, force=True)")],
      ["tests/test_citation_style.py"]),
    # -------------------------------------------- the grader (issue 29)
    m("grade-marks-wrong-student", "the teacher's marks of an assignment go "
      "to every student's job (the first student's marks)",
      "tools/teaching/grade.py",
      [("given = all_marks.get((sub.student_id, sub.assignment), {})",
        "given = next((v for (s, a), v in sorted(all_marks.items()) "
        "if a == sub.assignment), {})")],
      ["tests/test_grading_wiring.py"]),
    m("grade-ignores-variant", "grading builds the public assignment, "
      "whatever --variant says", "tools/teaching/grade.py",
      [("tasks = {name: Assignment(name, available[name], variant_seed)",
        "tasks = {name: Assignment(name, available[name])")],
      ["tests/test_grading_wiring.py"]),
    m("grade-cli-drops-variant", "assignments.py grade does not pass "
      "--variant on", "tools/teaching/cli.py",
      [("variant_seed=args.variant, marks=args.marks",
        "variant_seed=None, marks=args.marks")],
      ["tests/test_grading_wiring.py"]),
    # ------------------------------------------------ plotting functions
    m("plot-ignores-base-ch06", "ch06 decay-bound figure ignores its base "
      "slider", "posenc_plots/ch06_rope.py",
      [("B = pc.rope_decay_bound(max_distance + 1, head_dim, base=base)",
        "B = pc.rope_decay_bound(max_distance + 1, head_dim)")],
      ["tests/test_ch06_rope.py"]),
    m("plot-ignores-max-distance-ch05", "ch05 T5 figure ignores its "
      "max_distance slider (beyond the x range)",
      "posenc_plots/ch05_relative.py",
      [("                r, bidirectional=bidirectional, "
        "num_buckets=num_buckets,\n"
        "                max_distance=max_distance)",
        "                r, bidirectional=bidirectional, "
        "num_buckets=num_buckets)")],
      ["tests/test_ch05_relative.py"]),
    m("plot-ignores-base-ch02", "ch02 explore_encoding: the heatmap ignores "
      "its base slider", "posenc_plots/ch02_formula.py",
      [('cache["P"] = pc.sinusoidal_encoding(N_POSITIONS, d_model,\n'
        '                                                base=base)',
        'cache["P"] = pc.sinusoidal_encoding(N_POSITIONS, d_model)')],
      ["tests/test_ch02_formula.py"]),
    m("live-cache-stale-ch02", "ch02 explore_encoding: the live figure "
      "keeps its encoding when only base moves (stale cache)",
      "posenc_plots/ch02_formula.py",
      [('if cache.get("key") != (d_model, base):\n'
        '            cache["key"] = (d_model, base)',
        'if cache.get("key") != d_model:\n'
        '            cache["key"] = d_model')],
      ["tests/test_ch02_formula.py", "tests/test_plots_show.py"]),
    # ---------------------------------------------------------- posenc.js
    m("js-sin-cos-swapped", "posenc.js: sin and cos swapped", JS,
      [("row[2 * i] = Math.sin(a);\n          row[2 * i + 1] = Math.cos(a);",
        "row[2 * i] = Math.cos(a);\n          row[2 * i + 1] = Math.sin(a);")],
      JS_TESTS),
    m("js-rope-sign", "posenc.js: RoPE rotates clockwise", JS,
      [("s = Math.sin(a);\n" + _JS_PAIR + _JS_ROTATE,
        "s = Math.sin(a);\n" + _JS_PAIR + _JS_ROTATE_BACK)],
      JS_TESTS),
    m("js-rope-angles-sign", "posenc.js: apply_rope_angles rotates "
      "clockwise (chapter 9's 2-D RoPE)", JS,
      [("s = Math.sin(a[i]);\n" + _JS_PAIR + _JS_ROTATE,
        "s = Math.sin(a[i]);\n" + _JS_PAIR + _JS_ROTATE_BACK)],
      JS_TESTS),
    m("js-t5-cap", "posenc.js: T5's last bucket off by one", JS,
      [("return bucket + Math.min(large, n - 1);",
        "return bucket + Math.min(large, n);")],
      JS_TESTS),
    m("js-t5-float64", "posenc.js: T5's logarithm in float64", JS,
      [("var ratio = f32(Math.log(f32(f32(dist) / f32(maxExact))));",
        "var ratio = Math.log(dist / maxExact);")],
      JS_TESTS),
    m("js-alibi-off-by-one", "posenc.js: ALiBi slopes for h = 0..n-1", JS,
      [("for (var h = 1; h <= count; h++)", "for (var h = 0; h < count; h++)")],
      JS_TESTS),
    m("js-causal-transposed", "posenc.js: the causal mask transposed", JS,
      [("if (causal && j > i) val = -Infinity;",
        "if (causal && j < i) val = -Infinity;")],
      JS_TESTS),
    m("js-plot-ignores-base-ch06", "ch06_rope.js: the decay bound ignores "
      "its base slider", "_assets/posenc/ch06_rope.js",
      [("var B = core.rope_decay_bound(md + 1, headDim, { base: base });",
        "var B = core.rope_decay_bound(md + 1, headDim, { base: 10000.0 });")],
      [f"{BROWSER}::widget"]),
]


def is_browser(mutant):
    return any(t.startswith(BROWSER) for t in mutant.tests)


def snapshot(dest, worktree):
    """A copy of the repository in ``dest``: HEAD, or the working tree."""
    dest.mkdir(parents=True)
    if worktree:
        files = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], cwd=ROOT, check=True,
            capture_output=True).stdout.decode().split("\0")
        for name in filter(None, files):
            src = ROOT / name
            if src.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
    else:
        archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"],
                                 cwd=ROOT, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout,
                       check=True)
    if (ROOT / "node_modules").is_dir():  # MathJax, axe-core for the build
        (dest / "node_modules").symlink_to(ROOT / "node_modules")


def mutated(mutant, repo):
    """The mutated text of the mutant's file, or raise LookupError."""
    text = (repo / mutant.path).read_text(encoding="utf-8")
    for old, new in mutant.edits:
        count = text.count(old)
        if count != 1:
            raise LookupError(
                f"`{old.strip()[:60]}` occurs {count} times in "
                f"{mutant.path}: the code changed, update the catalogue")
        text = text.replace(old, new)
    return text


def apply(mutant, repo):
    path = repo / mutant.path
    original = path.read_text(encoding="utf-8")
    path.write_text(mutated(mutant, repo), encoding="utf-8")
    return original


class Runner:
    def __init__(self, repo, workdir, browser):
        self.repo, self.workdir, self.browser = repo, workdir, browser
        self.book = self.book_env = None
        self.book_failed = ""
        self.env = dict(os.environ, PYTHONPATH=str(repo),
                        PYTHONDONTWRITEBYTECODE="1",
                        POSENC_REQUIRE_BROWSER="1")
        self.env.pop("POSENC_BOOK_HTML", None)

    def pytest(self, target, env=None, basetemp=None):
        """Run one test target with -x; return (status, failing test)."""
        file, _, expr = target.partition("::")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p",
               "no:cacheprovider", "-p", "no:randomly", file]
        if expr:
            cmd += ["-k", expr]
        if basetemp:
            cmd += ["--basetemp", str(basetemp)]
        done = subprocess.run(cmd, cwd=self.repo, env=env or self.env,
                              capture_output=True, text=True)
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M)
        status = {0: "pass", 1: "fail", 5: "no tests"}.get(
            done.returncode, f"error {done.returncode}")
        tail = done.stdout.strip().splitlines()[-1:] or [""]
        return status, (failed[0] if failed else tail[0])

    def build_book(self):
        """Build the unmodified copy's book (through the browser tests'
        fixture); later browser runs use it through POSENC_BOOK_HTML."""
        base = self.workdir / "pytest-book"
        status, info = self.pytest(f"{BROWSER}::core_agrees", basetemp=base)
        html = next(base.glob("**/_build/html"), None)
        if html is None:
            raise RuntimeError(f"the book was not built: {status} {info}")
        self.book = html
        self.book_env = dict(self.env, POSENC_BOOK_HTML=str(html))

    def env_for(self, mutant):
        if not (is_browser(mutant) and mutant.path.startswith("_assets/")):
            return self.env
        # the built book, with the mutated script in its _static folder
        book = self.workdir / "book-mutant"
        shutil.rmtree(book, ignore_errors=True)
        shutil.copytree(self.book, book, symlinks=True)
        rel = Path(mutant.path).relative_to("_assets")
        shutil.copy2(self.repo / mutant.path, book / "_static" / rel)
        return dict(self.env, POSENC_BOOK_HTML=str(book))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--worktree", action="store_true",
                        help="copy the working tree instead of HEAD")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--check", action="store_true",
                        help="only check that every mutant applies")
    parser.add_argument("--out", default=str(ROOT / "tools/mutate-result.md"))
    parser.add_argument("--stop-at-first", action="store_true",
                        help="stop a mutant's targets at the first that "
                        "fails (a faster run; the table then counts the "
                        "targets run, not all of them)")
    parser.add_argument("--first", nargs="+", metavar="PREFIX", default=[],
                        help="run the mutants whose names start so first")
    args = parser.parse_args(argv)
    mutants = [mu for mu in MUTANTS if not args.only or mu.name in args.only]
    if args.no_browser:
        mutants = [mu for mu in mutants if not is_browser(mu)]
    if args.list:
        for mu in mutants:
            print(f"{mu.name:32} {mu.what}")
        return 0
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="posenc-mutate-") as tmp:
        workdir = Path(tmp)
        repo = workdir / "repo"
        snapshot(repo, args.worktree)
        stale = {}
        for mu in mutants:
            try:
                mutated(mu, repo)
            except LookupError as err:
                stale[mu.name] = str(err)
                print(f"{mu.name}: NOT APPLICABLE: {err}", flush=True)
        if args.check:
            print(f"{len(mutants) - len(stale)} of {len(mutants)} mutants "
                  "apply")
            return 1 if stale else 0
        mutants = [mu for mu in mutants if mu.name not in stale]
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        runner = Runner(repo, workdir, not args.no_browser)
        if args.first:  # these mutants first (a run that may be cut short)
            mutants.sort(key=lambda mu: next(
                (k for k, p in enumerate(args.first) if mu.name.startswith(p)),
                len(args.first)))
        # Baseline: each target on the unmodified copy, run when a mutant
        # first needs it (so that the first results come early).
        baseline = {}

        def check_baseline(targets):
            if any(t.startswith(BROWSER) for t in targets) \
                    and runner.book is None and not runner.book_failed:
                try:
                    runner.build_book()
                except RuntimeError as err:  # its targets count as broken
                    runner.book_failed = str(err)
            for target in targets:
                if target.startswith(BROWSER) and runner.book_failed:
                    baseline[target] = ("error", runner.book_failed)
                elif target not in baseline:
                    env = runner.book_env if target.startswith(BROWSER) \
                        else None
                    baseline[target] = runner.pytest(target, env=env)
                    print(f"baseline {target}: {baseline[target][0]}",
                          flush=True)

        rows, ran = [], {}
        for mu in mutants:
            check_baseline(mu.tests)
            broken = {t for t, (st, _) in baseline.items() if st != "pass"}
            original = apply(mu, repo)
            try:
                env = runner.env_for(mu)
                caught = []
                for target in mu.tests:
                    if target in broken:
                        continue
                    status, info = runner.pytest(target, env=env)
                    if status != "pass":
                        caught.append((target, status, info))
                        if args.stop_at_first:
                            break
            finally:
                (repo / mu.path).write_text(original, encoding="utf-8")
            rows.append((mu, caught))
            ran[mu.name] = sum(1 for t in mu.tests if t not in broken) \
                if not (args.stop_at_first and caught) else \
                1 + [t for t in mu.tests if t not in broken].index(
                    caught[0][0])
            verdict = "caught" if caught else "SURVIVED"
            print(f"{mu.name}: {verdict} "
                  f"({len(caught)}/{len(mu.tests)} test targets)", flush=True)
            if args.out and len(rows) < len(mutants):  # what finished so far
                Path(args.out).write_text(
                    _report(rows, baseline, stale, commit, args, start,
                            len(mutants), ran), encoding="utf-8")
    report = _report(rows, baseline, stale, commit, args, start, len(rows),
                     ran)
    print(report)
    if args.out:
        Path(args.out).write_text(report, encoding="utf-8")
    return 0 if all(c for _, c in rows) and not stale else 1


def _report(rows, baseline, stale, commit, args, start, planned, ran):
    """The Markdown table of the mutants run so far."""
    broken = {t for t, (s, _) in baseline.items() if s != "pass"}
    partial = (f" ({len(rows)} of {planned} mutants run so far; the run "
               "was still going)" if len(rows) < planned else "")
    lines = [
        f"# Mutation run: {sum(bool(c) for _, c in rows)} of {len(rows)} "
        f"planted bugs caught{partial}",
        "",
        f"`tools/mutate.py`, commit {commit} "
        f"({'working tree' if args.worktree else 'HEAD'}), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{(time.time() - start) / 60:.0f} min, load average "
        f"{'/'.join(f'{v:.1f}' for v in os.getloadavg())} at the end. "
        "A target is a test file (or `file::-k expression`) run with `-x`; "
        "the first failing test is shown."
        + (" With `--stop-at-first` a mutant's targets stop at the first "
           "that fails (so 1/2 means: caught by the second target run)."
           if args.stop_at_first else ""),
        "",
    ]
    if stale:
        lines += ["Not applied (their code changed; update the catalogue): "
                  + "; ".join(f"`{k}`: {v}" for k, v in stale.items()), ""]
    if broken:
        lines += ["Targets failing before any mutation (not counted): "
                  + ", ".join(f"`{t}` ({baseline[t][1]})" for t in sorted(broken)),
                  ""]
    lines += ["| bug | file | caught by (targets failing / run) | first failure |",
              "|---|---|---|---|"]
    for mu, caught in rows:
        n_run = ran[mu.name]
        first = caught[0][2] if caught else "**survived**"
        names = ", ".join(f"`{Path(t.split('::')[0]).stem}`" for t, _, _ in caught)
        lines.append(f"| {mu.what} (`{mu.name}`) | `{mu.path}` | "
                     f"{len(caught)}/{n_run} {names} | `{first}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
