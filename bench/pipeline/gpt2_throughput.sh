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
# and, with GPT2_VARIANTS (space-separated, default "p2d1"; each round runs plain and every
# variant, the order rotated by one per round and reversed in even rounds, so that every pair
# meets in both orders):
#   p1d2m2  pipeline-launch --stages 1 --replicas 2 --micro-batch 2 (session 12's P=1 D=2)
#   p1d2m4  the same with --micro-batch 4: one micro-batch per replica per step
#   p2d1m4  P=2 D=1 --cuts 0,8,14 --micro-batch 4 (2 micro-batches)
#   p2d1f   P=2 D=1 --cuts 0,8,14 --micro-batch 2 --schedule 1f1b: no recompute (Varuna's
#           recompute saves activation memory a GPU lacks; here memory is not what binds)
#   p2d1base  p2d1 with the binaries in $GPT2_BASE_BUILD/bin (an A/B of a change in one run)
#   pair    no pipeline at all: two `pipeline-plain-loop --threads 1 --global-batch 4` at once,
#           the bound of any 2-worker data-parallel layout on these cores (each core trains its
#           half of the batch and steps its own optimizer; no communication, no bubble).
#           samples/s = the sum of both, CPU per step = the sum, peak RSS = the larger.
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

pair() {  # round: two one-thread plain loops over half the batch each, at once
  local before after
  before=$(load)
  for h in a b; do
    "$BUILD/bin/pipeline-plain-loop" "${SHAPE[@]}" --global-batch $((BATCH / 2)) --steps "$STEPS" \
      --threads 1 --json "$OUT/pair-$h.$1.json" > "$OUT/pair-$h.$1.log" 2>&1 &
  done
  wait || true
  after=$(load)
  [ -s "$OUT/pair-a.$1.json" ] && [ -s "$OUT/pair-b.$1.json" ] || { echo "round $1 pair FAILED"; return; }
  jq -s -r --arg r "$1" --arg b "$before" --arg a "$after" \
    '"\($r),pair,\(.[0].samples_per_s + .[1].samples_per_s),\([.[0].step_s, .[1].step_s] | max),\(.[0].cpu_step_s + .[1].cpu_step_s),\([.[0].peak_rss_mb, .[1].peak_rss_mb] | max),\($b),\($a)"' \
    "$OUT/pair-a.$1.json" "$OUT/pair-b.$1.json" >> "$CSV"
  tail -1 "$CSV"
}

run_variant() {  # round name
  case $2 in
    plain) plain "$1" ;;
    pair) pair "$1" ;;
    p2d1) gpt2_launch 2 1800; pipeline "$1" p2d1 --stages 2 --replicas 1 --cuts 0,8,14 "${PIPE_PIN[@]}" ;;
    p2d1m4) gpt2_launch 4 1800; pipeline "$1" p2d1m4 --stages 2 --replicas 1 --cuts 0,8,14 "${PIPE_PIN[@]}" ;;
    p2d1base) BUILD=${GPT2_BASE_BUILD:?set GPT2_BASE_BUILD for p2d1base} gpt2_launch 2 1800
      pipeline "$1" p2d1base --stages 2 --replicas 1 --cuts 0,8,14 "${PIPE_PIN[@]}" ;;
    p2d1f) gpt2_launch 2 1800; pipeline "$1" p2d1f --stages 2 --replicas 1 --cuts 0,8,14 --schedule 1f1b "${PIPE_PIN[@]}" ;;
    p1d2m2) gpt2_launch 2 1800; pipeline "$1" p1d2m2 --stages 1 --replicas 2 "${PIPE_PIN[@]}" ;;
    p1d2m4) gpt2_launch 4 1800; pipeline "$1" p1d2m4 --stages 1 --replicas 2 "${PIPE_PIN[@]}" ;;
    *) echo "unknown variant $2" ;;
  esac
}

read -r -a ORDER <<< "plain ${GPT2_VARIANTS:-p2d1}"
for round in $(seq "$ROUNDS"); do
  n=${#ORDER[@]}
  seq_=()
  for i in $(seq 0 $((n - 1))); do seq_+=("${ORDER[$(((i + round - 1) % n))]}"); done
  if [ $((round % 2)) = 0 ]; then
    rev=()
    for ((i = n - 1; i >= 0; i--)); do rev+=("${seq_[$i]}"); done
    seq_=("${rev[@]}")
  fi
  echo "round $round: ${seq_[*]}"
  for v in "${seq_[@]}"; do run_variant "$round" "$v"; done
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
    gpt2_launch 2 1800
    pipeline netns p4d1 --stages 4 --replicas 1 --partition uniform --hosts "$OUT/hosts.txt" \
      --base-port $((20000 + RANDOM % 20000))
    NETNS_LINE=$(grep ',p4d1,' "$CSV" | tail -1)
  else
    NETNS_LINE="namespace setup failed (root, iproute2 needed)"
  fi
fi

/usr/bin/python3 "$(dirname "$0")/ratio_summary.py" "$CSV" "$NETNS_LINE" > "$OUT/summary.md"
cat "$OUT/summary.md"
