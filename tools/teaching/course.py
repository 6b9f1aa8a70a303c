"""A temporary nbgrader course, driven through nbgrader's Python API.

``release`` (and grading, which needs the released notebooks) generates the
student versions with it. Also the feedback preprocessors that keep hidden
tests out of nbgrader's own feedback, for an existing nbgrader course
(``assignments/nbgrader_config.py``); this tool writes its feedback pages
itself (``feedback.py``).
"""

import re
import shutil
from pathlib import Path

from .sources import ANSI


class Course:
    """A temporary nbgrader course directory, driven through nbgrader's API.

    Imports nbgrader (slow: several seconds).
    """

    def __init__(self, root):
        import logging

        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config

        logging.getLogger("traitlets").setLevel(logging.WARNING)
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.db_url = f"sqlite:///{self.root / 'gradebook.db'}"
        c = Config()
        c.CourseDirectory.root = str(self.root)
        c.CourseDirectory.db_url = self.db_url
        self.config = c
        self.coursedir = CourseDirectory(config=c)

    def run(self, converter, assignment, **attrs):
        from nbgrader.utils import capture_log

        self.coursedir.assignment_id = assignment
        self.coursedir.student_id = "."
        app = converter(coursedir=self.coursedir, config=self.config)
        app.force = True
        for key, value in attrs.items():
            setattr(app, key, value)
        return capture_log(app)

    def generate(self, name, notebook, lab=False):
        """nbgrader generate_assignment; returns the released notebook.

        ``notebook`` is the instructor notebook: a path, or a notebook node
        (a variant, an instrumented version) written as ``NAME.ipynb``. The
        assignment's folder in ``source/`` also gets the handout's copy of
        ``posenc_core.py`` (and ``posenc_lab/`` when ``lab``): nbgrader
        copies it beside each submission it grades.
        """
        import nbformat
        from nbgrader.converters import GenerateAssignment

        from .release import copy_handout

        folder = self.root / "source" / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        if isinstance(notebook, (str, Path)):
            notebook = nbformat.read(str(notebook), 4)
        nbformat.write(nbformat.from_dict(notebook), folder / f"{name}.ipynb")
        copy_handout(folder, lab)
        result = self.run(GenerateAssignment, name, create_assignment=True)
        released = self.root / "release" / name / f"{name}.ipynb"
        if not result["success"] or not released.is_file():
            raise RuntimeError(
                f"nbgrader generate_assignment failed for {name}:\n"
                + (result.get("error") or result.get("log") or ""))
        return released


def feedback_preprocessors():
    """Preprocessors for ``GenerateFeedback`` that keep hidden tests secret.

    nbgrader's own feedback shows the hidden tests, which the autograder
    put back into the test cells. Use this list in a course's
    ``nbgrader_config.py`` (see ``assignments/nbgrader_config.py``)::

        c.GenerateFeedback.preprocessors = feedback_preprocessors()
    """
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    return [GetGrades, _hide_hidden_tests_class(), ClearHiddenTests,
            CSSHTMLHeaderPreprocessor]


def _hide_hidden_tests_class():
    from nbgrader.preprocessors import NbGraderPreprocessor

    class HideHiddenTests(NbGraderPreprocessor):
        """Keep hidden tests out of feedback, except their messages.

        Runs before ClearHiddenTests, while the hidden regions are still in
        the autograded test cells. In the tracebacks of test cells it drops
        the frames that point into test or setup cells (they would quote
        their code) and keeps the error message and the frames in the
        student's own code. Any output, in any cell, that quotes a line of
        a hidden test is replaced by a note.
        """

        def preprocess(self, nb, resources):
            self.hidden = set()
            public = set()
            self.locked_counts = set()
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "code" and (
                        meta.get("locked") or meta.get("grade")
                        and not meta.get("solution")):
                    if cell.get("execution_count") is not None:
                        self.locked_counts.add(cell.execution_count)
                inside = False
                for line in cell.source.splitlines():
                    if "BEGIN HIDDEN TESTS" in line:
                        inside = True
                    elif "END HIDDEN TESTS" in line:
                        inside = False
                    elif inside:
                        self.hidden.add(line.strip())
                    else:
                        public.add(line.strip())
            self.hidden = {line for line in self.hidden
                           if len(line) >= 12 and line not in public}
            return super().preprocess(nb, resources)

        def _frames(self, traceback):
            kept = []
            for frame in traceback:
                plain = ANSI.sub("", frame)
                counts = {int(n) for n in re.findall(r"In\s*\[(\d+)\]", plain)}
                if counts & self.locked_counts:
                    continue
                kept.append(frame)
            return kept

        def _quotes_hidden(self, output):
            parts = [output.get("text", ""), output.get("evalue", "")]
            parts += output.get("traceback", [])
            for value in output.get("data", {}).values():
                parts.append(value if isinstance(value, str) else str(value))
            text = ANSI.sub("", "\n".join(str(p) for p in parts))
            return any(line in text for line in self.hidden)

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code":
                return cell, resources
            meta = cell.metadata.get("nbgrader", {})
            test = meta.get("grade") and not meta.get("solution")
            outputs = []
            for output in cell.get("outputs", []):
                if test and output.get("output_type") == "error":
                    output["traceback"] = self._frames(output["traceback"])
                if self.hidden and self._quotes_hidden(output):
                    output = {"output_type": "stream", "name": "stdout",
                              "text": "[output removed from the feedback: "
                                      "it quoted a hidden test]\n"}
                outputs.append(output)
            cell.outputs = outputs
            return cell, resources

    return HideHiddenTests

