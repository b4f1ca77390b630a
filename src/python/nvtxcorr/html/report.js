/* nvtxcorr's HTML report: draws the summary in the #nvtxcorr-data script (the library's JSON,
 * or the report's envelope: {nvtxcorr_html, summary, parts, diff}) with plain DOM and SVG,
 * nothing fetched. The rendered state is written back into the DOM (data-* attributes on each
 * bar, box and cell, and on <body>: errors, resources, render-ms) so that a headless browser's
 * --dump-dom can be checked (tests/e2e/test_html.py). */
(function () {
  'use strict';
  var t0 = performance.now(), errors = [];
  function fail(what) {
    errors.push(String(what));
    document.body.setAttribute('data-errors', errors.length);
    document.body.setAttribute('data-error-text', errors.join('\n'));
  }
  window.addEventListener('error', function (e) { fail(e.message); });
  document.addEventListener('securitypolicyviolation', function (e) { fail('CSP ' + e.blockedURI); });
  var oldError = console.error;
  console.error = function () { fail(Array.prototype.join.call(arguments, ' ')); oldError.apply(console, arguments); };

  // The view in the address: #view=kernel&zoom=<JSON path>[*]&q=<search>, so a view can be
  // shared; and input replayed once the page is drawn, in order: click=SELECTOR,
  // press=SELECTOR (Enter on it), escape=SELECTOR, type=TEXT (into the search), as a user
  // would (the browser tests click, press and type through these).
  var hash = dict(), replay = [];
  location.hash.slice(1).split('&').forEach(function (kv) {
    var i = kv.indexOf('='), k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
    if (i <= 0) return;
    if (k === 'click' || k === 'press' || k === 'escape' || k === 'type') replay.push([k, v]); else hash[k] = v;
  });
  var raw = JSON.parse(document.getElementById('nvtxcorr-data').textContent);
  var doc = raw.nvtxcorr_html ? raw : { summary: raw, parts: [part(raw)] };
  var S = doc.summary || {}, gpu = !!S.gpu_time, app = document.getElementById('app');
  var TIME = gpu ? 'gpu_ns' : 'cpu_ns', WHAT = gpu ? 'GPU time' : 'CPU time in launch calls';
  function part(d) {
    return { rank: d.rank, window: d.window, host: d.host, pid: d.pid, start_ns: d.start_ns, end_ns: d.end_ns,
             labels: (d.labels || []).map(function (l) { return { label: l.label, gpu_ns: l.gpu_ns, cpu_ns: l.cpu_ns }; }) };
  }

  // ---- small helpers ----
  // A table keyed by names from the program (labels, ranges, hosts): no prototype, so a range
  // called "constructor" or "__proto__" is a name like any other.
  function dict() { return Object.create(null); }
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), attrs[k]);
      else if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (var k in attrs) if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
    return e;
  }
  // As the text report's fmt_time (render.py, out.c): 3 significant digits, ns to s.
  function fmtTime(ns) {
    if (ns === null || ns === undefined) return '-';
    var units = [[1, ' ns'], [1e3, ' us'], [1e6, ' ms'], [1e9, ' s']], u = 0;
    while (u < 3 && ns >= units[u + 1][0]) u++;
    if (u === 0) return ns + ' ns';
    var h = Math.floor((ns * 100 + units[u][0] / 2) / units[u][0]);
    if (h >= 100000 && u < 3) { u++; h = Math.floor((ns * 100 + units[u][0] / 2) / units[u][0]); }
    if (h < 1000) return Math.floor(h / 100) + '.' + String(h % 100).padStart(2, '0') + units[u][1];
    if (h < 10000) { var v = Math.floor((h + 5) / 10); return Math.floor(v / 10) + '.' + (v % 10) + units[u][1]; }
    return Math.floor((h + 50) / 100) + units[u][1];
  }
  function pct(x, total) { return total ? (100 * x / total).toFixed(1) + '%' : '-'; }
  var PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
  function colour(name) {  // a category's colour: the same for the same name in every view
    if (!name) return '#8b949e';
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return PALETTE[h % PALETTE.length];
  }
  var category = dict();
  (S.labels || []).concat(S.kernel_labels || []).forEach(function (l) { if (l.category) category[l.label] = l.category; });
  function section(id, title, kids) {
    var s = el('section', { id: id, 'aria-labelledby': id + '-h' }, [el('h2', { id: id + '-h', text: title })].concat(kids));
    app.appendChild(s);
    return s;
  }

  // ---- the header ----
  function header() {
    var parts = doc.parts || [], merged = S.merged || [], t = S.totals || {};
    var hosts = dict(), ranks = dict(), windows = dict();
    parts.forEach(function (p) {
      if (p.host) hosts[p.host] = 1;
      if (p.rank !== null && p.rank !== undefined) ranks[p.rank] = 1;
      if (p.window) windows[p.window.index] = 1;
    });
    var cmd = S.command || (merged[0] && merged[0].command) || [];
    // The run's span: the summary's own, else from its files' first start to last end.
    var first = Math.min.apply(null, parts.map(function (p) { return p.start_ns || Infinity; }));
    var last = Math.max.apply(null, parts.map(function (p) { return p.end_ns || 0; }));
    var dur = S.end_ns && S.start_ns ? S.end_ns - S.start_ns : last > first ? last - first : null;
    if (S.window) dur = S.window.end_ns - S.window.start_ns;
    var procs = dict();  // a process's windows are files of their own
    merged.forEach(function (m) { procs[m.host + ' ' + m.pid] = 1; });
    var rows = [['command', cmd.join(' ')], ['processes', String(Object.keys(procs).length || 1)],
                ['hosts', Object.keys(hosts).join(', ')], ['ranks', Object.keys(ranks).join(', ')],
                ['windows', String(Object.keys(windows).length || '')], ['duration', dur ? fmtTime(dur) : ''],
                ['GPUs', (S.gpus || []).map(function (d) { return typeof d === 'string' ? d : d.name; }).join(', ')],
                ['launches', String(t.launches || 0)], ['CPU time in launches', fmtTime(t.cpu_ns || 0)],
                ['GPU time', gpu ? fmtTime(t.gpu_ns || 0) + ' (' + (t.gpu_kernels || 0) + ' kernels)' : 'none']];
    var dl = el('dl', { class: 'head', id: 'head' });
    rows.forEach(function (r) { if (r[1]) { dl.appendChild(el('dt', { text: r[0] })); dl.appendChild(el('dd', { text: r[1] })); } });
    var notes = [];
    // gpu_time_note also says why GPU time is partial, and how much work came late to a window.
    if (!gpu) notes.push('no GPU time' + (S.gpu_time_note ? ': ' + S.gpu_time_note : '') + '; the views show CPU time in launch calls');
    else if (S.gpu_time_note) notes.push(S.gpu_time_note);
    if (t.gpu_dropped_records) notes.push(t.gpu_dropped_records + ' GPU records dropped: GPU time is a lower bound');
    if (t.gpu_uncorrelated_kernels) notes.push(t.gpu_uncorrelated_kernels + ' kernels (' + fmtTime(t.gpu_uncorrelated_ns) + ') not correlated with a launch');
    if (t.gpu_not_hooked_kernels) notes.push(t.gpu_not_hooked_kernels + ' kernels (' + fmtTime(t.gpu_not_hooked_ns) + ') from launches nvtxcorr did not see');
    if (t.uncounted_at_start) notes.push(t.uncounted_at_start + ' launches before profiling started are not counted');
    if (t.gpu_incomplete_records) notes.push(t.gpu_incomplete_records + ' GPU records without an end time, not counted');
    if (S.context_note) notes.push(S.context_note);
    section('summary', 'Summary', [dl, notes.length ? el('ul', { class: 'notes' }, notes.map(function (n) { return el('li', { text: n }); })) : null]);
  }

  // ---- GPU time by label: sorted bars, launch and kernel views ----
  function bars() {
    var views = { launch: S.labels || [], kernel: gpu ? S.kernel_labels || [] : [] };
    var box = el('div', { class: 'bars', id: 'bars', role: 'list' });
    var nav = el('nav', { class: 'views', 'aria-label': 'label views' });
    function draw(view) {
      box.innerHTML = '';
      box.setAttribute('data-view', view);
      var rows = views[view].filter(function (l) { return (l[TIME] || 0) > 0 || l.launches > 0; })
        .sort(function (a, b) { return (b[TIME] || 0) - (a[TIME] || 0) || String(a.label).localeCompare(String(b.label)); });
      var total = rows.reduce(function (s, l) { return s + (l[TIME] || 0); }, 0);
      var max = rows.length ? rows[0][TIME] || 0 : 0;
      rows.forEach(function (l) {
        var ns = l[TIME] || 0, n = gpu ? l.gpu_kernels : l.launches, p = gpu ? 'gpu_' : 'cpu_';
        var tip = l.label + (l.category ? ' [' + l.category + ']' : '') + '\n' + WHAT + ' ' + fmtTime(ns) + ' (' + pct(ns, total) + ')\n' +
          (gpu ? 'kernels ' : 'launches ') + n + ', mean ' + fmtTime(l[p + 'mean_ns']) + ', p50 ' + fmtTime(l[p + 'p50_ns']) + ', p99 ' + fmtTime(l[p + 'p99_ns']);
        box.appendChild(el('div', { class: 'bar', role: 'listitem', title: tip, 'data-label': l.label, 'data-ns': ns, 'data-count': n }, [
          el('span', { class: 'name', text: l.label, title: tip, tabindex: 0 }),
          el('span', { class: 'track' }, [el('span', { class: 'fill', style: 'display:block;width:' + (max ? 100 * ns / max : 0) + '%;background:' + colour(l.category || category[l.label]) })]),
          el('span', { class: 'val', text: fmtTime(ns) + ' ' + pct(ns, total) })]));
      });
      Array.prototype.forEach.call(nav.children, function (b) { b.setAttribute('aria-pressed', b.value === view); });
    }
    Object.keys(views).forEach(function (v) {
      if (views[v].length) nav.appendChild(el('button', { value: v, text: v === 'launch' ? 'by launch label' : 'by kernel label', onclick: function () { draw(v); } }));
    });
    var cats = dict();
    Object.keys(category).forEach(function (k) { cats[category[k]] = 1; });
    var legend = el('div', { class: 'legend' }, Object.keys(cats).sort().map(function (c) { return el('span', {}, [el('i', { style: 'background:' + colour(c) }), c]); }));
    section('labels', WHAT + ' by label', [nav, legend, box]);
    draw(hash.view === 'kernel' && views.kernel.length ? 'kernel' : 'launch');
  }

  // ---- the flame graph (icicle) of program context ----
  function flame() {
    var rows = S.contexts || [];
    if (!rows.length) return;
    var root = { name: 'all', path: [], incl: 0, kids: dict(), order: [] };
    rows.forEach(function (r) {
      var v = r[TIME] || 0, n = root, path = (r.context || []).concat([r.label === null ? '[no label]' : String(r.label)]);
      n.incl += v;
      path.forEach(function (name, i) {
        var key = (i === path.length - 1 ? '\u0001' : '') + name;  // a leaf apart from a range of the same name
        if (!n.kids[key]) { n.kids[key] = { name: name, path: n.path.concat([name]), incl: 0, excl: 0, kids: dict(), leaf: i === path.length - 1, parent: n }; }
        n = n.kids[key];
        n.incl += v;
      });
      n.excl += v;
    });
    var zoomed = root, query = '', all = [];
    (function sort(n) {
      n.children = Object.keys(n.kids).map(function (k) { return n.kids[k]; })
        .sort(function (a, b) { return b.incl - a.incl || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
      n.id = all.length; all.push(n);
      n.children.forEach(sort);
    })(root);
    var area = el('div', { id: 'flame', role: 'tree' });
    var search = el('input', { type: 'search', id: 'flame-search', placeholder: 'search names', 'aria-label': 'search context names' });
    var found = el('span', { id: 'flame-found', 'aria-live': 'polite' });
    var reset = el('button', { text: 'reset zoom', onclick: function () { zoom(root); } });
    search.addEventListener('input', function () { query = search.value; draw(); });
    function zoom(n) { zoomed = n; draw(); }
    // A box's name in the address: its path as JSON, '*' after it for a kernel label's leaf
    // (a range and a label of the same name can sit under the same path).
    function key(n) { return JSON.stringify(n.path) + (n.leaf ? '*' : ''); }
    function keyed(n) {
      return function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); zoom(n); }
        if (e.key === 'Escape' && zoomed.parent) { e.preventDefault(); zoom(zoomed.parent); }
      };
    }
    function draw() {
      area.innerHTML = '';
      area.setAttribute('data-zoom', key(zoomed));
      var ancestors = [], a = zoomed, q = query.toLowerCase(), hits = 0, hitNs = 0, depth = 0, frag = document.createDocumentFragment();
      while (a) { ancestors.unshift(a); a = a.parent; }
      ancestors.pop();
      ancestors.forEach(function (n, d) { frag.appendChild(box(n, 0, 100, d, 'above')); });
      var base = ancestors.length, scale = zoomed.incl ? 100 / zoomed.incl : 0;
      (function place(n, left, d, inHit) {
        var w = n.incl * scale, hit = q && n.name.toLowerCase().indexOf(q) >= 0;
        if (hit) hits++;
        if (hit && !inHit) hitNs += n.incl;
        frag.appendChild(box(n, left, w, d, hit ? 'match' : ''));
        depth = Math.max(depth, d);
        var x = left;
        n.children.forEach(function (c) { if (c.incl * scale >= 0.01 || !c.incl) { place(c, x, d + 1, inHit || hit); } x += c.incl * scale; });
      })(zoomed, 0, base, false);
      area.appendChild(frag);
      area.style.height = (depth + 1) * 20 + 'px';
      found.textContent = q ? hits + ' matching, ' + fmtTime(hitNs) + ' = ' + pct(hitNs, root.incl) + ' of all' : '';
      found.setAttribute('data-hits', hits);
      found.setAttribute('data-ns', hitNs);
    }
    function box(n, left, w, d, cls) {
      var tip = n.path.join(' > ') + '\n' + WHAT + ': ' + fmtTime(n.incl) + ' inclusive (' + pct(n.incl, root.incl) + ')' + (n.leaf ? '' : ', ' + fmtTime(n.excl) + ' exclusive');
      return el('div', { class: 'box' + (n.leaf ? ' leaf' : '') + (cls ? ' ' + cls : ''), style: 'left:' + left + '%;width:' + w + '%;top:' + d * 20 + 'px',
                         title: tip, tabindex: w >= 1 ? 0 : -1, role: 'treeitem', 'aria-label': tip, 'data-path': JSON.stringify(n.path), 'data-key': key(n), 'data-incl': n.incl,
                         'data-excl': n.excl || 0, 'data-width': w, onclick: function () { zoom(n); }, onkeydown: keyed(n), text: n.name });
    }
    if (hash.q) { query = hash.q; search.value = query; }
    if (hash.zoom) { all.forEach(function (n) { if (key(n) === hash.zoom) zoomed = n; }); }
    section('context', WHAT + ' by program context', [el('p', { text: 'Click or press Enter on a box to zoom, Escape to zoom out; the grey boxes above lead back out. Widths are inclusive time.' }),
                                                     el('div', { class: 'controls' }, [search, reset, found]), area]);
    draw();
  }

  // ---- graphs: replays, kernels per replay, the replays' time histogram ----
  var H = S.histogram || { exact_below_ns: 8, sub_buckets: 4 };
  function bucketLow(b) {
    if (b < H.exact_below_ns) return b;
    var o = 3 + Math.floor((b - H.exact_below_ns) / H.sub_buckets), s = (b - H.exact_below_ns) % H.sub_buckets;
    return Math.pow(2, o) + s * Math.pow(2, o - 2);
  }
  function histogram(pairs, label) {
    var w = 320, h = 80, g = svg('svg', { viewBox: '0 0 ' + w + ' ' + (h + 14), width: w, height: h + 14, role: 'img', 'aria-label': label });
    if (!pairs || !pairs.length) return g;
    var lo = pairs[0][0], hi = pairs[pairs.length - 1][0], max = Math.max.apply(null, pairs.map(function (p) { return p[1]; }));
    var bw = w / (hi - lo + 1);
    pairs.forEach(function (p) {
      var bh = h * p[1] / max;
      g.appendChild(svg('rect', { x: (p[0] - lo) * bw, y: h - bh, width: Math.max(bw - 1, 1), height: bh, fill: '#4e79a7', 'data-bucket': p[0], 'data-count': p[1] }))
       .appendChild(svg('title', { text: '>= ' + fmtTime(bucketLow(p[0])) + ': ' + p[1] }));
    });
    g.appendChild(svg('text', { x: 0, y: h + 12, text: fmtTime(bucketLow(lo)) }));
    g.appendChild(svg('text', { x: w, y: h + 12, 'text-anchor': 'end', text: fmtTime(bucketLow(hi + 1)) }));
    return g;
  }
  function graphs() {
    var gs = S.graphs || [];
    if (!gs.length) return;
    var cols = [['graph label', 'label', 0], ['replays', 'replays', 1], ['kernels/replay', 'kernels_per_replay', 1], ['GPU time', 'gpu_ns', 2],
                ['mean', 'gpu_replay_mean_ns', 2], ['p50', 'gpu_replay_p50_ns', 2], ['p99', 'gpu_replay_p99_ns', 2]];
    section('graphs', 'CUDA graphs', [table('graphs-table', cols, gs)].concat(gs.map(function (g) {
      return el('figure', {}, [histogram(g.gpu_replay_histogram, 'replay times of ' + g.label), el('figcaption', { text: g.label + ': GPU time per replay' })]);
    })));
  }

  // ---- sortable tables: the text report's numbers ----
  function table(id, cols, rows) {
    var t = el('table', { id: id }), body = el('tbody'), key = null, down = true;
    function fill() {
      var r = rows.slice();
      if (key !== null) r.sort(function (a, b) {
        var x = a[cols[key][1]], y = b[cols[key][1]], c = typeof x === 'string' || typeof y === 'string' ? String(x).localeCompare(String(y)) : (x || 0) - (y || 0);
        return down ? -c : c;
      });
      body.innerHTML = '';
      var most = {};  // a change column's largest size, for its bars
      cols.forEach(function (c) { if (c[2] === 3) most[c[1]] = Math.max.apply(null, rows.map(function (x) { return Math.abs(x[c[1]] || 0); }).concat([1])); });
      r.forEach(function (row) {
        body.appendChild(el('tr', { 'data-key': row[cols[0][1]] }, cols.map(function (c) {
          var v = row[c[1]], none = v === null || v === undefined;
          var td = el('td', { 'data-v': none ? '' : v, class: c[2] === 3 ? (v > 0 ? 'up' : v < 0 ? 'down' : '') : null,
                              text: none ? '-' : c[2] === 2 ? fmtTime(v) : c[2] === 3 ? (v < 0 ? '-' : '+') + fmtTime(Math.abs(v)) : String(v) });
          if (c[2] === 3 && !none) td.insertBefore(el('span', { class: 'delta', style: 'width:' + (4 * Math.abs(v) / most[c[1]]).toFixed(2) + 'em' }), td.firstChild);
          return td;
        })));
      });
    }
    t.appendChild(el('thead', {}, [el('tr', {}, cols.map(function (c, i) {
      return el('th', { scope: 'col' }, [el('button', { text: c[0], title: 'sort by ' + c[0], onclick: function () { down = key === i ? !down : i > 0; key = i; fill(); } })]);
    }))]));
    t.appendChild(body);
    fill();
    return el('div', { class: 'scroll' }, [t]);
  }
  function labelTable() {
    var p = gpu ? [['GPU time', 'gpu_ns', 2], ['kernels', 'gpu_kernels', 1], ['GPU mean', 'gpu_mean_ns', 2], ['GPU p50', 'gpu_p50_ns', 2], ['GPU p99', 'gpu_p99_ns', 2]] : [];
    var cols = [['label', 'label', 0], ['category', 'category', 0], ['launches', 'launches', 1], ['graph launches', 'graph_launches', 1],
                ['CPU time', 'cpu_ns', 2], ['CPU mean', 'cpu_mean_ns', 2], ['CPU p50', 'cpu_p50_ns', 2], ['CPU p99', 'cpu_p99_ns', 2]].concat(p);
    section('tables', 'Labels', [table('labels-table', cols, S.labels || [])]);
  }

  // ---- windows over time: a stacked chart of time per label per window ----
  function top(rowsByLabel, n) {
    return Object.keys(rowsByLabel).sort(function (a, b) { return rowsByLabel[b] - rowsByLabel[a]; }).slice(0, n);
  }
  function windowsChart() {
    var ws = dict(), sum = dict();
    (doc.parts || []).forEach(function (p) {
      if (!p.window) return;
      var w = ws[p.window.index] = ws[p.window.index] || { index: p.window.index, start: p.window.start_ns, labels: dict() };
      w.start = Math.min(w.start, p.window.start_ns);
      p.labels.forEach(function (l) { var v = l[TIME] || 0; w.labels[l.label] = (w.labels[l.label] || 0) + v; sum[l.label] = (sum[l.label] || 0) + v; });
    });
    var list = Object.keys(ws).map(function (k) { return ws[k]; }).sort(function (a, b) { return a.index - b.index; });
    if (list.length < 2) return;
    var names = top(sum, 9), W = 640, Hh = 200, bw = W / list.length;
    var max = Math.max.apply(null, list.map(function (w) { return Object.keys(w.labels).reduce(function (s, k) { return s + w.labels[k]; }, 0); })) || 1;
    var g = svg('svg', { viewBox: '0 0 ' + W + ' ' + (Hh + 14), width: '100%', role: 'img', 'aria-label': WHAT + ' per window', id: 'windows-chart' });
    list.forEach(function (w, i) {
      var y = Hh, other = 0;
      Object.keys(w.labels).forEach(function (k) { if (names.indexOf(k) < 0) other += w.labels[k]; });
      names.concat(['[other]']).forEach(function (k) {
        var v = k === '[other]' ? other : w.labels[k] || 0, h = Hh * v / max;
        if (!v) return;
        y -= h;
        g.appendChild(svg('rect', { x: i * bw + 1, y: y, width: Math.max(bw - 2, 1), height: h, fill: k === '[other]' ? '#bbb' : PALETTE[names.indexOf(k) % PALETTE.length],
                                    'data-window': w.index, 'data-label': k, 'data-ns': v })).appendChild(svg('title', { text: 'window ' + w.index + ', ' + k + ': ' + fmtTime(v) }));
      });
      g.appendChild(svg('text', { x: i * bw + bw / 2, y: Hh + 12, 'text-anchor': 'middle', text: String(w.index) }));
    });
    var legend = el('div', { class: 'legend' }, names.map(function (k, i) { return el('span', {}, [el('i', { style: 'background:' + PALETTE[i % PALETTE.length] }), k]); }));
    section('windows', WHAT + ' per window', [g, legend]);
  }

  // ---- ranks: a heat map of time per label per rank, the slowest rank of each label marked ----
  function ranks() {
    var per = dict(), sum = dict(), rs = dict();
    (doc.parts || []).forEach(function (p) {
      if (p.rank === null || p.rank === undefined) return;
      rs[p.rank] = 1;
      p.labels.forEach(function (l) {
        var v = l[TIME] || 0, row = per[l.label] = per[l.label] || dict();
        row[p.rank] = (row[p.rank] || 0) + v; sum[l.label] = (sum[l.label] || 0) + v;
      });
    });
    var rankList = Object.keys(rs).sort(function (a, b) { return Number(a) - Number(b) || (a < b ? -1 : 1); });
    if (rankList.length < 2) return;
    var t = el('table', { id: 'ranks-table' }), head = el('tr', {}, [el('th', { text: 'label' })]);
    rankList.forEach(function (r) { head.appendChild(el('th', { text: 'rank ' + r })); });
    t.appendChild(el('thead', {}, [head]));
    var body = el('tbody');
    top(sum, 30).forEach(function (label) {
      var row = per[label], max = 0, min = Infinity, slow = null;
      rankList.forEach(function (r) { var v = row[r] || 0; min = Math.min(min, v); if (v > max) { max = v; slow = r; } });
      if (max === min) slow = null;  // all ranks alike: none is the slowest
      var tr = el('tr', {}, [el('td', { text: label, title: label })]);
      rankList.forEach(function (r) {
        var v = row[r] || 0, a = max ? 0.1 + 0.8 * v / max : 0;
        tr.appendChild(el('td', { class: 'heat' + (r === slow ? ' slowest' : ''), 'data-label': label, 'data-rank': r, 'data-ns': v,
                                  style: 'background:rgba(225,87,89,' + a.toFixed(3) + ')', title: label + ' on rank ' + r + ': ' + fmtTime(v) + (r === slow ? ' (slowest)' : ''), text: fmtTime(v) }));
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    section('ranks', WHAT + ' per rank (the slowest rank of each label outlined)', [el('div', { class: 'scroll' }, [t])]);
  }

  // ---- the diff of two runs ----
  function diff() {
    var d = doc.diff;
    if (!d) return;
    var kids = [];
    if (d.warnings.length) kids.push(el('ul', { class: 'notes' }, d.warnings.map(function (w) { return el('li', { text: w }); })));
    if (d.threshold !== null) {
      kids.push(el('p', { class: 'verdict ' + (d.slower.length ? 'fail' : 'pass'), id: 'verdict', 'data-slower': d.slower.length,
                          text: d.slower.length ? 'slower past ' + d.threshold + '%: ' + d.slower.map(function (s) { return s[0] + ' (+' + s[1].toFixed(1) + '%)'; }).join(', ')
                                                : 'nothing slower than ' + d.threshold + '% per launch' }));
    }
    Object.keys(d.views).forEach(function (by) {
      var rows = d.views[by].map(function (r) {
        return { key: r[0], a_count: r[1], b_count: r[2], a_ns: r[3], b_ns: r[4], change_ns: r[4] - r[3],
                 change: r[3] ? Number((100 * (r[4] - r[3]) / r[3]).toFixed(1)) : r[4] ? 'new' : null };  // as the text diff
      });
      var cols = [[by === 'context' ? 'context > label' : 'label', 'key', 0], ['A ' + d.count, 'a_count', 1], ['B ' + d.count, 'b_count', 1],
                  ['A time', 'a_ns', 2], ['B time', 'b_ns', 2], ['change', 'change_ns', 3], ['change %', 'change', 1]];
      kids.push(el('h3', { text: 'by ' + by }), table('diff-' + by, cols, rows));
    });
    function files(n) { return n + (n === 1 ? ' file' : ' files'); }
    section('diff', 'Diff of ' + d.what + ': A (' + files(d.files[0]) + ') vs B (' + files(d.files[1]) + '), largest change first', kids);
  }

  try {
    app.innerHTML = '';
    app.appendChild(el('h1', { text: 'nvtxcorr report' }));
    if (doc.diff) diff(); else { header(); bars(); flame(); graphs(); windowsChart(); ranks(); labelTable(); }
    replay.forEach(function (r) {
      var target = r[0] === 'type' ? document.getElementById('flame-search') : document.querySelector(r[1]);
      if (!target) { fail('#' + r[0] + '=' + r[1] + ': nothing there'); return; }
      if (r[0] === 'click') target.click();
      else if (r[0] === 'press' || r[0] === 'escape') target.dispatchEvent(new KeyboardEvent('keydown', { key: r[0] === 'press' ? 'Enter' : 'Escape', bubbles: true }));
      else { target.value = r[1]; target.dispatchEvent(new Event('input', { bubbles: true })); }
    });
  } catch (e) {
    fail(e && e.stack || e);
    throw e;
  }
  void app.offsetHeight;  // style and layout now, so that render-ms counts them too
  // Whether the page fits the window's width (wide tables scroll inside their own box).
  document.body.setAttribute('data-fits', document.documentElement.scrollWidth <= window.innerWidth ? '1' : '0');
  var ms = performance.now() - t0;
  document.body.setAttribute('data-render-ms', ms.toFixed(1));
  document.body.setAttribute('data-resources', performance.getEntriesByType('resource').length);
  document.body.setAttribute('data-errors', errors.length);
  document.body.setAttribute('data-error-text', errors.join('\n'));
  document.body.setAttribute('data-ready', '1');
  // From navigation: reading the file, parsing the page and its data, drawing, layout.
  document.body.setAttribute('data-page-ms', performance.now().toFixed(1));
})();
