/* Live figures of chapter 9: posenc_plots/ch09_vision.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n).
   RoPE-Mixed's random initial frequencies come from numpy, through
   data/ch09-mixed.js (posenc_plots.ch09_vision.mixed_data). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;
  var label = posenc.label;
  var HEAD_DIM = 64, N_HEADS = 8;
  var SCHEMES = ["raster", "sincos", "axial", "mixed", "dinov3"];
  var MIXED = "ch09-mixed";
  // the base slider: 10^1 ... 10^5 in half decades (posenc_plots.ch09_vision)
  var BASE_MIN = 1, BASE_STEP = 0.5;

  function fmtBase(base) {
    return base >= 10 ? fmt(base, ",.0f") : fmt(base, ".3g");
  }

  /** freqs (N_HEADS, HEAD_DIM/2, 2) of the data file at this base. */
  function mixedFrequencies(base) {
    var k = Math.round((Math.log10(base) - BASE_MIN) / BASE_STEP);
    var per = N_HEADS * HEAD_DIM, all = posenc.data.get(MIXED), out = [];
    for (var h = 0; h < N_HEADS; h++) {
      var head = [];
      for (var i = 0; i < HEAD_DIM / 2; i++) {
        var at = k * per + h * HEAD_DIM + 2 * i;
        head.push([all[at], all[at + 1]]);
      }
      out.push(head);
    }
    return out;
  }

  /** posenc_plots.ch09_vision.scheme_angles: (heads, n, HEAD_DIM/2). */
  function schemeAngles(scheme, side, base) {
    var n = side * side, coords = [], k;
    for (k = 0; k < n; k++) coords.push([Math.floor(k / side), k % side]);
    if (scheme === "raster") {
      var omega = core.rope_frequencies(HEAD_DIM, { base: base });
      return [np.arange(n).map(function (p) {
        return omega.map(function (w) { return p * w; });
      })];
    }
    if (scheme === "axial") return [core.rope_axial_angles(coords, HEAD_DIM, { base: base })];
    if (scheme === "mixed") return core.rope_mixed_angles(coords, mixedFrequencies(base));
    var unit = core.normalized_patch_coordinates(side, side);
    return [core.dinov3_rope_angles(unit, HEAD_DIM, { base: base })];
  }

  /** posenc_plots.ch09_vision.similarity_map. */
  function similarityMap(scheme, side, row, col, base) {
    var k = row * side + col, flat, i;
    if (scheme === "sincos") {
      var P = core.sincos_2d_encoding(side, side, HEAD_DIM, { base: base });
      flat = P.map(function (p) { return np.dot(p, P[k]) / (HEAD_DIM / 2); });
    } else {
      var angles = schemeAngles(scheme, side, base);
      var unit = [];
      for (i = 0; i < HEAD_DIM; i++) unit.push(i % 2 === 0 ? 1.0 : 0.0);
      var x = angles.map(function (a) { return a.map(function () { return unit; }); });
      var R = core.apply_rope_angles(x, angles);
      flat = R[0].map(function () { return 0.0; });
      R.forEach(function (head) {
        var s = head.map(function (v) { return np.dot(v, head[k]) / (HEAD_DIM / 2); });
        s.forEach(function (v, j) { flat[j] += v; });
      });
      flat = flat.map(function (v) { return v / R.length; });
    }
    var S = [];
    for (i = 0; i < side; i++) S.push(flat.slice(i * side, (i + 1) * side));
    return S;
  }

  posenc.register("ch09_vision:ch09_similarity", {
    figsize: [8.2, 4.0],
    needs: function (p) { return SCHEMES[p.scheme] === "mixed" ? [MIXED] : []; },
    draw: function (fig, p, t) {
      var side = p.side, row = Math.min(p.row, side - 1), col = Math.min(p.col, side - 1);
      var base = p.base, name = SCHEMES[p.scheme];
      var axes = fig.subplots(1, 2), ax = axes[0], bx = axes[1];
      var S = similarityMap(name, side, row, col, base);
      var im = ax.imshow(S, { cmap: "RdBu_r", vmin: -1.0, vmax: 1.0 });
      fig.colorbar(im, ax);
      ax.plot([col], [row], { marker: "x", color: "k", ms: 9, ls: "none", gid: "query",
                              label: t.query });
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      var cols = np.arange(side);
      var lo = -Math.min(row, col), hi = side - Math.max(row, col);
      var diag = np.arange(lo, hi);
      var profiles = [
        [cols.map(function (c) { return c - col; }), S[row], "C0", "o", "row", t.along_row],
        [cols.map(function (r) { return r - row; }), S.map(function (r) { return r[col]; }),
         "C1", "s", "col", t.along_col],
        [diag, diag.map(function (d) { return S[row + d][col + d]; }), "C2", "^", "diag",
         t.along_diag]];
      profiles.forEach(function (pr) {
        bx.plot(pr[0], pr[1], { color: pr[2], lw: 1.6, marker: pr[3], ms: 3.5, gid: pr[4],
                                label: pr[5], ls: "-" });
      });
      bx.axhline(0.0, { color: "0.7", lw: 0.6 });
      bx.set_ylim(-1.05, 1.05);
      bx.set_xlim(-(side - 1) - 0.5, side - 0.5);
      bx.set_xlabel(t.offset);
      bx.set_ylabel(t.similarity);
      bx.legend({ loc: "lower left", fontsize: "small" });
      ax.set_title(label(t.title, { name: label(t[name], { n_heads: N_HEADS }), side: side,
                                    base: fmtBase(base) }));
      bx.set_title(label(t.profile_title, { row: row, col: col }));
    }
  });

  // ------------------------------------------------------------ M-RoPE
  var AXIS_COLOURS = ["C3", "C0", "C2"], AXIS_NAMES = ["time", "height", "width"];
  var VIDEO_PATCHES = [8, 8], TEMPORAL_PATCH_SIZE = 2;
  var MROPE_MODELS = [["Qwen2-VL", [16, 24, 24], "chunked", 1e6],
                      ["Qwen3-VL", [24, 20, 20], "interleaved", 5e5]];

  /** posenc_plots.ch09_vision.mrope_prompt. */
  function mropePrompt(imgH, imgW, frames, fps) {
    return [["text", 5], ["image", [1, imgH, imgW]], ["text", 4],
            ["video", [Math.floor(frames / TEMPORAL_PATCH_SIZE), VIDEO_PATCHES[0],
                       VIDEO_PATCHES[1]], TEMPORAL_PATCH_SIZE / fps],
            ["text", 4]];
  }

  function spans(segments) {
    var out = [], at = 0;
    segments.forEach(function (seg) {
      if (seg[0] === "text") { at += seg[1]; return; }
      var g = seg[1], n = g[0] * (g[1] / 2) * (g[2] / 2);
      out.push([seg[0], at, at + n]);
      at += n;
    });
    return out;
  }

  posenc.register("ch09_vision:ch09_mrope_ids", {
    figsize: [8.0, 6.6],
    draw: function (fig, p, t) {
      var nu = 4, segments = mropePrompt(p.img_h, p.img_w, p.frames, p.fps);
      var axes = fig.subplots(2, 1);
      ["qwen2-vl", "qwen2.5-vl"].forEach(function (variant, k) {
        var ax = axes[k];
        var ids = core.mrope_position_ids(segments, { variant: variant, tokens_per_second: nu });
        var n = ids[0].length, token = np.arange(n), top = -Infinity;
        ids.forEach(function (row) { row.forEach(function (v) { top = Math.max(top, v); }); });
        spans(segments).forEach(function (sp) {
          ax.axvspan(sp[1] - 0.5, sp[2] - 0.5, { color: sp[0] === "image" ? "0.92" : "0.85",
                                                 zorder: 0, label: t[sp[0]] });
        });
        ax.plot(token, token, { color: "0.5", ls: "--", lw: 1.0, gid: "token", label: t.token });
        ids.forEach(function (row, a) {
          ax.plot(token, row, { color: AXIS_COLOURS[a], lw: 1.3, gid: "thw"[a],
                                label: t[AXIS_NAMES[a]], ls: "-" });
        });
        ax.set_ylabel(t.ylabel);
        ax.set_title(label(t.title, { model: label(t[variant], { nu: nu }), n: n, top: top }));
        ax.legend({ loc: "upper left", fontsize: "small" });
      });
      axes[1].set_xlabel(t.xlabel);
    }
  });

  posenc.register("ch09_vision:ch09_pair_axes", {
    figsize: [8.2, 4.0],
    draw: function (fig, p, t) {
      var headDim = 128, spansAxis = [p.time_span, p.space_span, p.space_span];
      var axes = fig.subplots(1, 2);
      MROPE_MODELS.forEach(function (m, k) {
        var ax = axes[k], section = m[1], layout = m[2], base = m[3];
        var pairAxis = core.mrope_pair_axes(section, { layout: layout });
        var angles = core.mrope_angles([[spansAxis[0]], [spansAxis[1]], [spansAxis[2]]],
                                       headDim, section, { base: base, layout: layout })[0];
        var turns = angles.map(function (a) { return a / (2 * Math.PI); });
        AXIS_NAMES.forEach(function (name, axis) {
          var idx = np.arange(turns.length).filter(function (i) { return pairAxis[i] === axis; });
          ax.plot(idx, idx.map(function (i) { return turns[i]; }), {
            ls: "none", marker: "o", ms: 3.5, color: AXIS_COLOURS[axis], gid: name,
            label: label(t[name], { span: fmt(spansAxis[axis], ",.0f") }) });
        });
        ax.axhline(1.0, { color: "0.4", ls: ":", lw: 1.0 });
        ax.set_yscale("log");
        ax.set_xlabel(t.xlabel);
        var over = turns.filter(function (v) { return v > 1; }).length;
        ax.set_title(label(t.title, { model: m[0], layout: t[layout],
                                      section: "[" + section.join(", ") + "]", over: over }));
        ax.legend({ loc: "lower left", fontsize: "small" });
      });
      axes[0].set_ylabel(t.ylabel);
    }
  });
})(window.posenc);
