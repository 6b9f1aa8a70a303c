/* Live figures of chapter 7: posenc_plots/ch07_extension.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n), which
   holds the methods' names too (t.none, t.linear, ...). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;
  var label = posenc.label;
  var METHODS = ["none", "linear", "ntk", "yarn", "llama3"];
  var COLORS = { none: "C3", linear: "C0", ntk: "C2", yarn: "C1", llama3: "C4" };
  var HEAD_DIM = 128, BASE = 500000.0;

  /** 500000.0 -> '500,000'; 3.5 -> '3.5'. */
  function fmtNum(x) {
    return Number.isInteger(x) ? fmt(x, ",d") : fmt(x, ".4g");
  }

  function scaledFrequencies(method, factor, L) {
    if (method === "none") return core.rope_frequencies(HEAD_DIM, { base: BASE });
    var scaling = { type: method, factor: factor };
    if (method === "yarn" || method === "llama3") scaling.original_max_position_embeddings = L;
    return core.rope_frequencies(HEAD_DIM, { base: BASE, scaling: scaling });
  }

  posenc.register("ch07_extension:ch07_turns", {
    figsize: [8, 4.2],
    draw: function (fig, p, t) {
      var s = p.factor, L = p.original_length;
      var ax = fig.subplots(1, 1);
      var theta = core.rope_frequencies(HEAD_DIM, { base: BASE });
      var i = np.arange(theta.length);
      var train = theta.map(function (t) { return L * t / (2 * Math.PI); });
      var slow = i.filter(function (k) { return train[k] < 1; });
      if (slow.length) {
        ax.axvspan(slow[0] - 0.5, i[i.length - 1] + 0.5, { color: "0.92",
          label: label(t.span, { count: slow.length }) });
      }
      METHODS.forEach(function (method) {
        var t2 = scaledFrequencies(method, s, L);
        ax.plot(i, t2.map(function (t) { return s * L * t / (2 * Math.PI); }), {
          color: COLORS[method], lw: method === "linear" ? 3.5 : 1.4, gid: method,
          label: label(t.method, { method: t[method], sL: fmtNum(s * L) }) });
      });
      ax.plot(i, train, { color: "k", lw: 1.4, ls: "--", gid: "training",
                          label: label(t.training, { L: fmtNum(L) }) });
      ax.axhline(1, { color: "0.4", ls: ":", lw: 1 });
      ax.set_yscale("log");
      ax.set_xlim(-0.5, i[i.length - 1] + 0.5);
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_title(label(t.title, { head_dim: HEAD_DIM, base: fmtNum(BASE), L: fmtNum(L),
                                    s: fmtNum(s) }));
      ax.legend({ loc: "lower left", fontsize: "small" });
    }
  });

  posenc.register("ch07_extension:ch07_wavelengths", {
    figsize: [11, 4.2],
    draw: function (fig, p, t) {
      var s = p.factor, L = p.original_length;
      var axes = fig.subplots(1, 2), ax1 = axes[0], ax2 = axes[1];
      var theta = core.rope_frequencies(HEAD_DIM, { base: BASE });
      var lam = theta.map(function (t) { return 2 * Math.PI / t; });
      METHODS.forEach(function (method) {
        var t2 = scaledFrequencies(method, s, L);
        var style = { color: COLORS[method], lw: 1.4, label: t[method] };
        if (method === "none") { style.color = "0.5"; style.ls = "--"; style.lw = 1; }
        ax1.plot(lam, t2.map(function (t) { return 2 * Math.PI / t; }),
                 Object.assign({ gid: method }, style));
        if (method !== "none") {
          ax2.plot(lam, theta.map(function (t, k) { return t / t2[k]; }),
                   Object.assign({ gid: method + "-stretch", marker: ".", ms: 3, ls: "-" }, style));
        }
      });
      ax1.set_xscale("log");
      ax1.set_yscale("log");
      ax1.set_xlabel(t.xlabel);
      ax1.set_ylabel(t.ylabel_new);
      ax1.legend({ loc: "upper left", fontsize: "small" });
      [32, 4, 1].forEach(function (turns) {
        [ax1, ax2].forEach(function (a) {
          a.axvline(L / turns, { color: "0.6", ls: ":", lw: 0.9 });
        });
        ax2.text(L / turns, 1.02, t["turns_" + turns],
                 { transform: "xaxis", ha: turns === 1 ? "left" : "right",
                   fontsize: 9, color: "0.35" });
      });
      ax2.set_xscale("log");
      ax2.set_yscale("log", { base: 2 });
      ax2.set_ylim(0.9, 1.12 * s);
      ax2.set_xlabel(t.xlabel);
      ax2.set_ylabel(t.ylabel_stretch);
      ax2.legend({ loc: "lower right", fontsize: "small" });
      fig.suptitle(label(t.suptitle, { head_dim: HEAD_DIM, base: fmtNum(BASE),
                                       L: fmtNum(L), s: fmtNum(s) }));
    }
  });
})(window.posenc);
