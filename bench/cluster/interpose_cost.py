"""The interposition layer's own per-step cost, measured directly (no preemption).

An end-to-end A/B of a training job's step time (interpose_overhead.py) needs a quiet machine
to resolve a few percent: on the shared 2-core build machine run-to-run noise is 20-50 %. This
bench measures what the layer adds to a step instead, in isolation, as CPU time of the rank
processes (all their threads, gloo's included), which other processes' load disturbs far
less than wall time:

  base      a loop of --steps iterations over a DataLoader calling a trivial Optimizer.step
            (one scalar parameter): the work the layer wraps, without the layer;
  wrappers  the same with the layer, barrier steps ~never (TESSERA_BARRIER_INTERVAL_MS=1e9):
            the layer's fixed per-step work (DataLoader and step wrappers, the order stat,
            the progress report);
  every     the same with a barrier step at every step (TESSERA_BARRIER_INTERVAL_MS=0): adds
            one asynchronous two-integer allreduce per step (issue + wait + gloo's threads).

Both ranks run each configuration; runs are interleaved (ABC, CBA, ...) --reps times and the
medians of rank 0's CPU per iteration are taken. Then

  fixed = wrappers - base            per step
  meta  = every - wrappers           per barrier step (one meta-allreduce)

and for a job whose step takes T, with barrier steps every ceil(interval / T) steps
(interval = 100 ms by default), the layer's share of the step is

  (fixed + meta / ceil(interval / T)) / T.

  /usr/bin/python3 bench/cluster/interpose_cost.py --reps 5 --step-ms 10
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

RANK_SCRIPT = r"""
import sys, time, torch, torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
steps, out = int(sys.argv[1]), sys.argv[2]
torch.set_num_threads(1)
dist.init_process_group("gloo")
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.0)
loader = DataLoader(TensorDataset(torch.zeros(steps + 50, 1)), batch_size=1)
dist.barrier()
for i, (x,) in enumerate(loader):
    if i == 50:  # warmed up
        cpu, wall = time.process_time(), time.perf_counter()
    opt.step()
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
dist.barrier()
if dist.get_rank() == 0:
    open(out, "w").write(f"{cpu / steps} {wall / steps}\n")
dist.destroy_process_group()
"""


def run(config, steps, port, out):
    job = tempfile.mkdtemp(prefix="interpose-cost-")
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2",
               LOCAL_WORLD_SIZE="2", OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if config != "base":
        run_dir = os.path.join(job, "runs", "1")
        os.makedirs(run_dir, exist_ok=True)
        env.update(PYTHONPATH=LAYER, TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=job,
                   TESSERA_CHECKPOINT_DIR=os.path.join(job, "ckpt"), TESSERA_JOB_WORKERS="2",
                   TESSERA_BARRIER_INTERVAL_MS="1e9" if config == "wrappers" else "0")
    procs = [subprocess.Popen([sys.executable, "-c", RANK_SCRIPT, str(steps), out],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for r in range(2)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"{config}: a rank failed: {err.decode()[-2000:]}")
    if config != "base" and not os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer")):
        raise SystemExit("the layer did not install itself")
    with open(out) as f:
        cpu, wall = (float(v) for v in f.read().split())
    return cpu, wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--interval-ms", type=float, default=100.0,
                        help="the layer's TESSERA_BARRIER_INTERVAL_MS for the projection")
    parser.add_argument("--step-ms", type=float, action="append",
                        help="step times to project the overhead for (default 5, 10, 50, 200)")
    args = parser.parse_args()
    out = tempfile.mkdtemp(prefix="interpose-cost-out-")
    load = os.getloadavg()
    print(f"before: load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} "
          f"({os.cpu_count()} CPUs)", flush=True)
    configs = ["base", "wrappers", "every"]
    cpu = {c: [] for c in configs}
    port = 33000 + os.getpid() % 10000
    for rep in range(args.reps):
        for config in (configs if rep % 2 == 0 else configs[::-1]):
            port += 1
            c, w = run(config, args.steps, port, os.path.join(out, f"{config}-{rep}"))
            cpu[config].append(c)
            print(f"rep {rep} {config:8s}: {1e6 * c:8.1f} us CPU, {1e6 * w:8.1f} us wall per "
                  f"step", flush=True)
    load = os.getloadavg()
    med = {c: statistics.median(v) for c, v in cpu.items()}
    fixed = med["wrappers"] - med["base"]
    meta = med["every"] - med["wrappers"]
    print(f"after:  load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}")
    print(f"median CPU per step: base {1e6 * med['base']:.1f} us, wrappers "
          f"{1e6 * med['wrappers']:.1f} us, every {1e6 * med['every']:.1f} us "
          f"({args.reps} interleaved runs of {args.steps} steps, 2 ranks)")
    print(f"layer: fixed {1e6 * fixed:.1f} us per step, meta-allreduce {1e6 * meta:.1f} us per "
          f"barrier step")
    for step_ms in args.step_ms or [5, 10, 50, 200]:
        t = step_ms / 1e3
        period = max(1, math.ceil(args.interval_ms / step_ms)) if args.interval_ms > 0 else 1
        share = (fixed + meta / period) / t
        every = (fixed + meta) / t
        print(f"step {step_ms:g} ms: barrier every {period} step(s), layer {100 * share:.2f} % "
              f"of the step (a barrier every step: {100 * every:.2f} %)")


if __name__ == "__main__":
    main()
