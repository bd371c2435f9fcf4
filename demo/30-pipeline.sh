#!/usr/bin/env bash
# Part 30: pipeline — Varuna's micro-batch schedule, the step simulator, and real pipeline +
# data-parallel training in separate worker processes, with a checkpoint that resumes under a
# different number of stages and replicas.
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
       --global-batch 32 --lr 0.05)
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
echo "outputs: $OUT (schedule.txt, simulated.txt, *.json summaries, ckpt/)"
