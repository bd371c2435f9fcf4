#!/usr/bin/python3
"""Summary of gpt2_throughput.sh's rounds.csv: per round and per variant (p2d1, p1d2m4, pair,
...) the variant / plain ratio of wall-clock
throughput and of samples per CPU-second, and over the rounds their geometric mean with a 95 %
t-interval (computed on the log ratios, so that 2x and 0.5x weigh alike).

Usage: ratio_summary.py rounds.csv [netns line]"""
import csv
import math
import statistics
import sys

T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 19: 2.09}


def interval(ratios):
    """Geometric mean and 95 % t-interval of ratios (None when fewer than 2)."""
    logs = [math.log(r) for r in ratios]
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), None, None
    t = T95.get(len(logs) - 1, 2.0)
    h = t * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def describe(name, ratios):
    g, lo, hi = interval(ratios)
    if lo is None:
        return f"{name}: {g:.3f} (one round, no interval)"
    verdict = ("above 1" if lo > 1 else "below 1" if hi < 1 else "straddles 1")
    return (f"{name} over {len(ratios)} rounds: geometric mean {g:.3f}, 95 % interval "
            f"[{lo:.3f}, {hi:.3f}] ({verdict}), range {min(ratios):.3f}-{max(ratios):.3f}")


def table(by, name):
    """Per round: `name` against plain of the same round; returns the wall and CPU ratios."""
    print(f"| round | plain samples/s | {name} samples/s | {name} / plain (wall) | CPU s/step "
          f"plain / {name} | {name} / plain per CPU-s | cores used plain / {name} | peak RSS MB "
          f"plain / {name} (largest) | load before plain / {name} |")
    print("|---|---|---|---|---|---|---|---|---|")
    wall, cpu = [], []
    for k in sorted(by, key=lambda x: (len(x), x)):
        d = by[k]
        if "plain" not in d or name not in d:
            continue
        a, b = d["plain"], d[name]
        ra = float(b["samples_per_s"]) / float(a["samples_per_s"])
        ca, cb = float(a["cpu_step_s"]), float(b["cpu_step_s"])
        rc = ca / cb if cb > 0 else float("nan")
        wall.append(ra)
        if cb > 0 and ca > 0:
            cpu.append(rc)
        ua, ub = ca / float(a["step_s"]), cb / float(b["step_s"])
        print(f"| {k} | {float(a['samples_per_s']):.3f} | {float(b['samples_per_s']):.3f} | "
              f"{ra:.3f} | {ca:.2f} / {cb:.2f} | {rc:.3f} | {ua:.2f} / {ub:.2f} | "
              f"{float(a['peak_rss_mb']):.0f} / {float(b['peak_rss_mb']):.0f} | "
              f"{a['load_before']} / {b['load_before']} |")
    print()
    return wall, cpu


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    by, names = {}, []
    for r in rows:
        by.setdefault(r["round"], {})[r["run"]] = r
        if r["run"] not in ("plain", "p4d1") and r["run"] not in names:
            names.append(r["run"])
    for name in names:
        wall, cpu = table(by, name)
        if wall:
            print(describe(f"{name} / plain, wall-clock samples/s", wall))
            print()
        if cpu:
            print(describe(f"{name} / plain, samples per CPU-second", cpu))
            print()
    if len(sys.argv) > 2:
        print(f"4 workers in network namespaces (P=4 D=1): {sys.argv[2]}")


if __name__ == "__main__":
    main()
