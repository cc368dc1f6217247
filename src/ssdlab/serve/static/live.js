// A run in progress: server-sent events from /api/live/{id}/events ("snapshot": the whole history, then
// "records", "stored" and "state" as they come) drawn with plotly.js (served from the installed plotly package).
// Charts grow by Plotly.extendTraces every second; past MAX samples every other one is dropped and the charts
// are drawn again, as the server does.
"use strict";
(function () {
  const id = window.location.pathname.split("/").pop();
  const MAX = 7200;
  const FEW = 60;  // samples drawn with markers too
  const $ = (name) => document.getElementById(name);
  const S = { samples: [], health: [], ends: [], notes: [], stored: {}, state: {}, devices: [], drawn: false,
              dirs: new Set(), spans: {}, axes: {} };
  const DIRS = [["r", "read"], ["w", "write"]];
  const STATS = [[2, "mean"], [3, "p99"], [4, "p99.9"], [5, "p99.99"]];
  const COLORS = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000", "#882255", "#999933",
                  "#777777"];  // report/charts.py PALETTE: Okabe and Ito's colour-blind-safe set, then Paul Tol's
  const DIR_COLOR = { r: COLORS[0], w: COLORS[1] };  // read blue, write vermillion, as in the reports
  const STAT_DASH = { 2: "solid", 3: "dash", 4: "dot", 5: "dashdot" };  // mean, p99, p99.9, p99.99
  const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
  const TIME_AXIS = { type: "date", title: { text: "time (local)" }, automargin: true };
  window.ssdlabLive = S; // what the browser tests read

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function num(v, digits) {
    if (v === null || v === undefined) return "–";
    return Number(v).toLocaleString(undefined, { maximumFractionDigits: digits === undefined ? 1 : digits });
  }
  function duration(s) {
    if (s === null || s === undefined) return "–";
    s = Math.round(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + sec + "s";
  }
  function layout(title, ytitle, extra) {
    return Object.assign({
      title: { text: title, font: { size: 14 } }, margin: { l: 64, r: 16, t: 36, b: 56 },
      xaxis: TIME_AXIS, yaxis: { title: { text: ytitle }, rangemode: "tozero", automargin: true },
      // the legend beside the plot: below it, two rows of names ran over the x axis's title
      legend: { orientation: "v", x: 1.02, xanchor: "left", y: 1, font: { size: 11 } }, showlegend: true,
      uirevision: "keep", colorway: COLORS,
    }, extra || {});
  }
  function field(fig, dir, i) {
    const row = fig && fig[dir];
    return row && row[i] !== undefined ? row[i] : null;
  }
  function noteDirs(sample) { for (const k of Object.keys(sample.a || {})) S.dirs.add(k); }
  function sum(a, b) { return a === null && b === null ? null : (a || 0) + (b || 0); }
  function max(a, b) { return a === null ? b : b === null ? a : Math.max(a, b); }
  function ms(record) { return record.t * 1000; }

  // ---------------------------------------------------------------- axes: one tick style, ticks bracketing the data
  // (the rules of report/charts.py: tick_style and log_ticks, so a page and a report label an axis alike)
  const SUPER = { "-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸",
                  "9": "⁹" };
  function decimals(values) {
    for (let d = 0; d < 7; d++) {
      if (values.every((v) => Math.abs(Number(v.toFixed(d)) - v) <= 1e-9 * Math.max(1, Math.abs(v)))) return d;
    }
    return 6;
  }
  function grouped(v, digits) {
    return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function si(v) {
    const a = Math.abs(v);
    if (a >= 1e6) return Number((v / 1e6).toPrecision(6)) + "M";
    if (a >= 1e3) return Number((v / 1e3).toPrecision(6)) + "k";
    return String(Number(v.toPrecision(6)));
  }
  function tickStyle(values, log) {  // one label style for every tick of an axis
    const top = Math.max(0, ...values.map(Math.abs));
    if (log) {
      const decades = values.every((v) => v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9);
      if (decades && Math.min(...values) < 1e-3) {
        return (v) => "10" + String(Math.round(Math.log10(v))).replace(/[-0-9]/g, (c) => SUPER[c]);
      }
      if (top >= 1e5) return (v) => (Math.abs(v) >= 1000 ? si(v) : String(Number(v.toPrecision(6))));
      return (v) => (Math.abs(v) >= 1000 ? grouped(v, 0) : String(Number(v.toPrecision(6))));
    }
    const [unit, suffix] = top >= 1e6 ? [1e6, "M"] : top >= 1e4 ? [1e3, "k"] : [1, ""];
    const digits = decimals(values.map((v) => v / unit));
    return (v) => (v === 0 ? "0" : grouped(v / unit, digits) + suffix);
  }
  function bracket(ticks, lo, hi) {
    const below = ticks.filter((t) => t <= lo * (1 + 1e-9));
    const above = ticks.filter((t) => t >= hi * (1 - 1e-9));
    return [below.length ? below[below.length - 1] : lo, above.length ? above[0] : hi];
  }
  function niceTicks(lo, hi, count) {  // evenly spaced round ticks from the one at or below lo to the one at or above hi
    const raw = (hi - lo) / (count || 5) || Math.abs(hi) || 1;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.999);
    const out = [];
    for (let t = Math.floor(lo / step + 1e-9) * step; out.length < 60; t += step) {
      out.push(Number(t.toPrecision(12)));
      if (out.length >= 2 && t >= hi - step * 1e-9) break;  // the first tick at or above hi closes the axis
    }
    return out;
  }
  const STEPS = [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]];
  function logTicks(lo, hi) {  // at least three, bracketing lo..hi (charts.log_ticks)
    const first = Math.log10(hi / lo) > 3 ? 0 : 1;
    for (let i = first; i < STEPS.length; i++) {
      const k0 = Math.floor(Math.log10(lo) + 1e-9), k1 = Math.ceil(Math.log10(hi) - 1e-9);
      const stride = i === 0 ? Math.max(1, Math.ceil((k1 - k0 + 1) / 12)) : 1;
      const ticks = [];
      for (let k = k0 - stride; k <= k1 + stride; k += stride) {
        for (const m of STEPS[i]) ticks.push(Number((m * Math.pow(10, k)).toPrecision(12)));
      }
      const [below, above] = bracket(ticks, lo, hi);
      const kept = ticks.filter((t) => t >= below * (1 - 1e-9) && t <= above * (1 + 1e-9));
      if (kept.length >= 3 && Math.log(hi / lo) >= 0.4 * Math.log(above / below)) return kept;
    }
    const even = niceTicks(lo, hi, 4).filter((t) => t > 0);
    const [below, above] = bracket(even, lo, hi);
    return even.filter((t) => t >= below && t <= above);
  }
  function valueAxis(values, log, title) {  // a y axis whose labelled ticks bracket `values`
    const found = values.filter((v) => v !== null && v !== undefined && isFinite(v) && (!log || v > 0));
    const base = { title: { text: title }, automargin: true };
    if (!found.length) return Object.assign(base, log ? { type: "log" } : { rangemode: "tozero" });
    let lo = Math.min(...found), hi = Math.max(...found);
    if (!log) lo = Math.min(0, lo);
    if (hi === lo) { lo = log ? lo / 1.5 : lo - 1; hi = log ? hi * 1.5 : hi + 1; }
    const ticks = log ? logTicks(lo, hi) : (() => { const t = niceTicks(lo, hi, 5); const [b, a] = bracket(t, lo, hi);
                                                      return t.filter((x) => x >= b && x <= a); })();
    const text = tickStyle(ticks, log);
    const f = log ? Math.log10 : (v) => v;
    const pad = 0.02 * (f(ticks[ticks.length - 1]) - f(ticks[0]) || 1);
    return Object.assign(base, { type: log ? "log" : "linear", tickvals: ticks, ticktext: ticks.map(text),
                                 range: [f(ticks[0]) - (log || ticks[0] !== 0 ? pad : 0), f(ticks[ticks.length - 1]) + pad] });
  }

  // ---------------------------------------------------------------- chart definitions: traces from a sample
  function lat(v) { return v !== null && v > 0 ? v : null; }  // no latency (an idle direction) is a gap, not a 0
  function present() {  // the directions the run has measured so far: a read-only phase draws no write series
    return DIRS.filter(([k]) => S.dirs.has(k));
  }
  function aggregate() {
    const dirs = present();
    return {
      "c-iops": { title: "IOPS per direction", y: "IOPS (I/Os per second)",
                  traces: dirs.map(([k, name]) => ({ name, color: DIR_COLOR[k], get: (s) => field(s.a, k, 0) })) },
      "c-bw": { title: "Bandwidth per direction", y: "MB/s (10⁶ bytes per second)",
                traces: dirs.map(([k, name]) => ({ name, color: DIR_COLOR[k], get: (s) => field(s.a, k, 1) })) },
      "c-lat": { title: "Completion latency per second", y: "latency (µs)", log: true,
                 traces: dirs.flatMap(([k, name]) => STATS.map(([i, stat]) => ({
                   name: name + " " + stat, color: DIR_COLOR[k], dash: STAT_DASH[i],
                   get: (s) => lat(field(s.a, k, i)) }))) },
    };
  }
  function deviceStyle(i) {  // ten colours, then the same with another dash: 24 devices stay apart
    return { color: COLORS[i % COLORS.length], dash: ["solid", "dash", "dot", "dashdot"][Math.floor(i / COLORS.length) % 4] };
  }
  function perDevice(devices) {
    return {
      "c-dev-iops": { title: "IOPS per device (read + write)", y: "IOPS (I/Os per second)",
                      traces: devices.map((name, i) => Object.assign({ name, get: (s) => {
                        const d = s.d && s.d[i]; return d ? sum(field(d, "r", 0), field(d, "w", 0)) : null; } },
                        deviceStyle(i))) },
      "c-dev-p99": { title: "p99 completion latency per device (worse direction)", y: "p99 latency (µs)", log: true,
                     traces: devices.map((name, i) => Object.assign({ name, get: (s) => {
                       const d = s.d && s.d[i]; return d ? lat(max(field(d, "r", 3), field(d, "w", 3))) : null; } },
                       deviceStyle(i))) },
    };
  }
  function charts() {
    const out = aggregate();
    if (S.devices.length > 1 && !S.state.host_group) Object.assign(out, perDevice(S.devices));
    return out;
  }
  function span(def, samples, prev) {  // the smallest and largest value the chart draws (positive on a log axis)
    let [lo, hi] = prev || [Infinity, -Infinity];
    for (const t of def.traces) {
      for (const s of samples) {
        const v = t.get(s);
        if (v === null || v === undefined || !isFinite(v) || (def.log && v <= 0)) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    return [lo, hi];
  }
  function yAxis(def, range) { return valueAxis(range[0] <= range[1] ? range : [], def.log, def.y); }

  function drawAll() {
    const defs = charts();
    S.drawnDirs = present().map(([k]) => k).join("");
    S.axes = {};
    S.spans = {};
    for (const [div, def] of Object.entries(defs)) {
      const traces = def.traces.map((t) => ({  // (markers while there are few samples: one alone draws no line)
        type: "scatter", mode: S.samples.length < FEW ? "lines+markers" : "lines", name: t.name, x: S.samples.map(ms),
        y: S.samples.map(t.get), line: { width: 1.5, dash: t.dash || "solid", color: t.color },
        marker: { size: 3, color: t.color }, connectgaps: false,
      }));
      S.spans[div] = span(def, S.samples);
      const axis = yAxis(def, S.spans[div]);
      S.axes[div] = JSON.stringify(axis.tickvals || []);
      const many = traces.length > 8 ? { legend: { orientation: "v", x: 1.02, y: 1, font: { size: 10 } } } : {};
      Plotly.react($(div), traces, layout(def.title, def.y, Object.assign(many, { yaxis: axis })), CONFIG);
    }
    for (const id of ["c-iops", "c-bw", "c-lat"]) $(id).classList.toggle("hidden", !S.samples.length);
    drawTemperature();
    if (!S.drawn) fit();
    S.drawn = true;
  }

  function fit() {  // charts drawn before the grid had its final width take their cell's width
    window.requestAnimationFrame(() => {
      for (const div of document.querySelectorAll(".chart")) if (div.data && div.offsetParent) Plotly.Plots.resize(div);
    });
  }

  function extend(samples) {
    if (!samples.length) return;
    const dirs = present().map(([k]) => k).join("");
    const crossed = S.samples.length >= FEW && S.samples.length - samples.length < FEW;  // (markers off)
    if (!S.drawn || S.samples.length > MAX || dirs !== S.drawnDirs || crossed) {  // (a direction appeared: its series)
      if (S.samples.length > MAX) S.samples = S.samples.filter((_, i) => i % 2 === 0);
      drawAll();
      return;
    }
    for (const [div, def] of Object.entries(charts())) {
      Plotly.extendTraces($(div), { x: def.traces.map(() => samples.map(ms)),
                                    y: def.traces.map((t) => samples.map(t.get)) }, def.traces.map((_, i) => i));
      S.spans[div] = span(def, samples, S.spans[div]);
      const axis = yAxis(def, S.spans[div]);
      const ticks = JSON.stringify(axis.tickvals || []);
      if (ticks !== S.axes[div]) {  // the data left the bracketing ticks: new ones
        S.axes[div] = ticks;
        Plotly.relayout($(div), { yaxis: Object.assign({}, $(div).layout.yaxis, axis) });
      }
    }
  }

  function drawTemperature() {
    const div = $("c-temp");
    div.classList.toggle("hidden", !S.health.length);  // no drive to ask, or no sample yet: the notice says which
    if (!S.health.length) return;
    const byDevice = new Map();
    for (const h of S.health) {
      if (!byDevice.has(h.device)) byDevice.set(h.device, []);
      byDevice.get(h.device).push(h);
    }
    const traces = [];
    let throttled = false;
    let i = 0;
    for (const [device, rows] of byDevice) {
      const style = deviceStyle(i++);
      traces.push({ type: "scatter", mode: "lines+markers", name: device + " °C", x: rows.map(ms),
                    line: style, marker: { color: style.color }, y: rows.map((h) => h.temperature_c) });
      if (rows.some((h) => h.tmt1_seconds !== undefined || h.tmt2_seconds !== undefined)) {
        throttled = true;
        traces.push({ type: "scatter", mode: "lines", name: device + " throttled", yaxis: "y2",
                      line: { dash: "dot", color: style.color }, x: rows.map(ms),
                      y: rows.map((h) => (h.tmt1_seconds || 0) + (h.tmt2_seconds || 0)) });
      }
    }
    const extra = throttled ? { yaxis2: { title: { text: "time throttled (s, TMT1 + TMT2)" }, overlaying: "y",
                                          side: "right", rangemode: "tozero" } } : {};
    Plotly.react(div, traces, layout("Drive temperature", "temperature (°C)", extra), CONFIG);
  }

  // ---------------------------------------------------------------- the status line, notices, verdict
  function showState() {
    const st = S.state, p = st.point, stored = S.stored;
    $("title").textContent = st.title || stored.suite || id;
    $("path").textContent = st.path || "";
    const status = stored.verdict ? stored.verdict.kind : st.status;
    const badge = $("badge");
    badge.textContent = status || "";
    badge.className = "badge v-" + status;
    $("s-suite").textContent = stored.suite ? stored.suite.split("/").pop() : "–";
    $("s-test").textContent = p ? (p.test || p.group || p.phase || "–") : "–";
    $("s-round").textContent = p && p.round !== null && p.round !== undefined ? p.round : "–";
    const last = S.samples.length ? S.samples[S.samples.length - 1] : null;
    if (p) {
      const total = p.index - 1 + (p.eta ? p.eta.expected_points : 0);
      $("s-point").textContent = p.label + " [" + p.index + "/" + total + "]";
      const left = last && last.t >= p.t && last.left_s !== undefined ? last.left_s : (p.eta ? p.eta.expected_s : null);
      // as the console: never "0s" with points left; the one bound is the worst case's point count
      const pointsLeft = p.eta ? p.eta.expected_points : 0;
      const shown = left !== null && left !== undefined && left < 1 && pointsLeft > 0 ? "<1s" : duration(left);
      $("s-eta").textContent = shown + (p.eta && p.eta.worst_points > p.eta.expected_points
        ? " (at most " + (p.index - 1 + p.eta.worst_points) + " points)" : "");
    } else {
      $("s-point").textContent = "–";
      $("s-eta").textContent = st.status === "running" && st.active ? "–" : "done";
    }
    $("s-samples").textContent = S.samples.length;
    showVerdict();
    showNotices();
  }

  function showVerdict() {
    const v = S.stored.verdict, box = $("verdict");
    if (!v) { box.classList.add("hidden"); return; }
    box.classList.remove("hidden");
    const head = el("div");
    head.append("Verdict: ", el("span", v.kind, "badge v-" + v.kind), " (exit code " + v.exit_code + ")");
    const list = el("ul");
    for (const t of v.tests) list.append(el("li", t));
    box.replaceChildren(head, list);
  }

  function showNotices() {
    const out = [];
    const st = S.state, stored = S.stored;
    if (st.host_group) {
      out.push("This run drives a host group through one fio client: fio's client mode prints no status " +
               "output, so there are no per-second samples. The charts below show each point as it finishes, " +
               "per device.");
    } else if (st.engine === "sim") {
      out.push("The simulator's live samples carry IOPS, bandwidth and mean latency over simulated time; " +
               "percentiles come with each point when it finishes." + (S.samples.length ? "" :
               " It samples every 0.5 s of wall time: this run's points have all ended sooner, so there is no " +
               "per-second sample; each finished point is below."));
    } else if (!S.samples.length && st.status === "running") {
      out.push("No live sample yet: fio reports once a second while a point runs.");
    }
    if (stored.health && !stored.health.available) {
      out.push("Drive temperature: not available: " + (stored.health.reason || "no drive to ask") + ".");
    } else if (stored.health && !S.health.length) {
      out.push("Drive temperature: sampled every 30 s; no sample yet.");
    }
    if (st.status === "running" && !st.active) {
      out.push("No ssdlab process drives this run now (it was killed, or runs on another host): " +
               "`ssdlab resume` continues it.");
    }
    if (stored.error) out.push("Stored results: " + stored.error);
    $("notices").replaceChildren(...out.map((t) => el("div", t, "notice")));
  }

  // ---------------------------------------------------------------- points and PTS
  function showPoints() {
    const points = S.stored.points || [];
    const body = $("points").tBodies[0];
    body.replaceChildren(...points.slice(-60).reverse().map((p) => {
      const tr = el("tr");
      const rows = [p.a.r, p.a.w].filter(Boolean);
      const total = (i) => rows.length ? rows.reduce((acc, r) => acc + (r[i] || 0), 0) : null;
      const worst = (i) => rows.length ? Math.max(...rows.map((r) => r[i] || 0)) : null;
      tr.append(el("td", p.n, "num"), el("td", p.label), el("td", p.status), el("td", num(total(0), 0), "num"),
                el("td", num(total(1)), "num"), el("td", num(worst(2)), "num"), el("td", num(worst(3)), "num"),
                el("td", num(worst(5)), "num"));
      return tr;
    }));
    const chart = pointsChart(points);
    Plotly.react($("c-points"), chart.traces, layout(chart.title, "IOPS (I/Os per second)",
      { xaxis: chart.xaxis, yaxis: valueAxis(chart.values, false, "IOPS (I/Os per second)"),
        margin: { l: 64, r: 16, t: 36, b: 64 } }), CONFIG);
  }

  // ---------------------------------------------------------------- finished points against the swept axis
  const PARAMS = ["iodepth", "numjobs", "bs", "rwmixread"];  // what a sweep varies (lab.SWEPT)
  const PARAM_TITLE = { iodepth: "queue depth (QD)", numjobs: "threads (jobs)", bs: "block size",
                        rwmixread: "reads (% of I/Os)" };
  function bsText(v) {
    if (v >= 1048576 && v % 1048576 === 0) return v / 1048576 + "M";
    if (v >= 1024 && v % 1024 === 0) return v / 1024 + "K";
    return String(v);
  }
  function paramText(k, v) {
    if (v === null || v === undefined) return "";
    return k === "bs" ? bsText(v) : k === "iodepth" ? "QD" + v : k === "numjobs" ? "T" + v : v + "/" + (100 - v);
  }
  function measuredOnes(points) {  // the measured points (lab.is_measured: the count every page shows)
    return points.filter((p) => (p.measured !== undefined ? p.measured : p.status === "ok") && (p.a.r || p.a.w));
  }
  function sweptAxis(pool) {  // the parameter some line of points varies: a characterization's swept axis first
    const swept = (pool[pool.length - 1].swept || []).filter((k) => PARAMS.includes(k));
    for (const k of swept.concat(PARAMS.filter((x) => !swept.includes(x)))) {
      const lines = new Map();
      for (const p of pool) {
        const key = [p.group, p.rw, ...PARAMS.filter((o) => o !== k).map((o) => p.x[o])].join("|");
        if (!lines.has(key)) lines.set(key, new Set());
        lines.get(key).add(p.x[k]);
      }
      if (pool.every((p) => p.x[k] !== null && p.x[k] !== undefined) && [...lines.values()].some((xs) => xs.size > 1)) {
        return k;
      }
    }
    return null;
  }
  function pointsChart(points) {
    let pool = measuredOnes(points);
    const iops = (fig) => (fig ? sum(field(fig, "r", 0), field(fig, "w", 0)) : null);
    if (!pool.length) return { traces: [], xaxis: { title: { text: "point" } }, values: [], title: "IOPS of each finished point" };
    const last = pool[pool.length - 1];
    let where = "";
    if (last.round !== null && last.round !== undefined) {  // a PTS round: the latest one, as it fills
      pool = pool.filter((p) => p.test === last.test && p.round === last.round);
      where = " (" + (last.test ? last.test.toUpperCase() + " " : "") + "round " + last.round + ")";
    }
    const axis = sweptAxis(pool);
    if (axis === null) {  // nothing swept: a few tests by name (CrystalDiskMark-style), a series (WSAT) in run order
      const named = pool.length <= 24;
      const x = pool.map((p) => (named ? p.label : p.n));
      return { title: "IOPS of each finished point" + where, values: pool.map((p) => iops(p.a)),
               xaxis: named ? { type: "category", title: { text: "point" }, automargin: true }
                 : { title: { text: "point (#, in the order run)" }, automargin: true },
               traces: [{ type: "scatter", mode: "markers", name: "all devices", x, y: pool.map((p) => iops(p.a)),
                          marker: { color: COLORS[0], size: 8 } }] };
    }
    const varying = (k) => new Set(pool.map((p) => p.x[k])).size > 1;
    const others = PARAMS.filter((k) => k !== axis && varying(k));
    const groups = new Set(pool.map((p) => p.group)).size > 1, rws = new Set(pool.map((p) => p.rw)).size > 1;
    const lines = new Map();
    for (const p of pool) {
      const name = [groups ? p.group : "", rws ? p.rw : "", ...others.map((k) => paramText(k, p.x[k]))]
        .filter(Boolean).join(" ") || "all devices";
      if (!lines.has(name)) lines.set(name, []);
      lines.get(name).push(p);
    }
    const traces = [];
    let i = 0;
    for (const [name, ps] of lines) {
      ps.sort((a, b) => a.x[axis] - b.x[axis]);
      traces.push({ type: "scatter", mode: "lines+markers", name, x: ps.map((p) => p.x[axis]), y: ps.map((p) => iops(p.a)),
                    text: ps.map((p) => p.label), line: { color: COLORS[i % COLORS.length], width: 1.5 },
                    marker: { color: COLORS[i % COLORS.length] } });
      i++;
    }
    const keys = [...new Set(pool.flatMap((p) => Object.keys(p.d || {})))];
    keys.forEach((key, j) => traces.push({ type: "scatter", mode: "markers", name: key, x: pool.map((p) => p.x[axis]),
      y: pool.map((p) => iops(p.d ? p.d[key] : null)), text: pool.map((p) => p.label),
      marker: { symbol: "circle-open", color: deviceStyle(j).color } }));
    const xs = [...new Set(pool.map((p) => p.x[axis]))].sort((a, b) => a - b);
    const log2 = axis !== "rwmixread" && xs[0] > 0;  // queue depths, threads, block sizes: doubling steps
    const pad = log2 ? 0.15 * Math.log10(2) : 5;
    const f = log2 ? Math.log10 : (v) => v;
    return { title: "IOPS of each finished point vs " + PARAM_TITLE[axis] + where,
             values: traces.flatMap((t) => t.y),
             traces, xaxis: { type: log2 ? "log" : "linear", title: { text: PARAM_TITLE[axis] }, automargin: true,
                              tickvals: xs, ticktext: xs.map((v) => (axis === "bs" ? bsText(v) : String(v))),
                              range: [f(xs[0]) - pad, f(xs[xs.length - 1]) + pad] } };
  }

  function showPts() {
    const tests = (S.stored.pts || []).filter((t) => t.rounds > 0);
    $("pts").classList.toggle("hidden", !tests.length);
    if (!tests.length) return;
    const box = $("pts-charts");
    const wanted = [];
    for (const t of tests) {
      for (const tr of t.trackers) {
        const divId = "pts-" + t.test + "-" + tr.name.replace(/[^A-Za-z0-9]+/g, "-");
        wanted.push(divId);
        let div = document.getElementById(divId);
        if (!div) { div = el("div", null, "chart"); div.id = divId; box.append(div); }
        const rounds = tr.values.map((_, i) => i + 1);
        const traces = [{ type: "scatter", mode: "lines+markers", name: tr.name, x: rounds, y: tr.values,
                          line: { color: COLORS[0] }, marker: { color: COLORS[0] } }];
        const w = tr.window;
        if (w) {
          const xs = [w.rounds[0] - 0.3, w.rounds[w.rounds.length - 1] + 0.3];
          traces.push({ type: "scatter", mode: "lines", name: "window average", x: xs, y: [w.average, w.average],
                        line: { color: COLORS[2] } });
          traces.push({ type: "scatter", mode: "lines", name: "±10 % of the average", x: xs.concat(xs.slice().reverse()),
                        y: [w.high, w.high, w.low, w.low], fill: "toself", fillcolor: "rgba(0,158,115,0.12)",
                        line: { width: 0 } });
          traces.push({ type: "scatter", mode: "lines", name: "least-squares fit", x: w.rounds, y: w.fit,
                        line: { dash: "dash", color: COLORS[3] } });
        }
        const state = w ? (w.steady ? "steady in rounds " : "not steady in rounds ") + w.rounds[0] + "–" +
          w.rounds[w.rounds.length - 1] : "window from round 5";
        const values = tr.values.concat(w ? [w.high, w.low] : []);
        Plotly.react(div, traces, layout(t.title + ": " + tr.name + " (" + state + ")", tr.name + " (" + tr.unit + ")",
          { xaxis: { title: { text: "round" }, dtick: 1, automargin: true },
            yaxis: valueAxis(values, false, tr.name + " (" + tr.unit + ")") }), CONFIG);
      }
    }
    for (const div of [...box.children]) if (!wanted.includes(div.id)) div.remove();
    const devBox = $("pts-devices");
    const rows = [];
    for (const t of tests) {
      for (const [device, per] of Object.entries(t.devices || {})) {
        const flags = Object.values(per).map((x) => x.steady);
        const word = flags.length && flags.every((f) => f === true) ? "steady" : flags.some((f) => f === null)
          ? "no window yet" : "not steady";
        rows.push([t.title, device, word, Object.values(per)[0] ? Object.values(per)[0].values.length : 0]);
      }
    }
    if (!rows.length) { devBox.replaceChildren(); return; }
    const table = el("table");
    const head = el("tr");
    for (const h of ["test", "device", "steady state", "rounds"]) head.append(el("th", h));
    table.append(head);
    for (const r of rows) {
      const tr = el("tr");
      tr.append(el("td", r[0]), el("td", r[1]));
      const cell = el("td"); cell.append(el("span", r[2], "badge v-" + r[2].replace(/ /g, "-"))); tr.append(cell);
      tr.append(el("td", r[3], "num"));
      table.append(tr);
    }
    devBox.replaceChildren(el("h3", "Each device's determination"), table);
  }

  function showNotes() {
    $("notes").replaceChildren(...S.notes.slice(-50).map((n) => el("li", new Date(ms(n)).toLocaleTimeString() + "  " + n.text)));
  }

  function showStored() {
    showPoints();
    showPts();
    showState();
  }

  // ---------------------------------------------------------------- events
  function take(records) {
    const samples = [];
    let health = false, notes = false;
    for (const r of records) {
      if (r.k === "s") { S.samples.push(r); samples.push(r); noteDirs(r); }
      else if (r.k === "health") { S.health.push(r); health = true; }
      else if (r.k === "end") S.ends.push(r);
      else if (r.k === "note") { S.notes.push(r); notes = true; }
    }
    extend(samples);
    if (health) drawTemperature();
    if (notes) showNotes();
  }

  const source = new EventSource("/api/live/" + encodeURIComponent(id) + "/events");
  source.addEventListener("snapshot", (e) => {
    const snap = JSON.parse(e.data);
    S.state = snap.state; S.stored = snap.stored; S.samples = snap.samples; S.health = snap.health;
    S.ends = snap.ends; S.notes = snap.notes; S.devices = snap.state.devices || [];
    S.dirs = new Set();
    for (const r of S.samples) noteDirs(r);
    $("devices").classList.toggle("hidden", !(S.devices.length > 1 && !S.state.host_group));
    drawAll();
    showNotes();
    showStored();
  });
  source.addEventListener("records", (e) => { take(JSON.parse(e.data)); showState(); });
  source.addEventListener("stored", (e) => { S.stored = JSON.parse(e.data); showStored(); });
  source.addEventListener("state", (e) => {
    S.state = JSON.parse(e.data);
    const devices = S.state.devices || [];
    if (devices.join("\n") !== S.devices.join("\n")) {  // the run's first record arrived after the snapshot
      S.devices = devices;
      $("devices").classList.toggle("hidden", !(S.devices.length > 1 && !S.state.host_group));
      drawAll();
    }
    showState();
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) $("badge").textContent = "disconnected";
  });
})();
