"""Steady-state overhead of the interposition layer, end to end, with both jobs alive.

interpose_overhead.py runs the script without (A) and with (B) the layer one after the other
and compares whole runs. On the shared 2-core machine a run's step time moves with what else
runs during its few seconds: at load 5-8 its per-pair ratios spread with a standard deviation
of 12-18 % (log ratio, median step; 22 pairs, 2026-12-03 09:58-10:03 UTC), so bounding a 1 %
effect within 3 % would take hundreds of pairs.

Here the two jobs run side by side instead, each as torchrun would start it (2 ranks over
gloo, ddp_step_bench.py unchanged but for its turn gate): A without the layer, B with it (the
agent's PYTHONPATH and run directory). They take turns in blocks of --block steps, in the
order A B B A A B B A ... (B A A B ... in every other launch; ddp_step_bench.py --gate: a
job waiting for its turn blocks in read(), outside its timed steps), so that neighbouring
blocks of A and B see the same machine within a few tenths of a second. Per pair of
neighbouring blocks: ratio = median step of B's block / median step of A's block. That
removes the load's drift; what is left is (a) the noise between blocks and (b) what differs
between the two launches' processes (memory layout, which core each rank got), which blocks
of one launch share. So the bench starts --launches fresh pairs of jobs and takes as the
launch's figure the median of its block-pair ratios; the decision is on those per-launch
figures, which are independent:

  - the distribution-free one-sided 95 % upper bound on the median launch ratio (as in
    interpose_overhead.py: the smallest order statistic with binomial coverage >= 95 %);
  - beside it, a paired t bound on the mean log launch ratio, and (not independent across
    launches, printed as a check only) the bound from every block pair pooled.

HOLDS when the first bound is <= 1 + --limit / 100. Wall time per step is rank 0's (what the
issue's "step time" is); CPU per step is rank 0's process CPU clock (all its threads). With
--job cc the job is cluster-ddp-example (the libtorch job on the C++ library): A without the
scheduler's run directory (a plain gloo group: the same allreduce, no barrier), B with it.

  /usr/bin/python3 bench/cluster/interleaved_overhead.py --out /tmp/interleaved --pin \\
      --launches 100 --blocks 24 --block 10 --max-minutes 8
"""
import argparse
import errno
import math
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interpose_overhead import (  # noqa: E402
    LAYER, add_job_options, free_port, loadavg, upper_bounds)

WARMUP = 30
GATE_TIMEOUT_S = 120  # a rank not arriving for this long has hung: the launch fails


class Job:
    """One job of --ranks processes whose timed steps run when the controller says so."""

    def __init__(self, name, ranks, layer, steps, block, hidden, work, pin, cc_bin=None):
        self.name = name
        self.gate = os.path.join(work, f"gate-{name}")
        os.makedirs(self.gate)
        self.out = os.path.join(work, f"steps-{name}")
        port = free_port()
        env_common = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                          WORLD_SIZE=str(ranks), LOCAL_WORLD_SIZE=str(ranks),
                          OMP_NUM_THREADS="1")
        for key in list(env_common):
            if key.startswith("TESSERA_") or key == "PYTHONPATH":
                del env_common[key]
        self.arrived, self.go, self.procs = [], [], []
        for rank in range(ranks):
            os.mkfifo(os.path.join(self.gate, f"arrived-{rank}"))
            os.mkfifo(os.path.join(self.gate, f"go-{rank}"))
        self.run_dir = None
        if layer:
            job_dir = os.path.join(work, f"job-{name}")
            self.run_dir = os.path.join(job_dir, "runs", "1")
            os.makedirs(self.run_dir)
            env_common.update(TESSERA_RUN_DIR=self.run_dir, TESSERA_JOB_DIR=job_dir,
                              TESSERA_CHECKPOINT_DIR=os.path.join(job_dir, "ckpt"),
                              TESSERA_JOB_WORKERS=str(ranks))
            if cc_bin is None:
                env_common.update(PYTHONPATH=LAYER)
        self.cc = cc_bin is not None
        for rank in range(ranks):
            env = dict(env_common, RANK=str(rank), LOCAL_RANK=str(rank))
            if cc_bin is None:
                command = [sys.executable, os.path.join(HERE, "ddp_step_bench.py"), "--out",
                           self.out]
            else:  # without TESSERA_RUN_DIR its session is a plain gloo group
                command = [cc_bin, "--times", self.out, "--batch", "64"]
            command += ["--steps", str(steps), "--warmup", str(WARMUP), "--hidden", str(hidden),
                        "--gate", self.gate, "--block", str(block)]
            if pin:
                command = ["taskset", "-c", str(rank % os.cpu_count())] + command
            log = open(os.path.join(work, f"{name}.rank{rank}.log"), "w")
            self.procs.append(subprocess.Popen(command, env=env, stdout=log,
                                               stderr=subprocess.STDOUT))
            log.close()
        for rank in range(ranks):  # the same order as the process opens them
            self.arrived.append(os.open(os.path.join(self.gate, f"arrived-{rank}"),
                                        os.O_RDONLY | os.O_NONBLOCK))
            self.go.append(self._open_go(rank))

    def _open_go(self, rank):
        path = os.path.join(self.gate, f"go-{rank}")
        deadline = time.monotonic() + GATE_TIMEOUT_S
        while True:
            try:
                return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:  # ENXIO: the process has not opened its end yet
                if e.errno != errno.ENXIO:
                    raise
            self._check(deadline)
            time.sleep(0.01)

    def _check(self, deadline):
        for rank, p in enumerate(self.procs):
            if p.poll() is not None:
                raise SystemExit(f"job {self.name} rank {rank} exited with {p.returncode}")
        if time.monotonic() > deadline:
            raise SystemExit(f"job {self.name}: a rank did not reach its turn gate")

    def wait_arrivals(self):
        """Until every rank has arrived at its gate (finished its block, or its warm-up)."""
        pending = set(range(len(self.procs)))
        deadline = time.monotonic() + GATE_TIMEOUT_S
        while pending:
            ready, _, _ = select.select([self.arrived[r] for r in pending], [], [], 0.5)
            for fd in ready:
                rank = self.arrived.index(fd)
                data = os.read(fd, 1)
                if data == b"a":
                    pending.discard(rank)
            if pending:
                self._check(deadline)

    def turn(self):
        for fd in self.go:
            os.write(fd, b"g")

    def finish(self):
        for rank, p in enumerate(self.procs):
            if p.wait(timeout=GATE_TIMEOUT_S) != 0:
                raise SystemExit(f"job {self.name} rank {rank} exited with {p.returncode}")
        for fd in self.arrived + self.go:
            os.close(fd)
        if self.run_dir is not None and not self.cc and not os.path.exists(
                os.path.join(self.run_dir, "rank-0.layer")):
            raise SystemExit("the layer did not install itself in job B")

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    def blocks(self, block):
        """Rank 0's timed steps, as blocks of `block` (wall, cpu) lists."""
        with open(self.out) as f:
            rows = [tuple(map(float, line.split()[:2])) for line in f]
        if self.cc:
            rows = rows[WARMUP:]  # cluster-ddp-example writes its warm-up steps too
        return [rows[i:i + block] for i in range(0, len(rows), block)]


def order(blocks, flip):
    """A B B A A B B A ... (B A A B ... when `flip`): which job takes each of 2 * blocks
    turns."""
    return ["BA"[(t + 1) // 2 % 2 ^ flip ^ 1] for t in range(2 * blocks)]


def launch(args, index, work):
    """One pair of jobs; returns the per-block-pair ratios {"wall": [...], "cpu": [...]}."""
    steps = WARMUP + args.blocks * args.block
    jobs = {}
    try:
        for name in ("AB" if index % 2 == 0 else "BA"):  # the first to take a turn starts first
            jobs[name] = Job(name, args.ranks, name == "B", steps, args.block, args.hidden, work,
                             args.pin, args.cc_bin if args.job == "cc" else None)
        for job in jobs.values():
            job.wait_arrivals()  # both warmed up: no start-up runs beside a timed block
        for name in order(args.blocks, index % 2):
            jobs[name].turn()
            jobs[name].wait_arrivals()
        for job in jobs.values():
            job.turn()  # released: both tear down now
        for job in jobs.values():
            job.finish()
    finally:
        for job in jobs.values():
            job.kill()
    got = {name: job.blocks(args.block) for name, job in jobs.items()}
    ratios = {"wall": [], "cpu": []}
    # Turn t and t + 1 with t even are neighbours of different jobs (A B, B A, A B, ...).
    turns = order(args.blocks, index % 2)
    seen = {"A": 0, "B": 0}
    taken = []
    for name in turns:
        taken.append(got[name][seen[name]])
        seen[name] += 1
    for name in jobs:  # every timed step of the launch, for the absolute figures
        for column, kind in ((0, "wall"), (1, "cpu")):
            ratios[f"{name}_{kind}"] = [r[column] for blk in got[name] for r in blk]
    for t in range(0, len(turns), 2):
        first, second = taken[t], taken[t + 1]
        a, b = (first, second) if turns[t] == "A" else (second, first)
        for column, kind in ((0, "wall"), (1, "cpu")):
            ratios[kind].append(statistics.median(r[column] for r in b) /
                                statistics.median(r[column] for r in a))
    return ratios


def bound_line(label, ratios, limit):
    b = upper_bounds(ratios)
    estimate, bound = b["median"]
    text = (f"{label}: median {100 * (estimate - 1):+.2f} %, one-sided 95 % upper bound "
            + (f"{100 * (bound - 1):+.2f} %" if bound is not None else "(too few)"))
    if "geomean" in b:
        text += (f"; geometric mean {100 * (b['geomean'][0] - 1):+.2f} % <= "
                 f"{100 * (b['geomean'][1] - 1):+.2f} % (paired t on log ratios)")
    holds = bound is not None and bound <= 1 + limit / 100
    return text, holds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--launches", type=int, default=40)
    parser.add_argument("--blocks", type=int, default=20,
                        help="blocks of each job per launch (even: A B B A ...)")
    parser.add_argument("--block", type=int, default=10, help="steps per block")
    parser.add_argument("--pin", action="store_true", help="run rank r on CPU r (taskset)")
    parser.add_argument("--limit", type=float, default=3.0)
    parser.add_argument("--keep", action="store_true",
                        help="keep every launch's per-step files and logs under --out")
    add_job_options(parser)
    parser.add_argument("--max-minutes", type=float, default=0,
                        help="start no launch after this much time (0: no limit)")
    args = parser.parse_args()
    if args.blocks % 2:
        raise SystemExit("--blocks must be even (A B B A ...)")
    os.makedirs(args.out, exist_ok=True)
    before = loadavg()
    print(f"before: {before}", flush=True)
    started = time.monotonic()
    per_launch = {"wall": [], "cpu": []}
    pooled = {"wall": [], "cpu": []}
    steps = {f"{name}_{kind}": [] for name in "AB" for kind in ("wall", "cpu")}
    for index in range(args.launches):
        if args.max_minutes and time.monotonic() - started > 60 * args.max_minutes:
            print(f"stopping after {index} launches (--max-minutes {args.max_minutes:g})",
                  flush=True)
            break
        work = tempfile.mkdtemp(prefix=f"launch-{index}-", dir=args.out)
        ratios = launch(args, index, work)
        for kind in per_launch:
            per_launch[kind].append(statistics.median(ratios[kind]))
            pooled[kind].extend(ratios[kind])
        for key in steps:
            steps[key].extend(ratios[key])
        with open(os.path.join(args.out, "ratios.txt"), "a") as f:
            f.write(f"{index} " + " ".join(f"{kind}:" + ",".join(f"{r:.6f}" for r in ratios[kind])
                                           for kind in per_launch) + "\n")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        print(f"launch {index:2d}: {len(ratios['wall'])} block pairs, median B/A wall "
              f"{per_launch['wall'][-1]:.4f} cpu {per_launch['cpu'][-1]:.4f}; "
              f"{os.getloadavg()[0]:.2f} load", flush=True)
    after = loadavg()
    n = len(per_launch["wall"])
    job = ("ddp_step_bench.py (Python layer)" if args.job == "python"
           else "cluster-ddp-example (C++ library)")
    lines = [f"{args.ranks} ranks of {job} (hidden {args.hidden}, batch 64 per rank),"
             f" A (no layer) and B (the layer) side by side, {n} launches x {args.blocks} "
             f"blocks of {args.block} steps each, order A B B A ... (B A A B ... in odd "
             f"launches){', pinned' if args.pin else ''}",
             f"before: {before}", f"after:  {after}"]
    if n:
        med = {key: 1e3 * statistics.median(v) for key, v in steps.items()}
        lines.append(f"median step (every timed step pooled): A wall {med['A_wall']:.3f} ms, cpu "
                     f"{med['A_cpu']:.3f} ms; B wall {med['B_wall']:.3f} ms, cpu "
                     f"{med['B_cpu']:.3f} ms; B - A: wall "
                     f"{1e3 * (med['B_wall'] - med['A_wall']):+.1f} us, cpu "
                     f"{1e3 * (med['B_cpu'] - med['A_cpu']):+.1f} us")
    for kind, what in (("wall", "wall per step"), ("cpu", "cpu per step ")):
        if n == 0:
            break
        text, holds = bound_line(f"B vs A, {what}, per launch", per_launch[kind], args.limit)
        lines.append(f"{text} -> <= {args.limit:g} %: {'HOLDS' if holds else 'NOT SHOWN'} "
                     f"({n} launches)")
        text, _ = bound_line(f"  (check) every block pair pooled", pooled[kind], args.limit)
        lines.append(f"{text} ({len(pooled[kind])} block pairs)")
        logs = [math.log(r) for r in per_launch[kind]]
        if n >= 2:
            lines.append(f"  sd of the launches' log ratios {100 * statistics.stdev(logs):.2f} %")
    with open(os.path.join(args.out, "interleaved.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
