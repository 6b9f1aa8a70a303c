"""The sentences the chapters' code cells print, in English or in Chinese.

A code cell is the same in both editions (``tools/i18n.py`` never
translates code), so it prints in English: ``print(f"largest angle in
training: {angle:.2f} degrees")``. The Chinese edition shows the sentence
in Chinese all the same, through the label tables of the figures
(:class:`posenc_plots.i18n.Labels`, translated in ``figures.po``): each
chapter has a table ``"printed:<chapter>"`` of *line templates*, one per
kind of printed line, written as :meth:`str.format` templates whose fields
are the parts the code fills in::

    "angle": "largest angle in training: {0} degrees"
    -> "训练中的最大角度：{0} 度"

:func:`translate` turns printed English text into the language's, line by
line: a line that a template matches exactly (its fields matching any
text) is written with the translated template and the same field values;
any other line is left as it is. A field with a width (``{0:>5}``) may
hold padding; its value is stripped and written with the same width in
the translation, so that columns stay aligned.

Where it is applied:

* in the kernel of a Chinese notebook (``POSENC_LANG=zh_CN``, or a
  ``.posenc-lang`` file beside the notebook, as ``build-zh`` writes):
  importing ``posenc_plots`` calls :func:`install`, which wraps
  ``sys.stdout`` of the IPython kernel so that every printed line goes
  through :func:`translate`, and translates Markdown displays (chapter 8's
  tables) the same way; the English kernel is left alone;
* on stored outputs, by ``tools/i18n.py build-zh`` for a build without
  execution (the tests' build): the same function, so both give the same
  text (``tests/test_printed.py`` checks it in a real kernel).

``check(text)`` lists the lines a table does not match (the tests run it
on every stored output, with ``tests/test_zh_reader.py`` reading the
Chinese pages); ``python -m posenc_plots.i18n update`` adds new templates
to ``figures.po``, to be translated there.
"""

from __future__ import annotations

import re
import string
import sys

from .i18n import Labels, language

__all__ = ["TABLES", "install", "translate", "uninstall"]

_FORMATTER = string.Formatter()


class _Template:
    """One line template: its regex, its fields."""

    def __init__(self, table, english):
        self.table, self.english = table, english
        parts, fields = [], []
        for literal, name, spec, conversion in _FORMATTER.parse(english):
            parts.append(re.escape(literal))
            if name is None:
                continue
            if conversion or (name and not name.isdigit()):
                raise ValueError(f"{table.name}: {english!r}: fields are "
                                 "numbered ({0}, {1:>5}), without conversions")
            fields.append((int(name), bool(spec)))
            parts.append("( *.*? *)" if spec else "(.*?)")
        self.fields = fields
        self.regex = re.compile("".join(parts) + r"\Z", re.S)
        self.weight = len(re.sub(r"\{[^{}]*\}", "", english))

    def values(self, line):
        m = self.regex.match(line)
        if m is None:
            return None
        values = {}
        for (index, padded), value in zip(self.fields, m.groups(), strict=True):
            values[index] = value.strip(" ") if padded else value
        count = max(i for i, _ in self.fields) + 1 if self.fields else 0
        return [values.get(i, "") for i in range(count)]


def _tables(lang):
    """(template, translated template) of every printed-line table."""
    return [(t, table.tr(t.english, lang)) for table in TABLES.values()
            for t in _compiled(table)]


_COMPILED = {}


def _compiled(table):
    key = id(table)
    if key not in _COMPILED:
        _COMPILED[key] = sorted((_Template(table, english)
                                 for english in dict.fromkeys(table.en.values())),
                                key=lambda t: -t.weight)
    return _COMPILED[key]


def translate_line(line, lang=None):
    """One printed line (without its newline) in ``lang``. The row of a
    Markdown table is translated cell by cell: a cell that is a label of
    ``CELL_TABLES`` gets its translation, any other goes through the
    templates."""
    lang = language(lang)
    if lang == "en" or not re.search(r"[A-Za-z]{2}", line):
        return line
    row = re.fullmatch(r"\|(.*)\|", line)
    if row and "|" in row.group(1).strip(" "):
        cells = row.group(1).split("|")
        return "|" + "|".join(_cell(cell, lang) for cell in cells) + "|"
    return _line(line, lang)


def _cell(cell, lang):
    text = cell.strip(" ")
    if not re.search(r"[A-Za-z]{2}", text):
        return cell
    from .i18n import all_tables

    tables = all_tables()
    for name in CELL_TABLES:
        table = tables.get(name)
        if table is not None and text in table.en.values():
            return cell.replace(text, table.tr(text, lang))
    return cell.replace(text, _line(text, lang))


def _line(line, lang):
    best = None
    for table in TABLES.values():
        for template in _compiled(table):
            if best is not None and template.weight <= best[0].weight:
                break
            values = template.values(line)
            if values is not None:
                best = (template, values)
                break
    if best is None:
        return line
    template, values = best
    return template.table.tr(template.english, lang).format(*values)


def translate(text, lang=None):
    """Printed text in ``lang``, line by line (see the module)."""
    if language(lang) == "en":
        return text
    lines = text.split("\n")
    return "\n".join(translate_line(line, lang) for line in lines)


def check(text):
    """The lines of printed text with English words (three letters in a
    row) that no template matches: what a Chinese reader would read in
    English."""
    return [line for line in text.split("\n")
            if re.search(r"[A-Za-z]{3}", line) and not any(
                t.values(line) is not None for table in TABLES.values()
                for t in _compiled(table))]


def english_line(template_key, table_name, *values):
    """The English line a template writes with ``values`` (for tests)."""
    return TABLES[table_name].en[template_key].format(*values)


# ------------------------------------------------------------ the kernel


class _TranslatingStream:
    """A text stream that passes whole lines through :func:`translate`."""

    def __init__(self, stream):
        self._stream = stream
        self._pending = ""

    def write(self, text):
        if language() == "en":
            self.flush()
            return self._stream.write(text)
        self._pending += text
        if "\n" in self._pending:
            done, self._pending = self._pending.rsplit("\n", 1)
            self._stream.write(translate(done) + "\n")
        return len(text)

    def flush(self):
        if self._pending:
            pending, self._pending = self._pending, ""
            self._stream.write(translate(pending))
        return self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _markdown_hook(msg):
    """ipykernel's display hook: Markdown displays, translated."""
    try:
        data = msg["content"]["data"]
    except (KeyError, TypeError):
        return msg
    if "text/markdown" in data and language() != "en":
        data["text/markdown"] = translate(data["text/markdown"])
    return msg


def install():
    """In an IPython kernel of a Chinese notebook, translate what the code
    prints (``sys.stdout``) and its Markdown displays. Does nothing in
    English, outside a kernel, or when installed already."""
    if language() == "en" or isinstance(sys.stdout, _TranslatingStream):
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    sys.stdout = _TranslatingStream(sys.stdout)
    publisher = getattr(shell, "display_pub", None)
    if publisher is not None and hasattr(publisher, "register_hook"):
        publisher.register_hook(_markdown_hook)
    return True


def uninstall():
    """Undo :func:`install`."""
    if isinstance(sys.stdout, _TranslatingStream):
        sys.stdout.flush()
        sys.stdout = sys.stdout._stream


# ------------------------------------------------------------- the tables

#: The printed-line tables, by chapter.
TABLES = {}


def _table(chapter, lines):
    TABLES[chapter] = Labels(f"printed:{chapter}", lines)
    return TABLES[chapter]


_table("01_why_order", {
    "rows": "{0}, one output row per character:",
    "weights": "weights of {0} on {1} : {2}",
    "without": "without position: {0}",
    "with": "with position:    {0}",
    "reordered": "reordered, no encoding       largest change of a weight: {0}",
    "added": "encoding added, same phrase  largest change of a weight: {0}",
    "reordered_pe": "reordered, with encoding     largest change of a weight: {0}",
    "ticket": "weight of 机票 on 广州 with the encoding: {0} and {1}",
    "mask": "reorderings that leave the causal mask unchanged: {0}",
    "causal": "causal, no position: {0}",
    "row_de": "largest change in the row of 的, seeds 0 to 5: {0}",
    "correct": "correct",
    "keeps_b": "reorderings that leave B unchanged: {0}",
    "t5": "T5 buckets of -1 and +1: {0}",
})

_table("02_sinusoidal_formula", {
    "neighbours": "neighbours, n = 30:             {0}",
    "three": "three positions apart, n = 90:  {0}",
    "pos_n": "pos / n instead:                {0} and {1}",
    "texts": "position 3 in texts of 31 and 91 tokens: {0}",
    "distance": "distance between the codes of any two positions three apart: {0}",
    "pair": "pair i = {0}: dimension {1} (sin) and {2} (cos), omega_i = {3}",
    "dim": "dim {0:>2}: pair i = {1:>2}, omega_i = {2}, wavelength = {3} positions",
    "rows": "length of rows 0, 1 and 9999: {0}",
    "cos": "mean |cos(word, position)| = {0}, sqrt(2 / (pi d_model)) = {1}",
    "directions": "directions holding 99% of the encodings' energy: {0}",
    "share": "share of a random word vector's energy in them: {0}",
    "turning": "pairs turning less than 1/4, 1/2 and 1 radian: {0}",
    "slow": "{0} slow pairs: {1} of the energy, {2} of the variation over positions",
    "squared": "mean squared length: embedding {0}, scaled embedding {1}, encoding {2}",
    "scaled": ("scaled N(0, 1) word vector: length {0}; word / position = {1}, "
               "sqrt(2 d_model) = {2}"),
    "probe": "after layer   probe R^2, pre-LN   post-LN   |P| / |stream|, pre-LN",
    "column": "column j of P_concat is column order[j] of P_inter, order = {0}",
    "slowest": "slowest frequency: tensor2tensor {0}, paper {1}",
    "correct": "correct",
    "lost": "paper's frequencies lost: {0}  slower than the paper's slowest: {1}",
    "half": ("pairs turning less than half a radian over 512 positions: {0} "
             "(paper: {1})"),
    "key": "key with the largest score, queries 1 to 5: {0}",
    "slow_parts": "slow sines {0} and slow cosines {1} of the variation",
    "noise": "noise {0}: {1} of the positions decoded exactly",
})

_table("03_frequencies", {
    "longest": "longest {0}   2*pi*10000 = {1}",
    "fraction": "d_model={0:>5}  longest={1:>10}  fraction of 2*pi*10000: {2}",
    "header": "base      longest wavelength   pairs with λ > L   pairs with L·ω < 0.5",
    "agrees": "first_slow_pair agrees with pc.wavelengths",
    "reach": ("{0} slow pairs: sines reach {1} to {2}, {3} of the variation; "
              "cosines stay above {4}"),
    "below_zero": "first distance below zero: base 10,000: {0} | base 100: {1}",
    "slow": ("d_model={0:>5}  slow pairs {1:>5} of {2:>5}  fraction {3}  "
             "longest {4:>9}"),
})

_table("04_binary_counter", {
    "counter": "{0}-bit counter:    periods 2 to {1}, rolls over after {2} positions",
    "encoding": "d_model=512 encoding: wavelengths {0} to {1}, never repeats",
    "back": ("pairs back at their start: {0} distance from PE(0): {1} "
             "(position 1000: {2} )"),
    "error": "after pair {0}: error {1:>8} positions (eps * beta**i = {2})",
    "positions": ("positions must be an int n >= 0 or a 1-D array-like of "
                  "non-negative"),
    "integers": "integers, got non-integer values",
    "gap": "score gap to the nearest rivals: {0}",
    "previous": "c = {0:>4}: the previous token gets at least {1}",
    "sines": "sines only, largest error: {0}",
    "typical": "typical error per pair:    {0}",
    "both": "sin and cos, largest error below 1e-12: {0}",
})

_table("05_relative_position", {
    "none": "no projection    spread {0}   max |S - S.T| {1}",
    "random": "random W_Q, W_K  spread {0}   max |S - S.T| {1}",
    "memory": "{0}: {1} GB = {2} GiB",
    "full": "(2 max_len - 1) x d            {0:>10} floats = {1:>12} bytes",
    "clipped": "(2 r_max + 1) x d, r_max = 16  {0:>10} floats = {1:>12} bytes",
    "ratio": "ratio {0}",
    "value": "value term correct",
    "fits": "max_len = {0} is the largest that fits",
})

_table("05b_t5_alibi", {
    "bucket": "bucket {0:>2}: r = {1:>3} to {2}",
    "scalars": "{0} scalars for {1} heads, shared by all layers",
    "heads": "{0:>2} heads: {1}",
    "reach": "1% reach per head: {0}",
    "absolute": "absolute         {0:>6} of pairs carry an unseen position signal",
    "rotary": "rotary, ALiBi    {0:>6} of pairs carry an unseen position signal",
    "t5": "T5 buckets       {0:>6} of pairs carry an unseen position signal",
    "shaw": "Shaw, r_max = 16 {0:>6} of pairs carry an unseen position signal",
    "weight": "weight on keys L or more back, per head (%): {0}",
    "last_press": "keys in the last bucket, r_max = 128, n = 512, 1024, 3072: {0}",
    "last_ours": "keys in the last bucket, r_max = 64,  n = 64, 128, 1024:   {0}",
    "signals": ("distinct position signals over 1024 distances: Shaw {0} | "
                "T5 decoder {1}"),
    "wavelength": "rotary pairs with wavelength > L: {0} of {1}",
    "p_absolute": "absolute             {0:>12}",
    "p_rotary": "rotary               {0:>12}",
    "same": "same attention weights",
    "holds": "bucket {0} holds r = {1} to {2}",
})

_table("06_rope", {
    "relative": "relative, but the query's length at m = 500 is multiplied by {0}",
    "moved": "largest change of an attention weight, sentence moved by 1000:",
    "copies": ("the two copies of 我 with RoPE, largest difference of their "
               "outputs: {0}"),
    "worst": "worst cos error up to position 256, 1024, 2048, 4096: {0}",
    "added": "  added sinusoid   {0}",
    "bound": "largest |score| / bound: {0}",
    "distance": "score at distance 0, 100, 250: {0}",
    "slowest": ("slowest pair of a 128-dim head, base 10,000: {0} turns over "
                "{1} positions"),
    "naive": "largest |naive - trained| score: {0}",
    "distinct": "distinct bfloat16 positions among 0..{0}: {1}",
    "angles": "angles in {0:<8}: worst cos error {1}",
    "up_to": "                                  up to position{0}",
    "bf16": "                              angles in bfloat16{0}",
    "fp16": "                               angles in float16{0}",
    "fp32": "                               angles in float32{0}",
    "stored": "   angles in float32, cos/sin stored in bfloat16{0}",
    "extra": "with the extra axis: {0}",
    "without": "without it:          {0}",
    "agrees": "rope_half agrees with apply_rope(..., layout='half')",
    "columns": "columns: {0}",
    "again": "shift-invariant again",
})

_table("07_context_extension", {
    "rows": "sinusoidal rows: {0}  largest |entry|: {1}",
    "before": "RoPE norms before: {0}",
    "after": "RoPE norms after:  {0}",
    "turn": "{0} of {1} pairs turn less than once over L = {2}",
    "first": "the first slow pair is i = {0}, wavelength {1}",
    "turns": "pair 0 turns {0} times; the slowest pair {1} times",
    "largest": "largest angle in training: {0} degrees",
    "entropy": ("spread {0}: entropy {1} nats with L keys, {2} with 8 L; scale "
                "that restores it {3}"),
    "yarn_t": "YaRN's 1/t at s = 8: {0}",
    "angle": "angle at distance {0}: {1} degrees",
    "pi": "distance {0} with PI: {1} degrees (training range: 0 to {2})",
    "per_token": "pair 0 per token: {0} -> {1} degrees",
    "base": "new base: {0}",
    "radix": "radix: {0} -> {1}",
    "ramp": "pairs on the ramp: {0} to {1}",
    "gamma": "largest difference in gamma on the ramp: {0}",
    "logits": "s = {0:>2}: sqrt(1/t) = {1}, logits multiplied by {2}",
    "bands": "{{'kept': {0}, 'blended': {1}, 'divided by s': {2}}}",
    "header": "  method  kept  partly  x s",
    "correct": "correct",
    "ntk": "first slow pair i0 = {0}, smallest NTK factor = {1}",
    "b": "(b) largest position {0} < {1}: {2}",
    "c": "(c) pair 0: {0} -> {1} degrees per token",
    "d": "(d) logits x {0}",
})

_table("08_train_short_test_long", {
    "text": "text: {0} training and {1} validation characters, {2} symbols",
    "parameters": "parameters: {0} (learned: {1}, T5: {2})",
    "training": "training: {0} characters, {1} passes over the text",
    "windows": "validation windows per length: {0}",
    "wall": "wall time {0} s with --jobs {1} on a {2}-core {3}, torch {4}",
    "load": "1-minute load average as the runs finished: {0} to {1}",
    "lm_run": "one language model run: {0} to {1} s",
    "rope_run": "one RoPE (with stretching and fine-tunes) run: {0} to {1} s",
    "copy_run": "one copying run: {0} to {1} s",
    "turns_pairs": "turns over L of the 8 pairs of d_k = 16: {0}",
    "wavelengths": "wavelengths: {0}",
    "turns": "turns over L: {0}",
    "stretch": "s = {0:>2}, {1:<6} stretch of each pair: {2}",
    "yarn": "s = {0:>2}, YaRN multiplies the scores by {1}",
    "live": "{0}, L = {1}: training loss {2} at step 0, {3} at step {4}",
    "validation": "validation loss (nats per character):",
    "clamped": "i(32) = {0} -> {1}, clamped to {2}; i(1) = {3} -> {4}",
    "gamma_paper": "gamma, paper: {0}",
    "gamma_code": "gamma, code:  {0}",
    "rescaled": "  n = {0:>5} ({1:>2}L): {2}   rescaled: {3}",
    "minus": "RoPE minus NoPE at 4L, per seed: {0}",
    "rise": "rise with b = 10000 minus rise with b = 10: {0}",
    "slow": "slow over 64: {0}  slow over 256: {1}",
    "bucket": ("last bucket from distance {0} | in training: {1} | keys of the "
               "last query in it: {2}"),
    "beyond": ("beyond must be 'clamp' to run the learned table of max_len={0} "
               "positions on {1} tokens (it has no row past position {2})"),
    # the cells of the Markdown tables (their rows' names are the labels
    # of posenc_plots.ch08_lab, CELL_TABLES)
    "method": "method",
    "rope_model": "RoPE model",
    "positions": "positions {0} to {1}",
    "press": ("Change of loss from L: Press et al., nats per word / this "
              "experiment, nats per character."),
    "copy": ("Exact match / fraction of copied symbols right, mean over three "
             "seeds; trained on n_copy ≤ 8."),
})

_table("09_positions_in_2d_and_3d", {
    "below": "right below (6, 13): {0}",
    "raster": "next in raster order (6, 0), across the image: {0}",
    "right": "right:",
    "wrong": "wrong:",
    "patch": "{0} patch (1, 2): {1}",
    "axial": "axial RoPE, interaction zero to rounding: {0}",
    "mixed": "largest |interaction| of RoPE-Mixed: {0}",
    "same": "the same similarities at the same coordinates: {0}",
    "rescale": "rescale {0}: first row {1}",
    "two_ropes": ("axial RoPE = 1-D RoPE of width 32 on the column, then on "
                  "the row"),
    "steps": "{0:8}: steps {1} down, {2} across, rows span {3} .. {4}",
    "keep": "patches that keep their own vector: {0}",
    "cls": "the class token's vector sits at patch {0}",
    "corners": "align_corners=True : {0}",
    "centres": "align_corners=False: {0}",
    "fps": "{0} fps: {1}",
    "next_text": "{0:8}: last video time id {1}, next text id {2}",
    "chunked": "chunked:     {0} ... {1}",
    "interleaved": "interleaved: {0} ... {1}",
    "positions": "tokens: {0}, positions used: {1}",
    "yarn": "{0:11}: pairs YaRN changes (time, height, width) = {1}",
    "generated": "tokens: {0}  first generated token at id {1}",
    # zoom versus canvas (posenc_plots.ch09_vision, the experiment)
    "digits": "digits: {0} for training, {1} for testing",
    "v_parameters": "parameters: {0} (learned table: {1})",
    "v_training": "training: {0} images, {1} passes over the digits",
    "v_wall": "wall time {0} s with --jobs {1} on a {2}-core {3}, torch {4}",
    "v_load": "1-minute load average as the runs finished: {0} to {1}",
    "v_run": "one run: {0} to {1} s; the last eight: {2} to {3} s",
    "v_gap": ("zoom, worst normalised minus best other model, per seed, at "
              "24 and 36 px: {0}"),
    "v_gain": ("canvas, rescaled minus not rescaled, per seed, at 18, 24 and "
               "36 px: {0}"),
    "v_live": "{0}, seed {1}: training loss {2} at step {3}, {4} at step {5}",
    "v_sides": "side of the test image (pixels):{0}",
    "v_zoom": "accuracy, zoom:{0}",
    "v_canvas": "accuracy, canvas:{0}",
    "v_same": "the same accuracies as the committed run: {0}",
    # the cells of its Markdown table (rows: ch09_vision:methods)
    "v_method": "method",
    "v_px": "{0} px",
    "v_zoom_px": "zoom {0} px",
    "v_canvas_px": "canvas {0} px",
})


def _config_notes():
    """``"{0}: <note>"`` for each note of chapter 10's table of configs."""
    import json
    from pathlib import Path

    path = (Path(__file__).resolve().parent.parent / "posenc_lab" / "data"
            / "model_configs.json")
    models = json.loads(path.read_text(encoding="utf-8"))["models"]
    notes = [note for m in models for note in m["unconfirmed"]]
    return {f"note_{k}": "{0}: " + note.replace("{", "{{").replace("}", "}}")
            for k, note in enumerate(notes)}


_table("10_position_in_2026_models", {
    "spread": "spread: {0} of {1} pairs rotate, longest wavelength {2}",
    "proportional": ("proportional: {0} of {1} pairs rotate, longest "
                     "wavelength {2}"),
    "ratio": "ratio of the longest wavelengths: {0}",
    "parts": ("query {0:>4}, key {1:>4}: rotated part {2}, other part {3}"),
    "first": "{0}, first layers:",
    "nope": "layer {0:>2}: no position",
    "window": ("layer {0:>2}: window {1}, base {2}, {3} of {4} pairs "
               "rotate"),
    "global": ("layer {0:>2}: all keys, base {1}, {2} of {3} pairs "
               "rotate"),
    "keys": "keys n: {0}",
    "weight": "weight of the key: {0}",
    "scaled": "with the scores times 0.43 ln n: {0}",
    "position": "position {0:>10}: queries x {1}",
    "deepseek": "DeepSeek-V3's factor on every score: {0}",
    "phi": "Phi-3.5-mini's factor on every score: {0}",
    "bound": ("L = {0:>9}: smallest base {1:>14}   (figure 1's fit "
              "{2:>14})"),
    "supports": "base 500,000 supports {0} tokens",
    "fit": "L = {0:>9}: the fit asks for a base of {1:>14}",
    "glm_keys": "head_dim {0}, partial_rotary_factor {1}, rope_theta {2}",
    "glm_longest": "longest wavelength {0} > 131,072: {1}",
    "llama4": "Llama 4: {0}  posenc_core: {1}  Su: {2}",
    "correct": "correct",
    # the cells of the configuration table (posenc_plots.ch10_models)
    "model": "model",
    "with_position": "layers with position",
    "head_dim": "head dimension",
    "pairs": "pairs rotated",
    "base": "base",
    "longest": "longest wavelength",
    "scaling": "scaling",
    "window_col": "window",
    "none": "none",
    "linear": "linear ×{0}",
    "linear_global": "linear ×{0} (global layers)",
    "llama3": "Llama 3.1 ×{0} from {1}",
    "yarn": "YaRN ×{0} from {1}",
    "longrope": "LongRoPE from {0}",
    "win_every": "{0} (every other layer)",
    "win_local": "{0} ({1} of {2} layers)",
    "chunks": "chunks of {0} (rotary layers)",
    # what the search could not confirm, one line per note of the table's
    # data (posenc_lab/data/model_configs.json), printed after the model
    **_config_notes(),
})

#: Label tables whose English labels may fill a cell of a printed Markdown
#: table (the rows of chapter 8's tables are its methods' names).
CELL_TABLES = ("ch08_lab:methods", "ch08_lab:stretches", "ch09_vision:methods",
               "ch10_lab:variants")
