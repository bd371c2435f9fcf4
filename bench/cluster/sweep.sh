#!/usr/bin/env bash
# Cluster scheduler sweeps: the full Philly trace under FIFO, Tiresias, tier-aware strict priority
# and the Singularity-style policy (one process per point, one core), while
#   1. the tier mix goes from 20/30/50 to 80/10/10 (premium/standard/basic) on 64 x 8 slots,
#   2. the fleet shrinks and grows (48, 56, 64, 80 nodes x 8 slots) at 20/30/50,
#   3. at 80/10/10, with admission control: per-tenant quotas (30 % of the slots premium, 30 %
#      standard, split by each tenant's share of the trace's GPU time) with borrowing,
#   4. and the Singularity-style policy with eviction by cost against eviction by best fit.
# Writes per point the replay's table and CSV, a combined CSV per sweep and gnuplot figures.
#   TESSERA_BUILD      build directory holding bin/cluster-replay
#   TESSERA_BENCH_OUT  where results go
#   TESSERA_TRACES     trace folder (default: data/traces in the repository)
#   SWEEP_LIMIT        replay only the first N jobs (default: all 82,247)
#   SWEEP_REUSE        set: keep the points whose CSV is already in TESSERA_BENCH_OUT
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
traces=${TESSERA_TRACES:-$repo/data/traces}
limit=${SWEEP_LIMIT:-0}
replay=$build/bin/cluster-replay
policies=fifo,tiresias,strict,singularity
[ -x "$replay" ] || { echo "bench/cluster: $replay is not built" >&2; exit 1; }
trace=$traces/philly.csv
[ -f "$trace" ] || { echo "bench/cluster: no $trace" >&2; exit 1; }
mkdir -p "$out"
echo "load before: $(uptime)"

point() {  # point NAME ARGS... : one replay, its table and CSV
  local name=$1
  shift
  if [ -n "${SWEEP_REUSE:-}" ] && [ -s "$out/$name.csv" ]; then
    echo "== $name: reusing $out/$name.csv (SWEEP_REUSE)"
    return
  fi
  echo "== $name: $*"
  "$replay" --trace "$trace" --limit "$limit" --policies "$policies" --csv "$out/$name.csv" "$@" \
    > "$out/$name.txt" 2> "$out/$name.log"
  grep -E "replayed in|admission" "$out/$name.txt"
}

# Combined CSV: the sweep's x value, then the replay CSV's columns.
combine() {  # combine OUT X1 FILE1 X2 FILE2 ...
  local dest=$1
  shift
  : > "$dest"
  while [ $# -gt 0 ]; do
    awk -F, -v x="$1" 'FNR == 1 { if (!done) { print "x," $0 }; next } { print x "," $0 }' \
      done=$([ -s "$dest" ] && echo 1 || echo 0) "$2" >> "$dest"
    shift 2
  done
}

# Mix sweep.
mix_args=()
for mix in 20/30/50 40/30/30 60/20/20 80/10/10; do
  IFS=/ read -r p s b <<< "$mix"
  point "mix-$p-$s-$b" --nodes 64 --slots 8 --premium-pct "$p" --standard-pct "$s"
  mix_args+=("$p" "$out/mix-$p-$s-$b.csv")
done
combine "$out/sweep-mix.csv" "${mix_args[@]}"

# Fleet sweep.
fleet_args=()
for nodes in 48 56 64 80; do
  if [ "$nodes" = 64 ]; then
    cp "$out/mix-20-30-50.csv" "$out/fleet-64.csv"
  else
    point "fleet-$nodes" --nodes "$nodes" --slots 8
  fi
  fleet_args+=("$nodes" "$out/fleet-$nodes.csv")
done
combine "$out/sweep-fleet.csv" "${fleet_args[@]}"

# Admission control at 80/10/10: quotas by share of GPU time, 30 % premium + 30 % standard.
awk -F, -v cap=512 'NR > 1 && NF == 5 { gpu[$5] += $4; total += $4 }
  END { for (t in gpu) printf "%s %d %d\n", t, int(0.30 * cap * gpu[t] / total),
                                           int(0.30 * cap * gpu[t] / total) }' "$trace" \
  | sort > "$out/quota-philly.txt"
point "mix-80-10-10-quota" --nodes 64 --slots 8 --premium-pct 80 --standard-pct 10 \
  --quota "$out/quota-philly.txt"

# Eviction by cost against the best-fit node (issue 15), 20/30/50 on 64 x 8.
if [ -z "${SWEEP_REUSE:-}" ] || [ ! -s "$out/evict.csv" ]; then
  echo "== eviction by cost against best fit"
  "$replay" --trace "$trace" --limit "$limit" --nodes 64 --slots 8 \
    --policies singularity,singularity:best-fit --csv "$out/evict.csv" > "$out/evict.txt" \
    2> "$out/evict.log"
fi

# Figures: per sweep, premium and standard SLA, share at >= 95 % of ideal speed (all jobs and
# basic), mean slowdown of basic jobs, median JCT of all jobs.
plot() {  # plot CSV PNG XLABEL TITLE
  local csv=$1 png=$2 xlabel=$3 title=$4
  local gp=${png%.png}.gp
  {
    echo "set terminal pngcairo size 1400,900 font 'sans,10'"
    echo "set output '$png'"
    echo "set datafile separator ','"
    echo "set multiplot layout 2,3 title '$title'"
    echo "set key bottom left; set grid; set xlabel '$xlabel'"
    panel() {  # panel TITLE TIER COLUMN SCALE [logscale]
      echo "set title '$1'"
      [ "${5:-}" = log ] && echo "set logscale y" || echo "unset logscale y"
      local sep="plot "
      for p in fifo tiresias strict singularity; do
        # One series per policy (rows of other policies would break the line).
        printf "%s'< grep -E \"^[^,]*,%s,%s,\" %s' using 1:(\$%s * %s) with linespoints lw 2 pt 7 title '%s'" \
          "$sep" "$p" "$2" "$csv" "$3" "$4" "$p"
        sep=", "
      done
      echo
    }
    panel "premium jobs meeting 95 % (%)" premium 5 100
    panel "standard jobs meeting 70 % (%)" standard 5 100
    panel "all jobs at >= 95 % of ideal speed (%)" all 21 100
    panel "basic jobs at >= 95 % of ideal speed (%)" basic 21 100
    panel "basic jobs: mean slowdown" basic 22 1 log
    panel "all jobs: median JCT (h)" all 8 "1/3600.0" log
    echo "unset multiplot"
  } > "$gp"
  gnuplot "$gp"
  echo "wrote $png"
}
plot "$out/sweep-mix.csv" "$out/cluster-sweep-mix.png" "premium share of jobs (%)" \
  "Philly, 64 x 8 slots: tier mix from 20/30/50 to 80/10/10"
plot "$out/sweep-fleet.csv" "$out/cluster-sweep-fleet.png" "nodes (x 8 slots)" \
  "Philly at 20/30/50: fleet size"

# Summary tables (the figures' numbers).
summary() {  # summary CSV: one markdown row per point and policy
  awk -F, 'NR > 1 {
      k = $1 "," $2
      if (!(k in seen)) { order[++n] = k; seen[k] = 1 }
      sla[k, $3] = $5; s95[k, $3] = $21; med[k, $3] = $8; slow[k, $3] = $22; pre[k, $3] = $13
      lost[k, $3] = $26; util[k] = $16
    }
    END {
      print "| x | policy | premium SLA | standard SLA | all >= 95 % | basic >= 95 % | JCT median, all (h) | mean slowdown, basic | preemptions per job | lost slot-h | utilization (window) |"
      print "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, kk, ",")
        printf "| %s | %s | %.2f %% | %.2f %% | %.1f %% | %.1f %% | %.2f | %.1f | %.3f | %.0f | %.1f %% |\n",
          kk[1], kk[2], 100 * sla[k, "premium"], 100 * sla[k, "standard"], 100 * s95[k, "all"],
          100 * s95[k, "basic"], med[k, "all"] / 3600, slow[k, "basic"], pre[k, "all"],
          lost[k, "all"], 100 * util[k]
      }
    }' "$1"
}
summary "$out/sweep-mix.csv" | tee "$out/sweep-mix.md"
summary "$out/sweep-fleet.csv" | tee "$out/sweep-fleet.md"
combine "$out/quota.csv" 80 "$out/mix-80-10-10.csv" 80q "$out/mix-80-10-10-quota.csv"
summary "$out/quota.csv" | tee "$out/quota.md"
echo "load after: $(uptime)"
echo "results in $out"
