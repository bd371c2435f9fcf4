#!/usr/bin/env bash
# One A/B pair of the network bench (net_run.sh), back to back, same command: run A with the
# binaries of $1, run B with those of $2 (each a directory holding bin/ledger-localnet,
# ledger-politician, ledger-citizen, reviews-tool, reviews-issuer, reviews-load), outputs in
# $3/a and $3/b, the load average before, between and after in $3/load.txt. Every other setting
# comes from the environment as for net_run.sh (REVIEWS_NET_*). Used to measure one change at a
# time, e.g. the politicians' background pre-verification (ledger/net/pool_preverifier.h): B
# differs from A only in bin/ledger-politician.
set -uo pipefail
a=${1:?build dir A}; b=${2:?build dir B}; out=${3:?output dir}
mkdir -p "$out"
here=$(dirname "$0")
{ echo "start $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } | tee "$out/load.txt"
TESSERA_BUILD=$a TESSERA_BENCH_OUT=$out/a "$here/net_run.sh" > "$out/a.out" 2>&1 || echo "run A failed" | tee -a "$out/load.txt"
{ echo "between $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } | tee -a "$out/load.txt"
TESSERA_BUILD=$b TESSERA_BENCH_OUT=$out/b "$here/net_run.sh" > "$out/b.out" 2>&1 || echo "run B failed" | tee -a "$out/load.txt"
{ echo "end $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"; } | tee -a "$out/load.txt"
for r in a b; do echo "== $r"; sed -n '1,4p' "$out/$r/net_summary.txt" 2>/dev/null; grep -h "ring verifications per process" "$out/$r/net_summary.txt" 2>/dev/null; done | tee -a "$out/load.txt"
