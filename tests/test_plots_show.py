"""posenc_plots.show: the ipywidgets sliders a learner moves in Jupyter.

Each chapter's tests sweep its figures over every slider position; these
check the widgets themselves: one per slider, with the spec's range, step,
default and label, updating only when released, and calling the figure's
plot function with the slider values.
"""

import ipywidgets as w
import pytest

import posenc_plots
from posenc_plots import Interactive, Slider

FIGURES = posenc_plots.all_interactive()


def _controls(box):
    return [c for c in box.children if isinstance(c, w.widgets.ValueWidget)
            and not isinstance(c, w.Output)]


def test_there_are_figures():
    assert len(FIGURES) >= 17


@pytest.mark.parametrize("module, figure", FIGURES,
                         ids=[f.name for _, f in FIGURES])
def test_widgets_match_the_sliders(module, figure):
    box = posenc_plots.show(figure)
    controls = _controls(box)
    assert [c.description for c in controls] == [
        s.label or s.name for s in figure.sliders]
    for control, s in zip(controls, figure.sliders, strict=True):
        assert control.continuous_update is False
        assert (control.min, control.max, control.step) == (s.min, s.max,
                                                            s.step)
        if s.log:
            assert isinstance(control, w.FloatLogSlider)
            assert control.base == 10
            assert control.value == pytest.approx(10.0**s.value)
        else:
            assert isinstance(control, w.IntSlider if s.is_int
                              else w.FloatSlider)
            assert control.value == s.value
    assert box.kwargs == figure.defaults()


def test_moving_a_slider_replots_with_its_value():
    calls = []

    def plot(*, n, base, scale):
        calls.append({"n": n, "base": base, "scale": scale})

    figure = Interactive("fake", plot, (
        Slider("n", 1, 10, 1, 3),
        Slider("base", 1, 5, 1, 4, log=True),
        Slider("scale", 0.0, 1.0, 0.25, 0.5)))
    box = posenc_plots.show(figure)
    assert calls == [{"n": 3, "base": pytest.approx(1e4), "scale": 0.5}]
    n, base, scale = _controls(box)
    n.value = 7
    base.value = 100.0
    scale.value = 0.75
    assert calls[-1] == {"n": 7, "base": pytest.approx(100.0),
                         "scale": 0.75}
    assert len(calls) == 4
