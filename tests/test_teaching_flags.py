"""The static flags of a submission (tools/teaching/flags.py).

Each flag has a submission that must raise it and a near miss that must not;
the instructor's own solutions, handed in as a student would (the handout
with its answer cells filled), must raise none, for all eight assignments.
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


def test_all_eight_assignments_are_checked():
    assert len(ASSIGNMENTS) == 8


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


def analyse(*cells, forbidden=(), folder=None, base=SOLVED):
    """Flags of the solved small assignment with cells appended."""
    nb = copy.deepcopy(base)
    nb.cells += [new_code_cell(source) for source in cells]
    return flags.analyse(nb, RELEASED, INSTRUCTOR, forbidden=forbidden,
                         folder=folder)


def codes(*cells, **options):
    return [f.code for f in analyse(*cells, **options)]


def test_the_small_assignment_solved_raises_no_flag():
    assert analyse() == []


@pytest.mark.parametrize("code, source", [
    ("binds-test-helper", "check_array = lambda *a, **k: None"),
    ("binds-test-helper", "def check_array(got, expected, what):\n    pass"),
    ("binds-test-helper", "import math as np"),
    ("binds-test-helper", "from matplotlib import colors as plt"),
    ("binds-test-helper", "OFF = ()"),
    ("binds-test-helper", "def observed(label, compute):\n    return None"),
    ("binds-test-helper", "for pc in [1]:\n    pass"),
    ("binds-test-helper",
     "def f():\n    global check_array\n    check_array = print\nf()"),
    ("binds-test-helper", "table['a'] = 2.0"),
    ("binds-test-helper", "check_array.__defaults__ = ()"),
    ("binds-test-helper", "from math import *"),
    ("patches-module", "np.isclose = lambda *a, **k: True"),
    ("patches-module", "np.testing.assert_allclose = print"),
    ("patches-module", "pc.frequencies = pair"),
    ("patches-module", "import numpy\nnumpy.allclose = print"),
    ("patches-module", "m = np.linalg\nm.norm = abs"),
    ("patches-module", "setattr(np, 'isclose', print)"),
    ("patches-module", "delattr(pc, 'frequencies')"),
    ("patches-module", "globals()['x'] = 1"),
    ("patches-module", "vars(pc)"),
    ("patches-module", "import sys\nsys.modules['numpy'] = None"),
    ("patches-module", "__builtins__.print = len"),
    ("dynamic-code", "eval('1 + 1')"),
    ("dynamic-code", "exec('x = 1')"),
    ("dynamic-code", "code = compile('1', 'f', 'eval')"),
    ("dynamic-code", "np2 = __import__('numpy')"),
    ("dynamic-code", "import importlib"),
    ("dynamic-code", "from inspect import currentframe"),
    ("dynamic-code", "import ctypes"),
    ("dynamic-code", "import subprocess"),
    ("dynamic-code", "import sys\nframe = sys._getframe(1)"),
    ("dynamic-code", "os.system('ls')"),
    ("dynamic-code", "g = pair.__globals__"),
    ("dynamic-code", "name = 'isclose'\nf = getattr(np, name)"),
    ("dynamic-code", "!ls /"),
    ("dynamic-code", "files = !ls"),
    ("dynamic-code", "%run other.py"),
    ("dynamic-code", "%%bash\nls /"),
    ("dynamic-code", "%time x = eval('1')"),
    ("dynamic-code", "shell = get_ipython()\nshell.user_ns['x'] = 1"),
    ("dynamic-code", "from sys import _getframe"),
    ("dynamic-code", "from os import system"),
    ("dynamic-code", "import builtins\nbuiltins.exec('x = 1')"),
    ("dynamic-code", "%%time\n%time x = eval('1')"),
    ("patches-module", "from builtins import setattr as put"),
    ("patches-module", "%%time\nnp.isclose = print"),
    ("detects-grader", "def pair(d):\n    return None if GRADING else d"),
    ("detects-grader", "grading = os.environ.get('NBGRADER_EXECUTION')"),
    ("detects-grader", "__posenc_grading__.end = print"),
    ("reads-files", "open('/work/x')"),
    ("reads-files", "open('../x')"),
    ("reads-files", "p = 'data.txt'\nopen(p)"),
    ("reads-files", "x = np.load('/tmp/answers.npy')"),
    ("reads-files", "from pathlib import Path\nPath('/etc/passwd').read_text()"),
    ("reads-files", "from pathlib import Path\nPath('..') / 'x.ipynb'\n"
                    "(Path('..') / 'x.ipynb').read_text()"),
    ("reads-files", "names = os.listdir('..')"),
    ("reads-files", "import glob\nfound = glob.glob('/work/**/*.ipynb')"),
    ("reads-files", "with open(f'{os.sep}work') as f:\n    pass"),
    ("reads-files", "import linecache\nlinecache.getlines('/work/x.py')"),
    ("reads-files", "import pandas as pd\nframe = pd.read_csv('../grades.csv')"),
    ("reads-files", "import io\nio.FileIO('/etc/passwd')"),
    ("reads-files", "from urllib.request import urlopen\n"
                    "urlopen('file:///work/main/x.ipynb')"),
])
def test_a_flag_is_raised(code, source):
    found = analyse(source)
    assert code in [f.code for f in found], [str(f) for f in found]
    added = len(SOLVED.cells)
    assert all(f.cell == added for f in found if f.code == code)


@pytest.mark.parametrize("source", [
    "close = np.isclose(np.arange(3), np.arange(3))",
    "from matplotlib import pyplot as plt",
    "import matplotlib.pyplot as plt\nplt.rcParams['figure.dpi'] = 120",
    "os.environ['OMP_NUM_THREADS'] = '1'",
    "import numpy as np\nimport posenc_core as pc",
    "def check(got):\n    return check_array(got, 1.0, 'got')",
    "off = ()\nchecked = check_array",
    "def f(table):\n    table['a'] = 2.0\n    return table",
    "class Box:\n    def __init__(self):\n        self.x = 1",
    "m = np.linalg\nnorm = m.norm(np.ones(3))",
    "value = getattr(np, 'pi')",
    "def f(obj, name):\n    return getattr(obj, name)",
    "model = Box = None\nevaluation = 'eval'",
    "import math",
    "os.path.join('a', 'b')",
    "print(pair.__name__, pair.__doc__)",
    "%matplotlib inline",
    "%timeit pair(4)",
    "%%time\nx = pair(4)",
    "np.isclose?",
    "grading = 'graded by my teacher'",
    "def f(GRADING=False):\n    return GRADING",
    "import pandas as pd\nframe = pd.read_csv('grades.csv')",
    "from urllib.request import urlopen\nurlopen('https://example.org')",
    "open('data.txt')",
    "with open('results/data.txt', 'w') as f:\n    f.write('1')",
    "names = os.listdir()",
    "x = np.load('answers.npy')",
    "from pathlib import Path\ntext = Path('notes.txt').read_text()",
    "from pathlib import Path\n(Path('results') / 'x.txt').read_text()",
    "import glob\nfound = glob.glob('*.txt')",
    "def pair(d):\n    wavelengths = 2 * np.pi\n    frequencies = np.ones(d // 2)\n"
    "    return frequencies / wavelengths * 2 * np.pi",
])
def test_a_near_miss_raises_no_flag(source):
    found = analyse(source)
    assert found == [], [str(f) for f in found]


def test_reading_a_file_is_checked_against_the_folder(tmp_path):
    (tmp_path / "data.txt").write_text("1")
    (tmp_path / "way_out").symlink_to("/")
    assert analyse("open('data.txt')", folder=tmp_path) == []
    assert codes("open('way_out/etc/passwd')", folder=tmp_path) == [
        "reads-files"]
    assert codes("open('way_out/etc/passwd')") == []   # no folder: by text


@pytest.mark.parametrize("source", [
    "def pair(d, f=pc.frequencies):\n    return f(d)",
    "from posenc_core import frequencies as fr\n\n\ndef pair(d):\n"
    "    return fr(d)",
    "def pair(d):\n    return getattr(pc, 'frequencies')(d)",
    "def helper(d):\n    return pc.wavelengths(d)\n\n\ndef pair(d):\n"
    "    return 2 * np.pi / helper(d)",
    "reference = pc.frequencies\n\n\ndef pair(d):\n    return reference(d)",
    "def pair(d):\n    import posenc_lab\n    return np.ones(d // 2)",
    "from posenc_core import *\n\n\ndef pair(d):\n    return np.ones(d // 2)",
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
    # a name the tests bind themselves is not the student's answer
    "got = pc.frequencies(8)\nprint(np.allclose(got, pair(8)))",
    # the same import as the setup's
    "import posenc_core as pc\n\n\ndef pair(d):\n    return np.ones(d // 2)",
])
def test_a_reference_where_allowed_is_not_flagged(source):
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
    # by attribute of any object, or as a string, in any cell
    for source in ("def f(model):\n    return model._table",
                   "def f(n):\n    return TinyTransformer(n, 'alibi')",
                   "from posenc_core import _table"):
        found = analyse(source, forbidden=["_table", "alibi"])
        assert [f.code for f in found] == ["uses-reference"], source
    assert analyse("def f(model, alibi):\n    return model.table, alibi",
                   forbidden=["_table", "alibi"]) == []


def test_a_flag_says_where_and_why():
    found = analyse("x = 1\ncheck_array = None")
    assert len(found) == 1
    flag = found[0]
    assert (flag.code, flag.cell, flag.line) == (
        "binds-test-helper", len(SOLVED.cells), 2)
    assert str(flag) == (f"cell {len(SOLVED.cells) + 1}, line 2: "
                         + flag.reason)
    assert "check_array" in flag.reason
    assert flags.describe(found + found) == f"{flag}; {flag}"


def test_an_answer_cell_is_analysed_like_an_added_one():
    nb = copy.deepcopy(SOLVED)
    answer = next(c for c in nb.cells if meta(c).get("grade_id") == "q1_pair")
    answer.source += "\n\nnp.isclose = lambda *a, **k: True\n"
    found = flags.analyse(nb, RELEASED, INSTRUCTOR)
    assert [f.code for f in found] == ["patches-module"]
    assert found[0].cell == nb.cells.index(answer)


def test_a_locked_cell_is_left_to_the_grader_but_a_copy_is_not():
    nb = copy.deepcopy(SOLVED)
    tests = next(c for c in nb.cells
                 if meta(c).get("grade_id") == "q1_pair_tests")
    tests.source = "check_array = print\n" + tests.source
    assert flags.analyse(nb, RELEASED, INSTRUCTOR) == []   # restored anyway
    assert codes(tests.source) == ["binds-test-helper"]


def test_a_copy_of_the_setup_cell_is_not_flagged():
    assert analyse(SETUP) == []
    edited = analyse(SETUP.replace("np.allclose(got, expected)", "True"))
    assert "binds-test-helper" in {f.code for f in edited}
    assert any("check_array" in f.reason for f in edited)


def test_given_cells_are_not_analysed_but_an_edited_one_is():
    given = "# Not graded: try your pair here.\nprint(pair(4))"
    assert given in [c.source for c in SOLVED.cells]
    assert codes(given + "\npc.frequencies = pair") == ["patches-module"]


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
    found = analyse("def f(:\n    pass", "np.isclose = print")
    assert [(f.code, f.cell) for f in found] == [
        ("unparsable", len(SOLVED.cells)),
        ("patches-module", len(SOLVED.cells) + 1)]
    assert found[0].line == 1


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="submission_nb"):
        flags.analyse(tmp_path / "missing.ipynb", RELEASED, INSTRUCTOR)
    with pytest.raises(ValueError, match="instructor_nb"):
        flags.analyse(SOLVED, RELEASED, ["not", "a", "notebook"])
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{")
    with pytest.raises(ValueError, match="released_nb"):
        flags.analyse(SOLVED, broken, INSTRUCTOR)
    with pytest.raises(ValueError, match="forbidden"):
        flags.analyse(SOLVED, RELEASED, INSTRUCTOR, forbidden="alibi_bias")
    with pytest.raises(ValueError, match="folder"):
        flags.analyse(SOLVED, RELEASED, INSTRUCTOR, folder=tmp_path / "no")


def test_notebooks_may_be_given_as_paths(tmp_path):
    paths = []
    for name, nb in (("s", SOLVED), ("r", RELEASED), ("i", INSTRUCTOR)):
        nb = copy.deepcopy(nb)
        if name == "s":
            nb.cells.append(new_code_cell("np.isclose = print"))
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
        paths.append(tmp_path / f"{name}.ipynb")
    found = flags.analyse(*paths)
    assert [f.code for f in found] == ["patches-module"]


# ------------------------------------------------------ the guard's log

def write_log(path, *entries):
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n"
                            for e in entries))
    return path


def test_the_guard_log_gives_file_flags(tmp_path):
    folder = tmp_path / "grading"
    folder.mkdir()
    log = write_log(
        tmp_path / "guard.jsonl",
        {"event": "open", "path": "/work/main/assignments/source/a.ipynb",
         "action": "refused"},
        {"event": "open", "path": "/work/main/assignments/source/a.ipynb",
         "action": "refused"},
        {"event": "os.listdir", "path": "/home/student", "action": "outside"},
        {"event": "open", "path": str(folder / "data.txt"), "action": "outside"},
        {"event": "subprocess.Popen", "path": "('ls', ['ls'])",
         "action": "refused"},
        "not json")
    found = flags.flags_from_guard_log(log, folder)
    assert [f.code for f in found] == ["reads-files", "reads-files",
                                       "dynamic-code", "reads-files"]
    assert "tried to open /work/main/assignments/source/a.ipynb" in found[0].reason
    assert "listed /home/student" in found[1].reason
    assert "start a program" in found[2].reason
    assert "unreadable line 6" in found[3].reason
    assert all(f.cell is None for f in found)


def test_no_guard_log_means_no_flag_and_bad_folders_are_refused(tmp_path):
    assert flags.flags_from_guard_log(tmp_path / "none.jsonl", tmp_path) == []
    with pytest.raises(ValueError, match="folder"):
        flags.flags_from_guard_log(tmp_path / "none.jsonl", tmp_path / "no")
    with pytest.raises(ValueError, match="path"):
        flags.flags_from_guard_log(tmp_path, tmp_path)


# ------------------------------------- the issue's attacks, on the real eight

def attacks(name, instructor):
    """(flag code, code added to the first answer cell) for each attack."""
    teacher = flags._Instructor(instructor, None)
    answer_names = set()
    for cell in instructor.cells:
        if meta(cell).get("solution") and cell.cell_type == "code":
            answer_names |= set(re.findall(r"^def (\w+)", cell.source, re.M))
    tested = sorted(n for n in teacher.switched if n in answer_names)
    found = [
        ("binds-test-helper", "check_array = lambda *a, **k: None"),
        ("patches-module", "np.isclose = lambda a, b, **k: np.ones("
                           "np.broadcast(a, b).shape, dtype=bool)"),
        ("reads-files", f"secret = open('{SOURCE / name / name}.ipynb').read()"),
        ("reads-files", f"secret = open('../../source/{name}/{name}.ipynb')"),
    ]
    if tested:
        target = tested[0]
        off = sorted(teacher.switched[target])[0]
        found.append(("uses-reference",
                      f"def {target}(*args, _f=pc.{off}, **kwargs):\n"
                      "    return _f(*args, **kwargs)"))
    return found


def test_every_attack_of_the_issue_is_flagged(assignment):
    name, instructor, released = assignment
    base = solved(instructor, released)
    first = next(i for i, c in enumerate(base.cells)
                 if meta(c).get("solution") and c.cell_type == "code")
    cases = attacks(name, instructor)
    assert len(cases) == 5   # every assignment switches a function off
    for code, attack in cases:
        nb = copy.deepcopy(base)
        nb.cells[first].source += "\n\n" + attack + "\n"
        found = flags.analyse(nb, released, instructor,
                              forbidden=forbidden_of(name))
        assert code in [f.code for f in found if f.cell == first], (
            attack, [str(f) for f in found])
