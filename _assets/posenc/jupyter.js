/*
 * jupyter.js: the book's live figure as a Jupyter widget (anywidget).
 *
 * posenc_plots.jupyter.CanvasFigure sends, as its widget's ES module,
 * posenc.js and the chapter's script (each evaluated once per page) and
 * then this file, which renders the widget: the markup the HTML book has
 * (posenc_plots.page.widget_html, in the kernel's language), started by
 * posenc.mount, so a slider moves the figure in the page, with no round
 * trip to the kernel. The kernel is asked only for data (numpy's seeded
 * normals, chapter 8's results: message {need: name}, answered with one
 * float64 buffer) and told the slider positions ("positions"), which it may
 * also set. Model traits: key, html, positions.
 */
function render({ model, el }) {
  var posenc = globalThis.posenc;
  // ids unique in the page (this module is evaluated once per widget)
  posenc.jupyterViews = (posenc.jupyterViews || 0) + 1;
  var uid = "posenc-jl-" + posenc.jupyterViews;
  var holder = document.createElement("div");
  holder.innerHTML = model.get("html").split("__UID__").join(uid);
  var box = holder.firstElementChild;
  // not the book's markup: posenc.js' own start-up leaves it alone
  box.setAttribute("data-posenc-state", "jupyter");
  box.classList.add("posenc-jupyter");
  el.appendChild(box);
  // A key pressed on a slider moves the slider: JupyterLab's shortcuts
  // (ArrowRight, ArrowLeft, ... in command mode) must not take it first.
  box.setAttribute("data-lm-suppress-shortcuts", "true");
  box.addEventListener("keydown", function (event) {
    if (event.target && event.target.type === "range") event.stopPropagation();
  });

  var waiting = {};
  function load(name) {
    if (posenc.data.has(name)) return Promise.resolve(posenc.data.get(name));
    return new Promise(function (resolve, reject) {
      var first = !waiting[name];
      (waiting[name] = waiting[name] || []).push([resolve, reject]);
      if (first) model.send({ need: name });
    });
  }
  function onMessage(msg, buffers) {
    var name = msg && (msg.data || msg.error);
    if (!name || !waiting[name]) return;
    var calls = waiting[name];
    delete waiting[name];
    if (msg.error) {
      calls.forEach(function (c) { c[1](new Error(msg.message || name)); });
      return;
    }
    var view = buffers[0];  // a DataView (or ArrayBuffer) of float64 LE
    var bytes = view.buffer ?
      view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength) : view;
    posenc.data.define(name, new Float64Array(bytes));
    calls.forEach(function (c) { c[0](posenc.data.get(name)); });
  }
  model.on("msg:custom", onMessage);

  var inputs = box.querySelectorAll("input[type=range]");
  function setPositions(positions) {
    var moved = false;
    Array.prototype.forEach.call(inputs, function (input) {
      var p = positions && positions[input.name];
      if (p !== undefined && parseFloat(input.value) !== p) {
        input.value = String(p);
        moved = true;
      }
    });
    return moved;
  }
  setPositions(model.get("positions"));
  var widget = posenc.mount(box, { load: load });

  // positions to the kernel (after the figure has its new value)
  function tell() {
    model.set("positions", widget.positions());
    model.save_changes();
  }
  Array.prototype.forEach.call(inputs, function (input) {
    input.addEventListener("change", tell);
  });
  function fromKernel() {
    if (setPositions(model.get("positions"))) widget.changed();
  }
  model.on("change:positions", fromKernel);

  // the output area changes width (the panel, the sidebar): lay out again
  var last = 0, frame = 0;
  var resize = typeof ResizeObserver === "undefined" ? null :
    new ResizeObserver(function () {
      var width = box.clientWidth;
      if (!width || width === last) return;
      last = width;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(function () { widget.rerender(); });
    });
  if (resize) resize.observe(box);

  return function () {
    if (resize) resize.disconnect();
    model.off("msg:custom", onMessage);
    model.off("change:positions", fromKernel);
    posenc.unmount(widget);
  };
}

export default { render };
