#!/usr/bin/env bash
# Blockene network benchmark: a real network on loopback (5 politicians, a committee of 16, 32
# and 64 citizens, every member validating every block), each figure beside the paper's; then
# the 64-member run again with sampled validation (each citizen verifies a quarter of the
# signatures itself), beside the full-validation run.
# Usage: TESSERA_BUILD=build/release TESSERA_BENCH_OUT=out bench/ledger/net_run.sh
# Optional: LEDGER_NET_SECONDS (per run, default 60), LEDGER_NET_RATE (offered tx/s, default 150).
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
seconds=${LEDGER_NET_SECONDS:-60}
rate=${LEDGER_NET_RATE:-150}
localnet="$build/bin/ledger-localnet"
[ -x "$localnet" ] || { echo "missing $localnet (ninja -C $build ledger-localnet ledger-politician ledger-citizen)"; exit 1; }
mkdir -p "$out"
# ledger-localnet kills its children itself (and they die with it); this also covers Ctrl-C.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

for run in 16 32 64 64s; do
  committee=${run%s}
  sample=1.0
  [ "$run" = 64s ] && sample=0.25
  cat > "$out/net-$run.toml" <<TOML
[network]
politicians = 5
citizens = $committee
validation_sample = $sample
citizens_per_process = 32
proposers = 4
accounts = 4000
max_pool_txs = 4000
[load]
rate = $rate
duration_s = $seconds
double_spend_fraction = 0.01
fanout = 1
[timing]
poll_ms = 150
witness_ms = 400
proposal_ms = 500
round_timeout_ms = 20000
TOML
  echo "ledger-net: 5 politicians, committee $committee, validation sample $sample, offered $rate tx/s for ${seconds}s"
  "$localnet" --check --config "$out/net-$run.toml" --out "$out/run-$run" \
    | grep -v '^ ' | grep -v '^[{}]$'
  cp "$out/run-$run/report.json" "$out/report-$run.json"
  rm -rf "$out/run-$run"
done

python3 - "$out" "$rate" "$(nproc)" <<'PY'
import json, os, sys
out, rate, cores = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
PAPER_TPS, PAPER_MB_DAY = 1045.0, 60.0
rows = []
for c in (16, 32, 64):
    r = json.load(open(os.path.join(out, f"report-{c}.json")))
    rows.append((c, r))
with open(os.path.join(out, "net_scaling.dat"), "w") as f:
    f.write("# committee tx_per_s block_interval_s citizen_cpu_ms_per_block\n")
    for c, r in rows:
        f.write(f"{c} {r['tx_per_s']:.2f} {r['block_interval_s']:.2f} {r['citizen_cpu_ms_per_block']:.2f}\n")
c, r = rows[-1]
bytes_per_block = r["citizen_bytes_up_per_block"] + r["citizen_bytes_down_per_block"]
txs_per_block = max(r["txs_per_block"], 1e-9)
bytes_per_tx = bytes_per_block / txs_per_block
# A committee member's data per committee block, scaled to 1045 tx/s. Two bounds: (a) the
# member sits on every committee (our localnet: everyone is on every committee); (b) the
# research note's proposal of C = 2000 members drawn from 1,000,000 citizens (a member is on
# 0.2% of committees) -- an assumption, not a measurement.
mb_day_always = bytes_per_tx * PAPER_TPS * 86400 / 1e6
mb_day_sampled = mb_day_always * 2000 / 1e6
lines = [
    f"{'figure (committee 64, 5 politicians, ' + str(cores) + ' cores)':<58} {'measured':>14} | {'paper (Blockene)':>18} | ratio",
    f"{'committed tx/s':<58} {r['tx_per_s']:>14.1f} | {PAPER_TPS:>18.0f} | {r['tx_per_s'] / PAPER_TPS:.3f}",
    f"{'offered tx/s':<58} {rate:>14.0f} | {'':>18} |",
    f"{'commit latency p50 / p90 (s)':<58} {r['latency_p50_s']:>6.1f} / {r['latency_p90_s']:<5.1f} | {'n/a':>18} |",
    f"{'block interval (s), txs per block':<58} {r['block_interval_s']:>6.1f} / {r['txs_per_block']:<5.0f} | {'n/a':>18} |",
    f"{'citizen bytes up / down per committee block':<58} {r['citizen_bytes_up_per_block']:>6.0f} / {r['citizen_bytes_down_per_block']:<7.0f}| {'':>18} |",
    f"{'citizen bytes per committed tx (committee member)':<58} {bytes_per_tx:>14.0f} | {'':>18} |",
    f"{'citizen CPU per committee block (ms)':<58} {r['citizen_cpu_ms_per_block']:>14.1f} | {'':>18} |",
    f"{'citizen storage (bytes: key, identity, header)':<58} {r['citizen_storage_bytes']:>14.0f} | {'MBs':>18} |",
    f"{'MB/day at 1045 tx/s, on every committee (upper bound)':<58} {mb_day_always:>14.0f} | {PAPER_MB_DAY:>18.0f} | {mb_day_always / PAPER_MB_DAY:.1f}",
    f"{'MB/day at 1045 tx/s, C=2000 of 1e6 citizens (assumed)':<58} {mb_day_sampled:>14.2f} | {PAPER_MB_DAY:>18.0f} | {mb_day_sampled / PAPER_MB_DAY:.3f}",
    "",
    "committee  tx/s   block interval (s)  citizen CPU ms/block   (all three runs: 5 politicians)",
]
for c, r in rows:
    lines.append(f"{c:>9}  {r['tx_per_s']:>5.1f}   {r['block_interval_s']:>17.1f}  {r['citizen_cpu_ms_per_block']:>19.1f}")
sampled = json.load(open(os.path.join(out, "report-64s.json")))
full = rows[-1][1]
def sig_fraction(r):
    return r["signatures_checked"] / max(r["txs_validated"], 1)
lines += [
    "",
    "sampled validation, committee 64         full (sample 1.0)   sampled (0.25)   ratio",
    f"signatures verified / txs re-executed    {sig_fraction(full):>17.2f}   {sig_fraction(sampled):>14.2f}   {sig_fraction(sampled) / max(sig_fraction(full), 1e-9):.2f}",
    f"citizen CPU ms per committee block       {full['citizen_cpu_ms_per_block']:>17.1f}   {sampled['citizen_cpu_ms_per_block']:>14.1f}   {sampled['citizen_cpu_ms_per_block'] / max(full['citizen_cpu_ms_per_block'], 1e-9):.2f}",
    f"citizen CPU ms per committed tx          {full['citizen_cpu_ms_per_block'] / max(full['txs_per_block'], 1e-9):>17.2f}   {sampled['citizen_cpu_ms_per_block'] / max(sampled['txs_per_block'], 1e-9):>14.2f}   {(sampled['citizen_cpu_ms_per_block'] / max(sampled['txs_per_block'], 1e-9)) / max(full['citizen_cpu_ms_per_block'] / max(full['txs_per_block'], 1e-9), 1e-9):.2f}",
    f"committed tx/s                           {full['tx_per_s']:>17.1f}   {sampled['tx_per_s']:>14.1f}   {sampled['tx_per_s'] / max(full['tx_per_s'], 1e-9):.2f}",
]
rows_all = rows + [("64s", sampled)]
safe = all(r["forks"] == 0 and r["invalid_blocks"] == 0 and r["balances_conserved"] and
           r["double_spends_committed"] == 0 and r["politicians_agree"] and r["citizens_agree"]
           for _, r in rows_all)
lines.append(f"audit of every run (no fork, valid blocks, conservation, no double spend, agreement): {'PASS' if safe else 'FAIL'}")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "net_results.txt"), "w").write(text)
print(text)
PY

gnuplot <<GP
set terminal pngcairo size 800,480
set output "$out/net_scaling.png"
set title "Blockene localnet on $(nproc) cores: committed tx/s vs committee size (5 politicians)"
set xlabel "committee size (every member validates every block)"
set ylabel "committed tx/s"
set y2label "citizen CPU ms per block"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key top right
plot "$out/net_scaling.dat" using 1:2 with linespoints title "tx/s", \
     "$out/net_scaling.dat" using 1:4 axes x1y2 with linespoints title "citizen CPU ms/block"
GP
echo "ledger-net: results in $out/net_results.txt, plot $out/net_scaling.png"
