"""nbgrader settings for the book's assignments, for an existing course.

Copy the folders of ``assignments/source/`` into your course's ``source/``
folder, and load this file from your course's ``nbgrader_config.py``::

    c = get_config()
    load_subconfig("/path/to/the/book/assignments/nbgrader_config.py")

It keeps hidden tests out of the feedback (nbgrader's default feedback shows
them), puts back test cells that a student deleted, and sets time limits.
The kernel that grades must be able to ``import posenc_core`` (and, for
assignment 8, ``posenc_lab`` and torch): copy ``posenc_core.py`` (and
``posenc_lab/``) into each assignment folder under ``source/``, which nbgrader
releases with the notebook. Installing the book in the grading environment
(``pip install -e /path/to/the/book``) works too, but then the students' code
can read the book's repository, solutions included, while it is graded.
"""

import sys
from pathlib import Path

BOOK = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BOOK / "tools"))

from assignments import feedback_preprocessors  # noqa: E402

c = get_config()  # noqa: F821 (defined by traitlets when it loads this file)
c.Execute.timeout = 60  # seconds per cell
c.Execute.iopub_timeout = 15  # let compiled code return after an interrupt
c.OverwriteCells.add_missing_cells = True
c.GenerateFeedback.preprocessors = feedback_preprocessors()
