/* Live figures of chapter 5: posenc_plots/ch05_relative.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, label = posenc.label;
  var COLS = 8;  // heads per row in a mosaic

  /** Tile matrices (h, n, n) into one image, NaN between the tiles. */
  function mosaic(stack) {
    var h = stack.length, n = stack[0].length, cols = Math.min(COLS, h);
    var rows = Math.ceil(h / cols);
    var image = [];
    for (var r = 0; r < rows * (n + 1) - 1; r++) {
      image.push(new Array(cols * (n + 1) - 1).fill(NaN));
    }
    stack.forEach(function (M, head) {
      var r0 = Math.floor(head / cols) * (n + 1), c0 = (head % cols) * (n + 1);
      for (var i = 0; i < n; i++) for (var j = 0; j < n; j++) image[r0 + i][c0 + j] = M[i][j];
    });
    return image;
  }

  function labelTiles(ax, n, h, texts) {
    var cols = Math.min(COLS, h);
    texts.forEach(function (text, head) {
      var r = Math.floor(head / cols), c = head % cols;
      // above the first row of tiles, as in matplotlib; the gap between two
      // rows is one pixel row of the image, too low for a label, so lower
      // rows carry theirs inside the top of the tile, on a light box
      if (r === 0) {
        ax.text(c * (n + 1) + (n - 1) / 2, -0.7, text,
                { ha: "center", va: "bottom", fontsize: 8 });
      } else {
        ax.text(c * (n + 1) + (n - 1) / 2, r * (n + 1) - 0.5, text,
                { ha: "center", va: "top", fontsize: 8, halo: true });
      }
    });
    ax.set_xticks([]);
    ax.set_yticks([]);
  }

  function scaled(A, s) { return np.map2(A, function (v) { return v / s; }); }

  posenc.register("ch05_relative:ch05_shift_matrix", {
    figsize: [5.2, 4.4],
    draw: function (fig, p, t) {
      var M = core.relative_shift_matrix(p.k, p.d_model, { base: p.base });
      var ax = fig.subplots(1, 1);
      var im = ax.imshow(M, { cmap: "RdBu_r", vmin: -1, vmax: 1 });
      fig.colorbar(im, ax);
      ax.set_title(label(t.title, { k: p.k, d_model: p.d_model }));
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
    }
  });

  posenc.register("ch05_relative:ch05_dot_vs_distance", {
    figsize: [7.0, 3.8],
    draw: function (fig, p, t) {
      var d = p.d_model, base = p.base, maxDistance = 60;
      var delta = np.arange(-maxDistance, maxDistance + 1);
      var omega = core.frequencies(d, { base: base });
      var ax = fig.subplots(1, 1);
      ax.plot(delta, delta.map(function (t) {
        var s = 0;
        for (var i = 0; i < omega.length; i++) s += Math.cos(t * omega[i]);
        return s;
      }), { color: "0.3", lw: 1.2, label: t.closed });
      [[60, "o"], [500, "s"], [3000, "^"]].forEach(function (am) {
        var anchor = am[0];
        var P = core.sinusoidal_encoding(delta.map(function (t) { return anchor + t; }), d, { base: base });
        var ref = core.sinusoidal_encoding([anchor], d, { base: base })[0];
        ax.plot(delta, P.map(function (row) { return np.dot(row, ref); }),
                { marker: am[1], ms: 3.5, mfc: "none", ls: "none",
                  label: label(t.anchor, { m: anchor }) });
      });
      ax.axhline(0, { color: "0.8", lw: 0.8, zorder: 0 });
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_title(label(t.title, { d_model: d, base: base }));
      ax.legend({ fontsize: 8, loc: "upper right" });
    }
  });

  posenc.register("ch05_relative:ch05_projected_scores", {
    figsize: [11.5, 3.9],
    needs: function (p) { return ["normals-" + p.seed]; },
    draw: function (fig, p, t) {
      var d = p.d_model, k = p.k, seed = p.seed, n = 48;
      var P = core.sinusoidal_encoding(n, d);
      var z = posenc.normals(seed, 2 * d * d), rt = Math.sqrt(d);
      var wq = scaled(np.reshape(z, d, d, 0), rt), wk = scaled(np.reshape(z, d, d, d * d), rt);
      var M = core.relative_shift_matrix(k, d);
      var scale = Math.sqrt(d), Pt = np.transpose(P);
      var panels = [
        [scaled(np.matmul(P, Pt), scale), t.plain],
        [scaled(np.matmul(np.matmul(P, wq), np.transpose(np.matmul(P, wk))), scale),
         label(t.random, { seed: seed })],
        [scaled(np.matmul(P, np.transpose(np.matmul(P, np.transpose(M)))), scale),
         label(t.shift, { k: k })]
      ];
      var axes = fig.subplots(1, 3);
      panels.forEach(function (panel, i) {
        var im = axes[i].imshow(panel[0], { cmap: "viridis" });
        fig.colorbar(im, axes[i]);
        axes[i].set_title(panel[1]);
        axes[i].set_xlabel(t.xlabel);
      });
      axes[0].set_ylabel(t.ylabel);
    }
  });

  posenc.register("ch05_relative:ch05_shaw_index", {
    figsize: [4.8, 4.2],
    draw: function (fig, p, t) {
      var n = p.n, k = p.max_distance;
      var R = core.relative_positions(n, { max_distance: k });
      var ax = fig.subplots(1, 1);
      var lim = Math.max(k, 1);
      ax.imshow(R, { cmap: "RdBu_r", vmin: -lim, vmax: lim });
      if (n <= 16) {
        for (var i = 0; i < n; i++) {
          for (var j = 0; j < n; j++) {
            var dark = Math.abs(R[i][j]) > 0.6 * lim;
            ax.text(j, i, String(R[i][j]), { ha: "center", va: "center", fontsize: 8,
                                              color: dark ? "white" : "black" });
          }
        }
      }
      ax.set_title(label(t.title, { max_distance: k, rows: 2 * k + 1 }));
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
    }
  });

  /** np.unique(np.geomspace(16, 100_000, 60).astype(np.int64)). */
  function maxLengths() {
    var a = Math.log10(16), b = Math.log10(100000);
    var y = np.linspace(a, b, 60).map(function (v) { return Math.pow(10.0, v); });
    y[0] = 16;
    y[59] = 100000;
    var seen = {};
    y.forEach(function (v) { seen[Math.trunc(v)] = true; });
    return Object.keys(seen).map(Number).sort(function (u, v) { return u - v; });
  }

  posenc.register("ch05_relative:ch05_memory", {
    figsize: [6.4, 4.0],
    draw: function (fig, p, t) {
      var d = p.d_model, k = p.max_distance, L = maxLengths();
      var ax = fig.subplots(1, 1);
      var rows = [
        [L.map(function (m) { return m * m * d; }), t.full],
        [L.map(function (m) { return (2 * m - 1) * d; }), t.relative],
        [L.map(function () { return (2 * k + 1) * d; }), label(t.clipped, { max_distance: k })]
      ];
      rows.forEach(function (row) {
        ax.loglog(L, row[0].map(function (c) { return 4.0 * c; }), { label: row[1] });
      });
      [[Math.pow(2, 30), "1 GiB"], [Math.pow(2, 40), "1 TiB"]].forEach(function (sn) {
        ax.axhline(sn[0], { color: "0.75", lw: 0.8, ls: "--" });
        ax.text(L[L.length - 1], sn[0] * 1.3, sn[1], { fontsize: 8, color: "0.4", ha: "right" });
      });
      ax.axvline(5000, { color: "0.75", lw: 0.8, ls: ":" });
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
      ax.set_title(label(t.title, { d_model: d }));
      ax.legend({ fontsize: 8, loc: "upper left" });
    }
  });

  posenc.register("ch05_relative:ch05_t5_buckets", {
    figsize: [11.0, 3.8],
    draw: function (fig, p, t) {
      var nb = p.num_buckets, md = p.max_distance;
      var span = Math.trunc(1.5 * md);
      var r = np.arange(-span, span + 1);
      var axes = fig.subplots(1, 2);
      [true, false].forEach(function (bidirectional, k) {
        var ax = axes[k];
        var b = core.t5_relative_position_bucket(r, {
          bidirectional: bidirectional, num_buckets: nb, max_distance: md });
        ax.step(r, b, { where: "mid", lw: 1.2 });
        var exact = Math.floor((bidirectional ? Math.floor(nb / 2) : nb) / 2);
        [-md, -exact, exact, md].forEach(function (x) {
          if (bidirectional || x < 0) ax.axvline(x, { color: "0.75", lw: 0.8, ls: "--" });
        });
        var kind = bidirectional ? t.bidirectional : t.causal;
        ax.set_title(label(t.title, { kind: kind, num_buckets: nb, max_distance: md }));
        ax.set_xlabel(t.xlabel);
      });
      axes[0].set_ylabel(t.ylabel);
    }
  });

  posenc.register("ch05_relative:ch05_alibi_bias", {
    figsize: [12.0, 3.2],
    draw: function (fig, p, t) {
      var h = p.n_heads, n = p.n;
      var B = core.alibi_bias(n, h), slopes = core.alibi_slopes(h);
      var ax = fig.subplots(1, 1);
      var im = ax.imshow(mosaic(B), { cmap: "magma" });
      fig.colorbar(im, ax, { label: t.colorbar });
      labelTiles(ax, n, h, slopes.map(function (m) {
        return label(t.tile, { exponent: Math.log2(m) });
      }));
      ax.set_title(label(t.title, { n: n }));
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
    }
  });

  posenc.register("ch05_relative:ch05_alibi_attention", {
    figsize: [12.0, 3.2],
    needs: function () { return ["normals-0"]; },
    draw: function (fig, p, t) {
      var h = p.n_heads, n = p.n, content = p.content, d = 8, rt = Math.sqrt(d);
      var z = posenc.normals(0, n * d + 2 * d * d);
      var x = np.reshape(z, n, d, 0);
      var wq = np.map2(np.reshape(z, d, d, n * d), function (v) { return content * v / rt; });
      var wk = scaled(np.reshape(z, d, d, n * d + d * d), rt);
      var eye = np.map2(np.zeros(d, d), function (_, i, j) { return i === j ? 1 : 0; });
      var B = core.alibi_bias(n, h);
      var A = B.map(function (Bh) {
        return core.self_attention(x, wq, wk, eye, { bias: Bh, causal: true })[1];
      });
      var ax = fig.subplots(1, 1);
      var im = ax.imshow(mosaic(A), { cmap: "viridis", vmin: 0, vmax: 1 });
      fig.colorbar(im, ax, { label: t.colorbar });
      labelTiles(ax, n, h, np.arange(h).map(function (k) {
        return label(t.tile, { head: k + 1 });
      }));
      ax.set_title(label(t.title, { content: content }));
      ax.set_xlabel(t.xlabel);
      ax.set_ylabel(t.ylabel);
    }
  });
})(window.posenc);
