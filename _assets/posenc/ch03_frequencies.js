/* Live figures of chapter 3: posenc_plots/ch03_frequencies.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;
  var label = posenc.label;

  /** posenc_plots.ch03_frequencies._fmt: 10000.0 -> '10,000';
   *  17782.8 -> '17,783'; 3.16228 -> '3.162'; 1e12 -> '$10^{12}$'. */
  function fmtBase(base) {
    if (base >= 1e9) {
      var e = Math.floor(Math.log10(base)), m = base / Math.pow(10, e);
      if (Math.abs(m - 1) <= 1e-8 + 1e-5) return "$10^{" + e + "}$";
      return "$" + fmt(m, ".3g") + " \\times 10^{" + e + "}$";
    }
    if (Number.isInteger(base) || base >= 1000) return fmt(base, ",.0f");
    return fmt(base, ".4g");
  }

  posenc.register("ch03_frequencies:ch03_wavelengths", {
    figsize: [8, 3.6],
    draw: function (fig, p, t) {
      var d = p.d_model, base = p.base, seqLen = p.seq_len;
      var ax = fig.subplots(1, 1);
      var lam = core.wavelengths(d, { base: base });
      var i = np.arange(lam.length);
      ax.plot(i, lam, { color: "0.6", lw: 1 });
      var fast = i.filter(function (k) { return !(lam[k] > seqLen); });
      var slow = i.filter(function (k) { return lam[k] > seqLen; });
      var at = function (idx) { return idx.map(function (k) { return lam[k]; }); };
      ax.scatter(fast, at(fast), { s: 10, color: "C0",
        label: label(t.fast, { seq_len: seqLen, count: fast.length }) });
      ax.scatter(slow, at(slow), { s: 10, color: "C1",
        label: label(t.slow, { seq_len: seqLen, count: slow.length }) });
      ax.axhline(2 * Math.PI, { color: "k", ls: "--", lw: 0.8 });
      ax.axhline(2 * Math.PI * base, { color: "C3", ls: "--", lw: 0.8, label: t.bound });
      ax.axhline(seqLen, { color: "k", ls: ":", lw: 0.8 });
      ax.set_yscale("log");
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_title(label(t.title, { d_model: d, base: fmtBase(base),
                                    longest: lam[lam.length - 1] }));
      ax.legend({ loc: "upper left", fontsize: "small" });
    }
  });

  posenc.register("ch03_frequencies:ch03_distance", {
    figsize: [8, 3.2],
    draw: function (fig, p, t) {
      var d = p.d_model, base = p.base, n = 1000;
      var ax = fig.subplots(1, 1);
      var P = core.sinusoidal_encoding(n, d, { base: base });
      var dist = P.map(function (row) {
        var s = 0;
        for (var c = 0; c < row.length; c++) {
          var v = row[c] - P[0][c];
          s += v * v;
        }
        return Math.sqrt(s);
      });
      ax.plot(np.arange(n), dist, { lw: 0.8 });
      ax.axhline(dist[1], { color: "k", ls: "--", lw: 0.8,
        label: label(t.neighbour, { distance: dist[1] }) });
      var nearest = 1;
      for (var k = 2; k < n; k++) if (dist[k] < dist[nearest]) nearest = k;
      ax.plot([nearest], [dist[nearest]], { marker: "o", color: "C3",
        label: label(t.nearest, { nearest: nearest, distance: dist[nearest] }) });
      ax.legend({ loc: "lower right", fontsize: "small" });
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_ylim(0, null);
      ax.set_title(label(t.title, { d_model: d, base: fmtBase(base) }));
    }
  });
})(window.posenc);
