#!/usr/bin/env bash
# Pipeline benchmark: samples/s of Varuna vs GPipe vs 1F1B on the same model and workers, with
# unlimited (loopback) links and with tbf rate-limited links between network namespaces;
# measured vs simulated step time and bubble; pipeline efficiency against the ideal
# (single-worker throughput x workers), all measured in this run.
#
# Uses $TESSERA_BUILD/bin/pipeline-launch, writes to $TESSERA_BENCH_OUT:
#   results.csv, summary.md, throughput.png, sim_vs_measured.png, runs/<name>.json
# Knobs (environment): PIPELINE_BENCH_STEPS (default 10), PIPELINE_BENCH_REPEATS (default 2;
# the machine is shared, so each configuration runs that often and the fastest run is kept,
# with the simulation of that same run), PIPELINE_BENCH_RATE (tbf rate, default 20mbit),
# PIPELINE_BENCH_QUEUE (tbf latency, i.e. queue length, default 400ms: deep enough that the
# shaper never drops for this model; the simulator models lossless links, and the drops of
# each run are counted in the table). Needs root for the namespace part; without it that part
# is skipped, loudly. The rate-limited runs go first: they are dominated by network time, so
# other work on the machine disturbs them least. Then autoconfig.sh (about 2 min more).
set -uo pipefail
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
LAUNCH=$BUILD/bin/pipeline-launch
STEPS=${PIPELINE_BENCH_STEPS:-10}
REPEATS=${PIPELINE_BENCH_REPEATS:-2}
RATE=${PIPELINE_BENCH_RATE:-20mbit}
RATE_MBPS=${RATE%mbit}
QUEUE=${PIPELINE_BENCH_QUEUE:-400ms}
mkdir -p "$OUT/runs"
[ -x "$LAUNCH" ] || { echo "bench: $LAUNCH not built"; exit 1; }

# One model for every run: a 4-block GPT, width 64, 32 tokens; 8 micro-batches of 4 per replica.
MODEL=(--model gpt --layers 4 --width 64 --heads 4 --vocab 64 --seq-len 32 --micro-batch 4
       --global-batch 32 --steps "$STEPS" --timeout 300)
CSV=$OUT/results.csv
echo "name,links,schedule,stages,replicas,workers,samples_per_s,step_s,sim_step_s,sim_error_pct,bubble_stage0,sim_bubble_stage0,efficiency,pulled_ahead,load,drops" > "$CSV"

BASE_SPS=""
NS_OK=0    # the namespaces exist (their shapers' drop counters can be read)
TBF_RAN=0  # the rate-limited part ran
drops() {  # packets the namespaces' shapers dropped so far
  local i n=0 d
  if [ $NS_OK = 1 ]; then
    for i in 0 1 2 3; do
      d=$(ip netns exec "plbench$i" tc -s qdisc show dev "plbv$i" | sed -n 's/.*dropped \([0-9]*\).*/\1/p')
      n=$((n + ${d:-0}))
    done
  fi
  echo $n
}
run() {  # name links schedule stages replicas [extra launch flags...]
  local name=$1 links=$2 schedule=$3 stages=$4 replicas=$5
  shift 5
  local json=$OUT/runs/$name.json
  local load
  echo "== $name: $schedule P=$stages D=$replicas, links $links (load $(cut -d' ' -f1 /proc/loadavg))"
  local best=0 k d0 dropped
  for k in $(seq "$REPEATS"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    d0=$(drops)
    if ! "$LAUNCH" "${MODEL[@]}" --schedule "$schedule" --stages "$stages" \
        --replicas "$replicas" --run-dir "$OUT/runs/$name" --json "$json.$k" "$@" \
        > "$OUT/runs/$name.$k.log" 2>&1; then
      echo "   FAILED (see $OUT/runs/$name.$k.log)"; tail -3 "$OUT/runs/$name.$k.log"; return 1
    fi
    dropped=$(($(drops) - d0))
    grep '^result' "$OUT/runs/$name.$k.log" | sed "s/^/   run $k (load $load, $dropped packets dropped): /"
    jq --argjson load "$load" --argjson drops "$dropped" '. + {load: $load, drops: $drops}' \
      "$json.$k" > "$json.$k.tmp" && mv "$json.$k.tmp" "$json.$k"
    if [ "$(jq --argjson b "$best" '.samples_per_s > $b' "$json.$k")" = true ]; then
      best=$(jq .samples_per_s "$json.$k")
      cp "$json.$k" "$json"
    fi
  done
  local workers=$((stages * replicas))
  local base=${BASE_SPS:-0}
  jq -r --arg name "$name" --arg links "$links" --argjson workers "$workers" \
     --argjson base "$base" \
     '[$name, $links, .schedule, .stages, .replicas, $workers, .samples_per_s, .step_s,
       .sim_step_s, (100 * (.sim_step_s / .step_s - 1)), .bubble_stage0, .sim_bubble_stage0,
       (if $base > 0 then .samples_per_s / ($base * $workers) else 1 end), .pulled_ahead,
       .load, .drops]
     | @csv' "$json" >> "$CSV"
}

echo "pipeline bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $STEPS steps per run"
# Baseline: the whole model in one worker, same global batch and micro-batching.
run single loopback varuna 1 1 --link-latency-ms 0.05 || exit 1
BASE_SPS=$(jq .samples_per_s "$OUT/runs/single.json")

# Rate-limited links: one network namespace per worker on a bridge, tbf on every egress.
cleanup() {
  for i in 0 1 2 3; do ip netns del "plbench$i" 2>/dev/null; done
  ip link del plbenchbr 2>/dev/null
  true
}
setup_namespaces() {
  cleanup
  ip link add plbenchbr type bridge && ip link set plbenchbr up || return 1
  : > "$OUT/hosts.txt"
  for i in 0 1 2 3; do
    ip netns add "plbench$i" &&
    ip link add "plbv$i" type veth peer name "plbb$i" &&
    ip link set "plbv$i" netns "plbench$i" &&
    ip link set "plbb$i" master plbenchbr && ip link set "plbb$i" up &&
    ip -n "plbench$i" addr add "10.78.0.$((i + 1))/24" dev "plbv$i" &&
    ip -n "plbench$i" link set "plbv$i" up && ip -n "plbench$i" link set lo up &&
    ip netns exec "plbench$i" tc qdisc add dev "plbv$i" root tbf rate "$RATE" burst 32kb \
      latency "$QUEUE" || return 1
    echo "10.78.0.$((i + 1)) ip netns exec plbench$i" >> "$OUT/hosts.txt"
  done
}
trap cleanup EXIT
if [ "$(id -u)" = 0 ] && setup_namespaces > "$OUT/netns.log" 2>&1; then
  NS_OK=1
  TBF_RAN=1
else
  echo "!! network namespace setup FAILED (need root, ip, tc with tbf); skipping the" \
       "rate-limited part. Details: $OUT/netns.log"
fi
if [ $NS_OK = 1 ]; then
  echo "links limited to $RATE per worker (tbf, queue $QUEUE, namespaces plbench0-3 on bridge plbenchbr)"
  port=$((20000 + RANDOM % 20000))
  for sched in varuna gpipe 1f1b; do
    for pd in "2 1" "2 2" "4 1"; do
      set -- $pd
      run "${sched}_p$1d$2_tbf" "tbf-$RATE" "$sched" "$1" "$2" --hosts "$OUT/hosts.txt" \
        --base-port "$port" --link-mbps "$RATE_MBPS" --link-latency-ms 0.05 --link-burst-kb 32
      port=$((port + 8))
    done
  done
fi
cleanup
NS_OK=0

for sched in varuna gpipe 1f1b; do
  for pd in "2 1" "2 2" "4 1"; do
    set -- $pd
    run "${sched}_p$1d$2_loopback" loopback "$sched" "$1" "$2" --link-latency-ms 0.05
  done
done

# Summary table and plots.
{
  echo "# Pipeline bench ($(date -u +%F\ %H:%M) UTC, $(nproc) cores, load now $(cut -d' ' -f1 /proc/loadavg))"
  echo
  echo "Baseline: one worker, whole model: $(printf %.1f "$BASE_SPS") samples/s."
  echo "Efficiency = samples/s / (baseline x workers). Simulated = pipeline-sim model fed with"
  echo "this run's measured per-task times, activation sizes and optimizer times (and measured"
  echo "all-reduce times on loopback; on tbf links the ring's messages are simulated). Load = 1-min"
  echo "load average when the run started; drops = packets the tbf shapers dropped during it."
  echo
  echo "| run | links | P | D | samples/s | efficiency | step s | simulated s | sim error | bubble s0 | simulated bubble s0 | pulled ahead | load | drops |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$CSV" | tr -d '"' | while IFS=, read -r name links sched p d w sps step sim err b sb eff pa load dr; do
    printf '| %s | %s | %s | %s | %.1f | %.2f | %.4f | %.4f | %+.1f %% | %.1f %% | %.1f %% | %s | %s | %s |\n' \
      "$name" "$links" "$p" "$d" "$sps" "$eff" "$step" "$sim" "$err" \
      "$(echo "$b * 100" | bc -l)" "$(echo "$sb * 100" | bc -l)" "$pa" "$load" "$dr"
  done
  for kind in tbf loopback; do
    tail -n +2 "$CSV" | tr -d '"' | grep ",$kind\|_$kind," | awk -F, -v kind="$kind" \
      '{e = $10 < 0 ? -$10 : $10; n++; s += e; if (e <= 10) k++; if (e > w) w = e}
       END {if (n) printf "\nSimulator vs measured step time, %s runs: mean |error| %.1f %%, %d of %d within 10 %%, largest %.1f %%.\n", kind, s / n, k, n, w}'
  done
  [ $TBF_RAN = 1 ] || echo "**Rate-limited part skipped: network namespace setup failed.**"
} > "$OUT/summary.md"
cat "$OUT/summary.md"

if command -v gnuplot > /dev/null; then
  tail -n +2 "$CSV" | tr -d '"' | tr ',' ' ' > "$OUT/results.dat"
  gnuplot <<GP 2>/dev/null
set terminal pngcairo size 1000,500 noenhanced
set output "$OUT/throughput.png"
set title "Pipeline training throughput (same model and batch); baseline single worker = $(printf %.1f "$BASE_SPS") samples/s"
set style data histogram
set style fill solid 0.8 border -1
set ylabel "samples/s"
set xtics rotate by -35
set key off
plot "$OUT/results.dat" using 7:xtic(1) lc rgb "#3a6ea5"
set output "$OUT/sim_vs_measured.png"
set title "Simulated vs measured step time"
set style data points
set xlabel "measured step (s)"
set ylabel "simulated step (s)"
set xtics norotate
f(x) = x
plot "$OUT/results.dat" using 8:9 pt 7 ps 1.5 lc rgb "#c0392b", f(x) lc rgb "gray" title "y = x"
GP
  echo "plots: $OUT/throughput.png $OUT/sim_vs_measured.png"
fi

# The auto-configuration's choice against every candidate, measured in this run.
echo
"$(dirname "$0")/autoconfig.sh"
