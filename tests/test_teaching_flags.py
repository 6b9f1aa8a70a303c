"""The flags of a submission (tools/teaching/flags.py): hints, never points.

Each flag has a submission that must raise it and a near miss that must not;
the instructor's own solutions, handed in as a student would (the handout
with its answer cells filled), must raise none, for all eight assignments,
and neither must the habits of ordinary notebooks.
"""

import copy
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from teaching import flags  # noqa: E402

SOURCE = ROOT / "assignments" / "source"
GRADING = ROOT / "assignments" / "grading"
ASSIGNMENTS = sorted(p.name for p in SOURCE.iterdir()
                     if (p / f"{p.name}.ipynb").is_file())
MARKER_LINE = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*(\n|$)", re.M)


def release(instructor):
    """The student version, as nbgrader's release makes it."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = copy.deepcopy(instructor)
    nb, _ = ClearSolutions().preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    return nb


def meta(cell):
    return cell.metadata.get("nbgrader", {})


def solved(instructor, released):
    """The handout with the instructor's solutions typed in, no markers."""
    nb = copy.deepcopy(released)
    for cell, original in zip(nb.cells, instructor.cells, strict=True):
        if meta(cell).get("solution"):
            if cell.cell_type == "code":
                cell.source = MARKER_LINE.sub("", original.source)
            else:
                cell.source = ("The mask lets each token see only the tokens "
                               "before it, so the order changes the output.")
    return nb


def forbidden_of(name):
    path = GRADING / f"{name}.json"
    if not path.is_file():
        return ()
    return json.loads(path.read_text(encoding="utf-8")).get("forbidden", ())


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def assignment(request):
    name = request.param
    instructor = nbformat.read(SOURCE / name / f"{name}.ipynb", as_version=4)
    return name, instructor, release(instructor)


def test_every_assignment_is_checked():
    assert len(ASSIGNMENTS) == len(list(SOURCE.glob("*/*.ipynb"))) >= 9


def test_the_instructors_solutions_raise_no_flag(assignment):
    name, instructor, released = assignment
    found = flags.analyse(solved(instructor, released), released, instructor,
                          forbidden=forbidden_of(name))
    assert found == [], [str(f) for f in found]


def test_the_instructor_notebook_is_flagged_for_its_markers(assignment):
    name, instructor, released = assignment
    found = flags.analyse(instructor, released, instructor,
                          forbidden=forbidden_of(name))
    assert {f.code for f in found} == {"solution-markers"}
    solutions = [i for i, c in enumerate(instructor.cells)
                 if meta(c).get("solution") and c.cell_type == "code"]
    assert set(solutions) <= {f.cell for f in found}


def test_the_handout_as_is_is_flagged_unchanged(assignment):
    name, instructor, released = assignment
    found = flags.analyse(released, released, instructor,
                          forbidden=forbidden_of(name))
    assert [f.code for f in found] == ["unchanged"]
    assert found[0].cell is None


# ---------------------------------------------------- a small assignment

SETUP = '''\
import contextlib
import os

import matplotlib.pyplot as plt
import numpy as np

import posenc_core as pc


def check_array(got, expected, what):
    assert np.allclose(got, expected), what


@contextlib.contextmanager
def without_posenc_core(*names):
    yield


def observed(label, compute):
    return compute()


table = {"a": 1.0}
OFF = ("frequencies", "wavelengths")
GRADING = bool(os.environ.get("NBGRADER_EXECUTION"))
'''
PAIR = '''\
def pair(d):
    """The frequencies of d / 2 pairs."""
    ### BEGIN SOLUTION
    return 10000.0 ** (-2.0 * np.arange(d // 2) / d)
    ### END SOLUTION
'''
PAIR_TESTS = '''\
# Tests for pair (2 points)
with without_posenc_core(*OFF):
    got = pair(8)
check_array(got, pc.frequencies(8), "pair(8)")
### BEGIN HIDDEN TESTS
with without_posenc_core(*OFF):
    check_array(pair(4), pc.frequencies(4), "pair(4)")
### END HIDDEN TESTS
'''
TABLE = '''\
def encoding(n, d):
    """The sinusoidal encoding; here you may use posenc_core."""
    ### BEGIN SOLUTION
    return pc.sinusoidal_encoding(n, d)
    ### END SOLUTION
'''
TABLE_TESTS = '''\
# Tests for encoding (1 point)
check_array(encoding(3, 4), pc.sinusoidal_encoding(3, 4), "encoding(3, 4)")
'''


def graded(source, grade_id, **extra):
    info = {"grade": False, "grade_id": grade_id, "locked": False,
            "schema_version": 3, "solution": False, "task": False}
    info.update(extra)
    cell = (new_markdown_cell(source) if extra.get("markdown")
            else new_code_cell(source))
    info.pop("markdown", None)
    cell.metadata["nbgrader"] = info
    return cell


def small_instructor():
    return new_notebook(cells=[
        new_markdown_cell("# A small assignment"),
        graded(SETUP, "setup", locked=True),
        graded(PAIR, "q1_pair", solution=True),
        graded(PAIR_TESTS, "q1_pair_tests", grade=True, locked=True, points=2),
        graded(TABLE, "q2_encoding", solution=True),
        graded(TABLE_TESTS, "q2_encoding_tests", grade=True, locked=True,
               points=1),
        graded("**Model answer.** Because.", "q3_written", grade=True,
               solution=True, points=1, markdown=True),
        new_code_cell("# Not graded: try your pair here.\nprint(pair(4))"),
    ])


INSTRUCTOR = small_instructor()
RELEASED = release(INSTRUCTOR)
SOLVED = solved(INSTRUCTOR, RELEASED)


def analyse(*cells, forbidden=(), base=SOLVED):
    """Flags of the solved small assignment with cells appended."""
    nb = copy.deepcopy(base)
    nb.cells += [new_code_cell(source) for source in cells]
    return flags.analyse(nb, RELEASED, INSTRUCTOR, forbidden=forbidden)


def codes(*cells, **options):
    return [f.code for f in analyse(*cells, **options)]


def test_the_small_assignment_solved_raises_no_flag():
    assert analyse() == []


@pytest.mark.parametrize("source", [
    "def pair(d, f=pc.frequencies):\n    return f(d)",
    "from posenc_core import frequencies as fr\n\n\ndef pair(d):\n"
    "    return fr(d)",
    "def pair(d):\n    return getattr(pc, 'frequencies')(d)",
    "def helper(d):\n    return pc.wavelengths(d)\n\n\ndef pair(d):\n"
    "    return 2 * np.pi / helper(d)",
    "reference = pc.frequencies\n\n\ndef pair(d):\n    return reference(d)",
    "from posenc_core import *\n\n\ndef pair(d):\n    return frequencies(d)",
])
def test_a_switched_off_reference_is_flagged(source):
    found = analyse(source)
    assert "uses-reference" in [f.code for f in found], [str(f) for f in found]
    assert all("switch" in f.reason for f in found if f.code == "uses-reference")


@pytest.mark.parametrize("source", [
    # encoding's tests switch nothing off: pc.sinusoidal_encoding is fine
    "def encoding(n, d):\n    return pc.sinusoidal_encoding(n, d)",
    # a helper that only encoding uses may call a switched-off function
    "def helper(d):\n    return pc.frequencies(d)\n\n\ndef encoding(n, d):\n"
    "    return helper(d)",
    # checking one's answer against the library outside the answer
    "print(np.allclose(pair(8), pc.frequencies(8)))",
    "got = pc.frequencies(8)\nprint(np.allclose(got, pair(8)))",
    "import posenc_core as pc\n\n\ndef pair(d):\n    return np.ones(d // 2)",
])
def test_a_reference_where_allowed_is_not_flagged(source):
    found = analyse(source)
    assert found == [], [str(f) for f in found]


# The habits of ordinary notebooks (issue 24): none of them is a flag.
HABITS = [
    "%load_ext autoreload\n%autoreload 2",
    "%matplotlib inline\n%time pair(8)",
    "%%timeit\npair(8)",
    "for name in ('sin', 'cos'):\n    print(getattr(np, name)(0.0))",
    "import sys\nprint(sys.path)",
    "import matplotlib.pyplot as plt\nplt.plot(pair(8))\nplt.show()",
    "import os\nprint(os.getcwd(), os.listdir('.'))",
    "with open('notes.txt', 'w') as handle:\n    handle.write('x')",
    "np.set_printoptions(precision=3)\nplt.rcParams['figure.dpi'] = 100",
    "import importlib\nimportlib.reload(pc)",
    "check_array(pair(8), pc.frequencies(8), 'my own check')",
    "x = eval('1 + 1')",
    "!pip list",
]


@pytest.mark.parametrize("source", HABITS)
def test_an_ordinary_habit_is_not_flagged(source):
    found = analyse(source)
    assert found == [], [str(f) for f in found]


def test_a_name_forbidden_by_the_grading_config_is_flagged_anywhere():
    source = "def encoding(n, d):\n    return pc.sinusoidal_encoding(n, d)"
    found = analyse(source, forbidden=["sinusoidal_encoding"])
    # the added cell, and the solution of encoding, which uses it too
    assert [f.code for f in found] == ["uses-reference"] * 2
    assert found[-1].cell == len(SOLVED.cells)
    assert all("sinusoidal_encoding" in f.reason for f in found)
    assert analyse(source, forbidden=["alibi_bias"]) == []


def test_a_flag_says_where_and_why():
    found = analyse("x = 1\ndef pair(d):\n    return pc.frequencies(d)")
    assert len(found) == 1
    flag = found[0]
    assert (flag.code, flag.cell, flag.line) == (
        "uses-reference", len(SOLVED.cells), 3)
    assert str(flag) == (f"cell {len(SOLVED.cells) + 1}, line 3: "
                         + flag.reason)
    assert "pair" in flag.reason and "frequencies" in flag.reason


def test_looking_for_the_grader_is_flagged():
    assert codes("import os\nprint(os.environ.get('NBGRADER_EXECUTION'))") == [
        "detects-grader"]
    assert codes("print(__posenc__)") == ["detects-grader"]


def test_the_instructors_cells_are_left_to_the_grader():
    nb = copy.deepcopy(SOLVED)
    tests = next(c for c in nb.cells
                 if meta(c).get("grade_id") == "q1_pair_tests")
    tests.source = "def pair(d):\n    return pc.frequencies(d)\n"
    assert flags.analyse(nb, RELEASED, INSTRUCTOR) == []   # restored anyway
    assert analyse(SETUP) == []   # a copy of the setup, as given


def test_solution_markers_are_flagged_in_any_cell():
    nb = copy.deepcopy(SOLVED)
    nb.cells.append(new_markdown_cell("**Model answer.** Copied."))
    nb.cells.append(new_code_cell("x = 1\n### BEGIN HIDDEN TESTS"))
    found = flags.analyse(nb, RELEASED, INSTRUCTOR)
    assert [(f.code, f.cell) for f in found] == [
        ("solution-markers", len(nb.cells) - 2),
        ("solution-markers", len(nb.cells) - 1)]
    prose = copy.deepcopy(SOLVED)
    prose.cells.append(new_markdown_cell("My solution: the model answers."))
    assert flags.analyse(prose, RELEASED, INSTRUCTOR) == []


def test_unchanged_needs_every_answer_as_released():
    found = flags.analyse(RELEASED, RELEASED, INSTRUCTOR)
    assert [f.code for f in found] == ["unchanged"]
    nb = copy.deepcopy(RELEASED)
    written = next(c for c in nb.cells
                   if meta(c).get("grade_id") == "q3_written")
    written.source = "Because the mask hides later tokens."
    assert flags.analyse(nb, RELEASED, INSTRUCTOR) == []
    assert flags.analyse(RELEASED, None, INSTRUCTOR) == []


def test_a_cell_that_does_not_parse_is_a_flag_not_a_crash():
    found = analyse("def f(:\n    pass")
    assert [(f.code, f.cell) for f in found] == [
        ("unparsable", len(SOLVED.cells))]
    assert found[0].line == 1


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="submission_nb"):
        flags.analyse(tmp_path / "missing.ipynb", RELEASED, INSTRUCTOR)
    with pytest.raises(ValueError, match="instructor_nb"):
        flags.analyse(SOLVED, RELEASED, ["not", "a", "notebook"])
    with pytest.raises(ValueError, match="forbidden"):
        flags.analyse(SOLVED, RELEASED, INSTRUCTOR, forbidden="alibi_bias")
