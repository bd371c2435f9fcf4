"""What a spliced step costs for an unmodified PyTorch DDP script (the Python layer's logical
ranks, cluster/interpose/python/tessera_interpose/logical.py; docs/cluster.md "Logical ranks
for PyTorch jobs"). bench/cluster/ddp_step_bench.py (an MLP, gloo, a DistributedSampler, SGD
with momentum; no dropout) at world size W = 4, run as

  plain     4 processes without the layer, as torchrun starts them (gloo's ring allreduce)
  layer     4 processes under the layer with TESSERA_LOGICAL_WORLD_SIZE=4: one logical rank
            each (a job submitted with --logical-ranks, on 4 slots)
  spliced2  2 processes under the layer holding logical ranks 0-1 and 2-3 (the same job on 2
            slots: the loop body runs once per rank, the gradients of each rank are
            allreduced on gloo groups of 4 ranks)
  spliced1  1 process holding all 4 logical ranks (--configs adds it)

in rounds whose order rotates and reverses (ABBA generalised), so that a load trend on the
shared machine favours none. A spliced process runs k = W / P passes of the loop body per step;
the bench adds k consecutive passes up to one step. Per run, after --warmup-steps steps:

  step wall   the median of process 0's step times (every process waits for the others in the
              step's allreduce, so this is the job's step time);
  job CPU     the sum over the job's processes of each one's median CPU time per step (all
              its threads): the work the job spends on one step of W ranks.

Per round every configuration's figures are divided by plain's; reported: the median ratio
over rounds with a distribution-free 95 % interval. Every run's final parameters are
fingerprinted (SHA-256); all configurations must agree bit for bit (checked: the layer's
claim that a spliced run is the plain run's arithmetic).

  nice -n 10 /usr/bin/python3 bench/cluster/logical_ranks_py_cost.py --rounds 8 --steps 120

On a machine with C cores, plain runs W processes on C cores; spliced2 is what the job runs on
2 slots. With one core per slot (C = P) a spliced step ideally takes k = W / P times a plain
step on W slots: each slot computes k ranks' forward and backward in turn.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interpose_overhead import LAYER, free_port, loadavg, median_interval  # noqa: E402

WORLD = 4
# name -> (processes, under the layer)
CONFIGS = {"plain": (4, False), "layer": (4, True), "spliced2": (2, True), "spliced1": (1, True)}


def step_times(path, k):
    """(wall, cpu) per step from a file of per-pass "wall cpu" lines: k passes make a step."""
    with open(path) as f:
        passes = [tuple(map(float, line.split()[:2])) for line in f]
    steps = len(passes) // k
    return ([sum(w for w, _ in passes[s * k:(s + 1) * k]) for s in range(steps)],
            [sum(c for _, c in passes[s * k:(s + 1) * k]) for s in range(steps)])


def run(processes, layer, args, tmp, name):
    k = WORLD // processes
    port = free_port()
    out = os.path.join(tmp, f"{name}.times")
    job = tempfile.mkdtemp(prefix="job-", dir=tmp)
    procs = []
    for rank in range(processes):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(processes),
                   LOCAL_WORLD_SIZE=str(processes), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        for key in list(env):
            if key.startswith("TESSERA_") or key == "PYTHONPATH":
                del env[key]
        if layer:
            run_dir = os.path.join(job, "runs", "1")
            os.makedirs(run_dir, exist_ok=True)
            env.update(PYTHONPATH=LAYER, TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=job,
                       TESSERA_RUN="1", TESSERA_JOB_WORKERS=str(processes),
                       TESSERA_CHECKPOINT_DIR=os.path.join(job, "ckpt"),
                       TESSERA_LOGICAL_WORLD_SIZE=str(WORLD))
        command = [sys.executable, os.path.join(HERE, "ddp_step_bench.py"), "--out", out,
                   "--steps", str(args.steps), "--hidden", str(args.hidden),
                   "--warmup", str(args.warmup_steps * k)]
        with open(os.path.join(tmp, f"{name}-rank{rank}.log"), "w") as log:
            procs.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"{name}: a process failed; see {tmp}/{name}-rank*.log")
    if layer and not os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer")):
        raise SystemExit(f"{name}: the layer did not install itself")
    wall, cpu0 = step_times(out, k)
    job_cpu = statistics.median(cpu0)
    for rank in range(1, processes):
        job_cpu += statistics.median(step_times(f"{out}.rank{rank}", k)[1])
    with open(out + ".params") as f:
        params = f.read().strip()
    return statistics.median(wall), job_cpu, params, len(wall)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=120, help="steps of world size 4 per run")
    parser.add_argument("--warmup-steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--configs", default="plain,layer,spliced2",
                        help="comma-separated, plain first, of " + ",".join(CONFIGS))
    parser.add_argument("--max-minutes", type=float, default=0)
    a = parser.parse_args()
    names = a.configs.split(",")
    if names[0] != "plain" or any(n not in CONFIGS for n in names) or len(set(names)) != len(names):
        raise SystemExit(f"--configs: plain first, then distinct ones of {list(CONFIGS)}")
    before = loadavg()
    print(f"before: {before}", flush=True)
    medians = {n: ([], []) for n in names}
    ratios = {n: ([], []) for n in names}
    tmp = tempfile.mkdtemp(prefix="logical-ranks-py-cost-")
    started = time.monotonic()
    rounds = 0
    params = None
    for r in range(a.rounds):
        if a.max_minutes and time.monotonic() - started > 60 * a.max_minutes:
            print(f"stopping after {r} rounds (--max-minutes {a.max_minutes:g})", flush=True)
            break
        order = names[r % len(names):] + names[:r % len(names)]
        if (r // len(names)) % 2:
            order.reverse()
        got = {}
        for name in order:
            processes, layer = CONFIGS[name]
            got[name] = run(processes, layer, a, tmp, name)
        hashes = {got[n][2] for n in names}
        if len(hashes) != 1:
            raise SystemExit(f"round {r}: parameters differ: " +
                             ", ".join(f"{n} {got[n][2][:16]}" for n in names))
        params = got[names[0]][2]
        for name in names:
            for i in range(2):
                medians[name][i].append(got[name][i])
                ratios[name][i].append(got[name][i] / got["plain"][i])
        rounds += 1
        print(f"round {r} ({','.join(order)}): " +
              ", ".join(f"{n} wall {got[n][0] * 1e3:.2f} ms job cpu {got[n][1] * 1e3:.2f} ms"
                        for n in names), flush=True)
    lines = [f"W = {WORLD} ranks of ddp_step_bench.py (hidden {a.hidden}, batch 64 per rank), "
             f"{rounds} rounds of {','.join(names)} x {a.steps} steps (the first "
             f"{a.warmup_steps} not timed); {os.cpu_count()} CPUs",
             f"before: {before}", f"after:  {loadavg()}",
             f"final parameters bit-identical in every run of every configuration "
             f"(SHA-256 {params[:16]}...)" if params else "no round finished"]
    for name in names:
        processes, layer = CONFIGS[name]
        for i, what in enumerate(("step wall  ", "job cpu/step")):
            line = (f"{name:8s} ({processes} process(es), {WORLD // processes} rank(s) each) "
                    f"{what}: {statistics.median(medians[name][i]) * 1e3:8.3f} ms")
            if name != "plain":
                ci = median_interval(ratios[name][i])
                line += (f"; / plain {statistics.median(ratios[name][i]):.3f}" +
                         (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " (too few rounds for a CI)"))
            lines.append(line)
    with open(os.path.join(tmp, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"(runs' files in {tmp})")


if __name__ == "__main__":
    main()
