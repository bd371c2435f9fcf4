#!/usr/bin/env bash
# Part 20: the live cluster scheduler (docs/cluster.md). A scheduler and two node agents on
# loopback; two basic training jobs fill the cluster, a premium job arrives, a basic job is
# checkpointed and preempted within a step, the premium job gets its workers at once, and the
# basic job later resumes from its checkpoint and ends with exactly the parameters of an
# uninterrupted run. Then (with lr built) lr-train runs as a cluster job, is preempted by a
# premium job, resumes and ends exactly like an uninterrupted lr-train run. Every process
# started here is stopped on exit, even on failure.
set -euo pipefail
bin=${TESSERA_BIN:?set TESSERA_BIN to the bin directory of a build}
out=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT}/cluster
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d /tmp/tessera-cluster-demo.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/cluster-scheduler" --state-dir "$work/state" --job-root "$work/jobs" \
  --port-file "$work/port" --premium-headroom 0 --heartbeat-timeout-s 2 >"$out/scheduler.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "scheduler did not start; see $out/scheduler.log"; exit 1; }
addr=127.0.0.1:$(cat "$work/port")
for node in n1 n2; do
  "$bin/cluster-agent" --node-id $node --slots 4 --scheduler "$addr" --log-dir "$work/logs-$node" \
    >"$out/agent-$node.log" 2>&1 &
  pids+=($!)
done
ctl() { "$bin/cluster-ctl" --scheduler "$addr" "$@"; }
echo "scheduler on $addr, agents n1 and n2 with 4 slots each"

# Each job: world size 4, 600 (basic) or 800 (premium) steps, 10 ms per replica step,
# a checkpoint every 50 steps.
job=(--replica-ms 10 --checkpoint-every 50)
b1=$(ctl submit --tier basic --tenant research --workers 4 -- --steps 600 "${job[@]}")
b2=$(ctl submit --tier basic --tenant research --workers 4 -- --steps 600 "${job[@]}")
sleep 3
echo; echo "== two basic jobs fill the cluster"
ctl list | tee "$out/list-1-full.txt"
ctl nodes

p=$(ctl submit --tier premium --tenant product --workers 4 -- --steps 800 "${job[@]}")
sleep 1.5
echo; echo "== premium job $p arrives: a basic job is checkpointed and preempted"
ctl list | tee "$out/list-2-preempted.txt"

ctl wait "$b1" "$b2" "$p" --timeout 80
echo; echo "== all done: the preempted job resumed from its checkpoint"
ctl list | tee "$out/list-3-done.txt"
ctl events >"$out/events.txt"
ctl metrics >"$out/metrics.txt"
echo; echo "== scheduler events"
cat "$out/events.txt"

# A timeline of every job run (one bar per run, labelled with its placement).
timeline_awk='
{ sub(/^\+ */, ""); t = $1; sub(/s$/, "", t); t += 0 }
$2 == "start" && $4 == "on" {
  job = $3; open[job] = t; where[job] = $5; tier = $6; gsub(/[()]/, "", tier)
  color[job] = tier == "premium" ? 14034728 : (tier == "standard" ? 16744206 : 2062260)
  if (!(job in row)) { row[job] = ++rows; ytics = ytics (rows > 1 ? ", " : "") "\"" job " (" tier ")\" " rows }
  next
}
/ checkpointed at step / || / finished:/ || / lost run / || / restarts as run / {
  job = $2
  if (job in open) printf "%d %.3f %.3f %s %d\n", row[job], open[job], t, where[job], color[job]
  delete open[job]
  if (/ restarts as run /) { open[job] = t; where[job] = $8 }
}
END { print "set ytics (" ytics ")" > "/dev/stderr"; print "set yrange [0.5:" rows + 0.5 "]" > "/dev/stderr" }'
awk "$timeline_awk" "$out/events.txt" >"$out/timeline.dat" 2>"$out/timeline.gp"
if command -v gnuplot >/dev/null; then
  gnuplot <<GP && echo "timeline of the runs: $out/timeline.png"
set terminal pngcairo size 900,280 font ",10"
set output "$out/timeline.png"
load "$out/timeline.gp"
set xlabel "seconds since the first scheduler event"
set title "Job runs on nodes n1/n2 (bars end at a checkpointed exit or at completion)"
set grid xtics
unset key
plot "$out/timeline.dat" using ((\$2+\$3)/2):1:((\$3-\$2)/2):(0.3):5 with boxxyerror fs solid 0.7 lc rgb variable, \
     "" using ((\$2+\$3)/2):1:4 with labels
GP
fi

echo; echo "== same final parameters as an uninterrupted run?"
"$bin/cluster-train-job" --job-id reference --job-dir "$work/reference" --workers 4 \
  --world-size 4 --steps 600 "${job[@]}" --log-level warn >"$out/reference.txt"
ref=$(grep -o 'fingerprint=[0-9a-f]*' "$out/reference.txt")
status=0
for id in "$b1" "$b2"; do
  runs=$(ls "$work"/logs-n*/"$id"-run*.log | wc -l)
  # The run that completed the job printed "finished ... fingerprint=<final parameters>".
  got=$(cat "$work"/logs-n*/"$id"-run*.log | grep '^finished ' | grep -o 'fingerprint=[0-9a-f]*')
  if [ "$got" = "$ref" ]; then verdict="identical"; else verdict="DIFFERENT"; status=1; fi
  echo "$id: $runs run(s), final $got, uninterrupted $ref: $verdict"
done
wait_s=$(grep "start $p " "$out/events.txt" | grep -o '[0-9.]* s after submission' | cut -d' ' -f1)
echo "premium job $p got its 4 workers ${wait_s} s after submission"
grep -o 'order to exit [0-9.]* s' "$out/events.txt" | sed 's/^/checkpoint-and-exit: /' || true
grep -o 'first step report [0-9.]* s' "$out/events.txt" |
  sed 's/^first step report/start or restore (process start to first step):/' || true

# lr-train as a cluster job (job type "lr", built when lr is in TESSERA_SYSTEMS): it takes the
# whole idle cluster, a premium job preempts it, it resumes from its own lr checkpoint and its
# per-step log and final parameters equal an uninterrupted lr-train run.
if [ -x "$bin/lr-cluster-job" ] && [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo; echo "== lr-train under the scheduler, preempted by a premium job"
  lr=(--task fmnist --train-limit 600 --test-limit 200 --batch-size 20 --epochs 5 --lr 0.05
      --schedule knee --seed 11 --threads 1 --checkpoint-every 50)
  l=$(ctl submit --type lr --tier basic --tenant research --workers 8 -- "${lr[@]}" --min-step-ms 20)
  for _ in $(seq 200); do
    step=$(ctl list | awk -v id="$l" '$1 == id { print $6 }' | cut -d/ -f1)
    [ "${step:-0}" -ge 20 ] 2>/dev/null && break
    sleep 0.1
  done
  lp=$(ctl submit --tier premium --tenant product --workers 4 -- --steps 100 --replica-ms 10)
  ctl wait "$l" "$lp" --timeout 60
  ctl list | tee "$out/list-4-lr.txt"
  "$bin/lr-train" "${lr[@]}" --log-csv "$work/lr-reference.csv" >"$out/lr-reference.txt" 2>/dev/null
  grep -h '^checkpointed\|^finished' "$work"/logs-n*/"$l"-run*.log | sed "s/^/$l: /"
  echo "uninterrupted lr-train: $(grep -o 'last_loss=[0-9.]* .*params=[0-9a-f]*' "$out/lr-reference.txt")"
  got=$(cat "$work"/logs-n*/"$l"-run*.log | grep '^finished ' | grep -o 'params=[0-9a-f]*')
  ref=$(grep -o 'params=[0-9a-f]*' "$out/lr-reference.txt")
  if [ "$got" = "$ref" ] && cmp -s "$work/jobs/$l/train.csv" "$work/lr-reference.csv"; then
    echo "$l: per-step log ($(($(wc -l <"$work/lr-reference.csv") - 1)) steps) and parameters identical to the uninterrupted run"
  else
    echo "$l: DIFFERENT from the uninterrupted run"; status=1
  fi
  cp "$work/jobs/$l/train.csv" "$out/lr-job-train.csv"
fi
exit $status
