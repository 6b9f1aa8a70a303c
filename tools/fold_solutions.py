"""Exercise solutions folded in JupyterLab, as the HTML book folds them.

The book's solutions are sphinx-exercise's gated blocks: a markdown cell
opens one with ``{solution-start}``, the code and markdown cells after it
belong to it, and a later cell closes it with ``{solution-end}``. The HTML
book shows each as a closed dropdown. In JupyterLab, jupyterlab-myst
renders each markdown cell on its own: it folds what follows
``{solution-start}`` in the same cell into a closed "Start of Solution to
Exercise N" box, but it cannot reach the cells after it, which sat in
plain view (issue 25 item 2).

So every cell wholly inside a solution (opened by an earlier cell, and
ending with the solution or inside it) is stored folded, with the metadata
JupyterLab itself writes when one hides a cell's input and output:
``jupyter.source_hidden`` (and for a code cell ``jupyter.outputs_hidden``
and ``collapsed``). JupyterLab shows such a cell as a bar with its first
line and "..."; a click opens it. A folded markdown cell starts with an
empty line, so that its bar shows no raw MyST and no answer. Jupyter Book,
nbval and the Chinese edition (``tools/i18n.py`` copies cell metadata and
keeps blank lines) ignore or keep all of it.

    python tools/fold_solutions.py chapters/*.ipynb          # fold
    python tools/fold_solutions.py --check chapters/*.ipynb  # exit 1 if not
"""

import argparse
import json
import re
import sys
from pathlib import Path

#: a gated directive's opening line, ```{solution-start} or ```{solution-end}
GATE = re.compile(r"^(`{3,}|:{3,})\{solution-(start|end)\}", re.M)


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _fence_close(text: str, start: int) -> int:
    """Index just after the fence that a gate directive opening at
    ``start`` ends with (the directive has no body)."""
    fence = re.match(r"`{3,}|:{3,}", text[start:]).group(0)
    end = text.find("\n" + fence, start)
    if end < 0:
        return len(text)
    return end + 1 + len(fence)


def solution_cells(nb) -> tuple[list[int], list[int]]:
    """``(folded, leaking)``: indexes of the cells wholly inside a solution,
    and of markdown cells that end a solution opened earlier with some of
    its text and then go on with other content (an exercise, a section):
    these cannot be folded without hiding that content, so the end of the
    solution shows. A cell that only closes a solution and goes on is
    neither."""
    folded, leaking = [], []
    inside = False
    for index, cell in enumerate(nb["cells"]):
        text = _source(cell)
        if cell["cell_type"] != "markdown":
            if inside:
                folded.append(index)
            continue
        was_inside = inside
        gates = list(GATE.finditer(text))
        for match in gates:
            inside = match.group(2) == "start"
        if not was_inside:
            continue
        first = gates[0] if gates else None
        if first is None:
            folded.append(index)            # a markdown cell of the solution
        elif first.group(2) == "end" and len(gates) == 1 and not text[
                _fence_close(text, first.start()):].strip():
            folded.append(index)            # its last cell
        elif text[:first.start()].strip():
            leaking.append(index)
    return folded, leaking


def fold_cell(cell) -> bool:
    """Store ``cell`` folded; True if that changed it."""
    before = json.dumps(cell, sort_keys=True)
    meta = cell.setdefault("metadata", {})
    jupyter = dict(meta.get("jupyter", {}))
    jupyter["source_hidden"] = True
    if cell["cell_type"] == "code":
        jupyter["outputs_hidden"] = True
        meta["collapsed"] = True
    meta["jupyter"] = jupyter
    if cell["cell_type"] == "markdown":
        text = _source(cell)
        if not text.startswith("\n"):
            text = "\n" + text
            cell["source"] = (text.splitlines(keepends=True)
                              if isinstance(cell["source"], list) else text)
    return json.dumps(cell, sort_keys=True) != before


def is_folded(cell) -> bool:
    meta = cell.get("metadata", {})
    jupyter = meta.get("jupyter", {})
    if not jupyter.get("source_hidden"):
        return False
    if cell["cell_type"] == "code":
        return bool(jupyter.get("outputs_hidden") and meta.get("collapsed"))
    return _source(cell).startswith("\n")


def unfolded(nb) -> list[int]:
    """Indexes of cells inside a solution that are not stored folded, and
    of cells outside any solution that are."""
    folded, _ = solution_cells(nb)
    wrong = [i for i in folded if not is_folded(nb["cells"][i])]
    wrong += [i for i, cell in enumerate(nb["cells"])
              if i not in folded
              and cell.get("metadata", {}).get("jupyter", {}).get(
                  "source_hidden")]
    return sorted(wrong)


def fold(nb) -> bool:
    """Fold every cell inside a solution of ``nb``; True if one changed."""
    folded, _ = solution_cells(nb)
    changed = False
    for index in folded:
        changed |= fold_cell(nb["cells"][index])
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only report notebooks not folded (exit 1)")
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    status = 0
    for path in args.notebooks:
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        if args.check:
            wrong = unfolded(nb)
            if wrong:
                print(f"{path}: cells {wrong} not folded as their solution",
                      file=sys.stderr)
                status = 1
            continue
        if fold(nb):
            # the layout nbformat and JupyterLab write: one-space indent
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False)
                            + "\n", encoding="utf-8")
            print(f"folded the solutions of {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
