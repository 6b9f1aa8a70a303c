/* Live figure of chapter 8: posenc_plots/ch08_lab.py (plot_explore), in
   JavaScript. It draws the committed results (results/ch08/full), which
   data/ch08-results.js carries as one float64 array laid out as
   posenc_plots.ch08_lab.explore_data describes. Its words are the
   figure's label table, t. */
(function (posenc) {
  "use strict";
  var label = posenc.label;
  var VARIANTS = ["none", "sinusoidal", "learned", "rope", "alibi", "t5",
                  "pi", "ntk", "yarn", "pi_finetune", "finetune"];
  var COLORS = { none: "0.45", sinusoidal: "C0", learned: "C9", rope: "C3",
                 alibi: "C2", t5: "C1", pi: "C0", ntk: "C2", yarn: "C1",
                 pi_finetune: "C4", finetune: "0.35" };
  var DATA = "ch08-results";

  /** The results of one variant: {lengths, byLength, byPosition}. */
  function unpack(index) {
    var a = posenc.data.get(DATA);
    if (a[0] !== 1) throw new Error(DATA + ": unknown layout " + a[0]);
    var L = a[1], n = a[2], seeds = a[3], nl = a[4], nv = a[5];
    if (nv !== VARIANTS.length) throw new Error(DATA + ": " + nv + " variants");
    var lengths = Array.prototype.slice.call(a, 6, 6 + nl);
    var block = seeds * nl + seeds * n;
    var at = 6 + nl + index * block, byLength = [], byPosition = [];
    for (var k = 0; k < seeds; k++) {
      byLength.push(Array.prototype.slice.call(a, at + k * nl, at + (k + 1) * nl));
    }
    at += seeds * nl;
    for (k = 0; k < seeds; k++) {
      byPosition.push(Array.prototype.slice.call(a, at + k * n, at + (k + 1) * n));
    }
    // the lengths this variant was evaluated at (the rescalings: past L)
    var keep = lengths.map(function (m, j) { return !isNaN(byLength[0][j]); });
    return {
      L: L, n: n, seeds: seeds, allLengths: lengths,
      lengths: lengths.filter(function (m, j) { return keep[j]; }),
      byLength: byLength.map(function (row) {
        return row.filter(function (v, j) { return keep[j]; });
      }),
      byPosition: byPosition
    };
  }

  /** Means over bins of `width` positions (the last may be shorter). */
  function bins(row, width) {
    var out = [];
    for (var a = 0; a < row.length; a += width) {
      var s = 0, end = Math.min(a + width, row.length);
      for (var i = a; i < end; i++) s += row[i];
      out.push(s / (end - a));
    }
    return out;
  }

  function mean(rows) {
    return rows[0].map(function (v, j) {
      var s = 0;
      rows.forEach(function (row) { s += row[j]; });
      return s / rows.length;
    });
  }

  posenc.register("ch08_lab:explore_results", {
    figsize: [11, 4.4],
    needs: function () { return [DATA]; },
    draw: function (fig, p, t) {
      var v = Math.round(p.variant), o = Math.round(p.other), w = Math.round(p.bin_width);
      var name = VARIANTS[v], oname = VARIANTS[o];
      var mine = unpack(v), theirs = unpack(o);
      var axes = fig.subplots(1, 2), left = axes[0], right = axes[1];
      var starts = [];
      for (var a = 0; a < mine.n; a += w) starts.push(a);
      var binned = mine.byPosition.map(function (row) { return bins(row, w); });
      var otherBinned = theirs.byPosition.map(function (row) { return bins(row, w); });
      left.axvspan(0, mine.L, { color: "0.9", label: t.train });
      binned.forEach(function (row, k) {
        left.plot(starts, row, { color: COLORS[name], lw: 0.8, alpha: 0.6,
                                 gid: name + "-seed" + k,
                                 label: k === 0 ? t.seeds : "_nolegend_" });
      });
      left.plot(starts, mean(binned), { color: COLORS[name], lw: 2, gid: name,
                                        label: label(t.mean, { seeds: binned.length }) });
      left.plot(starts, mean(otherBinned), { color: COLORS[oname], lw: 1.5, ls: "--",
                                             gid: "other-" + oname,
                                             label: label(t.other_mean, { index: o }) });
      left.set_xlim(0, mine.n);
      left.set_xlabel(label(t.x_left, { n: mine.n }));
      left.set_ylabel(t.y);
      left.set_title(label(t.title_left, { w: w }));
      left.legend({ fontsize: "small", loc: "upper left" });

      right.axvline(mine.L, { color: "k", ls: ":", lw: 1, label: t.L });
      mine.byLength.forEach(function (row, k) {
        right.plot(mine.lengths, row, { color: COLORS[name], lw: 0.8, alpha: 0.6,
                                        marker: "o", ms: 3, ls: "-",
                                        gid: name + "-seed" + k, label: "_nolegend_" });
      });
      right.plot(mine.lengths, mean(mine.byLength), { color: COLORS[name], lw: 2,
                                                      marker: "o", ms: 5, ls: "-",
                                                      gid: name, label: "_nolegend_" });
      right.plot(theirs.lengths, mean(theirs.byLength), { color: COLORS[oname], lw: 1.5,
                                                          ls: "--", marker: "o", ms: 4,
                                                          gid: "other-" + oname,
                                                          label: "_nolegend_" });
      right.set_xscale("log", { base: 2 });
      right.set_xticks(mine.allLengths, mine.allLengths.map(String));
      right.set_xlim(mine.allLengths[0] / Math.pow(2, 0.25),
                     mine.allLengths[mine.allLengths.length - 1] * Math.pow(2, 0.25));
      right.set_xlabel(t.x_right);
      right.set_title(t.title_right);
      right.legend({ fontsize: "small", loc: "upper left" });
      fig.suptitle(label(t.suptitle, { index: v, name: t["v_" + name],
                                       other_index: o, other: t["v_" + oname] }));
    }
  });
})(window.posenc);
