#!/usr/bin/env bash
# Session 15's pipeline quiet window (issue #14): the messages' delivery delay at P = 2 (the
# stage-boundary term the simulator lacked in session 14), and a longer toy profile. Cases,
# interleaved round by round so a change of the host's speed falls on all alike:
#   toy-w2-2.1.8        P=2 D=1 m=8, profiles of 1 s (the default)
#   toy-w2-2.1.8+ps3    the same, every profile timed 3 s at least (--profile-seconds 3)
#   toy-w1, toy-w1+ps3  one worker, 1 s and 3 s profiles
# every run `--auto --speed-probe --reprofile-before-run` (predict.sh), PREDICT_ROUNDS rounds,
# no run started after DEADLINE. Records the load (1-minute average and the busiest processes
# every 5 s) and /proc/stat over the window; then the per-component breakdown.
# Usage: TESSERA_BUILD=<build copied aside> OUT=<dir> DEADLINE=HH:MM:SS [PREDICT_ROUNDS=12] \
#        bench/pipeline/window_s15.sh
set -uo pipefail
: "${TESSERA_BUILD:?}" "${OUT:?}" "${DEADLINE:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
head -1 /proc/stat > "$OUT/procstat_start.txt"
( while :; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg) | $(top -bn1 -o %CPU | sed -n 8,10p | awk '{print $9, $12}' | tr '\n' ';')"; sleep 5; done ) > "$OUT/load.log" 2>&1 &
SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null' EXIT
echo "window start $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/window.log"
TESSERA_BENCH_OUT=$OUT PREDICT_ROUNDS=${PREDICT_ROUNDS:-12} PREDICT_DEADLINE=$DEADLINE \
  PREDICT_CASES="toy-w2-2.1.8 toy-w2-2.1.8+ps3 toy-w1 toy-w1+ps3" \
  "$HERE/predict.sh" 2>&1 | tee -a "$OUT/window.log"
echo "window end $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/window.log"
head -1 /proc/stat > "$OUT/procstat_end.txt"
kill $SAMPLER 2>/dev/null
/usr/bin/python3 "$HERE/breakdown.py" "$OUT/predict" "$OUT/breakdown.csv" > "$OUT/breakdown.txt"
