"""The command line: ``python tools/assignments.py list|release|grade|check-book``."""

import argparse
import os
import time
from pathlib import Path

from .grade import find_work, grade, run_job
from .release import release
from .sources import REPO, SOURCE, check_book, discover, points, title


def _names(requested, source):
    available = discover(source)
    if not available:
        raise SystemExit(f"error: no assignments found in {source}")
    unknown = [n for n in requested or [] if n not in available]
    if unknown:
        raise SystemExit(f"error: unknown assignment(s) {', '.join(unknown)}; "
                         f"available: {', '.join(available)}")
    return list(requested or available)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python tools/assignments.py",
        description="Release and grade the book's nbgrader assignments, "
                    "offline.")
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help="folder of instructor versions "
                             "(default: assignments/source)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the assignments and their points")
    rel = sub.add_parser("release", help="write the student versions")
    rel.add_argument("out_dir", type=Path)
    rel.add_argument("--assignment", action="append", metavar="NAME",
                     help="only this assignment (repeatable)")
    rel.add_argument("--force", action="store_true",
                     help="overwrite notebooks already in OUT_DIR")
    rel.add_argument("--variant", type=int, default=None, metavar="SEED",
                     help="release the class-specific variant of this secret "
                          "seed (other constants and hidden inputs; see "
                          "assignments/grading/)")
    rel.add_argument("--language", choices=("en", "zh_CN"), default="en",
                     help="the language of the prompts and model answers: "
                          "English (default) or Chinese (zh_CN, from the "
                          "book's translation files; code cells are the "
                          "same, and so is grading)")
    rel.add_argument("--instructor-dir", type=Path, default=None,
                     metavar="DIR",
                     help="also write the instructor versions (of the "
                          "variant) to DIR/NAME/NAME.ipynb, for the source/ "
                          "folder of an nbgrader course")
    gra = sub.add_parser(
        "grade", help="grade SUBMISSIONS_DIR/STUDENT/... notebooks")
    gra.add_argument("submissions", type=Path)
    gra.add_argument("--out", type=Path, required=True, help="CSV to write")
    gra.add_argument("--feedback", type=Path, default=None,
                     help="folder for the feedback files (default: "
                          "'feedback' beside the CSV)")
    gra.add_argument("--assignment", action="append", metavar="NAME",
                     help="grade this assignment (repeatable; default: every "
                          "assignment that someone handed in); a student "
                          "without it gets 'missing'")
    gra.add_argument("--timeout", type=int, default=60,
                     help="seconds each cell may run (default 60)")
    gra.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                     help="submissions graded in parallel")
    gra.add_argument("--submission-time-limit", type=int, default=None,
                     metavar="SECONDS",
                     help="stop grading a submission this long after its "
                          "kernel started, in case it hangs despite the limit "
                          "per cell (default: the limit per cell times the "
                          "number of cells, plus a margin)")
    gra.add_argument("--variant", type=int, default=None, metavar="SEED",
                     help="grade against the class-specific variant of this "
                          "seed (the one given to release --variant)")
    gra.add_argument("--marks", type=Path, default=None, metavar="CSV",
                     help="the teacher's marks for the written answers "
                          "(columns student_id, assignment, question, "
                          "points, comment)")
    gra.add_argument("--work-dir", type=Path, default=None,
                     help="keep nbgrader's course folders and logs here "
                          "instead of a temporary folder")
    chk = sub.add_parser(
        "check-book", help="fail if a built book shows instructor material")
    chk.add_argument("html_dir", type=Path, nargs="?",
                     default=REPO / "_build" / "html")
    gra.add_argument("--memory", type=int, default=4096, metavar="MB",
                     help="address space each student's kernel may use "
                          "(default 4096 MB)")
    sub.add_parser("labels", help="bring the Chinese catalogue of the check "
                   "messages (locales/zh_CN/LC_MESSAGES/grader.po) up to date")
    sub.add_parser("_grade").add_argument("job")
    args = parser.parse_args(argv)

    if args.command == "labels":
        from .labels import PO, update

        entries = update(args.source)
        todo = sum(1 for e in entries if not e["msgstr"] or e["fuzzy"])
        print(f"{PO}: {len(entries)} messages, {todo} to translate")
        return 1 if todo else 0
    if args.command == "_grade":
        run_job(args.job)
        return 0
    if args.command == "check-book":
        if not args.html_dir.is_dir():
            raise SystemExit(f"error: {args.html_dir} is not a folder")
        problems = check_book(args.html_dir, args.source)
        for problem in problems:
            print(f"instructor material in the book: {problem}")
        if problems:
            return 1
        print(f"{args.html_dir}: no solution markers, hidden tests or model "
              "answers of the assignments.")
        return 0
    names = _names(getattr(args, "assignment", None), args.source)
    available = discover(args.source)
    if args.command == "list":
        width = max(map(len, names), default=0)
        for name in names:
            auto, manual, _ = points(available[name])
            print(f"{name:{width}} {auto:g} + {manual:g} points  "
                  f"{title(available[name])}")
        return 0
    if args.command == "release":
        try:
            release(args.out_dir, names, args.source, force=args.force,
                    variant_seed=args.variant,
                    instructor_dir=args.instructor_dir,
                    language=args.language)
        except ValueError as err:
            raise SystemExit(f"error: {err}") from err
        return 0
    if not args.submissions.is_dir():
        raise SystemExit(f"error: {args.submissions} is not a folder")
    if args.timeout < 1 or args.jobs < 1:
        raise SystemExit("error: --timeout and --jobs must be at least 1")
    if not args.assignment:
        found, _, _ = find_work(args.submissions, names, available)
        handed_in = {submission.assignment for submission in found}
        names = [n for n in names if n in handed_in]
        if not names:
            raise SystemExit(
                f"error: no submissions found: expected files like "
                f"{args.submissions}/STUDENT/{next(iter(available))}.ipynb")
    start = time.monotonic()
    try:
        grade(args.submissions, args.out, names, feedback_dir=args.feedback,
              timeout=args.timeout, jobs=args.jobs, work_dir=args.work_dir,
              source=args.source, submission_limit=args.submission_time_limit,
              variant_seed=args.variant, marks=args.marks,
              limits={"memory_mb": args.memory,
                      "cpu_seconds": args.timeout * 200})
    except ValueError as err:
        raise SystemExit(f"error: {err}") from err
    print(f"Done in {time.monotonic() - start:.0f} s.")
    return 0

