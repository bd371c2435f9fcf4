#!/usr/bin/env bash
# Part 30: pipeline — Varuna's micro-batch schedule, the step simulator, and real pipeline +
# data-parallel training in separate worker processes, with a checkpoint that resumes under a
# different number of stages and replicas; auto-configuration by simulation and a job that
# morphs when a worker is killed.
set -euo pipefail
BIN=${TESSERA_BIN:?set TESSERA_BIN}
OUT=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT}/pipeline
rm -rf "$OUT"
mkdir -p "$OUT"

echo "-- 1. Varuna's schedule, P=4 stages, M=8 micro-batches (F forward, R recompute, B backward"
echo "      = 2 slots), and the unit-time bubble table of the research note"
"$BIN/pipeline-sim" --stages 4 --micro-batches 8 --timeline --bubble-table | tee "$OUT/schedule.txt"

echo
echo "-- 2. The simulator: one step, equal stages (10 ms forward, 20 ms backward), 1 MB"
echo "      activations over a 100 Mbit/s link"
"$BIN/pipeline-sim" --stages 4 --micro-batches 16 --activation-kb 1000 --link-mbps 100 \
  | tee "$OUT/simulated.txt"
echo "   ... and the same link as tc's tbf meters it (Ethernet frames of the TCP stream, a 32 KB"
echo "   burst, every worker's sends sharing its egress), 10 steps back to back"
"$BIN/pipeline-sim" --stages 4 --micro-batches 16 --activation-kb 1000 --link-mbps 100 \
  --framing tcp --burst-kb 32 --steps 10 | tee -a "$OUT/simulated.txt"

# A character-level GPT on real text when the fortunes package is there, else synthetic tokens.
TEXT=/usr/share/games/fortunes/computers
MODEL=(--model gpt --layers 4 --width 64 --heads 4 --seq-len 32 --micro-batch 4
       --global-batch 32 --lr 0.05 --lr-schedule constant)
if [ -r "$TEXT" ]; then
  MODEL+=(--text "$TEXT" --vocab 96)
  echo; echo "(training data: $TEXT)"
fi

echo
echo "-- 3. Train for 15 steps with P=4 stages x D=1 replica (4 worker processes), Varuna's"
echo "      schedule, stages cut from a measured per-unit profile, and save a checkpoint keyed"
echo "      by cut unit"
"$BIN/pipeline-launch" "${MODEL[@]}" --stages 4 --replicas 1 --steps 15 --schedule varuna \
  --partition profiled \
  --save-dir "$OUT/ckpt" --run-dir "$OUT/run-p4d1" --json "$OUT/p4d1.json"
ls "$OUT/ckpt"/ckpt-15

echo
echo "-- 4. Resume the same checkpoint as P=2 stages x D=2 replicas for 10 more steps"
"$BIN/pipeline-launch" "${MODEL[@]}" --stages 2 --replicas 2 --steps 10 --schedule varuna \
  --resume-dir "$OUT/ckpt" --save-dir "$OUT/ckpt" --run-dir "$OUT/run-p2d2" \
  --json "$OUT/p2d2.json"

echo
echo "-- 5. The same job under GPipe and 1F1B (P=2, D=1): throughput and bubble"
for sched in varuna gpipe 1f1b; do
  "$BIN/pipeline-launch" "${MODEL[@]}" --stages 2 --replicas 1 --steps 8 --schedule "$sched" \
    --run-dir "$OUT/run-$sched" --json "$OUT/$sched.json" | grep '^result' | sed "s/^/$sched: /"
done

echo
echo "-- 6. Auto-configuration for 4 workers: profile every unit here at micro-batches 4 and 8,"
echo "      simulate every (P, D, m), train the fastest (the ranked table comes first)"
"$BIN/pipeline-launch" "${MODEL[@]}" --auto --workers 4 --auto-micro-batches 4,8 --steps 8 \
  --profile-out "$OUT/profile.json" --run-dir "$OUT/run-auto" --json "$OUT/auto.json" \
  | grep -v '^step'
echo "   ... the same ranking from the saved profile, if the links were 20 Mbit/s tbf:"
"$BIN/pipeline-sim" --auto --profile "$OUT/profile.json" --workers 4 --global-batch 32 \
  --cores "$(nproc)" --link-mbps 20 --framing tcp --burst-kb 32 --top 5

echo
echo "-- 7. Job morphing: an elastic run on 4 workers, 3 MB of memory each (the whole model's"
echo "      parameter state and activations need about 5 MB, so every configuration is a"
echo "      pipeline); one worker"
echo "      is killed with SIGKILL once the checkpoint of step 10 exists; the job restarts from"
echo "      its newest checkpoint with an auto-config for 3 workers and finishes all 40 steps"
echo 4 > "$OUT/workers"
"$BIN/pipeline-launch" "${MODEL[@]}" --elastic --workers-file "$OUT/workers" \
  --auto-micro-batches 4,8 --cores 0 --memory-limit-mb 3 --worker-base-mb 0 --steps 40 \
  --checkpoint-every 2 \
  --save-dir "$OUT/elastic-ckpt" --run-dir "$OUT/run-elastic" --json "$OUT/elastic.json" \
  > "$OUT/elastic.log" 2>&1 &
ELASTIC=$!
until [ -f "$OUT/elastic-ckpt/ckpt-10/common.json" ] || ! kill -0 $ELASTIC 2>/dev/null; do
  sleep 0.05
done
if [ -f "$OUT/run-elastic/segment-0/pids" ] && kill -0 $ELASTIC 2>/dev/null; then
  VICTIM=$(awk '$1 == 1 {print $2}' "$OUT/run-elastic/segment-0/pids")
  echo "   kill -9 worker 1 (pid $VICTIM)"
  kill -9 "$VICTIM" || true
fi
wait $ELASTIC
grep -E '^(elastic|segment|result)' "$OUT/elastic.log"

echo
echo "outputs: $OUT (schedule.txt, simulated.txt, *.json summaries, ckpt/, profile.json,"
echo "         elastic.log)"
