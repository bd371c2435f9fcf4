"""What logical ranks cost (cluster/interpose/cc/elastic_session.h, docs/cluster.md "Replica
splicing with logical ranks"): cluster-ddp-example, world size 4, run as

  ring     4 processes, one rank each, gloo's ring allreduce (ElasticSession::Start)
  ordered  4 processes, one logical rank each: allgather + sum in rank order
  spliced  2 processes holding logical ranks 0-1 and 2-3 (what the agent starts on 2 slots)

in rounds whose order rotates and reverses (ABBA generalised), so that a load trend on the
shared machine favours none. Per run: the median of rank 0's step times (wall, and the CPU
time of its process) after WARMUP steps; per round the ratio of each configuration to `ring`;
reported: the median ratio over rounds with a distribution-free 95 % interval. Every run's
final parameters are fingerprinted: `ordered` and `spliced` must agree bit for bit (checked).
The gradient traffic per process and step is computed, not measured (loopback counters are
shared with the other engineers' jobs): ring 2 (P - 1) / P x N floats sent, ordered (P - 1) x
ceil(W / P) x N.

  /usr/bin/python3 bench/cluster/logical_ranks_cost.py --rounds 10 --steps 200 --hidden 64
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interpose_overhead import free_port, loadavg, median_interval, REPO  # noqa: E402

WARMUP = 30
CONFIGS = {"ring": (4, False), "ordered": (4, True), "spliced": (2, True)}


def run(binary, processes, logical, args, tmp):
    port = free_port()
    times = os.path.join(tmp, "times")
    out = os.path.join(tmp, "params")
    procs = []
    for rank in range(processes):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(processes), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        for k in ("TESSERA_RUN_DIR", "TESSERA_LOGICAL_WORLD_SIZE", "TESSERA_LOGICAL_RANKS"):
            env.pop(k, None)
        if processes != 4:
            env["TESSERA_LOGICAL_WORLD_SIZE"] = "4"
        cmd = [binary, "--times", times, "--out", out] + args + (["--logical-ranks"] if logical
                                                                 else [])
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(tmp, f"rank{rank}.log"), "w")))
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"a rank failed; see {tmp}/rank*.log")
    wall, cpu = [], []
    with open(times) as f:
        for line in f.readlines()[WARMUP:]:
            w, c = line.split()
            wall.append(float(w))
            cpu.append(float(c))
    with open(out) as f:
        params = re.search(r"params ([0-9a-f]+)", f.read()).group(1)
    return statistics.median(wall), statistics.median(cpu), params


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--step-sleep-ms", type=float, default=0)
    parser.add_argument("--max-minutes", type=float, default=0)
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "release", "bin",
                                                      "cluster-ddp-example"))
    a = parser.parse_args()
    args = ["--steps", str(a.steps), "--hidden", str(a.hidden)]
    if a.step_sleep_ms > 0:
        args += ["--step-sleep-ms", str(a.step_sleep_ms)]
    n = 32 * a.hidden + a.hidden + a.hidden + 1
    print(f"{loadavg()}; {n} parameters; ring sends {2 * 3 / 4 * n:.0f} floats per process and "
          f"step, ordered (P=4) {3 * 1 * n}, spliced (P=2) {1 * 2 * n}")
    names = list(CONFIGS)
    ratios = {k: ([], []) for k in names}
    medians = {k: ([], []) for k in names}
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="logical-ranks-cost-")
    for r in range(a.rounds):
        order = names[r % 3:] + names[:r % 3]
        if r % 2:
            order.reverse()
        got = {}
        for name in order:
            processes, logical = CONFIGS[name]
            got[name] = run(a.bin, processes, logical, args, tmp)
        if got["ordered"][2] != got["spliced"][2]:
            raise SystemExit(f"round {r}: spliced {got['spliced'][2]} != ordered "
                             f"{got['ordered'][2]}")
        for name in names:
            for i in range(2):
                medians[name][i].append(got[name][i])
                ratios[name][i].append(got[name][i] / got["ring"][i])
        print(f"round {r}: " + ", ".join(f"{k} {got[k][0] * 1e3:.3f} ms wall {got[k][1] * 1e3:.3f}"
                                         f" ms cpu" for k in order), flush=True)
        if a.max_minutes and time.time() - start > 60 * a.max_minutes:
            break
    print(f"{loadavg()}; parameters bit-identical, ordered vs spliced, in every round "
          f"({got['ordered'][2]}); ring {got['ring'][2]}")
    for name in names:
        for i, what in enumerate(("wall", "cpu ")):
            line = (f"{name:8s} {what}: median step {statistics.median(medians[name][i]) * 1e3:.3f}"
                    f" ms")
            if name != "ring":
                ci = median_interval(ratios[name][i])
                line += (f"; / ring: {statistics.median(ratios[name][i]):.3f}" +
                         (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " (too few rounds for a CI)"))
            print(line)


if __name__ == "__main__":
    main()
