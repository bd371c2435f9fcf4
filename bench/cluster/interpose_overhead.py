"""Steady-state overhead of the interposition layer (cluster/interpose), no preemption.

Runs bench/cluster/ddp_step_bench.py as a data-parallel job of --ranks processes (started as
torchrun starts them) without the layer (A, the baseline) and with it (B: the agent's
PYTHONPATH and run directory), interleaved in --pairs pairs whose order alternates ABBA, so that
a load trend on the shared machine does not favour one side. Each run reports every step's
wall time and the CPU time its process used in it (rank 0).

Per pair: ratio = median step of B / median step of A, for wall time (rank 0), for CPU time
(rank 0's process, all its threads), for the mean over ranks of each rank's median CPU per step
(Python job) and for rank 0's whole-process CPU. The overhead is the median of the per-pair
ratios - 1, with a distribution-free two-sided 95 % confidence interval (order statistics of
the ratios: the median's interval from the binomial distribution, no assumption on the noise).
The machine's load average is printed before and after.

The decision (the issue's acceptance: the layer costs at most --limit, 3 %, of step time) is
one-sided: for each ratio the bench prints the distribution-free one-sided 95 % upper bound on
the median pair ratio, and beside it a paired t bound on the mean log ratio and a bootstrap
bound on the median, and says HOLDS when the first is at most 1 + limit / 100, NOT SHOWN
otherwise. Many short pairs narrow the bound more than few long ones (the noise is between
processes, not between steps).

  /usr/bin/python3 bench/cluster/interpose_overhead.py --out /tmp/overhead --pairs 200 \
      --steps 100 --max-minutes 12

Diagnosis (--variants, Python job): besides A (no layer) and B (the layer), E runs B's
environment (PYTHONPATH with the layer's directory, the TESSERA_* variables) with
TESSERA_INTERPOSE=0, so the layer is not installed (what the environment and sitecustomize alone
cost); X runs the layer with its byte exchange taken out (a patched copy: every rank decides on
its own need only); N runs the layer without its progress file. Each round runs every variant
once, in an order rotated and reversed from round to round (ABBA generalised); every variant's
ratios are to A of the same round. --pin runs rank r on CPU r (taskset), so that the ranks do not
migrate between cores. Besides the per-step CPU time (CLOCK_PROCESS_CPUTIME_ID, all threads, read
by the script), the whole-process CPU time of rank 0 (getrusage through wait4: start-up and
import included) is reported.

  /usr/bin/python3 bench/cluster/interpose_overhead.py --out /tmp/overhead --variants A,B,E,X \
      --pin --pairs 200 --steps 300 --max-minutes 9

In-process (--toggle N, Python job): every run is B, the job under the layer, whose timed steps
alternate in blocks of N between the layer bypassed and the layer at work (off, on, on, off, off,
on, ...: ddp_step_bench.py --toggle); per pair of neighbouring blocks, ratio = median step with
the layer / median step without it. Neighbouring blocks are a few tens of milliseconds apart in
the same processes, so the machine's load, the memory layout and the start-up are the same on
both sides: what is left is the layer's per-step work in a DDP job (order check, byte exchange,
progress file, wrappers). It does not see what the layer costs outside its step path (the
import, wrapping DataLoader iteration, a different heap): the variants above do.

  /usr/bin/python3 bench/cluster/interpose_overhead.py --out /tmp/toggle --toggle 10 --pin \
      --pairs 20 --steps 2030 --max-minutes 8

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
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAYER = os.path.join(REPO, "cluster", "interpose", "python")
WARMUP = 30  # steps of each run not timed


def free_port():
    """A port nothing listens on now (the kernel's choice): fixed ports collided with other
    engineers' jobs on the shared machine."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def patched_layer(patch_from, patch_to):
    """A copy of the layer with one line replaced (for the X and N variants)."""
    target = tempfile.mkdtemp(prefix="interpose-variant-")
    shutil.copytree(LAYER, target, dirs_exist_ok=True)
    path = os.path.join(target, "tessera_interpose", "layer.py")
    with open(path) as f:
        text = f.read()
    if patch_from not in text:
        raise SystemExit(f"cannot build the variant: {patch_from!r} is not in the layer")
    with open(path, "w") as f:
        f.write(text.replace(patch_from, patch_to))
    return target


WHAT = {"wall": "wall per step", "cpu": "cpu per step", "cpu_ranks": "cpu/step, all ranks",
        "whole": "rank 0 process cpu"}

# name -> (layer environment, layer installed, layer directory or None for the checkout's)
VARIANTS = {
    "A": ("no layer", False, False),
    "B": ("the layer", True, True),
    "E": ("the layer's environment, layer not installed (TESSERA_INTERPOSE=0)", True, False),
    "X": ("the layer without its byte exchange", True, True),
    "N": ("the layer without its progress file", True, True),
}


def run(ranks, layer, port, out, script_args, layer_dir=LAYER, cc_bin=None, install=True,
        pin=False, toggled=None, quantile=0.5):
    """Runs one job; returns (rank 0's per-step wall, rank 0's per-step CPU, rank 0's
    whole-process CPU, the mean over ranks of each one's `quantile` of CPU per step)."""
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
            if not install:
                env.update(TESSERA_INTERPOSE="0")
        log = open(f"{out}.rank{rank}.log", "w")  # the ranks' output (and the layer's lines)
        if cc_bin is None:
            command = [sys.executable, os.path.join(HERE, "ddp_step_bench.py"), "--out", out]
        else:  # the same binary; without TESSERA_RUN_DIR its session is a plain gloo group
            command = [cc_bin, "--times", out]
        if pin:
            command = ["taskset", "-c", str(rank % os.cpu_count())] + command
        procs.append(subprocess.Popen(command + script_args, env=env, stdout=log,
                                      stderr=subprocess.STDOUT))
    whole_cpu = None
    for rank, p in enumerate(procs):
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if rank == 0:
            whole_cpu = usage.ru_utime + usage.ru_stime
        if p.returncode != 0:
            raise SystemExit(f"a rank failed (layer={layer}); see {out}.rank*.log")
    installed = os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer"))
    if layer and install and not installed:
        raise SystemExit("the layer did not install itself")
    if layer and not install and installed:
        raise SystemExit("the layer installed itself with TESSERA_INTERPOSE=0")
    shutil.rmtree(job, ignore_errors=True)
    wall, cpu = [], []
    with open(out) as f:
        lines = f.readlines()
        if cc_bin is not None:
            lines = lines[WARMUP:]  # ddp_step_bench.py leaves out its warm-up steps itself
        for line in lines:
            fields = line.split()
            wall.append(float(fields[0]))
            cpu.append(float(fields[1]))
            if toggled is not None:
                toggled.append(int(fields[2]))
    return wall, cpu, whole_cpu, ranks_cpu(out, ranks if cc_bin is None else 1, cpu, quantile)


def quantile_of(values, q):
    """The q-quantile of `values` (linear interpolation between order statistics); q = 0.5 is
    the median."""
    x = sorted(values)
    position = q * (len(x) - 1)
    low = math.floor(position)
    high = min(low + 1, len(x) - 1)
    return x[low] + (position - low) * (x[high] - x[low])


def ranks_cpu(out, ranks, cpu0, q):
    """Every rank's q-quantile of CPU per step, averaged (ddp_step_bench.py writes one file per
    rank; cluster-ddp-example only rank 0's): the ranks do the same work, and the mean of their
    figures varies less between runs than one rank's."""
    figures = [quantile_of(cpu0, q)]
    for rank in range(1, ranks):
        with open(f"{out}.rank{rank}") as f:
            figures.append(quantile_of([float(line.split()[1]) for line in f], q))
    return statistics.fmean(figures)


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


def t_quantile(p, df):
    """Student's t quantile (Cornish-Fisher expansion in 1/df around the normal quantile; for
    df >= 10 within 0.1 % of the exact value, which is all a bound on a few per cent needs)."""
    z = statistics.NormalDist().inv_cdf(p)
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def upper_bounds(ratios, confidence=0.95, resamples=10000):
    """One-sided upper confidence bounds on a B/A ratio from per-pair ratios (the claim tested
    is "B costs at most X % more than A", so only the upper side matters):

      median: distribution-free, the smallest order statistic x_(u) with
              P(x_(u) >= median) >= confidence (binomial, no assumption on the noise);
      geomean: paired t on the log ratios (the mean log ratio's upper bound, exponentiated):
              assumes roughly normal log ratios, uses every pair's size, not only its sign;
      bootstrap: the `confidence` percentile of the median over resamples of the pairs.

    Returns {name: (estimate, bound)}; a bound is None when there are too few pairs."""
    x = sorted(ratios)
    n = len(x)
    out = {}
    bound = None
    for u in range(n, 0, -1):  # the smallest u whose coverage still reaches `confidence`
        # P(x_(u) >= median) = P(Binomial(n, 1/2) <= u - 1)
        if sum(math.comb(n, i) for i in range(u)) / 2 ** n >= confidence:
            bound = x[u - 1]
        else:
            break
    out["median"] = (statistics.median(x), bound)
    logs = [math.log(r) for r in x]
    if n >= 3:
        mean = statistics.fmean(logs)
        half = t_quantile(confidence, n - 1) * statistics.stdev(logs) / math.sqrt(n)
        out["geomean"] = (math.exp(mean), math.exp(mean + half))
        rng = random.Random(12345)
        medians = sorted(statistics.median(rng.choices(x, k=n)) for _ in range(resamples))
        out["bootstrap"] = (statistics.median(x), medians[int(confidence * resamples) - 1])
    return out


def decision_lines(label, ratios, limit_percent):
    """The bench's verdict on "B costs at most limit % more than A": it holds when the
    distribution-free one-sided 95 % upper bound on the median pair ratio is at most
    1 + limit / 100; the two other bounds are printed beside it as a check."""
    b = upper_bounds(ratios)
    estimate, bound = b["median"]
    parts = [f"median {100 * (estimate - 1):+.2f} %, one-sided 95 % upper bound "
             + (f"{100 * (bound - 1):+.2f} %" if bound is not None else "(too few pairs)")]
    if "geomean" in b:
        parts.append(f"geometric mean {100 * (b['geomean'][0] - 1):+.2f} % <= "
                     f"{100 * (b['geomean'][1] - 1):+.2f} % (paired t on log ratios)")
        parts.append(f"bootstrap median <= {100 * (b['bootstrap'][1] - 1):+.2f} %")
    verdict = ("HOLDS" if bound is not None and bound <= 1 + limit_percent / 100
               else "NOT SHOWN")
    return [f"{label}: " + "; ".join(parts) + f" -> <= {limit_percent:g} %: {verdict} "
            f"({len(ratios)} pairs)"]


def loadavg():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} CPUs)"


def add_job_options(parser):
    """--job and --cc-bin (interleaved_overhead.py takes them too)."""
    parser.add_argument("--job", choices=["python", "cc"], default="python",
                        help="python: ddp_step_bench.py with and without the Python layer; cc: "
                             "cluster-ddp-example (the C++ library) with and without the "
                             "scheduler's run directory, i.e. with and without its barrier")
    parser.add_argument("--cc-bin", default=os.path.join(REPO, "build", "release", "bin",
                                                         "cluster-ddp-example"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-minutes", type=float, default=0,
                        help="stop after the pair running when this much time has passed (0: none)")
    add_job_options(parser)
    parser.add_argument("--layer-dir", default=LAYER,
                        help="the layer to measure (default: this checkout's), e.g. a variant")
    parser.add_argument("--variants", default="A,B",
                        help="comma-separated, A first: " + "; ".join(
                            f"{k}: {v[0]}" for k, v in VARIANTS.items()))
    parser.add_argument("--pin", action="store_true", help="run rank r on CPU r (taskset)")
    parser.add_argument("--gc-off", action="store_true",
                        help="the script disables Python's garbage collector before its loop")
    parser.add_argument("--quantile", type=float, default=0.5,
                        help="per run, the step time taken is this quantile of the run's steps "
                             "(0.5: the median; a low one, e.g. 0.1, leaves out the steps other "
                             "processes' load slowed down)")
    parser.add_argument("--reanalyze", action="store_true",
                        help="compute the ratios again, with --quantile, from the per-step "
                             "files a previous run left in --out (no job is run)")
    parser.add_argument("--limit", type=float, default=3.0,
                        help="the claim tested: B costs at most this many per cent more than A")
    parser.add_argument("--toggle", type=int, default=0,
                        help="in-process mode: blocks of this many steps with and without the "
                             "layer in every run (see above)")
    args = parser.parse_args()
    if not 0 < args.quantile < 1:
        raise SystemExit("--quantile must be in (0, 1)")
    if args.reanalyze:
        return reanalyze(args)
    os.makedirs(args.out, exist_ok=True)
    if args.toggle:
        return toggle_main(args)
    names = args.variants.split(",")
    if names[0] != "A" or len(set(names)) != len(names) or any(n not in VARIANTS for n in names):
        raise SystemExit(f"--variants must start with A and name distinct ones of {list(VARIANTS)}")
    script_args = ["--steps", str(args.steps), "--hidden", str(args.hidden)]
    cc_bin = None
    if args.job == "cc":
        if names != ["A", "B"]:
            raise SystemExit("--job cc measures A,B only")
        cc_bin = args.cc_bin
        script_args = ["--steps", str(args.steps), "--hidden", str(args.hidden),
                       "--batch", "64"]
    layer_dirs = {"A": args.layer_dir, "B": args.layer_dir, "E": args.layer_dir}
    if "X" in names:
        layer_dirs["X"] = patched_layer("total = self.meta.exchange(self.need)",
                                        "total = self.need  # variant X: no byte exchange")
    if "N" in names:
        layer_dirs["N"] = patched_layer(
            "    def report_progress(self, force=False):\n",
            "    def report_progress(self, force=False):\n        return  # variant N\n")
    before = loadavg()
    print(f"before: {before}", flush=True)
    pooled = {n: ([], []) for n in names}
    whole = {n: [] for n in names}
    # cluster-ddp-example writes rank 0's times only: no mean over ranks then.
    kinds = ("wall", "cpu", "cpu_ranks", "whole") if cc_bin is None else ("wall", "cpu", "whole")
    ratios = {n: {k: [] for k in kinds} for n in names[1:]}
    started = time.monotonic()
    for pair in range(args.pairs):
        if args.max_minutes and time.monotonic() - started > 60 * args.max_minutes:
            print(f"stopping after {pair} rounds (--max-minutes {args.max_minutes:g})", flush=True)
            break
        # Rotated by the round and reversed every other round: for A,B this is ABBA.
        order = names[pair % len(names):] + names[:pair % len(names)]
        if (pair // len(names)) % 2 == 1:
            order = order[::-1]
        medians = {}
        for name in order:
            port = free_port()
            _, layer, install = VARIANTS[name]
            wall, cpu, whole_cpu, cpu_ranks = run(
                args.ranks, layer, port, os.path.join(args.out, f"steps-{pair}-{name}"),
                script_args, layer_dirs.get(name, args.layer_dir), cc_bin, install, args.pin,
                quantile=args.quantile)
            pooled[name][0].extend(wall)
            pooled[name][1].extend(cpu)
            whole[name].append(whole_cpu)
            medians[name] = dict(wall=quantile_of(wall, args.quantile),
                                 cpu=quantile_of(cpu, args.quantile), cpu_ranks=cpu_ranks,
                                 whole=whole_cpu)
        line = [f"round {pair:2d} ({''.join(order)}): A wall {1e3 * medians['A']['wall']:7.3f} "
                f"cpu {1e3 * medians['A']['cpu']:6.3f} ms/step, whole {medians['A']['whole']:.2f} s"]
        for name in names[1:]:
            for kind in kinds:
                ratios[name][kind].append(medians[name][kind] / medians["A"][kind])
            line.append(f"{name}/A " + " ".join(f"{kind} {ratios[name][kind][-1]:.4f}"
                                                 for kind in kinds))
        print("; ".join(line), flush=True)
    after = loadavg()
    rounds = len(ratios[names[1]]["wall"])
    job = ("ddp_step_bench.py (Python layer)" if cc_bin is None
           else "cluster-ddp-example (C++ library)")
    lines = [f"{args.ranks} ranks of {job} (hidden {args.hidden}, batch 64 per rank), "
             f"{rounds} rounds of {','.join(names)} x {args.steps} steps (the first {WARMUP} of "
             f"each run not timed){', ranks pinned to CPUs' if args.pin else ''}",
             f"before: {before}", f"after:  {after}"]
    for name in names:
        lines.append(f"{name}: {VARIANTS[name][0]}: median step wall "
                     f"{1e3 * statistics.median(pooled[name][0]):.3f} ms (p90 "
                     f"{1e3 * statistics.quantiles(pooled[name][0], n=10)[-1]:.3f}), cpu "
                     f"{1e3 * statistics.median(pooled[name][1]):.3f} ms (p90 "
                     f"{1e3 * statistics.quantiles(pooled[name][1], n=10)[-1]:.3f}); rank 0's "
                     f"whole process {statistics.median(whole[name]):.2f} s CPU (median)")
    for name in names[1:]:
        for kind in kinds:
            r = ratios[name][kind]
            interval = median_interval(r)
            ci = (f"95 % CI [{100 * (interval[0] - 1):+.2f} %, {100 * (interval[1] - 1):+.2f} %] "
                  f"(coverage {100 * interval[2]:.1f} %)" if interval
                  else "too few rounds for a CI")
            what = WHAT[kind]
            lines.append(f"{name} vs A, {what:18s}: {100 * (statistics.median(r) - 1):+.2f} % "
                         f"(median of {len(r)} per-round ratios), {ci}; ratios from "
                         f"{min(r):.3f} to {max(r):.3f}")
    if rounds:
        lines.append(f"Decision (one-sided 95 % bounds, {rounds} pairs, per run the "
                     f"{args.quantile:g}-quantile of its steps):")
        for name in names[1:]:
            for kind in kinds:
                lines += decision_lines(f"  {name} vs A, {WHAT[kind]:18s}", ratios[name][kind],
                                        args.limit)
    with open(os.path.join(args.out, "overhead.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def reanalyze(args):
    """The ratios of a finished run (A,B), again, from its per-step files, with the per-run
    statistic --quantile: rank 0's wall and CPU, and the mean over ranks of CPU."""
    pairs = []
    while os.path.exists(os.path.join(args.out, f"steps-{len(pairs)}-A")) and os.path.exists(
            os.path.join(args.out, f"steps-{len(pairs)}-B")):
        pairs.append(len(pairs))
    if not pairs:
        raise SystemExit(f"no steps-<pair>-A/B files in {args.out}")
    ranks = args.ranks if args.job == "python" else 1
    kinds = ("wall", "cpu", "cpu_ranks") if ranks > 1 else ("wall", "cpu")
    ratios = {k: [] for k in kinds}
    for pair in pairs:
        got = {}
        for name in ("A", "B"):
            out = os.path.join(args.out, f"steps-{pair}-{name}")
            with open(out) as f:
                rows = [list(map(float, line.split()[:2])) for line in f]
            if args.job == "cc":
                rows = rows[WARMUP:]
            wall, cpu = [r[0] for r in rows], [r[1] for r in rows]
            got[name] = dict(wall=quantile_of(wall, args.quantile),
                             cpu=quantile_of(cpu, args.quantile),
                             cpu_ranks=ranks_cpu(out, ranks, cpu, args.quantile))
        for kind in kinds:
            ratios[kind].append(got["B"][kind] / got["A"][kind])
    lines = [f"{args.out}: {len(pairs)} pairs, per run the {args.quantile:g}-quantile of its "
             f"steps:"]
    for kind in kinds:
        lines += decision_lines(f"  B vs A, {WHAT[kind]:18s}", ratios[kind], args.limit)
    print("\n".join(lines))


def toggle_main(args):
    before = loadavg()
    print(f"before: {before}", flush=True)
    script_args = ["--steps", str(args.steps), "--hidden", str(args.hidden),
                   "--toggle", str(args.toggle)] + (["--gc-off"] if args.gc_off else [])
    ratios = {"wall": [], "cpu": []}
    per_step = {0: ([], []), 1: ([], [])}
    started = time.monotonic()
    runs = 0
    for attempt in range(args.pairs):
        if args.max_minutes and time.monotonic() - started > 60 * args.max_minutes:
            print(f"stopping after {attempt} runs (--max-minutes {args.max_minutes:g})", flush=True)
            break
        toggled = []
        wall, cpu, _, _ = run(args.ranks, True, free_port(),
                           os.path.join(args.out, f"steps-{attempt}"), script_args,
                           args.layer_dir, None, True, args.pin, toggled)
        runs += 1
        n = args.toggle
        blocks = [(toggled[b * n], wall[b * n:(b + 1) * n], cpu[b * n:(b + 1) * n])
                  for b in range(len(wall) // n)]
        run_ratios = {"wall": [], "cpu": []}
        for first, second in zip(blocks[0::2], blocks[1::2]):  # neighbours: (off,on), (on,off)
            on, off = (first, second) if first[0] == 1 else (second, first)
            if on[0] != 1 or off[0] != 0:
                raise SystemExit("blocks do not alternate: is the layer bypass working?")
            for index, kind in ((1, "wall"), (2, "cpu")):
                run_ratios[kind].append(statistics.median(on[index]) /
                                        statistics.median(off[index]))
        for on_flag, w, c in blocks:
            per_step[on_flag][0].extend(w)
            per_step[on_flag][1].extend(c)
        for kind in ratios:
            ratios[kind].extend(run_ratios[kind])
        print(f"run {attempt:2d}: {len(run_ratios['cpu'])} block pairs, median ratio wall "
              f"{statistics.median(run_ratios['wall']):.4f} cpu "
              f"{statistics.median(run_ratios['cpu']):.4f}", flush=True)
    after = loadavg()
    lines = [f"{args.ranks} ranks of ddp_step_bench.py under the layer (hidden {args.hidden}, "
             f"batch 64 per rank), {runs} runs x {args.steps} steps (the first {WARMUP} not "
             f"timed), blocks of {args.toggle} steps with the layer bypassed / at work"
             f"{', ranks pinned to CPUs' if args.pin else ''}",
             f"before: {before}", f"after:  {after}"]
    for flag, label in ((0, "bypassed"), (1, "at work ")):
        w, c = per_step[flag]
        lines.append(f"layer {label}: median step wall {1e3 * statistics.median(w):.3f} ms, "
                     f"cpu {1e3 * statistics.median(c):.3f} ms ({len(w)} steps)")
    for kind in ("wall", "cpu"):
        r = ratios[kind]
        interval = median_interval(r)
        mean = statistics.fmean(r)
        sem = statistics.stdev(r) / math.sqrt(len(r))
        lines.append(f"{kind:4s}: layer's per-step cost {100 * (statistics.median(r) - 1):+.2f} % "
                     f"(median of {len(r)} block-pair ratios), 95 % CI "
                     f"[{100 * (interval[0] - 1):+.2f} %, {100 * (interval[1] - 1):+.2f} %]; "
                     f"mean {100 * (mean - 1):+.2f} % +- {100 * 1.96 * sem:.2f} %")
    with open(os.path.join(args.out, "toggle.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
