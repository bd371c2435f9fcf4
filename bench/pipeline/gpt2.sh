#!/usr/bin/env bash
# GPT-2-small shape (12 blocks x 768, 12 heads, vocab 50257, 64 tokens; 124M parameters in the
# blocks and embeddings plus a 38.6M LM head: 163M) on this machine: peak RSS per worker and
# samples/s of
#   plain   a plain libtorch loop, one process, 2 intra-op threads (bench/pipeline/plain_loop)
#   p1d1    the pipeline trainer with one worker
#   auto2   pipeline-launch --auto --workers 2: profiled here, configured by simulation, the
#           step time and memory predicted BEFORE running, then run (P=2 D=1 or P=1 D=2)
#   p2d1    two stages, one replica, cut by the profile
#   p2d1u   two stages cut uniformly by unit count (Varuna's rule): embedding + 6 blocks |
#           6 blocks + LM head, which also halves the parameters (81.1M each)
#   p1d2    one stage, two replicas (all-reduce of the whole gradient every step)
# all with SGD and momentum, the same global batch, measured in the same run, one after the
# other. Keep it short: the machine is shared (uptime is recorded with every run).
#
# Uses $TESSERA_BUILD/bin, writes $TESSERA_BENCH_OUT/gpt2/{results.csv,summary.md,*.log,*.json}.
# Knobs: GPT2_STEPS (default 3; the first step is excluded from the step time),
# GPT2_BATCH (global batch, default 8), GPT2_MICRO (micro-batch, default 2), GPT2_ONLY_MEMORY=1
# (only p1d1 and p2d1u: the peak-RSS ratio, which the machine's load does not change).
set -uo pipefail
source "$(dirname "$0")/gpt2_common.sh"
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}/gpt2
MICRO=${GPT2_MICRO:-2}
mkdir -p "$OUT"
gpt2_launch "$MICRO" 900
CSV=$OUT/results.csv
echo "name,workers,samples_per_s,step_s,predicted_step_s,peak_rss_mb_max,peak_rss_mb_all,predicted_memory_mb,load" > "$CSV"


if [ -z "${GPT2_ONLY_MEMORY:-}" ]; then
echo "== plain: libtorch loop, 2 threads (load $(load))"
l=$(load)
"$BUILD/bin/pipeline-plain-loop" "${SHAPE[@]}" --global-batch "$BATCH" --steps "$STEPS" \
  --threads 2 --json "$OUT/plain.json" | tee "$OUT/plain.log"
/usr/bin/python3 - "$OUT/plain.json" "$l" >> "$CSV" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"plain,1,{j['samples_per_s']:.4f},{j['step_s']:.4f},,{j['peak_rss_mb']:.0f},{j['peak_rss_mb']:.0f},,{sys.argv[2]}")
EOF
fi

run() {  # name workers [flags...]
  local name=$1 workers=$2
  shift 2
  local l
  l=$(load)
  echo "== $name (load $l)"
  if ! "${LAUNCH[@]}" --run-dir "$OUT/run-$name" --json "$OUT/$name.json" "$@" \
      > "$OUT/$name.log" 2>&1; then
    echo "   FAILED, see $OUT/$name.log"; tail -5 "$OUT/$name.log"; return
  fi
  grep -E "^(result|peak RSS|predicted)" "$OUT/$name.log"
  /usr/bin/python3 - "$OUT/$name.json" "$name" "$workers" "$l" >> "$CSV" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
rss = j["peak_rss_mb"]
pred = j.get("predicted_step_s") or ""
mem = j.get("predicted_memory_mb") or ""
print(f"{sys.argv[2]},{sys.argv[3]},{j['samples_per_s']:.4f},{j['step_s']:.4f},{pred},"
      f"{max(rss):.0f},{'/'.join(f'{x:.0f}' for x in rss)},{mem},{sys.argv[4]}")
EOF
}

run p1d1 1 --stages 1 --replicas 1
[ -n "${GPT2_ONLY_MEMORY:-}" ] && { run p2d1u 2 --stages 2 --replicas 1 --partition uniform; exit 0; }
run auto2 2 --auto --workers 2 --auto-micro-batches "$MICRO" --cores 2
run p2d1 2 --stages 2 --replicas 1 --partition profiled
run p2d1u 2 --stages 2 --replicas 1 --partition uniform
run p1d2 2 --stages 1 --replicas 2

{
  echo "# GPT-2-small shape, $(date -u +%F), $(nproc) cores, shared machine"
  echo
  echo "global batch $BATCH, micro-batch $MICRO, $STEPS steps (first excluded), SGD + momentum"
  echo
  echo "| run | workers | samples/s | step s | predicted step s | peak RSS MB (max) | per worker | predicted MB | load |"
  echo "|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$CSV" | tr ',' '|' | sed 's/^/| /; s/$/ |/'
} > "$OUT/summary.md"
cat "$OUT/summary.md"
