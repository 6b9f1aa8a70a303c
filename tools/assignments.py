#!/usr/bin/env python3
"""Release and grade the book's assignments with nbgrader, offline.

The command line over the package ``tools/teaching/`` (one module per job).

    python tools/assignments.py list
    python tools/assignments.py release OUT_DIR
    python tools/assignments.py grade SUBMISSIONS_DIR --out grades.csv
    python tools/assignments.py check-book [_build/html]

The instructor versions live in ``assignments/source/NAME/NAME.ipynb`` in
nbgrader's format. ``release`` runs ``nbgrader generate_assignment`` in a
temporary course directory and writes the student versions (solutions and
hidden tests removed) to ``OUT_DIR/NAME.ipynb``, with a copy of
``posenc_core.py`` beside them, and of the package ``posenc_lab/`` (the
small Transformer and its text) when a released notebook imports it, as
assignment 8 does. ``grade`` grades every ``SUBMISSIONS_DIR/STUDENT/NAME.ipynb``
and writes one CSV row and one HTML feedback file per student and assignment.

No Jupyter server, no exchange directory and no Docker are needed. Each
student's code runs in a kernel inside its own bubblewrap sandbox (no view
of the repository, the course or the other students, no network, no new
processes, limits on time, memory and file size); the tests run outside
it, calling the student's functions in the kernel on plain data. Grading
refuses to start where bubblewrap is missing (see teaching.md).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# ``assignments/nbgrader_config.py`` imports feedback_preprocessors from here.
from teaching.cli import main  # noqa: E402
from teaching.course import feedback_preprocessors  # noqa: E402

__all__ = ["feedback_preprocessors", "main"]

if __name__ == "__main__":
    sys.exit(main())
