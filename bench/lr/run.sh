#!/usr/bin/env bash
# lr benchmarks: the per-step overhead of a schedule against the bare training loop, measured
# interleaved in the same run. Usage: TESSERA_BUILD=build/release TESSERA_BENCH_OUT=out bench/lr/run.sh
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
mkdir -p "$out"
bench="$build/bench/lr_schedule_bench"
[ -x "$bench" ] || { echo "missing $bench (ninja -C $build lr_schedule_bench)"; exit 1; }

echo "lr: running lr_schedule_bench (about 15 s; MLP 784-256-128-10, batch 128, 1 thread)"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$bench" --benchmark_out="$out/lr_schedule_bench.json" \
  --benchmark_out_format=json | tee "$out/lr_schedule_bench.txt"

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
data = json.load(open(os.path.join(out, "lr_schedule_bench.json")))
b = {x["name"]: x for x in data["benchmarks"]}
t = b["BM_TrainStepInterleaved/min_time:3.000"]
bare, sched = t["bare_us"], t["scheduled_us"]
lines = [f"training step, bare loop (baseline):      {bare:10.1f} us",
         f"training step, with Knee via the adapter: {sched:10.1f} us   ratio {sched / bare:.4f} ({100 * (sched / bare - 1):+.2f}%)"]
for name in ["knee", "cosine", "onecycle", "multistep"]:
    x = b[f"BM_ApplyOnly/{name}"]
    ns = x["real_time"] if x["time_unit"] == "ns" else x["real_time"] * 1000
    lines.append(f"adapter.Apply alone, {name:<10}           {ns:10.1f} ns   = {100 * ns / 1000 / bare:.4f}% of a bare step")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "summary.txt"), "w").write(text)
print(text, end="")
PY
