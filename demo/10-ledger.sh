#!/usr/bin/env bash
# Part 10: ledger foundations (Blockene): keys, a VRF committee lottery verified from public
# keys alone, a state of 200,000 accounts with one block of 10,000 signed transfers, its
# multi-proof, a light client re-deriving the new root from the proof, and the RocksDB store
# surviving kill -9 in the middle of block writes. Everything below is real computation.
set -euo pipefail
bin=${TESSERA_BIN:?set TESSERA_BIN to the bin directory of a build}
out=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT}/ledger
rm -rf "$out"
mkdir -p "$out"
tool="$bin/ledger-tool --log-level warn"

echo "-- 1. keys: a citizen key pair; the secret key file is mode 0600"
$tool keygen --out "$out/citizen"
stat -c '   %a %n' "$out/citizen.key"
chmod 644 "$out/citizen.key"
echo "   after chmod 644 the key is refused:"
if $tool pubkey --key "$out/citizen.key" 2> "$out/refused.txt"; then
  echo "   BUG: a group-readable key was accepted"; exit 1
fi
sed 's/^/   /' "$out/refused.txt"
chmod 600 "$out/citizen.key"
echo "   after chmod 600: public key $($tool pubkey --key "$out/citizen.key")"

echo
echo "-- 2. sortition: 1,000 citizens, expected committee 100 (ECVRF-EDWARDS25519-SHA512-TAI)"
$tool lottery --citizens 1000 --committee 100 --proposers 5 --height 7 \
  --seed "block 5 seed" --show 6 | tee "$out/lottery.txt"

echo
echo "-- 3. state: 200,000 accounts, a block of 10,000 signed transfers, multi-proof, light client"
$tool state --accounts 200000 --senders 4000 --transfers 10000 --db "$out/state-db" \
  | tee "$out/state.txt"

echo
echo "-- 4. crash safety: kill -9 a block writer mid-write three times, reopen each time"
db="$out/crash-db"
for round in 1 2 3; do
  $tool write-blocks --db "$db" --blocks 100000 --accounts 50000 --block-size 3000 \
    > "$out/writer-$round.log" &
  pid=$!
  sleep "0.$((RANDOM % 5 + 3))"
  kill -9 "$pid"
  wait "$pid" 2> /dev/null || true
  printed=$(grep '^committed' "$out/writer-$round.log" | tail -1 | cut -d' ' -f2)
  version=$($tool inspect --db "$db" | awk '/^version/ {print $2}')
  root=$($tool inspect --db "$db" | awk '/^root/ {print $2}')
  # Independent check: replay the writer's deterministic blocks in memory, no store involved.
  expected=$($tool replay --versions "$version" --accounts 50000 --block-size 3000 | awk '{print $2}')
  if [ "$root" = "$expected" ]; then verdict="= root of an in-memory replay of $version blocks"
  else verdict=MISMATCH; fi
  echo "   round $round: killed after printing commit ${printed:-none}; reopened at version" \
    "$version, root ${root:0:16}... $verdict"
  [ "$verdict" != MISMATCH ] || exit 1
done
echo "   (on open the store also rebuilds its tree from RocksDB and refuses to open unless the"
echo "    rebuilt root equals the stored root of the last committed version)"
