#!/usr/bin/env python3
"""Where the reviews' time goes, stage by stage, from a net_run.sh output dir.

  net_stages.py OUT_DIR

Reads the reviews load's time-stamped log (net_reviews_load.log), its report and the
politicians' info logs (logs/politician-*.log: every commit with its applied and skipped
transactions, and the block budget's pool size and round time). Prints, for the review window
(from the first submission to the last commit) and for the idle blocks before it:

  - the load's phases: keys, items, rings, signing, submission (with the time its threads slept
    on "busy" hints), commit;
  - per block in the window: transactions in the block, applied and skipped (a review sent to
    several politicians is carried once per pool: the copies are skipped), the politician's
    pool budget (block_budget.h) and the round time, and the reviews committed by then;
  - the figures that bound the rate: reviews per block, blocks per second.

The per-process ring verification counts are in net_cpu_summary.py's output.
"""
import glob
import json
import os
import re
import sys
from datetime import datetime, timezone

out = sys.argv[1]
report = json.load(open(os.path.join(out, "net_reviews_report.json")))

events = []  # (time, height, message)
for line in open(os.path.join(out, "net_reviews_load.log")):
    m = re.match(r"(\d+\.\d+) height (\d+): (.*)", line.strip())
    if m:
        events.append((float(m.group(1)), int(m.group(2)), m.group(3)))


def first(pattern):
    for t, h, msg in events:
        if re.search(pattern, msg):
            return t, h
    return None


print("load phases (wall time, height):")
t0 = events[0][0] if events else 0
for name, pattern in (("key requests sent", r"requesting"), ("keys registered", r"keys registered"),
                      ("items created", r"items created"), ("rings opened", r"rings opened"),
                      ("reviews signed, submitting", r"submitting"),
                      ("submitters open, clock starts", r"clock starts")):
    e = first(pattern)
    if e:
        print(f"  {name:30s} +{e[0] - t0:7.1f} s   height {e[1]}")
print(f"  signing                        {report['sign_seconds']:7.2f} s CPU "
      f"({report['sign_seconds'] / max(report['reviews_submitted'], 1) * 1e3:.2f} ms per review)")
print(f"  submission                     {report['submit_seconds']:7.2f} s wall, "
      f"{report['submit_busy_retries']} busy answers, "
      f"{report.get('submit_busy_wait_s', 0.0):.1f} s slept on hints (all threads)")
print(f"  committed                      {report['reviews_committed']} of "
      f"{report['reviews_submitted']} in {report['seconds']:.1f} s, blocks "
      f"{report['first_height']}..{report['last_height']}: {report['reviews_per_s']:.2f} reviews/s")

committed_at = {}  # height -> reviews committed (as first seen by the load's polls)
for t, h, msg in events:
    m = re.match(r"(\d+) reviews committed", msg)
    if m:
        committed_at[h] = int(m.group(1))

TS = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)"
budget_re = re.compile(TS + r".*block budget: block (\d+) of (\d+) txs took ([\d.]+) s \(pool (full|not full)\); fit (.*); pool now (\d+)")
commit_re = re.compile(TS + r".*committed block (\d+) \((\d+) txs applied, (\d+) skipped")
blocks = {}  # height -> dict, from politician 0 (every politician commits the same blocks)
logs = sorted(glob.glob(os.path.join(out, "logs", "politician-*.log")))
if not logs:
    print("no politician logs (run with REVIEWS_NET_LOG_LEVEL=info)")
    sys.exit(0)
for line in open(logs[0]):
    m = budget_re.search(line)
    if m:
        b = blocks.setdefault(int(m.group(2)), {})
        b.update(txs=int(m.group(3)), round_s=float(m.group(4)), full=m.group(5) == "full",
                 pool_after=int(m.group(7)))
        continue
    m = commit_re.search(line)
    if m:
        b = blocks.setdefault(int(m.group(2)), {})
        b.update(applied=int(m.group(3)), skipped=int(m.group(4)),
                 t=datetime.fromisoformat(m.group(1)).timestamp())

def show_window(title, lo, hi, count, unit, marks):
    """Per block of heights lo..hi, then the window's mean round and budget."""
    print(f"\nper block in {title} (politician 0's log; pool = its pool budget after the block):")
    print(f"  height  txs applied skipped  pool(full?)  round s  {unit} committed by then")
    for h in range(lo, hi + 1):
        b = blocks.get(h)
        if not b or "txs" not in b:
            continue
        print(f"  {h:6d} {b['txs']:4d} {b.get('applied', 0):7d} {b.get('skipped', 0):7d}"
              f"  {b['pool_after']:5d} ({'full' if b['full'] else 'not'})  {b['round_s']:6.2f}"
              f"  {marks.get(h, '')}")
    window = [blocks[h] for h in range(lo + 1, hi + 1) if h in blocks and "txs" in blocks[h]]
    if window:
        n = len(window)
        print(f"\n  {n} blocks: {count / n:.1f} {unit} per block, "
              f"mean round {sum(b['round_s'] for b in window) / n:.2f} s, "
              f"skipped/applied txs {sum(b.get('skipped', 0) for b in window)}/"
              f"{sum(b.get('applied', 0) for b in window)}, pool budget "
              f"{min(b['pool_after'] for b in window)}..{max(b['pool_after'] for b in window)}")


busy = set()  # heights that carried a load (reviews or the same network's transfers)
lo, hi = report["first_height"], report["last_height"]
show_window("the review window", lo, hi, report["reviews_committed"], "reviews", committed_at)
busy.update(range(lo, hi + 1))
transfer_marks = {}
for t, h, msg in events:
    m = re.match(r"(\d+) transfers committed", msg)
    if m:
        transfer_marks[h] = int(m.group(1))
for which in ("before", "after"):
    p = report.get(f"transfers_{which}")
    if p and p["last_height"] >= p["first_height"] > 0:
        show_window(f"the transfers {which} the reviews (same network)", p["first_height"],
                    p["last_height"], p["committed"], "transfers", transfer_marks)
        busy.update(range(p["first_height"], p["last_height"] + 1))
idle = [b for h, b in blocks.items() if 6 <= h < lo and h not in busy and "round_s" in b]
if idle:
    print(f"  idle blocks before the review window, transfer phase left out ({len(idle)}): mean round "
          f"{sum(b['round_s'] for b in idle) / len(idle):.2f} s, pool budget at the window's start "
          f"{blocks.get(lo - 1, {}).get('pool_after', '?')}")

# The committee's side of each round (the citizen daemon's log): when the first proposal arrived,
# how long validation took (the sampled re-execution, where a citizen verifies its sample of the
# block's signatures), the round's length, and the highest BA* period a proposal was built for
# (period 1 or more: period 0 found no valid proposal in time).
round_re = re.compile(r"round for block (\d+) committed after (\d+) ms: first proposal (\d+) ms.*validation (\d+) ms")
period_re = re.compile(r"proposal for block (\d+) period (\d+)")
rounds, periods = {}, {}
for path in glob.glob(os.path.join(out, "logs", "citizens-*.log")):
    for line in open(path, errors="replace"):
        m = round_re.search(line)
        if m:
            rounds.setdefault(int(m.group(1)), []).append(tuple(int(m.group(i)) for i in (2, 3, 4)))
            continue
        m = period_re.search(line)
        if m:
            h = int(m.group(1))
            periods[h] = max(periods.get(h, 0), int(m.group(2)))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0


def show_rounds(title, heights):
    rows = [h for h in heights if h in rounds]
    if not rows:
        return
    print(f"\ncitizens' rounds in {title} (medians over the committee, ms):")
    print("  height  round  first proposal  validation  highest period")
    for h in rows:
        r = rounds[h]
        print(f"  {h:6d} {median([x[0] for x in r]):6d} {median([x[1] for x in r]):15d}"
              f" {median([x[2] for x in r]):11d} {periods.get(h, 0):15d}")
    n = len(rows)
    print(f"  mean: round {sum(median([x[0] for x in rounds[h]]) for h in rows) / n:.0f}, first proposal "
          f"{sum(median([x[1] for x in rounds[h]]) for h in rows) / n:.0f}, validation "
          f"{sum(median([x[2] for x in rounds[h]]) for h in rows) / n:.0f}; "
          f"{sum(1 for h in rows if periods.get(h, 0) > 0)} of {n} rounds needed a period > 0")


show_rounds("the review window", range(lo + 1, hi + 1))
for which in ("before", "after"):
    p = report.get(f"transfers_{which}")
    if p and p["last_height"] >= p["first_height"] > 0:
        show_rounds(f"the transfers {which} the reviews", range(p["first_height"] + 1, p["last_height"] + 1))
show_rounds("idle blocks before the review window (transfer phase left out)",
            [h for h in range(6, lo) if h not in busy])
