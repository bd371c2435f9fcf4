#!/usr/bin/env bash
# Part 21: the cluster scheduler's policy replayed on the real Philly trace. The first 20,000
# jobs (about five weeks of Microsoft's Philly GPU cluster) run on a simulated 64 x 8-slot
# cluster under FIFO gang scheduling, Tiresias-style LAS and the Singularity-style SLA-aware
# policy (the same policy code the live scheduler service runs). Prints the per-tier table and
# writes a figure. The full trace: bench/cluster/run.sh.
set -euo pipefail
bin=${TESSERA_BIN:?set TESSERA_BIN to the bin directory of a build}
out=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT to an output directory}
repo=$(cd "$(dirname "$0")/.." && pwd)
traces=${TESSERA_TRACES:-$repo/data/traces}
mkdir -p "$out"
if [ ! -f "$traces/philly.csv" ]; then
  # The traces ship with the repository (data/traces); a missing one is a broken checkout.
  echo "error: no philly.csv in $traces (set TESSERA_TRACES to the folder holding the traces)" >&2
  exit 1
fi
echo "Tiers by a hash of the job id: 20% premium (>= 95% of ideal speed), 30% standard (>= 70%),"
echo "50% basic (best effort). Checkpoint 10 s, restore 30 s for every preemption/resize/migration."
"$bin/cluster-replay" --trace "$traces/philly.csv" --limit 20000 --nodes 64 --slots 8 \
  --csv "$out/cluster-replay.csv" --plot "$out/cluster-replay.png" \
  --title "Philly trace, first 20,000 jobs, 64 x 8 slots"
# The promise, checked on the output: the Singularity-style policy keeps both guaranteed tiers
# (strict priority, the tier-aware baseline, is in the table beside it).
awk -F, '$1 == "singularity" && ($2 == "premium" || $2 == "standard") {
  printf "singularity %s: %.2f%% of jobs met the SLA\n", $2, 100 * $4 }' "$out/cluster-replay.csv"

# A trace that carries its own classes (our class CSV), mapped to tiers by a flag, with quotas
# per tenant (the live scheduler's admission control).
echo
echo "Class CSV fixture (60 jobs), classes mapped to tiers, quotas per tenant, 4 x 8 slots:"
printf '%s\n' "vision 6 6" "speech 4 6" "search 0 6" > "$out/cluster-quota.txt"
"$bin/cluster-replay" --trace "$repo/data/traces/class-fixture.csv" --nodes 4 --slots 8 \
  --policies strict,singularity --class-map prod=premium,batch=standard,best-effort=basic \
  --quota "$out/cluster-quota.txt" | grep -E "admission|^(strict|singularity) +(premium|standard|all) "
