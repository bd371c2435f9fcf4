#!/usr/bin/env bash
# Cluster scheduler benchmark: replays the full Philly trace and the eight Pollux workloads under
# FIFO gang scheduling, Tiresias-style LAS and the Singularity-style policy side by side (one
# process per trace, one core), and writes the per-tier tables, CSVs, figures and a comparison
# with FIFO (the baseline of the same run) as ratios; then the interposition layer's overhead on
# a data-parallel PyTorch job against the same script without it (interpose_overhead.py).
#   TESSERA_BUILD      build directory holding bin/cluster-replay (and bench/cluster_decide_bench)
#   TESSERA_BENCH_OUT  where results go
#   TESSERA_TRACES     trace folder (default: data/traces in the repository)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
traces=${TESSERA_TRACES:-$repo/data/traces}
replay=$build/bin/cluster-replay
[ -x "$replay" ] || { echo "bench/cluster: $replay is not built" >&2; exit 1; }
[ -f "$traces/philly.csv" ] || { echo "bench/cluster: no $traces/philly.csv" >&2; exit 1; }
mkdir -p "$out"

# Per policy and tier: SLA attainment and the utilization figures, as ratios to FIFO's.
compare() {  # compare CSV... : prints a table comparing every policy with fifo
  awk -F, 'FNR == 1 { next }
    { key = $1 "," $2; n[key]++; sla[key] += $4; jct[key] += $6; util[$1] += $15 / 4;
      back[$1] += $16 / 4; policies[$1] = 1; files[FILENAME] = 1 }
    END {
      nf = length(files);
      printf "%-12s %-9s %9s %12s %14s %17s\n", "policy", "tier", "SLA%", "JCT/fifo",
             "util/fifo", "util-waiting/fifo";
      split("premium standard basic all", tiers, " ");
      for (p in policies) for (t = 1; t <= 4; t++) {
        k = p "," tiers[t]; f = "fifo," tiers[t];
        printf "%-12s %-9s %9.2f %12.3f %14.4f %17.4f\n", p, tiers[t], 100 * sla[k] / n[k],
               jct[k] / jct[f], util[p] / util["fifo"], back[p] / back["fifo"];
      }
    }' "$@" | (read -r header; echo "$header"; sort)
}

echo "== Philly (82,247 jobs), 64 nodes x 8 slots"
/usr/bin/time -f "%U s user CPU, %e s wall, %M KB max RSS" -o "$out/philly.time" \
  "$replay" --trace "$traces/philly.csv" --nodes 64 --slots 8 \
  --csv "$out/philly.csv" --jobs-csv "$out/philly-jobs.csv" \
  --plot "$out/cluster-philly.png" --title "Philly trace (82,247 jobs), 64 x 8 slots" \
  | tee "$out/philly.txt"
echo "whole replay (3 policies, one process, one core): $(cat "$out/philly.time")" \
  | tee -a "$out/philly.txt"
compare "$out/philly.csv" | tee "$out/philly-vs-fifo.txt"

echo
echo "== What each mechanism buys: the Singularity-style policy with one switched off (Philly)"
"$replay" --trace "$traces/philly.csv" --nodes 64 --slots 8 \
  --policies singularity,singularity:no-elastic,singularity:no-defragment,singularity:no-headroom \
  --csv "$out/philly-ablation.csv" > "$out/philly-ablation.txt"
grep -E "^singularity" "$out/philly-ablation.txt"

echo
for nodes in 56 48; do
  echo "== Philly at higher load: the same trace on $nodes nodes x 8 slots"
  "$replay" --trace "$traces/philly.csv" --nodes $nodes --slots 8 \
    --csv "$out/philly-$nodes.csv" > "$out/philly-$nodes.txt"
  tail -n 17 "$out/philly-$nodes.txt"
  compare "$out/philly-$nodes.csv" | tee "$out/philly-$nodes-vs-fifo.txt"
  echo
done

echo
echo "== Pollux workloads 1-8 (160 jobs each), 16 nodes x 4 slots (the Pollux testbed's size)"
pollux_csvs=()
for w in 1 2 3 4 5 6 7 8; do
  plot=()
  [ $w = 1 ] && plot=(--plot "$out/cluster-pollux-1.png" --title "Pollux workload 1, 16 x 4 slots")
  "$replay" --trace "$traces/pollux-workload-$w.csv" --nodes 16 --slots 4 \
    --csv "$out/pollux-$w.csv" "${plot[@]}" > "$out/pollux-$w.txt"
  pollux_csvs+=("$out/pollux-$w.csv")
  echo "workload $w: $(grep -c . "$out/pollux-$w.csv") rows"
done
echo "mean over the 8 workloads:"
compare "${pollux_csvs[@]}" | tee "$out/pollux-vs-fifo.txt"

if [ -x "$build/bench/cluster_decide_bench" ]; then
  echo
  echo "== Cost of one Decide call (Google Benchmark)"
  "$build/bench/cluster_decide_bench" --benchmark_min_time=0.2 | tee "$out/decide.txt"
fi
echo
echo "== Steady-state overhead of the interposition layer on a DDP job (no preemption)"
/usr/bin/python3 "$repo/bench/cluster/interpose_overhead.py" --out "$out/interpose" --pin \
  | tee "$out/interpose-overhead.txt"
echo "== The same in process: the layer's step path bypassed / at work in blocks of 10 steps"
/usr/bin/python3 "$repo/bench/cluster/interpose_overhead.py" --out "$out/interpose-toggle" \
  --toggle 10 --pin --pairs 10 --steps 2030 | tee "$out/interpose-toggle.txt"
echo "results in $out"
