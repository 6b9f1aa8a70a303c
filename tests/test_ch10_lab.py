"""posenc_plots.ch10_lab: chapter 10's committed results, read."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posenc_lab import layers  # noqa: E402
from posenc_plots import ch10_lab as lab  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return lab.load_results()


def test_every_variant_labelled(results):
    assert {v["name"] for v in results["variants"]} == set(lab.LABELS.en)


def test_seed_values_are_the_runs(results):
    lengths, values = lab.seed_values(results, "f1", "loss")
    assert lengths == [64, 128, 256, 512, 1024] and values.shape == (3, 5)
    run = next(r for r in results["runs"] if r["variant"] == "f1"
               and r["task"] == "lm" and r["seed"] == 2)
    assert values[2, 2] == run["eval"]["256"]["loss"]
    s = results["summary"]["lm"]["f1"]["256"]["loss"]
    assert np.isclose(values[:, 2].mean(), s["mean"])
    assert np.isclose(values[:, 2].std(ddof=1), s["std"])


def test_markdown_table_matches_layers(results):
    text = lab.markdown_table(results, "depth", "passkey")
    lines = text.splitlines()
    assert len(lines) == 2 + 4 and lines[0].startswith("| model | n = 64 (1L)")
    rows = layers.summary(results, "depth")
    m, s, _ = rows[1]["passkey"][1024]
    assert f"{m:.3f} ± {s:.3f}" in lines[3] and "all NoPE" in lines[3]


def test_sessions(results):
    times = lab.session_times(results)
    assert [t[1] for t in times] == [32, 52]
    assert np.isclose(sum(t[2] for t in times), results["wall_time_s"])


@pytest.mark.parametrize("experiment", lab.EXPERIMENTS)
def test_figure(results, experiment):
    fig = lab.plot_by_length(results, experiment)
    assert fig.get_size_inches()[0] <= 8.4
    n = len(layers.summary(results, experiment))
    assert len(fig.legends[0].get_texts()) == n
    plt.close(fig)


@pytest.mark.parametrize("call", [
    lambda r: lab.markdown_table(r, "width"),
    lambda r: lab.markdown_table(r, "base", "ppl"),
    lambda r: lab.seed_values(r, "f1", "accuracy"),
    lambda r: lab.plot_by_length(r, "width"),
])
def test_bad_arguments(results, call):
    with pytest.raises(ValueError, match="must be one of"):
        call(results)
