#!/usr/bin/env bash
# Part 15: the Blockene network. A local network of 5 politicians (one serving wrong state
# roots, one forging signatures and lying about them to citizens that verify only 90% of the
# signatures themselves) and 8 citizens (one voting for everything) runs as real processes on loopback under a
# load generator; one honest politician is killed with -9 and restarted mid-run. A light wallet
# checks certificates and proved balances and sends a transfer. At the end the launcher audits
# the chain: every certificate and state root, agreement of all honest nodes, conservation of
# balances, no double spend, and correct proofs from the restarted politician.
set -euo pipefail
bin=${TESSERA_BIN:?set TESSERA_BIN to the bin directory of a build}
out=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT}/ledger-network
rm -rf "$out"
mkdir -p "$out"
net="$out/net"
wallet="$bin/ledger-wallet --log-level warn"
pid=""
# The launcher kills every politician and citizen it started (they also die with it).
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; true; }
trap cleanup EXIT

cat > "$out/net.toml" <<TOML
[network]
politicians = 5
citizens = 8
accounts = 200
validation_sample = 0.9
[load]
rate = 40
duration_s = 30
double_spend_fraction = 0.1
[adversary]
politicians = 0.4
politician_behaviours = ["wrong", "forge"]
citizens = 0.125
citizen_behaviours = ["inconsistent"]
[fault]
kill_politician = 3
kill_at_block = 4
restart_after_ms = 1500
TOML
echo "-- 1. start the network: 5 politicians (1 lies about state roots, 1 forges signatures),"
echo "      8 citizens (1 votes for everything; each verifies a random 90% of signatures),"
echo "      40 transfers/s offered, 10% of them followed by a double-spend attempt"
"$bin/ledger-localnet" --config "$out/net.toml" --out "$net" --check > "$out/localnet.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -f "$net/genesis.toml" ] && grep -q "block [1-9]" "$out/localnet.txt" && break; sleep 0.2; done
grep -m1 starting "$out/localnet.txt" | sed 's/^/   /'
g="--genesis $net/genesis.toml --checkpoint $out/wallet.checkpoint"

echo
echo "-- 2. wallet: a new key; account-0's balance, proved against the latest certified header"
$wallet keygen "$out/bob" | sed 's/^/   /'
$wallet balance $g "$net/keys/account-0.pub" | sed 's/^/   /'

echo
echo "-- 3. send 1234 from account-0 to bob; a transfer from bob (no account yet) is refused"
$wallet send $g --from "$net/keys/account-0.key" --to "$out/bob.pub" --amount 1234 | sed 's/^/   /'
if $wallet send $g --from "$out/bob.key" --to "$net/keys/account-1.pub" --amount 1 2> "$out/refused.txt"; then
  echo "   BUG: a transfer from an empty account was accepted"; exit 1
fi
sed 's/^/   /' "$out/refused.txt"

echo
echo "-- 4. follow two blocks (each committee certificate checked by the wallet), then bob's balance"
$wallet follow $g --blocks 2 | sed 's/^/   /'
$wallet balance $g "$out/bob.pub" | sed 's/^/   /'

echo
echo "-- 5. the run continues (kill -9 and restart of politician 3); progress:"
wait "$pid"
pid=""
grep -E "^kill|^restarted politician|^audit" "$out/localnet.txt" | sed 's/^/   /'
grep -E "^\[" "$out/localnet.txt" | tail -n 4 | sed 's/^/   /'

echo
echo "-- 6. audit of the committed chain"
jq -r '"   blocks \(.blocks), committed tx \(.committed_txs) (\(.tx_per_s*10|round/10) tx/s), latency p50 \(.latency_p50_s*10|round/10) s",
       "   forks \(.forks), invalid blocks \(.invalid_blocks), politicians agree \(.politicians_agree), citizens agree \(.citizens_agree)",
       "   balances conserved \(.balances_conserved); double spends attempted \(.double_spend_attempts), committed \(.double_spends_committed)",
       "   restarted politician caught up \(.restarted_caught_up), serves correct proofs \(.restarted_proofs_ok)",
       "   proposals rejected by honest citizens \(.rejected_proposals), lies caught from politicians \(.bad_politician_answers)",
       "   sampled validation: \(.signatures_checked) signatures verified for \(.txs_validated) transactions re-executed",
       "   per citizen per block: \(.citizen_bytes_up_per_block|round) B up, \(.citizen_bytes_down_per_block|round) B down, \(.citizen_cpu_ms_per_block*10|round/10) ms CPU; storage \(.citizen_storage_bytes) B"' \
  "$net/report.json"
