"""Steady-state overhead of the interposition layer (cluster/interpose), no preemption.

Runs bench/cluster/ddp_step_bench.py as a data-parallel job of --ranks processes (started as
torchrun starts them) without the layer (A, the baseline) and with it (B: the agent's
PYTHONPATH and run directory), interleaved in --pairs pairs whose order alternates ABBA, so that
a load trend on the shared machine does not favour one side. Each run reports every step's
wall time and the CPU time its process used in it (rank 0).

Per pair: ratio = median step of B / median step of A, for wall and for CPU time. The overhead
is the median of the per-pair ratios - 1, with a distribution-free 95 % confidence interval
(order statistics of the ratios: the median's interval from the binomial distribution, no
assumption on the noise). The machine's load average is printed before and after.

  /usr/bin/python3 bench/cluster/interpose_overhead.py --out /tmp/overhead --pairs 200 \
      --steps 100 --max-minutes 12

With --job cc the job is cluster-ddp-example (the libtorch job on the C++ library,
cluster/interpose/cc): A runs it without the scheduler's run directory (its session is then a
plain gloo group: the same gradient allreduce, no barrier, no order check, no progress file),
B with it (what the agent starts). Same pairing and statistics.

  /usr/bin/python3 bench/cluster/interpose_overhead.py --job cc --out /tmp/overhead-cc \
      --pairs 200 --steps 100 --max-minutes 6
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAYER = os.path.join(REPO, "cluster", "interpose", "python")
WARMUP = 30  # steps of each run not timed


def run(ranks, layer, port, out, script_args, layer_dir=LAYER, cc_bin=None):
    env_common = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      WORLD_SIZE=str(ranks), LOCAL_WORLD_SIZE=str(ranks), OMP_NUM_THREADS="1")
    env_common.pop("PYTHONPATH", None)
    job = tempfile.mkdtemp(prefix="interpose-bench-")
    procs = []
    for rank in range(ranks):
        env = dict(env_common, RANK=str(rank), LOCAL_RANK=str(rank))
        if layer:
            run_dir = os.path.join(job, "runs", "1")
            os.makedirs(run_dir, exist_ok=True)
            env.update(TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=job,
                       TESSERA_CHECKPOINT_DIR=os.path.join(job, "ckpt"),
                       TESSERA_JOB_WORKERS=str(ranks))
            if cc_bin is None:
                env.update(PYTHONPATH=layer_dir)
        log = open(f"{out}.rank{rank}.log", "w")  # the ranks' output (and the layer's lines)
        if cc_bin is None:
            command = [sys.executable, os.path.join(HERE, "ddp_step_bench.py"), "--out", out]
        else:  # the same binary; without TESSERA_RUN_DIR its session is a plain gloo group
            command = [cc_bin, "--times", out]
        procs.append(subprocess.Popen(command + script_args, env=env, stdout=log,
                                      stderr=subprocess.STDOUT))
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"a rank failed (layer={layer}); see {out}.rank*.log")
    if layer and not os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer")):
        raise SystemExit("the layer did not install itself")
    wall, cpu = [], []
    with open(out) as f:
        lines = f.readlines()
        if cc_bin is not None:
            lines = lines[WARMUP:]  # ddp_step_bench.py leaves out its warm-up steps itself
        for line in lines:
            w, c = line.split()
            wall.append(float(w))
            cpu.append(float(c))
    return wall, cpu


def median_interval(values, confidence=0.95):
    """A distribution-free confidence interval for the median: the order statistics
    (x_(k), x_(n+1-k)) with the largest k whose binomial coverage is at least `confidence`."""
    x = sorted(values)
    n = len(x)
    best = None
    for k in range(1, n // 2 + 1):
        # P(x_(k) <= median <= x_(n+1-k)) = 1 - 2 P(Binomial(n, 1/2) <= k - 1)
        tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if 1 - 2 * tail >= confidence:
            best = (x[k - 1], x[n - k], 1 - 2 * tail)
    return best  # None when n is too small for the confidence asked


def loadavg():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} CPUs)"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-minutes", type=float, default=0,
                        help="stop after the pair running when this much time has passed (0: none)")
    parser.add_argument("--job", choices=["python", "cc"], default="python",
                        help="python: ddp_step_bench.py with and without the Python layer; cc: "
                             "cluster-ddp-example (the C++ library) with and without the "
                             "scheduler's run directory, i.e. with and without its barrier")
    parser.add_argument("--cc-bin", default=os.path.join(REPO, "build", "release", "bin",
                                                         "cluster-ddp-example"))
    parser.add_argument("--layer-dir", default=LAYER,
                        help="the layer to measure (default: this checkout's), e.g. a variant")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    script_args = ["--steps", str(args.steps), "--hidden", str(args.hidden)]
    cc_bin = None
    if args.job == "cc":
        cc_bin = args.cc_bin
        script_args = ["--steps", str(args.steps), "--hidden", str(args.hidden),
                       "--batch", "64"]
    before = loadavg()
    print(f"before: {before}", flush=True)
    pooled = {False: ([], []), True: ([], [])}
    ratios = {"wall": [], "cpu": []}
    port = 31000 + os.getpid() % 10000
    started = time.monotonic()
    for pair in range(args.pairs):
        if args.max_minutes and time.monotonic() - started > 60 * args.max_minutes:
            print(f"stopping after {pair} pairs (--max-minutes {args.max_minutes:g})", flush=True)
            break
        medians = {}
        # ABBA: A first in even pairs, B first in odd ones.
        for layer in ([False, True] if pair % 2 == 0 else [True, False]):
            port += 1
            wall, cpu = run(args.ranks, layer, port,
                            os.path.join(args.out, f"steps-{pair}-{int(layer)}"), script_args,
                            args.layer_dir, cc_bin)
            pooled[layer][0].extend(wall)
            pooled[layer][1].extend(cpu)
            medians[layer] = (statistics.median(wall), statistics.median(cpu))
        ratios["wall"].append(medians[True][0] / medians[False][0])
        ratios["cpu"].append(medians[True][1] / medians[False][1])
        print(f"pair {pair:2d}: wall A {1e3 * medians[False][0]:7.3f} B {1e3 * medians[True][0]:7.3f}"
              f" ms/step, ratio {ratios['wall'][-1]:.4f}; cpu A {1e3 * medians[False][1]:7.3f}"
              f" B {1e3 * medians[True][1]:7.3f} ms/step, ratio {ratios['cpu'][-1]:.4f}",
              flush=True)
    after = loadavg()
    pairs = len(ratios["wall"])
    job = ("ddp_step_bench.py (Python layer)" if cc_bin is None
           else "cluster-ddp-example (C++ library)")
    lines = [f"{args.ranks} ranks of {job} (hidden {args.hidden}, batch 64 per rank), "
             f"{pairs} ABBA pairs x {args.steps} steps (the first {WARMUP} of each run not "
             f"timed)",
             f"before: {before}", f"after:  {after}"]
    for kind, index in (("wall", 0), ("cpu", 1)):
        a, b = pooled[False][index], pooled[True][index]
        lines.append(f"{kind:4s}: A median step {1e3 * statistics.median(a):.3f} ms (p90 "
                     f"{1e3 * statistics.quantiles(a, n=10)[-1]:.3f}), B median step "
                     f"{1e3 * statistics.median(b):.3f} ms (p90 "
                     f"{1e3 * statistics.quantiles(b, n=10)[-1]:.3f})")
        r = ratios[kind]
        interval = median_interval(r)
        ci = (f"95 % CI [{100 * (interval[0] - 1):+.2f} %, {100 * (interval[1] - 1):+.2f} %] "
              f"(coverage {100 * interval[2]:.1f} %)" if interval else "too few pairs for a CI")
        lines.append(f"{kind:4s}: overhead (median of {len(r)} per-pair ratios) "
                     f"{100 * (statistics.median(r) - 1):+.2f} %, {ci}; ratios from "
                     f"{min(r):.3f} to {max(r):.3f}")
    with open(os.path.join(args.out, "overhead.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
