"""The assignments in Chinese: the same code, the prose from the PO files.

``tools/assignments.py release --language zh_CN`` translates the markdown
cells of each instructor notebook (prompts, model answers, grading guides)
with ``tools/i18n.py`` and applies a class variant to the translated
notebook; grading is the English grading, since the code cells are the same.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from teaching.sources import discover, instructor_notebook  # noqa: E402
from teaching.variants import draw_parameters, load_spec  # noqa: E402

SOURCE = REPO / "assignments" / "source"
GRADING = REPO / "assignments" / "grading"
NAMES = sorted(discover(SOURCE))
SEEDS = (1, 2, 987654321)
HAN = range(0x4E00, 0xA000)


def _text(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _code(nb):
    return [(c["cell_type"], _text(c), c["metadata"].get("nbgrader"))
            for c in nb["cells"] if c["cell_type"] != "markdown"]


def _han(text):
    return sum(ord(ch) in HAN for ch in text)


@pytest.mark.parametrize("name", NAMES)
def test_chinese_instructor_notebook_has_the_same_code(name):
    en = instructor_notebook(name, discover(SOURCE)[name])
    zh = instructor_notebook(name, discover(SOURCE)[name], language="zh_CN")
    assert _code(zh) == _code(en)
    assert len(zh["cells"]) == len(en["cells"])
    for e, z in zip(en["cells"], zh["cells"], strict=True):
        if e["cell_type"] == "markdown" and _han(_text(e)) < len(_text(e)):
            # every markdown cell with English words is now mostly Chinese
            words = sum(ch.isascii() and ch.isalpha() for ch in _text(e))
            if words > 40:
                assert _han(_text(z)) > 0.15 * words, _text(z)[:200]
        assert e["metadata"] == z["metadata"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_chinese_variant_is_the_english_variant_in_chinese(name, seed):
    path = discover(SOURCE)[name]
    en = instructor_notebook(name, path, seed)
    zh = instructor_notebook(name, path, seed, language="zh_CN")
    assert _code(zh) == _code(en)  # the same constants in every code cell
    spec = load_spec(GRADING / f"{name}.json")
    values = draw_parameters(spec, seed)
    zh_prose = "".join(_text(c) for c in zh["cells"]
                       if c["cell_type"] == "markdown")
    en_prose = "".join(_text(c) for c in en["cells"]
                       if c["cell_type"] == "markdown")
    for name_, value in values.items():
        if name_ in spec.get("derived", []):
            continue   # text computed for one language (a model answer)
        # a constant the English prompt shows, the Chinese one shows too
        assert (str(value) in en_prose) <= (str(value) in zh_prose), value


def test_release_in_chinese_refuses_an_unknown_language(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "assignments.py"), "release",
         str(tmp_path / "out"), "--language", "fr"],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "--language" in done.stderr
    with pytest.raises(ValueError, match="language"):
        instructor_notebook(NAMES[0], discover(SOURCE)[NAMES[0]],
                            language="fr")


def test_chinese_release_is_graded_like_the_english_one(tmp_path):
    """Release 03 in Chinese, answer it with the instructor's code, grade."""
    name = "03_frequencies"
    tool = REPO / "tools" / "assignments.py"
    run = dict(capture_output=True, text=True, timeout=900, check=False)
    done = subprocess.run([sys.executable, str(tool), "release",
                           str(tmp_path / "handout"), "--assignment", name,
                           "--language", "zh_CN"], **run)
    assert done.returncode == 0, done.stdout + done.stderr
    released = json.loads((tmp_path / "handout" / f"{name}.ipynb")
                          .read_text(encoding="utf-8"))
    assert _han(_text(released["cells"][0])) > 50
    source = instructor_notebook(name, discover(SOURCE)[name])
    answers = {c["metadata"]["nbgrader"]["grade_id"]: _text(c)
               for c in source["cells"] if c["cell_type"] == "code"
               and c["metadata"].get("nbgrader", {}).get("solution")}
    for cell in released["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = "\n".join(
                line for line in answers[grade_id].splitlines()
                if "### BEGIN SOLUTION" not in line
                and "### END SOLUTION" not in line)
    student = tmp_path / "subs" / "lin"
    student.mkdir(parents=True)
    (student / f"{name}.ipynb").write_text(json.dumps(released),
                                           encoding="utf-8")
    # a classmate whose frequencies are wrong: the feedback says why, in
    # Chinese
    for cell in released["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == (
                "q1_pair_frequencies"):
            cell["source"] = ("def pair_frequencies(d_model, base=10000.0):\n"
                              "    return np.ones(d_model // 2)\n")
    (tmp_path / "subs" / "wang").mkdir()
    (tmp_path / "subs" / "wang" / f"{name}.ipynb").write_text(
        json.dumps(released), encoding="utf-8")
    done = subprocess.run([sys.executable, str(tool), "grade",
                           str(tmp_path / "subs"), "--out",
                           str(tmp_path / "grades.csv")], **run)
    assert done.returncode == 0, done.stdout + done.stderr
    import csv

    with open(tmp_path / "grades.csv", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}
    row = rows["lin"]
    assert row["auto_score"] == row["auto_max"] == "11", row
    assert row["status"] == "graded", row
    assert float(rows["wang"]["auto_score"]) < 11, rows["wang"]
    page = (tmp_path / rows["wang"]["feedback"]).read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page
    for words in ("自动测试", "未通过", "pair_frequencies(8) 有"):
        assert words in page, words
    assert "is wrong in" not in page


def test_a_substitution_in_chinese_is_validated():
    from teaching.variants import localized, validate_spec

    spec = {"parameters": {"n": {"choices": ["200", "40"]}},
            "substitutions": [{"text": "first 200", "template": "first {n}",
                               "count": 1,
                               "zh_CN": {"text": "前 200",
                                         "template": "前 {n}"}}]}
    validate_spec(spec)
    assert localized(spec, "zh_CN")["substitutions"][0]["text"] == "前 200"
    assert localized(spec)["substitutions"][0]["text"] == "first 200"
    for bad in ({"text": "前 200"}, {"text": "前 300", "template": "前 {n}"},
                {"text": "前 200", "template": "前 200"}):
        spec["substitutions"][0]["zh_CN"] = bad
        with pytest.raises(ValueError, match="zh_CN"):
            validate_spec(spec)
