#!/usr/bin/env bash
# The link the auto-config simulates, measured by pipeline-launch itself (pipeline/link_rate.h)
# against the same link given by hand, on a tbf-shaped link between two network namespaces.
#
# Two "hosts" (namespaces on a bridge, tbf rate $LINK_RATE burst 32kb latency 400ms on each
# veth, or per host: LINK_RATES="20mbit 5mbit" shapes host 0's egress at 20 and host 1's at 5);
# the toy GPT (4 blocks x 64, 32 tokens, global batch 32) as P=2 D=1 m=4 (--auto-pick, so the
# link matters: one worker alone would not use it). Run "measured": --hosts --auto without
# --link-mbps (the launcher probes each ordered host pair, 0 -> 1 and 1 -> 0, and simulates
# those links); run "given": --link-mbps <host 0's rate> for every link. Each prints its
# prediction (before running) against the measured step. Needs root (ip, tc). Output in
# $TESSERA_BENCH_OUT/link_auto.
set -uo pipefail
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT}/link_auto
RATE=${LINK_RATE:-20mbit}
read -r -a RATES <<< "${LINK_RATES:-$RATE $RATE}"
MBPS=${RATES[0]%mbit}
mkdir -p "$OUT"
cleanup() {
  for i in 0 1; do ip netns del "pllink$i" 2>/dev/null; done
  ip link del pllinkbr 2>/dev/null
  true
}
trap cleanup EXIT
cleanup
ip link add pllinkbr type bridge && ip link set pllinkbr up || exit 1
: > "$OUT/hosts.txt"
for i in 0 1; do
  ip netns add "pllink$i" && ip link add "pllv$i" type veth peer name "pllb$i" &&
  ip link set "pllv$i" netns "pllink$i" && ip link set "pllb$i" master pllinkbr &&
  ip link set "pllb$i" up && ip -n "pllink$i" addr add "10.82.0.$((i + 1))/24" dev "pllv$i" &&
  ip -n "pllink$i" link set "pllv$i" up && ip -n "pllink$i" link set lo up &&
  ip netns exec "pllink$i" tc qdisc add dev "pllv$i" root tbf rate "${RATES[$i]}" burst 32kb \
    latency 400ms || exit 1
  echo "10.82.0.$((i + 1)) ip netns exec pllink$i" >> "$OUT/hosts.txt"
done
TOY=(--model gpt --layers 4 --width 64 --heads 4 --vocab 64 --seq-len 32 --global-batch 32
     --steps 20 --auto-micro-batches 4 --auto --workers 2 --auto-pick 2,1,4
     --hosts "$OUT/hosts.txt" --timeout 600)
for run in measured given; do
  extra=()
  [ "$run" = given ] && extra=(--link-mbps "$MBPS")
  echo "== $run (load $(cut -d' ' -f1 /proc/loadavg))"
  "$BUILD/bin/pipeline-launch" "${TOY[@]}" "${extra[@]}" --base-port $((30000 + RANDOM % 20000)) \
    --run-dir "$OUT/run-$run" --json "$OUT/$run.json" > "$OUT/$run.log" 2>&1 ||
    { echo "FAILED"; tail -5 "$OUT/$run.log"; continue; }
  grep -E '^link |^result|^predicted' "$OUT/$run.log"
done
echo "load at the end $(cut -d' ' -f1 /proc/loadavg)"
