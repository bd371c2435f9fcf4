#!/usr/bin/env bash
# Auto-configuration bench: does the configuration `pipeline-launch --auto` picks for G workers
# train as fast as the best of the other candidates, measured in this same run?
#
# 1. `pipeline-launch --auto --workers G` profiles the model here, ranks every (P, D, m) by
#    simulation, prints the table and trains the chosen one (its profile goes to profile.json).
# 2. `pipeline-sim --auto --profile profile.json`, given the all-reduce link step 1 measured,
#    prints the same ranking (simulated samples/s of every candidate).
# 3. Every candidate is trained for real (loopback links, --partition profiled, the same cut
#    rule as the auto-config), PIPELINE_BENCH_REPEATS times each, the fastest run kept.
# Output: autoconfig.csv and autoconfig.md (measured samples/s of each candidate as a ratio to
# the chosen one's, beside the simulated figure), in $TESSERA_BENCH_OUT.
# Knobs: PIPELINE_AUTO_WORKERS (default 4), PIPELINE_AUTO_MICRO (default 4,8),
# PIPELINE_BENCH_STEPS (10), PIPELINE_BENCH_REPEATS (2).
set -uo pipefail
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
LAUNCH=$BUILD/bin/pipeline-launch
SIM=$BUILD/bin/pipeline-sim
G=${PIPELINE_AUTO_WORKERS:-4}
MICRO=${PIPELINE_AUTO_MICRO:-4,8}
STEPS=${PIPELINE_BENCH_STEPS:-10}
REPEATS=${PIPELINE_BENCH_REPEATS:-2}
B=32
rm -rf "$OUT/auto"
mkdir -p "$OUT/auto"
[ -x "$LAUNCH" ] && [ -x "$SIM" ] || { echo "bench: $LAUNCH or $SIM not built"; exit 1; }
MODEL=(--model gpt --layers 4 --width 64 --heads 4 --vocab 64 --seq-len 32 --global-batch $B
       --steps "$STEPS" --timeout 300)

echo "== auto-config for $G workers, micro-batches $MICRO (load $(cut -d' ' -f1 /proc/loadavg))"
"$LAUNCH" "${MODEL[@]}" --auto --workers "$G" --auto-micro-batches "$MICRO" \
  --profile-out "$OUT/auto/profile.json" --json "$OUT/auto/chosen.json" \
  --run-dir "$OUT/auto/chosen" > "$OUT/auto/chosen.log" 2>&1 || {
  echo "   FAILED"; tail -5 "$OUT/auto/chosen.log"; exit 1; }
grep -v '^step' "$OUT/auto/chosen.log" | sed 's/^/   /'
CHOSEN=$(jq -r '"\(.stages) \(.replicas) \(.micro_batch)"' "$OUT/auto/chosen.json")
CORES=$(nproc)
# The all-reduce pipeline-launch measured on loopback, so that the two rankings agree.
read -r AR_LAT AR_MBPS < <(sed -n \
  's/^all-reduce on loopback.*latency \([0-9.]*\) ms, \([0-9.]*\) Mbit\/s$/\1 \2/p' \
  "$OUT/auto/chosen.log")
"$SIM" --auto --profile "$OUT/auto/profile.json" --workers "$G" --global-batch $B \
  --cores "$CORES" --allreduce-latency-ms "${AR_LAT:-0}" --allreduce-mbps "${AR_MBPS:-0}" \
  --top 0 > "$OUT/auto/ranking.txt"

CSV=$OUT/autoconfig.csv
echo "P,D,m,simulated_rank,simulated_samples_per_s,measured_samples_per_s,load" > "$CSV"
# The ranking's rows: rank P D m M step samples/s memory cuts...
awk '$1 ~ /^[0-9]+$/ {print $1, $2, $3, $4, $7}' "$OUT/auto/ranking.txt" > "$OUT/auto/candidates"
# Rounds over all candidates rather than repeats of one, so that a change of the machine's load
# (it is shared) falls on every candidate alike; each candidate keeps its fastest run.
for k in $(seq "$REPEATS"); do
  while read -r rank p d m sim_sps; do
    name=p${p}d${d}m${m}
    load=$(cut -d' ' -f1 /proc/loadavg)
    if ! "$LAUNCH" "${MODEL[@]}" --stages "$p" --replicas "$d" --micro-batch "$m" \
        --partition profiled --json "$OUT/auto/$name.$k.json" --run-dir "$OUT/auto/$name" \
        > "$OUT/auto/$name.$k.log" 2>&1; then
      echo "   P=$p D=$d m=$m round $k FAILED"; tail -3 "$OUT/auto/$name.$k.log"; continue
    fi
    sps=$(jq .samples_per_s "$OUT/auto/$name.$k.json")
    echo "   round $k: P=$p D=$d m=$m $(printf %.1f "$sps") samples/s (simulated $sim_sps," \
      "rank $rank; load $load)"
    echo "$name $sps $load" >> "$OUT/auto/measured"
  done < "$OUT/auto/candidates"
done
while read -r rank p d m sim_sps; do
  best=$(awk -v n="p${p}d${d}m${m}" '$1 == n && $2 > b {b = $2; l = $3} END {print b + 0, l}' \
    "$OUT/auto/measured")
  read -r sps load <<< "$best"
  [ "$sps" = 0 ] && continue  # every run of it failed (reported above)
  echo "$p,$d,$m,$rank,$sim_sps,$sps,$load" >> "$CSV"
done < "$OUT/auto/candidates"

read -r CP CD CM <<< "$CHOSEN"
CHOSEN_SPS=$(awk -F, -v p="$CP" -v d="$CD" -v m="$CM" '$1==p && $2==d && $3==m {print $6}' "$CSV")
{
  echo "Auto-config for $G workers (global batch $B, micro-batches $MICRO, $CORES cores):"
  echo "chosen P=$CP D=$CD m=$CM; measured samples/s of every candidate as a ratio to the"
  echo "chosen one's (same run, fastest of $REPEATS rounds, $STEPS steps, loopback links; load ="
  echo "the 1-minute load average when that fastest run started)."
  echo
  echo "| sim rank | P | D | m | simulated samples/s | measured samples/s | measured / chosen | load |"
  echo "|---|---|---|---|---|---|---|---|"
  tail -n +2 "$CSV" | sort -t, -k6 -gr | while IFS=, read -r p d m rank sim meas load; do
    mark=""; [ "$p $d $m" = "$CP $CD $CM" ] && mark=" **(chosen)**"
    printf '| %s | %s | %s | %s | %.1f | %.1f | %.2f%s | %s |\n' "$rank" "$p" "$d" "$m" "$sim" \
      "$meas" "$(echo "$meas / $CHOSEN_SPS" | bc -l)" "$mark" "$load"
  done
} > "$OUT/autoconfig.md"
cat "$OUT/autoconfig.md"
