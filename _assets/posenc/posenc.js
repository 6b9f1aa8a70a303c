/*
 * posenc.js: the live figures of the positional-encoding book.
 *
 * Plain JavaScript, no dependencies, no build step. Four parts:
 *
 *   posenc.core   the formulas of posenc_core.py, function for function,
 *                 same names and keyword arguments (as an options object),
 *                 float64 throughout; the browser tests compare them with
 *                 posenc_core to 1e-12 on a grid of parameters.
 *   posenc.fmt    Python's str.format for numbers (",", ".3g", ".2f", ...),
 *                 exact (round half to even on the binary value), so that
 *                 titles and readouts read as in the matplotlib figures.
 *   posenc.plot   a small canvas plotter with matplotlib's vocabulary
 *                 (imshow, plot, bar, axhline, legend, colorbar, ...). Every
 *                 figure keeps a record of the data it drew, shaped like
 *                 the matplotlib figure's artists, for the tests.
 *   posenc.register / the widget runtime
 *                 turns each <div class="posenc-widget"> written by
 *                 _ext/posenc_widgets.py into sliders + a live canvas;
 *                 posenc.mount does it for one element (Jupyter's widget,
 *                 _assets/posenc/jupyter.js, with data from the kernel).
 *
 * The chapter scripts (_assets/posenc/<module>.js) register one drawing
 * function per Interactive of posenc_plots/<module>.py.
 */
(function (root) {
  "use strict";

  var posenc = root.posenc = root.posenc || {};
  var SCRIPT = (typeof document !== "undefined" && document.currentScript) ?
    document.currentScript.src : "";
  var BASE_URL = SCRIPT.replace(/[^\/]*$/, "");

  function ValueError(message) {
    var err = new Error(message);
    err.name = "ValueError";
    return err;
  }

  // ------------------------------------------------------------ arrays

  function arange(start, stop, step) {
    if (stop === undefined) { stop = start; start = 0; }
    step = step || 1;
    var out = [];
    var n = Math.max(0, Math.ceil((stop - start) / step));
    for (var i = 0; i < n; i++) out.push(start + i * step);
    return out;
  }

  /** numpy.linspace(start, stop, num): start + i*step, last = stop. */
  function linspace(start, stop, num) {
    var out = new Array(num);
    var div = num - 1;
    var step = (stop - start) / div;
    for (var i = 0; i < num; i++) out[i] = i * step + start;
    if (num > 1) out[num - 1] = stop;
    return out;
  }

  function zeros(rows, cols) {
    var out = new Array(rows);
    for (var r = 0; r < rows; r++) {
      out[r] = new Array(cols);
      for (var c = 0; c < cols; c++) out[r][c] = 0;
    }
    return out;
  }

  function matmul(A, B) {
    var n = A.length, m = B.length, p = m ? B[0].length : 0;
    var out = zeros(n, p);
    for (var i = 0; i < n; i++) {
      var row = A[i], o = out[i];
      for (var k = 0; k < m; k++) {
        var a = row[k], b = B[k];
        for (var j = 0; j < p; j++) o[j] += a * b[j];
      }
    }
    return out;
  }

  function transpose(A) {
    var n = A.length, m = n ? A[0].length : 0;
    var out = zeros(m, n);
    for (var i = 0; i < n; i++) for (var j = 0; j < m; j++) out[j][i] = A[i][j];
    return out;
  }

  function dot(a, b) {
    var s = 0;
    for (var i = 0; i < a.length; i++) s += a[i] * b[i];
    return s;
  }

  /** Reshape a flat array into rows of length cols. */
  function reshape(flat, rows, cols, offset) {
    offset = offset || 0;
    var out = new Array(rows);
    for (var r = 0; r < rows; r++) {
      out[r] = new Array(cols);
      for (var c = 0; c < cols; c++) out[r][c] = flat[offset + r * cols + c];
    }
    return out;
  }

  function map2(A, f) {
    return A.map(function (row, i) {
      return row.map(function (v, j) { return f(v, i, j); });
    });
  }

  function max(a) {
    var m = -Infinity;
    for (var i = 0; i < a.length; i++) if (a[i] > m) m = a[i];
    return m;
  }

  function min(a) {
    var m = Infinity;
    for (var i = 0; i < a.length; i++) if (a[i] < m) m = a[i];
    return m;
  }

  /** numpy.rint: round half to even. */
  function rint(x) {
    var f = Math.floor(x), d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return (f % 2 === 0) ? f : f + 1;
  }

  posenc.np = {
    arange: arange, linspace: linspace, zeros: zeros, matmul: matmul,
    transpose: transpose, dot: dot, reshape: reshape, map2: map2,
    max: max, min: min, rint: rint
  };

  // ------------------------------------------------- Python formatting

  var BIG10 = BigInt(10);

  /** Exact decimal of |x| (finite): {D, k} with |x| = D / 10**k. */
  function exactDecimal(x) {
    var view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, Math.abs(x));
    var hi = view.getUint32(0), lo = view.getUint32(4);
    var expBits = (hi >>> 20) & 0x7ff;
    var mant = (BigInt(hi & 0xfffff) << BigInt(32)) | BigInt(lo);
    var e2;
    if (expBits === 0) {
      e2 = -1074;
    } else {
      mant = mant | (BigInt(1) << BigInt(52));
      e2 = expBits - 1075;
    }
    if (mant === BigInt(0)) return { D: BigInt(0), k: 0 };
    if (e2 >= 0) return { D: mant << BigInt(e2), k: 0 };
    return { D: mant * BigInt(5) ** BigInt(-e2), k: -e2 };
  }

  /** Round D / 10**k to f decimals, half to even: N with value N / 10**f. */
  function roundAt(D, k, f) {
    var shift = k - f;
    if (shift <= 0) return D * BIG10 ** BigInt(-shift);
    var div = BIG10 ** BigInt(shift);
    var q = D / div, r = D % div, twice = BigInt(2) * r;
    if (twice > div || (twice === div && (q & BigInt(1)) === BigInt(1))) {
      q = q + BigInt(1);
    }
    return q;
  }

  function isNegative(x) {
    return x < 0 || Object.is(x, -0);
  }

  function group(intPart) {
    return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  function fixedDigits(x, f) {
    var e = exactDecimal(x);
    var s = roundAt(e.D, e.k, f).toString();
    if (f <= 0) return { int: s, frac: "" };
    while (s.length <= f) s = "0" + s;
    return { int: s.slice(0, s.length - f), frac: s.slice(s.length - f) };
  }

  /** Leading-digit exponent and digits of |x| rounded to p significant. */
  function sigDigits(x, p) {
    var e = exactDecimal(x);
    if (e.D === BigInt(0)) return { digits: new Array(p + 1).join("0"), exp: 0 };
    var L = e.D.toString().length - 1 - e.k;
    var N = roundAt(e.D, e.k, p - 1 - L).toString();
    if (N.length > p) {
      L += 1;
      N = roundAt(e.D, e.k, p - 1 - L).toString();
    }
    return { digits: N, exp: L };
  }

  function expString(exp) {
    var a = Math.abs(exp);
    return (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + a;
  }

  function special(x) {
    if (isNaN(x)) return "nan";
    return x > 0 ? "inf" : "-inf";
  }

  /** Python's repr(float). */
  function pyrepr(x) {
    if (!isFinite(x)) return special(x);
    if (x === 0) return isNegative(x) ? "-0.0" : "0.0";
    var s = Math.abs(x).toExponential();  // shortest round-trip digits
    var parts = s.split("e");
    var digits = parts[0].replace(".", "");
    var exp = parseInt(parts[1], 10);
    var sign = x < 0 ? "-" : "";
    if (exp < -4 || exp >= 16) {
      var mant = digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "");
      return sign + mant + "e" + expString(exp);
    }
    var out;
    if (exp >= digits.length - 1) {
      out = digits + new Array(exp - digits.length + 2).join("0") + ".0";
    } else if (exp >= 0) {
      out = digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
    } else {
      out = "0." + new Array(-exp).join("0") + digits;
    }
    return sign + out;
  }

  /**
   * Python's format(x, spec) for the specs the book uses:
   * [,][.precision][type] with type f, e, g, d, % or none.
   * Pass {int: true} as third argument when x stands for a Python int.
   */
  function pyformat(x, spec, opts) {
    var isInt = opts && opts.int;
    var m = /^(,)?(?:\.(\d+))?([fegd%]?)$/.exec(spec || "");
    if (!m) throw ValueError("unsupported format spec " + spec);
    var comma = !!m[1], prec = m[2] === undefined ? null : parseInt(m[2], 10);
    var type = m[3];
    if (type === "d" || (isInt && type === "")) {
      if (!Number.isInteger(x)) throw ValueError("format d needs an integer");
      var si = BigInt(Math.abs(x)).toString();
      return (x < 0 ? "-" : "") + (comma ? group(si) : si);
    }
    if (!isFinite(x)) return special(x);
    var sign = isNegative(x) ? "-" : "";
    var body;
    if (type === "%") {
      x = x * 100;
      type = "f";
      var pf = fixedDigits(x, prec === null ? 6 : prec);
      body = (comma ? group(pf.int) : pf.int) + (pf.frac ? "." + pf.frac : "");
      return sign + body + "%";
    }
    if (type === "f") {
      var fd = fixedDigits(x, prec === null ? 6 : prec);
      body = (comma ? group(fd.int) : fd.int) + (fd.frac ? "." + fd.frac : "");
      return sign + body;
    }
    if (type === "e") {
      var p = prec === null ? 6 : prec;
      var sd = sigDigits(x, p + 1);
      body = sd.digits[0] + (p > 0 ? "." + sd.digits.slice(1) : "") + "e" +
        expString(sd.exp);
      return sign + body;
    }
    if (type === "g" || (type === "" && prec !== null)) {
      var pg = prec === null ? 6 : (prec === 0 ? 1 : prec);
      if (x === 0) return sign + (type === "" ? "0.0" : "0");
      var sg = sigDigits(x, pg);
      var digits = sg.digits, exp = sg.exp;
      if (exp >= -4 && exp < pg) {
        var f = pg - 1 - exp;
        var fx = fixedDigits(x, f);
        var frac = fx.frac.replace(/0+$/, "");
        body = (comma ? group(fx.int) : fx.int) + (frac ? "." + frac : "");
        if (type === "" && !frac) body += ".0";
      } else {
        var rest = digits.slice(1).replace(/0+$/, "");
        body = digits[0] + (rest ? "." + rest : "") + "e" + expString(exp);
      }
      return sign + body;
    }
    // type "" without precision: str(float), with grouping if asked
    var r = pyrepr(x);
    if (comma && r.indexOf("e") < 0) {
      var ip = r.replace("-", "").split(".");
      r = sign + group(ip[0]) + (ip.length > 1 ? "." + ip[1] : "");
    }
    return r;
  }

  /** numpy/Python round(x) to an integer: half to even. */
  function pyround(x) { return rint(x); }

  posenc.fmt = { format: pyformat, repr: pyrepr, round: pyround };

  /**
   * Python's template.format(**values) for the figures' labels:
   * "{name}", "{name:spec}" (numbers, through pyformat) and "{{", "}}".
   * The templates are the figure's label table (posenc_plots.i18n), which
   * the page hands to the drawing in the language of the page.
   */
  posenc.label = function (template, values) {
    if (typeof template !== "string") throw ValueError("no label " + template);
    return template.replace(/\{\{|\}\}|\{(\w+)(?::([^{}]*))?\}/g,
      function (all, name, spec) {
        if (all === "{{") return "{";
        if (all === "}}") return "}";
        var v = values ? values[name] : undefined;
        if (v === undefined) throw ValueError("label " + template + ": no " + name);
        if (typeof v === "string") return v;
        return spec ? pyformat(v, spec) : String(v);
      });
  };

  // --------------------------------------------------------- the core

  var TAU = 2.0 * Math.PI;

  function isInt(v) {
    return typeof v === "number" && Number.isInteger(v);
  }

  function checkD(name, v) {
    if (!isInt(v) || v <= 0 || v % 2) {
      throw ValueError(name + " must be a positive even integer, got " + v);
    }
    return v;
  }

  function checkBase(base) {
    if (base === undefined) return 10000.0;
    if (!(typeof base === "number" && isFinite(base) && base > 1)) {
      throw ValueError("base must be a finite number > 1, got " + base);
    }
    return base;
  }

  function positionsOf(positions) {
    if (isInt(positions)) {
      if (positions < 0) throw ValueError("positions must be >= 0");
      return arange(positions);
    }
    if (!Array.isArray(positions) && !ArrayBuffer.isView(positions)) {
      throw ValueError("positions must be an int n >= 0 or an array");
    }
    return Array.prototype.slice.call(positions);
  }

  function opt(o, key, dflt) {
    return (o && o[key] !== undefined) ? o[key] : dflt;
  }

  /** omega_i = base ** (-2 i / d_model). */
  function frequencies(d_model, o) {
    checkD("d_model", d_model);
    var base = checkBase(opt(o, "base"));
    var out = new Array(d_model / 2);
    for (var i = 0; i < d_model / 2; i++) {
      out[i] = Math.pow(base, -2.0 * i / d_model);
    }
    return out;
  }

  function wavelengths(d_model, o) {
    return frequencies(d_model, o).map(function (w) { return TAU / w; });
  }

  /** P[pos, 2i] = sin(pos w_i), P[pos, 2i+1] = cos(pos w_i). */
  function sinusoidal_encoding(positions, d_model, o) {
    var layout = opt(o, "layout", "interleaved");
    if (layout !== "interleaved" && layout !== "concat") {
      throw ValueError("layout must be one of ('interleaved', 'concat')");
    }
    var omega = frequencies(d_model, o);
    var pos = positionsOf(positions);
    var half = d_model / 2;
    return pos.map(function (p) {
      var row = new Array(d_model);
      for (var i = 0; i < half; i++) {
        var a = p * omega[i];
        if (layout === "interleaved") {
          row[2 * i] = Math.sin(a);
          row[2 * i + 1] = Math.cos(a);
        } else {
          row[i] = Math.sin(a);
          row[half + i] = Math.cos(a);
        }
      }
      return row;
    });
  }

  function relative_shift_matrix(k, d_model, o) {
    var omega = frequencies(d_model, o);
    var M = zeros(d_model, d_model);
    for (var i = 0; i < d_model / 2; i++) {
      var c = Math.cos(k * omega[i]), s = Math.sin(k * omega[i]);
      M[2 * i][2 * i] = c;
      M[2 * i][2 * i + 1] = s;
      M[2 * i + 1][2 * i] = -s;
      M[2 * i + 1][2 * i + 1] = c;
    }
    return M;
  }

  /** B[pos, j] = floor(pos / 2**j) mod 2: the low n_bits bits of pos, so
   *  the counter rolls over (pos and pos + 2**n_bits have the same bits). */
  function binary_encoding(positions, n_bits) {
    if (!isInt(n_bits) || n_bits < 1 || n_bits > 63) {
      throw ValueError("n_bits must be an integer from 1 to 63");
    }
    var pos = positionsOf(positions);
    return pos.map(function (p) {
      // as posenc_core: non-negative integers up to 2**53 (exact doubles)
      if (!Number.isInteger(p) || p < 0 || p > 9007199254740992) {
        throw ValueError("positions must be integers in [0, 2**53]");
      }
      var row = new Array(n_bits);
      for (var j = 0; j < n_bits; j++) {
        row[j] = Math.floor(p / Math.pow(2, j)) % 2;
      }
      return row;
    });
  }

  function softmaxRows(S) {
    return S.map(function (row) {
      var top = max(row);
      var e = row.map(function (v) { return Math.exp(v - top); });
      var s = 0;
      for (var i = 0; i < e.length; i++) s += e[i];
      return e.map(function (v) { return v / s; });
    });
  }

  /** [output, weights] of single-head scaled dot-product attention. */
  function self_attention(x, w_q, w_k, w_v, o) {
    var bias = opt(o, "bias", null), causal = opt(o, "causal", false);
    var q = matmul(x, w_q), k = matmul(x, w_k), v = matmul(x, w_v);
    var n = x.length, dk = w_q[0].length, scale = Math.sqrt(dk);
    var kt = transpose(k);
    var S = matmul(q, kt).map(function (row, i) {
      return row.map(function (s, j) {
        var val = s / scale;
        if (bias) val = val + bias[i][j];
        if (causal && j > i) val = -Infinity;
        return val;
      });
    });
    var A = n ? softmaxRows(S) : [];
    return [matmul(A, v), A];
  }

  /** Rotate pairs (2i, 2i+1) or (i, i + d/2) by pos * theta_i. */
  function apply_rope(x, positions, o) {
    var layout = opt(o, "layout", "interleaved");
    if (layout !== "interleaved" && layout !== "half") {
      throw ValueError("layout must be one of ('interleaved', 'half')");
    }
    if (Array.isArray(x[0]) && Array.isArray(x[0][0])) {
      return x.map(function (sub) { return apply_rope(sub, positions, o); });
    }
    var d = x[0].length, half = d / 2;
    var pos = positionsOf(positions);
    if (pos.length !== x.length) {
      throw ValueError("positions must give one position per row of x");
    }
    var theta = opt(o, "frequencies", null);
    theta = theta ? Array.prototype.slice.call(theta) :
      rope_frequencies(d, { base: opt(o, "base") });
    return x.map(function (row, r) {
      var out = new Array(d);
      for (var i = 0; i < half; i++) {
        var a = pos[r] * theta[i], c = Math.cos(a), s = Math.sin(a);
        var i1 = layout === "interleaved" ? 2 * i : i;
        var i2 = layout === "interleaved" ? 2 * i + 1 : i + half;
        var x1 = row[i1], x2 = row[i2];
        out[i1] = x1 * c - x2 * s;
        out[i2] = x2 * c + x1 * s;
      }
      return out;
    });
  }

  var SCALING_KEYS = {
    linear: { factor: null },
    ntk: { factor: null },
    yarn: { factor: null, original_max_position_embeddings: null,
            beta_fast: 32.0, beta_slow: 1.0 },
    llama3: { factor: null, low_freq_factor: 1.0, high_freq_factor: 4.0,
              original_max_position_embeddings: null }
  };

  function scalingParams(scaling) {
    var kind = scaling.type !== undefined ? scaling.type : scaling.rope_type;
    var allowed = SCALING_KEYS[kind];
    if (!allowed) throw ValueError("scaling type must be one of " +
      Object.keys(SCALING_KEYS).join(", ") + ", got " + kind);
    var p = {};
    Object.keys(allowed).forEach(function (key) {
      var v = scaling[key] !== undefined ? scaling[key] : allowed[key];
      if (v === null) throw ValueError("scaling of type '" + kind +
        "' needs the key '" + key + "'");
      if (!(typeof v === "number" && isFinite(v) && v > 0)) {
        throw ValueError("scaling['" + key + "'] must be a finite number > 0");
      }
      p[key] = v;
    });
    if (p.factor < 1) throw ValueError("scaling['factor'] must be >= 1");
    return { kind: kind, p: p };
  }

  /** RoPE angles per position, optionally rescaled (see posenc_core). */
  function rope_frequencies(head_dim, o) {
    checkD("head_dim", head_dim);
    var base = checkBase(opt(o, "base"));
    var half = head_dim / 2, i, theta = new Array(half);
    for (i = 0; i < half; i++) theta[i] = Math.pow(base, -2.0 * i / head_dim);
    var scaling = opt(o, "scaling", null);
    if (!scaling) return theta;
    var sp = scalingParams(scaling), kind = sp.kind, p = sp.p, s = p.factor;
    if (kind === "linear") return theta.map(function (t) { return t / s; });
    if (kind === "ntk") {
      if (head_dim === 2) {
        throw ValueError("head_dim must be at least 4 for NTK scaling, got 2");
      }
      var newBase = base * Math.pow(s, head_dim / (head_dim - 2));
      var out = new Array(half);
      for (i = 0; i < half; i++) out[i] = Math.pow(newBase, -2.0 * i / head_dim);
      return out;
    }
    var L = p.original_max_position_embeddings;
    if (kind === "yarn") {
      var corr = function (rot) {
        return head_dim * Math.log(L / (rot * 2 * Math.PI)) / (2 * Math.log(base));
      };
      var low = Math.max(Math.floor(corr(p.beta_fast)), 0.0);
      var high = Math.min(Math.ceil(corr(p.beta_slow)), head_dim - 1.0);
      if (low === high) high += 0.001;
      return theta.map(function (t, j) {
        var ramp = Math.min(Math.max((j - low) / (high - low), 0.0), 1.0);
        var keep = 1.0 - ramp;
        return t / s * (1.0 - keep) + t * keep;
      });
    }
    var lowF = p.low_freq_factor, highF = p.high_freq_factor;
    if (!(highF >= lowF)) {
      throw ValueError("scaling['high_freq_factor'] must be at least " +
        "scaling['low_freq_factor']");
    }
    return theta.map(function (t) {
      var wavelen = 2 * Math.PI / t;
      var out = wavelen > L / lowF ? t / s : t;
      if (highF === lowF) return out;  // Llama 4: a step, no ramp
      var mu = (L / wavelen - lowF) / (highF - lowF);
      var smooth = (1 - mu) * out / s + mu * out;
      var medium = wavelen >= L / highF && wavelen <= L / lowF;
      return medium ? smooth : out;
    });
  }

  function yarn_attention_scale(factor) {
    if (!(typeof factor === "number" && isFinite(factor) && factor >= 1)) {
      throw ValueError("factor must be a finite number >= 1");
    }
    return 0.1 * Math.log(factor) + 1.0;
  }

  /** Chapter 10: the frequencies of a partially rotated head, 0 for the
   *  pairs that do not rotate ("spread": a head of width floor(f d) spread
   *  over the first pairs; "proportional": the fastest floor(f d / 2) pairs
   *  of the full head). */
  function partial_rope_frequencies(head_dim, fraction, o) {
    checkD("head_dim", head_dim);
    if (!(typeof fraction === "number" && isFinite(fraction) &&
          fraction >= 0 && fraction <= 1)) {
      throw ValueError("fraction must be a finite number in [0, 1], got " + fraction);
    }
    var base = checkBase(opt(o, "base"));
    var convention = opt(o, "convention", "spread");
    if (convention !== "spread" && convention !== "proportional") {
      throw ValueError("convention must be one of ('spread', 'proportional'), got " +
                       convention);
    }
    var half = head_dim / 2, omega = new Array(half), j;
    for (j = 0; j < half; j++) omega[j] = 0.0;
    if (convention === "spread") {
      var r = Math.trunc(head_dim * fraction);
      for (j = 0; 2 * j < r; j++) omega[j] = Math.pow(base, -(2 * j) / r);
    } else {
      var k = Math.floor(fraction * head_dim / 2);
      for (j = 0; j < k; j++) omega[j] = Math.pow(base, -(2 * j) / head_dim);
    }
    return omega;
  }

  /** R[i][j] = clip(j - i, -k, k). */
  function relative_positions(n, o) {
    var k = opt(o, "max_distance", null);
    var R = zeros(n, n);
    for (var i = 0; i < n; i++) {
      for (var j = 0; j < n; j++) {
        var r = j - i;
        if (k !== null) r = Math.min(Math.max(r, -k), k);
        R[i][j] = r;
      }
    }
    return R;
  }

  /** T5's bucket, with the logarithm in float32 as in the reference. */
  function t5_relative_position_bucket(relative_position, o) {
    var bidirectional = opt(o, "bidirectional", true);
    var num_buckets = opt(o, "num_buckets", 32);
    var max_distance = opt(o, "max_distance", 128);
    var smallest = bidirectional ? 4 : 2;
    if (!isInt(num_buckets) || num_buckets < smallest) {
      throw ValueError("num_buckets must be an integer >= " + smallest);
    }
    var n = bidirectional ? Math.floor(num_buckets / 2) : num_buckets;
    var maxExact = Math.floor(n / 2);
    if (!isInt(max_distance) || max_distance <= maxExact) {
      throw ValueError("max_distance must be an integer > " + maxExact);
    }
    var f32 = Math.fround;
    var scale = f32(Math.log(max_distance / maxExact));
    var one = function (rel) {
      var bucket = 0, dist;
      if (bidirectional) {
        bucket = rel > 0 ? n : 0;
        dist = Math.abs(rel);
      } else {
        dist = -Math.min(rel, 0);
      }
      if (dist < maxExact) return bucket + dist;
      var ratio = f32(Math.log(f32(f32(dist) / f32(maxExact))));
      var large = f32(f32(ratio / scale) * f32(n - maxExact));
      large = maxExact + Math.trunc(large);
      return bucket + Math.min(large, n - 1);
    };
    if (typeof relative_position === "number") return one(relative_position);
    var rec = function (a) {
      return Array.isArray(a) ? a.map(rec) : one(a);
    };
    return rec(relative_position);
  }

  function alibi_slopes(n_heads) {
    if (!isInt(n_heads) || n_heads < 1) {
      throw ValueError("n_heads must be an integer >= 1");
    }
    var p = 1;  // the largest power of two <= n_heads
    while (p * 2 <= n_heads) p *= 2;
    var pow2 = function (count) {
      var out = [];
      for (var h = 1; h <= count; h++) out.push(Math.pow(2.0, -8.0 * h / count));
      return out;
    };
    if (p === n_heads) return pow2(n_heads);
    var extra = pow2(2 * p).filter(function (_, i) { return i % 2 === 0; })
      .slice(0, n_heads - p);
    return pow2(p).concat(extra);
  }

  /** B[h][i][j] = -m_h |i - j|. */
  function alibi_bias(n, n_heads) {
    var slopes = alibi_slopes(n_heads);
    return slopes.map(function (m) {
      var B = zeros(n, n);
      for (var i = 0; i < n; i++) {
        for (var j = 0; j < n; j++) B[i][j] = -m * Math.abs(i - j) + 0.0;
      }
      return B;
    });
  }

  /** RoFormer's bound (1/(d/2)) sum_j |sum_{k<j} e^{i r theta_k}|. */
  function rope_decay_bound(distances, head_dim, o) {
    checkD("head_dim", head_dim);
    var r = positionsOf(distances);
    var theta = opt(o, "frequencies", null);
    theta = theta ? Array.prototype.slice.call(theta) :
      rope_frequencies(head_dim, { base: opt(o, "base") });
    var half = head_dim / 2;
    return r.map(function (dist) {
      var re = 0, im = 0, total = 0;
      for (var k = 0; k < half; k++) {
        re += Math.cos(dist * theta[k]);
        im += Math.sin(dist * theta[k]);
        total += Math.hypot(re, im);
      }
      return total / half;
    });
  }

  function rope_layout_permutation(head_dim) {
    checkD("head_dim", head_dim);
    var out = [];
    for (var j = 0; j < head_dim; j += 2) out.push(j);
    for (j = 1; j < head_dim; j += 2) out.push(j);
    return out;
  }

  /** Round to the nearest number with `bits` significant bits. */
  function round_significand(x, bits) {
    if (!isInt(bits) || bits < 1 || bits > 53) {
      throw ValueError("bits must be an integer from 1 to 53");
    }
    var view = new DataView(new ArrayBuffer(8));
    var one = function (v) {
      if (v === 0 || !isFinite(v)) return v;
      // frexp: v = m * 2**e with 0.5 <= |m| < 1
      var scaled = 0;
      if (Math.abs(v) < Math.pow(2, -1000)) { v = v * Math.pow(2, 200); scaled = 200; }
      view.setFloat64(0, v);
      var e = ((view.getUint32(0) >>> 20) & 0x7ff) - 1022;
      var m = v * Math.pow(2, -e);
      return rint(m * Math.pow(2, bits)) * Math.pow(2, e - bits) * Math.pow(2, -scaled);
    };
    var rec = function (a) { return Array.isArray(a) ? a.map(rec) : one(a); };
    return rec(x);
  }

  // ------------------------------------------ chapter 9: 2-D positions

  /** Rotate pair i of row n of x by angles[n][i] (interleaved or half);
   *  x and angles may carry one more leading axis (heads). */
  function apply_rope_angles(x, angles, o) {
    var layout = opt(o, "layout", "interleaved");
    if (layout !== "interleaved" && layout !== "half") {
      throw ValueError("layout must be one of ('interleaved', 'half')");
    }
    if (Array.isArray(x[0]) && Array.isArray(x[0][0])) {
      return x.map(function (sub, h) {
        return apply_rope_angles(sub, Array.isArray(angles[0][0]) ? angles[h] : angles, o);
      });
    }
    if (angles.length !== x.length) {
      throw ValueError("angles must have one row per row of x");
    }
    var d = x[0].length, half = d / 2;
    return x.map(function (row, r) {
      var out = new Array(d), a = angles[r];
      for (var i = 0; i < half; i++) {
        var c = Math.cos(a[i]), s = Math.sin(a[i]);
        var i1 = layout === "interleaved" ? 2 * i : i;
        var i2 = layout === "interleaved" ? 2 * i + 1 : i + half;
        var x1 = row[i1], x2 = row[i2];
        out[i1] = x1 * c - x2 * s;
        out[i2] = x2 * c + x1 * s;
      }
      return out;
    });
  }

  function quarterFrequencies(d, base) {
    var out = new Array(d / 4);
    for (var j = 0; j < d / 4; j++) out[j] = Math.pow(base, -4.0 * j / d);
    return out;
  }

  function checkQuarter(name, d) {
    if (!isInt(d) || d <= 0 || d % 4) {
      throw ValueError(name + " must be a positive multiple of 4, got " + d);
    }
    return d;
  }

  /** MAE's 2-D table: [sin(x w), cos(x w), sin(y w), cos(y w)] per patch,
   *  x the column, y the row, w_j = base^(-4j/d). */
  function sincos_2d_encoding(height, width, d, o) {
    checkQuarter("d", d);
    var w = quarterFrequencies(d, checkBase(opt(o, "base")));
    var out = [];
    for (var r = 0; r < height; r++) {
      for (var c = 0; c < width; c++) {
        var row = [];
        [c, r].forEach(function (p) {
          w.forEach(function (f) { row.push(Math.sin(p * f)); });
          w.forEach(function (f) { row.push(Math.cos(p * f)); });
        });
        out.push(row);
      }
    }
    return out;
  }

  /** Heo et al.'s axial angles: pairs j < d/4 from the column, the rest
   *  from the row, frequencies base^(-4j/d); coords are (row, column). */
  function rope_axial_angles(coords, head_dim, o) {
    checkQuarter("head_dim", head_dim);
    var f = quarterFrequencies(head_dim, checkBase(opt(o, "base", 100.0)));
    return coords.map(function (rc) {
      return f.map(function (v) { return rc[1] * v; })
        .concat(f.map(function (v) { return rc[0] * v; }));
    });
  }

  /** RoPE-Mixed: angle of head h, patch n, pair i = x f_x + y f_y, with
   *  freqs[h][i] = [f_x, f_y] and coords (row, column) = (y, x). */
  function rope_mixed_angles(coords, freqs) {
    return freqs.map(function (head) {
      return coords.map(function (rc) {
        return head.map(function (f) { return rc[1] * f[0] + rc[0] * f[1]; });
      });
    });
  }

  /** DINOv3's patch centres in (-1, 1): (row, column) per patch. */
  function normalized_patch_coordinates(height, width, o) {
    var mode = opt(o, "normalize", "separate"), sh, sw;
    if (mode === "separate") { sh = height; sw = width; }
    else if (mode === "max") { sh = sw = Math.max(height, width); }
    else if (mode === "min") { sh = sw = Math.min(height, width); }
    else throw ValueError("normalize must be one of ('separate', 'max', 'min')");
    var out = [];
    for (var r = 0; r < height; r++) {
      for (var c = 0; c < width; c++) {
        out.push([2.0 * ((r + 0.5) / sh) - 1.0, 2.0 * ((c + 0.5) / sw) - 1.0]);
      }
    }
    return out;
  }

  /** DINOv3's angles 2 pi coord / period_j, period_j = base^(4j/d): pairs
   *  j < d/4 from the row, the rest from the column. */
  function dinov3_rope_angles(coords, head_dim, o) {
    checkQuarter("head_dim", head_dim);
    var base = checkBase(opt(o, "base", 100.0)), q = head_dim / 4;
    var periods = new Array(q);
    for (var j = 0; j < q; j++) periods[j] = Math.pow(base, 2.0 * j / (head_dim / 2));
    return coords.map(function (rc) {
      var out = [];
      [rc[0], rc[1]].forEach(function (p) {
        periods.forEach(function (t) { out.push(2 * Math.PI * p / t); });
      });
      return out;
    });
  }

  /** M-RoPE ids (time, height, width) of a prompt (Qwen's get_rope_index):
   *  segments are n or ["text", n], ["image", [t, h, w]],
   *  ["video", [t, h, w]] or ["video", [t, h, w], seconds_per_grid]. */
  function mrope_position_ids(segments, o) {
    var merge = opt(o, "spatial_merge_size", 2);
    var variant = opt(o, "variant", "qwen2-vl");
    var nu = opt(o, "tokens_per_second", 4);
    var nextText = opt(o, "next_text", "largest");
    if (["qwen2-vl", "qwen2.5-vl", "qwen3-vl"].indexOf(variant) < 0) {
      throw ValueError("variant must be one of ('qwen2-vl', 'qwen2.5-vl', 'qwen3-vl')");
    }
    if (nextText !== "largest" && nextText !== "spatial") {
      throw ValueError("next_text must be one of ('largest', 'spatial')");
    }
    var segs = [];
    segments.forEach(function (seg) {
      if (typeof seg === "number") seg = ["text", seg];
      if (seg[0] === "text") { segs.push(["text", seg[1]]); return; }
      var g = seg[1];
      if (g[1] % merge || g[2] % merge) {
        throw ValueError("segments: h, w must be multiples of spatial_merge_size");
      }
      var one = [seg[0], g[0], g[1] / merge, g[2] / merge, seg.length > 2 ? seg[2] : 1.0];
      if (variant === "qwen3-vl") {
        for (var k = 0; k < g[0]; k++) segs.push([seg[0], 1, one[2], one[3], one[4]]);
      } else {
        segs.push(one);
      }
    });
    var ids = [[], [], []], start = 0;
    segs.forEach(function (seg) {
      var i;
      if (seg[0] === "text") {
        for (i = 0; i < seg[1]; i++) { ids[0].push(start + i); ids[1].push(start + i); ids[2].push(start + i); }
        start += seg[1];
        return;
      }
      var t = seg[1], h = seg[2], w = seg[3], seconds = seg[4], top = -Infinity;
      for (var k = 0; k < t; k++) {
        var tau = (variant === "qwen2.5-vl" && seg[0] === "video") ?
          Math.floor(k * (nu * seconds)) : k;
        for (var y = 0; y < h; y++) {
          for (var x = 0; x < w; x++) {
            ids[0].push(start + tau); ids[1].push(start + y); ids[2].push(start + x);
            top = Math.max(top, start + tau, start + y, start + x);
          }
        }
      }
      start = nextText === "largest" ? top + 1 : start + Math.max(h, w);
    });
    return ids;
  }

  function mropeSection(section) {
    if (!Array.isArray(section) || section.length !== 3 ||
        !section.every(function (s) { return isInt(s) && s >= 0; }) ||
        section[0] + section[1] + section[2] === 0) {
      throw ValueError("mrope_section must be 3 integers >= 0 with a positive sum");
    }
    return section;
  }

  /** Axis (0 time, 1 height, 2 width) of each rotated pair. */
  function mrope_pair_axes(mrope_section, o) {
    var section = mropeSection(mrope_section), layout = opt(o, "layout", "chunked");
    var n = section[0] + section[1] + section[2], axes = [], i;
    if (layout === "chunked") {
      for (var a = 0; a < 3; a++) for (i = 0; i < section[a]; i++) axes.push(a);
      return axes;
    }
    if (layout !== "interleaved") throw ValueError("layout must be one of ('chunked', 'interleaved')");
    for (i = 0; i < n; i++) axes.push(0);
    [[1, 1], [2, 2]].forEach(function (ao) {
      for (var j = ao[1]; j < Math.min(3 * section[ao[0]], n); j += 3) axes[j] = ao[0];
    });
    return axes;
  }

  /** phi_i = pos^{axis(i)} omega_i, omega_i = base^(-2i/d): (n, d/2). */
  function mrope_angles(position_ids, head_dim, mrope_section, o) {
    var section = mropeSection(mrope_section);
    checkD("head_dim", head_dim);
    if (head_dim !== 2 * (section[0] + section[1] + section[2])) {
      throw ValueError("head_dim must be 2 * sum(mrope_section)");
    }
    var axes = mrope_pair_axes(section, { layout: opt(o, "layout", "chunked") });
    var omega = rope_frequencies(head_dim, { base: opt(o, "base", 10000.0) });
    return position_ids[0].map(function (_, n) {
      return axes.map(function (a, i) { return position_ids[a][n] * omega[i]; });
    });
  }

  posenc.core = {
    frequencies: frequencies,
    wavelengths: wavelengths,
    sinusoidal_encoding: sinusoidal_encoding,
    relative_shift_matrix: relative_shift_matrix,
    binary_encoding: binary_encoding,
    self_attention: self_attention,
    apply_rope: apply_rope,
    rope_frequencies: rope_frequencies,
    yarn_attention_scale: yarn_attention_scale,
    partial_rope_frequencies: partial_rope_frequencies,
    relative_positions: relative_positions,
    t5_relative_position_bucket: t5_relative_position_bucket,
    alibi_slopes: alibi_slopes,
    alibi_bias: alibi_bias,
    rope_decay_bound: rope_decay_bound,
    rope_layout_permutation: rope_layout_permutation,
    round_significand: round_significand,
    // chapter 9
    apply_rope_angles: apply_rope_angles,
    sincos_2d_encoding: sincos_2d_encoding,
    rope_axial_angles: rope_axial_angles,
    rope_mixed_angles: rope_mixed_angles,
    normalized_patch_coordinates: normalized_patch_coordinates,
    dinov3_rope_angles: dinov3_rope_angles,
    mrope_position_ids: mrope_position_ids,
    mrope_pair_axes: mrope_pair_axes,
    mrope_angles: mrope_angles
  };

  // -------------------------------------------------------------- data

  /*
   * Seeded random numbers come from numpy itself: the build writes
   * data/normals-<seed>.js with np.random.default_rng(seed).standard_normal
   * (see _ext/posenc_widgets.py), loaded on demand by a <script> tag (which
   * works from file:// too, unlike fetch).
   */
  var store = {}, waiting = {};

  function decode(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float64Array(bytes.buffer);
  }

  posenc.data = {
    /** Store `name`: base64 float64 (the data files) or a Float64Array. */
    define: function (name, value) {
      store[name] = typeof value === "string" ? decode(value) : value;
      (waiting[name] || []).forEach(function (w) { w[0](store[name]); });
      delete waiting[name];
    },
    has: function (name) { return store.hasOwnProperty(name); },
    get: function (name) {
      if (!store.hasOwnProperty(name)) throw ValueError("data " + name + " not loaded");
      return store[name];
    },
    load: function (name) {
      if (store.hasOwnProperty(name)) return Promise.resolve(store[name]);
      return new Promise(function (resolve, reject) {
        var first = !waiting[name];
        (waiting[name] = waiting[name] || []).push([resolve, reject]);
        if (!first) return;
        var tag = document.createElement("script");
        tag.src = BASE_URL + "data/" + name + ".js";
        tag.onerror = function () {
          (waiting[name] || []).forEach(function (w) {
            w[1](new Error("cannot load " + tag.src));
          });
          delete waiting[name];
        };
        document.head.appendChild(tag);
      });
    }
  };

  /** The first `count` standard normals of np.random.default_rng(seed). */
  posenc.normals = function (seed, count) {
    var all = posenc.data.get("normals-" + seed);
    if (count > all.length) throw ValueError("only " + all.length + " normals");
    return Array.prototype.slice.call(all, 0, count);
  };

  // ------------------------------------------------------------- plot

  var CMAP_HEX = {
    viridis: "44015444025645045745055946075a46085c460a5d460b5e470d60470e6147106347116447136548146748166848176948186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f854240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f881fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad8128ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc743fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc8635ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21ad8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725",
    magma: "00000401000501010601010802010902020b02020d03030f03031204041405041606051806051a07061c08071e0907200a08220b09240c09260d0a290e0b2b100b2d110c2f120d31130d34140e36150e38160f3b180f3d19103f1a10421c10441d11471e114920114b21114e22115024125325125527125829115a2a115c2c115f2d11612f116331116533106734106936106b38106c390f6e3b0f703d0f713f0f72400f74420f75440f764510774710784910784a10794c117a4e117b4f127b51127c52137c54137d56147d57157e59157e5a167e5c167f5d177f5f187f601880621980641a80651a80671b80681c816a1c816b1d816d1d816e1e81701f81721f817320817521817621817822817922827b23827c23827e24828025828125818326818426818627818827818928818b29818c29818e2a81902a81912b81932b80942c80962c80982d80992d809b2e7f9c2e7f9e2f7fa02f7fa1307ea3307ea5317ea6317da8327daa337dab337cad347cae347bb0357bb2357bb3367ab5367ab73779b83779ba3878bc3978bd3977bf3a77c03a76c23b75c43c75c53c74c73d73c83e73ca3e72cc3f71cd4071cf4070d0416fd2426fd3436ed5446dd6456cd8456cd9466bdb476adc4869de4968df4a68e04c67e24d66e34e65e44f64e55064e75263e85362e95462ea5661eb5760ec5860ed5a5fee5b5eef5d5ef05f5ef1605df2625df2645cf3655cf4675cf4695cf56b5cf66c5cf66e5cf7705cf7725cf8745cf8765cf9785df9795df97b5dfa7d5efa7f5efa815ffb835ffb8560fb8761fc8961fc8a62fc8c63fc8e64fc9065fd9266fd9467fd9668fd9869fd9a6afd9b6bfe9d6cfe9f6dfea16efea36ffea571fea772fea973feaa74feac76feae77feb078feb27afeb47bfeb67cfeb77efeb97ffebb81febd82febf84fec185fec287fec488fec68afec88cfeca8dfecc8ffecd90fecf92fed194fed395fed597fed799fed89afdda9cfddc9efddea0fde0a1fde2a3fde3a5fde5a7fde7a9fde9aafdebacfcecaefceeb0fcf0b2fcf2b4fcf4b6fcf6b8fcf7b9fcf9bbfcfbbdfcfdbf",
    RdBu_r: "05306106326407346708366a09386d0a3b700c3d730d3f760e41790f437b10457e114781124984134c87144e8a15508d1752901854931956961a58991b5a9c1c5c9f1d5fa21e61a51f63a82065ab2267ac2369ad246aae266caf276eb02870b12a71b22b73b32c75b42e77b52f79b5307ab6327cb7337eb83480b93681ba3783bb3885bc3a87bd3b88be3c8abe3e8cbf3f8ec0408fc14291c24393c34695c44997c54c99c64f9bc7529dc8569fc959a1ca5ca3cb5fa5cd62a7ce65a9cf68abd06bacd16eaed271b0d375b2d478b4d57bb6d67eb8d781bad884bcd987beda8ac0db8dc2dc90c4dd93c6de96c7df98c8e09bc9e09dcbe1a0cce2a2cde3a5cee3a7d0e4a9d1e5acd2e5aed3e6b1d5e7b3d6e8b6d7e8b8d8e9bbdaeabddbeac0dcebc2ddecc5dfecc7e0edcae1eecce2efcfe4efd1e5f0d2e6f0d4e6f1d5e7f1d7e8f1d8e9f1dae9f2dbeaf2ddebf2deebf2e0ecf3e1edf3e3edf3e4eef4e6eff4e7f0f4e9f0f4eaf1f5ecf2f5edf2f5eff3f5f0f4f6f2f5f6f3f5f6f5f6f7f6f7f7f7f6f6f7f5f4f8f4f2f8f3f0f8f2eff8f1edf9f0ebf9efe9f9eee7f9ede5f9ebe3faeae1fae9dffae8defae7dcfbe6dafbe5d8fbe4d6fbe3d4fce2d2fce0d0fcdfcffcdecdfdddcbfddcc9fddbc7fdd9c4fcd7c2fcd5bffcd3bcfbd0b9fbceb7fbccb4facab1fac8aff9c6acf9c4a9f9c2a7f8bfa4f8bda1f8bb9ef7b99cf7b799f7b596f6b394f6b191f6af8ef5ac8bf5aa89f5a886f4a683f3a481f2a17ff19e7df09c7bef9979ee9677ec9374eb9172ea8e70e98b6ee8896ce6866ae58368e48066e37e64e27b62e17860df765ede735cdd7059dc6e57db6b55da6853d86551d7634fd6604dd55d4cd35a4ad25849d05548cf5246ce4f45cc4c44cb4942c94741c84440c6413ec53e3dc43b3cc2383ac13639bf3338be3036bd2d35bb2a34ba2832b82531b72230b61f2eb41c2db3192cb1182bae172aab162aa81529a51429a213289f12289c1127991027960f27930e26900d268d0c258a0b25870a248409248108237f08237c07227906227605217304217003206d02206a011f67001f",
    Greys: "fffffffffffffefefefefefefdfdfdfdfdfdfcfcfcfcfcfcfbfbfbfbfbfbfafafafafafaf9f9f9f9f9f9f8f8f8f8f8f8f7f7f7f7f7f7f7f7f7f6f6f6f6f6f6f5f5f5f5f5f5f4f4f4f4f4f4f3f3f3f3f3f3f2f2f2f2f2f2f1f1f1f1f1f1f0f0f0f0f0f0efefefeeeeeeeeeeeeedededececececececebebebeaeaeae9e9e9e9e9e9e8e8e8e7e7e7e7e7e7e6e6e6e5e5e5e4e4e4e4e4e4e3e3e3e2e2e2e1e1e1e1e1e1e0e0e0dfdfdfdfdfdfdedededddddddcdcdcdcdcdcdbdbdbdadadadadadad9d9d9d8d8d8d7d7d7d6d6d6d5d5d5d4d4d4d4d4d4d3d3d3d2d2d2d1d1d1d0d0d0cfcfcfcecececdcdcdcccccccccccccbcbcbcacacac9c9c9c8c8c8c7c7c7c6c6c6c5c5c5c5c5c5c4c4c4c3c3c3c2c2c2c1c1c1c0c0c0bfbfbfbebebebebebebdbdbdbbbbbbbababab9b9b9b8b8b8b6b6b6b5b5b5b4b4b4b3b3b3b2b2b2b0b0b0afafafaeaeaeadadadabababaaaaaaa9a9a9a8a8a8a7a7a7a5a5a5a4a4a4a3a3a3a2a2a2a0a0a09f9f9f9e9e9e9d9d9d9c9c9c9a9a9a9999999898989797979595959494949393939292929191919090908f8f8f8e8e8e8d8d8d8c8c8c8a8a8a8989898888888787878686868585858484848383838282828181817f7f7f7e7e7e7d7d7d7c7c7c7b7b7b7a7a7a7979797878787777777676767575757373737272727171717070706f6f6f6e6e6e6d6d6d6c6c6c6b6b6b6a6a6a6969696868686767676666666565656464646363636262626161616060605f5f5f5e5e5e5d5d5d5c5c5c5b5b5b5a5a5a5858585757575656565555555454545353535252525151515050504e4e4e4d4d4d4b4b4b4a4a4a4848484747474646464444444343434141414040403f3f3f3d3d3d3c3c3c3a3a3a3939393838383636363535353333333232323030302f2f2f2e2e2e2c2c2c2b2b2b2929292828282727272525252424242323232222222121211f1f1f1e1e1e1d1d1d1c1c1c1b1b1b1a1a1a1818181717171616161515151414141313131111111010100f0f0f0e0e0e0d0d0d0c0c0c0a0a0a090909080808070707060606050505030303020202010101000000",
  };
  var CMAP_CACHE = {};

  function cmapTable(name) {
    if (!CMAP_CACHE[name]) {
      var hex = CMAP_HEX[name];
      if (!hex) throw ValueError("unknown colormap " + name);
      var table = new Uint8ClampedArray(256 * 3);
      for (var i = 0; i < 256 * 3; i++) {
        table[i] = parseInt(hex.substr(2 * i, 2), 16);
      }
      CMAP_CACHE[name] = table;
    }
    return CMAP_CACHE[name];
  }

  var TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var NAMED = { k: "#000000", black: "#000000", white: "#ffffff",
                w: "#ffffff", gray: "#808080", grey: "#808080",
                red: "#ff0000", r: "#ff0000", b: "#0000ff", g: "#008000" };

  /** A matplotlib colour spec ("C1", "0.3", "k", "#abc") as CSS. */
  function css(c, i) {
    if (c === undefined || c === null) return TAB10[(i || 0) % 10];
    if (typeof c !== "string") return c;
    if (/^C\d$/.test(c)) return TAB10[+c[1]];
    if (/^[01](\.\d*)?$/.test(c)) {
      var g = Math.round(parseFloat(c) * 255);
      return "rgb(" + g + "," + g + "," + g + ")";
    }
    return NAMED[c] || c;
  }

  var GREEK = {
    alpha: "\u03b1", beta: "\u03b2", gamma: "\u03b3", delta: "\u03b4",
    Delta: "\u0394", theta: "\u03b8", lambda: "\u03bb", mu: "\u03bc",
    omega: "\u03c9", pi: "\u03c0", sigma: "\u03c3", tau: "\u03c4",
    cdot: "\u00b7", times: "\u00d7", sum: "\u2211", le: "\u2264",
    leq: "\u2264", ge: "\u2265", geq: "\u2265", approx: "\u2248",
    Vert: "\u2016", lVert: "\u2016", rVert: "\u2016", infty: "\u221e",
    to: "\u2192", sin: "sin", cos: "cos", log: "log", ln: "ln",
    left: "", right: "", quad: "  ", prime: "\u2032"
  };
  var SUP = { "0": "\u2070", "1": "\u00b9", "2": "\u00b2", "3": "\u00b3",
    "4": "\u2074", "5": "\u2075", "6": "\u2076", "7": "\u2077", "8": "\u2078",
    "9": "\u2079", "-": "\u207b", "+": "\u207a", "T": "\u1d40", "n": "\u207f",
    "i": "\u2071", ".": "\u00b7", "(": "\u207d", ")": "\u207e" };
  var SUB = { "0": "\u2080", "1": "\u2081", "2": "\u2082", "3": "\u2083",
    "4": "\u2084", "5": "\u2085", "6": "\u2086", "7": "\u2087", "8": "\u2088",
    "9": "\u2089", "-": "\u208b", "+": "\u208a", "i": "\u1d62", "j": "\u2c7c",
    "k": "\u2096", "m": "\u2098", "n": "\u2099", "h": "\u2095", "s": "\u209b",
    "t": "\u209c", "p": "\u209a", "a": "\u2090", "e": "\u2091", "o": "\u2092",
    "x": "\u2093", "l": "\u2097", "r": "\u1d63" };

  function script(text, table, mark) {
    var out = "";
    for (var i = 0; i < text.length; i++) {
      if (!table[text[i]]) return mark + "(" + text + ")";
      out += table[text[i]];
    }
    return out;
  }

  /** matplotlib mathtext ("$\lambda_i$") as plain Unicode for the canvas. */
  function tex(s) {
    if (s === undefined || s === null) return "";
    return String(s).replace(/\$([^$]*)\$/g, function (_, m) {
      m = m.replace(/\\mathrm\{([^}]*)\}/g, "$1")
        .replace(/\\mathdefault\{([^}]*)\}/g, "$1")
        .replace(/\\tfrac(\d)(\d)/g, "$1/$2")
        .replace(/\\frac\{([^}]*)\}\{([^}]*)\}/g, "$1/$2")
        .replace(/\\[,;:!]/g, "\u2009")
        .replace(/\\([A-Za-z]+)/g, function (all, name) {
          return GREEK.hasOwnProperty(name) ? GREEK[name] : name;
        })
        .replace(/'/g, "\u2032");
      m = m.replace(/\^\{([^}]*)\}|\^(\S)/g, function (_, a, b) {
        return script(a !== undefined ? a : b, SUP, "^");
      }).replace(/_\{([^}]*)\}|_(\S)/g, function (_, a, b) {
        return script(a !== undefined ? a : b, SUB, "_");
      });
      return m.replace(/[{}]/g, "");
    });
  }

  var FONT = '"DejaVu Sans", "Segoe UI", Arial, Helvetica, sans-serif';

  function font(px, weight) {
    return (weight ? weight + " " : "") + px + "px " + FONT;
  }

  // ---- typeset text: mathtext as runs (italic letters, real sub/superscripts)

  /** Math operators and words that stay upright, as in TeX. */
  var UPRIGHT = { sin: 1, cos: 1, tan: 1, log: 1, ln: 1, exp: 1, max: 1,
    min: 1, softmax: 1, clip: 1, arg: 1, det: 1, dim: 1, mod: 1 };
  var UP_ON = "\u0001", UP_OFF = "\u0002";

  /** The math of one $...$ with its commands resolved; upright groups
   *  are marked UP_ON ... UP_OFF. */
  function mathSource(m) {
    m = m.replace(/\\(?:mathrm|text|mathdefault|operatorname|rm)\{([^{}]*)\}/g,
                  UP_ON + "$1" + UP_OFF)
      .replace(/\\tfrac(\d)(\d)/g, "$1/$2")
      .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "$1/$2")
      .replace(/\\[,;:]/g, "\u2009").replace(/\\!/g, "")
      .replace(/\\([A-Za-z]+)/g, function (all, name) {
        if (UPRIGHT.hasOwnProperty(name)) return UP_ON + name + UP_OFF;
        return GREEK.hasOwnProperty(name) ? GREEK[name] : UP_ON + name + UP_OFF;
      })
      .replace(/'/g, "\u2032").replace(/-/g, "\u2212");
    return m;
  }

  var ITALIC = /[A-Za-z\u03b1-\u03c9]/;

  /** Runs [{t, lvl, it}] of math source s at script level lvl. */
  function mathRuns(s, lvl, out) {
    var up = false, i = 0;
    function push(ch, level, it) {
      var last = out[out.length - 1];
      if (last && last.lvl === level && last.it === it) last.t += ch;
      else out.push({ t: ch, lvl: level, it: it });
    }
    while (i < s.length) {
      var ch = s[i];
      if (ch === UP_ON) { up = true; i++; continue; }
      if (ch === UP_OFF) { up = false; i++; continue; }
      if ((ch === "^" || ch === "_") && i + 1 < s.length) {
        var dir = ch === "^" ? 1 : -1, j = i + 1, group;
        if (s[j] === "{") {
          var depth = 0, k = j;
          for (; k < s.length; k++) {
            if (s[k] === "{") depth++;
            else if (s[k] === "}" && --depth === 0) break;
          }
          group = s.slice(j + 1, k);
          i = k + 1;
        } else if (s[j] === UP_ON) {
          var end = s.indexOf(UP_OFF, j);
          end = end < 0 ? s.length : end;
          group = s.slice(j, end + 1);
          i = end + 1;
        } else {
          group = s[j];
          i = j + 1;
        }
        var level = Math.max(-2, Math.min(2, lvl + dir));
        var inner = [];
        mathRuns((up ? UP_ON : "") + group, level, inner);
        inner.forEach(function (r) {
          for (var c = 0; c < r.t.length; c++) push(r.t[c], r.lvl, r.it);
        });
        continue;
      }
      i++;
      if (ch === "{" || ch === "}") continue;
      push(ch, lvl, !up && ITALIC.test(ch));
    }
    return out;
  }

  /** A label (with $...$ mathtext) as runs of one line. */
  function runsOf(s) {
    var out = [];
    String(s === undefined || s === null ? "" : s).split("$").forEach(function (part, k) {
      if (!part) return;
      if (k % 2) mathRuns(mathSource(part), 0, out);
      else out.push({ t: part, lvl: 0, it: false });
    });
    return out;
  }

  var SCRIPT_SCALE = [1, 0.7, 0.58];
  var SCRIPT_SHIFT = { "2": -0.62, "1": -0.38, "0": 0, "-1": 0.2, "-2": 0.32 };

  function runFont(run, px, weight) {
    var size = px * SCRIPT_SCALE[Math.abs(run.lvl)];
    return (run.it ? "italic " : "") + (weight ? weight + " " : "") + size + "px " + FONT;
  }

  function measureRuns(ctx, runs, px, weight) {
    var w = 0, keep = ctx.font;
    runs.forEach(function (r) { ctx.font = runFont(r, px, weight); w += ctx.measureText(r.t).width; });
    ctx.font = keep;
    return w;
  }

  /** The width of a label drawn at px (CSS pixels). */
  function labelWidth(ctx, s, px, weight) { return measureRuns(ctx, runsOf(s), px, weight); }

  /** Offset from the alphabetic baseline to where `baseline` puts text. */
  function baselineShift(baseline, px) {
    return { top: 0.8 * px, middle: 0.34 * px, center: 0.34 * px, bottom: -0.24 * px }[baseline] || 0;
  }

  /**
   * Draw a label at (x, y): o.align left|center|right, o.baseline
   * top|middle|bottom|alphabetic, o.weight, o.maxWidth (the text shrinks to
   * fit, never below 7 px), o.halo (a background box behind it).
   * Returns its box {x0, x1, y0, y1, px}.
   */
  function drawLabel(ctx, s, x, y, px, o) {
    o = o || {};
    var runs = runsOf(s);
    var w = measureRuns(ctx, runs, px, o.weight);
    if (o.maxWidth && w > o.maxWidth && w > 0) {
      var fit = Math.max(7, px * o.maxWidth / w);
      w = w * fit / px;
      px = fit;
    }
    var x0 = o.align === "center" ? x - w / 2 : o.align === "right" ? x - w : x;
    var base = y + baselineShift(o.baseline, px);
    var box = { x0: x0, x1: x0 + w, y0: base - 0.8 * px, y1: base + 0.26 * px, px: px };
    if (o.measureOnly) return box;
    if (BOXES && String(s) !== "") recordBox(ctx, o.kind || "label", String(s), box);
    var keepAlign = ctx.textAlign, keepBase = ctx.textBaseline, keepFont = ctx.font;
    if (o.halo) {
      var fill = ctx.fillStyle;
      ctx.globalAlpha = 0.8;
      ctx.fillStyle = o.halo;
      ctx.fillRect(box.x0 - 2, box.y0 - 1, box.x1 - box.x0 + 4, box.y1 - box.y0 + 2);
      ctx.globalAlpha = 1;
      ctx.fillStyle = fill;
    }
    ctx.textAlign = "left";
    ctx.textBaseline = "alphabetic";
    var cx = x0;
    runs.forEach(function (r) {
      ctx.font = runFont(r, px, o.weight);
      ctx.fillText(r.t, cx, base + SCRIPT_SHIFT[String(r.lvl)] * px);
      cx += ctx.measureText(r.t).width;
    });
    ctx.textAlign = keepAlign;
    ctx.textBaseline = keepBase;
    ctx.font = keepFont;
    return box;
  }

  /** While a figure renders: where each label went (for the tests). */
  var BOXES = null;

  function recordBox(ctx, kind, text, box) {
    var m = ctx.getTransform(), dpr = m.a || 1;
    if (Math.abs(m.b) > 1e-9 || Math.abs(m.c) > 1e-9) return;  // rotated
    var dpr0 = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
    var k = m.a / dpr0, e = m.e / dpr0, f = m.f / dpr0;
    BOXES.push({ kind: kind, text: text, x0: box.x0 * k + e, x1: box.x1 * k + e,
                 y0: box.y0 * k + f, y1: box.y1 * k + f, px: box.px });
  }

  /** Break a label into lines no wider than maxW (at spaces outside math,
   *  and between Chinese characters); "\n" always breaks. */
  function wrapLabel(ctx, s, px, maxW, weight) {
    var lines = [];
    String(s).split("\n").forEach(function (line) {
      var tokens = [], cur = "", math = false;
      for (var i = 0; i < line.length; i++) {
        var ch = line[i];
        if (ch === "$") math = !math;
        if (!math && (ch === " " || /[\u3000-\u9fff\uff00-\uffef]/.test(ch))) {
          if (ch === " ") { tokens.push(cur + " "); cur = ""; }
          else { tokens.push(cur + ch); cur = ""; }
        } else {
          cur += ch;
        }
      }
      if (cur) tokens.push(cur);
      var now = "";
      tokens.forEach(function (tok) {
        var next = now + tok;
        if (now && labelWidth(ctx, next.replace(/ $/, ""), px, weight) > maxW) {
          lines.push(now.replace(/ $/, ""));
          now = tok;
        } else {
          now = next;
        }
      });
      lines.push(now.replace(/ $/, ""));
    });
    return lines;
  }

  function overlaps(a, b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  }

  // ---- scales and ticks

  function Scale(type, base) {
    this.type = type || "linear";
    this.base = base || 10;
  }
  Scale.prototype.fwd = function (v) {
    return this.type === "log" ? Math.log(v) / Math.log(this.base) : v;
  };
  Scale.prototype.inv = function (u) {
    return this.type === "log" ? Math.pow(this.base, u) : u;
  };
  Scale.prototype.ok = function (v) {
    return isFinite(v) && (this.type !== "log" || v > 0);
  };

  /**
   * Ticks at multiples of 1, 2, 2.5 or 5 times a power of ten, about
   * maxTicks of them; on an integer axis (integer data, image rows and
   * columns) only whole steps of 1, 2 or 5 times a power of ten.
   */
  function niceTicks(lo, hi, maxTicks, integer) {
    if (!(hi > lo)) return [lo];
    var raw = (hi - lo) / Math.max(1, maxTicks);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = integer ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10], step = 10 * mag;
    for (var i = 0; i < steps.length; i++) {
      if (steps[i] * mag >= raw * (1 - 1e-9)) { step = steps[i] * mag; break; }
    }
    if (integer && step < 1) step = 1;
    var out = [], k0 = Math.ceil(lo / step - 1e-9), k1 = Math.floor(hi / step + 1e-9);
    for (var k = k0; k <= k1; k++) {
      var t = k * step;
      // the decimal value, not k * step's binary rounding (0.30000000000000004)
      t = parseFloat(t.toPrecision(12));
      out.push(t === 0 ? 0 : t);
    }
    return out;
  }

  /** Decimals that multiples of step need (2.5 -> 1, 0.25 -> 2, 5 -> 0). */
  function decimalsOf(step) {
    for (var d = 0; d < 7; d++) {
      var scaled = step * Math.pow(10, d);
      if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return d;
    }
    return 7;
  }

  /** Typographic minus and thousands separators, as the prose writes numbers. */
  function prose(text) { return text.replace(/^-/, "\u2212"); }

  function powerLabel(base, e) { return "$" + base + "^{" + e + "}$"; }

  /** A linear axis' tick label: every label of an axis with the decimals
   *  of its step; beyond a million (or below 1e-4), m x 10^e. */
  function tickLabel(v, step) {
    if (v === 0) return step ? pyformat(0, "." + Math.min(decimalsOf(step), 6) + "f") : "0";
    var a = Math.abs(v);
    if (a >= 1e6 || a < 1e-4) {
      var sd = sigDigits(v, 3), rest = sd.digits.slice(1).replace(/0+$/, "");
      var mant = sd.digits[0] + (rest ? "." + rest : "");
      var sign = v < 0 ? "\u2212" : "";
      return mant === "1" ? "$" + sign + "10^{" + sd.exp + "}$" :
        "$" + sign + mant + "\\times10^{" + sd.exp + "}$";
    }
    var dec = step ? decimalsOf(step) : decimalsOf(a);
    return prose(pyformat(v, ",." + Math.min(dec, 6) + "f"));
  }

  function logTicks(scale, lo, hi, maxTicks) {
    var a = Math.floor(scale.fwd(lo) + 1e-9), b = Math.ceil(scale.fwd(hi) - 1e-9);
    var every = Math.max(1, Math.ceil((b - a + 1) / Math.max(2, maxTicks)));
    var out = [];
    for (var e = a; e <= b; e++) {
      if ((e - a) % every === 0) out.push({ v: Math.pow(scale.base, e), e: e });
    }
    if (out.length < 3 && scale.base === 10) {  // less than two decades
      var more = [];
      for (e = a - 1; e <= b; e++) {
        [2, 5].forEach(function (m) { more.push({ v: m * Math.pow(10, e), e: null }); });
      }
      out = out.concat(more);
    }
    out = out.filter(function (t) {
      return t.v >= lo * (1 - 1e-9) && t.v <= hi * (1 + 1e-9);
    }).sort(function (x, y) { return x.v - y.v; });
    // one style per axis: plain numbers while they stay short, else powers
    var plain = out.every(function (t) {
      return scale.base === 10 ? t.v >= 0.01 * (1 - 1e-9) && t.v <= 1e4 * (1 + 1e-9) :
        t.v >= 1 / 64 && t.v < 1e5;
    });
    return out.map(function (t) {
      var label;
      if (plain || t.e === null) {
        label = t.v >= 1 ? prose(pyformat(Math.round(t.v), ",d")) : pyformat(t.v, "g");
      } else {
        label = powerLabel(scale.base, t.e);
      }
      return { v: t.v, label: label };
    });
  }

  // ---- Axes

  function Axes(fig) {
    this.fig = fig;
    this.images = [];
    this.lines = [];
    this.patches = [];
    this.collections = [];
    this.texts = [];
    this.artists = [];
    this.title = "";
    this.xlabel = "";
    this.ylabel = "";
    this.xscale = new Scale();
    this.yscale = new Scale();
    this.xlimSet = [null, null];
    this.ylimSet = [null, null];
    this.xticksSet = null;
    this.yticksSet = null;
    this.legendOpts = null;
    this.cbar = null;
    this.colorIndex = 0;
    this.aspect = "auto";
  }

  function arr(a) { return Array.prototype.slice.call(a); }

  function nextColor(ax, o) {
    if (o && o.color !== undefined) return css(o.color);
    return TAB10[(ax.colorIndex++) % 10];
  }

  Axes.prototype.add = function (list, artist) {
    list.push(artist);
    this.artists.push(artist);
    return artist;
  };

  /** imshow(A): default limits are nanmin/nanmax, aspect equal. */
  Axes.prototype.imshow = function (A, o) {
    o = o || {};
    var flat = [];
    A.forEach(function (row) { row.forEach(function (v) { if (!isNaN(v)) flat.push(v); }); });
    var im = {
      kind: "image", data: A, cmap: o.cmap || "viridis",
      vmin: o.vmin !== undefined && o.vmin !== null ? o.vmin : (flat.length ? min(flat) : 0),
      vmax: o.vmax !== undefined && o.vmax !== null ? o.vmax : (flat.length ? max(flat) : 1),
      rows: A.length, cols: A.length ? A[0].length : 0
    };
    if (o.aspect !== "auto") this.aspect = "equal";
    this.add(this.images, im);
    return im;
  };

  /** plot(x, y, {color, lw, ls, marker, ms, mfc, label, gid, drawstyle}). */
  Axes.prototype.plot = function (x, y, o) {
    o = o || {};
    var line = {
      kind: "line", x: arr(x), y: arr(y), color: nextColor(this, o),
      lw: o.lw !== undefined ? o.lw : 1.5,
      ls: o.ls !== undefined ? o.ls : (o.marker ? "none" : "-"),
      marker: o.marker || null, ms: o.ms !== undefined ? o.ms : 6,
      mfc: o.mfc, label: o.label, gid: o.gid === undefined ? null : o.gid,
      drawstyle: o.drawstyle || "default", coords: "data", zorder: o.zorder || 2,
      markevery: o.markevery || null, alpha: o.alpha
    };
    return this.add(this.lines, line);
  };

  Axes.prototype.loglog = function (x, y, o) {
    this.set_xscale("log");
    this.set_yscale("log");
    return this.plot(x, y, o);
  };

  Axes.prototype.step = function (x, y, o) {
    o = Object.assign({}, o || {});
    o.drawstyle = "steps-" + (o.where || "pre");
    return this.plot(x, y, o);
  };

  Axes.prototype.axhline = function (y, o) {
    o = o || {};
    var line = this.plot([0, 1], [y, y], Object.assign({ color: "k" }, o));
    line.coords = "hline";
    return line;
  };

  Axes.prototype.axvline = function (x, o) {
    o = o || {};
    var line = this.plot([x, x], [0, 1], Object.assign({ color: "k" }, o));
    line.coords = "vline";
    return line;
  };

  /** bar(x, heights, {width, color}) with colour per bar allowed. */
  Axes.prototype.bar = function (x, h, o) {
    o = o || {};
    var width = o.width !== undefined ? o.width : 0.8;
    var base = nextColor(this, o.color && !Array.isArray(o.color) ? o : null);
    var self = this;
    x.forEach(function (xi, i) {
      var c = Array.isArray(o.color) ? css(o.color[i]) : base;
      self.add(self.patches, {
        kind: "rect", x: xi - width / 2, y: 0, w: width, h: h[i], color: c,
        coords: "data", label: i === 0 ? o.label : undefined, sticky: true
      });
    });
  };

  Axes.prototype.axvspan = function (x0, x1, o) {
    o = o || {};
    return this.add(this.patches, {
      kind: "rect", x: x0, y: 0, w: x1 - x0, h: 1, color: css(o.color || "C0"),
      coords: "vspan", label: o.label, alpha: o.alpha
    });
  };

  Axes.prototype.scatter = function (x, y, o) {
    o = o || {};
    var offsets = arr(x).map(function (xi, i) { return [xi, y[i]]; });
    return this.add(this.collections, {
      kind: "scatter", offsets: offsets, s: o.s || 20, color: nextColor(this, o),
      label: o.label
    });
  };

  Axes.prototype.vlines = function (x, ymin, ymax, o) {
    o = o || {};
    var seg = arr(x).map(function (xi, i) {
      var a = Array.isArray(ymin) ? ymin[i] : ymin;
      var b = Array.isArray(ymax) ? ymax[i] : ymax;
      return [[xi, a], [xi, b]];
    });
    return this.add(this.collections, {
      kind: "segments", segments: seg, color: css(o.color || "k"),
      lw: o.lw || 1, label: o.label
    });
  };

  /** text(x, y, s, {ha, va, fontsize, color, rotation, transform, halo}). */
  Axes.prototype.text = function (x, y, s, o) {
    o = o || {};
    return this.add(this.texts, {
      kind: "text", x: x, y: y, s: s, ha: o.ha || "left", va: o.va || "baseline",
      size: o.fontsize || 10, color: css(o.color || "k"),
      rotation: o.rotation || 0, coords: o.transform || "data",
      halo: !!o.halo  // a light box behind it (labels over an image)
    });
  };

  Axes.prototype.set_title = function (s) { this.title = s; };
  Axes.prototype.set_xlabel = function (s) { this.xlabel = s; };
  Axes.prototype.set_ylabel = function (s) { this.ylabel = s; };
  Axes.prototype.set_xscale = function (t, o) { this.xscale = new Scale(t, o && o.base); };
  Axes.prototype.set_yscale = function (t, o) { this.yscale = new Scale(t, o && o.base); };
  Axes.prototype.set_xlim = function (a, b) { this.xlimSet = [a, b === undefined ? null : b]; };
  Axes.prototype.set_ylim = function (a, b) { this.ylimSet = [a, b === undefined ? null : b]; };
  Axes.prototype.set_xticks = function (ticks, labels, o) {
    this.xticksSet = { ticks: arr(ticks), labels: labels, rotation: (o && o.rotation) || 0 };
  };
  Axes.prototype.set_yticks = function (ticks, labels) {
    this.yticksSet = { ticks: arr(ticks), labels: labels };
  };
  Axes.prototype.legend = function (o) { this.legendOpts = o || {}; };
  Axes.prototype.set_aspect = function (a) { this.aspect = a; };
  Axes.prototype.axis_off = function () { this.hidden = true; };

  /** Whether every data value along an axis ("x" or "y") is an integer
   *  (bar centres, line and marker positions): its ticks are then whole. */
  Axes.prototype.integerData = function (which) {
    var k = which === "x" ? 0 : 1, seen = 0, whole = true;
    var check = function (v) {
      if (!isFinite(v)) return;
      seen++;
      if (Math.abs(v - Math.round(v)) > 1e-9) whole = false;
    };
    this.lines.forEach(function (l) {
      if ((k === 0 && l.coords === "hline") || (k === 1 && l.coords === "vline")) return;
      if (k === 0 && l.coords === "vline") { check(l.x[0]); return; }
      if (k === 1 && l.coords === "hline") return;  // a reference level, not data
      (k === 0 ? l.x : l.y).forEach(check);
    });
    this.patches.forEach(function (p) {
      if (p.coords !== "data") return;
      if (k === 0) check(p.x + p.w / 2); else { check(p.y); check(p.y + p.h); }
    });
    this.collections.forEach(function (c) {
      var pts = c.offsets || [].concat.apply([], c.segments);
      pts.forEach(function (pt) { check(pt[k]); });
    });
    return whole && seen > 0;
  };

  Axes.prototype.legendEntries = function () {
    return this.artists.filter(function (a) {
      return a.label !== undefined && a.label !== null && a.label !== "" &&
        String(a.label)[0] !== "_";
    });
  };

  /** What the tests compare with the matplotlib figure's artists. */
  Axes.prototype.record = function () {
    return {
      title: this.title, xlabel: this.xlabel, ylabel: this.ylabel,
      xscale: this.xscale.type, yscale: this.yscale.type,
      images: this.images.map(function (im) { return im.data; }),
      lines: this.lines.map(function (l) {
        return { x: l.x, y: l.y, label: l.label === undefined ? null : String(l.label), gid: l.gid };
      }),
      patches: this.patches.map(function (p) { return [p.x, p.y, p.w, p.h]; }),
      collections: this.collections.map(function (c) {
        return c.kind === "scatter" ? { offsets: c.offsets } : { segments: c.segments };
      }),
      texts: this.texts.map(function (t) { return t.s; }),
      legend: this.legendOpts ? this.legendEntries().map(function (a) {
        return String(a.label);
      }) : null
    };
  };

  function extend(lims, v) {
    if (v < lims[0]) lims[0] = v;
    if (v > lims[1]) lims[1] = v;
  }

  /** Data limits with matplotlib's 5% margins (none around images). */
  Axes.prototype.limits = function () {
    var xs = [Infinity, -Infinity], ys = [Infinity, -Infinity];
    var sx = this.xscale, sy = this.yscale, stickyY = null, image = false;
    this.images.forEach(function (im) {
      image = true;
      extend(xs, -0.5); extend(xs, im.cols - 0.5);
      extend(ys, -0.5); extend(ys, im.rows - 0.5);
    });
    this.lines.forEach(function (l) {
      for (var i = 0; i < l.x.length; i++) {
        if (l.coords !== "hline" && sx.ok(l.x[i])) extend(xs, l.x[i]);
        if (l.coords !== "vline" && sy.ok(l.y[i])) extend(ys, l.y[i]);
      }
    });
    this.patches.forEach(function (p) {
      if (sx.ok(p.x)) extend(xs, p.x);
      if (sx.ok(p.x + p.w)) extend(xs, p.x + p.w);
      if (p.coords === "data") {
        if (sy.ok(p.y)) extend(ys, p.y);
        if (sy.ok(p.y + p.h)) extend(ys, p.y + p.h);
        if (p.sticky) stickyY = 0;
      }
    });
    this.collections.forEach(function (c) {
      var pts = c.offsets || [].concat.apply([], c.segments);
      pts.forEach(function (pt) {
        if (sx.ok(pt[0])) extend(xs, pt[0]);
        if (sy.ok(pt[1])) extend(ys, pt[1]);
      });
    });
    var margin = function (lims, scale, sticky) {
      if (!(lims[0] <= lims[1])) return scale.type === "log" ? [1, 10] : [0, 1];
      var a = scale.fwd(lims[0]), b = scale.fwd(lims[1]);
      if (a === b) { a -= 0.5; b += 0.5; }
      if (!image) {
        var m = 0.05 * (b - a);
        var a2 = a - m, b2 = b + m;
        if (sticky !== null && sticky !== undefined) {
          if (a >= scale.fwd(sticky) && a2 < scale.fwd(sticky)) a2 = scale.fwd(sticky);
          if (b <= scale.fwd(sticky) && b2 > scale.fwd(sticky)) b2 = scale.fwd(sticky);
        }
        a = a2; b = b2;
      }
      return [scale.inv(a), scale.inv(b)];
    };
    var xl = margin(xs, sx, null), yl = margin(ys, sy, stickyY);
    if (this.xlimSet[0] !== null) xl[0] = this.xlimSet[0];
    if (this.xlimSet[1] !== null) xl[1] = this.xlimSet[1];
    if (this.ylimSet[0] !== null) yl[0] = this.ylimSet[0];
    if (this.ylimSet[1] !== null) yl[1] = this.ylimSet[1];
    var yInverted = image;
    return { x: xl, y: yInverted ? [yl[1], yl[0]] : yl, image: image };
  };

  // ---- Figure

  function Figure(figsize) {
    this.figsize = figsize || [6.4, 4.8];
    this.axes = [];
    this.suptitleText = null;
    this.grid = [1, 1];
  }

  Figure.prototype.subplots = function (rows, cols) {
    rows = rows || 1;
    cols = cols || 1;
    this.grid = [rows, cols];
    this.axes = [];
    for (var i = 0; i < rows * cols; i++) this.axes.push(new Axes(this));
    return rows * cols === 1 ? this.axes[0] : this.axes;
  };

  Figure.prototype.colorbar = function (im, ax, o) {
    ax.cbar = { image: im, label: (o && o.label) || "" };
  };

  Figure.prototype.suptitle = function (s) { this.suptitleText = s; };

  Figure.prototype.record = function () {
    return {
      suptitle: this.suptitleText,
      axes: this.axes.filter(function (a) { return !a.hidden; })
        .map(function (a) { return a.record(); })
    };
  };

  /** Plain-text summary of the figure for screen readers. */
  Figure.prototype.describe = function () {
    var parts = [];
    if (this.suptitleText) parts.push(tex(this.suptitleText));
    this.axes.forEach(function (a) { if (a.title) parts.push(tex(a.title)); });
    return parts.join(". ");
  };

  function drawLine(ctx, pts, style) {
    ctx.beginPath();
    var pen = false;
    for (var i = 0; i < pts.length; i++) {
      var p = pts[i];
      if (p === null || !isFinite(p[0]) || !isFinite(p[1])) { pen = false; continue; }
      if (pen) ctx.lineTo(p[0], p[1]); else ctx.moveTo(p[0], p[1]);
      pen = true;
    }
    ctx.stroke();
  }

  function dashFor(ls, lw) {
    if (ls === "--") return [3.7 * lw + 2, 1.6 * lw + 1];
    if (ls === ":") return [lw + 0.5, 1.65 * lw + 1];
    if (ls === "-.") return [6.4 * lw, 1.6 * lw, lw, 1.6 * lw];
    return [];
  }

  function drawMarker(ctx, marker, x, y, size, fill, edge) {
    var r = size / 2;
    ctx.beginPath();
    if (marker === "s") ctx.rect(x - r * 0.85, y - r * 0.85, 1.7 * r, 1.7 * r);
    else if (marker === "^") {
      ctx.moveTo(x, y - r); ctx.lineTo(x + r, y + r * 0.8); ctx.lineTo(x - r, y + r * 0.8);
      ctx.closePath();
    } else if (marker === "D") {
      ctx.moveTo(x, y - r); ctx.lineTo(x + r * 0.8, y); ctx.lineTo(x, y + r);
      ctx.lineTo(x - r * 0.8, y); ctx.closePath();
    } else {
      ctx.arc(x, y, marker === "." ? r * 0.5 : r, 0, 2 * Math.PI);
    }
    if (fill !== "none") { ctx.fillStyle = fill; ctx.fill(); }
    ctx.strokeStyle = edge;
    ctx.lineWidth = 1;
    ctx.stroke();
  }

  function textWidth(ctx, s) { return ctx.measureText(s).width; }

  /** Draw the figure on a canvas whose CSS width is its container's. */
  /**
   * The canvas height of a figure at width W: from its figsize and its grid
   * only (never from the data), so that no slider makes the page jump.
   */
  Figure.prototype.layout = function (W) {
    var rows = this.grid[0], cols = this.grid[1];
    // panel shape in the matplotlib figure (width / height)
    var aspect = (this.figsize[0] / cols) / (this.figsize[1] / rows);
    if (rows === 1 && cols > 1) {  // narrow page: wrap the panels
      var fit = Math.max(1, Math.floor(W / 330));
      if (fit < cols) { cols = fit; rows = Math.ceil(this.axes.length / cols); }
    }
    var top = this.suptitleText !== null ? 30 : 6;
    var cellH = Math.min(Math.max((W / cols) / aspect, 240), 400);
    return { rows: rows, cols: cols, top: top, cellH: cellH,
             H: Math.round(top + rows * cellH) };
  };

  /** Draw the figure on a canvas whose CSS width is its container's. */
  Figure.prototype.render = function (canvas) {
    var dpr = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
    var W = Math.max(300, canvas.clientWidth || (canvas.parentNode && canvas.parentNode.clientWidth) || 720);
    var L = this.layout(W), rows = L.rows, cols = L.cols, H = L.H;
    canvas.style.height = H + "px";
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    var ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, H);
    ctx.textBaseline = "alphabetic";
    this.boxes = BOXES = [];
    try {
      this.paint(ctx, W, H, L);
    } finally {
      BOXES = null;
    }
  };

  Figure.prototype.paint = function (ctx, W, H, L) {
    var rows = L.rows, cols = L.cols;
    var top = L.top;
    if (this.suptitleText !== null) {
      // wrapped to the width; the panels share what the lines leave
      ctx.fillStyle = "#000";
      var lines = wrapLabel(ctx, this.suptitleText, 13, W - 16);
      lines.forEach(function (line, k) {
        drawLabel(ctx, line, W / 2, 8 + k * 17, 13, { align: "center", baseline: "top", maxWidth: W - 10,
                                                     kind: "suptitle" });
      });
      top = Math.max(top, 14 + lines.length * 17);
    }
    var cellW = W / cols, cellH = (H - top) / rows;
    var self = this;
    this.axes.forEach(function (ax, i) {
      if (ax.hidden) return;
      var r = Math.floor(i / cols), c = i % cols;
      self.drawAxes(ctx, ax, { x: c * cellW, y: top + r * cellH, w: cellW, h: cellH });
    });
  };

  var TICK_PX = 10.5, LABEL_PX = 11.5, TITLE_PX = 12, LINE_PX = 15;

  /** Texts placed above the Axes (axes or x-axis coordinates, y >= 1). */
  function isAbove(t) {
    return (t.coords === "axes" || t.coords === "xaxis") && t.y >= 1 && !t.rotation;
  }

  Figure.prototype.drawAxes = function (ctx, ax, cell) {
    var lim = ax.limits();
    var sx = ax.xscale, sy = ax.yscale;
    // ticks first (for the margins)
    var approxW = cell.w - 80, approxH = cell.h - 70;
    var xt = makeTicks(ax.xticksSet, sx, lim.x, Math.max(2, Math.floor(approxW / 70)),
                       lim.image || ax.integerData("x"));
    var yt = makeTicks(ax.yticksSet, sy, lim.y, Math.max(2, Math.floor(approxH / 32)),
                       lim.image || ax.integerData("y"));
    var yTickW = 0;
    yt.forEach(function (t) { yTickW = Math.max(yTickW, labelWidth(ctx, t.label, TICK_PX)); });
    var rot = ax.xticksSet && ax.xticksSet.rotation ? ax.xticksSet.rotation : 0;
    var xTickH = 14;
    if (rot) {
      var wmax = 0;
      xt.forEach(function (t) { wmax = Math.max(wmax, labelWidth(ctx, t.label, TICK_PX)); });
      xTickH = 8 + wmax * Math.sin(rot * Math.PI / 180);
    }
    var titleLines = ax.title ? wrapLabel(ctx, ax.title, TITLE_PX, cell.w - 12) : [];
    var left = 8 + yTickW + 6 + (ax.ylabel ? 18 : 0);
    var bottom = 6 + xTickH + (ax.xlabel ? 18 : 4);
    var above = ax.texts.filter(isAbove);
    var tileLabels = ax.texts.some(function (t) {
      return t.coords === "data" && lim.image && t.y < -0.5;
    });
    var right = 12 + (ax.cbar ? 64 : 0);
    var rect;
    var place = function (levels) {
      var topM = 8 + titleLines.length * LINE_PX + (tileLabels ? 14 : 0) + levels * 13;
      rect = { x: cell.x + left, y: cell.y + topM, w: cell.w - left - right, h: cell.h - topM - bottom };
      if (ax.aspect === "equal") {
        var dw = Math.abs(sx.fwd(lim.x[1]) - sx.fwd(lim.x[0]));
        var dh = Math.abs(sy.fwd(lim.y[1]) - sy.fwd(lim.y[0]));
        var k = Math.min(rect.w / dw, rect.h / dh);
        var nw = dw * k, nh = dh * k;
        rect.x += (rect.w - nw) / 2;
        rect.y += (rect.h - nh) / 2;
        rect.w = nw;
        rect.h = nh;
      }
    };
    place(above.length ? 1 : 0);
    if (above.length) {  // a second row where the labels above would collide
      var levels = stackAbove(ctx, above, rect, sx, lim);
      if (levels > 1) { place(levels); stackAbove(ctx, above, rect, sx, lim); }
    }
    var X = function (v) {
      return rect.x + (sx.fwd(v) - sx.fwd(lim.x[0])) / (sx.fwd(lim.x[1]) - sx.fwd(lim.x[0])) * rect.w;
    };
    var Y = function (v) {
      return rect.y + rect.h - (sy.fwd(v) - sy.fwd(lim.y[0])) / (sy.fwd(lim.y[1]) - sy.fwd(lim.y[0])) * rect.h;
    };
    var AY = function (f) { return rect.y + rect.h - f * rect.h; };  // axes fraction
    var AX = function (f) { return rect.x + f * rect.w; };
    ctx.save();
    ctx.beginPath();
    ctx.rect(rect.x, rect.y, rect.w, rect.h);
    ctx.clip();
    ax.artists.forEach(function (a) {
      if (a.kind === "image") drawImage(ctx, a, X, Y);
      else if (a.kind === "rect") {
        ctx.globalAlpha = a.alpha !== undefined ? a.alpha : 1;
        ctx.fillStyle = a.color;
        var x0 = X(a.x), x1 = X(a.x + a.w);
        var y0 = a.coords === "vspan" ? AY(0) : Y(a.y);
        var y1 = a.coords === "vspan" ? AY(1) : Y(a.y + a.h);
        ctx.fillRect(Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0));
        ctx.globalAlpha = 1;
      } else if (a.kind === "segments") {
        ctx.strokeStyle = a.color;
        ctx.lineWidth = a.lw;
        ctx.setLineDash([]);
        a.segments.forEach(function (s) {
          drawLine(ctx, [[X(s[0][0]), Y(s[0][1])], [X(s[1][0]), Y(s[1][1])]]);
        });
      } else if (a.kind === "scatter") {
        a.offsets.forEach(function (p) {
          if (sx.ok(p[0]) && sy.ok(p[1])) {
            drawMarker(ctx, "o", X(p[0]), Y(p[1]), Math.sqrt(a.s) * 0.9, a.color, a.color);
          }
        });
      } else if (a.kind === "line") {
        var pts = [];
        for (var i = 0; i < a.x.length; i++) {
          var px = a.coords === "hline" ? AX(a.x[i]) : (sx.ok(a.x[i]) ? X(a.x[i]) : NaN);
          var py = a.coords === "vline" ? AY(a.y[i]) : (sy.ok(a.y[i]) ? Y(a.y[i]) : NaN);
          pts.push([px, py]);
        }
        if (a.drawstyle !== "default" && pts.length > 1) pts = stepPoints(pts, a.drawstyle);
        ctx.globalAlpha = a.alpha !== undefined ? a.alpha : 1;
        if (a.ls !== "none" && a.ls !== "" && a.lw > 0) {
          ctx.strokeStyle = a.color;
          ctx.lineWidth = a.lw;
          ctx.setLineDash(dashFor(a.ls, a.lw));
          drawLine(ctx, pts);
          ctx.setLineDash([]);
        }
        if (a.marker) {
          for (i = 0; i < a.x.length; i++) {
            if (a.markevery && a.markevery.indexOf(i) < 0) continue;
            var mx = a.coords === "hline" ? AX(a.x[i]) : X(a.x[i]);
            var my = a.coords === "vline" ? AY(a.y[i]) : Y(a.y[i]);
            if (isFinite(mx) && isFinite(my) && sx.ok(a.x[i]) && sy.ok(a.y[i])) {
              drawMarker(ctx, a.marker, mx, my, a.ms, a.mfc === "none" ? "none" : a.color, a.color);
            }
          }
        }
        ctx.globalAlpha = 1;
      }
    });
    ctx.restore();
    // texts (not clipped, as in matplotlib); overlapping ones are shrunk
    // together (numbers in cells), labels above the Axes are stacked
    var inside = ax.texts.filter(function (t) { return !isAbove(t); });
    var fit = fitTexts(ctx, inside, X, Y, AX, AY), textTop = Infinity;
    ax.texts.forEach(function (t) {
      if (fit.skip.indexOf(t) >= 0) return;
      var px = t.coords === "axes" ? AX(t.x) : X(t.x);
      var py = (t.coords === "axes" || t.coords === "xaxis") ? AY(t.y) : Y(t.y);
      var size = textPx(t) * (isAbove(t) ? 1 : fit.factor);
      if (isAbove(t)) py -= (t.level || 0) * 13;
      ctx.save();
      ctx.translate(px, py);
      if (t.rotation) ctx.rotate(-t.rotation * Math.PI / 180);
      ctx.fillStyle = t.color;
      var box = drawLabel(ctx, t.s, 0, 0, size, { align: HA[t.ha] || "left", baseline: VA[t.va] || "alphabetic",
                                                  halo: t.halo ? "#ffffff" : null,
                                                  kind: isAbove(t) ? "annotation" : "text" });
      ctx.restore();
      if (!t.rotation && py + box.y1 <= rect.y + 2) textTop = Math.min(textTop, py + box.y0);
    });
    // frame and ticks
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 0.8;
    ctx.setLineDash([]);
    ctx.strokeRect(rect.x, rect.y, rect.w, rect.h);
    ctx.fillStyle = "#000";
    var inX = function (px) { return px >= rect.x - 0.5 && px <= rect.x + rect.w + 0.5; };
    var shown = xt.filter(function (t) { return inX(X(t.v)); });
    if (!ax.xticksSet && !rot) shown = thinTicks(ctx, shown, X);
    shown.forEach(function (t) {
      var px = X(t.v);
      drawLine(ctx, [[px, rect.y + rect.h], [px, rect.y + rect.h + 4]]);
      if (rot) {
        ctx.save();
        ctx.translate(px, rect.y + rect.h + 6);
        ctx.rotate(-rot * Math.PI / 180);
        drawLabel(ctx, t.label, 0, 0, TICK_PX, { align: "right", baseline: "middle" });
        ctx.restore();
      } else {
        drawLabel(ctx, t.label, px, rect.y + rect.h + 6, TICK_PX, { align: "center", baseline: "top",
                                                                      kind: "xtick" });
      }
    });
    yt.forEach(function (t) {
      var py = Y(t.v);
      if (!(py >= rect.y - 0.5 && py <= rect.y + rect.h + 0.5)) return;
      drawLine(ctx, [[rect.x - 4, py], [rect.x, py]]);
      drawLabel(ctx, t.label, rect.x - 6, py, TICK_PX, { align: "right", baseline: "middle", kind: "ytick" });
    });
    if (ax.xlabel) {
      drawLabel(ctx, ax.xlabel, rect.x + rect.w / 2, cell.y + cell.h - 4, LABEL_PX,
                { align: "center", baseline: "bottom", maxWidth: cell.w - 10, kind: "xlabel" });
    }
    if (ax.ylabel) {
      ctx.save();
      ctx.translate(Math.max(cell.x + 4, rect.x - 6 - yTickW - 20), rect.y + rect.h / 2);
      ctx.rotate(-Math.PI / 2);
      drawLabel(ctx, ax.ylabel, 0, 0, LABEL_PX, { align: "center", baseline: "top", maxWidth: rect.h + 40 });
      ctx.restore();
    }
    if (titleLines.length) {
      var above0 = ax.texts.filter(isAbove).reduce(function (m, t) {
        return Math.max(m, (t.level || 0) + 1);
      }, 0);
      var ty = rect.y - 5 - (lim.image && ax.texts.some(function (t) { return t.y < -0.5; }) ? 14 : 0) - above0 * 13;
      ty = Math.min(ty, textTop - 3);  // above the texts over the Axes
      for (var li = titleLines.length - 1; li >= 0; li--) {
        drawLabel(ctx, titleLines[li], rect.x + rect.w / 2, ty, TITLE_PX,
                  { align: "center", baseline: "bottom", maxWidth: cell.w - 6, kind: "title" });
        ty -= LINE_PX;
      }
    }
    if (ax.legendOpts) drawLegend(ctx, ax, rect);
    if (ax.cbar) drawColorbar(ctx, ax.cbar, rect);
  };

  var HA = { left: "left", center: "center", right: "right" };
  var VA = { top: "top", center: "middle", bottom: "bottom", baseline: "alphabetic" };

  function textPx(t) { return Math.max(9, t.size * 1.05); }

  function textBox(ctx, t, x, y, px) {
    return drawLabel(ctx, t.s, x, y, px, { align: HA[t.ha] || "left", baseline: VA[t.va] || "alphabetic",
                                          measureOnly: true });
  }

  /**
   * The texts inside the Axes: {factor, skip}. One size factor for all, as
   * large as they can be without two overlapping (down to 7 px); if they
   * still overlap at 7 px (16 tile labels on a phone), every text that
   * would cover one already drawn is left out of the picture (it stays in
   * the figure's record and in what screen readers are told).
   */
  function fitTexts(ctx, texts, X, Y, AX, AY) {
    var flat = texts.filter(function (t) { return !t.rotation && t.s !== ""; });
    var none = { factor: 1, skip: [] };
    if (flat.length < 2 || flat.length > 400) return none;
    var at = flat.map(function (t) {
      return [t.coords === "axes" ? AX(t.x) : X(t.x),
              (t.coords === "axes" || t.coords === "xaxis") ? AY(t.y) : Y(t.y)];
    });
    var factor = 1, boxes;
    var clashes = function () {
      boxes = flat.map(function (t, i) { return textBox(ctx, t, at[i][0], at[i][1], textPx(t) * factor); });
      for (var i = 0; i < boxes.length; i++) {
        for (var j = i + 1; j < boxes.length; j++) {
          if (overlaps(boxes[i], boxes[j])) return true;
        }
      }
      return false;
    };
    for (var round = 0; round < 12; round++) {
      if (!clashes()) return { factor: factor, skip: [] };
      if (textPx(flat[0]) * factor * 0.9 < 7) break;
      factor *= 0.9;
    }
    var kept = [], skip = [];
    flat.forEach(function (t, i) {
      var pad = { x0: boxes[i].x0 - 2, x1: boxes[i].x1 + 2, y0: boxes[i].y0, y1: boxes[i].y1 };
      if (kept.some(function (b) { return overlaps(b, pad); })) skip.push(t);
      else kept.push(pad);
    });
    return { factor: factor, skip: skip };
  }

  /** Give each label above the Axes a row (t.level) where it overlaps no
   *  other; returns the number of rows. */
  function stackAbove(ctx, above, rect, sx, lim) {
    var X = function (v) {
      return rect.x + (sx.fwd(v) - sx.fwd(lim.x[0])) / (sx.fwd(lim.x[1]) - sx.fwd(lim.x[0])) * rect.w;
    };
    var placed = [], levels = 1;
    above.forEach(function (t) {
      var x = t.coords === "axes" ? rect.x + t.x * rect.w : X(t.x);
      var box = textBox(ctx, t, x, 0, textPx(t));
      var level = 0;
      while (placed.some(function (p) {
        return p.level === level && box.x0 < p.box.x1 + 4 && p.box.x0 < box.x1 + 4;
      })) level++;
      t.level = level;
      placed.push({ level: level, box: box });
      levels = Math.max(levels, level + 1);
    });
    return levels;
  }

  /** Every other tick, until their labels no longer touch. */
  function thinTicks(ctx, ticks, X) {
    var out = ticks;
    for (var round = 0; round < 4 && out.length > 2; round++) {
      var boxes = out.map(function (t) {
        var w = labelWidth(ctx, t.label, TICK_PX), px = X(t.v);
        return { x0: px - w / 2, x1: px + w / 2 };
      });
      var clash = boxes.some(function (b, i) { return i > 0 && b.x0 < boxes[i - 1].x1 + 6; });
      if (!clash) break;
      var zero = out.map(function (t) { return t.v; }).indexOf(0);
      var keep = zero >= 0 ? zero % 2 : 0;
      out = out.filter(function (_, i) { return i % 2 === keep; });
    }
    return out;
  }

  function makeTicks(set, scale, lim, count, integer) {
    var lo = Math.min(lim[0], lim[1]), hi = Math.max(lim[0], lim[1]);
    if (set) {
      return set.ticks.map(function (v, i) {
        return { v: v, label: set.labels ? String(set.labels[i]) : tickLabel(v, null) };
      });
    }
    if (scale.type === "log") return logTicks(scale, lo, hi, count);
    var ticks = niceTicks(lo, hi, count, integer);
    var step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
    return ticks.map(function (v) { return { v: v, label: tickLabel(v, step) }; });
  }

  function stepPoints(pts, style) {
    var out = [];
    for (var i = 0; i < pts.length; i++) {
      var p = pts[i];
      if (style === "steps-mid") {
        var xl = i > 0 ? (pts[i - 1][0] + p[0]) / 2 : p[0];
        var xr = i < pts.length - 1 ? (p[0] + pts[i + 1][0]) / 2 : p[0];
        out.push([xl, p[1]], [xr, p[1]]);
      } else if (style === "steps-post") {
        out.push(p);
        if (i < pts.length - 1) out.push([pts[i + 1][0], p[1]]);
      } else {
        if (i > 0) out.push([pts[i - 1][0], p[1]]);
        out.push(p);
      }
    }
    return out;
  }

  function drawImage(ctx, im, X, Y) {
    if (!im.rows || !im.cols) return;
    var table = cmapTable(im.cmap);
    var off = document.createElement("canvas");
    off.width = im.cols;
    off.height = im.rows;
    var octx = off.getContext("2d");
    var img = octx.createImageData(im.cols, im.rows);
    var span = im.vmax - im.vmin;
    for (var r = 0; r < im.rows; r++) {
      for (var c = 0; c < im.cols; c++) {
        var v = im.data[r][c], o = 4 * (r * im.cols + c);
        if (v === null || isNaN(v)) { img.data[o + 3] = 0; continue; }
        var f = span > 0 ? (v - im.vmin) / span : 0.5;
        var idx = Math.max(0, Math.min(255, Math.floor(f * 256)));
        if (f >= 1) idx = 255;
        img.data[o] = table[3 * idx];
        img.data[o + 1] = table[3 * idx + 1];
        img.data[o + 2] = table[3 * idx + 2];
        img.data[o + 3] = 255;
      }
    }
    octx.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    var x0 = X(-0.5), x1 = X(im.cols - 0.5), y0 = Y(-0.5), y1 = Y(im.rows - 0.5);
    ctx.drawImage(off, Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0));
  }

  function drawLegend(ctx, ax, rect) {
    var entries = ax.legendEntries();
    if (!entries.length) return;
    var o = ax.legendOpts, size = o.fontsize === "small" || o.fontsize === 8 ? 10 : 10.5;
    var handleW = 22, pad = 6;
    // as many columns as asked, fewer (then smaller type) if the box would
    // be wider than the Axes
    var ncol = Math.min(o.ncol || 1, entries.length), rowsN, colW, boxW;
    var measure = function () {
      rowsN = Math.ceil(entries.length / ncol);
      colW = [];
      entries.forEach(function (e, i) {
        var c = Math.floor(i / rowsN);
        colW[c] = Math.max(colW[c] || 0, handleW + 6 + labelWidth(ctx, e.label, size));
      });
      boxW = colW.reduce(function (s, w) { return s + w + 10; }, 0) + pad;
    };
    measure();
    while (boxW > rect.w - 12 && ncol > 1) { ncol--; measure(); }
    while (boxW > rect.w - 12 && size > 8) { size -= 0.5; measure(); }
    var lineH = size + 6, boxH = rowsN * lineH + pad;
    var loc = o.loc || "best", x, y;
    if (loc === "best") loc = "upper right";
    if (/left/.test(loc)) x = rect.x + 6;
    else if (/right/.test(loc)) x = rect.x + rect.w - boxW - 6;
    else x = rect.x + (rect.w - boxW) / 2;
    x = Math.max(x, rect.x + 2);
    if (/upper/.test(loc)) y = rect.y + 6;
    else if (/lower/.test(loc)) y = rect.y + rect.h - boxH - 6;
    else y = rect.y + (rect.h - boxH) / 2;
    ctx.globalAlpha = 0.85;
    ctx.fillStyle = "#fff";
    ctx.fillRect(x, y, boxW, boxH);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = "#ccc";
    ctx.lineWidth = 0.8;
    ctx.strokeRect(x, y, boxW, boxH);
    var cx = x + pad;
    entries.forEach(function (e, i) {
      var c = Math.floor(i / rowsN), r = i % rowsN;
      var ex = cx;
      for (var k = 0; k < c; k++) ex += colW[k] + 10;
      var ey = y + pad / 2 + r * lineH + lineH / 2;
      if (e.kind === "line") {
        if (e.ls !== "none" && e.ls !== "") {
          ctx.strokeStyle = e.color;
          ctx.lineWidth = Math.min(e.lw, 4);
          ctx.setLineDash(dashFor(e.ls, Math.min(e.lw, 4)));
          drawLine(ctx, [[ex, ey], [ex + handleW, ey]]);
          ctx.setLineDash([]);
        }
        if (e.marker) drawMarker(ctx, e.marker, ex + handleW / 2, ey, e.ms, e.mfc === "none" ? "none" : e.color, e.color);
      } else if (e.kind === "scatter") {
        drawMarker(ctx, "o", ex + handleW / 2, ey, 6, e.color, e.color);
      } else {
        ctx.globalAlpha = e.alpha !== undefined ? e.alpha : 1;
        ctx.fillStyle = e.color;
        ctx.fillRect(ex, ey - 5, handleW, 10);
        ctx.globalAlpha = 1;
      }
      ctx.fillStyle = "#000";
      drawLabel(ctx, e.label, ex + handleW + 6, ey, size, { align: "left", baseline: "middle", kind: "legend" });
    });
  }

  function drawColorbar(ctx, cbar, rect) {
    var im = cbar.image, table = cmapTable(im.cmap);
    // 90 % of the Axes' height, at least 48 px (a flat mosaic of tiles)
    var x = rect.x + rect.w + 12, w = 12, h = Math.max(rect.h * 0.9, 48);
    var y = rect.y + rect.h / 2 - h / 2;
    for (var i = 0; i < 256; i++) {
      ctx.fillStyle = "rgb(" + table[3 * i] + "," + table[3 * i + 1] + "," + table[3 * i + 2] + ")";
      var y0 = y + h - (i + 1) / 256 * h;
      ctx.fillRect(x, y0, w, h / 256 + 0.6);
    }
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 0.8;
    ctx.strokeRect(x, y, w, h);
    var ticks = niceTicks(im.vmin, im.vmax, Math.max(2, Math.min(6, Math.floor(h / 28))), false);
    var span = im.vmax > im.vmin ? im.vmax - im.vmin : 1;
    while (ticks.length > 2 && (ticks[1] - ticks[0]) / span * h < 14) {  // labels apart
      ticks = ticks.filter(function (_, i) { return i % 2 === 0; });
    }
    var step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
    ctx.fillStyle = "#000";
    var widest = 0;
    ticks.forEach(function (t) {
      if (t < im.vmin - 1e-12 || t > im.vmax + 1e-12) return;
      var py = y + h - (im.vmax > im.vmin ? (t - im.vmin) / (im.vmax - im.vmin) : 0.5) * h;
      drawLine(ctx, [[x + w, py], [x + w + 3, py]]);
      var box = drawLabel(ctx, tickLabel(t, step), x + w + 5, py, 10, { align: "left", baseline: "middle",
                                                                                      kind: "cbar" });
      widest = Math.max(widest, box.x1 - (x + w + 5));
    });
    if (cbar.label) {
      ctx.save();
      ctx.translate(x + w + 9 + Math.max(widest, 22), y + h / 2);
      ctx.rotate(-Math.PI / 2);
      drawLabel(ctx, cbar.label, 0, 0, 10.5, { align: "center", baseline: "top", maxWidth: h });
      ctx.restore();
    }
  }

  posenc.plot = { Figure: Figure, Axes: Axes, tex: tex, css: css, TAB10: TAB10,
                  runs: runsOf, tickLabel: tickLabel, niceTicks: niceTicks };

  // ---------------------------------------------------------- widgets

  var registry = {};
  var widgets = [];

  /**
   * Register the drawing of one Interactive:
   * posenc.register("ch02_formula:explore_encoding", {
   *   figsize: [13, 3.6],                 // inches, as in matplotlib
   *   needs: function (p) { return []; }, // optional data files
   *   draw: function (fig, p, t) { ... }  // p: {slider name: value},
   * });                                   // t: {key: label}, the figure's
   *                                       // labels in the page's language
   */
  posenc.register = function (key, def) {
    if (typeof def.draw !== "function") throw ValueError(key + ": no draw()");
    registry[key] = def;
  };

  /** Whether a chapter script has registered the drawing `key`. */
  posenc.registered = function (key) {
    return Object.prototype.hasOwnProperty.call(registry, key);
  };

  function sliderValue(s, position) {
    if (s.log) return Math.pow(10, position);
    if (s.int) return Math.round(position);
    return position;
  }

  /** Same text as readout() in _ext/posenc_widgets.py. */
  function readout(s, position) {
    if (s.int) return pyformat(Math.round(position), ",d");
    if (!s.log) return pyformat(position, "." + s.decimals + "f");
    var value = Math.pow(10, position);
    if (value >= 1000) return pyformat(pyround(value), ",d");
    return pyformat(value, ".4g");
  }

  /** options.load(name): a Promise of the data `name` (default: the data
   *  files next to this script, posenc.data.load). */
  function Widget(el, options) {
    this.el = el;
    this.load = (options && options.load) || posenc.data.load;
    this.spec = JSON.parse(el.getAttribute("data-posenc-spec"));
    this.key = this.spec.key;
    this.def = registry[this.key];
    this.canvas = el.querySelector("canvas");
    // in a static figure's place: the canvas shows, the PNG hides
    this.host = el.closest ? el.closest("figure.posenc-host") : null;
    this.inputs = {};
    this.outputs = {};
    this.seq = 0;
    this.draws = 0;
    this.figure = null;
    if (!this.def) throw new Error("posenc: no drawing registered for " + this.key);
    if (this.host) this.host.classList.add("posenc-live");
    var self = this;
    this.spec.sliders.forEach(function (s) {
      var input = el.querySelector('input[name="' + s.name + '"]');
      self.inputs[s.name] = input;
      self.outputs[s.name] = el.querySelector("#" + input.id + "-out");
      input.disabled = false;
      input.addEventListener("input", function () { self.changed(); });
      input.addEventListener("change", function () { self.changed(); });
    });
  }

  Widget.prototype.positions = function () {
    var out = {}, self = this;
    this.spec.sliders.forEach(function (s) {
      out[s.name] = parseFloat(self.inputs[s.name].value);
    });
    return out;
  };

  Widget.prototype.params = function () {
    var pos = this.positions(), out = {};
    this.spec.sliders.forEach(function (s) { out[s.name] = sliderValue(s, pos[s.name]); });
    return out;
  };

  Widget.prototype.readouts = function () {
    var pos = this.positions(), out = {};
    this.spec.sliders.forEach(function (s) { out[s.name] = readout(s, pos[s.name]); });
    return out;
  };

  Widget.prototype.changed = function () {
    var texts = this.readouts(), self = this;
    this.spec.sliders.forEach(function (s) {
      self.outputs[s.name].textContent = texts[s.name];
      self.inputs[s.name].setAttribute("aria-valuetext", texts[s.name]);
    });
    this.el.setAttribute("data-posenc-state", "busy");
    if (this.pending) return;
    this.pending = true;
    setTimeout(function () { self.pending = false; self.draw(); }, 0);
  };

  Widget.prototype.draw = function () {
    var self = this, seq = ++this.seq, params = this.params();
    var needs = this.def.needs ? this.def.needs(params) : [];
    this.el.setAttribute("data-posenc-state", "busy");
    return Promise.all(needs.map(this.load)).then(function () {
      if (seq !== self.seq) return;
      var size = typeof self.def.figsize === "function" ? self.def.figsize(params) : self.def.figsize;
      var fig = new Figure(size);
      self.def.draw(fig, params, self.spec.labels || {});
      fig.render(self.canvas);
      self.figure = fig;
      self.params_ = params;
      self.draws += 1;
      var texts = self.readouts();
      var now = self.spec.sliders.map(function (s) {
        return (s.label || s.name) + " " + texts[s.name];
      }).join(", ");
      var showing = self.spec.showing === undefined ? " Showing " : self.spec.showing;
      self.canvas.setAttribute("aria-label", self.spec.caption + showing + now +
        (fig.describe() ? ": " + fig.describe() : "") + ".");
      self.el.setAttribute("data-posenc-draws", String(self.draws));
      self.el.setAttribute("data-posenc-state", "ready");
    }).catch(function (err) {
      self.el.setAttribute("data-posenc-state", "error");
      if (self.host) self.host.classList.remove("posenc-live");  // the PNG again
      throw err;
    });
  };

  Widget.prototype.rerender = function () {
    if (this.figure) this.figure.render(this.canvas);
  };

  /** For the tests: what the widget shows, and the data it drew. */
  posenc.inspect = function (id) {
    var w = widgets.filter(function (x) { return x.el.id === id; })[0];
    if (!w) throw new Error("no widget " + id);
    return {
      key: w.key, draws: w.draws, params: w.params_, positions: w.positions(),
      readouts: w.readouts(), figure: w.figure ? w.figure.record() : null,
      boxes: w.figure ? w.figure.boxes : null,
      height: w.canvas.clientHeight,
      state: w.el.getAttribute("data-posenc-state"),
      label: w.canvas.getAttribute("aria-label")
    };
  };
  posenc.widgets = widgets;

  /**
   * Start the live figure of one element (markup as widget_html writes it)
   * and draw it; returns the widget. The page's own start-up (below) does
   * this for every element the book wrote (data-posenc-state="static");
   * Jupyter's widget calls it for the element it made.
   */
  posenc.mount = function (el, options) {
    var w = new Widget(el, options);
    widgets.push(w);
    w.draw();
    return w;
  };

  /** Forget a widget (its element is gone). */
  posenc.unmount = function (w) {
    var k = widgets.indexOf(w);
    if (k >= 0) widgets.splice(k, 1);
  };

  /** The sliders stick under the theme's sticky article header. */
  function stickyTop() {
    var header = document.querySelector(".bd-header-article");
    var h = header && getComputedStyle(header).position === "sticky" ?
      header.getBoundingClientRect().height : 0;
    document.documentElement.style.setProperty("--posenc-sticky-top", Math.round(h) + "px");
  }

  function init() {
    stickyTop();
    var els = document.querySelectorAll('.posenc-widget[data-posenc-state="static"]');
    Array.prototype.forEach.call(els, function (el) {
      var w;
      try {
        w = new Widget(el);
      } catch (err) {  // the others still start; the error is logged
        el.setAttribute("data-posenc-state", "error");
        console.error(err);
        return;
      }
      widgets.push(w);
      w.draw();
    });
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        stickyTop();
        widgets.forEach(function (w) { w.rerender(); });
      }, 100);
    });
  }

  // Deferred scripts (this one and the chapters') all run before
  // DOMContentLoaded; starting earlier could miss a chapter's drawings.
  var started = false;
  function start() {
    if (started) return;
    started = true;
    init();
  }
  if (typeof document !== "undefined") {
    if (document.readyState === "complete") {
      setTimeout(start, 0);
    } else {
      document.addEventListener("DOMContentLoaded", start);
      window.addEventListener("load", start);
    }
  }
})(typeof window !== "undefined" ? window : globalThis);
