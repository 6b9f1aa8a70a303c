"""Class-specific variants (tools/teaching/variants.py).

Unit tests on small notebooks, then, for every assignment with a
teacher-side spec ``assignments/grading/NN_x.json``, for two seeds: the
variant's own solutions pass all its tests, and the public solution bodies
pasted under the variant's own def lines lose most of the points (a
variant changes the mathematics inside the bodies, not only defaults).
"""

import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from grading_helpers import pasted  # noqa: E402
from teaching import variants  # noqa: E402

SOURCE = REPO / "assignments" / "source"
GRADING = REPO / "assignments" / "grading"
SEEDS = (11, 20261201, 104)
# The public solution bodies under a variant's def lines may keep at most
# this share of the automatic points. A quarter: a copier must fail well
# below a pass mark, and the questions without a constant to vary (a
# permutation's inverse, a closed form of ALiBi's slopes...) are a small
# part of each assignment. Variants that only change defaults keep nearly
# all of them (76 of 79 before issue 24).
PASTED_SHARE = 0.25


def small_notebook():
    return new_notebook(cells=[
        new_markdown_cell("Use `base=10000.0` (the public base)."),
        new_code_cell("def f(x, base=10000.0):\n    return x / base\n",
                      outputs=[{"output_type": "stream", "name": "stdout",
                                "text": "base=10000.0\n"}],
                      execution_count=3),
        new_code_cell("rng = np.random.default_rng(1234)\n"
                      "assert f(1.0, base=10000.0) == 1e-4\n"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                           "language": "python"}})


def small_spec(**changes):
    spec = {
        "forbidden": ["alibi_bias"],
        "parameters": {
            "base": {"choices": ["10000.0", "500000.0", "20000.0"]},
            "seed": {"choices": "int"},
        },
        "substitutions": [
            {"text": "base=10000.0", "template": "base={base}", "count": 3},
            {"text": "default_rng(1234)", "template": "default_rng({seed})",
             "count": 1},
        ],
    }
    spec.update(changes)
    return spec


def sources(nb):
    return [cell["source"] for cell in nb["cells"]]


def test_seed_none_is_an_unchanged_copy():
    nb = small_notebook()
    variant = variants.make_variant(nb, small_spec(), None)
    assert variant == nb
    assert variant is not nb and variant["cells"] is not nb["cells"]


def test_variant_substitutes_every_cell_and_leaves_the_input_alone():
    nb = small_notebook()
    before = json.dumps(nb, sort_keys=True)
    variant = variants.make_variant(nb, small_spec(), 7)
    assert json.dumps(nb, sort_keys=True) == before
    values = variants.draw_parameters(small_spec(), 7)
    assert values["base"] in ("500000.0", "20000.0")
    text = "\n".join(sources(variant))
    assert "10000.0" not in text.replace("20000.0", "").replace("500000.0", "")
    assert text.count(f"base={values['base']}") == 3
    assert f"default_rng({values['seed']})" in text
    assert "default_rng(1234)" not in text
    # markdown prompt changed too
    assert f"`base={values['base']}`" in variant["cells"][0]["source"]
    # the changed code cell lost its outputs, which showed the public base
    assert variant["cells"][1]["outputs"] == []
    assert variant["cells"][1]["execution_count"] is None


def test_variant_is_deterministic_and_seeds_differ():
    nb, spec = small_notebook(), small_spec()
    assert variants.make_variant(nb, spec, 5) == variants.make_variant(
        nb, spec, 5)
    drawn = {tuple(variants.draw_parameters(spec, s).items())
             for s in range(20)}
    assert len(drawn) > 10


def test_choices_avoid_the_public_value_and_ints_stay_in_range():
    spec = small_spec()
    bases, seeds = set(), set()
    for seed in range(200):
        values = variants.draw_parameters(spec, seed)
        bases.add(values["base"])
        seeds.add(int(values["seed"]))
    assert bases == {"500000.0", "20000.0"}
    low, high = variants.INT_RANGE
    assert all(low <= s <= high for s in seeds) and 1234 not in seeds
    ranged = small_spec(parameters={
        "base": {"choices": ["10000.0", "500000.0"]},
        "seed": {"choices": "int", "min": 1234, "max": 1235}})
    assert {variants.draw_parameters(ranged, s)["seed"]
            for s in range(20)} == {"1235"}


def test_seed_is_recorded_nowhere_in_the_variant():
    nb = small_notebook()
    variant = variants.make_variant(nb, small_spec(), 987654321)
    assert variant["metadata"] == nb["metadata"]
    assert "987654321" not in json.dumps(variant)
    assert variants.variant_name(987654321) not in json.dumps(variant)


def test_count_drift_fails_loudly():
    spec = small_spec()
    spec["substitutions"][0]["count"] = 4
    with pytest.raises(ValueError, match=r"substitutions\[0\]\.count"):
        variants.make_variant(small_notebook(), spec, 1)
    with pytest.raises(ValueError, match="has 3 occurrence"):
        variants.make_variant(small_notebook(), spec, None)


def test_one_pass_longest_text_wins_and_no_resubstitution():
    nb = new_notebook(cells=[new_code_cell("a = 12\nb = 123\n")])
    spec = {"parameters": {"x": {"choices": ["12", "123"]},
                           "y": {"choices": ["123", "999"]}},
            "substitutions": [
                {"text": "12", "template": "{x}", "count": 1},
                {"text": "123", "template": "{y}", "count": 1}]}
    variant = variants.make_variant(nb, spec, 0)
    # "12" -> "123" must not then become "999"; "123" -> "999".
    assert variant["cells"][0]["source"] == "a = 123\nb = 999\n"


@pytest.mark.parametrize("change, key", [
    ({"extra": 1}, "spec: extra:"),
    ({"forbidden": "alibi_bias"}, "spec: forbidden:"),
    ({"parameters": {"base": {"choices": ["1.0"]}}}, "parameters.base"),
    ({"parameters": {"base": {"choices": "float"}}}, "parameters.base"),
    ({"parameters": {"base": {"choices": ["a", "b"], "mn": 1}}},
     "parameters.base.mn"),
    ({"substitutions": [{"text": "base=10000.0", "template": "base={bse}",
                         "count": 1}]}, r"substitutions\[0\]\.template"),
    ({"substitutions": [{"text": "base=10000.0", "template": "base={base}",
                         "count": 0}]}, r"substitutions\[0\]\.count"),
    ({"parameters": {"base": {"choices": ["a", "b"], "comment": 3}}},
     "parameters.base.comment"),
])
def test_bad_spec_names_the_key(change, key):
    spec = small_spec(**change)
    with pytest.raises(ValueError, match=key):
        variants.validate_spec(spec)


def test_template_must_render_back_to_the_text():
    spec = small_spec()
    spec["substitutions"][0]["template"] = "base = {base}"
    with pytest.raises(ValueError, match=r"substitutions\[0\]\.template"):
        variants.validate_spec(spec)
    spec = small_spec()  # public value must be the FIRST choice
    spec["parameters"]["base"]["choices"] = ["500000.0", "10000.0"]
    with pytest.raises(ValueError, match="first choices"):
        variants.validate_spec(spec)


def test_unused_parameter_and_bad_seed_are_refused():
    spec = small_spec()
    spec["parameters"]["unused"] = {"choices": ["1", "2"]}
    with pytest.raises(ValueError, match="parameters.unused"):
        variants.validate_spec(spec)
    for seed in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="seed"):
            variants.make_variant(small_notebook(), small_spec(), seed)


def test_object_choices_draw_named_texts_together():
    """One change of the mathematics as code, TeX and prose, drawn at once."""
    nb = new_notebook(cells=[
        new_markdown_cell("$\\omega_i = b^{-2i/d}$"),
        new_code_cell("w = base ** (-2.0 * i / d)\n")])
    spec = {"parameters": {"k": {"choices": [
        {"code": "2.0", "tex": "2i"}, {"code": "3.0", "tex": "3i"}]}},
        "substitutions": [
            {"text": "(-2.0 *", "template": "(-{k[code]} *", "count": 1},
            {"text": "b^{-2i/d}", "template": "b^{{-{k[tex]}/d}}", "count": 1}]}
    variant = variants.make_variant(nb, spec, 5)
    assert variant.cells[0].source == "$\\omega_i = b^{-3i/d}$"
    assert variant.cells[1].source == "w = base ** (-3.0 * i / d)\n"
    assert variants.make_variant(nb, spec, None) == nb
    for bad, key in (
            ({"code": "3.0"}, "parameters.k.choices"),       # other names
            ({"code": "3.0", "tex": 3}, "parameters.k.choices")):  # a number
        broken = json.loads(json.dumps(spec))
        broken["parameters"]["k"]["choices"][1] = bad
        with pytest.raises(ValueError, match=key):
            variants.validate_spec(broken)
    for template in ("(-{k} *", "(-{k[nope]} *"):  # no key, unknown key
        broken = json.loads(json.dumps(spec))
        broken["substitutions"][0]["template"] = template
        with pytest.raises(ValueError, match=r"substitutions\[0\]\.template"):
            variants.validate_spec(broken)


def test_load_spec_reads_and_names_the_file(tmp_path):
    good = tmp_path / "01_x.json"
    good.write_text(json.dumps(small_spec()))
    assert variants.load_spec(good)["forbidden"] == ["alibi_bias"]
    bad = tmp_path / "02_y.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="02_y.json"):
        variants.load_spec(bad)
    wrong = tmp_path / "03_z.json"
    wrong.write_text(json.dumps(small_spec(substitution=[])))
    with pytest.raises(ValueError, match="03_z.json: substitution:"):
        variants.load_spec(wrong)
    with pytest.raises(ValueError, match="path"):
        variants.load_spec(tmp_path / "missing.json")


def test_new_seed_is_large_and_usable():
    seeds = {variants.new_seed() for _ in range(5)}
    assert len(seeds) == 5 and all(2**20 < s < 2**63 for s in seeds)
    variant = variants.make_variant(small_notebook(), small_spec(),
                                    max(seeds))
    assert variant != small_notebook()


def test_describe_and_variant_name():
    assert variants.variant_name(None) == "public"
    assert variants.variant_name(3) == variants.variant_name(3)
    assert variants.variant_name(3) != variants.variant_name(4)
    assert "3" not in variants.variant_name(3).split()[0]
    lines = variants.describe(small_spec(), 3)
    values = variants.draw_parameters(small_spec(), 3)
    assert f"  base: 10000.0 -> {values['base']}" in lines
    assert any(f"'base={values['base']}' (3x)" in line for line in lines)


# ------------------------------------------------ the assignments' own specs


def grading_specs():
    return sorted(GRADING.glob("*.json")) if GRADING.is_dir() else []


def test_every_grading_spec_names_an_assignment():
    for path in grading_specs():
        assert (SOURCE / path.stem / f"{path.stem}.ipynb").is_file(), (
            f"{path.name} names no assignment in assignments/source")
        variants.load_spec(path)


def _meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_test(cell):
    meta = _meta(cell)
    return cell["cell_type"] == "code" and meta.get("grade") and not meta.get(
        "solution")


def _run_of(variant, solutions, label):
    """The variant's code cells, solution cells taken from ``solutions``.

    With a label, every cell may raise ("raises-exception") and gets a new
    cell id (ids must stay unique in one notebook).
    """
    cells = []
    for cell in variant.cells:
        if cell["cell_type"] != "code":
            continue
        if _meta(cell).get("solution"):
            cell = solutions.get(_meta(cell)["grade_id"], cell)
        cell = nbformat.from_dict(json.loads(json.dumps(cell)))
        if label:
            cell.metadata.setdefault("tags", []).append("raises-exception")
            cell["id"] = f"{label}-{len(cells)}"
        cells.append(cell)
    return cells


def test_pasted_takes_the_header_from_the_variant_and_the_body_public():
    public = ("x = 1\n@dec\ndef f(a,\n      b=1.0):\n    \"\"\"Doc.\"\"\"\n"
              "    return a * 2.0\n")
    variant = "def g(a,\n      b=5.0):\n    return a * 4.0\n"
    assert pasted(public, variant) == (
        "x = 1\ndef g(a,\n      b=5.0):\n    \"\"\"Doc.\"\"\"\n"
        "    return a * 2.0\n")


def _combined(public, variant, control):
    """Runs of the variant in one kernel (one kernel per notebook).

    1. as it is: must run without an error (its own solutions pass);
    2. (``control``) as it is again, errors recorded: must have none, which
       shows that a second run in the same kernel starts clean (the setup
       cell resets the helpers), so the errors of the last run are the
       public solutions' own; a property of the notebook, so checked for
       the first seed only (assignment 8's runs take ~10 s each);
    3. with the public solution bodies under the variant's def lines
       (``pasted``) in its solution cells, errors recorded: the failing
       test cells must hold most of the points.
    """
    solutions = {}
    for c in variant.cells:
        if c["cell_type"] == "code" and _meta(c).get("solution"):
            gid = _meta(c)["grade_id"]
            mine = next(p for p in public.cells
                        if _meta(p).get("grade_id") == gid)
            solutions[gid] = nbformat.from_dict(
                {**json.loads(json.dumps(c)),
                 "source": pasted(mine.source, c.source)})
    runs = [_run_of(variant, {}, "")]
    runs += [_run_of(variant, {}, "again")] if control else []
    runs += [_run_of(variant, solutions, "public")]
    nb = nbformat.v4.new_notebook(cells=[c for run in runs for c in run],
                                  metadata=variant.metadata)
    return nb, len(runs[0])  # every run has as many cells


def _failed_tests(cells):
    return [_meta(c)["grade_id"] for c in cells
            if _is_test(c) and any(o.get("output_type") == "error"
                                   for o in c.get("outputs", []))]


@pytest.mark.parametrize("spec_path", grading_specs(),
                         ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", SEEDS)
def test_variant_solutions_pass_and_public_solutions_fail(
        spec_path, seed, tmp_path, monkeypatch):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    name = spec_path.stem
    public = nbformat.read(SOURCE / name / f"{name}.ipynb", as_version=4)
    spec = variants.load_spec(spec_path)
    variant = variants.make_variant(public, spec, seed)
    assert variant != public, f"{name}: seed {seed} changes nothing"
    shutil.copy(REPO / "posenc_core.py", tmp_path / "posenc_core.py")
    if "posenc_lab" in json.dumps(public["cells"]):
        shutil.copytree(REPO / "posenc_lab", tmp_path / "posenc_lab",
                        ignore=shutil.ignore_patterns("__pycache__"))
    control = seed == SEEDS[0]
    nb, size = _combined(public, variant, control)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.chdir(tmp_path)
    client = NotebookClient(nb, timeout=600, startup_timeout=240,
                            kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    what = (f"{name}, {variants.variant_name(seed)}:\n"
            + "\n".join(variants.describe(spec, seed)))
    try:
        client.execute()
    except CellExecutionError as err:  # a cell of the first run failed
        pytest.fail(f"the variant's own solutions fail: {what}\n"
                    f"{str(err)[-3000:]}")
    again = [c for c in nb.cells[size:2 * size]
             if control and any(o.get("output_type") == "error"
                                for o in c.get("outputs", []))]
    assert not again, (f"a second run in the same kernel fails, so this test "
                       f"cannot tell why the public solutions fail: {what}\n"
                       f"{again[0].source[:500]}")
    failed = set(_failed_tests(nb.cells[-size:]))
    points = {_meta(c)["grade_id"]: _meta(c)["points"]
              for c in variant.cells if _is_test(c)}
    kept = sum(p for gid, p in points.items() if gid not in failed)
    print(f"{name} {variants.variant_name(seed)}: the pasted public bodies "
          f"keep {kept} of {sum(points.values())} points")
    assert kept <= PASTED_SHARE * sum(points.values()), (
        f"the public solution bodies under the variant's def lines keep "
        f"{kept} of {sum(points.values())} points (passing "
        f"{sorted(set(points) - failed)}): {what}")


def test_derived_values_are_computed_and_checked(tmp_path):
    """A derived value comes from the module beside the spec, is drawn with
    its parameters and must render back to the public text."""
    nb = new_notebook(cells=[new_markdown_cell("The longest is 617.")])
    spec = {"parameters": {"k": {"choices": ["2", "4"]}},
            "derived": ["longest"],
            "substitutions": [{"text": "is 617.", "template": "is {longest}.",
                               "count": 1}]}
    (tmp_path / "09_x.json").write_text(json.dumps(spec))
    (tmp_path / "09_x.py").write_text(
        "import math\n\ndef longest(k):\n"
        "    return f'{2 * math.pi * 100 ** (int(k) * 255 / 512):,.0f}'\n")
    loaded = variants.load_spec(tmp_path / "09_x.json")
    assert variants.draw_parameters(loaded, 1)["longest"] == "60,611"
    assert variants.make_variant(nb, loaded, 1).cells[0].source == (
        "The longest is 60,611.")
    assert "  longest: 617 -> 60,611" in variants.describe(loaded, 1)
    (tmp_path / "09_x.py").write_text("def longest(k):\n    return '618'\n")
    with pytest.raises(ValueError, match="does not give the text"):
        variants.load_spec(tmp_path / "09_x.json")
    (tmp_path / "09_x.py").unlink()
    with pytest.raises(ValueError, match="needs 09_x.py"):
        variants.load_spec(tmp_path / "09_x.json")
    with pytest.raises(ValueError, match="derived"):
        variants.validate_spec(spec)   # no functions
