/* Live figure of chapter 10: posenc_plots/ch10_models.py, in JavaScript.
   Its words are the figure's label table, t (posenc_plots.i18n), which
   holds the conventions' names too (t.spread, t.proportional). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;
  var label = posenc.label;
  var CONVENTIONS = ["spread", "proportional"];

  /** posenc_plots.ch10_models._fmt: 1e6 -> '1,000,000'; 2.5e9 -> '2.5e+09'. */
  function fmtNum(x) {
    return x >= 1e8 ? fmt(x, ".2g") : fmt(x, ",.0f");
  }

  posenc.register("ch10_models:ch10_spectrum", {
    figsize: [8, 3.8],
    draw: function (fig, p, t) {
      var name = CONVENTIONS[p.convention], d = p.head_dim, base = p.base;
      var f = p.fraction;
      var ax = fig.subplots(1, 1);
      var omega = core.partial_rope_frequencies(d, f, { base: base, convention: name });
      var full = core.rope_frequencies(d, { base: base });
      var pairs = omega.length, i = np.arange(pairs);
      var rotated = i.filter(function (k) { return omega[k] > 0; });
      var count = rotated.length;
      if (count < pairs) {
        ax.axvspan(count - 0.5, pairs - 0.5, { color: "0.9", gid: "dropped",
          label: label(t.dropped, { count: pairs - count }) });
      }
      ax.plot(i, full.map(function (w) { return 2 * Math.PI / w; }),
              { color: "0.45", ls: "--", lw: 1.2, gid: "full", label: t.full });
      ax.scatter(rotated, rotated.map(function (k) { return 2 * Math.PI / omega[k]; }),
                 { s: 12, color: "C0", gid: "rotated",
                   label: label(t.rotated, { convention: t[name], count: count }) });
      ax.legend({ loc: "upper left", fontsize: "small" });
      ax.set_yscale("log");
      ax.set_xlim(-0.5, pairs - 0.5);
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      var title = count ?
        label(t.title, { convention: t[name], fraction: fmt(f, ".2f"), count: count,
                         pairs: pairs, longest: fmtNum(2 * Math.PI / omega[count - 1]) }) :
        label(t.title_none, { convention: t[name], fraction: fmt(f, ".2f") });
      ax.set_title(title);
    }
  });
})(window.posenc);
