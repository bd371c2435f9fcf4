#!/usr/bin/env python3
"""CPU per role per committed review and per committed transfer, from a net_run.sh output dir.

  net_cpu_summary.py OUT_DIR

Reads cpu_sampler.py's timeline (net_cpu.jsonl), the reviews load's time-stamped log and the
reports. CPU seconds do not depend on how many other processes share the machine (wall time
does), so these figures survive the shared machine's load better than the rates do. The chain
costs CPU per block even with nothing to carry (agreement, proofs, 50 citizens), so each role's
idle CPU per block is measured on the reviews network while it waits for the review epoch (no
transactions), and the *marginal* cost of a review or a transfer is its window's CPU less that
idle cost times the window's blocks. On a loaded machine idle blocks cost more (agreement
periods time out and are retried), so a marginal cost can come out too low, even negative:
read it beside the raw CPU per review. Prints a table and writes net_cpu_summary.json.
"""
import json
import os
import re
import sys

out = sys.argv[1]
ROLES = [("politicians (3)", "ledger-politici"), ("citizens (one daemon)", "ledger-citizen"),
         ("launcher: audit, load", "ledger-localnet")]
cpu = [json.loads(l) for l in open(os.path.join(out, "net_cpu.jsonl"))]


def cpu_at(t):
    best = cpu[0]["cpu_s"]
    for snap in cpu:
        if snap["t"] <= t:
            best = snap["cpu_s"]
    return best


def window(t0, t1):
    a, b = cpu_at(t0), cpu_at(t1)
    return {comm: b.get(comm, 0.0) - a.get(comm, 0.0) for _, comm in ROLES}


events = []  # (time, height, message) of the reviews load's progress lines
for line in open(os.path.join(out, "net_reviews_load.log")):
    m = re.match(r"(\d+\.\d+) height (\d+): (.*)", line.strip())
    if m:
        events.append((float(m.group(1)), int(m.group(2)), m.group(3)))
t_idle, h_idle = next((t, h) for t, h, m in events if "items created" in m)
t_sub, h_sub = next((t, h) for t, h, m in events if "submitting" in m and "reviews" in m)
t_end, h_end = [(t, h) for t, h, m in events if "reviews committed" in m][-1]
reviews = json.load(open(os.path.join(out, "net_reviews_report.json")))
# The idle chain ends where the first load after the items starts: the same network's transfer
# phase (reviews/net/transfer_phase.h, "sending N transfers") when there is one.
t_busy, h_busy = next(((t, h) for t, h, m in events if t > t_idle and "sending" in m), (t_sub, h_sub))
idle_blocks = max(h_busy - h_idle, 1)
idle = {c: v / idle_blocks for c, v in window(t_idle, t_busy).items()}
result = {"idle_blocks": idle_blocks, "idle_cpu_ms_per_block": {}, "reviews": {}, "transfers": {}}
lines = [f"idle chain (heights {h_idle}..{h_busy}, no transactions), CPU per block:"]
for role, comm in ROLES:
    result["idle_cpu_ms_per_block"][comm] = idle[comm] * 1000
    lines.append(f"  {role:24s} {idle[comm] * 1000:9.1f} ms")


def marginal(name, t0, t1, blocks, count):
    cpu_w = window(t0, t1)
    rows, total = {}, 0.0
    for role, comm in ROLES:
        m = (cpu_w[comm] - idle[comm] * blocks) * 1000 / max(count, 1)
        rows[comm] = {"cpu_s": cpu_w[comm], "marginal_ms": m}
        if comm != "ledger-localnet":
            total += m
    rows["network_marginal_ms"] = total
    rows.update(blocks=blocks, count=count, seconds=t1 - t0)
    result[name] = rows
    return rows


r = marginal("reviews", t_sub, t_end, max(h_end - h_sub, 1), reviews["reviews_committed"])
lines.append(f"reviews: {r['count']} committed in {r['seconds']:.0f} s over {r['blocks']} blocks; "
             "marginal CPU per review:")
for role, comm in ROLES:
    lines.append(f"  {role:24s} {r[comm]['marginal_ms']:9.2f} ms   (window CPU {r[comm]['cpu_s']:.1f} s, "
                 f"{r[comm]['cpu_s'] * 1000 / max(r['count'], 1):.1f} ms per review before the idle cost)")
for name in ("net_transfers_report", "net_transfers_after_report"):
    path = os.path.join(out, name + ".window")
    if not os.path.exists(path) or not os.path.exists(os.path.join(out, name + ".json")):
        continue
    ts = [float(l.split()[0]) for l in open(path)]
    rep = json.load(open(os.path.join(out, name + ".json")))
    tr = marginal(name, ts[0], ts[-1], max(rep["blocks"], 1), rep["committed_txs"])
    lines.append(f"transfers ({name}): {tr['count']} committed, {tr['blocks']} blocks in "
                 f"{tr['seconds']:.0f} s (start-up included); marginal CPU per transfer:")
    for role, comm in ROLES:
        lines.append(f"  {role:24s} {tr[comm]['marginal_ms']:9.3f} ms   (window CPU {tr[comm]['cpu_s']:.1f} s)")
# Committed per CPU-second the network (politicians + citizens) spent in each window, idle
# costs included: how much work the same CPU buys as reviews and as transfers. Less sensitive to
# the machine's load than the rates (a process that waits for the CPU spends none), though idle
# blocks cost more under load (agreement periods retried).
def per_network_cpu_s(name):
    rows = result[name]
    cpu_s = sum(rows[comm]["cpu_s"] for _, comm in ROLES if comm != "ledger-localnet")
    return rows["count"] / cpu_s if cpu_s > 0 else 0.0


result["reviews_per_network_cpu_s"] = per_network_cpu_s("reviews")
for name in ("net_transfers_report", "net_transfers_after_report"):
    if result.get(name):
        t = per_network_cpu_s(name)
        result[name]["per_network_cpu_s"] = t
        lines.append(f"per CPU-second of politicians + citizens: {result['reviews_per_network_cpu_s']:.2f} reviews, "
                     f"{t:.1f} transfers ({name}): ratio {result['reviews_per_network_cpu_s'] / t if t else 0:.3f}")
window_file = os.path.join(out, "net_reviews.window")
if os.path.exists(window_file):
    marks = {l.split()[1]: float(l.split()[0]) for l in open(window_file) if len(l.split()) == 2}
    if "load-done" in marks and "audited" in marks:
        audit_s = window(marks["load-done"], marks["audited"])["ledger-localnet"]
        result["launcher_after_window_cpu_s"] = audit_s
        lines.append(f"launcher after the reviews load (its catch-up replay and audit): {audit_s:.1f} s CPU, "
                     f"{audit_s * 1000 / max(r['count'], 1):.1f} ms per committed review")
lines.append(f"network (politicians + citizens) marginal CPU: {r['network_marginal_ms']:.1f} ms per review"
             + "".join(f"; {result[n]['network_marginal_ms']:.3f} ms per transfer ({n})"
                       for n in ("net_transfers_report", "net_transfers_after_report") if result.get(n)))
verifications = []
logs = os.path.join(out, "logs")
for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
    for l in open(os.path.join(logs, name), errors="replace"):
        if "ring verifications" in l:
            verifications.append(name.replace(".log", "") + ": " + l.split("reviews app: ")[-1].strip())
result["ring_verifications"] = verifications
lines.append("ring verifications per process: " + ("; ".join(verifications) or "(none logged)"))
json.dump(result, open(os.path.join(out, "net_cpu_summary.json"), "w"), indent=1)
print("\n".join(lines))
