/* Live figures of chapter 6: posenc_plots/ch06_rope.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;
  var label = posenc.label;
  var Q_PAIR = [1.0, 0.3], K_PAIR = [0.6, -0.5];

  function fmtBase(base) {
    return base >= 10 ? fmt(base, ",.0f") : fmt(base, ".3g");
  }

  posenc.register("ch06_rope:ch06_rotating_pair", {
    figsize: [5.6, 5.2],
    draw: function (fig, p, t) {
      var m = p.m, n = p.n, pair = p.pair, headDim = 8, base = 10000.0;
      var ax = fig.subplots(1, 1);
      var theta = core.rope_frequencies(headDim, { base: base })[pair];
      var q = core.apply_rope([Q_PAIR], [m], { frequencies: [theta] })[0];
      var k = core.apply_rope([K_PAIR], [n], { frequencies: [theta] })[0];
      var reps = np.arange(m + 1).map(function () { return Q_PAIR.slice(); });
      var track = core.apply_rope(reps, m + 1, { frequencies: [theta] });
      var circle = np.linspace(0, 2 * Math.PI, 200);
      [Math.hypot(Q_PAIR[0], Q_PAIR[1]), Math.hypot(K_PAIR[0], K_PAIR[1])].forEach(function (r) {
        ax.plot(circle.map(function (t) { return r * Math.cos(t); }),
                circle.map(function (t) { return r * Math.sin(t); }), { color: "0.85", lw: 0.8 });
      });
      ax.plot([0, Q_PAIR[0]], [0, Q_PAIR[1]], { color: "C0", ls: ":", lw: 1.2, label: t.q0 });
      ax.plot([0, K_PAIR[0]], [0, K_PAIR[1]], { color: "C1", ls: ":", lw: 1.2, label: t.k0 });
      ax.plot(track.map(function (t) { return t[0]; }), track.map(function (t) { return t[1]; }),
              { marker: "o", color: "C0", ms: 3, alpha: 0.5, gid: "q_track" });
      ax.plot([0, q[0]], [0, q[1]], { color: "C0", lw: 2.5, marker: "o", markevery: [1],
                                      gid: "q_rotated", label: label(t.q, { m: m }), ls: "-" });
      ax.plot([0, k[0]], [0, k[1]], { color: "C1", lw: 2.5, marker: "o", markevery: [1],
                                      gid: "k_rotated", label: label(t.k, { n: n }), ls: "-" });
      ax.set_aspect("equal");
      ax.set_xlim(-1.25, 1.25);
      ax.set_ylim(-1.25, 1.25);
      ax.axhline(0, { color: "0.7", lw: 0.5 });
      ax.axvline(0, { color: "0.7", lw: 0.5 });
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_title(label(t.title, { pair: pair, theta: theta, score: np.dot(q, k),
                                    distance: n - m }));
      ax.legend({ loc: "lower left", fontsize: "small" });
    }
  });

  posenc.register("ch06_rope:ch06_decay_bound", {
    figsize: [7, 3.6],
    draw: function (fig, p, t) {
      var headDim = p.head_dim, base = p.base, md = p.max_distance;
      var ax = fig.subplots(1, 1);
      var B = core.rope_decay_bound(md + 1, headDim, { base: base });
      ax.plot(np.arange(md + 1), B, { color: "C0", gid: "bound" });
      ax.axhline(B[0], { color: "0.5", ls: "--", lw: 0.8 });
      ax.set_xlim(0, md);
      ax.set_ylim(0, 1.05 * B[0]);
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_title(label(t.title, { head_dim: headDim, base: fmtBase(base), first: B[0],
                                    last: B[md], max_distance: md }));
    }
  });
})(window.posenc);
