"""End to end: release the assignments, then grade a class with nbgrader.

Runs ``tools/assignments.py`` as a teacher would, offline. The class:

- ``teacher`` hands in every instructor version: full marks everywhere;
- ``blank`` hands in every untouched student version: zero everywhere;
- ``partial`` answers question 1 of assignment 2 only, and nothing else;
- ``crash``, ``loop`` and ``dies`` hand in assignment 1 with a cell that
  raises, loops forever (cut by the per-cell time limit) or kills the
  kernel;
- ``tampered`` edits, deletes and re-weights test cells and forges a bonus
  cell; ``cheater`` replaces every test by ``pass``;
- ``warns`` hands in a correct answer that prints numpy's divide-by-zero
  RuntimeWarning (keeps its points; the feedback quotes the warning);
- ``badjson`` and ``notebook-list`` hand in broken files; ``bad id!`` and
  ``Frank Smith`` use folder names that are not ids (matched, with a note),
  and a notebook directly in the submissions folder belongs to nobody
  (listed "unmatched");
- the teacher's marks (``--marks``) mark the written answer of assignment
  1 for ``teacher``; every other written answer is "not yet marked".

Only assignment 1 gets the failure cases, to keep the test fast; every
assignment gets its instructor version (full automatic marks, flagged for
its solution markers) and its untouched student version (zero, flagged as
handed back unchanged). The attacks on the grader are in
``tests/test_assignment_attacks.py``. The
expected scores are read from the points in the instructor versions, and
the secrets (solutions, hidden tests) are extracted here independently of
the tool.
"""

import copy
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "assignments.py"
SOURCE = REPO / "assignments" / "source"
NAMES = sorted(p.name for p in SOURCE.iterdir()
               if (p / f"{p.name}.ipynb").is_file())
FIRST, SECOND = "01_why_order", "02_sinusoidal_formula"
TIMEOUT = 15  # seconds per cell, for the infinite loop


def run_tool(*args):
    result = subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)], capture_output=True,
        text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source_of(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def cell(nb, grade_id):
    return next(c for c in nb["cells"] if nbgrader(c).get("grade_id") == grade_id)


def instructor(name):
    return load(SOURCE / name / f"{name}.ipynb")


def points(name, *grade_ids):
    """Autograded and manual points of an assignment, or of some cells."""
    auto = manual = 0.0
    for c in instructor(name)["cells"]:
        meta = nbgrader(c)
        if meta.get("grade") and (not grade_ids or meta["grade_id"] in grade_ids):
            if meta.get("solution"):
                manual += meta["points"]
            else:
                auto += meta["points"]
    return auto, manual


def secrets(name):
    """Solution lines, hidden-test lines and markers of an instructor version.

    Only lines long enough to be distinctive, and not also present outside
    the secret regions (whole or within a line).
    """
    solution, hidden, public = set(), set(), set()
    for c in instructor(name)["cells"]:
        meta = nbgrader(c)
        lines = source_of(c).splitlines()
        if c["cell_type"] == "markdown" and meta.get("solution"):
            solution |= {line.strip() for line in lines}
            continue
        region = None
        for line in lines:
            if "BEGIN SOLUTION" in line:
                region = solution
            elif "BEGIN HIDDEN TESTS" in line:
                region = hidden
            elif "END SOLUTION" in line or "END HIDDEN TESTS" in line:
                region = None
            elif region is not None:
                region.add(line.strip())
            else:
                public.add(line.strip())
    public_text = "\n".join(public)  # a line inside a public line is public
    keep = {line for line in solution | hidden
            if len(line) >= 16 and line not in public_text}
    return solution & keep, (hidden - solution) & keep


MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS",
           "END HIDDEN TESTS")


def visible_text(html):
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return unescape(re.sub(r"<[^>]+>", "", html))


# ------------------------------------------------------------------ release


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    run_tool("release", out)
    return out


def test_release_writes_every_assignment(released):
    import nbformat

    assert len(NAMES) >= 7
    for name in NAMES:
        nb = nbformat.read(released / f"{name}.ipynb", 4)
        nbformat.validate(nb)
        answers = [c for c in nb.cells if nbgrader(c).get("solution")]
        assert answers, name
        assert all("YOUR CODE HERE" in c.source or "YOUR ANSWER HERE" in c.source
                   for c in answers), name
    assert (released / "posenc_core.py").read_text() == (
        REPO / "posenc_core.py").read_text()


def test_release_contains_no_solution_or_hidden_test(released):
    for name in NAMES:
        text = (released / f"{name}.ipynb").read_text(encoding="utf-8")
        solution, hidden = secrets(name)
        assert solution and hidden, name
        for secret in (*MARKERS, *solution, *hidden):
            assert secret not in text, f"{name}: {secret!r}"


def test_release_refuses_to_overwrite(released):
    result = subprocess.run(
        [sys.executable, str(TOOL), "release", str(released)],
        capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "--force" in result.stderr


# ------------------------------------------------------------------ grading


def write(folder, student, name, nb):
    path = folder / student / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nb if isinstance(nb, str) else json.dumps(nb),
                    encoding="utf-8")


def prepend(nb, grade_id, code):
    c = cell(nb, grade_id)
    c["source"] = code + source_of(c)
    return nb


@pytest.fixture(scope="module")
def graded(released, tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    for name in NAMES:
        write(subs, "teacher", name, instructor(name))
        write(subs, "blank", name, load(released / f"{name}.ipynb"))

    partial = load(released / f"{SECOND}.ipynb")
    cell(partial, "q1_concat_encoding")["source"] = "\n".join(
        line for line in source_of(cell(instructor(SECOND),
                                        "q1_concat_encoding")).splitlines()
        if not MARKER_LINE.match(line))
    write(subs, "partial", SECOND, partial)

    write(subs, "crash", FIRST, prepend(
        instructor(FIRST), "q2_unscramble", "raise RuntimeError('oops')\n"))
    write(subs, "loop", FIRST, prepend(
        instructor(FIRST), "q2_unscramble", "while True:\n    pass\n"))
    write(subs, "dies", FIRST, prepend(
        instructor(FIRST), "q3_sentence_vector", "import os\nos._exit(1)\n"))

    tampered = instructor(FIRST)
    cell(tampered, "q1_attention_weights_tests")["source"] = "pass"
    cell(tampered, "q2_unscramble_tests")["metadata"]["nbgrader"]["points"] = 100
    tampered["cells"].remove(cell(tampered, "q3_sentence_vector_tests"))
    bonus = copy.deepcopy(cell(tampered, "q2_unscramble_tests"))
    bonus["metadata"]["nbgrader"].update(grade_id="bonus", points=50)
    bonus["id"], bonus["source"] = "bonus", "pass"
    tampered["cells"].append(bonus)
    write(subs, "tampered", FIRST, tampered)

    cheater = load(released / f"{FIRST}.ipynb")
    for c in cheater["cells"]:
        if nbgrader(c).get("grade") and not nbgrader(c).get("solution"):
            c["source"] = "pass"
    write(subs, "cheater", FIRST, cheater)

    warns = instructor(FIRST)
    answer = cell(warns, "q1_attention_weights")
    answer["source"] = source_of(answer) + (
        "\n\n_exact_weights = attention_weights\n\n\n"
        "def attention_weights(*args, **kwargs):\n"
        "    np.log(np.zeros(1))  # numpy warns: divide by zero\n"
        "    return _exact_weights(*args, **kwargs)\n")
    write(subs, "warns", FIRST, warns)

    write(subs, "badjson", FIRST, '{"cells": [ not json')
    write(subs, "notebook-list", FIRST, "[1, 2, 3]")
    write(subs, "bad id!", FIRST, instructor(FIRST))
    frank = subs / "Frank Smith" / "hw1" / "Assignment 1 (1).ipynb"
    frank.parent.mkdir(parents=True)
    frank.write_text(json.dumps(load(released / f"{FIRST}.ipynb")),
                     encoding="utf-8")
    (subs / "stray.ipynb").write_text(json.dumps(instructor(FIRST)),
                                      encoding="utf-8")

    written = next(nbgrader(c)["grade_id"] for c in instructor(FIRST)["cells"]
                   if nbgrader(c).get("grade") and nbgrader(c).get("solution"))
    marks = tmp_path_factory.mktemp("marks") / "marks.csv"
    marks.write_text("student_id,assignment,question,points,comment\n"
                     f"teacher,{FIRST},{written},1.5,Say why token 0 is "
                     "unchanged.\n", encoding="utf-8")

    out = tmp_path_factory.mktemp("grades")
    stdout = run_tool("grade", subs, "--out", out / "grades.csv",
                      "--timeout", TIMEOUT, "--jobs", 2, "--marks", marks)
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    unmatched = [r for r in table if r["status"] == "unmatched"]
    table = [r for r in table if r["status"] != "unmatched"]
    rows = {(r["student_id"], r["assignment"]): r for r in table}
    assert len(rows) == len(table)
    rows["unmatched"] = unmatched
    return rows, out, stdout


def score(row):
    """(automatic score, maximum of everything)."""
    return float(row["auto_score"]), float(row["max_score"])


def graded_rows(rows):
    return {key: row for key, row in rows.items() if key != "unmatched"}


def test_csv_has_a_row_per_student_and_assignment(graded):
    rows, _, stdout = graded
    students = {"teacher", "blank", "partial", "crash", "loop", "dies",
                "tampered", "cheater", "warns", "badjson", "notebook-list",
                "bad_id", "frank_smith"}
    assert set(graded_rows(rows)) == {(s, n) for s in students for n in NAMES}
    first = next(iter(graded_rows(rows).values()))
    assert list(first) == [
        "student_id", "assignment", "auto_score", "auto_max", "written_score",
        "written_max", "total", "max_score", "status", "reason", "flags",
        "feedback"]
    # progress: one line per row, "[k/N] student assignment ..."
    progress = re.findall(r"^\[\s*\d+/(\d+)\] ", stdout, flags=re.M)
    assert len(progress) == len(rows) - 1 + len(rows["unmatched"])
    assert set(progress) == {str(len(progress))}


def test_instructor_versions_get_full_marks_and_are_flagged(graded):
    rows, _, _ = graded
    for name in NAMES:
        auto, manual = points(name)
        row = rows["teacher", name]
        assert row["status"] == "flagged", row
        assert "solution-markers" in row["flags"], row
        assert score(row) == (auto, auto + manual), row
        assert (float(row["auto_max"]), float(row["written_max"])) == (
            auto, manual), row
        assert "restored" not in row["reason"], row
        if name != FIRST:
            assert row["written_score"] == row["total"] == "", row
            assert "not yet marked" in row["reason"], row


def test_written_marks_are_folded_in(graded):
    rows, out, _ = graded
    auto, manual = points(FIRST)
    row = rows["teacher", FIRST]
    assert float(row["written_score"]) == 1.5, row
    assert float(row["total"]) == auto + 1.5, row
    assert "not yet marked" not in row["reason"], row
    page = visible_text((out / row["feedback"]).read_text(encoding="utf-8"))
    assert "Say why token 0 is unchanged." in page
    assert f"1.5 / {manual:g}" in page
    # unmarked: "not yet marked", never 0, in the CSV and on the page
    row = rows["partial", SECOND]
    assert row["written_score"] == "" and row["total"] == ""
    assert "not yet marked" in row["reason"]
    page = visible_text((out / row["feedback"]).read_text(encoding="utf-8"))
    assert "not yet marked" in page


def test_untouched_student_versions_get_zero_and_are_flagged(graded):
    rows, _, _ = graded
    for name in NAMES:
        auto, manual = points(name)
        row = rows["blank", name]
        assert row["status"] == "flagged", row
        assert row["flags"].startswith("unchanged:"), row
        assert score(row) == (0, auto + manual), row
        assert row["written_score"] == "", row


def test_partly_right_gets_partial_marks(graded):
    rows, _, _ = graded
    auto, manual = points(SECOND, "q1_concat_encoding_tests")
    assert 0 < auto < points(SECOND)[0]
    row = rows["partial", SECOND]
    assert row["status"] == "graded", row
    assert score(row)[0] == auto


def test_missing_submissions_get_zero_with_a_reason(graded):
    rows, out, _ = graded
    row = rows["partial", FIRST]
    assert row["status"] == "missing"
    assert score(row) == (0, sum(points(FIRST)))
    assert f"no {FIRST}.ipynb" in row["reason"]
    assert (out / row["feedback"]).is_file()


def test_a_crashing_cell_loses_only_its_question(graded):
    rows, _, _ = graded
    row = rows["crash", FIRST]
    lost = points(FIRST, "q2_unscramble_tests")[0]
    assert row["status"] == "flagged", row  # the instructor's markers
    assert score(row)[0] == points(FIRST)[0] - lost


def test_an_infinite_loop_is_cut_by_the_time_limit(graded):
    rows, _, _ = graded
    row = rows["loop", FIRST]
    lost = points(FIRST, "q2_unscramble_tests")[0]
    assert row["status"] == "flagged", row
    assert score(row)[0] == points(FIRST)[0] - lost
    assert f"time limit of {TIMEOUT} s" in row["reason"]
    assert "q2_unscramble" in row["reason"]


def test_a_dead_kernel_fails_the_rest_with_a_reason(graded):
    rows, _, _ = graded
    row = rows["dies", FIRST]
    assert row["status"] == "failed", row
    # the tests before the cell that killed the kernel keep their points
    assert score(row)[0] == points(FIRST, "q1_attention_weights_tests",
                                   "q2_unscramble_tests")[0]
    assert "kernel died" in row["reason"]


def test_tampered_test_cells_are_restored(graded):
    rows, out, _ = graded
    row = rows["tampered", FIRST]
    assert row["status"] == "flagged", row
    auto, manual = points(FIRST)
    assert score(row) == (auto, auto + manual)  # no bonus, no 100 points
    assert "deleted cells put back: q3_sentence_vector_tests" in row["reason"]
    assert "q1_attention_weights_tests" in row["reason"]
    assert "not graded" in row["reason"]  # the forged bonus cell
    page = (out / row["feedback"]).read_text(encoding="utf-8")
    assert "deleted cells put back" in visible_text(page)

    row = rows["cheater", FIRST]
    assert row["status"] in ("graded", "flagged"), row
    assert score(row)[0] == 0
    assert "restored to the original" in row["reason"]


def test_a_warning_costs_no_points_and_is_named(graded):
    rows, out, _ = graded
    row = rows["warns", FIRST]
    assert score(row)[0] == points(FIRST)[0], row
    assert ("q1_attention_weights_tests: the code printed a RuntimeWarning"
            in row["reason"]), row
    page = visible_text((out / row["feedback"]).read_text(encoding="utf-8"))
    assert "printed a RuntimeWarning (no points lost)" in page


def test_messy_folders_are_matched_or_listed(graded):
    rows, _, _ = graded
    row = rows["bad_id", FIRST]
    assert score(row)[0] == points(FIRST)[0], row
    assert "'bad id!' -> id bad_id" in row["reason"], row
    row = rows["frank_smith", FIRST]
    assert row["status"] == "flagged" and row["flags"].startswith("unchanged")
    assert "'Frank Smith' -> id frank_smith" in row["reason"], row
    assert "Assignment 1 (1).ipynb" in row["reason"], row
    (stray,) = rows["unmatched"]
    assert stray["student_id"] == "" and "stray.ipynb" in stray["reason"]


def test_broken_files_are_reported_invalid(graded):
    rows, out, _ = graded
    row = rows["badjson", FIRST]
    assert row["status"] == "invalid" and "invalid JSON" in row["reason"]
    assert (out / row["feedback"]).is_file()
    row = rows["notebook-list", FIRST]
    assert row["status"] == "invalid" and "not a Jupyter notebook" in row["reason"]
    for (student, _name), row in graded_rows(rows).items():
        if student in ("badjson", "notebook-list"):
            assert float(row["auto_score"]) == 0


def test_feedback_never_shows_hidden_tests(graded):
    rows, out, _ = graded
    hidden = {name: secrets(name)[1] for name in NAMES}
    checked = 0
    for (_student, name), row in graded_rows(rows).items():
        page = out / row["feedback"]
        assert page.is_file(), row
        text = visible_text(page.read_text(encoding="utf-8"))
        assert f"{name}" in text
        for secret in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", *hidden[name]):
            assert secret not in text, f"{page}: {secret!r}"
        assert "__posenc__" not in text, page
        checked += row["status"] in ("graded", "flagged")
        assert "internal grading error" not in row["reason"], row
    assert checked >= 2 * len(NAMES)
    # the feedback of a graded submission shows each test's verdict and
    # message, never the test's code
    blank = visible_text((out / rows["blank", FIRST]["feedback"]).read_text(
        encoding="utf-8"))
    assert "Tests for attention_weights" not in blank
    assert "attention_weights raised NotImplementedError" in blank
    assert "q1_attention_weights_tests: failed" in blank


def test_a_class_variant_fails_copied_public_answers(tmp_path):
    """release/grade --variant: the public solutions fail the variant."""
    sys.path.insert(0, str(REPO / "tools"))
    from grading_helpers import pasted
    from teaching.variants import load_spec, make_variant

    seed = 20261201
    run_tool("release", tmp_path / "handout", "--assignment", FIRST,
             "--variant", seed, "--instructor-dir", tmp_path / "source")
    handout = (tmp_path / "handout" / f"{FIRST}.ipynb").read_text(
        encoding="utf-8")
    public = instructor(FIRST)
    variant = make_variant(public, load_spec(
        REPO / "assignments" / "grading" / f"{FIRST}.json"), seed)
    assert variant != public
    assert load(tmp_path / "source" / FIRST / f"{FIRST}.ipynb") == variant
    for secret in (*MARKERS, *secrets(FIRST)[1]):
        assert secret not in handout, secret
    assert str(seed) not in handout
    subs = tmp_path / "submissions"
    write(subs, "copier", FIRST, public)
    write(subs, "classmate", FIRST, variant)
    # the public bodies under the variant's own def lines (issue 24 item 3)
    paster = copy.deepcopy(variant)
    for c in paster["cells"]:
        if nbgrader(c).get("solution") and c["cell_type"] == "code":
            c["source"] = pasted(source_of(cell(public, nbgrader(c)[
                "grade_id"])), source_of(c))
    write(subs, "paster", FIRST, paster)
    run_tool("grade", subs, "--out", tmp_path / "grades.csv", "--jobs", 2,
             "--variant", seed)
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}
    auto = points(FIRST)[0]
    assert float(rows["classmate"]["auto_score"]) == auto, rows["classmate"]
    assert float(rows["copier"]["auto_score"]) < auto, rows["copier"]
    assert float(rows["paster"]["auto_score"]) <= auto / 4, rows["paster"]


def test_a_hanging_grader_is_killed_and_the_rest_graded(tmp_path):
    """The last line of defence: a grading process that takes too long.

    This cell ignores the interrupt that ends a cell at the time limit (the
    grader would stop its kernel 10 s after the limit of 60 s); with a
    limit per submission of 30 s (counted from the kernel's start), the
    grading process is killed first, and the next submission is still
    graded.
    """
    subs = tmp_path / "submissions"
    write(subs, "hang", FIRST, prepend(
        instructor(FIRST), "q1_attention_weights",
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "while True:\n    pass\n"))
    write(subs, "later", FIRST, instructor(FIRST))
    run_tool("grade", subs, "--out", tmp_path / "grades.csv", "--jobs", 1,
             "--timeout", 60, "--submission-time-limit", 30)
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}
    assert rows["hang"]["status"] == "failed"
    assert "longer than 30 s" in rows["hang"]["reason"]
    assert float(rows["hang"]["auto_score"]) == 0
    assert (tmp_path / rows["hang"]["feedback"]).is_file()
    assert rows["later"]["status"] == "flagged"  # the instructor's markers
    assert float(rows["later"]["auto_score"]) == points(FIRST)[0]


# ------------------------------------------- in an existing nbgrader course


def test_drop_into_an_existing_nbgrader_course(tmp_path):
    """nbgrader's command line, with the book's settings as a subconfig."""
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    shutil.copytree(SOURCE / FIRST, course / "source" / FIRST)
    settings = SOURCE.parent / "nbgrader_config.py"
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nload_subconfig({str(settings)!r})\n")
    (tmp_path / "config").mkdir()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                     os.environ.get("PATH", "")]))

    def nbgrader_cli(*args):
        result = subprocess.run(
            [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
            capture_output=True, text=True, timeout=900, check=False)
        assert result.returncode == 0, result.stdout + result.stderr

    nbgrader_cli("generate_assignment", FIRST)
    submitted = course / "submitted" / "alice" / FIRST
    submitted.mkdir(parents=True)
    shutil.copyfile(SOURCE / FIRST / f"{FIRST}.ipynb",
                    submitted / f"{FIRST}.ipynb")
    nbgrader_cli("autograde", FIRST)
    nbgrader_cli("generate_feedback", FIRST)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission(FIRST, "alice")
        assert (submission.score, submission.max_score) == (
            points(FIRST)[0], sum(points(FIRST)))
    page = course / "feedback" / "alice" / FIRST / f"{FIRST}.html"
    text = visible_text(page.read_text(encoding="utf-8"))
    assert "Tests for attention_weights" in text
    for secret in ("BEGIN HIDDEN TESTS", *secrets(FIRST)[1]):
        assert secret not in text, secret


# ------------------------------------------------------------ the HTML book


def toc_files(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("file", "root") and isinstance(value, str):
                yield value
            else:
                yield from toc_files(value)
    elif isinstance(node, list):
        for item in node:
            yield from toc_files(item)


MARKER_LINE = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$",
                         flags=re.M)


def book_secrets():
    """Model answers, and hidden-test lines that call a student's answer.

    (Marker lines are checked apart. A chapter may show the same data or
    numpy as a hidden test; a call of the answer function is distinctive.)
    """
    found = set()
    for name in NAMES:
        answers = set()
        for c in instructor(name)["cells"]:
            if nbgrader(c).get("solution") and c["cell_type"] == "code":
                answers |= set(re.findall(r"^def (\w+)", source_of(c), re.M))
        assert answers, name
        found |= {line for line in secrets(name)[1]
                  if any(f"{answer}(" in line for answer in answers)}
        for c in instructor(name)["cells"]:
            if c["cell_type"] == "markdown" and nbgrader(c).get("solution"):
                found |= {line.strip() for line in source_of(c).splitlines()
                          if len(line.strip()) >= 16}
    return found


def test_book_sources_exclude_the_instructor_versions():
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert "assignments" in config["exclude_patterns"]
    assert config.get("only_build_toc_files") is True
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    files = list(toc_files(toc))
    assert files
    forbidden = book_secrets()
    for entry in files:
        assert not entry.startswith("assignments"), entry
        for path in (REPO / f"{entry}.md", REPO / f"{entry}.ipynb",
                     REPO / entry):
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                if path.suffix == ".ipynb":
                    text = "\n".join(source_of(c)
                                     for c in json.loads(text)["cells"])
                assert not MARKER_LINE.search(text), path
                for secret in forbidden:
                    assert secret not in text, f"{path}: {secret!r}"


def test_check_book_finds_instructor_material(tmp_path):
    line = next(line for line in sorted(secrets(FIRST)[1])
                if "attention_weights(" in line)
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "page.html").write_text(
        "<p>Solutions go between <code>### BEGIN SOLUTION</code> and "
        "<code>### END SOLUTION</code>.</p>")
    run_tool("check-book", tmp_path / "clean")
    sys.path.insert(0, str(REPO / "tools"))
    from teaching.sources import instructor_notebook  # noqa: PLC0415

    zh = instructor_notebook(FIRST, SOURCE / FIRST / f"{FIRST}.ipynb",
                             language="zh_CN")
    answer = next(
        line.strip() for c in zh["cells"] if c["cell_type"] == "markdown"
        and c["metadata"].get("nbgrader", {}).get("solution")
        for line in source_of(c).splitlines()
        if len(line.strip()) >= 20 and any("\u4e00" <= ch <= "\u9fff"
                                           for ch in line))
    leaky = {
        "hidden.html": f"<pre><span>{line[:10]}</span>{line[10:]}</pre>",
        "zh_answer.html": f"<p>{answer}</p>",
        "marker.html": "<pre>def f():\n    <span>### BEGIN SOLUTION</span>"
                       "\n    return 1\n</pre>",
    }
    for name, page in leaky.items():
        folder = tmp_path / name.split(".")[0]
        folder.mkdir()
        (folder / name).write_text(page)
        result = subprocess.run(
            [sys.executable, str(TOOL), "check-book", str(folder)],
            capture_output=True, text=True, check=False)
        assert result.returncode == 1, name
        assert name in result.stdout


def test_built_book_shows_no_instructor_material(book_html):
    run_tool("check-book", book_html)
