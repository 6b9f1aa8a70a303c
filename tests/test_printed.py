"""The lines the chapters print, in Chinese (``posenc_plots.printed``).

* **Every printed sentence has a template**
  (``test_every_printed_sentence_is_translated``): each line of every
  stored output (stdout and Markdown) of every chapter that holds an
  English word of three letters or more is matched by a template of the
  tables, or is a name, a number or code (``NOT_SENTENCES``, reviewed); a
  new print without its template fails here.
* **The templates are faithful** (``test_templates_write_the_line_back``):
  the English template filled with the values it read writes the very
  line back, so a translation fills in the same numbers.
* **The kernel prints Chinese** (``test_a_chinese_kernel_prints_chinese``):
  in a real Jupyter kernel of a Chinese notebook (``POSENC_LANG=zh_CN``),
  code identical to the English prints the translation, the same text as
  the stored outputs translated by ``tools/i18n.py build-zh``; in English,
  the same code prints English.
"""

import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from posenc_plots import printed
from posenc_plots.jupyter import is_slider_cell

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

# Printed lines with English letters that are not sentences to translate:
# values, names of methods and dtypes, code (reviewed).
NOT_SENTENCES = re.compile(
    r"^\s*(perm|p|omega_i|columns|q|R_m q)\s*[:=]|"
    r"^[\d\s.,()\[\]{}':TrueFals-]*$|"
    r"^\s*(m|s|b|c|D)\s*=|^\{'|^\s*(Shaw|ALiBi|T5|RoPE|bfloat16|float16|float32|"
    r"float64|linear|ntk|yarn|llama3|base \d|absolute|rotary|\|)")


def _stored_lines():
    for path in CHAPTERS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for index, cell in enumerate(nb["cells"]):
            outputs = cell.get("outputs", []) if cell["cell_type"] == "code" else []
            if is_slider_cell(cell):  # its note: posenc_plots.jupyter's table
                continue
            # the stdout of a cell is one text (as the Chinese kernel prints it)
            texts = ["".join("".join(o["text"]) for o in outputs
                             if o.get("output_type") == "stream"
                             and o.get("name") == "stdout")]
            texts += ["".join(o.get("data", {}).get("text/markdown", ""))
                      for o in outputs]
            for text in texts:
                for line in text.split("\n"):
                    if re.search(r"[A-Za-z]{3}", line):
                        yield f"{path.stem}:{index}", line


def test_every_printed_sentence_is_translated():
    untranslated = [f"{where}: {line!r}" for where, line in _stored_lines()
                    if printed.translate_line(line, "zh_CN") == line
                    and not NOT_SENTENCES.search(line)]
    assert not untranslated, (
        "printed lines without a template in posenc_plots/printed.py (add "
        "one, run python -m posenc_plots.i18n update, translate it in "
        "figures.po):\n" + "\n".join(untranslated[:30]))


def test_the_stored_outputs_are_checked():
    lines = list(_stored_lines())
    assert len(lines) > 150
    assert sum(printed.translate_line(line, "zh_CN") != line
               for _, line in lines) > 120


def test_templates_write_the_line_back():
    for _, line in _stored_lines():
        for table in printed.TABLES.values():
            for template in printed._compiled(table):
                values = template.values(line)
                if values is not None:
                    assert template.english.format(*values) == line, (
                        template.english, line)


def test_translation_is_line_by_line_and_keeps_the_rest():
    text = ("largest angle in training: 1.15 degrees\n[1 2 3]\n"
            "not a line of the book\n")
    assert printed.translate(text, "zh_CN") == (
        "训练中的最大角度：1.15 度\n[1 2 3]\nnot a line of the book\n")
    assert printed.translate(text, "en") == text
    # a width keeps the columns: the value is stripped and padded again
    line = "c =   16: the previous token gets at least 0.813"
    assert printed.translate_line(line, "zh_CN") == "c =   16：前一个词元至少得到 0.813"


def test_bad_templates_are_refused():
    with pytest.raises(ValueError, match="numbered"):
        printed._Template(printed.TABLES["06_rope"], "a {name} field")


KERNEL_CODE = """import posenc_plots
from IPython.display import Markdown, display
print("largest angle in training: 1.15 degrees")
print("pair 0 per token:", "57.3 -> 7.2", end=" degrees\\n")
print("not a line of the book")
display(Markdown("| method | n = 64 |\\n|---|---:|\\n| sinusoidal | 1.827 |"))
"""


def _run(lang, tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(KERNEL_CODE)]
    env = dict(os.environ)
    env.pop("POSENC_LANG", None)
    if lang:
        env["POSENC_LANG"] = lang
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    outs = nb.cells[0].outputs
    text = "".join(o.text for o in outs if o.output_type == "stream")
    markdown = [o.data["text/markdown"] for o in outs if "data" in o]
    return text, markdown


def test_a_chinese_kernel_prints_chinese(tmp_path):
    en_text, en_md = _run(None, tmp_path)
    zh_text, zh_md = _run("zh_CN", tmp_path)
    assert en_text == ("largest angle in training: 1.15 degrees\n"
                       "pair 0 per token: 57.3 -> 7.2 degrees\n"
                       "not a line of the book\n")
    assert zh_text == ("训练中的最大角度：1.15 度\n第 0 对每个词元：57.3 -> 7.2 度\n"
                       "not a line of the book\n")
    assert zh_text == printed.translate(en_text, "zh_CN")
    assert en_md == ["| method | n = 64 |\n|---|---:|\n| sinusoidal | 1.827 |"]
    assert zh_md == [printed.translate(en_md[0], "zh_CN")]
    assert zh_md[0].startswith("| 方法 | n = 64 |")
