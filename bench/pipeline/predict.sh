#!/usr/bin/env bash
# The auto-config's step time, predicted BEFORE running, against the measured step time.
#
# Every case is the user's path: `pipeline-launch --auto --workers W` profiles the model in
# its own process (per unit, alone and under contention: W concurrent copies, see
# ProfileContention in pipeline/profile.h), simulates every (P, D, m), prints the prediction
# for the configuration it chose and trains it; the JSON holds both figures. Cases:
#   toy-w1, toy-w2, toy-w4   the bench GPT (4 blocks x 64, 32 tokens, global batch 32,
#                            micro-batches 4 or 8), 1, 2 and 4 workers on this machine
#   gpt2-w1, gpt2-w2         GPT-2-small shape (12 x 768, 12 heads, vocab 50257, 64 tokens,
#                            global batch 8, micro-batch 2), 1 and 2 workers
#   <case>-P.D.m             the same, but train candidate P,D,m (--auto-pick: ranked as
#                            usual, its own simulated step is the prediction), e.g.
#                            toy-w2-1.2.8, gpt2-w2-2.1.2
#   <case>+pin               the same with --pin-workers (worker r and the profile's copy r on
#                            processor r, pipeline/cpu_pin.h), e.g. toy-w1+pin
#   <case>+psN               the same with --profile-seconds N (every profile timed N s at
#                            least), e.g. toy-w2-2.1.8+ps3, toy-w1+pin+ps3
# in PREDICT_ROUNDS rounds over all cases (interleaved, so that a change of the shared
# machine's load falls on every case alike), with the 1-minute load average before and after
# each run. Besides the wall-clock error, the CPU-normalized one: the prediction times the share
# of a core the profiled tasks got (ContendedTimes::cpu_share) against the measured step times
# the share the run's tasks got (RunSummary::busy_cpu_share, thread CPU clocks): both are then
# the step on cores of its own, and a change of the other processes' load between the profile
# and the run cancels. With --speed-probe (always on here), the calibrated prediction (the
# prediction times the reference kernel in a probe just before the workers start over the
# profile's, pipeline/cpu_speed.h: still made before running) and the speed-normalized error: the
# prediction times the run's over the profile's median time of a fixed reference kernel on every
# processor (pipeline/cpu_speed.h): what the profile would have predicted on the run's cores, so a
# change of the host's core speed between profile and run (seen up to 1.6x in the seventh
# session) is told from a wrong model; and both normalizations together. Output in $TESSERA_BENCH_OUT/predict: predict.csv, predict.md, predict.png
# (predicted against measured with the +-10 % band), the logs and JSON of every run.
# Knobs: PREDICT_ROUNDS (default 2), PREDICT_CASES (default all five, space-separated),
# PREDICT_TOY_STEPS (20), PREDICT_GPT2_STEPS (3; the first step is excluded from the step time),
# PREDICT_DEADLINE (a time `date -d` reads: no run starts after it; for quiet windows).
# PREDICT_REPROFILE (default "toy": which models' runs also print a second prediction,
# re-profiled just before the workers start (--reprofile-before-run), next to the ranking's;
# "all", "toy", "gpt2" or "none"; GPT-2-small's re-profile adds tens of seconds per run). Every run also keeps its profile (<case>.<round>.profile.json) and its workers' reports
# (run-<case>.<round>/): bench/pipeline/breakdown.py sets them side by side, component by component.
set -uo pipefail
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}/predict
ROUNDS=${PREDICT_ROUNDS:-2}
CASES=${PREDICT_CASES:-toy-w1 toy-w2 toy-w4 gpt2-w1 gpt2-w2}
LAUNCH=$BUILD/bin/pipeline-launch
WORKER=$BUILD/bin/pipeline-worker  # the same build's worker, also for a build copied aside
[ -x "$LAUNCH" ] && [ -x "$WORKER" ] || { echo "bench: $LAUNCH or $WORKER not built"; exit 1; }
mkdir -p "$OUT"
TOY=(--model gpt --layers 4 --width 64 --heads 4 --vocab 64 --seq-len 32 --global-batch 32
     --steps "${PREDICT_TOY_STEPS:-20}" --auto-micro-batches 4,8)
GPT2=(--model gpt --layers 12 --width 768 --heads 12 --vocab 50257 --seq-len 64 --dropout 0
      --global-batch 8 --auto-micro-batches 2 --steps "${PREDICT_GPT2_STEPS:-3}" --lr 0.01
      --lr-schedule constant)
CSV=$OUT/predict.csv
echo "round,case,P,D,m,predicted_step_s,measured_step_s,error_pct,load_before,load_after,profile_share,run_share,normalized_error_pct,predicted_without_comm_s,kernel_profile_ms,kernel_run_ms,speed_factor,speed_error_pct,speed_share_error_pct,peak_rss_mb,predicted_memory_mb,kernel_calibration_ms,calibrated_error_pct,reprofiled_step_s,reprofiled_error_pct,profiles_differ_pct,predicted_without_delay_s,without_delay_error_pct,probe_delay_ms,run_delay_ms,sim_step_s,sim_error_pct,sim_without_delay_s,sim_without_delay_error_pct,profile_seconds" > "$CSV"
load() { cut -d' ' -f1 /proc/loadavg; }

for round in $(seq "$ROUNDS"); do
  for case in $CASES; do
    if [ -n "${PREDICT_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$(date -d "$PREDICT_DEADLINE" +%s)" ]; then
      echo "deadline $PREDICT_DEADLINE reached: stopping before round $round $case"; break 2
    fi
    pin=()
    seconds=()
    base=$case
    if [[ $base =~ \+ps([0-9.]+) ]]; then
      seconds=(--profile-seconds "${BASH_REMATCH[1]}")
      base=${base/+ps${BASH_REMATCH[1]}/}
    fi
    if [ "${base%+pin}" != "$base" ]; then pin=(--pin-workers); base=${base%+pin}; fi
    model=${base%%-w*}
    rest=${base#*-w}
    workers=${rest%%-*}
    pick=()
    if [ "$rest" != "$workers" ]; then pick=(--auto-pick "$(echo "${rest#*-}" | tr . ,)"); fi
    if [ "$model" = toy ]; then flags=("${TOY[@]}"); else flags=("${GPT2[@]}"); fi
    reprofile=()
    case "${PREDICT_REPROFILE:-toy}" in all|"$model") reprofile=(--reprofile-before-run) ;; esac
    name=$case.$round
    before=$(load)
    if ! "$LAUNCH" "${flags[@]}" --worker "$WORKER" --auto --workers "$workers" "${pick[@]}" "${pin[@]}" "${seconds[@]}" --timeout 900 \
        --speed-probe "${reprofile[@]}" --run-dir "$OUT/run-$name" --json "$OUT/$name.json" \
        --profile-out "$OUT/$name.profile.json" > "$OUT/$name.log" 2>&1; then
      echo "round $round $case FAILED (see $OUT/$name.log)"; tail -3 "$OUT/$name.log"; continue
    fi
    after=$(load)
    /usr/bin/python3 - "$OUT/$name.json" "$round" "$case" "$before" "$after" >> "$CSV" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
p, m = j["predicted_step_s"], j["step_s"]
ps, rs = j.get("predicted_cpu_share", 0), j.get("busy_cpu_share", 0)
norm = f"{100 * (p * ps / (m * rs) - 1):+.1f}" if ps > 0 and rs > 0 else ""
print(f"{sys.argv[2]},{sys.argv[3]},{j['stages']},{j['replicas']},{j['micro_batch']},"
      f"{p:.5f},{m:.5f},{100 * (p / m - 1):+.1f},{sys.argv[4]},{sys.argv[5]},{ps:.3f},{rs:.3f},"
      f"{norm},{j.get('predicted_without_comm_s', 0):.5f},", end="")
sp = j.get("speed_probe", {})
if "factor" in sp:
    print(f"{1e3 * sp['profile']['median_cpu_s']:.3f},{1e3 * sp['run']['median_cpu_s']:.3f},"
          f"{sp['factor']:.3f},{sp['speed_normalized_error_pct']:+.1f},"
          f"{sp['speed_and_share_error_pct']:+.1f},", end="")
else:
    print(",,,,,", end="")
print(f"{max(j['peak_rss_mb']):.0f},{j.get('predicted_memory_mb', 0):.0f},", end="")
if "calibrated_error_pct" in sp:
    print(f"{1e3 * sp['calibration']['median_cpu_s']:.3f},{sp['calibrated_error_pct']:+.1f},", end="")
else:
    print(",,", end="")
rp = j.get("reprofiled_step_s", 0)
print(f"{rp:.5f},{100 * (rp / m - 1):+.1f}," if rp > 0 else ",,", end="")
# The two profiles of the chosen size (the ranking's and the re-profile): how far apart.
print(f"{100 * (rp / p - 1):+.1f}," if rp > 0 and p > 0 else ",", end="")
nd = j.get("predicted_without_delay_s", 0)
print(f"{nd:.5f},{100 * (nd / m - 1):+.1f}," if nd > 0 else ",,", end="")
print(f"{1e3 * j.get('probe_message_delay_s', 0):.4f},{1e3 * j.get('run_message_delay_s', 0):.4f},",
      end="")
ss, sn = j.get("sim_step_s", 0), j.get("sim_step_without_delay_s", 0)
print(f"{ss:.5f},{100 * (ss / m - 1):+.1f}," if ss > 0 else ",,", end="")
print(f"{sn:.5f},{100 * (sn / m - 1):+.1f}," if sn > 0 else ",,", end="")
print(f"{j.get('profile_seconds', 0):g}")
EOF
    tail -1 "$CSV" | awk -F, '{printf "round %s %-8s P=%s D=%s m=%s predicted %.4f s measured %.4f s (%s %%; re-profiled just before %s %%; CPU-normalized %s %%, shares %s / %s; kernel %s -> %s ms, x%s, speed-normalized %s %%, speed+share %s %%; calibrated (kernel %s ms just before) %s %%), load %s -> %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $25, $13, $11, $12, $15, $16, $17, $18, $19, $22, $23, $9, $10}'
    grep -E '^contention|^all-reduce on loopback|communication threads|delivery \(|^message delivery' "$OUT/$name.log" | sed 's/^/   /'
  done
done

/usr/bin/python3 - "$CSV" > "$OUT/predict.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
import statistics
print("| round | case | P | D | m | predicted s | measured s | error | kernel ms profile / run "
      "(factor) | speed-normalized error | core share profile / run | CPU-normalized error "
      "| speed+share error | peak RSS MB (estimate) | load before / after | kernel ms just "
      "before | calibrated error |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['round']} | {r['case']} | {r['P']} | {r['D']} | {r['m']} | "
          f"{float(r['predicted_step_s']):.4f} | {float(r['measured_step_s']):.4f} | "
          f"{r['error_pct']} % | {r['kernel_profile_ms'] or '-'} / {r['kernel_run_ms'] or '-'} "
          f"({r['speed_factor'] or '-'}) | {r['speed_error_pct'] or '-'} % | "
          f"{r['profile_share']} / {r['run_share']} | "
          f"{r['normalized_error_pct'] or '-'} % | {r['speed_share_error_pct'] or '-'} % | "
          f"{r['peak_rss_mb']} ({r['predicted_memory_mb']}) | "
          f"{r['load_before']} / {r['load_after']} | {r.get('kernel_calibration_ms') or '-'} | "
          f"{r.get('calibrated_error_pct') or '-'} % |")


def describe(name, errors):
    if not errors:
        return
    a = [abs(e) for e in errors]
    q = statistics.quantiles(errors, n=4) if len(errors) >= 2 else [errors[0]] * 3
    print(f"\n{name}: {sum(x <= 10 for x in a)} of {len(a)} runs within 10 %; mean |error| "
          f"{sum(a) / len(a):.1f} %, largest {max(a):.1f} %; median {statistics.median(errors):+.1f} %, "
          f"quartiles {q[0]:+.1f} / {q[2]:+.1f} %")


cases = sorted({r["case"] for r in rows})
for label, key in (("wall-clock", "error_pct"),
                   ("predicted without the messages' delivery delay", "without_delay_error_pct"),
                   ("the two profiles of the chosen size (re-profile against the ranking's)",
                    "profiles_differ_pct"),
                   ("simulated from the run's own times (after the fact)", "sim_error_pct"),
                   ("the same without the run's measured delivery delay",
                    "sim_without_delay_error_pct"),
                   ("calibrated before running (kernel just before / profile's)",
                    "calibrated_error_pct"),
                   ("re-profiled just before running", "reprofiled_error_pct"),
                   ("speed-normalized", "speed_error_pct"),
                   ("CPU-normalized", "normalized_error_pct"),
                   ("speed and CPU-share normalized", "speed_share_error_pct")):
    describe(f"{label}, all cases", [float(r[key]) for r in rows if r[key]])
    for c in cases:
        describe(f"{label}, {c}", [float(r[key]) for r in rows if r[key] and r["case"] == c])
EOF
cat "$OUT/predict.md"
if command -v gnuplot > /dev/null && [ "$(wc -l < "$CSV")" -gt 1 ]; then
  gnuplot <<EOF
set terminal png size 700,600
set output "$OUT/predict.png"
set datafile separator ","
set logscale xy
set xlabel "measured step (s)"
set ylabel "predicted before running (s)"
set key top left
plot "$CSV" every ::1 using 7:6 with points pt 7 title "runs", \
     x title "y = x" lt -1, 1.1*x title "+10 %" dt 2 lc rgb "gray", 0.9*x title "-10 %" dt 2 lc rgb "gray"
EOF
fi
