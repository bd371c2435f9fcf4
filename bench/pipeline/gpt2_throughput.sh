#!/usr/bin/env bash
# GPT-2-small shape: the pipeline's 2 workers against a plain libtorch loop with 2 threads,
# as a sound comparison on a shared machine: GPT2_ROUNDS rounds, each running both in
# alternating order (ABBA: plain first in odd rounds, the pipeline first in even ones), so that
# a drift of the machine's load falls on both alike; the ratio pipeline / plain of each round,
# and their geometric mean with a 95 % t-interval over the rounds (on the log ratios). Both
# trainers report their CPU time per step (all threads / all worker processes,
# CLOCK_PROCESS_CPUTIME_ID) besides wall time: CPU time does not grow when other engineers'
# processes take the cores, so samples per CPU-second is compared the same way, and CPU / wall
# shows how much of the 2 cores each run got.
#   plain   bench/pipeline/plain_loop_main.cc, one process, 2 intra-op threads, one forward
#           and backward over the global batch, torch::optim::SGD with momentum
#   p2d1    pipeline-launch --stages 2 --cuts 0,8,14 (the memory-balanced cut of the docs),
#           micro-batch 2, SGD with momentum
# With GPT2_NETNS=1 (root), then once: P=4 D=1 with every worker in its own network namespace
# on a bridge (veth links, no rate limit), the 4-worker layout the issue asks for, on the same
# 2 cores.
#
# Uses $TESSERA_BUILD/bin, writes $TESSERA_BENCH_OUT/gpt2-throughput/{rounds.csv,summary.md,...}.
# Knobs: GPT2_ROUNDS (default 3), GPT2_STEPS (3; the first step is excluded), GPT2_BATCH (8),
# GPT2_PIN=1: the plain loop under `taskset -c 0,1`, pipeline worker r under `taskset -c r`
# (through the launcher's hosts file: "127.0.0.1 taskset -c r").
set -uo pipefail
source "$(dirname "$0")/gpt2_common.sh"
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}/gpt2-throughput
ROUNDS=${GPT2_ROUNDS:-3}
mkdir -p "$OUT"
gpt2_launch 2 1800
CSV=$OUT/rounds.csv
echo "round,run,samples_per_s,step_s,cpu_step_s,peak_rss_mb,load_before,load_after" > "$CSV"
PLAIN_PREFIX=()
PIPE_PIN=()
if [ -n "${GPT2_PIN:-}" ]; then
  PLAIN_PREFIX=(taskset -c 0,1)
  printf '127.0.0.1 taskset -c 0\n127.0.0.1 taskset -c 1\n' > "$OUT/pin-hosts.txt"
  PIPE_PIN=(--hosts "$OUT/pin-hosts.txt" --base-port $((20000 + RANDOM % 20000)))
fi

plain() {  # round
  local before after
  before=$(load)
  "${PLAIN_PREFIX[@]}" "$BUILD/bin/pipeline-plain-loop" "${SHAPE[@]}" --global-batch "$BATCH" --steps "$STEPS" \
    --threads 2 --json "$OUT/plain.$1.json" > "$OUT/plain.$1.log" 2>&1 || {
    echo "round $1 plain FAILED"; return; }
  after=$(load)
  jq -r --arg r "$1" --arg b "$before" --arg a "$after" \
    '"\($r),plain,\(.samples_per_s),\(.step_s),\(.cpu_step_s),\(.peak_rss_mb),\($b),\($a)"' \
    "$OUT/plain.$1.json" >> "$CSV"
  tail -1 "$CSV"
}

pipeline() {  # round name [flags]
  local round=$1 name=$2 before after
  shift 2
  before=$(load)
  "${LAUNCH[@]}" --run-dir "$OUT/run-$name.$round" --json "$OUT/$name.$round.json" "$@" \
    > "$OUT/$name.$round.log" 2>&1 || {
    echo "round $round $name FAILED"; tail -3 "$OUT/$name.$round.log"; return; }
  after=$(load)
  jq -r --arg r "$round" --arg n "$name" --arg b "$before" --arg a "$after" \
    '"\($r),\($n),\(.samples_per_s),\(.step_s),\(.cpu_step_s),\(.peak_rss_mb | max),\($b),\($a)"' \
    "$OUT/$name.$round.json" >> "$CSV"
  tail -1 "$CSV"
}

for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then
    plain "$round"
    pipeline "$round" p2d1 --stages 2 --replicas 1 --cuts 0,8,14 "${PIPE_PIN[@]}"
  else
    pipeline "$round" p2d1 --stages 2 --replicas 1 --cuts 0,8,14 "${PIPE_PIN[@]}"
    plain "$round"
  fi
done

NETNS_LINE="not run (GPT2_NETNS unset)"
if [ -n "${GPT2_NETNS:-}" ]; then
  cleanup() {
    for i in 0 1 2 3; do ip netns del "plgpt$i" 2>/dev/null; done
    ip link del plgptbr 2>/dev/null
    true
  }
  trap cleanup EXIT
  cleanup
  : > "$OUT/hosts.txt"
  ok=1
  ip link add plgptbr type bridge && ip link set plgptbr up || ok=0
  for i in 0 1 2 3; do
    [ $ok = 1 ] || break
    { ip netns add "plgpt$i" && ip link add "plgv$i" type veth peer name "plgb$i" &&
      ip link set "plgv$i" netns "plgpt$i" && ip link set "plgb$i" master plgptbr &&
      ip link set "plgb$i" up && ip -n "plgpt$i" addr add "10.77.0.$((i + 1))/24" dev "plgv$i" &&
      ip -n "plgpt$i" link set "plgv$i" up && ip -n "plgpt$i" link set lo up; } || ok=0
    echo "10.77.0.$((i + 1)) ip netns exec plgpt$i" >> "$OUT/hosts.txt"
  done
  if [ $ok = 1 ]; then
    pipeline netns p4d1 --stages 4 --replicas 1 --partition uniform --hosts "$OUT/hosts.txt" \
      --base-port $((20000 + RANDOM % 20000))
    NETNS_LINE=$(grep ',p4d1,' "$CSV" | tail -1)
  else
    NETNS_LINE="namespace setup failed (root, iproute2 needed)"
  fi
fi

/usr/bin/python3 "$(dirname "$0")/ratio_summary.py" "$CSV" "$NETNS_LINE" > "$OUT/summary.md"
cat "$OUT/summary.md"
