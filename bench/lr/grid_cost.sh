#!/usr/bin/env bash
# The cost of docs/lr.md's full experiment grid on this machine: lr-protocol --estimate times two
# short runs per task (10 and 40 steps; the difference gives the time per step, the rest the
# fixed cost of a run: set-up and evaluations) and multiplies by the grid's runs and steps
# (3 tasks x 3 budgets x 8 schedules x 10 seeds, plus 7 schedules x 5 peaks of tuning).
# Usage: TESSERA_BUILD=build/release TESSERA_BENCH_OUT=out bench/lr/grid_cost.sh
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
mkdir -p "$out"
bin="$build/bin/lr-protocol"
[ -x "$bin" ] || { echo "missing $bin (cmake --build $build --target lr-protocol)"; exit 1; }
echo "lr: estimating the full grid's cost (about a minute; load: $(cut -d' ' -f1-3 /proc/loadavg))"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$bin" --estimate --tasks mlp,cnn,lm \
  | tee "$out/lr_grid_cost.txt"
