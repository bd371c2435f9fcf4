#!/usr/bin/env bash
# Session 13's pipeline quiet window (14:25-14:38 UTC), prepared beforehand: GPT-2-small shape,
# the plain 2-thread loop against the 2-worker layouts and the no-communication bound (pair), in
# rotated rounds; then P=4 D=1 in four network namespaces once; then the toy's step predicted
# before running (raw and calibrated) in interleaved rounds until the deadline. A sampler logs
# the load every 5 s and the busiest processes every 30 s. Usage:
#   TESSERA_BUILD=build/release BASE_BUILD=<binaries before a change> OUT=/tmp/s13-window \
#     DEADLINE=14:37:30 bench/pipeline/window_s13.sh
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${TESSERA_BUILD:?}" "${OUT:?}"
DEADLINE=${DEADLINE:-14:37:30}
end_s=$(date -u -d "$DEADLINE" +%s)
left() { echo $((end_s - $(date -u +%s))); }
mkdir -p "$OUT"
cat /proc/stat | head -1 > "$OUT/procstat_start.txt"
( while :; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 5; done ) > "$OUT/load.log" &
LOADPID=$!
( while :; do echo "== $(date -u +%T)"; ps -eo pcpu,pid,comm --sort=-pcpu | head -6; sleep 30; done ) > "$OUT/ps.log" &
PSPID=$!
trap 'kill $LOADPID $PSPID 2>/dev/null; cat /proc/stat | head -1 > "$OUT/procstat_end.txt"' EXIT

# run_until SECONDS CMD...: CMD in a session of its own, killed with all its processes (the
# launcher, its workers) if it is still running after SECONDS.
run_until() {
  local limit=$1 pid waited=0
  shift
  setsid "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
      echo "stopping $* at $(date -u +%T): out of time"
      kill -TERM -- "-$pid" 2>/dev/null; sleep 3; kill -KILL -- "-$pid" 2>/dev/null
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
  wait "$pid" 2>/dev/null
}

echo "start $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg), $(left) s left"
# 1. P=4 D=1 in four network namespaces, once (about 1 min when quiet), then the throughput
# rounds (about 85 s each when quiet).
TESSERA_BENCH_OUT=$OUT/netns GPT2_ROUNDS=0 GPT2_STEPS=3 GPT2_NETNS=1 \
  run_until $(($(left) - 400)) bash "$HERE/gpt2_throughput.sh"
echo "namespaces done $(date -u +%T), $(left) s left"
TESSERA_BENCH_OUT=$OUT GPT2_ROUNDS=${W_ROUNDS:-4} GPT2_STEPS=3 \
  GPT2_VARIANTS="pair p1d2m4 p2d1 p2d1f p2d1base" GPT2_BASE_BUILD=${BASE_BUILD:?} \
  run_until $(($(left) - 150)) bash "$HERE/gpt2_throughput.sh"
echo "throughput done $(date -u +%T), $(left) s left"
# 2. The toy's prediction, raw and calibrated, in rounds of three cases while time is left
# (a round takes about 45 s when quiet).
round=0
while [ "$(left)" -gt 60 ]; do
  round=$((round + 1))
  TESSERA_BENCH_OUT=$OUT/predict-$round PREDICT_ROUNDS=1 \
    PREDICT_CASES="toy-w1 toy-w2-1.2.8 toy-w2-2.1.8" run_until $(($(left) - 5)) \
    bash "$HERE/predict.sh" > "$OUT/predict-$round.out" 2>&1
  grep '^round' "$OUT/predict-$round.out"
done
echo "end $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg)"
