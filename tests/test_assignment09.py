"""Assignment 9's own claims, checked against their sources.

``tests/test_assignments.py`` releases and grades every assignment (the
instructor version gets full marks, the handout zero). This file checks
what that cannot: the written question's table and model answer quote the
committed experiment of chapter 9 (``results/ch09/full``) and
``posenc_core``'s coordinates, Question 2 cannot be passed by listing the
ids (its prompts are too large to build), and each class variant's
prompt states rules under which its own reference agrees with its own
solution while the public solution disagrees.
"""

import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

import posenc_core as pc
from posenc_lab.vision import load_results

REPO = Path(__file__).resolve().parent.parent
NAME = "09_positions_in_2d_and_3d"
SOURCE = REPO / "assignments" / "source" / NAME / f"{NAME}.ipynb"
sys.path.insert(0, str(REPO / "tools"))

from teaching.sources import instructor_notebook  # noqa: E402

ROWS = {  # the written question's rows -> posenc_lab.vision's methods
    "none": "none",
    "learned table, resized": "learned_resize",
    "axial RoPE, integer coordinates (Question 3)": "rope_axial",
    "RoPE on normalised coordinates (DINOv3)": "rope_dinov3",
    "the same, trained with random rescaling of the coordinates (by up to 2)":
        "rope_dinov3_rescale",
}


def _cells(nb=None):
    nb = nb or json.loads(SOURCE.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list)
            else c["source"] for c in nb["cells"]], nb


def _namespace(nb, upto):
    """Run the code cells of ``nb`` before the one whose source has
    ``upto``; return the namespace."""
    sources, nb = _cells(nb)
    space = {}
    for cell, src in zip(nb["cells"], sources, strict=True):
        if upto in src:
            break
        if cell["cell_type"] == "code":
            exec(compile(src, NAME, "exec"), space)
    return space


def test_the_table_quotes_the_committed_experiment():
    summary = load_results("full")["summary"]
    config = load_results("full")["config"]
    assert config["image_size"] == 12 and config["patch_size"] == 2
    assert config["eval_examples"] == 200 and len(config["seeds"]) == 3
    assert config["dinov3_rescale"] == 2.0
    text = "\n".join(_cells()[0])
    found = 0
    for label, method in ROWS.items():
        row = re.search(rf"^\| {re.escape(label)} \| ([\d.]+) \| ([\d.]+) \| "
                        rf"([\d.]+) \|$", text, flags=re.M)
        assert row, label
        quoted = [float(v) for v in row.groups()]
        measured = [summary["zoom"][method]["12"]["accuracy"]["mean"],
                    summary["zoom"][method]["36"]["accuracy"]["mean"],
                    summary["canvas"][method]["36"]["accuracy"]["mean"]]
        # as the chapter and results/ch09/README.md round: 0.695 -> 0.70
        rounded = [float(Decimal(str(m)).quantize(Decimal("0.01"),
                                                  ROUND_HALF_UP))
                   for m in measured]
        assert quoted == rounded, (label, measured)
        found += 1
    assert found == len(ROWS)


def test_the_model_answers_coordinates():
    # integer coordinates: the middle of 6 x 6 and 18 x 18 grids
    for n, middle in ((6, 2.5), (18, 8.5)):
        coords = np.indices((n, n)).reshape(2, -1).T
        assert coords.mean(axis=0).tolist() == [middle, middle]
    # normalised: the middle is 0 at both sizes, centres 1/3 and 1/9 apart
    for n, gap in ((6, 1 / 3), (18, 1 / 9)):
        c = pc.normalized_patch_coordinates(n, n)
        assert np.allclose(c.mean(axis=0), 0.0)
        assert np.allclose(np.diff(np.unique(c[:, 1])), gap)
    answer = next(s for s in _cells()[0] if s.startswith("**Model answer.**"))
    for piece in ("(2.5, 2.5)", "(8.5, 8.5)", "(0, 0)", "1/3", "1/9",
                  "324 patches", "up to 17", "0.56 and 0.51",
                  "0.16 against 0.12", "(0.23)"):
        assert piece in answer, piece


def test_listing_the_ids_cannot_pass_question_2():
    space = _namespace(None, "# Tests for next_position")

    def listing(segments, spatial_merge_size=2):
        return int(space["mrope_ids"](segments, spatial_merge_size).max()) + 1

    assert listing([3, ("video", (3, 4, 4)), 1]) == space["next_position"](
        [3, ("video", (3, 4, 4)), 1])
    space["next_position"] = listing
    tests = next(s for s in _cells()[0]
                 if s.startswith("# Tests for next_position"))
    with pytest.raises(MemoryError):
        exec(compile(tests, NAME, "exec"), space)


@pytest.mark.parametrize("seed", (11, 20261201, 104))
def test_each_variant_differs_from_the_public_rules(seed):
    public = _namespace(None, "# Tests for axial_angles")
    variant = instructor_notebook(NAME, SOURCE, seed)
    own = _namespace(variant, "# Tests for axial_angles")
    prompt = [1, ("video", (5, 4, 4)), 2, ("image", (1, 4, 6)), 1]
    assert np.array_equal(own["mrope_ids"](prompt),
                          own["reference_ids"](prompt))
    assert not np.array_equal(public["mrope_ids"](prompt),
                              own["reference_ids"](prompt))
    coords = np.array([[1.0, 2.0]])
    assert np.allclose(own["axial_angles"](coords, 8),
                       own["reference_axial"](coords, 8))
    assert not np.allclose(public["axial_angles"](coords, 8),
                           own["reference_axial"](coords, 8))
