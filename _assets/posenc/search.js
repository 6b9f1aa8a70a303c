/* The search page's snippets and Chinese queries (_ext/posenc_search.py).

   Loaded on search.html only, after Sphinx's searchtools.js. Each result
   gets a snippet of the book's prose (window.POSENC_SEARCH_TEXT, written
   at build time from the pages without their code, outputs and sliders):
   around the first place where the reader's words or their stems occur,
   from the start of its sentence, with the formulas typeset by MathJax.
   A Chinese query is split into the words of the index (longest first),
   as jieba split the pages when the index was built. */
(function () {
  "use strict";
  if (typeof Search === "undefined") return;

  var TEXT = window.POSENC_SEARCH_TEXT || {};
  var CJK = /[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]/;
  var HAN = /[\u3400-\u9fff\uf900-\ufaff]+/g;
  var IS_HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
  var WIDTH = 240; // of a snippet, in Latin letters (a Chinese one is 2)
  var LONGEST = 12; // Chinese word tried first, in characters
  var has = function (o, k) { return !!o && Object.prototype.hasOwnProperty.call(o, k); };

  // ------------------------------------------------------- Chinese queries
  var known = function (word) {
    var index = Search._index;
    return !!index && (has(index.terms, word) || has(index.titleterms, word));
  };

  var segment = function (run) {
    if (known(run)) return [run];
    var words = [];
    for (var i = 0; i < run.length;) {
      var j = Math.min(run.length, i + LONGEST);
      while (j > i + 1 && !known(run.slice(i, j))) j--;
      // a single character is not in the index (Sphinx keeps words of two
      // or more): unless the index knows it, it is left out of the query
      if (j > i + 1 || known(run.slice(i, j))) words.push(run.slice(i, j));
      i = j;
    }
    return words;
  };

  var baseSplit = splitQuery;
  splitQuery = function (query) {
    var out = [];
    baseSplit(query).forEach(function (term) {
      if (!IS_HAN.test(term)) { out.push(term); return; }
      var last = 0;
      term.replace(HAN, function (run, at) {
        if (at > last) out.push(term.slice(last, at));
        out.push.apply(out, segment(run));
        last = at + run.length;
        return run;
      });
      if (last < term.length) out.push(term.slice(last));
    });
    return out.filter(function (t) { return t; });
  };

  // ------------------------------------------------------------ snippets
  var queryWords = function () {
    var q = new URLSearchParams(window.location.search).get("q") || "";
    var stemmer = typeof Stemmer !== "undefined" ? new Stemmer() : null;
    var words = [], stems = [];
    splitQuery(q.trim()).forEach(function (term) {
      var lower = term.toLowerCase();
      if ((typeof stopwords !== "undefined" && stopwords.indexOf(lower) !== -1)
          || /^\d+$/.test(lower) || lower[0] === "-") return;
      words.push(lower);
      var stem = stemmer ? stemmer.stemWord(lower) : lower;
      if (stem && stem.length >= 3 && stem !== lower) stems.push(stem);
    });
    return {words: words, stems: stems};
  };

  // A page's (or a section's) prose as pieces: {text} or {math} (TeX).
  var pieces = function (page, anchor) {
    var segments = page.t, skipHeading = false;
    if (anchor && has(page.s, anchor)) {
      segments = page.t.slice(page.s[anchor][0], page.s[anchor][1]);
      skipHeading = true;
    }
    var out = [];
    segments.forEach(function (seg, k) {
      var kind = seg[0], text = seg[1];
      if (k === 0 && skipHeading && kind === "h") return;
      if (out.length) {
        var prev = segments[k - 1] ? segments[k - 1][0] : "p";
        out.push({text: prev === "h" ? " \u2014 " : (kind === "c" && prev === "c" ? " \u00b7 " : " ")});
      }
      text.split(/(\\\(.*?\\\))/).forEach(function (part, i) {
        if (!part) return;
        if (i % 2) out.push({math: part.slice(2, -2)});
        else out.push({text: part});
      });
    });
    return out;
  };

  // what ends a sentence, before the next one's start
  var SENTENCE_START = /(?:[.!?;:]\s|[\u3002\uff01\uff1f\uff1b\uff1a] ?| [\u2014\u00b7] )$/;

  // The window of pieces to show: [first piece, offset in it, last, end].
  var snippet = function (list, terms) {
    // plain text with one character per formula, to find the words in
    var plain = "", starts = [], mathWidth = {};
    list.forEach(function (p) {
      starts.push(plain.length);
      if (p.math !== undefined) {
        mathWidth[plain.length] = Math.min(12, Math.max(1, Math.round(p.math.length / 3)));
        plain += "\ufffc";
      } else plain += p.text;
    });
    var lower = plain.toLowerCase(), at = -1;
    [terms.words, terms.stems].some(function (group) {
      group.forEach(function (t) {
        var i = lower.indexOf(t);
        if (i !== -1 && (at === -1 || i < at)) at = i;
      });
      return at !== -1;
    });
    if (at === -1) at = 0;
    // back to the start of the sentence, if it is near; else a little
    // context, from a word's start
    var start = at, budget = WIDTH / 2;
    while (start > 0 && budget > 0) {
      if (SENTENCE_START.test(plain.slice(Math.max(0, start - 3), start))) break;
      start--;
      budget -= CJK.test(plain[start]) ? 2 : 1;
    }
    if (start > 0 && budget <= 0) {
      start = at;
      budget = WIDTH / 4;
      while (start > 0 && budget > 0) {
        start--;
        budget -= CJK.test(plain[start]) ? 2 : 1;
      }
      while (start < at && !/\s/.test(plain[start - 1]) && !CJK.test(plain[start])) start++;
    }
    while (start < plain.length && /[\s\u2014\u00b7]/.test(plain[start])) start++;
    // forward to about WIDTH
    var end = start, used = 0;
    while (end < plain.length && used < WIDTH) {
      var ch = plain[end];
      if (has(mathWidth, end)) used += mathWidth[end];
      else used += CJK.test(ch) ? 2 : 1;
      end++;
    }
    if (end < plain.length && !CJK.test(plain[end - 1])) { // end on a word's end
      var back = end;
      while (back > start && !/\s/.test(plain[back])) back--;
      if (back > start + WIDTH / 3) end = back;
    }
    return {plain: plain, starts: starts, start: start, end: end};
  };

  var mathSpan = function (tex) {
    var span = document.createElement("span");
    span.className = "math notranslate nohighlight";
    span.textContent = "\\(" + tex + "\\)";
    return span;
  };

  var typeset = function (nodes) {
    var run = function () {
      if (window.MathJax && MathJax.typesetPromise) {
        MathJax.typesetPromise(nodes).catch(function (err) {
          console.warn("search snippet: MathJax", err);
        });
      }
    };
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(run);
    } else {
      window.addEventListener("load", function () {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
          MathJax.startup.promise.then(run);
        }
      });
    }
  };

  var makeSummary = function (page, anchor, terms) {
    var list = pieces(page, anchor);
    if (!list.length) return null;
    var w = snippet(list, terms);
    var p = document.createElement("p");
    p.className = "context";
    if (w.start > 0) p.appendChild(document.createTextNode("\u2026 "));
    list.forEach(function (piece, k) {
      var from = w.starts[k], to = from + (piece.math !== undefined ? 1 : piece.text.length);
      if (to <= w.start || from >= w.end) return;
      if (piece.math !== undefined) { p.appendChild(mathSpan(piece.math)); return; }
      var text = piece.text.slice(Math.max(0, w.start - from), w.end - from);
      p.appendChild(document.createTextNode(text));
    });
    if (w.end < w.plain.length) p.appendChild(document.createTextNode(" \u2026"));
    return p;
  };

  var highlight = function (node, terms) {
    if (typeof _highlightText === "undefined") return;
    // the words, and the stems of those a snippet does not hold as written
    var text = node.textContent.toLowerCase();
    terms.words.concat(terms.stems).forEach(function (t) {
      if (text.indexOf(t) !== -1) _highlightText(node, t, "highlighted");
    });
  };

  // The result's link, "Page > Section": the section's heading with its
  // formulas typeset (the index keeps a heading's TeX as text).
  var fixTitle = function (link, page, anchor) {
    if (!anchor || !has(page.h, anchor) || page.h[anchor].indexOf("\\(") === -1) return false;
    var text = link.textContent, cut = text.lastIndexOf(" > ");
    link.textContent = cut === -1 ? "" : text.slice(0, cut + 3);
    page.h[anchor].split(/(\\\(.*?\\\))/).forEach(function (part, i) {
      if (!part) return;
      link.appendChild(i % 2 ? mathSpan(part.slice(2, -2)) : document.createTextNode(part));
    });
    return true;
  };

  var suffix = (window.DOCUMENTATION_OPTIONS && DOCUMENTATION_OPTIONS.LINK_SUFFIX) || ".html";

  var addSummary = function (item, terms) {
    if (item.dataset.posencSnippet) return;
    item.dataset.posencSnippet = "1";
    var link = item.querySelector("a");
    if (!link) return;
    var href = link.getAttribute("href") || "";
    var hash = href.indexOf("#");
    var anchor = hash === -1 ? "" : decodeURIComponent(href.slice(hash + 1));
    var doc = (hash === -1 ? href : href.slice(0, hash));
    if (doc.slice(-suffix.length) === suffix) doc = doc.slice(0, -suffix.length);
    var page = TEXT[doc];
    if (!page) return;
    var typesetting = [];
    if (fixTitle(link, page, anchor)) typesetting.push(link);
    var summary = makeSummary(page, anchor, terms);
    if (summary) {
      item.appendChild(summary);
      highlight(summary, terms);
      if (summary.querySelector(".math")) typesetting.push(summary);
    }
    if (typesetting.length) typeset(typesetting);
  };

  var watch = function () {
    var results = document.getElementById("search-results");
    if (!results) return;
    var terms = queryWords();
    new MutationObserver(function (changes) {
      changes.forEach(function (change) {
        change.addedNodes.forEach(function (node) {
          if (node.nodeType !== 1) return;
          if (node.matches("ul.search > li")) addSummary(node, terms);
          node.querySelectorAll && node.querySelectorAll("ul.search > li")
            .forEach(function (li) { addSummary(li, terms); });
        });
      });
    }).observe(results, {childList: true, subtree: true});
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watch);
  } else {
    watch();
  }
})();
