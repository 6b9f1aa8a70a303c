"""Assignment 8 as a student runs it: the training of Part 2 included.

``tests/test_assignments.py`` releases and grades every assignment, but the
grader skips assignment 8's training (nbgrader sets ``NBGRADER_EXECUTION``),
so this test runs the instructor version from start to end in a released
handout folder (the notebook beside the copies of ``posenc_core.py`` and
``posenc_lab/`` that ``release`` writes), about a minute on one CPU
thread. It checks that every cell runs, that the experiment shows what
the model answer says (ALiBi flat, RoPE and no position rising past
``L``), and the numbers the model answer quotes.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
NAME = "08_train_short_test_long"
SOURCE = REPO / "assignments" / "source" / NAME / f"{NAME}.ipynb"


def _text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from nbclient import NotebookClient

    handout = tmp_path_factory.mktemp("handout8")
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "assignments.py"), "release",
         str(handout), "--assignment", NAME, "--force"],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (handout / "posenc_lab" / "data" / "alice.txt").is_file()
    nb = nbformat.read(SOURCE, 4)
    assert "NBGRADER_EXECUTION" not in os.environ
    NotebookClient(nb, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(handout)}}).execute()
    return nb


def _table(nb):
    """{model: [loss at L, 2L, 4L, 8L]} and {model: [loss by position range]}."""
    out = next(_text(c) for c in nb.cells if c.cell_type == "code"
               and "run_experiment(MODELS" in c.source)
    by_length, by_position = {}, {}
    target = None
    for line in out.splitlines():
        if line.startswith("Validation loss"):
            target = by_length
        elif line.startswith("Mean loss at positions"):
            target = by_position
        elif target is not None:
            match = re.match(r"(\S.*?)\s{2,}((?:\d+\.\d+\s*)+)$", line)
            if match:
                target[match.group(1)] = [float(x)
                                          for x in match.group(2).split()]
    return by_length, by_position


def test_every_cell_runs_and_every_test_passes(executed):
    for cell in executed.cells:
        if cell.cell_type == "code":
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert not errors, (cell.source[:80], errors)
    check = next(_text(c) for c in executed.cells if c.cell_type == "code"
                 and "rope_attention is not written yet" in c.source)
    assert "gives posenc_lab's RoPE model" in check


def test_the_experiment_shows_what_the_model_answer_says(executed):
    by_length, by_position = _table(executed)
    alibi = by_length["ALiBi (your alibi_attention)"]
    rope = by_length["RoPE (posenc_lab)"]
    none = by_length["no position"]
    assert len(alibi) == len(rope) == len(none) == 4
    assert max(alibi) - min(alibi) < 0.05           # flat
    assert rope[0] < alibi[0] < none[0]             # at L
    assert rope[3] > rope[0] + 0.5                  # RoPE breaks
    assert all(b > a for a, b in zip(rope[:-1], rope[1:], strict=True))
    assert all(b > a for a, b in zip(none[:-1], none[1:], strict=True))
    assert none[3] < rope[3]
    # by position (0-7, 8-31, 32-63, 64-127, 128-255): RoPE as in training
    # below L, far worse right after it; ALiBi's first positions worst
    rope_pos = by_position["RoPE (posenc_lab)"]
    alibi_pos = by_position["ALiBi (your alibi_attention)"]
    assert rope_pos[1] < rope[0] + 0.1 and rope_pos[2] > rope_pos[1] + 0.5
    assert alibi_pos[0] > max(alibi_pos[1:]) + 0.05


def test_model_answer_quotes_this_run(executed):
    """The numbers of the model answer, against the run (one machine is
    deterministic; another may differ in the last digits, more so for RoPE
    far past L, whose seeds already differ widely)."""
    by_length, by_position = _table(executed)
    answer = next(c.source for c in executed.cells
                  if c.metadata.get("nbgrader", {}).get("grade_id")
                  == "q4_written_experiment")
    quoted = {
        "1.848": by_length["ALiBi (your alibi_attention)"][0],
        "1.834": by_length["ALiBi (your alibi_attention)"][3],
        "1.730": by_length["RoPE (posenc_lab)"][0],
        "3.262": by_length["RoPE (posenc_lab)"][3],
        "2.143": by_length["no position"][0],
        "2.442": by_length["no position"][3],
        "1.703": by_position["RoPE (posenc_lab)"][1],
        "2.837": by_position["RoPE (posenc_lab)"][2],
        "3.635": by_position["RoPE (posenc_lab)"][4],
        "1.980": by_position["ALiBi (your alibi_attention)"][0],
        "1.819": by_position["ALiBi (your alibi_attention)"][1],
    }
    for text, measured in quoted.items():
        assert text in answer, text
        tolerance = 0.3 if float(text) > 2.5 else 0.03
        assert abs(float(text) - measured) <= tolerance, (text, measured)
    shares = next(_text(c) for c in executed.cells if c.cell_type == "code"
                  and "near_share(4, n, 32) =" in c.source)
    assert "n = 256: near_share(4, n, 32) = [1.    0.865 0.401 0.186]" in shares
    assert "0.9997 and 0.865" in answer and "0.401 and 0.186" in answer


def test_grading_skips_the_training(executed):
    """Under nbgrader (NBGRADER_EXECUTION set) run_experiment trains nothing."""
    helpers = next(c.source for c in executed.cells
                   if c.metadata.get("nbgrader", {}).get("grade_id")
                   == "experiment_helpers")
    code = ("import os, sys\nos.environ['NBGRADER_EXECUTION'] = 'autograde'\n"
            f"sys.path.insert(0, {str(REPO)!r})\n"
            "import numpy as np, torch\n"
            "from posenc_lab.model import TinyTransformer\n"
            + helpers + "\nassert run_experiment({'x': dict(method='none')}) "
            "is None\nplot_by_position(None)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300, check=False,
                          env=dict(os.environ, MPLBACKEND="Agg"))
    assert done.returncode == 0, done.stderr
    assert "skipped while the grader runs this notebook" in done.stdout
    assert "trained in" not in done.stdout


# ------------------------------------------- record and replay (phase 2)
#
# The grader runs the test cells twice: in the student's kernel, where it
# records what each top-level call of a student's name returns (calls made
# inside another recorded call, such as the model calling alibi_attention
# inside ``observed``, are not recorded), then in a separate process where
# the student's names only replay those records. The tests below do the
# same in one process, with the records detached from autograd as JSON
# would leave them, to show that the test cells need nothing else.

STUDENT_NAMES = ("alibi_bias_tensor", "alibi_attention", "near_share",
                 "head_reach", "observed")


def _code_cells(nb):
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
            for c in nb.cells if c.cell_type == "code"}


def _test_ids(nb):
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata["nbgrader"].get("solution")]


def _graded(answers=None):
    """The verdicts of the grader, the solutions (some replaced by
    ``answers``) run in the sandboxed kernel, the tests outside it."""
    sys.path.insert(0, str(REPO / "tools"))
    sys.path.insert(0, str(REPO))
    from teaching import session
    from teaching.grade import Assignment

    task = Assignment(NAME, SOURCE)
    nb = nbformat.read(SOURCE, 4)
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid in (answers or {}):
            c.source = answers[gid]
    conn = session.workspace(Path(os.environ.get("TMPDIR", "/tmp"))
                             / "posenc-test-a8")
    result = session.run_submission(
        task.cells(nb), handout=[REPO / "posenc_core.py", REPO / "posenc_lab"],
        conn_dir=conn, exclude=[REPO], names=task.student_names, timeout=300)
    return {gid: v["message"] if not v["passed"] else None
            for gid, v in result["verdicts"].items()}


def test_the_tests_pass_with_the_students_code_in_the_sandbox():
    verdicts = _graded()
    assert set(verdicts) == {"q1_alibi_bias_tensor_tests",
                             "q2_alibi_attention_tests",
                             "q2_alibi_in_the_model_tests",
                             "q3_near_share_tests", "q3b_head_reach_tests"}
    assert all(v is None for v in verdicts.values()), verdicts


def test_wrong_answers_fail_in_the_sandbox_too():
    nb = nbformat.read(SOURCE, 4)
    solution = _code_cells(nb)["q2_alibi_attention"]
    # right forward pass, no gradient: only observed(...) can see it
    detached = solution.replace("return A @ v", "return (A @ v).detach()")
    # the bias with the wrong sign: far keys get more weight
    flipped = solution.replace("S = S + alibi_bias_tensor",
                               "S = S - alibi_bias_tensor")
    assert detached != solution and flipped != solution
    # right forward pass but no gradient: the gradients the tests ask for
    # are computed in the kernel, through the student's code
    for wrong in (detached, flipped):
        verdicts = _graded({"q2_alibi_attention": wrong})
        failed = {t for t, v in verdicts.items() if v is not None}
        assert failed == {"q2_alibi_attention_tests",
                          "q2_alibi_in_the_model_tests"}, verdicts
    verdicts = _graded({"q3b_head_reach": (
        "def head_reach(n_heads, p=0.9):\n"
        "    return np.round(-np.log1p(-p) / pc.alibi_slopes(n_heads))"
        ".astype(int)\n")})
    assert verdicts["q3b_head_reach_tests"] is not None, verdicts
