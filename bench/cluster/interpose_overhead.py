"""Steady-state overhead of the interposition layer (cluster/interpose), no preemption.

Runs bench/cluster/ddp_step_bench.py as a data-parallel job of --ranks processes (started as
torchrun starts them), alternately without the layer (baseline) and with it (the agent's
PYTHONPATH and run directory), --pairs times, in one run of this script so both see the same
machine load. Reports each configuration's median step time over all its steps, the
per-pair ratios and their median: overhead = layer / baseline - 1.

  /usr/bin/python3 bench/cluster/interpose_overhead.py --out /tmp/overhead
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAYER = os.path.join(REPO, "cluster", "interpose", "python")


def run(ranks, layer, port, out, script_args):
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
            env.update(PYTHONPATH=LAYER, TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=job,
                       TESSERA_CHECKPOINT_DIR=os.path.join(job, "ckpt"),
                       TESSERA_JOB_WORKERS=str(ranks))
        log = open(f"{out}.rank{rank}.log", "w")  # the ranks' output (and the layer's lines)
        procs.append(subprocess.Popen(
            [sys.executable, os.path.join(HERE, "ddp_step_bench.py"), "--out", out] + script_args,
            env=env, stdout=log, stderr=subprocess.STDOUT))
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"a rank failed (layer={layer}); see {out}.rank*.log")
    if layer and not os.path.exists(os.path.join(job, "runs", "1", "rank-0.layer")):
        raise SystemExit("the layer did not install itself")
    with open(out) as f:
        return [float(line) for line in f]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    script_args = ["--steps", str(args.steps), "--hidden", str(args.hidden)]
    steps = {False: [], True: []}
    ratios = []
    port = 31000 + os.getpid() % 10000
    for pair in range(args.pairs):
        medians = {}
        # Alternate which goes first, so a load trend does not favour one side.
        for layer in ([False, True] if pair % 2 == 0 else [True, False]):
            port += 1
            times = run(args.ranks, layer, port, os.path.join(args.out, f"steps-{pair}-{int(layer)}"),
                        script_args)
            steps[layer].extend(times)
            medians[layer] = statistics.median(times)
        ratios.append(medians[True] / medians[False])
        print(f"pair {pair}: baseline {1e3 * medians[False]:.3f} ms/step, layer "
              f"{1e3 * medians[True]:.3f} ms/step, ratio {ratios[-1]:.4f}", flush=True)
    base, lay = statistics.median(steps[False]), statistics.median(steps[True])
    lines = [
        f"{args.ranks} ranks, {args.pairs} pairs x {args.steps} steps (hidden {args.hidden})",
        f"baseline median step {1e3 * base:.3f} ms (p90 "
        f"{1e3 * statistics.quantiles(steps[False], n=10)[-1]:.3f})",
        f"layer    median step {1e3 * lay:.3f} ms (p90 "
        f"{1e3 * statistics.quantiles(steps[True], n=10)[-1]:.3f})",
        f"overhead (median of per-pair ratios) {100 * (statistics.median(ratios) - 1):+.2f} %",
        f"overhead (all steps' medians)        {100 * (lay / base - 1):+.2f} %",
    ]
    with open(os.path.join(args.out, "overhead.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
