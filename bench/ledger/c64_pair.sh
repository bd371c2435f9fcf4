#!/usr/bin/env bash
# Committee 64 on one box, configurations run alternately in the same session: the CPU a
# height costs (politicians + citizen daemons, from /proc, over committee rounds / 64) and the
# throughput figures, so that a change's effect is measured against a baseline run minutes
# apart on the same shared machine.
# Usage: TESSERA_BUILD=build/release TESSERA_BENCH_OUT=out bench/ledger/c64_pair.sh
# Optional: C64_VARIANTS (default "poll:round_wait_ms=0 longpoll:round_wait_ms=2000"): each
# NAME:KEY=VALUE[,KEY=VALUE] sets localnet keys over the base config below (config.sh), and
# build=DIR runs that variant with DIR/bin's binaries (e.g. a copy of the previous build);
# C64_REPEATS (default 2), C64_SECONDS (default 60), C64_RATE (default 600),
# C64_TIMEOUT_MS (round timeout, default 20000; the budget's target is 0.3 x it since the sixth
# session, 0.5 x before: add target_round_s=... to a variant for the old one),
# C64_MAX_POOL (max_pool_txs, default 4000 since session 21, 400 before: pools start at 50).
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
variants=${C64_VARIANTS:-poll:round_wait_ms=0 longpoll:round_wait_ms=2000}
repeats=${C64_REPEATS:-2}
seconds=${C64_SECONDS:-60}
rate=${C64_RATE:-600}
timeout_ms=${C64_TIMEOUT_MS:-20000}
max_pool=${C64_MAX_POOL:-4000}
localnet="$build/bin/ledger-localnet"
[ -x "$localnet" ] || { echo "missing $localnet"; exit 1; }
mkdir -p "$out"
source "$(dirname "$0")/config.sh"

for rep in $(seq 1 "$repeats"); do
  for variant in $variants; do
    name=${variant%%:*}
    overrides=""
    [[ $variant == *:* ]] && overrides=${variant#*:}
    run="$name-$rep"
    mapfile -t all_args < <(ledger_overrides_args "$overrides")
    variant_localnet=$localnet overrides_args=()
    for kv in "${all_args[@]}"; do
      case $kv in
        build=*) variant_localnet="${kv#build=}/bin/ledger-localnet" ;;  # another build's binaries
        *) overrides_args+=("$kv") ;;
      esac
    done
    [ -x "$variant_localnet" ] || { echo "missing $variant_localnet"; exit 1; }
    ledger_write_config "$out/$run.toml" citizens=72 committee_size=64 validation_sample=0.8291 \
      max_pool_txs="$max_pool" log_level='"info"' rate="$rate" duration_s="$seconds" \
      round_timeout_ms="$timeout_ms" "${overrides_args[@]}"
    before=$(uptime)
    echo "c64 $run: $before"
    "$variant_localnet" --check --config "$out/$run.toml" --out "$out/run-$run" > "$out/$run.log" 2>&1 || echo "  $run: run or audit FAILED (see $out/$run.log)"
    after=$(uptime)
    [ -f "$out/run-$run/report.json" ] && cp "$out/run-$run/report.json" "$out/report-$run.json"
    printf '%s\n%s\n' "$before" "$after" > "$out/uptime-$run.txt"
    rm -rf "$out/run-$run/politician-"* "$out/run-$run/citizen-"*  # keep logs and report only
  done
done

python3 - "$out" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
print(f"{'run':<14} {'blocks':>6} {'tx/blk':>7} {'tx/s':>6} {'steady':>6} {'p50/p99 s':>11} {'rounds':>6} {'heights':>7} {'CPU s cit/pol/gen':>18} {'CPU-s/height':>12} {'tx/CPU-s':>8} {'load 1m before->after':>22} audit")
for path in sorted(glob.glob(os.path.join(out, "report-*.json"))):
    run = os.path.basename(path)[7:-5]
    r = json.load(open(path))
    heights = r["committee_rounds"] / 64
    cpu = r["cpu_s_citizens"] + r["cpu_s_politicians"]
    loads = re.findall(r"load average: ([\d.]+)", open(os.path.join(out, f"uptime-{run}.txt")).read())
    ok = (r["forks"] == 0 and r["invalid_blocks"] == 0 and r["balances_conserved"] and
          r["double_spends_committed"] == 0 and r["politicians_agree"] and r["citizens_agree"] and r["proofs_ok"])
    print(f"{run:<14} {r['blocks']:>6} {r['txs_per_block']:>7.0f} {r['tx_per_s']:>6.1f} {r.get('steady_tx_per_s', 0):>6.1f} "
          f"{r['latency_p50_s']:>5.1f}/{r['latency_p99_s']:<5.1f} {r['committee_rounds']:>6} {heights:>7.2f} "
          f"{'%.1f/%.1f/%.1f' % (r['cpu_s_citizens'], r['cpu_s_politicians'], r['cpu_s_launcher']):>18} "
          f"{cpu / max(heights, 1e-9):>12.2f} {r['committed_txs'] / max(cpu + r['cpu_s_launcher'], 1e-9):>8.1f} "
          f"{' -> '.join(loads):>22} {'PASS' if ok else 'FAIL'}")
PY
