#!/usr/bin/env bash
# Reviews committed per second on a real local network (ledger-localnet on loopback), beside
# the ledger's own transfers per second on the same network shape measured in the same run.
#   1. baseline: ledger-localnet with its transfer load generator (offered $REVIEWS_NET_RATE tx/s);
#   2. reviews: the same network with the reviews app, reviews-issuer and reviews-load, which
#      gets keys for $REVIEWS_NET_IDS identities, creates $REVIEWS_NET_ITEMS items and posts every
#      review DRAC allows, timed from the first submission to the last commit proved.
# Both runs use sampled validation (each citizen verifies $REVIEWS_NET_SAMPLE of the signatures,
# Blockene style): with every citizen verifying every ring signature, the 2-core machine this
# was written on spends its time in citizens' verification, not in the protocol.
# The launcher's audit (ledger-localnet replays every block, verifying every signature, as
# blocks commit) is the harness's, not the network's: with REVIEWS_NET_AUDIT=after (default)
# the launcher is stopped (SIGSTOP) while the reviews load runs and continued before it is
# told to stop, so its replay, and every ring verification in it, runs after the measured
# window (its CPU is reported separately); REVIEWS_NET_AUDIT=during keeps the old behaviour.
# The transfer baselines keep their launcher running: its load generator submits the
# transfers, and the summary reports its CPU per transfer.
# REVIEWS_NET_REPEATS=N (default 1) runs the whole sequence N times, each in $out/runI, and
# writes the ratios of every run to $out/net_repeats.txt.
# Inputs: $TESSERA_BUILD (bin/ledger-localnet, ledger-politician, ledger-citizen, reviews-tool,
# reviews-issuer, reviews-load), $TESSERA_BENCH_OUT. Output: net_summary.txt, the JSON reports.
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
repeats=${REVIEWS_NET_REPEATS:-1}
if [ "$repeats" -gt 1 ]; then
  mkdir -p "$out"
  for i in $(seq 1 "$repeats"); do
    echo "reviews net bench: run $i of $repeats, $(uptime | sed 's/.*load/load/')"
    TESSERA_BENCH_OUT="$out/run$i" REVIEWS_NET_REPEATS=1 "$0" || echo "run $i failed"
  done
  python3 - "$out" "$repeats" <<'PY2' | tee "$out/net_repeats.txt"
import json, os, sys
out, n = sys.argv[1], int(sys.argv[2])
# The same network's transfers when they ran (REVIEWS_NET_TRANSFERS > 0), else the fresh
# networks' baselines.
print("run  reviews/s  transfers/s before, after   ratio before, after   baseline   load average (1, 5, 15 min) at start; at end")
for i in range(1, n + 1):
    path = os.path.join(out, f"run{i}", "net_summary.json")
    if not os.path.exists(path):
        print(f"{i:3d}  failed (no summary)")
        continue
    s = json.load(open(path))
    same = s.get('same_network_transfers_per_s') or []
    rates, ratios, which = (same, s['same_network_ratio'], "same") if len(same) == 2 else \
        (s['transfers_per_s'], s['ratio'], "fresh")
    print(f"{i:3d}  {s['reviews_per_s']:9.1f}  {rates[0]:8.1f}, {rates[1]:8.1f}"
          f"   {ratios[0]:6.3f}, {ratios[1]:6.3f}        {which:5s}      {s['load_at_start']}; {s.get('load_at_end', '?')}")
PY2
  exit 0
fi
audit=${REVIEWS_NET_AUDIT:-after}
bin="$build/bin"
ids=${REVIEWS_NET_IDS:-8}
items=${REVIEWS_NET_ITEMS:-120}
sample=${REVIEWS_NET_SAMPLE:-0.25}
ring=${REVIEWS_NET_RING:-50}
epoch_blocks=${REVIEWS_NET_EPOCH_BLOCKS:-30}
# Committee: expected size C drawn from the citizens each block (0 = every citizen). Every
# committee member verifies $sample of a block's signatures, so a review costs about
# 3 politicians + C * sample ring verifications across the network.
committee=${REVIEWS_NET_COMMITTEE:-0}
rate=${REVIEWS_NET_RATE:-400}
# Politicians each review is sent to (1, as the transfers: a review in every pool is carried by
# a block once per pool), reviews-load's submitting threads, and the reviews app's share of a
# politician's mempool (the genesis parameter mempool_percent; the app's default is 50).
fanout=${REVIEWS_NET_FANOUT:-1}
submitters=${REVIEWS_NET_SUBMITTERS:-4}
mempool_percent=${REVIEWS_NET_MEMPOOL_PERCENT:-50}
# The politicians' block budget (ledger/net/block_budget.h) aims each round at target_round_s
# (the localnet's default: half the round timeout) and shrinks pools to min_pool_txs while rounds
# take longer; set REVIEWS_NET_TARGET_ROUND_S to give both networks another target.
target_line=""
[ -n "${REVIEWS_NET_TARGET_ROUND_S:-}" ] && target_line="target_round_s = $REVIEWS_NET_TARGET_ROUND_S"
seconds=${REVIEWS_NET_SECONDS:-25}
# Expected proposers per period, 4 as in the ledger's bench until its session 27 (it runs 8
# since: bench/ledger/config.sh; this bench's figures were all taken with 4): with
# the localnet's 2, about (1 - 2/50)^50 = 13 % of heights have no period-0 proposer and wait
# for period 1 (~3 s more); in a window of a few review blocks one such height moves the rate
# by a quarter (session 19's run: 2 of the 4 review heights). 4 leaves about 1.5 %.
proposers=${REVIEWS_NET_PROPOSERS:-4}
# The same network's transfers: reviews-load sends $REVIEWS_NET_TRANSFERS transfers right
# before the reviews (keys and items committed, the review epoch not yet open) and as many right
# after them (reviews/net/transfer_phase.h), timed like the reviews; 0 turns the phases off.
# REVIEWS_NET_FRESH_BASELINES=0 skips the older baselines on fresh networks of the same shape
# (step 1 and its repeat after the reviews), whose pool budget starts at max_pool_txs.
transfers=${REVIEWS_NET_TRANSFERS:-1000}
fresh_baselines=${REVIEWS_NET_FRESH_BASELINES:-1}
accounts=$(( 2 * transfers + 8 > 2000 ? 2 * transfers + 8 : 2000 ))
for b in ledger-localnet ledger-politician ledger-citizen reviews-tool reviews-issuer reviews-load; do
  [ -x "$bin/$b" ] || { echo "missing $bin/$b"; exit 1; }
done
mkdir -p "$out"
uptime | sed 's/.*load average: //' > "$out/load_at_start"
work=$(mktemp -d)
pids=()
# A stopped launcher (REVIEWS_NET_AUDIT=after) is continued first: SIGTERM waits on a stopped process.
cleanup() { for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
# CPU seconds per program of everything this script starts, sampled twice a second, so the
# summary can give each role's CPU per committed review and per committed transfer.
sampler_stop="$work/sampler.stop"
python3 "$(dirname "$0")/cpu_sampler.py" "$out/net_cpu.jsonl" $$ "$sampler_stop" &
sampler=$!
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }

network="[network]
politicians = 3
citizens = $ids
citizens_per_process = $ids
committee_size = $committee
proposers = $proposers
accounts = $accounts
max_pool_txs = 4000
validation_sample = $sample
$target_line"

# ---- 1. Baseline: transfers (run again after the reviews, so a change of machine load
# during the run shows as two different baselines) ----
cat > "$work/transfers.toml" <<TOML
$network
[load]
rate = $rate
duration_s = $seconds
double_spend_fraction = 0
fanout = 1
TOML
run_baseline() {  # $1: the report's name
  echo "reviews net bench: baseline $1, transfers offered at $rate tx/s for ${seconds}s ($ids citizens, committee $committee, sample $sample), $(uptime | sed 's/.*load/load/')"
  rm -rf "$work/transfers"
  echo "$(date +%s.%N) start" > "$out/$1.window"
  "$bin/ledger-localnet" --check --config "$work/transfers.toml" --out "$work/transfers" > "$work/transfers.log"
  echo "$(date +%s.%N) end" >> "$out/$1.window"
  cp "$work/transfers/report.json" "$out/$1.json"
}
if [ "$fresh_baselines" = 1 ]; then run_baseline net_transfers_report; fi

# ---- 2. Reviews ----
"$bin/reviews-tool" issuer-keygen --secret-out "$work/issuer.pem" --public-out "$work/issuer.pub.pem" > /dev/null
issuer_hex=$(openssl pkey -pubin -in "$work/issuer.pub.pem" -outform DER | xxd -p | tr -d '\n')
# At info level every reviews app logs, when it stops, how many ring signatures it verified and
# how many it found verified already: the per-process verification count (net_cpu_summary.py).
cat > "$work/reviews.toml" <<TOML
$network
log_level = "${REVIEWS_NET_LOG_LEVEL:-info}"
[load]
rate = 0
duration_s = $(( ${REVIEWS_NET_TIMEOUT_S:-600} + 300 ))
[apps.reviews]
issuer_public = "$issuer_hex"
ring_size = $ring
epoch_blocks = $epoch_blocks
mempool_percent = $mempool_percent
TOML
echo "reviews net bench: $ids identities, $items items, ring size k = $ring, epochs of $epoch_blocks blocks, fanout $fanout, $submitters submitters, mempool_percent $mempool_percent, $(uptime | sed "s/.*load/load/")"
"$bin/ledger-localnet" --check --config "$work/reviews.toml" --out "$work/reviews" > "$work/reviews.log" 2>&1 &
localnet=$!
pids+=("$localnet")
for _ in $(seq 1 240); do [ -f "$work/reviews/ready" ] && break; sleep 0.5; done
[ -f "$work/reviews/ready" ] || { echo "local network did not start"; cat "$work/reviews.log"; exit 1; }
# The audit after the window: the launcher (its chain watch replays and verifies each block as
# it commits) sleeps while the reviews load runs; the politicians and citizens are its children
# but separate processes, unaffected. `ledger-localnet` catches up with the whole chain, every
# signature verified, when it is continued and told to stop.
echo "$(date +%s.%N) start" > "$out/net_reviews.window"
if [ "$audit" = after ]; then kill -STOP "$localnet"; fi
"$bin/reviews-issuer" --log-level warn --genesis "$work/reviews/genesis.toml" \
  --issuer-key "$work/issuer.pem" --checkpoint "$work/issuer.ckpt" > "$work/issuer.log" 2>&1 &
pids+=("$!")
"$bin/reviews-load" --timeout-s ${REVIEWS_NET_TIMEOUT_S:-600} --genesis "$work/reviews/genesis.toml" --keys "$work/reviews/keys" \
  --work "$work/load" --identities "$ids" --items "$items" --fanout "$fanout" --submitters "$submitters" --transfers "$transfers" --report "$out/net_reviews_report.json" \
  > /dev/null 2> >(stamp > "$out/net_reviews_load.log") ||
  { cat "$out/net_reviews_load.log"; cp "$work/reviews.log" "$work/issuer.log" "$out/"; exit 1; }
status=0
echo "$(date +%s.%N) load-done" >> "$out/net_reviews.window"
kill -CONT "$localnet"
kill -TERM "$localnet"
wait "$localnet" || status=$?
echo "$(date +%s.%N) audited" >> "$out/net_reviews.window"
cp "$work/reviews.log" "$work/issuer.log" "$out/" 2>/dev/null || true
# Every process's log: each reviews app prints, when it stops, how many ring signatures it
# verified and how many reviews it found already verified (the per-role verification count).
rm -rf "$out/logs"; cp -r "$work/reviews/logs" "$out/logs" 2>/dev/null || true
[ "$status" = 0 ] || { echo "the local network's audit failed"; tail -40 "$work/reviews.log"; exit 1; }
# ledger-localnet prints its report as the JSON object that ends its output.
if [ -f "$work/reviews/report.json" ]; then
  cp "$work/reviews/report.json" "$out/net_reviews_localnet.json"
else
  sed -n '/^{$/,/^}$/p' "$out/reviews.log" > "$out/net_reviews_localnet.json"
fi

if [ "$fresh_baselines" = 1 ]; then run_baseline net_transfers_after_report; fi
uptime | sed 's/.*load average: //' > "$out/load_at_end"
touch "$sampler_stop"
wait "$sampler" || true

python3 - "$out" "$audit" <<'PY'
import json, os, sys
out, audit = sys.argv[1], sys.argv[2]
def load(name):
  path = os.path.join(out, name)
  return json.load(open(path)) if os.path.exists(path) else None
t = load("net_transfers_report.json")
t2 = load("net_transfers_after_report.json")
r = load("net_reviews_report.json")
n = load("net_reviews_localnet.json")
lines = [
  f"reviews committed/s        {r['reviews_per_s']:8.1f}   ({r['reviews_committed']}/{r['reviews_submitted']} reviews in {r['seconds']:.2f} s, "
  f"blocks {r['first_height']}..{r['last_height']}, mean ring {r['ring_size_mean']})",
]
same = []  # the same network's transfer phases (transfer_phase.h)
for which in ("before", "after"):
  p = r.get(f"transfers_{which}")
  if not p:
    continue
  same.append(p['transfers_per_s'])
  lines.append(f"same network, transfers {which:6s} {p['transfers_per_s']:8.1f}/s ({p['committed']}/{p['submitted']} in {p['seconds']:.2f} s, "
               f"blocks {p['first_height']}..{p['last_height']}, {p['busy_retries']} busy answers, {p['busy_wait_s']:.1f} s slept"
               + (f", {p['poll_failures']} failed polls retried" if p.get('poll_failures') else "")
               + (f", gave up: {p['poll_gave_up'][:160]}" if p.get('poll_gave_up') else "")
               + (", CUT SHORT" if p['cut_short'] else "") + ")")
if same:
  lines.append("ratio, same network        " + "; ".join(
    f"{r['reviews_per_s'] / v:.3f} against the transfers {w}" if v > 0 else f"none against the transfers {w}"
    for w, v in zip(("before", "after"), same)))
for which, b in (("first", t), ("second", t2)):
  if b is None:
    continue
  lines.append(f"fresh network, {which:6s} baseline {b['tx_per_s']:8.1f}/s (same shape, a new network: budget from max_pool_txs; block interval {b['block_interval_s']:.2f} s, {b['blocks']} blocks)")
  lines.append(f"ratio, fresh {which:6s} baseline {r['reviews_per_s'] / b['tx_per_s']:.3f}" if b['tx_per_s'] > 0
               else f"ratio, fresh {which} baseline: none (it committed no transfer)")
lines += [
  f"review signing (client)    {r['sign_seconds'] / max(r['reviews_submitted'], 1) * 1000:8.2f} ms CPU per review",
  f"submission                 {r['submit_seconds']:8.2f} s for {r['reviews_submitted']} reviews",
  f"submission retries/fails  {r['submit_busy_retries']:8d}   busy answers retried ({r.get('submit_busy_wait_s', 0):.1f} s slept on hints, all threads); {r['submit_rejected']} failed: "
  + "; ".join(f"{n} x {why[:160]}" for why, n in r['submit_errors']),
  f"commit polls failed        {r.get('poll_failures', 0):8d}   retried (reviews-load, keys to reviews)"
  + "".join(f"; {n} x {why[:160]}" for why, n in r.get('poll_errors', []))
  + (f"; GAVE UP: {r['poll_gave_up'][:160]}" if r.get('poll_gave_up') else ""),
  f"app txs applied            {n['app_txs_applied']:8d}   (reviews coalesced into batches, plus keys and items)",
  f"audit                      forks {n['forks']}, invalid blocks {n['invalid_blocks']}, proofs_ok {n['proofs_ok']}, politicians agree {n['politicians_agree']}"
  + (" (run after the measured window: the launcher was stopped while the reviews load ran)" if audit == "after"
     else " (run during the measured window, on the same cores)"),
]
fresh = [b['tx_per_s'] if b else 0.0 for b in (t, t2)]
ratios = [r['reviews_per_s'] / v if v > 0 else 0.0 for v in fresh]
same_ratios = [r['reviews_per_s'] / v if v > 0 else 0.0 for v in same]
json.dump({"reviews_per_s": r['reviews_per_s'], "transfers_per_s": fresh,
           "ratio": ratios, "same_network_transfers_per_s": same, "same_network_ratio": same_ratios,
           "audit": audit,
           "load_at_start": open(os.path.join(out, "load_at_start")).read().strip(),
           "load_at_end": open(os.path.join(out, "load_at_end")).read().strip()},
          open(os.path.join(out, "net_summary.json"), "w"))

text = "\n".join(lines)
open(os.path.join(out, "net_summary.txt"), "w").write(text + "\n")
print(text)
PY
# CPU per role per committed review and transfer (marginal over the idle chain's per-block cost).
python3 "$(dirname "$0")/net_cpu_summary.py" "$out" | tee -a "$out/net_summary.txt"
# Where the reviews' time went: the load's phases and every block of the review window.
python3 "$(dirname "$0")/net_stages.py" "$out" | tee -a "$out/net_summary.txt" || true
