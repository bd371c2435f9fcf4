#!/usr/bin/env bash
# Reviews benchmarks: URS sign/verify versus ring size and RFC 9474 blind-signature costs, each
# reported as a ratio to baselines measured in the same run (one ristretto255 scalar
# multiplication, one Ed25519 verification). Uses CPU time per operation (one thread).
# Inputs: $TESSERA_BUILD (a build directory), $TESSERA_BENCH_OUT (output directory).
# Outputs: reviews_bench.csv (raw), summary.txt (table), reviews-urs-ring-size.png (plot).
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
mkdir -p "$out"
echo "reviews bench: running $build/bench/reviews_bench (about a minute)..."
"$build/bench/reviews_bench" --benchmark_min_time=${REVIEWS_BENCH_MIN_TIME:-0.3} \
  --benchmark_format=csv 2> "$out/bench.log" > "$out/reviews_bench.csv"

# name,iterations,real_time,cpu_time,time_unit,... -> name and CPU microseconds.
awk -F, 'NR > 1 && $1 ~ /^"BM_/ {
  gsub(/"/, "", $1); t = $4; u = $5;
  if (u == "ns") t /= 1000; else if (u == "ms") t *= 1000; else if (u == "s") t *= 1e6;
  printf "%s %.3f\n", $1, t }' "$out/reviews_bench.csv" > "$out/cpu_us.txt"

smul=$(awk '$1 == "BM_RistrettoScalarMult" {print $2}' "$out/cpu_us.txt")
ed=$(awk '$1 == "BM_Ed25519Verify" {print $2}' "$out/cpu_us.txt")
{
  echo "Reviews cryptography, CPU time per operation (one thread), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "baselines in the same run: ristretto255 scalar mult = ${smul} us, Ed25519 verify = ${ed} us"
  echo
  printf "%-28s %12s %14s %14s %16s\n" operation "cpu (us)" "x scalarmult" "x Ed25519 vfy" "per ring member"
  awk -v smul="$smul" -v ed="$ed" '$1 !~ /^BM_UrsVerifyReviews/ {
    per = "-"; n = $1; sub(/.*\//, "", n);
    if ($1 ~ /^BM_Urs/) per = sprintf("%.1f us = %.2f smul", $2 / n, $2 / n / smul);
    printf "%-28s %12.1f %14.1f %14.1f %16s\n", $1, $2, $2 / smul, $2 / ed, per }' "$out/cpu_us.txt"
  echo
  echo "Verifying reviews as a ledger node does (ring decoded, then verified), CPU per review:"
  printf "%-8s %20s %22s %8s\n" "ring k" "unbatched (ms)" "batch of 8 (ms/review)" "ratio"
  awk '$1 ~ /^BM_UrsVerifyReviews\// { split($1, a, "/"); t[a[2] "/" a[3]] = $2; k[a[2]] = 1 }
       END { for (n in k) printf "%d %.3f %.3f\n", n, t[n "/1"] / 1000, t[n "/8"] / 8000 }' \
    "$out/cpu_us.txt" | sort -n | awk '{ printf "%-8d %20.3f %22.3f %8.3f\n", $1, $2, $3, $3 / $2 }'
} | tee "$out/summary.txt"

# Sign/verify time versus ring size, with the linear reference 4 scalar mults per member.
awk '$1 ~ /^BM_UrsSign\// { n = $1; sub(/.*\//, "", n); s[n] = $2 }
     $1 ~ /^BM_UrsVerify\// { n = $1; sub(/.*\//, "", n); v[n] = $2 }
     END { for (n in s) print n, s[n] / 1000, v[n] / 1000 }' "$out/cpu_us.txt" | sort -n \
  > "$out/urs_ring_size.dat"
gnuplot <<GP
set terminal pngcairo size 900,560 font 'sans,11'
set output '$out/reviews-urs-ring-size.png'
set termoption noenhanced
set logscale xy
set grid
set key top left
set xlabel 'ring size n'
set ylabel 'CPU time per operation (ms)'
set title 'Unique ring signature cost versus ring size (one core)'
plot '$out/urs_ring_size.dat' using 1:2 with linespoints pt 7 title 'sign', \
     '' using 1:3 with linespoints pt 5 title 'verify', \
     '' using 1:(4*\$1*$smul/1000) with lines dt 2 lc rgb 'black' title '4 n scalar mults (same run)'
GP
echo "reviews bench: wrote $out/summary.txt and $out/reviews-urs-ring-size.png"

# Reviews committed per second on a local network, beside transfers/s (net_run.sh, ~2 min).
if [ "${REVIEWS_BENCH_NET:-1}" = 0 ]; then
  echo "reviews bench: network part skipped (REVIEWS_BENCH_NET=0)"
elif [ ! -x "$build/bin/ledger-localnet" ] || [ ! -x "$build/bin/reviews-load" ]; then
  echo "reviews bench: network part skipped (build without the ledger system)"
else
  "$(dirname "$0")/net_run.sh"
fi
