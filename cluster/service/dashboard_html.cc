// The dashboard page (dashboard.h). Every value from the scheduler goes through textContent,
// never innerHTML: job and tenant names are user input.
#include "cluster/service/dashboard.h"

namespace tessera::cluster {

std::string_view DashboardHtml() {
  return R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Tessera cluster</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.2em 2em; color: #222; background: #fafafa; }
  h1 { font-size: 1.4em; margin: 0 0 .2em; }
  h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
  #status { color: #666; }
  #status.error { color: #b00; font-weight: bold; }
  .row { display: flex; gap: 2em; flex-wrap: wrap; align-items: flex-start; }
  table { border-collapse: collapse; background: #fff; }
  th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
  th { background: #eee; }
  td.l, th.l { text-align: left; }
  tr.premium td:first-child { border-left: 4px solid #7b3fc4; }
  tr.standard td:first-child { border-left: 4px solid #2a7ad5; }
  tr.basic td:first-child { border-left: 4px solid #999; }
  .miss { color: #b00; font-weight: bold; }
  .ok { color: #176b2c; }
  .bar { display: inline-block; width: 120px; height: 10px; background: #e6e6e6;
         vertical-align: middle; }
  .bar > span { display: block; height: 100%; background: #2a7ad5; }
  #events td { font-family: monospace; font-size: 12px; }
</style>
</head>
<body>
<h1>Tessera cluster scheduler</h1>
<div id="status">loading&hellip;</div>
<div class="row">
  <div><h2>Tiers</h2>
  <table id="tiers"><thead><tr><th class="l">tier</th><th>target</th><th>active</th>
  <th>running</th><th>waiting</th><th>below target now</th><th>finished</th>
  <th>finished meeting SLA</th></tr></thead><tbody></tbody></table></div>
  <div><h2>Tenants</h2>
  <table id="tenants"><thead><tr><th class="l">tenant</th><th>active</th><th>slots held</th>
  <th>premium</th><th>standard</th><th>basic</th><th>on borrowed quota</th></tr></thead>
  <tbody></tbody></table></div>
  <div><h2>Nodes</h2>
  <table id="nodes"><thead><tr><th class="l">node</th><th>slots</th><th>used</th>
  <th class="l">alive</th><th class="l">jobs</th></tr></thead><tbody></tbody></table></div>
</div>
<h2>Jobs</h2>
<table id="jobs"><thead><tr><th class="l">job</th><th class="l">tenant</th><th class="l">tier</th>
<th class="l">state</th><th>workers</th><th>progress</th><th>speed / target</th>
<th>preempt.</th><th>resizes</th><th class="l">placement</th></tr></thead><tbody></tbody></table>
<h2>Recent events</h2>
<table id="events"><tbody></tbody></table>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}
function fill(id, rows, render) {
  const body = document.querySelector("#" + id + " tbody");
  const fresh = document.createElement("tbody");
  for (const r of rows) {
    const tr = document.createElement("tr");
    render(tr, r);
    fresh.appendChild(tr);
  }
  body.replaceWith(fresh);
}
const pct = x => (100 * x).toFixed(1) + " %";
function render(s) {
  fill("tiers", s.tiers, (tr, t) => {
    tr.className = t.tier;
    cell(tr, t.tier, "l");
    cell(tr, t.tier === "basic" ? "best effort" : pct(t.target));
    cell(tr, t.active); cell(tr, t.running); cell(tr, t.waiting);
    cell(tr, t.tier === "basic" ? "-" : t.below_target, t.below_target > 0 && t.tier !== "basic" ? "miss" : "");
    cell(tr, t.finished);
    cell(tr, t.finished === 0 ? "-" : t.met + " (" + pct(t.met / t.finished) + ")");
  });
  fill("tenants", s.tenants, (tr, t) => {
    cell(tr, t.tenant, "l"); cell(tr, t.active); cell(tr, t.slots);
    cell(tr, t.premium); cell(tr, t.standard); cell(tr, t.basic); cell(tr, t.borrowed);
  });
  fill("nodes", s.nodes, (tr, n) => {
    cell(tr, n.id, "l"); cell(tr, n.slots);
    const used = cell(tr, "");
    const bar = document.createElement("span"); bar.className = "bar";
    const fillbar = document.createElement("span");
    fillbar.style.width = (n.slots > 0 ? 100 * n.used / n.slots : 0) + "%";
    bar.appendChild(fillbar); used.appendChild(bar);
    used.appendChild(document.createTextNode(" " + n.used + "/" + n.slots));
    cell(tr, n.alive ? "yes" : "DEAD", n.alive ? "l ok" : "l miss");
    cell(tr, n.jobs, "l");
  });
  fill("jobs", s.jobs, (tr, j) => {
    tr.className = j.tier;
    cell(tr, j.id, "l"); cell(tr, j.tenant, "l");
    cell(tr, j.tier + (j.borrowed ? " (borrowed)" : ""), "l");
    cell(tr, j.state, "l");
    cell(tr, j.workers + "/" + j.requested_workers);
    cell(tr, j.total_steps > 0 ? j.step + "/" + j.total_steps : j.step);
    const below = j.tier !== "basic" && j.fraction < j.target;
    cell(tr, pct(j.fraction) + (j.tier === "basic" ? "" : " / " + pct(j.target)), below ? "miss" : "");
    cell(tr, j.preemptions); cell(tr, j.resizes); cell(tr, j.placement, "l");
  });
  const t0 = s.now;
  fill("events", s.events, (tr, e) => {
    cell(tr, "-" + (t0 - e.time).toFixed(1) + " s");
    cell(tr, e.text, "l");
  });
  const st = document.getElementById("status");
  st.className = "";
  st.textContent = "slots " + s.slots.used + "/" + s.slots.total + " in use on " + s.nodes.length +
    " node(s); updated " + new Date().toLocaleTimeString();
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}
async function refresh() {
  try {
    const r = await fetch("/api/state", token ? { headers: { "Authorization": "Bearer " + token } } : {});
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    render(body);
  } catch (e) {
    const st = document.getElementById("status");
    st.className = "error";
    st.textContent = "cannot read the scheduler: " + e.message;
  }
}
refresh();
setInterval(refresh, 1000);
</script>
</body>
</html>
)html";
}

}  // namespace tessera::cluster
