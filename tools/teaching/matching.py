"""Find the students' notebooks in a messy submissions folder.

``find_submissions(folder, assignment_names, identify=None)`` walks
``folder`` and returns ``(matched, unmatched)``:

* ``matched``: ``Submission(student_id, assignment, path, note)``, one per
  student and assignment, sorted; ``note`` is empty when the file sits where
  the tool expects it (``STUDENT/NAME.ipynb`` or nbgrader's
  ``STUDENT/NAME/NAME.ipynb``) and otherwise says how it was matched, for the
  CSV reason (``file 'Assignment 1.ipynb' taken as 01_why_order (number
  1)``).
* ``unmatched``: ``Unmatched(path, reason)``: every other ``.ipynb`` file
  (and every ``.zip``), so that nothing a student handed in is ignored
  silently.

Layout. Each folder directly inside ``folder`` is one student; a notebook
may sit at any depth inside it (``alice/hw3/x.ipynb``,
``alice/submission/x/x.ipynb``). A notebook directly in ``folder`` belongs to
no student and is listed unmatched. Jupyter's autosave copies in
``.ipynb_checkpoints`` folders are skipped, except when such a copy is all
there is of a student's assignment: then it is listed (the student probably
handed in the wrong folder). A symbolic link (a zip can hold one) is never
graded, only listed: it could point at the instructor's notebook.

Student id. A folder name that is already a valid id (a letter or digit,
then letters, digits, ``_ . @ -``) is kept exactly, so ids from the
teacher's roster still match ``marks.csv``. Any other name (``Frank Smith``,
``O'Brien, Pat``) is lowercased and every run of other characters becomes
``_``: ``frank_smith``. Why: the id becomes a folder name and an nbgrader
glob, so no spaces or quotes; lowercase is what JupyterHub does to user
names, so the same student gets the same id in an nbgrader course on a
hub. The note says ``student folder 'Frank Smith' -> id frank_smith``. Two
folders that give the same id are not guessed apart: their notebooks are
listed unmatched.

Assignment. In this order:

1. The file name, without the browser's duplicate suffix (``x (1).ipynb``)
   or Jupyter's ``-Copy1``: the exact name of an assignment
   (case-insensitive); else its number (``Assignment 1``, ``hw3``, ``05_...``;
   a number after ``v``, ``version``, ``part``, ``copy`` ... is not an
   assignment number) and its name words (``Relative_Position``; words
   every file may hold, ``GENERIC_WORDS`` such as "position", "encoding",
   "assignment", count for nothing); when
   number and words disagree, or several assignments fit, the name decides
   nothing.
2. The same for the folders between the student folder and the file,
   nearest first (``hw3/x.ipynb``).
3. The notebook's content, when ``identify`` is given: a mapping
   ``{assignment: released notebook path}`` (its nbgrader cell ids and its
   title identify the assignment, see ``content_identifier``) or any
   callable ``identify(path) -> assignment name or None``. When the content
   clearly names an assignment, it wins over the name (nbgrader grades by
   cell id, so a notebook of assignment 2 named ``hw3`` is assignment 2),
   with a note.

An ambiguous file is listed unmatched, never guessed.

Two files for one student and assignment: the NEWEST (modification time;
ties broken by path order) is graded, its note names the others, and each
other file is listed unmatched with the reason "older than ...". Grading
the newest keeps an unattended run of 300 students going; listing the others
lets the teacher check the choice.
"""

import json
import re
from pathlib import Path
from typing import NamedTuple

STUDENT_ID = re.compile(r"[^\W_][\w.@-]*\Z")
CHECKPOINTS = ".ipynb_checkpoints"
_DUPLICATE = re.compile(r"(?:\s*\(\d+\)|\s*-\s*copy\d*)+\Z", re.I)
_TOKEN = re.compile(r"[^\W\d_]+|\d+")
# A number right after one of these words is not an assignment number.
# Words every assignment of this course shares, or that any file name may
# hold: they say nothing about which assignment a file is.
GENERIC_WORDS = {"assignment", "homework", "hw", "lab", "notebook", "exercise",
                 "submission", "position", "positional", "positions",
                 "encoding", "encodings", "copy", "final", "the", "of", "and"}
_NOT_NUMBER = {"v", "ver", "version", "part", "pt", "copy", "try", "attempt",
               "draft", "rev", "revision", "final"}


class Submission(NamedTuple):
    student_id: str
    assignment: str
    path: Path
    note: str


class Unmatched(NamedTuple):
    path: Path
    reason: str
    assignment: str = ""  # the assignment it was taken for, if any


def student_id(folder_name):
    """(id, note) for a student folder name; id "" when it gives none."""
    if STUDENT_ID.match(folder_name):
        return folder_name, ""
    normal = re.sub(r"[\W_]+", "_", folder_name.lower()).strip("_")
    if not normal:
        return "", ""
    return normal, f"student folder {folder_name!r} -> id {normal}"


def _number(name):
    match = re.match(r"\d+", name)
    return int(match.group(0)) if match else None


def _words(name):
    return [t for t in _TOKEN.findall(name.lower())
            if not t.isdigit() and t not in GENERIC_WORDS]


def _strip_duplicate(stem):
    stripped = _DUPLICATE.sub("", stem)
    return (stripped, stem[len(stripped):].strip()) if stripped else (stem, "")


def _name_candidates(text, names):
    """(assignments the text ``text`` fits, how): exact, number, words."""
    lowered = {n.lower(): n for n in names}
    if text.lower() in lowered:
        return [lowered[text.lower()]], "name"
    tokens = _TOKEN.findall(text.lower())
    numbers = set()
    for index, token in enumerate(tokens):
        before = tokens[index - 1] if index else ""
        if token.isdigit() and before not in _NOT_NUMBER:
            numbers.add(int(token))
    by_number = [n for n in names if _number(n) in numbers]
    present = set(t for t in tokens
                  if not t.isdigit() and t not in GENERIC_WORDS)
    by_words = []  # several: ambiguous
    for name in names:
        words = _words(name)
        if not words:
            continue
        found = [w for w in words if w in present or (
            len(w) >= 4 and any(t.startswith(w) or (len(t) >= 4
                                and w.startswith(t)) for t in present))]
        enough = 2 * len(found) >= len(words) and (
            len(found) == len(words) or sum(map(len, found)) >= 6)
        if enough:
            by_words.append(name)
    if by_number and by_words:
        both = [n for n in by_number if n in by_words]
        return (both, "number and words") if both else (
            sorted(set(by_number) | set(by_words)), "conflict")
    if by_number:
        return by_number, "number"
    return by_words, "words"


def _fingerprint(nb):
    """(title, set of nbgrader grade ids other than "setup") of a notebook."""
    title, ids = "", set()
    for cell in nb.get("cells", []):
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        if not title and cell.get("cell_type") == "markdown":
            first = src.strip().splitlines()
            if first and first[0].startswith("# "):
                title = first[0][2:].strip()
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and meta.get("grade_id") not in (None,
                                                                  "setup"):
            ids.add(str(meta["grade_id"]))
    return title, ids


def _read(path):
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return nb if isinstance(nb, dict) else None


def content_identifier(released):
    """A callable ``identify(path)`` from ``{assignment: released path}``.

    A notebook is assignment A when it holds at least half of A's nbgrader
    cell ids (all but "setup") or carries A's title (its first ``# ``
    heading), and A scores strictly best (fraction of ids, plus one for the
    title). Returns None for an unreadable notebook or no clear winner.
    """
    if not isinstance(released, dict):
        raise ValueError("released must be a mapping {assignment: path of "
                         f"the released notebook}}, not {type(released)}")
    prints = {}
    for name, path in released.items():
        nb = _read(path)
        if nb is None:
            raise ValueError(f"released[{name!r}]: {path} is not a readable "
                             "notebook")
        prints[name] = _fingerprint(nb)

    def identify(path):
        nb = _read(path)
        if nb is None:
            return None
        title, ids = _fingerprint(nb)
        scores = []
        for name, (their_title, their_ids) in prints.items():
            share = len(ids & their_ids) / len(their_ids) if their_ids else 0
            same_title = bool(title) and title == their_title
            if share >= 0.5 or same_title:
                scores.append((share + same_title, name))
        scores.sort(reverse=True)
        if scores and (len(scores) == 1 or scores[0][0] > scores[1][0]):
            return scores[0][1]
        return None

    return identify


def _mtime(path):
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _notebooks(root):
    """The .ipynb and .zip files under ``root``, and its symbolic links to
    folders (which ``rglob`` does not follow), sorted."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() and path.is_dir():
            found.append(path)
        elif path.is_file() and path.suffix.lower() in (".ipynb", ".zip"):
            found.append(path)
    return found


def find_submissions(folder, assignment_names, identify=None):
    """(matched, unmatched) for the submissions folder ``folder``.

    ``assignment_names``: the assignments being graded (``NN_x``).
    ``identify``: None, a mapping ``{assignment: released notebook path}``,
    or a callable ``identify(path) -> assignment or None`` (see the module
    docstring).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder must be a directory of student folders: "
                         f"{folder}")
    names = list(assignment_names)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("assignment_names must be a non-empty list of "
                         f"assignment names, not {assignment_names!r}")
    if isinstance(identify, dict):
        identify = content_identifier(identify)
    elif identify is not None and not callable(identify):
        raise ValueError("identify must be None, a mapping {assignment: "
                         "released notebook} or a callable(path)")

    unmatched = []
    ids = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            sid, note = student_id(entry.name)
            ids.setdefault(sid, []).append((entry, note))
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        if path.suffix.lower() in (".ipynb", ".zip"):
            unmatched.append(Unmatched(path, "not inside a student folder "
                                       "(SUBMISSIONS/STUDENT/NAME.ipynb)"))

    candidates = {}  # (student, assignment) -> [(path, note, checkpoint)]
    for sid, entries in sorted(ids.items()):
        for entry, id_note in entries:
            files = _notebooks(entry)
            problem = None
            if entry.name.startswith("."):
                problem = f"inside the hidden folder {entry.name!r}"
            elif entry.is_symlink():
                problem = (f"the student folder {entry.name!r} is a "
                           "symbolic link: not followed")
            elif entry.name == "__MACOSX":
                problem = "macOS zip metadata (__MACOSX), not a notebook"
            elif not sid:
                problem = (f"the folder name {entry.name!r} gives no "
                           "student id")
            elif len(entries) > 1:
                others = ", ".join(repr(e.name) for e, _ in entries
                                   if e != entry)
                problem = (f"student folders {entry.name!r} and {others} "
                           f"both give the id {sid}: rename one")
            for path in files:
                if problem:
                    unmatched.append(Unmatched(path, problem))
                    continue
                if path.is_dir():
                    unmatched.append(Unmatched(path, (
                        "a symbolic link to a folder: not followed, nothing "
                        "in it is graded")))
                    continue
                if path.suffix.lower() == ".zip":
                    unmatched.append(Unmatched(path, "a zip archive: unzip "
                                               "it in the student's folder"))
                    continue
                parts = path.relative_to(entry).parts
                if any((entry / Path(*parts[:i + 1])).is_symlink()
                       for i in range(len(parts))):
                    unmatched.append(Unmatched(path, (
                        "a symbolic link, not a file the student handed in: "
                        "not graded (it could point at the solutions)")))
                    continue
                checkpoint = CHECKPOINTS in parts
                if path.name.startswith("._"):
                    unmatched.append(Unmatched(
                        path, "macOS resource fork (._ file), not a notebook"))
                    continue
                name, note = _match(path, parts, names, identify)
                if name is None:
                    if not checkpoint:
                        unmatched.append(Unmatched(path, note))
                    continue
                notes = [n for n in (id_note, note) if n]
                candidates.setdefault((sid, name), []).append(
                    (path, "; ".join(notes), checkpoint))

    matched = []
    for (sid, name), found in sorted(candidates.items()):
        real = [f for f in found if not f[2]]
        if not real:
            for path, _note, _ in found:
                unmatched.append(Unmatched(path, (
                    f"only a Jupyter autosave copy ({CHECKPOINTS}) of {name} "
                    f"for {sid}; the notebook itself is missing"), name))
            continue
        real.sort(key=lambda f: (-_mtime(f[0]), str(f[0])))
        path, note, _ = real[0]
        if len(real) > 1:
            older = ", ".join(_rel(f[0], folder) for f in real[1:])
            note = "; ".join(n for n in (note, (
                f"newest of {len(real)} files for {name}, not graded: "
                f"{older}")) if n)
            for other, _n, _c in real[1:]:
                unmatched.append(Unmatched(other, (
                    f"{sid} handed in several files for {name}: older than "
                    f"{_rel(path, folder)}, which is graded"), name))
        matched.append(Submission(sid, name, path, note))
    unmatched.sort(key=lambda u: str(u.path))
    return matched, unmatched


def _rel(path, folder):
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def _match(path, parts, names, identify):
    """(assignment or None, note or reason) for one notebook file."""
    stem, suffix = _strip_duplicate(path.name[:-len(".ipynb")])
    by_name, where, ambiguous = [], "", []
    found, how = _name_candidates(stem, names)
    if len(found) == 1:
        by_name, where = found, f"file {path.name!r}"
    else:
        tried = [(found, how, f"file {path.name!r}")]
        for part in reversed(parts[:-1]):
            if part == CHECKPOINTS:
                continue
            got, got_how = _name_candidates(_strip_duplicate(part)[0], names)
            tried.append((got, got_how, f"folder {part!r}"))
            if len(got) == 1:
                by_name, how, where = got, got_how, f"folder {part!r}"
                break
        ambiguous = [t for t in tried if len(t[0]) > 1]
    by_content = identify(path) if identify is not None else None
    if by_content is not None and by_content not in names:
        by_content = None
    if by_name and by_content and by_name[0] != by_content:
        return by_content, (f"{where} looks like {by_name[0]}, but its cells "
                            f"are those of {by_content}: graded as "
                            f"{by_content}")
    if by_name:
        name = by_name[0]
        canonical = (stem == name and not suffix and (len(parts) == 1 or (
            len(parts) == 2 and parts[0] == name)))
        if canonical:
            return name, ""
        words = {"name": "its name", "number": "its number",
                 "words": "its name words", "number and words":
                 "its number and name words"}[how]
        extra = f" (duplicate suffix {suffix!r} ignored)" if suffix else ""
        return name, f"{where} taken as {name} by {words}{extra}"
    if by_content:
        return by_content, (f"file {path.name!r} taken as {by_content} by "
                            "its cells (nbgrader ids / title)")
    if ambiguous:
        found, how, where = ambiguous[0]
        why = ("its number and name words point to different assignments"
               if how == "conflict" else "it fits several assignments")
        return None, f"{where}: {why} ({', '.join(found)}); not guessed"
    if identify is None:
        return None, ("no assignment in its name or folders (and the "
                      "released notebooks were not given to match content)")
    return None, ("no assignment in its name or folders, and its cells "
                  "match no released assignment")
