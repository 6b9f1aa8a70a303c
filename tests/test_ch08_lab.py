"""Tests for posenc_plots.ch08_lab (chapter 8, train short, test long).

The figures must draw the committed results: every line is compared with
means and sample standard deviations computed here, independently, from
the individual runs of ``results/ch08/full/results.json`` (read with
``json`` and ``statistics``, not with the module's helpers), and with the
JSON's own ``summary``. Press et al.'s Table 2, as transcribed in the
module, is checked for the facts the paper prints in bold (each method's
best score) and for its shape.
"""

import json
import math
import statistics
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_plots import ch08_lab as lab

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "ch08" / "full" / "results.json"


@pytest.fixture(scope="module")
def results():
    with open(RESULTS, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _runs(results, task, method):
    return sorted((r for r in results["runs"]
                   if r["task"] == task and r["method"] == method),
                  key=lambda r: r["seed"])


def _mean_std(values):
    return statistics.fmean(values), statistics.stdev(values)


def _errorbars(ax):
    """gid -> (x, y, half-length of each error bar) of every errorbar."""
    found = {}
    for container in ax.containers:
        line, _, (bars,) = container.lines
        half = [abs(seg[1][1] - seg[0][1]) / 2 for seg in bars.get_segments()]
        found[line.get_gid()] = (np.asarray(line.get_xdata(), float),
                                 np.asarray(line.get_ydata(), float),
                                 np.array(half))
    return found


def _lines(ax):
    return {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}


# ------------------------------------------------------------ reading


def test_load_results_finds_the_committed_file_from_anywhere(results,
                                                             monkeypatch,
                                                             tmp_path):
    monkeypatch.chdir(tmp_path)  # the notebook runs in chapters/
    assert lab.RESULTS_PATH == RESULTS
    assert lab.load_results() == results
    other = tmp_path / "r.json"
    other.write_text(json.dumps({"x": 1}))
    assert lab.load_results(other) == {"x": 1}


def test_the_committed_results_are_the_full_experiment(results):
    assert results["config"]["methods"] == list(lab.METHODS)
    assert len(results["config"]["seeds"]) == 3
    for method in lab.METHODS:
        assert len(_runs(results, "lm", method)) == 3
        assert len(_runs(results, "copy", method)) == 3


def test_mean_std_is_the_sample_standard_deviation():
    mean, std = lab.mean_std([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(mean, [2.0, 4.0])
    np.testing.assert_allclose(std, [math.sqrt(2), math.sqrt(8)])
    mean, std = lab.mean_std([[5.0, 7.0]])
    np.testing.assert_allclose(std, [0.0, 0.0])


def test_lm_losses_are_the_runs_in_seed_order(results):
    for method in lab.METHODS:
        lengths, losses = lab.lm_losses(results, method)
        assert lengths.tolist() == [64, 128, 256, 512, 1024]
        for row, run in zip(losses, _runs(results, "lm", method), strict=True):
            assert row.tolist() == [run["eval"][str(n)]["loss"]
                                    for n in lengths]


def test_the_summary_agrees_with_the_runs(results):
    for method in lab.METHODS:
        lengths, losses = lab.lm_losses(results, method)
        for j, n in enumerate(lengths):
            stored = results["summary"]["lm"][method][str(n)]["loss"]
            mean, std = _mean_std(losses[:, j].tolist())
            assert abs(stored["mean"] - mean) < 1e-5
            assert abs(stored["std"] - std) < 1e-5


@pytest.mark.parametrize("bad, call", [
    ("method", lambda r: lab.lm_runs(r, "cope")),
    ("method", lambda r: lab.lm_losses(r, "RoPE")),
    ("variant", lambda r: lab.stretch_losses(r, "dynamic")),
    ("method", lambda r: lab.copy_scores(r, "nope")),
    ("metric", lambda r: lab.copy_scores(r, "alibi", "accuracy")),
])
def test_bad_names_raise_value_error_naming_the_argument(results, bad, call):
    with pytest.raises(ValueError, match=bad):
        call(results)


def test_binned_by_position_averages_blocks():
    per = np.arange(12.0).reshape(2, 6)
    starts, binned = lab.binned_by_position(per, 3)
    assert starts.tolist() == [0, 3]
    np.testing.assert_allclose(binned, [[1, 4], [7, 10]])
    for bad in (4, 0, 2.0):
        with pytest.raises(ValueError, match="bin_width"):
            lab.binned_by_position(per, bad)


def test_range_losses_average_the_positions_of_each_range(results):
    edges = [0, 64, 128, 1024]
    got = lab.range_losses(results, "alibi", edges)
    for row, run in zip(got, _runs(results, "lm", "alibi"), strict=True):
        per = run["loss_by_position"]
        expected = [statistics.fmean(per[a:b])
                    for a, b in zip(edges[:-1], edges[1:], strict=True)]
        np.testing.assert_allclose(row, expected, rtol=1e-12)
    got = lab.range_losses(results, "rope", edges, "ntk")
    per = _runs(results, "lm", "rope")[1]["stretch"]["ntk_by_position"]
    assert got[1, 0] == pytest.approx(statistics.fmean(per[:64]))


def test_markdown_table():
    text = lab.markdown_table(["a", "b"], [["x", "1"], ["y", "2"]])
    assert text.splitlines() == ["| a | b |", "|---|---:|", "| x | 1 |",
                                 "| y | 2 |"]


# ------------------------------------------------------------ figures


def test_loss_by_length_draws_mean_and_std_of_every_method(results):
    ax = lab.plot_loss_by_length(results).axes[0]
    drawn = _errorbars(ax)
    assert set(drawn) == set(lab.METHODS)
    for method in lab.METHODS:
        x, y, err = drawn[method]
        runs = _runs(results, "lm", method)
        assert x.tolist() == [64, 128, 256, 512, 1024]
        for j, n in enumerate(x):
            mean, std = _mean_std([r["eval"][str(int(n))]["loss"]
                                   for r in runs])
            assert y[j] == pytest.approx(mean, rel=1e-12)
            assert err[j] == pytest.approx(std, rel=1e-9)
            stored = results["summary"]["lm"][method][str(int(n))]["loss"]
            assert y[j] == pytest.approx(stored["mean"], abs=1e-5)
    assert _lines(ax).keys() >= set(lab.METHODS)
    assert 64 in [line.get_xdata()[0] for line in ax.get_lines()
                  if line.get_gid() is None]  # the line at L


def test_press_comparison_left_is_table_2_right_is_the_runs(results):
    left, right = lab.plot_press_comparison(results).axes
    table = lab.PRESS2022_TABLE2
    for method in ("sinusoidal", "rope", "t5", "alibi"):
        line = _lines(left)[method]
        x, y = line.get_xdata(), line.get_ydata()
        np.testing.assert_allclose(x, np.array(table["inputs"]) / 512)
        for yi, ppl in zip(y, table[method], strict=True):
            if ppl is None:
                assert np.isnan(yi)
            else:
                assert yi == pytest.approx(math.log(ppl / table[method][0]))
        line = _lines(right)[method]
        assert line.get_xdata().tolist() == [1, 2, 4, 8, 16]
        means = [statistics.fmean(r["eval"][str(n)]["loss"]
                                  for r in _runs(results, "lm", method))
                 for n in (64, 128, 256, 512, 1024)]
        np.testing.assert_allclose(line.get_ydata(),
                                   np.array(means) - means[0], atol=1e-12)


def test_press_table_2_as_transcribed():
    table = lab.PRESS2022_TABLE2
    n = len(table["inputs"])
    assert n == 35 and table["inputs"][0] == table["L"] == 512
    assert list(table["inputs"]) == sorted(table["inputs"])
    for method in ("sinusoidal", "rope", "t5", "alibi"):
        assert len(table[method]) == n
    # the scores the paper prints in bold: each model's best
    best = {m: min(v for v in table[m] if v is not None)
            for m in ("sinusoidal", "rope", "t5", "alibi")}
    assert best == {"sinusoidal": 19.91, "rope": 19.79, "t5": 18.77,
                    "alibi": 18.31}
    where = {m: [x for x, v in zip(table["inputs"], table[m], strict=True)
                 if v == best[m]] for m in best}
    assert where == {"sinusoidal": [532, 542, 552, 562], "rope": [712],
                     "t5": [1112], "alibi": [12512, 13512, 14512, 15512]}
    # the numbers the book quotes elsewhere (chapters 5b and 7)
    assert table["alibi"][0] == 19.73
    assert table["alibi"][table["inputs"].index(3512)] == 18.40
    assert table["t5"][-3:] == (None, None, None)  # out of memory
    # the rows chapter 8 compares with, as printed in the paper (p. 16)
    rows = {n: tuple(table[m][table["inputs"].index(n)]
                     for m in ("sinusoidal", "rope", "t5", "alibi"))
            for n in (512, 1012, 2512, 4512, 8512)}
    assert rows == {512: (20.05, 20.07, 19.65, 19.73),
                    1012: (43.54, 21.37, 18.79, 18.73),
                    2512: (132.41, 31.58, 20.41, 18.41),
                    4512: (209.37, 39.15, 25.91, 18.41),
                    8512: (305.65, 54.98, 43.08, 18.34)}


def test_loss_by_position_bins_every_method(results):
    fig = lab.plot_loss_by_position(results, bin_width=16)
    lines = {**_lines(fig.axes[0]), **_lines(fig.axes[1])}
    assert set(lines) == set(lab.METHODS)
    for method in lab.METHODS:
        per = np.array([r["loss_by_position"]
                        for r in _runs(results, "lm", method)])
        expected = per.reshape(3, 64, 16).mean(-1).mean(0)
        assert lines[method].get_xdata().tolist() == list(range(0, 1024, 16))
        np.testing.assert_allclose(lines[method].get_ydata(), expected,
                                   rtol=1e-12)
    for ax in fig.axes:  # one scale, nothing cut off
        low, high = ax.get_ylim()
        for line in lines.values():
            assert low < line.get_ydata().min() and line.get_ydata().max() < high
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()


def test_rope_stretch_draws_every_variant(results):
    left, right = lab.plot_rope_stretch(results).axes
    drawn = {**_errorbars(left), **{"right-" + k: v
                                    for k, v in _errorbars(right).items()}}
    assert set(drawn) == {"rope", "pi", "ntk", "yarn", "right-rope",
                          "right-pi_finetune", "right-finetune"}
    runs = _runs(results, "lm", "rope")
    for variant in ("pi", "ntk", "yarn", "pi_finetune", "finetune"):
        x, y, err = drawn.get(variant) or drawn["right-" + variant]
        expected_x = [128, 256, 512, 1024] if variant in ("pi", "ntk", "yarn") \
            else [64, 128, 256, 512, 1024]
        assert x.tolist() == expected_x
        for j, n in enumerate(expected_x):
            mean, std = _mean_std([r["stretch"][variant][str(n)]["loss"]
                                   for r in runs])
            assert y[j] == pytest.approx(mean, rel=1e-12)
            assert err[j] == pytest.approx(std, rel=1e-9)
            stored = results["summary"]["rope_stretch"][variant][str(n)]
            assert y[j] == pytest.approx(stored["loss"]["mean"], abs=1e-5)
    np.testing.assert_allclose(drawn["rope"][1], drawn["right-rope"][1])
    assert 256 in [line.get_xdata()[0] for line in right.get_lines()
                   if line.get_gid() is None]  # the line at L'


def test_copy_draws_both_scores(results):
    fig = lab.plot_copy(results)
    for ax, metric in zip(fig.axes, ("exact_match", "symbol_accuracy"),
                          strict=True):
        drawn = _errorbars(ax)
        assert set(drawn) == set(lab.METHODS)
        for method in lab.METHODS:
            x, y, err = drawn[method]
            assert np.round(x / 8).tolist() == [1, 2, 3, 4]  # 8..32, offset
            assert np.abs(x - np.round(x / 8) * 8).max() < 1
            runs = _runs(results, "copy", method)
            for j, c in enumerate((8, 16, 24, 32)):
                mean, std = _mean_std([r["eval"][str(c)][metric]
                                       for r in runs])
                assert y[j] == pytest.approx(mean, abs=1e-12)
                assert err[j] == pytest.approx(std, abs=1e-9)


def _fake_run(method="rope", n=64):
    rng = np.random.default_rng(0)
    run = {"task": "lm", "method": method, "seed": 0,
           "train_loss": [[0, 4.0], [25, 3.0], [49, 2.5]],
           "eval": {"16": {"loss": 2.0}, "32": {"loss": 2.25}},
           "loss_by_position": rng.uniform(1, 3, n).round(4).tolist()}
    if method == "rope":
        run["stretch"] = {kind: {"32": {"loss": value}} for kind, value in
                          (("pi", 3.0), ("ntk", 2.1), ("yarn", 2.2))}
    return run


def test_live_run_figure_draws_the_run():
    run = _fake_run()
    left, right = lab.plot_live_run(run, 16).axes
    train = _lines(left)["train"]
    assert train.get_xdata().tolist() == [0, 25, 49]
    assert train.get_ydata().tolist() == [4.0, 3.0, 2.5]
    position = _lines(right)["position"]
    per = np.array(run["loss_by_position"])
    np.testing.assert_allclose(position.get_ydata(),
                               per.reshape(4, 16).mean(1), rtol=1e-12)
    # a length that 16 does not divide is drawn position by position
    run = _fake_run("alibi", n=40)
    position = _lines(lab.plot_live_run(run, 20).axes[1])["position"]
    np.testing.assert_allclose(position.get_ydata(), run["loss_by_position"])


def test_format_live_run():
    text = lab.format_live_run(_fake_run(), 16).splitlines()
    assert text[0] == ("RoPE, L = 16: training loss 4.000 at step 0, "
                       "2.500 at step 49")
    assert text[2] == "  n =    16 ( 1L): 2.000"
    assert text[3] == ("  n =    32 ( 2L): 2.250   rescaled: PI 3.000, "
                       "NTK 2.100, YaRN 2.200")
    text = lab.format_live_run(_fake_run("t5"), 16)
    assert "rescaled" not in text and text.startswith("T5 bias")
