// The results catalog: every run of the root (GET /api/runs), filtered and sorted here, reports and live pages
// one click away, two or more ticked runs compared (GET /compare?run=A&run=B, the first ticked the baseline).
"use strict";
(function () {
  const state = { runs: [], ticked: [], sort: "created", desc: true, allowTags: false };
  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function link(href, text) { const a = el("a", text); a.href = href; return a; }
  function tagText(run) { return Object.entries(run.tags).map(([k, v]) => k + "=" + v).join(" "); }
  function suiteName(s) { return s.split("/").pop(); }

  function value(run, key) {
    if (key === "tags") return tagText(run);
    if (key === "suite") return suiteName(run.suite);
    return run[key];
  }

  function matches(run) {
    const q = $("q").value.trim().toLowerCase();
    const verdict = $("verdict").value, suite = $("suite").value;
    if (verdict && run.verdict !== verdict) return false;
    if (suite && suiteName(run.suite) !== suite) return false;
    if (!q) return true;
    const text = [run.id, run.run_id, run.model, run.firmware, run.serial, run.suite, run.target, run.verdict,
                  run.created, tagText(run)].join(" ").toLowerCase();
    return q.split(/\s+/).every((word) => text.includes(word));
  }

  function sorted(runs) {
    const key = state.sort, sign = state.desc ? -1 : 1;
    return runs.slice().sort((a, b) => {
      const x = value(a, key), y = value(b, key);
      if (typeof x === "number" && typeof y === "number") return sign * (x - y);
      return sign * String(x || "").localeCompare(String(y || ""));
    });
  }

  function editTags(run) {
    const text = window.prompt("Tags of " + run.id + " (KEY=VALUE, separated by spaces; an empty list removes all)",
                               tagText(run));
    if (text === null) return;
    const set = {};
    for (const part of text.split(/\s+/).filter(Boolean)) {
      const i = part.indexOf("=");
      if (i < 1) { window.alert(part + ": use KEY=VALUE"); return; }
      set[part.slice(0, i)] = part.slice(i + 1);
    }
    const remove = Object.keys(run.tags).filter((k) => !(k in set));
    fetch("/api/runs/" + run.id + "/tags", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ set, remove }),
    }).then((r) => r.ok ? r.json() : r.text().then((t) => { throw new Error(t); }))
      .then((body) => { run.tags = body.tags; render(); })
      .catch((e) => window.alert("tags not changed: " + e.message));
  }

  function row(run) {
    const tr = el("tr");
    tr.dataset.id = run.id;
    const box = el("input");
    box.type = "checkbox";
    box.checked = state.ticked.includes(run.id);
    box.setAttribute("aria-label", "compare " + run.id);
    box.addEventListener("change", () => {
      state.ticked = state.ticked.filter((id) => id !== run.id);
      if (box.checked) state.ticked.push(run.id);
      updateCompare();
    });
    const tickCell = el("td"); tickCell.append(box); tr.append(tickCell);
    tr.append(el("td", (run.created || "").slice(0, 16).replace("T", " ")));
    tr.append(el("td", run.model || "–"));
    tr.append(el("td", run.firmware || "–"));
    tr.append(el("td", suiteName(run.suite)));
    tr.append(el("td", run.target));
    const verdictCell = el("td");
    const shown = run.live_now ? "running" : run.verdict;
    verdictCell.append(el("span", shown, "badge v-" + shown));
    tr.append(verdictCell);
    tr.append(el("td", run.points, "num"));
    const tags = el("td");
    for (const [k, v] of Object.entries(run.tags)) tags.append(el("span", k + "=" + v, "tag"));
    if (state.allowTags) {
      const edit = el("button", "edit");
      edit.addEventListener("click", () => editTags(run));
      tags.append(edit);
    }
    tr.append(tags);
    const open = el("td");
    if (run.has_report) open.append(link("/runs/" + run.id + "/report", "report"), " ");
    if (run.has_live) open.append(link("/live/" + run.id, run.live_now ? "live" : "history"));
    if (!run.has_report && !run.has_live) open.append(el("span", "no report", "muted"));
    tr.append(open);
    return tr;
  }

  function render() {
    const shown = sorted(state.runs.filter(matches));
    const body = $("runs").tBodies[0];
    body.replaceChildren(...shown.map(row));
    $("count").textContent = shown.length + " of " + state.runs.length + " runs";
    for (const th of document.querySelectorAll("th[data-key]")) {
      th.classList.toggle("sorted-asc", th.dataset.key === state.sort && !state.desc);
      th.classList.toggle("sorted-desc", th.dataset.key === state.sort && state.desc);
    }
  }

  function updateCompare() {
    const n = state.ticked.length;
    $("compare").disabled = n < 2;
    $("compare").textContent = n < 2 ? "Compare ticked runs" : "Compare " + n + " runs";
  }

  function fillSelect(id, values) {
    const select = $(id);
    for (const v of [...new Set(values)].sort()) {
      const option = el("option", v); option.value = v; select.append(option);
    }
  }

  function running() {
    fetch("/api/live").then((r) => r.json()).then((body) => {
      const box = $("running");
      if (!body.runs.length) { box.replaceChildren("none"); box.className = "muted"; return; }
      box.className = "";
      box.replaceChildren(...body.runs.map((r) => {
        const line = el("div");
        line.append(link("/live/" + r.id, r.title || r.id));
        if (r.point) line.append(" · " + r.point.label);
        return line;
      }));
    }).catch(() => {});
  }

  fetch("/api/runs").then((r) => r.json()).then((body) => {
    state.runs = body.runs;
    state.allowTags = body.allow_tags;
    $("root").textContent = body.root;
    fillSelect("verdict", body.runs.map((r) => r.verdict));
    fillSelect("suite", body.runs.map((r) => suiteName(r.suite)));
    if (body.unreadable.length) $("unreadable").textContent = "not readable: " + body.unreadable.join("; ");
    render();
  });
  for (const id of ["q", "verdict", "suite"]) $(id).addEventListener("input", render);
  for (const th of document.querySelectorAll("th[data-key]")) {
    th.addEventListener("click", () => {
      state.desc = state.sort === th.dataset.key ? !state.desc : th.dataset.key === "created";
      state.sort = th.dataset.key;
      render();
    });
  }
  $("compare").addEventListener("click", () => {
    window.location.href = "/compare?" + state.ticked.map((id) => "run=" + encodeURIComponent(id)).join("&");
  });
  running();
  window.setInterval(running, 5000);
})();
