/* Live figures of chapter 3: posenc_plots/ch03_frequencies.py, in JavaScript. */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;

  /** 10000.0 -> '10,000'; 1e12 -> '1e+12'; 3.16 -> '3.162'. */
  function fmtBase(base) {
    if (Number.isInteger(base) && base < 1e9) return fmt(base, ",d");
    return fmt(base, ".4g");
  }

  posenc.register("ch03_frequencies:ch03_wavelengths", {
    figsize: [8, 3.6],
    draw: function (fig, p) {
      var d = p.d_model, base = p.base, seqLen = p.seq_len;
      var ax = fig.subplots(1, 1);
      var lam = core.wavelengths(d, { base: base });
      var i = np.arange(lam.length);
      ax.plot(i, lam, { color: "0.6", lw: 1 });
      var fast = i.filter(function (k) { return !(lam[k] > seqLen); });
      var slow = i.filter(function (k) { return lam[k] > seqLen; });
      var at = function (idx) { return idx.map(function (k) { return lam[k]; }); };
      ax.scatter(fast, at(fast), { s: 10, color: "C0",
        label: "wavelength <= " + fmt(seqLen, "g") + " (" + fast.length + " pairs)" });
      ax.scatter(slow, at(slow), { s: 10, color: "C1",
        label: "wavelength > " + fmt(seqLen, "g") + " (" + slow.length + " pairs)" });
      ax.axhline(2 * Math.PI, { color: "k", ls: "--", lw: 0.8 });
      ax.axhline(2 * Math.PI * base, { color: "C3", ls: "--", lw: 0.8,
        label: "$2\\pi\\cdot$base (never reached)" });
      ax.axhline(seqLen, { color: "k", ls: ":", lw: 0.8 });
      ax.set_yscale("log");
      ax.set_xlabel("pair index i");
      ax.set_ylabel("wavelength $\\lambda_i$ (positions)");
      ax.set_title("d_model=" + d + ", base=" + fmtBase(base) + ": longest wavelength " +
                   fmt(lam[lam.length - 1], ",.1f"));
      ax.legend({ loc: "upper left", fontsize: "small" });
    }
  });

  posenc.register("ch03_frequencies:ch03_distance", {
    figsize: [8, 3.2],
    draw: function (fig, p) {
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
        label: "neighbour distance " + fmt(dist[1], ".3f") });
      var nearest = 1;
      for (var k = 2; k < n; k++) if (dist[k] < dist[nearest]) nearest = k;
      ax.plot([nearest], [dist[nearest]], { marker: "o", color: "C3",
        label: "nearest: \u0394=" + nearest + ", distance " + fmt(dist[nearest], ".3f") });
      ax.legend({ loc: "lower right", fontsize: "small" });
      ax.set_xlabel("shift $\\Delta$");
      ax.set_ylabel("$\\Vert PE(\\Delta) - PE(0) \\Vert$");
      ax.set_ylim(0, null);
      ax.set_title("d_model=" + d + ", base=" + fmtBase(base));
    }
  });
})(window.posenc);
