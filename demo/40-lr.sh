#!/usr/bin/env bash
# Part 40: learning-rate schedules. Knee against cosine on a Fashion-MNIST subset (real Debian
# data), a preempted-and-resumed run that ends exactly like an uninterrupted one, and the online
# tuner on a quadratic whose best rate is known in closed form, and the experiment protocol in
# its quick mode (tuned peaks, paired seeds, intervals; resumable). Real runs, real numbers.
set -euo pipefail
bin=${TESSERA_BIN:?set TESSERA_BIN to the bin directory of a build}
out=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT to an output directory}/lr
mkdir -p "$out"
rm -rf "$out/ckpt"
common=(--task fmnist --train-limit 10000 --test-limit 5000 --epochs 3 --lr 0.1 --seed 1)

echo "-- Knee vs cosine: MLP on 10,000 Fashion-MNIST images, 3 epochs, SGD momentum, peak lr 0.1"
for s in knee cosine; do
  r=$("$bin/lr-train" "${common[@]}" --schedule "$s" --log-csv "$out/$s.csv" 2>/dev/null)
  printf '%-7s %s\n' "$s" "$r"
done
lrs=$(awk -F, 'NR==2||NR==118||NR==119||NR==235{printf "%s ", $2}' "$out/knee.csv")
echo "   knee's lr at steps 0, 116 (last explore step), 117 (first decay step), 233 (last): $lrs"
echo "   per-step logs: $out/knee.csv, $out/cosine.csv"

echo
echo "-- Preemption: the same Knee run stopped after 100 steps (as if killed), then resumed"
"$bin/lr-train" "${common[@]}" --schedule knee --log-csv "$out/resumed.csv" \
  --checkpoint-dir "$out/ckpt" --resume --stop-after 100 2>/dev/null | sed 's/^/   first:   /'
"$bin/lr-train" "${common[@]}" --schedule knee --log-csv "$out/resumed.csv" \
  --checkpoint-dir "$out/ckpt" --resume 2>/dev/null | sed 's/^/   resumed: /'
if cmp -s "$out/knee.csv" "$out/resumed.csv"; then
  echo "   per-step log (lr and loss of all $(($(wc -l < "$out/knee.csv") - 1)) steps) identical to the uninterrupted run"
else
  echo "   MISMATCH between resumed and uninterrupted logs"; exit 1
fi

echo
echo "-- Online tuner on an ill-conditioned noisy quadratic (curvatures 0.1..10), started 20x too high"
"$bin/lr-quadratic" --initial-lr 4 --steps 400 | sed 's/^/   /'

echo
echo "-- The experiment protocol, quick mode: per-schedule peaks tuned on a validation split, 3 paired"
echo "   seeds, 95% intervals of the difference to Knee (4,000 training images, 2 epochs: a demo,"
echo "   not evidence; docs/lr.md has the measured grid)"
"$bin/lr-protocol" --quick --schedules knee,cosine,constant,rangetest --budgets 1,0.5 \
  --out "$out/protocol" 2>/dev/null | sed 's/^/   /'
echo "   plots: $out/protocol/mlp-budget.png, $out/protocol/mlp-diff.png"
echo "-- The same command again: the grid is resumable, every run is found in results.csv"
"$bin/lr-protocol" --quick --schedules knee,cosine,constant,rangetest --budgets 1,0.5 \
  --out "$out/protocol" 2>&1 >/dev/null | tail -1 | sed 's/^/   /'
