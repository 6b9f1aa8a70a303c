"""The grader's wiring, fast: whose marks go with whose job, and the class
variant from the command line to every task graded (issue 29).

The full grading runs (tests/test_assignments.py) take minutes; these
replace the part that runs the notebooks by a stand-in that builds each
row from its job alone, the way the real runner does (``report.new_row``
with the job's student, assignment and marks), and check what reaches it:

* the teacher's marks for the written answers reach the job of the student
  they were given to, and nobody else's (two students marked differently,
  a third not at all);
* ``grade(..., variant_seed=S)`` builds every assignment it grades as the
  class variant S, whose hidden inputs differ from the public notebook's;
  ``assignments.py grade --variant S`` hands S to it.

They use the grader's public entry points (``grade.grade``,
``grade.Assignment``, ``cli.main``, ``report``) and replace its runner by
name (``_run_jobs``, or ``_run_workers`` before the sandboxed grader).
"""

import csv
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
from teaching import cli, report, variants  # noqa: E402
from teaching import grade as grading  # noqa: E402
from teaching.sources import discover  # noqa: E402

NAME = "01_why_order"
VARIANT = "06_rope"  # an assignment with a class-variant spec


def _runner_name():
    for name in ("_run_jobs", "_run_workers"):
        if hasattr(grading, name):
            return name
    raise AssertionError("the grader has no job runner called _run_jobs or "
                         "_run_workers: update tests/test_grading_wiring.py")


def _fake_runner(seen):
    """Builds each job's row from the job alone, as the real runner does."""

    def run(pending, tasks, progress, **kwargs):
        for job in pending:
            seen.append(json.loads(json.dumps(job)))
            task = tasks[job["assignment"]]
            marks = {q: tuple(v) for q, v in job.get("marks", {}).items()}
            row = report.new_row(job["student"], job["assignment"], task,
                                 job["feedback"], marks)
            row["auto_score"] = task.auto_max
            row["status"] = "graded"
            report.finish_row(row, task)
            progress(row)

    return run


def _written_question(task):
    assert task.written, f"{task.name} has no written question"
    return next(iter(task.written))


def test_marks_reach_their_own_students_job(tmp_path, monkeypatch):
    path = discover()[NAME]
    task = grading.Assignment(NAME, path)
    question = _written_question(task)
    top = task.written[question]
    subs = tmp_path / "submissions"
    for student in ("ana", "bo", "cy"):
        (subs / student).mkdir(parents=True)
        (subs / student / f"{NAME}.ipynb").write_text(
            json.dumps(task.instructor), encoding="utf-8")
    given = {"ana": top, "bo": top / 2}  # cy not yet marked
    marks = tmp_path / "marks.csv"
    marks.write_text(
        "student_id,assignment,question,points,comment\n"
        + "".join(f"{s},{NAME},{question},{p:g},note for {s}\n"
                  for s, p in given.items()), encoding="utf-8")
    seen = []
    monkeypatch.setattr(grading, _runner_name(), _fake_runner(seen))
    out = tmp_path / "grades.csv"
    grading.grade(subs, out, [NAME], marks=marks, jobs=1)
    jobs = {j["student"]: j for j in seen}
    assert sorted(jobs) == ["ana", "bo", "cy"]
    for student, points in given.items():
        assert list(jobs[student]["marks"]) == [question]
        got_points, comment = jobs[student]["marks"][question]
        assert (float(got_points), comment) == (points, f"note for {student}")
    assert jobs["cy"]["marks"] == {}
    with open(out, newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}
    assert float(rows["ana"]["written_score"]) == pytest.approx(top)
    assert float(rows["bo"]["written_score"]) == pytest.approx(top / 2)
    assert rows["cy"]["written_score"] in ("", None)
    assert "not yet marked" in rows["cy"]["reason"]


def test_grade_builds_every_task_as_the_variant(tmp_path, monkeypatch):
    seeds = []
    real = grading.Assignment

    class Recorded(real):
        def __init__(self, name, path, variant_seed=None, *args, **kw):
            seeds.append((name, variant_seed))
            super().__init__(name, path, variant_seed, *args, **kw)

    monkeypatch.setattr(grading, "Assignment", Recorded)
    (tmp_path / "empty").mkdir()
    grading.grade(tmp_path / "empty", tmp_path / "g.csv", [VARIANT, NAME],
                  variant_seed=4242)
    assert sorted(seeds) == sorted([(VARIANT, 4242), (NAME, 4242)])


def test_the_variant_task_tests_the_variant(tmp_path):
    """Assignment(..., variant_seed=S) is the instructor notebook of the
    class variant S, the one release --variant S hands out: other constants
    than the public notebook, the same as variants.make_variant gives."""
    path = discover()[VARIANT]
    public = grading.Assignment(VARIANT, path)
    variant = grading.Assignment(VARIANT, path, 4242)
    spec = variants.load_spec(REPO / "assignments" / "grading"
                              / f"{VARIANT}.json")
    expected = variants.make_variant(public.instructor, spec, 4242)

    def sources(nb):
        return ["".join(c["source"]) for c in nb["cells"]]

    assert sources(variant.instructor) == sources(expected)
    assert sources(variant.instructor) != sources(public.instructor)
    assert variant.tests == public.tests  # same questions, other inputs


def test_command_line_hands_the_variant_to_the_grader(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "grade",
                        lambda *args, **kw: calls.append((args, kw)))
    subs = tmp_path / "subs"
    subs.mkdir()
    cli.main(["grade", str(subs), "--out", str(tmp_path / "g.csv"),
              "--assignment", VARIANT, "--variant", "4242"])
    cli.main(["grade", str(subs), "--out", str(tmp_path / "g.csv"),
              "--assignment", VARIANT])
    assert [kw.get("variant_seed") for _, kw in calls] == [4242, None]
