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


# ----------------------------------------------------- the live figure


def _variant_rows(results, variant):
    """(lengths, rows by length, rows by position) of a variant, read from
    the JSON here, not with the module's helpers."""
    method = variant if variant in lab.METHODS else "rope"
    runs = _runs(results, "lm", method)
    L = results["config"]["L"]
    lengths = [L * j for j in results["config"]["eval_multiples"]]
    if variant in lab.METHODS:
        by_length = [[r["eval"][str(n)]["loss"] for n in lengths] for r in runs]
        by_position = [r["loss_by_position"] for r in runs]
    else:
        table = [r["stretch"][variant] for r in runs]
        lengths = [n for n in lengths if str(n) in table[0]]
        by_length = [[t[str(n)]["loss"] for n in lengths] for t in table]
        by_position = [r["stretch"][variant + "_by_position"] for r in runs]
    return lengths, by_length, by_position


@pytest.mark.parametrize("variant,other,width", [(3, 4, 16), (8, 0, 7),
                                                 (10, 10, 1), (6, 9, 64)])
def test_explore_draws_every_seed_its_mean_and_the_other(results, variant,
                                                         other, width):
    name, oname = lab.VARIANTS[variant], lab.VARIANTS[other]
    assert lab.VARIANTS[3] == "rope" and lab.VARIANTS[4] == "alibi"
    left, right = lab.plot_explore(variant=variant, other=other,
                                   bin_width=width, results=results).axes
    lengths, by_length, by_position = _variant_rows(results, name)
    o_lengths, o_by_length, o_by_position = _variant_rows(results, oname)

    def bins(row):
        return [statistics.fmean(row[a:a + width])
                for a in range(0, len(row), width)]

    def mean(rows):
        return [statistics.fmean(col) for col in zip(*rows, strict=True)]

    drawn = {"left": [(ln.get_gid(), ln) for ln in left.lines],
             "right": [(ln.get_gid(), ln) for ln in right.lines[1:]]}
    gids = [f"{name}-seed{k}" for k in range(3)] + [name, f"other-{oname}"]
    for side in drawn:
        assert [g for g, _ in drawn[side]] == gids
    expect_left = [bins(r) for r in by_position] + [
        mean([bins(r) for r in by_position]),
        mean([bins(r) for r in o_by_position])]
    expect_right = by_length + [mean(by_length), mean(o_by_length)]
    starts = list(range(0, len(by_position[0]), width))
    for (_, line), y in zip(drawn["left"], expect_left, strict=True):
        assert line.get_xdata().tolist() == starts
        np.testing.assert_allclose(line.get_ydata(), y, rtol=1e-12)
    for k, ((_, line), y) in enumerate(zip(drawn["right"], expect_right,
                                           strict=True)):
        x = o_lengths if k == 4 else lengths
        assert line.get_xdata().tolist() == x
        np.testing.assert_allclose(line.get_ydata(), y, rtol=1e-12)
    # the training length: shaded on the left, dotted on the right
    L = results["config"]["L"]
    (span,) = left.patches
    assert (span.get_x(), span.get_width()) == (0, L)
    assert list(right.lines[0].get_xdata()) == [L, L]
    assert left.figure.get_suptitle().startswith(f"{variant}: ")


@pytest.mark.parametrize("bad", [
    {"variant": 11}, {"variant": -1}, {"variant": 2.0}, {"other": True},
    {"bin_width": 0}, {"bin_width": 65}, {"bin_width": 1.5}])
def test_explore_refuses_bad_values_naming_them(results, bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        lab.plot_explore(results=results, **bad)


def test_the_page_data_file_is_up_to_date(results):
    """_assets/posenc/data/ch08-results.js is what the results give
    (``python -m posenc_plots.ch08_lab`` writes it)."""
    assert lab.EXPLORE_DATA_PATH.read_text(encoding="utf-8") == (
        lab.explore_data_js(results))


def test_the_page_data_reads_back_as_the_runs(results):
    data = lab.explore_data(results)
    head = data[:6].astype(int).tolist()
    assert head == [1, 64, 1024, 3, 5, len(lab.VARIANTS)]
    lengths = data[6:11].astype(int).tolist()
    assert lengths == [64, 128, 256, 512, 1024]
    block = 3 * 5 + 3 * 1024
    assert data.size == 11 + block * len(lab.VARIANTS)
    for j, variant in enumerate(lab.VARIANTS):
        at = 11 + j * block
        done, by_length, by_position = _variant_rows(results, variant)
        table = data[at:at + 15].reshape(3, 5)
        for k in range(3):
            got = [v for v in table[k] if not np.isnan(v)]
            assert got == by_length[k]  # exactly the JSON's numbers
        assert np.isnan(table[:, 0]).all() == (variant in ("pi", "ntk",
                                                           "yarn"))
        per = data[at + 15:at + block].reshape(3, 1024)
        assert per.tolist() == by_position


# ------------------------------------------------ progress, solutions


def test_format_seconds():
    from posenc_lab.progress import format_seconds

    assert format_seconds(0) == "0:00"
    assert format_seconds(75.9) == "1:15"
    assert format_seconds(3725) == "1:02:05"
    for bad in (-1, float("nan")):
        with pytest.raises(ValueError, match="seconds"):
            format_seconds(bad)


def test_progress_line_outside_ipython(capsys):
    """No kernel: the line goes to stderr, rewritten, and ends idle."""
    from posenc_lab.progress import ProgressLine

    now = [0.0]
    seen = []

    def running(done, total, elapsed, rate, left):
        seen.append((done, total, elapsed, rate, left))
        return f"{done}/{total}"

    with ProgressLine(4, "idle", running, every=1.0,
                      clock=lambda: now[0]) as line:
        for _ in range(4):
            now[0] += 0.6
            line.tick()
    err = capsys.readouterr().err
    assert err == "\ridle\r2/4\r4/4\ridle\n"
    assert seen[0][:3] == (2, 4, 1.2) and seen[0][3] == pytest.approx(2 / 1.2)
    assert seen[-1][0] == 4 and seen[-1][4] == 0
    for bad in ({"total": 0}, {"idle": ""}, {"running": None},
                {"every": -1}):
        args = {"total": 1, "idle": "x", "running": running, **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            ProgressLine(args["total"], args["idle"], args["running"],
                         every=args.get("every", 0.5))


def test_progress_line_in_a_kernel_ends_on_its_first_text(monkeypatch):
    """In a notebook the display is updated in place and put back to the
    idle text, which is all that the stored output keeps."""
    import IPython
    import IPython.display

    from posenc_lab.progress import ProgressLine

    shown = []

    class Handle:
        def update(self, obj, raw):
            shown.append(("update", obj["text/plain"]))

    def display(obj, raw, display_id):
        assert raw and display_id
        shown.append(("display", obj["text/plain"]))
        return Handle()

    class Shell:
        kernel = object()

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    monkeypatch.setattr(IPython.display, "display", display)
    with ProgressLine(2, "idle", lambda d, *a: f"step {d}", every=0) as line:
        line.tick()
        line.tick()
    assert shown == [("display", "idle"), ("update", "step 1"),
                     ("update", "step 2"), ("update", "idle")]


def test_train_one_shows_progress_and_returns_the_run(monkeypatch, capsys):
    from posenc_lab import experiment
    from posenc_lab.experiment import config_from

    calls = []

    def run_one(cfg, task, method, seed, corpus=None, tick=None):
        calls.append((task, method, seed))
        for _ in range(cfg.steps + 2 * cfg.finetune_steps):
            tick(1)
        return {"method": method}

    monkeypatch.setattr(experiment, "run_one", run_one)
    cfg = config_from("quick", steps=5, finetune_steps=2)
    assert lab.train_one(cfg, "rope", 1) == {"method": "rope"}
    assert calls == [("lm", "rope", 1)]
    err = capsys.readouterr().err
    assert err.startswith("\rRoPE, L = 16: 9 training steps")
    assert err.endswith("\rRoPE, L = 16: 9 training steps\n")
    assert "step 9 of 9" in err


class _Kernel:
    def __init__(self, allow_stdin):
        self._allow_stdin = allow_stdin


class _Shell:
    def __init__(self, allow_stdin):
        self.kernel = _Kernel(allow_stdin)
        self.ran, self.magics = [], {}

    def register_magic_function(self, fn, kind, name):
        self.magics[(kind, name)] = fn

    def run_cell(self, cell, store_history):
        self.ran.append(cell)

        class Result:
            success = "fail" not in cell
        return Result()


def test_solutions_run_unattended_and_wait_in_jupyter(capsys):
    unattended, jupyter = _Shell(False), _Shell(True)
    for shell in (unattended, jupyter):
        lab.register_solution_magic(shell)
    run = unattended.magics[("cell", "solution")]
    run("ex-a", "print(1)\n")
    assert unattended.ran == ["print(1)\n"]
    with pytest.raises(RuntimeError, match="ex-b failed"):
        run("ex-b", "fail\n")
    ask = jupyter.magics[("cell", "solution")]
    ask("ex-a", "print(1)\n")
    assert jupyter.ran == []
    out = capsys.readouterr().out
    assert "ex-a is not run by Run All" in out and "show_solutions()" in out
    try:
        lab.show_solutions()
        ask("ex-a", "print(1)\n")
        assert jupyter.ran == ["print(1)\n"]
    finally:
        lab.show_solutions(False)
    ask("ex-a", "print(2)\n")
    assert jupyter.ran == ["print(1)\n"]


def test_the_base_exercise_runs_are_committed_as_described(results):
    """results/ch08/base/b<base>: RoPE, the committed settings but the base
    and no fine-tuning, seeds 0 to 4; seeds 0 to 2 of b10000 are the full
    run's RoPE models again (the same training, evaluation to 1e-4)."""
    full = results["config"]
    for base, path in lab.BASE_RESULTS.items():
        with open(path, encoding="utf-8") as f:
            runs = json.load(f)
        cfg = runs["config"]
        assert cfg["base"] == base and cfg["methods"] == ["rope"]
        assert cfg["tasks"] == ["lm"] and cfg["seeds"] == [0, 1, 2, 3, 4]
        assert cfg["finetune_steps"] == 0
        for key in ("L", "steps", "lr", "d_model", "n_layers", "n_heads",
                    "batch_size", "eval_multiples"):
            assert cfg[key] == full[key], key
        assert [r["seed"] for r in runs["runs"]] == [0, 1, 2, 3, 4]
    with open(lab.BASE_RESULTS[10000], encoding="utf-8") as f:
        again = {r["seed"]: r for r in json.load(f)["runs"]}
    for old in _runs(results, "lm", "rope"):
        new = again[old["seed"]]
        assert new["train_loss"] == old["train_loss"]
        for n, res in old["eval"].items():
            assert abs(new["eval"][n]["loss"] - res["loss"]) <= 1e-4


#: The book's column shows a figure at most 672 px wide; at >= 80 displayed
#: pixels per figure inch (issue 23), a static figure is at most 8.4 in.
COLUMN_INCHES = 672 / 80


@pytest.mark.parametrize("plot", [
    lab.plot_loss_by_length, lab.plot_press_comparison,
    lab.plot_loss_by_position, lab.plot_rope_stretch, lab.plot_copy])
def test_static_figures_fit_the_column_readably(results, plot):
    fig = plot(results)
    fig.canvas.draw()
    width = fig.get_tightbbox().width  # inches, as the inline backend crops
    assert width <= COLUMN_INCHES, (plot.__name__, width)
    # no legend over the crowded panels: it lies below the plot area
    crowded = plot in (lab.plot_loss_by_position, lab.plot_rope_stretch)
    for ax in fig.axes if crowded else ():
        legend = ax.get_legend()
        if legend is not None:
            assert (legend.get_window_extent().y1
                    <= ax.get_window_extent().y0), plot.__name__


def test_progress_templates():
    """from_templates fills the idle text, then 'starting' until a rate
    is known and 'running' after (the docstring's examples, run)."""
    import doctest

    from posenc_lab import progress
    from posenc_lab.progress import from_templates

    assert doctest.testmod(progress).failed == 0
    idle, running = from_templates(
        {"idle": "{m}", "starting": "{m} {done} {elapsed}",
         "running": "{m} {done} {elapsed} {rate} {left}"}, {"m": "x"})
    assert idle == "x"
    assert running(1, 9, 61.0, None, 5.0) == "x 1 1:01"
    assert running(1, 9, 61.0, 0.25, None) == "x 1 1:01"
    assert running(2, 9, 3.0, 2 / 3, 3725.0) == "x 2 0:03 0.7 1:02:05"
