#!/usr/bin/env bash
# Session 14's pipeline quiet window (issue #14): the toy GPT's step time predicted before
# running, unpinned (as sessions 11-13) and with --pin-workers (worker r and the profile's copy r
# on processor r), interleaved case by case so that a change of the host's speed falls on both.
# Same layouts as session 13's 27 runs (toy-w1, toy-w2-1.2.8, toy-w2-2.1.8), PREDICT_ROUNDS
# rounds of all six cases, no run started after DEADLINE. Records the load (1-minute average and
# the busiest processes every 5 s) and /proc/stat over the window; then the per-component
# breakdown (bench/pipeline/breakdown.py).
# Usage: TESSERA_BUILD=<build copied aside> OUT=<dir> DEADLINE=HH:MM:SS [PREDICT_ROUNDS=9] \
#        bench/pipeline/window_s14.sh
set -uo pipefail
: "${TESSERA_BUILD:?}" "${OUT:?}" "${DEADLINE:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
cat /proc/stat | head -1 > "$OUT/procstat_start.txt"
( while :; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg) | $(top -bn1 -o %CPU | sed -n 8,10p | awk '{print $9, $12}' | tr '\n' ';')"; sleep 5; done ) > "$OUT/load.log" 2>&1 &
SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null' EXIT
echo "window start $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/window.log"
TESSERA_BENCH_OUT=$OUT PREDICT_ROUNDS=${PREDICT_ROUNDS:-9} PREDICT_DEADLINE=$DEADLINE \
  PREDICT_CASES="toy-w1 toy-w1+pin toy-w2-1.2.8 toy-w2-1.2.8+pin toy-w2-2.1.8 toy-w2-2.1.8+pin" \
  "$HERE/predict.sh" 2>&1 | tee -a "$OUT/window.log"
echo "window end $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/window.log"
cat /proc/stat | head -1 > "$OUT/procstat_end.txt"
kill $SAMPLER 2>/dev/null
/usr/bin/python3 "$HERE/breakdown.py" "$OUT/predict" "$OUT/breakdown.csv" > "$OUT/breakdown.txt"
