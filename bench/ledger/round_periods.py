#!/usr/bin/env python3
# Per block of a localnet run kept with info logs (ledger-localnet out/logs, or sweep.sh with
# LEDGER_SWEEP_LOG_LEVEL=info LEDGER_SWEEP_KEEP_LOGS=1): the round (politician 0's commit h-1 ->
# commit h, from its timeline), its length in mean intervals, the members' median first-proposal /
# soft / cert times (a member records its first proposal after validating it), and per BA* period
# when each proposer finished building its proposal (build time in parentheses). A block with a
# period-1 proposal missed period 0's deadline (docs/ledger-engine.md, "2x load, sixth session").
# Usage: bench/ledger/round_periods.py LOGS_DIR [LOGS_DIR ...]
import datetime, glob, os, re, statistics, sys

def ts(s): return datetime.datetime.fromisoformat(s).timestamp()
for logs in sys.argv[1:]:
    cit = open(glob.glob(os.path.join(logs, "citizens-*.log"))[0]).read().splitlines()
    for extra in glob.glob(os.path.join(logs, "citizens-*.log"))[1:]:
        cit += open(extra).read().splitlines()
    tl = {}
    for line in open(os.path.join(logs, "politician-0.timeline.tsv")):
        kind, h, txs, us = line.split()
        tl.setdefault(int(h), {})[kind] = (int(txs), int(us) / 1e6)
    props, rounds = {}, {}
    for l in cit:
        m = re.match(r"(\S+) I ledger-citizen: citizen: proposal for block (\d+) period (\d+) built in (\d+) ms", l)
        if m: props.setdefault(int(m[2]), []).append((int(m[3]), ts(m[1]), int(m[4])))
        m = re.match(r"(\S+) I ledger-citizen: citizen: round for block (\d+) committed after (\d+) ms: first proposal (-?\d+) ms, soft vote (-?\d+) ms, cert vote (-?\d+) ms", l)
        if m: rounds.setdefault(int(m[2]), []).append(tuple(int(m[i]) for i in (3, 4, 5, 6)))
    print(f"== {logs}")
    heights = sorted(h for h in tl if "commit" in tl[h] and h > 1)
    iv = [tl[h]["commit"][1] - tl[h - 1]["commit"][1] for h in heights if h - 1 in tl and "commit" in tl[h - 1]]
    mean = statistics.mean(iv) if iv else 0
    print(f"mean interval {mean:.2f} s")
    for h in heights:
        if h - 1 not in tl or "commit" not in tl[h - 1]: continue
        start = tl[h - 1]["commit"][1]
        r = tl[h]["commit"][1] - start
        ps = props.get(h, [])
        per = {}
        for p, t, b in ps: per.setdefault(p, []).append(f"{t - start:.1f}s(b{b / 1000:.1f})")
        med = lambda i: statistics.median(x[i] for x in rounds.get(h, [(0, 0, 0, 0)])) / 1000
        flag = " SLOW" if r > 1.5 * mean else ""
        print(f"block {h:>2} txs {tl[h]['commit'][0]:>5} round {r:5.1f}s ({r / mean:.2f} int){flag}; "
              f"members' median first proposal {med(1):.1f}s soft {med(2):.1f}s cert {med(3):.1f}s; "
              + "; ".join(f"p{p}: {len(v)} built at {' '.join(v)}" for p, v in sorted(per.items())))
