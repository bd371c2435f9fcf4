#!/usr/bin/env bash
# A pipeline quiet window (issue #14): the step time predicted before running against the
# measured one, with the session's choices as knobs. Sessions 14 and 15 ran it through
# window_s14.sh and window_s15.sh, which are now this script with their cases and rounds.
#
# 1. The rounds: `predict.sh` over WINDOW_CASES, interleaved round by round (so that a change of
#    the host's speed falls on every case alike), PREDICT_ROUNDS rounds, no run started after
#    DEADLINE. Every run `--auto --speed-probe` (and `--reprofile-before-run` for the models
#    PREDICT_REPROFILE names, default the toy), see predict.sh for the case names.
# 2. Optionally, WINDOW_AFTER_CASES once each after the rounds (e.g. gpt2-w2: GPT-2-small on 2
#    workers), in $OUT/after, none started after WINDOW_END less WINDOW_AFTER_MIN_S, and every
#    process of theirs stopped at WINDOW_END (so the window ends on time).
# Over the whole window: the load (1-minute average and the three busiest processes every 5 s)
# and /proc/stat at both ends; afterwards the per-component breakdown (breakdown.py).
#
# Knobs (environment):
#   TESSERA_BUILD        build directory with bin/pipeline-launch and bin/pipeline-worker (required)
#   OUT                  output directory (required); the rounds write $OUT/predict, as before
#   DEADLINE             no round's run starts after it (`date -d` reads it; required)
#   WINDOW_CASES         default "toy-w2-2.1.8 toy-w2-2.1.8+ps3 toy-w1 toy-w1+ps3" (session 15's)
#   PREDICT_ROUNDS       default 12
#   PREDICT_REPROFILE    default toy (predict.sh's knob)
#   WINDOW_AFTER_CASES   default none
#   WINDOW_END           required with WINDOW_AFTER_CASES: the window's hard end
#   WINDOW_AFTER_MIN_S   default 90: an after-case starts only with this much time left
# Usage: TESSERA_BUILD=build/release OUT=/tmp/w DEADLINE=19:07:00 \
#        [WINDOW_AFTER_CASES=gpt2-w2 WINDOW_END=19:09:50] bench/pipeline/window.sh
set -uo pipefail
: "${TESSERA_BUILD:?}" "${OUT:?}" "${DEADLINE:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
CASES=${WINDOW_CASES:-toy-w2-2.1.8 toy-w2-2.1.8+ps3 toy-w1 toy-w1+ps3}
AFTER=${WINDOW_AFTER_CASES:-}
if [ -n "$AFTER" ]; then
  : "${WINDOW_END:?set WINDOW_END with WINDOW_AFTER_CASES}"
  end_s=$(date -d "$WINDOW_END" +%s) || exit 1
fi
mkdir -p "$OUT"
head -1 /proc/stat > "$OUT/procstat_start.txt"
( while :; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg) | $(top -bn1 -o %CPU | sed -n 8,10p | awk '{print $9, $12}' | tr '\n' ';')"; sleep 5; done ) > "$OUT/load.log" 2>&1 &
SAMPLER=$!
stop_sampler() { if [ "${SAMPLER:-0}" -gt 0 ]; then kill "$SAMPLER" 2>/dev/null; fi; }
trap stop_sampler EXIT
echo "window start $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg); cases: $CASES; after: ${AFTER:-none}" | tee "$OUT/window.log"
TESSERA_BENCH_OUT=$OUT PREDICT_ROUNDS=${PREDICT_ROUNDS:-12} PREDICT_DEADLINE=$DEADLINE \
  PREDICT_CASES="$CASES" "$HERE/predict.sh" 2>&1 | tee -a "$OUT/window.log"
echo "rounds end $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/window.log"

# run_until END CMD...: CMD in a session of its own; at END (epoch seconds) it and every process
# in its session (the launcher; the workers die with it) are stopped.
run_until() {
  local end=$1 pid
  shift
  setsid "$@" &
  pid=$!
  if [ "${pid:-0}" -le 0 ]; then return 1; fi
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$end" ]; then
      echo "stopping $* at $(date +%T): the window's end"
      kill -TERM -- "-$pid" 2>/dev/null
      sleep 3
      kill -KILL -- "-$pid" 2>/dev/null
      break
    fi
    sleep 1
  done
  wait "$pid"
}

if [ -n "$AFTER" ]; then
  for case in $AFTER; do
    left=$((end_s - $(date +%s)))
    if [ "$left" -lt "${WINDOW_AFTER_MIN_S:-90}" ]; then
      echo "not starting $case: $left s left before $WINDOW_END" | tee -a "$OUT/window.log"
      continue
    fi
    echo "$case start $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg), $left s left" | tee -a "$OUT/window.log"
    TESSERA_BENCH_OUT=$OUT/after/$case PREDICT_ROUNDS=1 PREDICT_CASES=$case \
      run_until "$end_s" "$HERE/predict.sh" 2>&1 | tee -a "$OUT/window.log"
  done
fi

echo "window end $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/window.log"
head -1 /proc/stat > "$OUT/procstat_end.txt"
stop_sampler
/usr/bin/python3 "$HERE/breakdown.py" "$OUT/predict" "$OUT/breakdown.csv" > "$OUT/breakdown.txt"
