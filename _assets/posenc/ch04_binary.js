/* Live figures of chapter 4: posenc_plots/ch04_binary.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, label = posenc.label;

  posenc.register("ch04_binary:ch04_position", {
    figsize: [10, 3.4],
    draw: function (fig, p, t) {
      var pos = p.pos, nBits = p.n_bits, d = p.d_model, base = 10000.0;
      var ax = fig.subplots(1, 2), axB = ax[0], axP = ax[1];
      var shown = pos % Math.pow(2, nBits);
      var bits = core.binary_encoding([shown], nBits)[0];
      var row = core.sinusoidal_encoding([pos], d, { base: base })[0];
      axB.bar(np.arange(nBits), bits, { color: "0.3" });
      axB.set_ylim(-1.05, 1.05);
      axB.axhline(0, { color: "k", lw: 0.6 });
      axB.set_xlabel(t.xlabel_bits);
      axB.set_ylabel(t.ylabel_bits);
      var written = bits.slice().reverse().join("");
      var title = shown === pos ? label(t.title_bits, { pos: pos, bits: written }) :
        label(t.title_overflow, { pos: pos, n_bits: nBits, shown: shown, bits: written });
      axB.set_title(title);
      var colors = np.arange(d).map(function (k) { return k % 2 === 0 ? "C0" : "C1"; });
      axP.bar(np.arange(d), row, { color: colors });
      axP.set_ylim(-1.05, 1.05);
      axP.axhline(0, { color: "k", lw: 0.6 });
      axP.set_xlabel(t.xlabel_encoding);
      axP.set_ylabel(t.ylabel_encoding);
      axP.set_title(label(t.title_encoding, { pos: pos, d_model: d, base: base }));
    }
  });
})(window.posenc);
