/* Live figures of chapter 2: posenc_plots/ch02_formula.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, label = posenc.label;
  var N_POSITIONS = 100;

  /** posenc_plots.ch02_formula.base_label: 10000 -> '10,000', 3.1623 -> '3.16'. */
  function baseLabel(base) {
    return base >= 1000 ? posenc.fmt.format(base, ",.0f") : posenc.fmt.format(base, ".3g");
  }

  function waveDimensions(d_model) {
    var m = Math.floor(d_model / 2), seen = {};
    [0, Math.floor(m / 8), Math.floor(m / 4), Math.floor(m / 2)].forEach(function (p) { seen[p] = true; });
    return Object.keys(seen).map(Number).sort(function (a, b) { return a - b; })
      .map(function (p) { return 2 * p; });
  }

  function heatmap(fig, ax, P, o, t) {
    var im = ax.imshow(P, { cmap: "RdBu_r", vmin: -1.0, vmax: 1.0, aspect: "auto" });
    ax.set_xlabel(t.xlabel_heatmap);
    ax.set_ylabel(t.ylabel_heatmap);
    if (o.title) ax.set_title(o.title);
    if (o.pos !== undefined) ax.axhline(o.pos, { color: "black", lw: 1 });
    fig.colorbar(im, ax);
  }

  function waves(ax, positions, P, dims, pos, t) {
    dims.forEach(function (dim) {
      ax.plot(positions, P.map(function (row) { return row[dim]; }),
              { label: label(t.dim, { dim: dim }) });
    });
    ax.axvline(pos, { color: "black", lw: 1 });
    ax.set_xlabel(t.xlabel_waves);
    ax.set_ylabel(t.ylabel_waves);
    ax.set_ylim(-1.1, 1.6);
    ax.legend({ fontsize: "small", loc: "upper center", ncol: 4 });
  }

  function vector(ax, v, title, t) {
    var dims = np.arange(v.length);
    ax.vlines(dims, 0.0, v, { color: "gray", lw: 1 });
    var even = dims.filter(function (d) { return d % 2 === 0; });
    var odd = dims.filter(function (d) { return d % 2 === 1; });
    ax.plot(even, even.map(function (d) { return v[d]; }), { marker: "o", ms: 3, label: t.sin });
    ax.plot(odd, odd.map(function (d) { return v[d]; }), { marker: "s", ms: 3, label: t.cos });
    ax.axhline(0.0, { color: "black", lw: 0.5 });
    ax.set_ylim(-1.1, 1.6);
    ax.set_xlabel(t.xlabel_vector);
    ax.set_ylabel(t.ylabel_vector);
    if (title) ax.set_title(title);
    ax.legend({ fontsize: "small", loc: "upper center", ncol: 2 });
  }

  posenc.register("ch02_formula:explore_encoding", {
    figsize: [13, 3.6],
    draw: function (fig, p, t) {
      var d = p.d_model, base = p.base, pos = p.pos;
      var ax = fig.subplots(1, 3);
      var P = core.sinusoidal_encoding(N_POSITIONS, d, { base: base });
      heatmap(fig, ax[0], P, { pos: pos,
        title: label(t.title_heatmap, { d_model: d, base: baseLabel(base) }) }, t);
      var fine = np.linspace(0.0, N_POSITIONS - 1, 397);
      waves(ax[1], fine, core.sinusoidal_encoding(fine, d, { base: base }), waveDimensions(d),
            pos, t);
      vector(ax[2], P[pos], label(t.title_vector, { pos: pos }), t);
    }
  });
})(window.posenc);
