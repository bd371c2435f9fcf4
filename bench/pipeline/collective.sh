#!/usr/bin/env bash
# The replicas' gradient all-reduce: c10d/gloo (buckets started during the backward) against our
# ring over the transport (after the backward), in the same run, alternating so that changes of
# the shared machine's load fall on both alike.
#
# Model: GPT, COLL_LAYERS blocks x COLL_WIDTH (default 4 x 256, vocab 64, 32 tokens: 3.2M
# parameters, a 12.6 MB gradient per replica at P=1), global batch 16, micro-batch 4; P=1 D=2
# and P=2 D=2; COLL_STEPS steps (default 8; the first excluded), COLL_REPEATS rounds (default 2).
# Per run: samples/s, mean step, the mean all-reduce time the step waits for (after the last
# backward; with gloo most buckets are already done by then) and the gloo buckets that started
# during the backward.
#
# Uses $TESSERA_BUILD/bin, writes $TESSERA_BENCH_OUT/collective/{results.csv,summary.md,*.log}.
set -uo pipefail
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}/collective
STEPS=${COLL_STEPS:-8}
REPEATS=${COLL_REPEATS:-2}
LAYERS=${COLL_LAYERS:-4}
WIDTH=${COLL_WIDTH:-256}
BUCKET_KB=${COLL_BUCKET_KB:-1024}
rm -rf "$OUT"
mkdir -p "$OUT"
CSV=$OUT/results.csv
echo "round,layout,collective,samples_per_s,step_s,allreduce_wait_s,buckets_in_backward,load" > "$CSV"
for round in $(seq 1 "$REPEATS"); do
  for layout in "1 2" "2 2"; do
    set -- $layout
    for coll in gloo tcp; do
      name="r${round}_p$1d$2_$coll"
      l=$(cut -d' ' -f1 /proc/loadavg)
      if ! "$BUILD/bin/pipeline-launch" --model gpt --layers "$LAYERS" --width "$WIDTH" --heads 4 \
          --vocab 64 --seq-len 32 --global-batch 16 --micro-batch 4 --steps "$STEPS" \
          --stages "$1" --replicas "$2" --collective "$coll" --bucket-kb "$BUCKET_KB" \
          --run-dir "$OUT/run-$name" --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1; then
        echo "$name FAILED"; tail -5 "$OUT/$name.log"; continue
      fi
      /usr/bin/python3 - "$OUT" "$name" "$round" "p$1d$2" "$coll" "$l" >> "$CSV" <<'PY'
import glob, json, sys
out, name, rnd, layout, coll, load = sys.argv[1:]
j = json.load(open(f"{out}/{name}.json"))
waits, buckets = [], []
for f in glob.glob(f"{out}/run-{name}/report-*.json"):
    steps = json.load(open(f))["steps"][1:]
    waits += [s["allreduce_s"] for s in steps]
    buckets += [s.get("buckets_overlapped", 0) for s in steps]
print(f"{rnd},{layout},{coll},{j['samples_per_s']:.1f},{j['step_s']:.4f},"
      f"{sum(waits) / len(waits):.4f},{sum(buckets) / len(buckets):.1f},{load}")
PY
      tail -1 "$CSV"
    done
  done
done
{
  echo "# gloo vs our ring, $(date -u '+%F %H:%M') UTC, $(nproc) cores, shared machine"
  echo
  echo "| round | layout | collective | samples/s | step s | all-reduce wait s | buckets in backward | load |"
  echo "|---|---|---|---|---|---|---|---|"
  tail -n +2 "$CSV" | tr ',' '|' | sed 's/^/| /; s/$/ |/'
} > "$OUT/summary.md"
cat "$OUT/summary.md"
