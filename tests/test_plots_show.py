"""posenc_plots.show and its live figures: the sliders a learner moves.

Each chapter's tests sweep its figures (``plot(**values)``) over every
slider position. These check what Jupyter shows instead. By default
(``renderer="canvas"``) the HTML book's live figure as a widget
(``posenc_plots.jupyter.CanvasFigure``): its markup, spec and scripts are
the book's, in the kernel's language, and the kernel answers the page's
requests for data with what the book writes (``tests/test_browser.py``
holds that renderer equal to matplotlib; ``tests/test_jupyterlab.py`` moves
it in JupyterLab). With ``renderer="png"`` (matplotlib): one widget per
slider with the spec's range, step, default, label and update mode; a
figure built once, whose artists a slider moves to exactly what
``plot(**values)`` draws for the new values; and the image, repainted
piece by piece (``posenc_plots._live``), equal pixel for pixel to a full
matplotlib draw of the same figure, cropped to the same tight box.
"""

import io
import logging

import ipywidgets as w
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import RendererAgg
from PIL import Image

import posenc_plots
from posenc_plots import Interactive, Slider, _live

FIGURES = posenc_plots.all_interactive()
IDS = [f.name for _, f in FIGURES]


def _controls(box):
    return [c for c in box.children
            if isinstance(c, (w.IntSlider, w.FloatSlider, w.FloatLogSlider))]


def _image(box):
    (image,) = [c for c in box.children if isinstance(c, w.Image)]
    return image


def _value(slider, position):
    return 10.0**position if slider.log else position


def _moves(slider):
    """Positions to move a slider to: next to the default, both ends, and
    back (so that the next slider moves from the defaults: at d_model = 2,
    say, base changes nothing)."""
    grid = slider.values() if not slider.log else [
        float(np.log10(v)) for v in slider.values()]
    here = grid.index(min(grid, key=lambda g: abs(g - slider.value)))
    near = grid[here + 1] if here + 1 < len(grid) else grid[here - 1]
    return [near, grid[-1], grid[0], grid[here]]


# ------------------------------------------------------------ records


def _num(values):
    return np.asarray(values, dtype=float)


def _label(text):
    return None if text is None or str(text).startswith("_") else str(text)


def record(fig):
    """What a figure shows: data, limits, scales, texts, colours, styles.

    Everything a slider can change, except where the frozen layout puts
    things (Axes positions and the ticks that follow from them).
    """
    axes = []
    for ax in fig.axes:
        legend = ax.get_legend()
        axes.append({
            "visible": ax.get_visible(),
            "titles": [t.get_text() for t in (
                ax.title, ax._left_title, ax._right_title)],
            "labels": (ax.get_xlabel(), ax.get_ylabel()),
            "scales": (ax.get_xscale(), ax.get_yscale()),
            "limits": _num([ax.get_xlim(), ax.get_ylim()]),
            "images": [(np.ma.filled(np.ma.asarray(im.get_array(), float),
                                     np.nan), _num(im.get_clim()),
                        _num(im.get_extent()), im.get_cmap().name)
                       for im in ax.images],
            "lines": [(_num(ln.get_xdata(orig=True)),
                       _num(ln.get_ydata(orig=True)), _label(ln.get_label()),
                       ln.get_gid(), matplotlib.colors.to_hex(
                           ln.get_color(), keep_alpha=True),
                       ln.get_linestyle(), ln.get_linewidth(),
                       str(ln.get_marker()), ln.get_visible())
                      for ln in ax.lines],
            "patches": [(type(p).__name__, _num(p.get_path().vertices),
                         _num(p.get_patch_transform().get_matrix()),
                         matplotlib.colors.to_hex(p.get_facecolor(),
                                                  keep_alpha=True))
                        for p in ax.patches],
            "collections": [(type(c).__name__, _num(c.get_offsets()),
                             [_num(s) for s in getattr(
                                 c, "get_segments", list)()],
                             _num(c.get_facecolor()) if c.get_array() is None
                             else np.ma.filled(c.get_array(), np.nan),
                             _label(c.get_label()))
                            for c in ax.collections],
            "texts": [(t.get_text(), _num(t.get_position()),
                       matplotlib.colors.to_hex(t.get_color()))
                      for t in ax.texts],
            "legend": None if legend is None else [
                t.get_text() for t in legend.get_texts()],
        })
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else None
    return {"suptitle": suptitle, "axes": axes}


def differences(a, b, where=""):
    """Where two records differ (arrays to 1e-12), as a list of strings."""
    if isinstance(a, dict):
        return [d for k in a for d in differences(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return [f"{where}: {len(a)} items != "
                    f"{len(b) if isinstance(b, (list, tuple)) else b!r}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]")]
    if isinstance(a, np.ndarray):
        if a.shape != np.shape(b):
            return [f"{where}: shape {a.shape} != {np.shape(b)}"]
        if not np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True):
            return [f"{where}: values differ"]
        return []
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def full_draw(fig):
    """The figure as matplotlib draws it in one go (RGBA array)."""
    width, height = fig.canvas.get_width_height(physical=True)
    renderer = RendererAgg(width, height, fig.dpi)
    fig.draw(renderer)
    return np.asarray(renderer.buffer_rgba()).copy()


# ------------------------------------------------------------- widgets


def test_there_are_figures_and_each_is_live():
    assert len(FIGURES) >= 17
    for _, figure in FIGURES:
        assert figure.live is not None, figure.name


def test_named_sliders_follow_the_drag():
    """Chapters 2 and 3: pos and d_model update while dragged (issue 13)."""
    continuous = {(f.name, s.name) for _, f in FIGURES for s in f.sliders
                  if s.continuous}
    assert {("explore_encoding", "pos"), ("explore_encoding", "d_model"),
            ("ch03_wavelengths", "d_model"),
            ("ch03_distance", "d_model")} <= continuous


@pytest.mark.parametrize("module, figure", FIGURES, ids=IDS)
def test_widgets_match_the_sliders(module, figure):
    box = posenc_plots.show(figure, renderer="png")
    controls = _controls(box)
    assert [c.description for c in controls] == [
        s.label or s.name for s in figure.sliders]
    for control, s in zip(controls, figure.sliders, strict=True):
        assert control.continuous_update is s.continuous
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
    # the figure shown is the one plot() draws at the defaults, as a PNG
    assert not differences(record(box.live.figure),
                           record(figure.plot(**figure.defaults())))
    assert bytes(_image(box).value).startswith(b"\x89PNG\r\n\x1a\n")
    # and the live figure is not left in pyplot for the inline backend
    assert box.live.figure not in map(plt.figure, plt.get_fignums())


@pytest.mark.parametrize("module, figure", FIGURES, ids=IDS)
def test_moving_a_slider_redraws_what_plot_draws(module, figure, caplog):
    """Each slider, moved next to its default and to both ends: the live
    figure's artists equal those of a fresh ``plot(**values)``, and the
    image shown is those pixels."""
    box = posenc_plots.show(figure, renderer="png")
    image = _image(box)
    values = figure.defaults()
    with caplog.at_level(logging.WARNING):
        for control, s in zip(_controls(box), figure.sliders, strict=True):
            for k, position in enumerate(_moves(s)):
                control.value = _value(s, position)
                values[s.name] = control.value
                fresh = figure.plot(**values)
                where = f"{figure.name} {s.name}={control.value!r}"
                assert not differences(record(box.live.figure),
                                       record(fresh)), where
                plt.close(fresh)
                # the widget shows the figure as it is now
                assert bytes(image.value) == box.live.png(), where
                if k == 0:  # the repainted image is the whole figure's
                    live = box.live._compositor
                    assert np.array_equal(live.buf, full_draw(
                        box.live.figure)), where
    assert not caplog.records  # interactive() logs callback errors


def test_a_live_figure_without_live_builds_again():
    calls = []

    def plot(*, n, base, scale):
        calls.append({"n": n, "base": base, "scale": scale})

    figure = Interactive("fake", plot, (
        Slider("n", 1, 10, 1, 3),
        Slider("base", 1, 5, 1, 4, log=True, continuous=True),
        Slider("scale", 0.0, 1.0, 0.25, 0.5)))
    box = posenc_plots.show(figure, renderer="png")
    assert calls == [{"n": 3, "base": pytest.approx(1e4), "scale": 0.5}]
    n, base, scale = _controls(box)
    assert [c.continuous_update for c in (n, base, scale)] == [
        False, True, False]
    n.value = 7
    base.value = 100.0
    scale.value = 0.75
    assert calls[-1] == {"n": 7, "base": pytest.approx(100.0),
                         "scale": 0.75}
    assert len(calls) == 4


def test_the_image_keeps_its_natural_size_and_never_shrinks():
    """In JupyterLab the image is a flex item of the box, stretched to the
    output's width unless told otherwise (issue 25 saw a 513 px figure at
    181 %); and a figure cropped a few pixels smaller by a move must not
    move what is below it."""
    from posenc_plots import ch06_rope

    box = posenc_plots.show(ch06_rope.ROTATING_PAIR, renderer="png")
    image = _image(box)
    assert image.layout.align_self == "flex-start"
    assert image.layout.max_width == "100%"
    assert image.layout.object_fit == "contain"
    width, height = posenc_plots.png_size(bytes(image.value))
    assert 300 < width < 1200 and 300 < height < 1200
    assert image.layout.min_height == f"{height}px"
    tallest = height
    for control in _controls(box):
        for value in (control.min, control.max):
            control.value = value
            h = posenc_plots.png_size(bytes(image.value))[1]
            tallest = max(tallest, h)
            assert image.layout.min_height == f"{tallest}px"


def test_png_size():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100)
    fig.add_subplot().plot([0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert posenc_plots.png_size(buf.getvalue()) == (300, 200)
    assert posenc_plots.png_size(b"") == (0, 0)
    assert posenc_plots.png_size(b"GIF89a" + bytes(30)) == (0, 0)


# ---------------------------------------------------------- compositor


def _decode(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


@pytest.mark.parametrize("module, figure", FIGURES, ids=IDS)
def test_png_is_the_tight_box_of_the_figure(module, figure):
    """Cropped where IPython's inline backend crops (bbox_inches="tight",
    pad 0.1 inch), from the pixels a full draw paints."""
    live = posenc_plots.new_live(figure)
    live.update(**figure.defaults())
    png = live.png()
    fig, comp = live.figure, live._compositor
    expected = fig.get_tightbbox(comp.renderer).transformed(
        fig.dpi_scale_trans)
    assert np.allclose(comp.tightbbox().get_points(),
                       expected.get_points(), atol=1e-6)
    pad = matplotlib.rcParams["savefig.pad_inches"] * fig.dpi
    box = expected.padded(pad)
    pixels = full_draw(fig)
    height = pixels.shape[0]
    r0, c0 = round(height - box.y1), round(box.x0)
    image = _decode(png)
    assert image.shape[:2] == (int(box.height), int(box.width))
    assert np.array_equal(image, pixels[r0:r0 + image.shape[0],
                                        c0:c0 + image.shape[1]])


def test_the_canvas_has_room_past_the_figure_edges():
    """A label hanging below the figure's bottom edge is in the image,
    as in IPython's tight print, which draws past the figure."""
    fig, ax = plt.subplots(figsize=(3, 2))
    fig.subplots_adjust(bottom=0.02)
    ax.set_xlabel("label below the edge")
    live = posenc_plots.Live(fig, lambda: None)
    image = _decode(live.png())
    comp = live._compositor
    margin = _live.MARGIN_INCHES * fig.dpi  # the figure's bottom edge
    label = ax.xaxis.label.get_window_extent(comp.renderer)
    assert label.y0 < margin - 5  # the label hangs below it
    assert image.shape[0] > 2 * fig.dpi  # taller than the figure
    top = comp.tightbbox().y1 + matplotlib.rcParams["savefig.pad_inches"] \
        * fig.dpi
    edge_row = round(top - margin)  # the edge's row in the image
    assert (image[edge_row + 2:, :, :3] < 128).any()  # ink below the edge
    assert np.array_equal(comp.buf, full_draw(fig))


def test_only_what_changed_is_repainted():
    """Moving one line repaints that Axes' content, not its ticks, and
    leaves the other Axes alone; the image equals a full draw."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(6, 2.5),
                                      layout="constrained")
    (line,) = left.plot([0, 1], [0, 1])
    left.set_ylim(0, 1)
    right.plot([0, 1], [1, 0])
    live = posenc_plots.Live(fig, lambda y: line.set_ydata([0, y]))
    live.png()
    comp = live._compositor
    drawn = []
    for axis in (left.xaxis, left.yaxis, right.xaxis, right.yaxis):
        axis.draw = (lambda f, a: lambda r: (drawn.append(a), f(r)))(
            axis.draw, axis)
    right_draw = right.lines[0].draw
    right.lines[0].draw = lambda r: (drawn.append("right"), right_draw(r))
    live.update(y=0.5)  # inside the limits: no tick changes
    live.png()
    assert drawn == []
    assert np.array_equal(comp.buf, full_draw(fig))
    drawn.clear()  # (the full draw drew everything)
    live.update(y=3.0)  # new y limits: the left y axis is repainted
    left.set_ylim(0, 3)
    live.png()
    assert drawn == [left.yaxis]
    assert np.array_equal(comp.buf, full_draw(fig))


def test_empty_minor_tick_labels_are_hidden_and_come_back():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_yscale("log")
    (line,) = ax.plot([1, 2], [1, 1e6])
    live = posenc_plots.Live(fig, lambda: None)
    live.png()
    minor = [t for t in ax.yaxis.minorTicks if t.get_loc() > 1]
    assert minor and not any(t.label1.get_visible() for t in minor)
    ax.set_ylim(2, 8)  # under one decade: the formatter labels minor ticks
    live.png()
    labelled = [t for t in ax.yaxis.minorTicks[:4] if t.label1.get_text()]
    assert labelled and all(t.label1.get_visible() for t in labelled)
    assert np.array_equal(live._compositor.buf, full_draw(fig))
    for axis in (ax.xaxis, ax.yaxis):  # the tick cache is per image
        assert "_posenc_ticks" not in axis.__dict__


# ------------------------------------------------- the in-page renderer


def _page_widgets():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
    import posenc_widgets

    return posenc_widgets


@pytest.mark.parametrize("module, figure", FIGURES, ids=IDS)
def test_show_gives_the_books_live_figure(module, figure):
    from posenc_plots import jupyter, page

    widget = posenc_plots.show(figure)
    key = f"{module}:{figure.name}"
    assert isinstance(widget, jupyter._widget_class())
    assert widget.key == key
    # the markup the HTML book writes, with a placeholder id
    assert widget.html == _page_widgets().widget_html(key, figure, "__UID__")
    assert widget.html == page.widget_html(key, figure, "__UID__")
    assert widget.positions == {s.name: s.value for s in figure.sliders}
    assert widget.values == pytest.approx(figure.defaults())
    # its front end: the book's renderer, the chapter's script, the adapter
    esm = widget._esm
    for name in ("posenc.js", f"{module}.js", "jupyter.js"):
        assert (jupyter.ASSETS / name).read_text() in esm, name
    assert esm.rstrip().endswith("export default { render };")
    assert "/* The live figures written by" in widget._css
    # no memory address in what a notebook stores
    text = widget._repr_mimebundle_()[0]["text/plain"]
    assert text == figure.text(figure.caption) and "0x" not in text


def test_show_in_chinese_uses_the_label_tables(monkeypatch):
    from posenc_plots import i18n

    _, figure = FIGURES[1]
    monkeypatch.setenv(i18n.ENV, "zh_CN")
    widget = posenc_plots.show(figure)
    assert "模型宽度" in widget.html or any(
        "\u4e00" <= ch <= "\u9fff" for ch in widget.html)
    assert figure.text(figure.caption, "zh_CN") in widget.html


def test_the_kernel_sends_the_data_the_page_asks_for():
    from posenc_plots import ch08_lab

    widget = posenc_plots.show(FIGURES[0][1])
    sent = []
    widget.send = lambda content, buffers=None: sent.append(
        (content, buffers))
    for name, expected in (
            ("normals-3", np.random.default_rng(3).standard_normal(
                2 * 128 * 128)),
            ("ch08-results", ch08_lab.explore_data())):
        widget._answer(widget, {"need": name}, [])
        content, (buffer,) = sent.pop()
        assert content == {"data": name}
        assert np.array_equal(np.frombuffer(buffer, "<f8"), expected,
                              equal_nan=True)
    widget._answer(widget, {"need": "normals-10"}, [])
    content, buffers = sent.pop()
    assert content["error"] == "normals-10" and not buffers
    assert "seed in 0..9" in content["message"]
    widget._answer(widget, {"other": 1}, [])  # not a request: no answer
    assert not sent


def test_page_data_is_what_the_book_writes(tmp_path):
    import base64

    from posenc_plots import page

    _page_widgets().write_normals(tmp_path)
    text = (tmp_path / "normals-7.js").read_text()
    b64 = text.split('"normals-7", "')[1].split('"')[0]
    assert np.array_equal(np.frombuffer(base64.b64decode(b64), "<f8"),
                          page.page_data("normals-7"))
    for bad in ("normals-x", "normals--1", "ch09", 3):
        with pytest.raises(ValueError, match="name must be"):
            page.page_data(bad)


def test_renderer_is_chosen_and_checked(monkeypatch):
    _, figure = FIGURES[1]
    assert isinstance(posenc_plots.show(figure, renderer="png"),
                      w.interactive)
    monkeypatch.setenv(posenc_plots.RENDERER_ENV, "png")
    assert isinstance(posenc_plots.show(figure), w.interactive)
    assert not isinstance(posenc_plots.show(figure, renderer="canvas"),
                          w.interactive)
    with pytest.raises(ValueError, match="renderer must be one of"):
        posenc_plots.show(figure, renderer="svg")
    monkeypatch.setenv(posenc_plots.RENDERER_ENV, "bogus")
    with pytest.raises(ValueError, match="renderer must be one of"):
        posenc_plots.show(figure)
    # a figure no chapter script draws: matplotlib, or a clear error
    fake = Interactive("fake", lambda *, n: plt.figure(),
                       (Slider("n", 1, 3, 1, 2),))
    monkeypatch.delenv(posenc_plots.RENDERER_ENV)
    assert isinstance(posenc_plots.show(fake), w.interactive)
    with pytest.raises(ValueError, match="no chapter script"):
        posenc_plots.show(fake, renderer="canvas")


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_hint_says_to_run_the_cell_and_hides_itself(lang):
    from posenc_plots import jupyter

    bundle = jupyter.hint_output(lang)._repr_mimebundle_()
    text = jupyter.JUPYTER.get(lang)["run"]
    assert bundle["text/plain"] == text
    html = bundle["text/html"]
    assert f'class="{jupyter.HINT_CLASS}"' in html and text in html
    # hidden once the figure draws; hides the widget's bare error text
    assert (".jp-OutputArea:has(.posenc-widget) .jp-OutputArea-child:has("
            f".{jupyter.HINT_CLASS})") in html
    assert ".jupyter-widgets:not(:has(*))" in html
