"""Live figures: built once, then redrawn only where a slider changed them.

A slider update in Jupyter used to rebuild the figure (``plot(**values)``)
and let the inline backend draw it twice over (a layout pass, then the
image, cropped to its tight bounding box). Here a figure is built once per
:func:`posenc_plots.show`; a slider update rewrites its artists' data
(:class:`Live`), and :class:`Compositor` turns it into the PNG that
Jupyter shows, repainting only what changed:

* the layout engine runs once, at the first image; the layout is frozen
  after it;
* the image is two layers: a background (figure and Axes backgrounds,
  ticks, tick labels, axis labels, figure texts), and each Axes' content
  (its data artists, spines, texts, title, legend) painted over it;
* each piece of the background (an Axes' x axis, y axis; a figure text)
  is repainted only when its limits, scale, ticks or text change,
  and only in its own rectangle; each Axes' content is repainted only
  when something in that Axes changed (matplotlib's ``stale`` flag);
* the PNG is cropped to the figure's tight bounding box padded by
  ``savefig.pad_inches`` (0.1 inch), as IPython's inline backend does
  (``bbox_inches="tight"``), from the bounding boxes of the pieces.

The result is, pixel for pixel, the figure matplotlib draws in one go (the
tests compare them), though painted in another order: ticks before the
spines they only touch. Axes whose decorations could overlap their data
(ticks pointing in, grid lines, non-rectilinear Axes) are repainted whole.
"""

import io
import struct
import zlib

import matplotlib as mpl
import numpy as np
from matplotlib import image as mimage
from matplotlib import ticker as mticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.transforms import Bbox

__all__ = ["Live", "Compositor", "set_image", "sync_texts"]

#: Room around the figure on the canvas, in inches (see _widen_canvas).
MARGIN_INCHES = 0.5

#: PNG compression (zlib level 1 to 9): level 1 encodes several times
#: faster than matplotlib's default 6, for PNGs a third larger.
COMPRESS_LEVEL = 1

_MARGIN = 2  # pixels around every rectangle (antialiasing, line caps)


class Live:
    """A figure built once, and the function that moves it to new values.

    ``update(**values)`` rewrites the figure's artists for new slider
    values (building the figure again at those values draws the same data);
    :meth:`png` returns the image to show, repainting only what changed.
    """

    def __init__(self, figure, update):
        self.figure = figure
        self._update = update
        self._compositor = None

    def update(self, **values):
        self._update(**values)
        return self.figure

    def png(self):
        """The figure as PNG bytes, cropped like IPython's inline backend."""
        if self._compositor is None:
            self._compositor = Compositor(self.figure)
        return self._compositor.png()


def set_image(image, data):
    """Put a new array into an ``imshow`` image, as ``imshow`` would.

    The extent follows the array's shape (pixel centres on the integers),
    and the Axes' data limits and, if autoscaling, its view limits follow.
    """
    data = np.asarray(data)
    image.set_data(data)
    rows, cols = data.shape[:2]
    if image.origin == "upper":
        image.set_extent((-0.5, cols - 0.5, rows - 0.5, -0.5))
    else:
        image.set_extent((-0.5, cols - 0.5, -0.5, rows - 0.5))
    image.axes.relim()


def _rect(bbox, height, margin=_MARGIN):
    """Pixel rectangle (row0, row1, col0, col1) of a display-space bbox."""
    if bbox is None or not np.all(np.isfinite(bbox.get_points())):
        return None
    c0 = int(np.floor(bbox.x0)) - margin
    c1 = int(np.ceil(bbox.x1)) + margin
    r0 = int(np.floor(height - bbox.y1)) - margin
    r1 = int(np.ceil(height - bbox.y0)) + margin
    return (r0, r1, c0, c1)


def _union(rects):
    rects = [r for r in rects if r is not None]
    if not rects:
        return None
    return (min(r[0] for r in rects), max(r[1] for r in rects),
            min(r[2] for r in rects), max(r[3] for r in rects))


def _overlap(a, b):
    return (a is not None and b is not None and a[0] < b[1] and b[0] < a[1]
            and a[2] < b[3] and b[2] < a[3])


def _touches(rects, area):
    """Does any rectangle of ``rects`` overlap one of ``area``?"""
    return any(_overlap(a, b) for a in rects for b in area)


def _bbox_union(boxes):
    boxes = [b for b in boxes if b is not None and b.width + b.height > 0
             and np.all(np.isfinite(b.get_points()))]
    return Bbox.union(boxes) if boxes else None


def _titles(ax):
    return [t for t in (ax.title, getattr(ax, "_left_title", None),
                        getattr(ax, "_right_title", None)) if t is not None]


def _text_sig(text):
    return (text.get_text(), text.get_visible(), text.get_position(),
            str(text.get_color()), text.get_fontsize(), text.get_rotation())


def _axis_sig(axis):
    """What the ticks, tick labels and label of an Axis depend on."""
    def state(obj):  # fixed ticks and labels can be changed in place
        if isinstance(obj, mticker.FixedLocator):
            return (id(obj), tuple(np.ravel(obj.locs)))
        if isinstance(obj, mticker.FixedFormatter):
            return (id(obj), tuple(obj.seq))
        return id(obj)

    return (tuple(axis.axes.bbox.bounds), tuple(axis.get_view_interval()),
            axis.get_scale(), axis.get_visible(),
            state(axis.get_major_locator()), state(axis.get_minor_locator()),
            state(axis.get_major_formatter()),
            state(axis.get_minor_formatter()),
            _text_sig(axis.label), axis.get_label_position(),
            axis.get_ticks_position())


def _spines_of(ax, axis):
    """The spines along which ``axis`` draws its ticks."""
    sides = ("bottom", "top") if axis is ax.xaxis else ("left", "right")
    return [ax.spines[s] for s in sides if s in ax.spines]


def _splittable(ax):
    """Do the Axes' decorations stay outside its data rectangle?"""
    if ax.name != "rectilinear":
        return False
    for axis in (ax.xaxis, ax.yaxis):
        for ticks in (axis.majorTicks, axis.minorTicks):
            for tick in ticks[:1]:
                if getattr(tick, "_tickdir", "out") != "out":
                    return False
                if tick.gridline.get_visible():
                    return False
    return True


def _png(rgba, level=COMPRESS_LEVEL):
    """PNG bytes of an (h, w, 4) uint8 array: no filter, one zlib stream.

    Twice as fast as Pillow's encoder for these images, at a similar size.
    """
    h, w = rgba.shape[:2]
    raw = np.empty((h, 1 + 4 * w), np.uint8)
    raw[:, 0] = 0  # filter type "none" on every row
    raw[:, 1:] = rgba.reshape(h, 4 * w)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), level))
            + chunk(b"IEND", b""))


def _widen_canvas(fig, margin):
    """Paint the figure on a canvas ``margin`` inches wider on every side.

    A tight bounding box can reach past the figure's edges (a label's
    descent below the bottom edge, a tick label grown wider than the frozen
    layout made room for); IPython's inline backend draws those parts,
    since it renders the tight box, not the figure. Here the canvas is
    widened once instead, as ``print_figure(bbox_inches=...)`` does for one
    print (``matplotlib._tight_bbox.adjust_bbox``): figure coordinates map
    to the same pixels, shifted by the margin, and the figure background
    covers the whole canvas. Axes keep their layout and their aspect.
    """
    if getattr(fig, "_posenc_margin", None) is not None:
        return
    width, height = fig.bbox_inches.size
    pad = margin * fig.dpi
    fig.bbox_inches = Bbox.from_bounds(0, 0, width + 2 * margin,
                                       height + 2 * margin)
    fig.transFigure._boxout = Bbox.from_bounds(pad, pad, width * fig.dpi,
                                               height * fig.dpi)
    fig.transFigure.invalidate()
    fig.bbox = mpl.transforms.TransformedBbox(fig.bbox_inches,
                                              fig.dpi_scale_trans)
    fig.patch.set_bounds(-margin / width, -margin / height,
                         1 + 2 * margin / width, 1 + 2 * margin / height)
    fig._posenc_margin = margin


def _remember_ticks(axis):
    """Compute an Axis' ticks once per image, not at every use.

    Matplotlib works out the ticks to draw (locators, formatters, one Tick
    per position: ``Axis._update_ticks``) each time it draws an axis, places
    its label, measures a spine or a title's clearance: five to seven
    times per image for the same limits. While an image is painted nothing
    changes them, so the first result is reused (for the same limits and
    Axes box; forgotten after the image, and not remembered outside
    ``Compositor.png``).
    """
    if "_update_ticks" in axis.__dict__ or not hasattr(axis, "_update_ticks"):
        return
    compute = type(axis)._update_ticks

    def update_ticks():
        if "_posenc_ticks" not in axis.__dict__:  # not painting an image
            return compute(axis)
        key = (tuple(axis.get_view_interval()), axis.get_scale(),
               tuple(axis.axes.bbox.bounds))
        seen = axis.__dict__["_posenc_ticks"]
        if seen is not None and seen[0] == key:
            return seen[1]
        ticks = compute(axis)
        axis.__dict__["_posenc_ticks"] = (key, ticks)
        return ticks

    axis._update_ticks = update_ticks


def _quiet_minor_labels(axis):
    """Hide minor tick labels while the formatter leaves them all empty.

    A log axis spanning several decades labels only the powers of its base:
    its minor tick labels are empty strings, which matplotlib still lays
    out and measures at every draw, some 50 per axis. Hiding them changes
    no pixel; they are shown again as soon as one of them has text (a
    slider narrowed the axis).
    """
    try:
        ticks = axis._update_ticks()
    except AttributeError:
        return
    minor = {id(t) for t in axis.minorTicks}
    texts = [t.label1.get_text() for t in ticks if id(t) in minor]
    if not texts:
        return
    state = axis.__dict__.setdefault("_posenc_minor", {"hidden": False})
    if "on" not in state:  # the labels as the figure had them
        first = axis.minorTicks[0]
        state["on"] = (first.label1.get_visible(), first.label2.get_visible())
    empty = not any(texts)
    if empty == state["hidden"]:
        return
    names = (("labelbottom", "labeltop") if axis.axis_name == "x"
             else ("labelleft", "labelright"))
    on1, on2 = state["on"]
    axis.set_tick_params(which="minor", **{names[0]: on1 and not empty,
                                           names[1]: on2 and not empty})
    state["hidden"] = empty


class _Piece:
    """A background piece: what it draws, its signature, where it is.

    ``signature()`` returns what the piece's pixels depend on; the piece is
    repainted when it changes. ``rects`` are the pixel rectangles (rows
    and columns) it paints in (one per tick label, say), ``tight`` its part
    of the figure's tight bounding box.
    """

    __slots__ = ("key", "draw", "signature", "sig", "rects", "tight",
                 "artists")

    def __init__(self, key, draw, signature, artists):
        self.key, self.draw, self.artists = key, draw, artists
        self.signature = signature
        self.sig = self.tight = None
        self.rects = []


class Compositor:
    """Render a figure to PNG bytes again and again, repainting changes.

    ``png()`` returns the figure's image; the first call lays the figure
    out and paints everything, later calls repaint what changed since.
    """

    def __init__(self, figure):
        self.figure = figure
        FigureCanvasAgg(figure)  # our own Agg canvas, whatever the backend
        self._started = False

    def png(self):
        for ax in self.figure.axes:
            for axis in (ax.xaxis, ax.yaxis):
                _remember_ticks(axis)
                axis.__dict__["_posenc_ticks"] = None  # remember, from now
        try:
            if not self._started or self._axes_changed():
                self._start()
                self._started = True
            else:
                self._step()
            return self._encode()
        finally:
            for ax in self.figure.axes:
                for axis in (ax.xaxis, ax.yaxis):
                    axis.__dict__.pop("_posenc_ticks", None)

    # ----------------------------------------------------- the pieces

    def _axes_list(self):
        return sorted(self.figure.axes, key=lambda a: a.zorder)

    def _axes_changed(self):
        return [id(a) for a in self._axes_list()] != self._axes_ids

    def _figure_artists(self):
        fig = self.figure
        return [a for a in fig.get_children()
                if a is not fig.patch and a not in fig.axes
                and a.get_visible()]

    def _axis_pieces(self, ax):
        """The x axis and y axis pieces of a splittable Axes."""
        if not (ax.get_visible() and ax.axison):
            return []
        return [_Piece((name, id(ax)), axis.draw,
                       lambda axis=axis: _axis_sig(axis), [axis])
                for name, axis in (("x", ax.xaxis), ("y", ax.yaxis))]

    def _figure_piece(self, art):
        if isinstance(art, mpl.text.Text):
            sig = lambda art=art: _text_sig(art)  # noqa: E731
        else:  # no cheap signature: repaint whenever it is stale
            sig = lambda art=art: (art.stale, id(art))  # noqa: E731
        return _Piece(("fig", id(art)), art.draw, sig, [art])

    def _content(self, ax):
        """The artists of ``ax`` painted over the background, in order."""
        if not ax.get_visible():
            return []
        if not self._split[id(ax)]:
            return [ax]
        # titles stay in: texts near the top of the Axes (labels over
        # tiles) overlap them, and matplotlib paints them in this order
        skip = {id(ax.xaxis), id(ax.yaxis), id(ax.patch)}
        artists = [a for a in ax.get_children()
                   if id(a) not in skip and a.get_visible()
                   and not a.get_animated()]
        if not (ax.axison and ax.get_frame_on()):
            spines = {id(s) for s in ax.spines.values()}
            artists = [a for a in artists if id(a) not in spines]
        return sorted(artists, key=lambda a: a.zorder)

    def _prepare(self, ax):
        """What Axes.draw does first: aspect, then up-to-date limits."""
        locator = ax.get_axes_locator()
        ax.apply_aspect(locator(ax, self.renderer) if locator else None)
        ax.viewLim  # noqa: B018  (brings autoscaled limits up to date)
        for axis in (ax.xaxis, ax.yaxis):
            _quiet_minor_labels(axis)

    def _place_titles(self, ax, axes_changed=True):
        """Axes.draw's title placement (above any top decorations).

        Matplotlib measures the y axis again for that at every draw; here,
        unless an axis changed or something sits above the Axes (top ticks,
        a top label, the y axis' offset text), titles go at their default
        height, 1.0 in Axes units, as matplotlib would put them.
        """
        place = getattr(ax, "_update_title_position", None)
        if place is None or getattr(ax, "_autotitlepos", None) is False:
            return  # titles placed by hand stay where they are
        above = (ax.xaxis.get_ticks_position() in ("top", "unknown")
                 or ax.xaxis.get_label_position() == "top"
                 or ax.yaxis.offsetText.get_text() or ax.child_axes)
        if axes_changed or above or not hasattr(ax, "_left_title"):
            place(self.renderer)
            return
        for title in _titles(ax):
            x, y = title.get_position()
            if y != 1.0:
                title.set_position((x, 1.0))

    # --------------------------------------------------------- boxes

    def _ticks(self, ax, axis):
        """Where ``axis`` draws tick marks (they point out of the Axes).

        Returns (marks, edges): the bbox of the marks, for the pixels to
        repaint, and the Axes edges they stand on, each widened by the tick
        length on the side the ticks are (what ``Spine.get_window_extent``
        adds to the tight bounding box).
        """
        try:
            ticks = axis._update_ticks()  # the ticks a draw would draw
        except AttributeError:  # another matplotlib: assume every edge
            ticks = None
        (x0, y0), (x1, y1) = ax.bbox.get_points()
        px = self.figure.dpi / 72.0
        size = width = 0.0
        low = high = False
        for tick in (ticks if ticks is not None else axis.majorTicks[:1]):
            size = max(size, tick.tick1line.get_markersize())
            width = max(width, tick.tick1line.get_markeredgewidth())
            low |= tick.tick1line.get_visible()
            high |= tick.tick2line.get_visible()
        length, half = size * px, width * px / 2 + 1.0
        edges = []
        is_x = axis is ax.xaxis
        for side, ticked in ((0, low), (1, high)):
            spine = ax.spines.get(("bottom", "top", "left", "right")[
                side + (0 if is_x else 2)])
            if spine is None or not (spine.get_visible()
                                     and ax.get_frame_on()):
                continue
            if spine.get_position() != ("outward", 0.0):
                edges.append(spine.get_window_extent(self.renderer))
                continue
            pad = length if ticked and ticks else 0.0
            if is_x:
                y = (y0, y1)[side]
                edges.append(Bbox([[x0, y - pad * (side == 0)],
                                   [x1, y + pad * (side == 1)]]))
            else:
                x = (x0, x1)[side]
                edges.append(Bbox([[x - pad * (side == 0), y0],
                                   [x + pad * (side == 1), y1]]))
        if not ticks or not (low or high):
            return None, edges
        if is_x:
            at = ax.get_xaxis_transform().transform(
                [(t.get_loc(), 0.0) for t in ticks])[:, 0]
            marks = Bbox([[at.min() - half, y0 - length - 1 if low else y1 - 1],
                          [at.max() + half, y1 + length + 1 if high else y0 + 1]])
        else:
            at = ax.get_yaxis_transform().transform(
                [(0.0, t.get_loc()) for t in ticks])[:, 1]
            marks = Bbox([[x0 - length - 1 if low else x1 - 1, at.min() - half],
                          [x1 + length + 1 if high else x0 + 1, at.max() + half]])
        return marks, edges

    def _measure(self, piece):
        """Pixel rectangle and tight box of a background piece."""
        r, height = self.renderer, self.height
        first = piece.artists[0]
        if piece.key[0] in ("x", "y"):
            ax = first.axes
            tight = first.get_tightbbox(r) if first.get_visible() else None
            marks, edges = self._ticks(ax, first)
            piece.tight = _bbox_union([tight] + edges)
            # each label apart: the y axis' bottom label and the x axis'
            # left label sit close to each other, but do not overlap
            try:
                ticks = first._update_ticks()  # those drawn (remembered)
            except AttributeError:
                ticks = first.majorTicks + first.minorTicks
            texts = [first.label, first.offsetText] + [
                label for tick in ticks for label in (tick.label1,
                                                      tick.label2)]
            piece.rects = [_rect(marks, height, margin=0)] + [
                _rect(t.get_window_extent(r), height) for t in texts
                if t.get_visible() and t.get_text()]
            piece.rects = [x for x in piece.rects if x is not None]
        else:  # a figure-level artist
            piece.tight = first.get_tightbbox(r)
            piece.rects = [_rect(first.get_window_extent(r), height)]

    def _measure_content(self, ax):
        """(tight box, pixel rectangles) of what ``_content(ax)`` paints."""
        r, height = self.renderer, self.height
        if not ax.get_visible():
            return None, []
        if not self._split[id(ax)]:
            tight = ax.get_tightbbox(r)
            return tight, [_union([_rect(tight, height),
                                   _rect(ax.bbox, height)])]
        boxes, extra = [ax.bbox], []
        skip = {id(ax.xaxis), id(ax.yaxis)}
        if ax.axison:  # these spines are measured with their axis
            skip.update(id(s) for axis in (ax.xaxis, ax.yaxis)
                        for s in _spines_of(ax, axis))
        for a in ax.get_default_bbox_extra_artists():
            if id(a) not in skip:
                box = a.get_tightbbox(r)
                boxes.append(box)
                extra.append(_rect(box, height))
        for title in _titles(ax):
            if title.get_visible() and title.get_text():
                box = title.get_window_extent(r)
                boxes.append(box)
                extra.append(_rect(box, height))
        rects = [_rect(ax.bbox, height, margin=_MARGIN + 1)] + extra
        return _bbox_union(boxes), [x for x in rects if x is not None]

    # --------------------------------------------------------- drawing

    def _copy(self, source, target, rects):
        h, w = target.shape[:2]
        for rect in rects:
            if rect is None:
                continue
            r0, r1 = max(rect[0], 0), min(rect[1], h)
            c0, c1 = max(rect[2], 0), min(rect[3], w)
            if r0 < r1 and c0 < c1:
                target[r0:r1, c0:c1] = source[r0:r1, c0:c1]

    def _draw_content(self, ax):
        artists = self._content(ax)
        if artists == [ax]:
            ax.draw(self.renderer)
        else:
            mimage._draw_list_compositing_images(
                self.renderer, ax, artists, self.figure.suppressComposite)

    def _start(self):
        """First image: layout once, freeze it, paint every piece."""
        fig = self.figure
        fig.canvas.draw()  # the layout engine runs here, once
        with mpl.rc_context({"figure.autolayout": False,
                             "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)
        _widen_canvas(fig, MARGIN_INCHES)
        r = self.renderer = fig.canvas.get_renderer()
        self.buf = np.asarray(r.buffer_rgba())
        self.height = self.buf.shape[0]
        axes = self._axes_list()
        self._axes_ids = [id(a) for a in axes]
        self._split = {id(a): _splittable(a) for a in axes}
        r.clear()
        fig.patch.draw(r)
        for ax in axes:
            self._prepare(ax)
            self._place_titles(ax)
            if self._split[id(ax)] and ax.axison and ax.get_frame_on():
                ax.patch.draw(r)
        self.base = self.buf.copy()  # figure and Axes backgrounds
        self.frames = {}
        for ax in axes:
            if self._split[id(ax)]:
                for piece in self._axis_pieces(ax):
                    self.frames[piece.key] = piece
        for art in self._figure_artists():
            piece = self._figure_piece(art)
            self.frames[piece.key] = piece
        for piece in self.frames.values():
            piece.draw(r)
            piece.sig = piece.signature()
            self._measure(piece)
        self.background = self.buf.copy()  # ... and every background piece
        self.content = {}
        for ax in axes:
            self._draw_content(ax)
            self.content[id(ax)] = self._measure_content(ax)
        self._clean()

    def _clean(self):
        for ax in self._axes_list():
            ax.stale = False
        self.figure.stale = False

    def _changed_pieces(self, changed):
        """Background pieces to repaint, and the rectangles they leave."""
        redraw, old_rects = {}, []

        def replace(piece):
            old = self.frames.get(piece.key)
            if old is not None:
                old_rects.extend(old.rects)
            self.frames[piece.key] = redraw[piece.key] = piece

        for ax in changed:
            if not self._split[id(ax)]:
                continue
            moved = False  # the y axis (its offset text) moves titles
            for piece in self._axis_pieces(ax):
                sig = piece.signature()
                old = self.frames.get(piece.key)
                if old is None or old.sig != sig:
                    piece.sig = sig
                    replace(piece)
                    moved |= piece.key[0] == "y"
            self._place_titles(ax, moved)
        # figure-level artists: gone, new, or changed
        current = {("fig", id(a)): a for a in self._figure_artists()}
        for key in [k for k in self.frames if k[0] == "fig"]:
            if key not in current:
                old_rects.extend(self.frames.pop(key).rects)
        for key, art in current.items():
            piece = self.frames.get(key)
            if piece is None:
                piece = self._figure_piece(art)
                piece.sig = piece.signature()
                self.frames[key] = redraw[key] = piece
            else:
                sig = piece.signature()
                if sig != piece.sig:
                    piece.sig = sig
                    old_rects.extend(piece.rects)
                    redraw[key] = piece
        return redraw, old_rects

    def _step(self):
        """Repaint what changed since the last image."""
        axes = self._axes_list()
        changed = [ax for ax in axes if ax.stale]
        for ax in changed:
            self._prepare(ax)
        redraw, old_rects = self._changed_pieces(changed)
        area = self._repaint_background(redraw, old_rects) if redraw else []
        # content: Axes that changed, and any whose rectangle is touched
        todo = {id(ax) for ax in changed}
        for ax in changed:
            area.extend(self.content[id(ax)][1])
            self.content[id(ax)] = self._measure_content(ax)
            area.extend(self.content[id(ax)][1])
        grown = True
        while grown:
            grown = False
            for ax in axes:
                rects = self.content[id(ax)][1]
                if id(ax) not in todo and _touches(rects, area):
                    todo.add(id(ax))
                    area.extend(rects)
                    grown = True
        self._copy(self.background, self.buf, area)
        for ax in axes:
            if id(ax) in todo:
                self._draw_content(ax)
        self._clean()

    def _repaint_background(self, redraw, old_rects):
        """Repaint background pieces over the base; returns their area."""
        for piece in redraw.values():
            self._measure(piece)
        area = [r for r in old_rects if r is not None]
        area += [x for p in redraw.values() for x in p.rects]
        grown = True  # pieces overlapping the area are repainted too
        while grown:
            grown = False
            for key, piece in self.frames.items():
                if key not in redraw and _touches(piece.rects, area):
                    redraw[key] = piece
                    area.extend(piece.rects)
                    grown = True
        self._copy(self.base, self.buf, area)
        for key, piece in self.frames.items():  # in painting order
            if key in redraw:
                piece.draw(self.renderer)
        self._copy(self.buf, self.background, area)
        return list(area)

    # ------------------------------------------------------------ PNG

    def tightbbox(self):
        """The figure's tight bounding box (display units), unpadded."""
        boxes = [p.tight for p in self.frames.values()]
        boxes += [tight for tight, _ in self.content.values()]
        return _bbox_union(boxes)

    def _encode(self):
        fig = self.figure
        tight = self.tightbbox()
        pad = mpl.rcParams["savefig.pad_inches"] * fig.dpi
        buf = self.buf
        h, w = buf.shape[:2]
        if tight is None:
            x0, y0, x1, y1 = 0.0, 0.0, float(w), float(h)
        else:
            x0, y0 = tight.x0 - pad, tight.y0 - pad
            x1, y1 = tight.x1 + pad, tight.y1 + pad
        if tight is not None and (tight.x0 < 0 or tight.y0 < 0
                                  or tight.x1 > w or tight.y1 > h):
            return self._print_tight()  # past even the widened canvas
        width, height = int(x1 - x0), int(y1 - y0)
        c0, r0 = int(round(x0)), int(round(h - y1))
        inside = buf[max(r0, 0):min(r0 + height, h),
                     max(c0, 0):min(c0 + width, w)]
        if inside.shape[:2] == (height, width):
            out = inside
        else:  # the padding reaches past the canvas: fill with facecolor
            face = np.round(255 * np.array(mpl.colors.to_rgba(
                fig.get_facecolor()))).astype(np.uint8)
            out = np.empty((height, width, 4), np.uint8)
            out[:] = face
            out[max(-r0, 0):max(-r0, 0) + inside.shape[0],
                max(-c0, 0):max(-c0, 0) + inside.shape[1]] = inside
        return _png(out)

    def _print_tight(self):
        """The figure drawn whole into its tight box, as IPython does."""
        fig = self.figure
        data = io.BytesIO()
        fig.canvas.print_figure(data, format="png", dpi=fig.dpi,
                                facecolor=fig.get_facecolor(),
                                edgecolor=fig.get_edgecolor(),
                                bbox_inches="tight")
        return data.getvalue()


def sync_texts(ax, texts, items, **style):
    """Make the Text artists ``texts`` (a list, kept) show ``items``.

    ``items`` are ``(x, y, string, color)`` (``None``: the default text
    colour); texts are reused in order, new ones are added with ``style``
    (``ax.text`` keywords) and spare ones removed, so ``ax.texts`` lists
    them as a fresh figure would.
    """
    while len(texts) > len(items):
        texts.pop().remove()
    for k, (x, y, string, color) in enumerate(items):
        if color is None:
            color = mpl.rcParams["text.color"]
        if k < len(texts):
            text = texts[k]
            text.set_position((x, y))
            text.set_text(string)
            text.set_color(color)
        else:
            texts.append(ax.text(x, y, string, color=color, **style))
