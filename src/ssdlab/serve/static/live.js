// A run in progress: server-sent events from /api/live/{id}/events ("snapshot": the whole history, then
// "records", "stored" and "state" as they come) drawn with plotly.js (served from the installed plotly package).
// Charts grow by Plotly.extendTraces every second; past MAX samples every other one is dropped and the charts
// are drawn again, as the server does.
"use strict";
(function () {
  const id = window.location.pathname.split("/").pop();
  const MAX = 7200;
  const $ = (name) => document.getElementById(name);
  const S = { samples: [], health: [], ends: [], notes: [], stored: {}, state: {}, devices: [], drawn: false };
  const DIRS = [["r", "read"], ["w", "write"]];
  const STATS = [[2, "mean"], [3, "p99"], [4, "p99.9"], [5, "p99.99"]];
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
      title: { text: title, font: { size: 14 } }, margin: { l: 64, r: 16, t: 36, b: 48 },
      xaxis: TIME_AXIS, yaxis: { title: { text: ytitle }, rangemode: "tozero", automargin: true },
      legend: { orientation: "h", y: -0.25 }, showlegend: true, uirevision: "keep",
    }, extra || {});
  }
  function field(fig, dir, i) {
    const row = fig && fig[dir];
    return row && row[i] !== undefined ? row[i] : null;
  }
  function sum(a, b) { return a === null && b === null ? null : (a || 0) + (b || 0); }
  function max(a, b) { return a === null ? b : b === null ? a : Math.max(a, b); }
  function ms(record) { return record.t * 1000; }

  // ---------------------------------------------------------------- chart definitions: traces from a sample
  function aggregate() {
    return {
      "c-iops": { title: "IOPS per direction", y: "IOPS (I/Os per second)",
                  traces: DIRS.map(([k, name]) => ({ name, get: (s) => field(s.a, k, 0) })) },
      "c-bw": { title: "Bandwidth per direction", y: "MB/s (10⁶ bytes per second)",
                traces: DIRS.map(([k, name]) => ({ name, get: (s) => field(s.a, k, 1) })) },
      "c-lat": { title: "Completion latency per second", y: "latency (µs)", log: true,
                 traces: DIRS.flatMap(([k, name]) => STATS.map(([i, stat]) => ({
                   name: name + " " + stat, get: (s) => field(s.a, k, i), dash: i === 2 ? "solid" : "dot" }))) },
    };
  }
  function perDevice(devices) {
    return {
      "c-dev-iops": { title: "IOPS per device (read + write)", y: "IOPS (I/Os per second)",
                      traces: devices.map((name, i) => ({ name, get: (s) => {
                        const d = s.d && s.d[i]; return d ? sum(field(d, "r", 0), field(d, "w", 0)) : null; } })) },
      "c-dev-p99": { title: "p99 completion latency per device (worse direction)", y: "p99 latency (µs)", log: true,
                     traces: devices.map((name, i) => ({ name, get: (s) => {
                       const d = s.d && s.d[i]; return d ? max(field(d, "r", 3), field(d, "w", 3)) : null; } })) },
    };
  }
  function charts() {
    const out = aggregate();
    if (S.devices.length > 1 && !S.state.host_group) Object.assign(out, perDevice(S.devices));
    return out;
  }

  function drawAll() {
    const defs = charts();
    for (const [div, def] of Object.entries(defs)) {
      const traces = def.traces.map((t) => ({
        type: "scatter", mode: "lines", name: t.name, x: S.samples.map(ms), y: S.samples.map(t.get),
        line: { width: 1.5, dash: t.dash || "solid" }, connectgaps: false,
      }));
      const extra = def.log ? { yaxis: { title: { text: def.y }, type: "log", dtick: "D2", automargin: true } } : null;
      const many = traces.length > 8 ? { legend: { orientation: "v", x: 1.02, y: 1, font: { size: 10 } } } : {};
      Plotly.react($(div), traces, layout(def.title, def.y, Object.assign(many, extra)), CONFIG);
    }
    drawTemperature();
    if (!S.drawn) fit();
    S.drawn = true;
  }

  function fit() {  // charts drawn before the grid had its final width take their cell's width
    window.requestAnimationFrame(() => {
      for (const div of document.querySelectorAll(".chart")) if (div.data) Plotly.Plots.resize(div);
    });
  }

  function extend(samples) {
    if (!samples.length) return;
    if (!S.drawn || S.samples.length > MAX) {
      if (S.samples.length > MAX) S.samples = S.samples.filter((_, i) => i % 2 === 0);
      drawAll();
      return;
    }
    for (const [div, def] of Object.entries(charts())) {
      Plotly.extendTraces($(div), { x: def.traces.map(() => samples.map(ms)),
                                    y: def.traces.map((t) => samples.map(t.get)) }, def.traces.map((_, i) => i));
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
    for (const [device, rows] of byDevice) {
      traces.push({ type: "scatter", mode: "lines+markers", name: device + " °C", x: rows.map(ms),
                    y: rows.map((h) => h.temperature_c) });
      if (rows.some((h) => h.tmt1_seconds !== undefined || h.tmt2_seconds !== undefined)) {
        throttled = true;
        traces.push({ type: "scatter", mode: "lines", name: device + " throttled", yaxis: "y2",
                      line: { dash: "dot" }, x: rows.map(ms),
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
      $("s-eta").textContent = duration(left) + (p.eta && p.eta.worst_s > p.eta.expected_s + 1
        ? " (at most " + duration(p.eta.worst_s) + ")" : "");
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
               "percentiles come with each point when it finishes.");
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
    const measured = points.filter((p) => p.a.r || p.a.w);
    const iops = (fig) => fig ? sum(field(fig, "r", 0), field(fig, "w", 0)) : null;
    const traces = [{ type: "scatter", mode: "lines+markers", name: "all devices", x: measured.map((p) => p.n),
                      y: measured.map((p) => iops(p.a)), text: measured.map((p) => p.label) }];
    const keys = [...new Set(measured.flatMap((p) => Object.keys(p.d || {})))];
    for (const key of keys) {
      traces.push({ type: "scatter", mode: "markers", name: key, x: measured.map((p) => p.n),
                    y: measured.map((p) => iops(p.d ? p.d[key] : null)), text: measured.map((p) => p.label) });
    }
    Plotly.react($("c-points"), traces, layout("IOPS of each finished point", "IOPS (I/Os per second)",
      { xaxis: { title: { text: "point (#, in the order run)" }, dtick: Math.max(1, Math.ceil(measured.length / 10)),
        automargin: true } }), CONFIG);
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
        const traces = [{ type: "scatter", mode: "lines+markers", name: tr.name, x: rounds, y: tr.values }];
        const w = tr.window;
        if (w) {
          const xs = [w.rounds[0] - 0.3, w.rounds[w.rounds.length - 1] + 0.3];
          traces.push({ type: "scatter", mode: "lines", name: "window average", x: xs, y: [w.average, w.average],
                        line: { color: "#1b7f3b" } });
          traces.push({ type: "scatter", mode: "lines", name: "±10 % of the average", x: xs.concat(xs.slice().reverse()),
                        y: [w.high, w.high, w.low, w.low], fill: "toself", fillcolor: "rgba(27,127,59,0.12)",
                        line: { width: 0 } });
          traces.push({ type: "scatter", mode: "lines", name: "least-squares fit", x: w.rounds, y: w.fit,
                        line: { dash: "dash", color: "#9a6700" } });
        }
        const state = w ? (w.steady ? "steady in rounds " : "not steady in rounds ") + w.rounds[0] + "–" +
          w.rounds[w.rounds.length - 1] : "window from round 5";
        Plotly.react(div, traces, layout(t.title + ": " + tr.name + " (" + state + ")", tr.name + " (" + tr.unit + ")",
          { xaxis: { title: { text: "round" }, dtick: 1, automargin: true } }), CONFIG);
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
      if (r.k === "s") { S.samples.push(r); samples.push(r); }
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
