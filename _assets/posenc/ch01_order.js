/* Live figures of chapter 1: posenc_plots/ch01_order.py, in JavaScript.
   Their words are the figure's label table, t (posenc_plots.i18n). */
(function (posenc) {
  "use strict";
  var core = posenc.core, np = posenc.np, fmt = posenc.fmt.format;
  var label = posenc.label;
  var N_WORDS = 5;
  var FIRST = [0, 1, 2, 3, 4], SECOND = [2, 1, 0, 3, 4];
  var SEED = 0;

  /** random_parameters(5, d, d/2, seed): E, then W_Q, W_K, W_V / sqrt(d). */
  function randomParameters(nWords, d, dk) {
    var z = posenc.normals(SEED, nWords * d + 3 * d * dk);
    var E = np.reshape(z, nWords, d, 0);
    var s = Math.sqrt(d), w = [];
    for (var m = 0; m < 3; m++) {
      w.push(np.map2(np.reshape(z, d, dk, nWords * d + m * d * dk),
                     function (v) { return v / s; }));
    }
    return [E, w[0], w[1], w[2]];
  }

  function ticketWeights(amplitude, d) {
    var par = randomParameters(N_WORDS, d, Math.floor(d / 2));
    var E = par[0];
    var P = core.sinusoidal_encoding(FIRST.length, d);
    var x = function (order) {
      return order.map(function (word, r) {
        return E[word].map(function (e, c) { return e + amplitude * P[r][c]; });
      });
    };
    var A1 = core.self_attention(x(FIRST), par[1], par[2], par[3])[1];
    var A2 = core.self_attention(x(SECOND), par[1], par[2], par[3])[1];
    // slot of each word in the second phrase: argsort(SECOND)
    var slot = SECOND.map(function (_, i) { return i; })
      .sort(function (a, b) { return SECOND[a] - SECOND[b]; });
    var A2w = slot.map(function (r) { return slot.map(function (c) { return A2[r][c]; }); });
    return [A1, A2w];
  }

  posenc.register("ch01_order:attention_with_position", {
    figsize: [11, 4],
    needs: function () { return ["normals-" + SEED]; },
    draw: function (fig, p, t) {
      var d = p.d_model, amplitude = p.amplitude;
      var words = np.arange(N_WORDS).map(function (k) { return t["word_" + k]; });
      var A = ticketWeights(amplitude, d), A1 = A[0], A2 = A[1];
      var diff = np.map2(A1, function (v, i, j) { return Math.abs(v - A2[i][j]); });
      var dmax = Math.max.apply(null, diff.map(np.max));
      var panels = [
        [A1, t.first, "viridis", 1.0],
        [A2, t.second, "viridis", 1.0],
        [diff, label(t.difference, { max: dmax }), "magma", 0.5]
      ];
      var ax = fig.subplots(1, 3);
      var ticks = np.arange(N_WORDS);
      panels.forEach(function (panel, k) {
        var axis = ax[k], data = panel[0], vmax = panel[3];
        axis.imshow(data, { cmap: panel[2], vmin: 0.0, vmax: vmax });
        axis.set_xticks(ticks, words, { rotation: 45 });
        axis.set_yticks(ticks, words);
        axis.set_xlabel(t.xlabel);
        axis.set_title(panel[1]);
        data.forEach(function (row, r) {
          row.forEach(function (value, c) {
            axis.text(c, r, fmt(value, ".2f"), {
              ha: "center", va: "center", fontsize: 8,
              color: value > 0.6 * vmax ? "black" : "white"
            });
          });
        });
      });
      ax[0].set_ylabel(t.ylabel);
      fig.suptitle(label(t.suptitle, { amplitude: amplitude, d_model: d }));
    }
  });
})(window.posenc);
