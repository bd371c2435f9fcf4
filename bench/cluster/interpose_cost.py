"""The interposition layer's own per-step cost, measured directly (no preemption), before and
after a change of the layer, in one run.

An end-to-end A/B of a training job's step time (interpose_overhead.py) needs a quiet machine
to resolve a few percent: on the shared 2-core build machine run-to-run noise is 20-50 %. This
bench measures what the layer adds to a step instead, in isolation, as CPU time of rank 0's
process (all its threads, gloo's and the layer's order watch included), which other
processes' load disturbs far less than wall time. Every configuration runs the same loop of
--steps iterations over a DataLoader calling a trivial Optimizer.step (one scalar parameter):

  null       without the layer: the baseline, the work the layer wraps;
  before     the layer as it was at --before (a git revision, exported into a temporary
             directory; default: the commit before barrier.py was added);
  after      this checkout's layer (its per-step work: DataLoader and step wrappers, the
             order flag, the progress report, the barrier's exchange; ranks on one host, so
             the needs go through the shared /dev/shm words);
  after-tcp  the same with every rank given its own host key (TESSERA_INTERPOSE_HOST): the
             cross-host path, one byte per step and pair of ranks over TCP;
  gloo       null plus one asynchronous gloo allreduce of one int64 per step on a second
             group, waited for at the next step (what the barrier would cost as a gloo
             collective; not run unless named in --configs).

With --collective every configuration's loop also all-reduces one float per step on the job's
group, as DDP's gradient allreduce does: the ranks are then in step as in a data-parallel
job, and the barrier's read never waits. Without it nothing but the barrier keeps the ranks
together, so its read waits for the slower rank (in `before` a blocking recv, in `after` a
yield and short sleeps), which a data-parallel job never does.

Runs are interleaved (rotated, reversed every other repetition) --reps times; the medians of
rank 0's CPU per step are taken. For a job whose step takes T the layer's share of the step
is (config - null) / T. Between processes at a load of 5-10 on 2 cores those medians move by
tens of microseconds from run to run, as much as what is measured; so:

--toggle N measures in process: every run alternates blocks of N steps with the layer's step
part on and off (Layer.bypass, which both versions have: no order check, no exchange, no
progress report; the DataLoader wrapper stays on), off, on, on, off, ..., the same steps on
every rank, and takes CPU per step on minus off for each pair of adjacent blocks; the
median of all pairs with a distribution-free 95 % interval is reported per configuration
(for null, which has no layer, it is an A/A control of the method). Both sides of a pair
share the process, its heap and, within milliseconds, the machine's load. (Without
--collective the ranks drift apart in the off blocks and the first steps of an on block wait
for the slower one; that waiting is counted to the layer.) The process-level figures are then
of half-on runs.

  /usr/bin/python3 bench/cluster/interpose_cost.py --reps 5 --steps 3000 --toggle 50
  /usr/bin/python3 bench/cluster/interpose_cost.py --reps 5 --steps 3000 --toggle 50 --collective
"""
import argparse
import ast
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interpose_overhead import median_interval  # noqa: E402
REPO = os.path.dirname(os.path.dirname(HERE))
LAYER = os.path.join(REPO, "cluster", "interpose", "python")

RANK_SCRIPT = r"""
import os, sys, time, torch, torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
steps, out = int(sys.argv[1]), sys.argv[2]
gloo, collective, toggle = sys.argv[3] == "gloo", sys.argv[4] == "1", int(sys.argv[5])
layer = sys.modules.get("tessera_interpose.layer")
installed = layer._layer if layer is not None else None
blocks, block_cpu, on = [], None, True  # --toggle: (layer on?, CPU) per block of steps
torch.set_num_threads(1)
dist.init_process_group("gloo")
meta = dist.new_group(backend="gloo") if gloo else None
work = None
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.0)
grad = torch.zeros(1)
loader = DataLoader(TensorDataset(torch.zeros(steps + 50, 1)), batch_size=1)
dist.barrier()
for i, (x,) in enumerate(loader):
    if i == 50:  # warmed up
        os.path.exists("/tessera-cost-begin")  # a mark for --syscalls
        cpu, wall = time.process_time(), time.perf_counter()
    if toggle and i >= 50 and (i - 50) % toggle == 0:  # blocks off, on, on, off, off, on, ...
        now = time.process_time()
        if block_cpu is not None:
            blocks.append((on, now - block_cpu))
        on = (i - 50) // toggle % 4 in (1, 2)
        if installed is not None:
            installed.bypass = not on  # the same steps on every rank (see Layer.bypass)
        block_cpu = now
    if collective:
        dist.all_reduce(grad)
    if meta is not None:
        if work is not None:
            work.wait()
        work = dist.all_reduce(torch.zeros(1, dtype=torch.int64), group=meta, async_op=True)
    opt.step()
now = time.process_time()
cpu, wall = now - cpu, time.perf_counter() - wall
os.path.exists("/tessera-cost-end")
if toggle:
    blocks.append((on, now - block_cpu))
dist.barrier()
layer = sys.modules.get("tessera_interpose.layer")
exchange = installed.meta if installed is not None else None
waits = getattr(exchange, "waits", -1) if exchange is not None else -1  # -1: not counted
if dist.get_rank() == 0:
    # Per pair of adjacent blocks (off, on) or (on, off): CPU per step with minus without.
    pairs = [(b[1] - a[1]) * (1 if b[0] else -1) / toggle
             for a, b in zip(blocks[0::2], blocks[1::2])]
    open(out, "w").write(f"{cpu / steps} {wall / steps} {waits}\n{pairs}\n")
dist.destroy_process_group()
"""

CONFIGS = ("null", "before", "after", "after-tcp", "gloo")


def export_layer(rev):
    """The layer's Python package at git revision `rev`, in a temporary directory."""
    rev = rev or default_before()
    directory = tempfile.mkdtemp(prefix="interpose-cost-before-")
    archive = subprocess.run(["git", "-C", REPO, "archive", rev, "cluster/interpose/python"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", directory], input=archive, check=True)
    return rev, os.path.join(directory, "cluster", "interpose", "python")


def default_before():
    """The commit before barrier.py was added; HEAD while it is not committed."""
    added = subprocess.run(
        ["git", "-C", REPO, "log", "--diff-filter=A", "--format=%H", "--",
         "cluster/interpose/python/tessera_interpose/barrier.py"],
        check=True, capture_output=True, text=True).stdout.split()
    rev = f"{added[-1]}^" if added else "HEAD"
    return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", rev], check=True,
                          capture_output=True, text=True).stdout.strip()


def run(config, steps, port, out, ranks, collective, before_dir, toggle, strace=None):
    job = tempfile.mkdtemp(prefix="interpose-cost-")
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
               WORLD_SIZE=str(ranks), LOCAL_WORLD_SIZE=str(ranks), OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    env.pop("TESSERA_INTERPOSE_HOST", None)
    layered = config in ("before", "after", "after-tcp")
    if layered:
        run_dir = os.path.join(job, "runs", "1")
        os.makedirs(run_dir, exist_ok=True)
        env.update(PYTHONPATH=before_dir if config == "before" else LAYER,
                   TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=job,
                   TESSERA_CHECKPOINT_DIR=os.path.join(job, "ckpt"),
                   TESSERA_JOB_WORKERS=str(ranks))
    procs = []
    for r in range(ranks):
        rank_env = dict(env, RANK=str(r), LOCAL_RANK=str(r))
        if config == "after-tcp":
            rank_env["TESSERA_INTERPOSE_HOST"] = f"bench-host-{r}"
        # -ff: a file per thread, so that the training thread's calls can be told apart
        # from gloo's and the c10d store's threads'.
        prefix = ["strace", "-f", "-ff", "-o", f"{strace}-rank{r}"] if strace else []
        procs.append(subprocess.Popen(
            prefix + [sys.executable, "-c", RANK_SCRIPT, str(steps), out, config,
             "1" if collective else "0", str(toggle)],
            env=rank_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"{config}: a rank failed: {err.decode()[-2000:]}")
    if layered and not os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer")):
        raise SystemExit("the layer did not install itself")
    with open(out) as f:
        cpu, wall, waits = (float(v) for v in f.readline().split())
        pairs = ast.literal_eval(f.readline())
    return cpu, wall, int(waits), pairs


def strace_counts(prefix):
    """{syscall: calls} of the training thread (the one that ran execve) of a process traced
    with `strace -f -ff -o prefix`, between the marks around the timed steps."""
    directory, name = os.path.split(prefix)
    for entry in os.listdir(directory):
        if not entry.startswith(name + "."):
            continue
        with open(os.path.join(directory, entry)) as f:
            lines = f.read().splitlines()
        if not lines or not lines[0].startswith("execve("):
            continue
        begin = next(i for i, line in enumerate(lines) if "/tessera-cost-begin" in line)
        end = next(i for i, line in enumerate(lines) if "/tessera-cost-end" in line)
        counts = {}
        for line in lines[begin + 1:end]:
            call = re.match(r"(\w+)\(", line)
            if call:
                counts[call.group(1)] = counts.get(call.group(1), 0) + 1
        return counts
    raise SystemExit(f"no trace of the training thread under {prefix}")


def syscalls_main(args, configs, before_dir):
    """System calls per step of rank 0's training thread between the marks around the timed
    steps, every rank under strace (so that they slow down alike)."""
    out = tempfile.mkdtemp(prefix="interpose-cost-strace-")
    port = 33000 + os.getpid() % 10000
    print(f"system calls per step of rank 0's training thread (strace -f -ff, {args.steps} "
          f"steps, {args.ranks} ranks{', a gloo allreduce per step' if args.collective else ''}):")
    for config in configs:
        port += 1
        path = os.path.join(out, f"{config}.strace")
        run(config, args.steps, port, os.path.join(out, config), args.ranks, args.collective,
            before_dir, 0, strace=path)
        per_step = {k: v / args.steps for k, v in strace_counts(f"{path}-rank0").items()}
        shown = sorted(((v, k) for k, v in per_step.items() if v >= 0.005), reverse=True)
        print(f"  {config:9s}: {sum(per_step.values()):5.2f} per step ("
              + (", ".join(f"{k} {v:.2f}" for v, k in shown) or "none") + ")", flush=True)


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--configs", default="null,before,after,after-tcp",
                        help="comma-separated, of " + ", ".join(CONFIGS) + "; null first")
    parser.add_argument("--before", default=None,
                        help="git revision of the layer for `before` (default: the commit "
                             "before barrier.py was added)")
    parser.add_argument("--collective", action="store_true",
                        help="a gloo allreduce per step in every configuration (as DDP)")
    parser.add_argument("--toggle", type=int, default=0,
                        help="in-process mode: blocks of this many steps with the layer's step "
                             "part on and off (Layer.bypass) in every run, see above")
    parser.add_argument("--syscalls", action="store_true",
                        help="count the system calls per step of rank 0's training thread "
                             "under strace instead")
    parser.add_argument("--step-ms", type=float, action="append",
                        help="step times to project the overhead for (default 5, 10, 50)")
    args = parser.parse_args()
    configs = args.configs.split(",")
    if args.toggle and args.steps % (2 * args.toggle):
        raise SystemExit("--steps must be a multiple of 2 * --toggle")
    if configs[0] != "null" or any(c not in CONFIGS for c in configs):
        raise SystemExit(f"--configs: null first, then of {CONFIGS}")
    before_rev, before_dir = export_layer(args.before) if "before" in configs else (None, None)
    if args.syscalls:
        if before_rev:
            print(f"`before` is the layer at {before_rev}")
        return syscalls_main(args, configs, before_dir)
    out = tempfile.mkdtemp(prefix="interpose-cost-out-")
    print(f"before: {uptime()} ({os.cpu_count()} CPUs)", flush=True)
    if before_rev:
        print(f"`before` is the layer at {before_rev}", flush=True)
    cpu = {c: [] for c in configs}
    wall = {c: [] for c in configs}
    toggled = {c: [] for c in configs}  # --toggle: per pair of blocks, on minus off
    port = 33000 + os.getpid() % 10000
    for rep in range(args.reps):
        order = configs[rep % len(configs):] + configs[:rep % len(configs)]
        if rep % 2 == 1:
            order = order[::-1]
        for config in order:
            port += 1
            c, w, waits, pairs = run(config, args.steps, port,
                                     os.path.join(out, f"{config}-{rep}"), args.ranks,
                                     args.collective, before_dir, args.toggle)
            toggled[config].extend(pairs)
            cpu[config].append(c)
            wall[config].append(w)
            waited = f", {waits} of {args.steps + 50} calls waited" if waits >= 0 else ""
            print(f"rep {rep} {config:9s}: {1e6 * c:8.1f} us CPU, {1e6 * w:8.1f} us wall per "
                  f"step{waited}", flush=True)
    print(f"after:  {uptime()}")
    med = {c: statistics.median(v) for c, v in cpu.items()}
    print(f"median CPU per step of rank 0 ({args.reps} interleaved runs of {args.steps} steps, "
          f"{args.ranks} ranks{', a gloo allreduce per step' if args.collective else ''}): "
          + ", ".join(f"{c} {1e6 * med[c]:.1f} us" for c in configs))
    for c in configs[1:]:
        extra = med[c] - med["null"]
        spread = [1e6 * (v - med["null"]) for v in cpu[c]]
        print(f"  {c:9s} - null: {1e6 * extra:6.1f} us per step (runs: "
              f"{min(spread):.1f} .. {max(spread):.1f} us); "
              + ", ".join(f"{100 * extra / (ms / 1e3):.2f} % of a {ms:g} ms step"
                          for ms in (args.step_ms or [5, 10, 50])))
    if args.toggle:
        print(f"in process (--toggle {args.toggle}: blocks with the layer's step part on and "
              f"off, same process; null: an A/A control): CPU per step, on minus off, median of "
              f"the pairs of blocks with a 95 % interval")
        for c in configs:
            pairs = toggled[c]
            interval = median_interval(pairs)
            bounds = (f"[{1e6 * interval[0]:.1f}, {1e6 * interval[1]:.1f}]" if interval
                      else "(too few pairs)")
            print(f"  {c:9s}: {1e6 * statistics.median(pairs):6.1f} us {bounds} "
                  f"({len(pairs)} pairs)")


if __name__ == "__main__":
    main()
