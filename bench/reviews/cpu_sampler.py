#!/usr/bin/env python3
"""CPU seconds per program of a process tree, for the reviews network bench.

  cpu_sampler.py OUT.jsonl ROOT_PID STOP_FILE

Every 0.5 s reads utime + stime of every descendant of ROOT_PID from /proc (Linux), keeping
the last value seen per process (a process that exits keeps the CPU it had at the last sample,
so up to 0.5 s of its time can be missed), and appends one line to OUT.jsonl:
{"t": unix time, "cpu_s": {"program": seconds so far, ...}}. Stops when STOP_FILE exists or
ROOT_PID exits. The bench reads CPU per program over a time window from it.
"""
import json
import os
import sys
import time

out, root, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tick = os.sysconf("SC_CLK_TCK")
seen = {}  # pid -> (comm, cpu ticks)


def scan():
    parent, info = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        pid = int(name)
        parent[pid] = int(fields[1])
        info[pid] = (comm, int(fields[11]) + int(fields[12]))
    for pid, (comm, ticks) in info.items():
        p, depth = pid, 0
        while p not in (0, 1, root) and depth < 64:
            p, depth = parent.get(p, 0), depth + 1
        if p == root and pid not in (root, os.getpid()):
            seen[pid] = (comm, ticks)


with open(out, "w") as f:
    while not os.path.exists(stop) and os.path.exists(f"/proc/{root}"):
        scan()
        totals = {}
        for comm, ticks in seen.values():
            totals[comm] = totals.get(comm, 0.0) + ticks / tick
        f.write(json.dumps({"t": time.time(), "cpu_s": totals}, sort_keys=True) + "\n")
        f.flush()
        time.sleep(0.5)
