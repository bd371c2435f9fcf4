"""The interposition layer's own per-step cost, measured directly (no preemption).

An end-to-end A/B of a training job's step time (interpose_overhead.py) needs a quiet machine
to resolve a few percent: on the shared 2-core build machine run-to-run noise is 20-50 %. This
bench measures what the layer adds to a step instead, in isolation, as CPU time of the rank
processes (all their threads, gloo's included), which other processes' load disturbs far
less than wall time:

  base      a loop of --steps iterations over a DataLoader calling a trivial Optimizer.step
            (one scalar parameter): the work the layer wraps, without the layer;
  layer     the same with the layer: its per-step work (DataLoader and step wrappers, the
            order stat, the progress report) and the barrier's meta-allreduce at every step
            (one byte to and from every other rank on the layer's own connections);
  gloo      base plus what the barrier would cost as a gloo collective: one asynchronous
            allreduce of one int64 per step on a second gloo group, waited for at the next
            step (the layer's design until 2026-12-02, there every ~100 ms).

Both ranks run each configuration; runs are interleaved (ABC, CBA, ...) --reps times and the
medians of rank 0's CPU per iteration are taken. For a job whose step takes T the layer's
share of the step is (layer - base) / T, and a gloo meta-allreduce's (gloo - base) / T.

  /usr/bin/python3 bench/cluster/interpose_cost.py --reps 5
"""
import argparse
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
steps, out, gloo = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "gloo"
torch.set_num_threads(1)
dist.init_process_group("gloo")
meta = dist.new_group(backend="gloo") if gloo else None
work = None
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.0)
loader = DataLoader(TensorDataset(torch.zeros(steps + 50, 1)), batch_size=1)
dist.barrier()
for i, (x,) in enumerate(loader):
    if i == 50:  # warmed up
        cpu, wall = time.process_time(), time.perf_counter()
    if meta is not None:
        if work is not None:
            work.wait()
        work = dist.all_reduce(torch.zeros(1, dtype=torch.int64), group=meta, async_op=True)
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
    if config == "layer":
        run_dir = os.path.join(job, "runs", "1")
        os.makedirs(run_dir, exist_ok=True)
        env.update(PYTHONPATH=LAYER, TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=job,
                   TESSERA_CHECKPOINT_DIR=os.path.join(job, "ckpt"), TESSERA_JOB_WORKERS="2")
    procs = [subprocess.Popen([sys.executable, "-c", RANK_SCRIPT, str(steps), out, config],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for r in range(2)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"{config}: a rank failed: {err.decode()[-2000:]}")
    if config == "layer" and not os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer")):
        raise SystemExit("the layer did not install itself")
    with open(out) as f:
        cpu, wall = (float(v) for v in f.read().split())
    return cpu, wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--step-ms", type=float, action="append",
                        help="step times to project the overhead for (default 5, 10, 50, 200)")
    args = parser.parse_args()
    out = tempfile.mkdtemp(prefix="interpose-cost-out-")
    load = os.getloadavg()
    print(f"before: load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} "
          f"({os.cpu_count()} CPUs)", flush=True)
    configs = ["base", "layer", "gloo"]
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
    layer = med["layer"] - med["base"]
    gloo = med["gloo"] - med["base"]
    print(f"after:  load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}")
    print(f"median CPU per step: base {1e6 * med['base']:.1f} us, layer "
          f"{1e6 * med['layer']:.1f} us, gloo {1e6 * med['gloo']:.1f} us "
          f"({args.reps} interleaved runs of {args.steps} steps, 2 ranks)")
    print(f"per step: the layer (barrier every step) {1e6 * layer:.1f} us, a gloo "
          f"meta-allreduce {1e6 * gloo:.1f} us")
    for step_ms in args.step_ms or [5, 10, 50, 200]:
        t = step_ms / 1e3
        print(f"step {step_ms:g} ms: layer {100 * layer / t:.2f} % of the step "
              f"(a gloo meta-allreduce every step: {100 * gloo / t:.2f} %)")

if __name__ == "__main__":
    main()
