#!/usr/bin/env bash
# Blockene saturation sweep: a real network on loopback (5 politicians, citizens in daemon
# processes) offered 150 -> 3000 tx/s at committee 16 and 64; per run the committed tx/s, the
# p50/p99 commit latency, the load generator's offered/submitted/turned-away counts and the
# citizens' bytes, and the audit. Plots committed tx/s and latency against offered load.
# Usage: TESSERA_BUILD=build/release TESSERA_BENCH_OUT=out bench/ledger/sweep.sh
# Optional: LEDGER_SWEEP_SECONDS (per run, default 40), LEDGER_SWEEP_RATES (default
# "150 300 600 1000 1500 2000 3000"), LEDGER_SWEEP_COMMITTEES (default "16 64"),
# LEDGER_SWEEP_ACCOUNTS (default 40000), LEDGER_SWEEP_SAMPLE (validation sample, default 0.25),
# LEDGER_SWEEP_NONMEMBERS (citizens beyond the expected committee, default 8). The table adds a
# non-member's bytes per block followed and the CPU per committed transfer by role
# (politicians / citizen daemons / the launcher: load generator and auditor), the share of the
# box the run got (`cores`: the network's CPU-seconds per second of load; on a shared box a run
# that got less commits less at any offered load) and the load generator's resends per second.
# LEDGER_SWEEP_VARIANTS (default "honest"): "honest" (all 5 politicians honest) and/or
# "withhold" (politician 0 of 5 runs `withhold_data`: it names its pools but never hands out
# their transactions). With both, each offered rate runs honest then withholding back to
# back, so the pair sees about the same load on the shared box, and the summary gives the
# withholding sweep as a fraction of the honest one per rate. LEDGER_SWEEP_WITHHOLD=1 is
# LEDGER_SWEEP_VARIANTS=withhold. "total-bound": all honest, with the politicians' admission
# bound of before the waiting bound (network.waiting_pools = 0: the mempool's total of
# backlog_pools pools only; block_budget.h), to compare the two bounds rate by rate in one
# sweep (e.g. LEDGER_SWEEP_VARIANTS="honest total-bound"). A second table splits each run's
# latency into its stages (round_timeline.h: admission, mempool, pool -> block, block ->
# visible), p50 / p99 and the mean over the transfers at or above the p99, in block intervals.
# Each run records the load
# average before and after it (`uptime`): the box is shared. LEDGER_SWEEP_LOG_LEVEL=info (with
# LEDGER_SWEEP_KEEP_LOGS=1) keeps every process's log, each commit with its duration.
# "target<S>" (e.g. target7): all honest, the politicians' block budget aiming at rounds of S
# seconds (network.target_round_s; the localnet's default is 0.6 x the BA* next-vote deadline:
# 6 s at the benches' 20 s round timeout, localnet.h BudgetTargetRoundS). The
# table's `retried` column counts the blocks that needed a second BA* period (or more).
# LEDGER_SWEEP_SUMMARY_ONLY=1 redoes the table and plot from the reports already in $out.
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
seconds=${LEDGER_SWEEP_SECONDS:-40}
rates=${LEDGER_SWEEP_RATES:-150 300 600 1000 1500 2000 3000}
committees=${LEDGER_SWEEP_COMMITTEES:-16 64}
accounts=${LEDGER_SWEEP_ACCOUNTS:-40000}
sample=${LEDGER_SWEEP_SAMPLE:-0.25}
nonmembers=${LEDGER_SWEEP_NONMEMBERS:-8}
variants=${LEDGER_SWEEP_VARIANTS:-honest}
[ "${LEDGER_SWEEP_WITHHOLD:-0}" = 1 ] && variants=withhold
for variant in $variants; do
  case $variant in
    honest|withhold|total-bound|target[0-9]*) ;;
    *) echo "LEDGER_SWEEP_VARIANTS: unknown variant '$variant' (honest, withhold, total-bound, target<S>)"; exit 1 ;;
  esac
done
localnet="$build/bin/ledger-localnet"
[ -x "$localnet" ] || { echo "missing $localnet (build ledger-localnet ledger-politician ledger-citizen)"; exit 1; }
mkdir -p "$out"
source "$(dirname "$0")/config.sh"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

# Report and config names: c<committee>-r<rate> for the honest network (as before variants
# existed), c<committee>-r<rate>-withhold with the withholding politician.
suffix() { [ "$1" = honest ] || printf -- '-%s' "$1"; }

for committee in $committees; do
  citizens=$((committee + nonmembers))
  for rate in $rates; do
    for variant in $variants; do
      [ "${LEDGER_SWEEP_SUMMARY_ONLY:-0}" = 1 ] && continue  # tables and plot from the reports
      name="c${committee}-r${rate}$(suffix "$variant")"
      adversary=""
      bound=()
      [ "$variant" = total-bound ] && bound=(waiting_pools=0)
      [[ $variant == target[0-9]* ]] && bound=(target_round_s="${variant#target}")
      if [ "$variant" = withhold ]; then
        adversary=$'[adversary]\npoliticians = 0.2\npolitician_behaviours = ["withhold_data"]'
      fi
      ledger_write_config "$out/$name.toml" citizens="$citizens" committee_size="$committee" \
        validation_sample="$sample" accounts="$accounts" max_pool_txs=2000 \
        log_level="\"${LEDGER_SWEEP_LOG_LEVEL:-warn}\"" rate="$rate" duration_s="$seconds" \
        adversary="$adversary" "${bound[@]}"
      echo "sweep ($variant): committee $committee of $citizens citizens, offered $rate tx/s for ${seconds}s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
      load_before=$(cut -d' ' -f1 /proc/loadavg)
      if ! "$localnet" --check --config "$out/$name.toml" --out "$out/run-$name" > "$out/$name.log" 2>&1; then
        echo "  run FAILED or audit failed; see $out/$name.log"
      fi
      if [ -f "$out/run-$name/report.json" ]; then
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r['load_before'], r['load_after'] = float(sys.argv[2]), float(sys.argv[3]); json.dump(r, open(sys.argv[4], 'w'), indent=1)" \
          "$out/run-$name/report.json" "$load_before" "$(cut -d' ' -f1 /proc/loadavg)" "$out/report-$name.json"
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('  committed %.1f tx/s (steady %.1f), submitted %.1f/s, busy %d (refused calls %d), p50 %.1fs p99 %.1fs, interval %.1fs, %d blocks' % (r['tx_per_s'], r.get('steady_tx_per_s', 0), r['submitted_tx_per_s'], r['busy_submissions'], r.get('busy_answers', 0), r['latency_p50_s'], r['latency_p99_s'], r['block_interval_s'], r['blocks']))" "$out/report-$name.json"
      fi
      if [ "${LEDGER_SWEEP_KEEP_LOGS:-0}" = 1 ] && [ -d "$out/run-$name/logs" ]; then
        cp -r "$out/run-$name/logs" "$out/logs-$name"
      fi
      rm -rf "$out/run-$name"
    done
  done
done

python3 - "$out" "$committees" "$rates" "$(nproc)" "$sample" "$seconds" "$variants" <<'PY'
import json, os, sys
out, committees, rates, cores, sample, seconds, variants = sys.argv[1], sys.argv[2].split(), [int(r) for r in sys.argv[3].split()], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7].split()
WHO = {"honest": "all honest", "withhold": "one withholding pool data",
       "total-bound": "all honest, total admission bound only"}
WHO.update({v: f"all honest, block budget target {v[6:]} s" for v in variants if v.startswith("target")})
def suffix(v): return "" if v == "honest" else f"-{v}"
lines = [f"saturation sweep: 5 politicians ({'; '.join(WHO[v] for v in variants)}), {cores} cores, validation sample {sample}, {seconds} s per run",
         "committed = all our transfers committed / (last block - first submission); steady = blocks after the first / (last block - first block)",
         f"{'politicians':>11} {'committee':>9} {'offered':>8} {'submitted':>9} {'busy':>7} {'refused/s':>9} {'committed':>9} {'steady':>7} {'p50 s':>6} {'p99 s':>6} {'interval s':>10} {'p99/int':>7} {'tx/blk':>6} {'blocks':>6} {'retried':>7} {'member B/blk':>12} {'follow B/blk':>12} {'CPU ms/tx pol/cit/gen':>22} {'tx/CPU-s':>8} {'cores':>5} {'resent/s':>8} {'load':>9} {'audit':>5}"]
all_pass = True
summary = []
STAGES = ["admission", "mempool", "pool_to_block", "block_to_visible", "total"]
breakdown = ["", "latency by stage, in block intervals (round_timeline.h): p50 / p99 / mean over the transfers at or above the p99 total",
             f"{'politicians':>11} {'committee':>9} {'offered':>8} " + " ".join(f"{s:>18}" for s in STAGES) + f" {'attributed':>10}"]
by_variant = {}  # (variant, committee) -> {rate: report}
for c in committees:
  for v in variants:
    rows = []
    for rate in rates:
        path = os.path.join(out, f"report-c{c}-r{rate}{suffix(v)}.json")
        if not os.path.exists(path):
            lines.append(f"{v:>11} {c:>9} {rate:>8} (no report)")
            all_pass = False
            continue
        r = json.load(open(path))
        ok = (r["forks"] == 0 and r["invalid_blocks"] == 0 and r["balances_conserved"] and
              r["double_spends_committed"] == 0 and r["politicians_agree"] and r["citizens_agree"]
              and r["proofs_ok"])
        all_pass &= ok
        member = r["citizen_bytes_up_per_block"] + r["citizen_bytes_down_per_block"]
        rows.append((rate, r, member, ok))
        p99_int = r['latency_p99_s'] / max(r['block_interval_s'], 1e-9)
        load = '%.0f-%.0f' % (r.get('load_before', 0), r.get('load_after', 0))
        # Committed transfers per CPU-second of the whole network (politicians, citizens, load
        # generator and auditor): independent of how much of the shared box the run got.
        cpu_s = r.get('cpu_s_politicians', 0) + r.get('cpu_s_citizens', 0) + r.get('cpu_s_launcher', 0)
        r['tx_per_cpu_s'] = r['committed_txs'] / cpu_s if cpu_s > 0 else 0
        # The share of the box the network got: its CPU-seconds per second of load (the
        # launcher's CPU is read when the load stops). A run that got less of a shared box
        # commits less whatever the offered load; compare runs' shares before their tx/s.
        r['cores'] = cpu_s / max(float(seconds), 1e-9)
        lines.append(f"{v:>11} {c:>9} {rate:>8} {r['submitted_tx_per_s']:>9.1f} {r['busy_submissions']:>7} {r.get('busy_answers', 0) / float(seconds):>9.1f} {r['tx_per_s']:>9.1f} {r.get('steady_tx_per_s', 0):>7.1f} {r['latency_p50_s']:>6.1f} {r['latency_p99_s']:>6.1f} {r['block_interval_s']:>10.1f} {p99_int:>7.1f} {r['txs_per_block']:>6.0f} {r['blocks']:>6} {r.get('recovered_blocks', 0):>7} {member:>12.0f} {r.get('citizen_nonmember_bytes_per_block', 0):>12.0f} {'%.2f/%.2f/%.2f' % (r.get('cpu_ms_per_tx_politicians', 0), r.get('cpu_ms_per_tx_citizens', 0), r.get('cpu_ms_per_tx_launcher', 0)):>22} {r['tx_per_cpu_s']:>8.0f} {r['cores']:>5.2f} {r.get('resent_submissions', 0) / float(seconds):>8.1f} {load:>9} {'PASS' if ok else 'FAIL':>5}")
        if 'latency_total_p50_s' in r:
            iv = max(r['block_interval_s'], 1e-9)
            breakdown.append(f"{v:>11} {c:>9} {rate:>8} " + " ".join(
                f"{'%.2f/%.2f/%.2f' % (r['latency_%s_p50_s' % s] / iv, r['latency_%s_p99_s' % s] / iv, r['latency_%s_tail_s' % s] / iv):>18}" for s in STAGES)
                + f" {r['latency_attributed_txs']:>5}/{r['latency_attributed_txs'] + r['latency_unattributed_txs']}")
    by_variant[(v, c)] = {rate: r for rate, r, _, _ in rows}
    with open(os.path.join(out, f"sweep-c{c}{suffix(v)}.dat"), "w") as f:
        f.write("# offered submitted committed p50_s p99_s block_interval_s steady\n")
        for rate, r, member, ok in rows:
            f.write(f"{rate} {r['submitted_tx_per_s']:.2f} {r['tx_per_s']:.2f} {r['latency_p50_s']:.2f} {r['latency_p99_s']:.2f} {r['block_interval_s']:.2f} {r.get('steady_tx_per_s', 0):.2f}\n")
    if rows:
        who = f"committee {c}, {WHO[v]}"
        peak_rate, peak = max(((rate, r) for rate, r, _, _ in rows), key=lambda x: x[1]["tx_per_s"])
        # Saturating offered load: the lowest offered rate whose committed rate is within 10% of
        # the peak; beyond: every offered rate >= 2x that one.
        sat = min(rate for rate, r, _, _ in rows if r["tx_per_s"] >= 0.9 * peak["tx_per_s"])
        beyond = [(rate, r) for rate, r, _, _ in rows if rate >= 2 * sat]
        worst = min((r["tx_per_s"] for _, r in beyond), default=None)
        p99_ok = all(r["latency_p99_s"] <= 3 * max(r["block_interval_s"], 1e-9) for _, r in beyond)
        summary.append(f"{who}: peak {peak['tx_per_s']:.1f} tx/s at offered {peak_rate}; saturating offered load ~{sat}; "
                       + (f"at >= 2x ({', '.join(str(x) for x, _ in beyond)}): worst {worst:.1f} tx/s = {100 * worst / peak['tx_per_s']:.0f}% of peak (goal >= 90%), p99 <= 3 block intervals: {'yes' if p99_ok else 'NO'}"
                          if beyond else "no run at >= 2x the saturating load"))
        speak_rate, speak = max(((rate, r) for rate, r, _, _ in rows), key=lambda x: x[1].get("steady_tx_per_s", 0))
        ssat = min(rate for rate, r, _, _ in rows if r.get("steady_tx_per_s", 0) >= 0.9 * speak.get("steady_tx_per_s", 0))
        sbeyond = [(rate, r) for rate, r, _, _ in rows if rate >= 2 * ssat]
        sworst = min((r.get("steady_tx_per_s", 0) for _, r in sbeyond), default=None)
        epeak = max(r["tx_per_cpu_s"] for _, r, _, _ in rows)
        eworst = min((r["tx_per_cpu_s"] for _, r in beyond), default=None)
        if eworst is not None and epeak > 0:
            summary.append(f"{who}, work per CPU-second: best {epeak:.0f} committed tx per CPU-s; at >= 2x the saturating load worst {eworst:.0f} = {100 * eworst / epeak:.0f}%")
        if speak.get("steady_tx_per_s", 0) > 0:
            summary.append(f"{who}, steady state: peak {speak['steady_tx_per_s']:.1f} tx/s at offered {speak_rate}; saturating ~{ssat}; "
                           + (f"at >= 2x: worst {sworst:.1f} tx/s = {100 * sworst / speak['steady_tx_per_s']:.0f}% of peak" if sbeyond else "no run at >= 2x"))
  # Each other variant beside the honest one, rate by rate (each pair ran back to back).
  for other in [v for v in variants if v != "honest"]:
    honest, bad = by_variant.get(("honest", c), {}), by_variant.get((other, c), {})
    both = [rate for rate in rates if rate in honest and rate in bad]
    if both:
      summary.append(f"committee {c}, {other} / honest committed tx/s per offered rate: "
                     + ", ".join(f"{rate}: {100 * bad[rate]['tx_per_s'] / max(honest[rate]['tx_per_s'], 1e-9):.0f}%" for rate in both)
                     + f"; peak {100 * max(bad[x]['tx_per_s'] for x in both) / max(max(honest[x]['tx_per_s'] for x in both), 1e-9):.0f}% of the honest peak"
                     + f"; p99 / interval {other}: " + ", ".join(f"{bad[x]['latency_p99_s'] / max(bad[x]['block_interval_s'], 1e-9):.1f}" for x in both))
lines += breakdown + [""] + summary + [f"audit of every run (no fork, valid blocks, conservation, no double spend, agreement, proofs): {'PASS' if all_pass else 'FAIL'}"]
loads = [x for rs in by_variant.values() for r in rs.values()
         for x in (r.get("load_before"), r.get("load_after")) if x is not None]
open(os.path.join(out, "load_range.txt"), "w").write(f"{min(loads):.0f}-{max(loads):.0f}" if loads else "?")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "sweep_results.txt"), "w").write(text)
print(text)
PY

plots=""
lat=""
for c in $committees; do
  for variant in $variants; do
    dat="$out/sweep-c$c$(suffix "$variant").dat"
    who="committee $c"
    [ "$variant" = honest ] || who="$who, $variant"
    plots="$plots \"$dat\" using 1:2 with linespoints dt 3 title \"admitted, $who\", \"$dat\" using 1:3 with linespoints lw 2 title \"committed, $who\", \"$dat\" using 1:7 with linespoints dt 2 title \"steady state, $who\","
    lat="$lat \"$dat\" using 1:4 with linespoints title \"p50, $who\", \"$dat\" using 1:5 with linespoints dt 2 title \"p99, $who\","
  done
done
gnuplot <<GP
set terminal pngcairo size 1000,420
set output "$out/sweep.png"
set multiplot layout 1,2 title "Blockene localnet on $(nproc) shared cores (load average $(cat "$out/load_range.txt") during the runs): 5 politicians, validation sample $sample"
set xlabel "offered tx/s"
set ylabel "committed tx/s"
set key top left font ",8"
set yrange [0:*]
plot ${plots%,}
set ylabel "commit latency (s)"
plot ${lat%,}
unset multiplot
GP
echo "plot: $out/sweep.png"
