#!/usr/bin/env bash
# Part 50: TrustRate-style anonymous reviews (docs/reviews.md). A tour of the cryptographic
# core: blind-issued review keys, a DRAC ring, unique ring signatures, a double review caught,
# two items unlinkable, hijack-resistance and the attack simulation; then the same on the
# ledger: a local network with the reviews app, the key issuer daemon and reviews-net.
set -euo pipefail
bin=${TESSERA_BIN:?set TESSERA_BIN to the bin directory of a build}
out=${TESSERA_DEMO_OUT:?set TESSERA_DEMO_OUT to an output directory}/reviews
rm -rf "$out" && mkdir -p "$out" && cd "$out"
tool="$bin/reviews-tool"
epoch=1
seed=$(printf '5eed%.0s' {1..16})
identities=24
tag_of() { sed -n 's/.*"tag": "\([0-9a-f]*\)".*/\1/p' "$1"; }

echo "== 1. The identity issuer's RSA key (RFC 9474 RSABSSA-SHA384-PSS-Randomized)"
"$tool" issuer-keygen --bits 2048 --secret-out issuer.pem --public-out issuer.pub.pem

echo "== 2. $identities citizens each get one blind-signed review key for epoch $epoch"
for i in $(seq 1 $identities); do
  "$tool" review-keygen --epoch $epoch --out key$i.json > /dev/null
  "$tool" blind --issuer-public issuer.pub.pem --key key$i.json \
    --request-out req$i.json --state-out state$i.json > /dev/null
  "$tool" blind-sign --issuer-secret issuer.pem --request req$i.json --identity citizen$i \
    --issued-log issued.json --response-out resp$i.json > /dev/null
  "$tool" finalize --issuer-public issuer.pub.pem --state state$i.json --response resp$i.json \
    --credential-out cred$i.json > /dev/null
  "$tool" register --issuer-public issuer.pub.pem --credential cred$i.json \
    --registry registry.json > /dev/null
done
"$tool" blind --issuer-public issuer.pub.pem --key key1.json --request-out again.json \
  --state-out again-state.json > /dev/null
echo "   a second key for citizen1 in the same epoch is refused:"
if "$tool" blind-sign --issuer-secret issuer.pem --request again.json --identity citizen1 \
     --issued-log issued.json --response-out again-resp.json 2>&1 | sed 's/^/   /'; then
  echo "   UNEXPECTED: second issuance accepted"; exit 1
fi
echo "   registry: $(grep -c review_key registry.json) credentials, each verified, none linkable to a citizen"

echo "== 3. DRAC rings (expected size k=8 of $identities) for two items"
"$tool" ring --issuer-public issuer.pub.pem --registry registry.json --item cafe-du-coin \
  --seed "$seed" --k 8 --out ring-cafe.json
"$tool" ring --issuer-public issuer.pub.pem --registry registry.json --item bike-shop \
  --seed "$seed" --k 8 --out ring-bike.json

# A citizen eligible for both items (the lottery decides; try keys in turn).
who=""
for i in $(seq 1 $identities); do
  if "$tool" sign --key key$i.json --ring ring-cafe.json --rating 5 --text "great coffee" \
       --out review-cafe.json > /dev/null 2>&1 &&
     "$tool" sign --key key$i.json --ring ring-bike.json --rating 4 --text "fixed my brakes" \
       --out review-bike.json > /dev/null 2>&1; then
    who=$i; break
  fi
done
[ -n "$who" ] || { echo "no citizen is eligible for both items with this seed"; exit 1; }
outsider=""
for i in $(seq 1 $identities); do
  if ! "$tool" sign --key key$i.json --ring ring-cafe.json --rating 1 --text "x" \
       --out /dev/null > /dev/null 2>&1; then outsider=$i; break; fi
done

echo "== 4. citizen$who reviews both items with unique ring signatures"
"$tool" verify --ring ring-cafe.json --review review-cafe.json \
  --registry registry.json --issuer-public issuer.pub.pem
"$tool" verify --ring ring-bike.json --review review-bike.json

echo "== 5. An ineligible key (citizen$outsider) cannot review cafe-du-coin"
"$tool" sign --key key$outsider.json --ring ring-cafe.json --rating 1 --text "spam" \
  --out spam.json 2>&1 | sed 's/^/   /' || true

echo "== 6. citizen$who tries to review cafe-du-coin a second time"
"$tool" sign --key key$who.json --ring ring-cafe.json --rating 1 --text "changed my mind" \
  --out review-cafe-2.json
"$tool" duplicates review-cafe.json review-cafe-2.json review-bike.json

echo "== 7. The tally of cafe-du-coin: every other eligible citizen reviews it too"
reviews=(review-cafe.json review-cafe-2.json)
for i in $(seq 1 $identities); do
  [ "$i" = "$who" ] && continue
  if "$tool" sign --key key$i.json --ring ring-cafe.json --rating $(( (i % 3) + 3 )) \
       --text "review $i" --out r$i.json > /dev/null 2>&1; then reviews+=(r$i.json); fi
done
"$tool" tally --ring ring-cafe.json "${reviews[@]}" | grep -v '^accepted'

echo "== 8. The same key on two items: tags differ and do not link"
echo "   cafe-du-coin tag: $(tag_of review-cafe.json)"
echo "   bike-shop    tag: $(tag_of review-bike.json)"

echo "== 9. A tampered review fails"
sed 's/"rating": 5/"rating": 4/' review-cafe.json > tampered.json
"$tool" verify --ring ring-cafe.json --review tampered.json 2>&1 | sed 's/^/   /' || true

echo "== 10. Hijack-resistance of an item (N=10,000, k=50, 100 reviews, mean 4.0, delta 0.5)"
"$tool" hijack --identities 10000 --k 50 --honest-reviews 100 --mean 4.0 --delta 0.5

echo "== 11. Attack simulation (real DRAC lottery, 100 epoch seeds per ring size)"
"$bin/reviews-attack-sim" --identities 10000 --ring-sizes 20,50,200,1000 --trials 100 \
  --csv attack.csv 2> /dev/null

echo "== 12. On the ledger: a local Blockene network running the reviews app"
if [ ! -x "$bin/ledger-localnet" ] || [ ! -x "$bin/reviews-net" ]; then
  echo "   skipped: this build does not include the ledger system"
  exit 0
fi
E=8  # blocks per epoch
issuer_hex=$(openssl pkey -pubin -in issuer.pub.pem -outform DER | xxd -p | tr -d '\n')
cat > net.toml <<TOML
[network]
politicians = 3
citizens = 4
[load]
rate = 0
duration_s = 600
[apps.reviews]
issuer_public = "$issuer_hex"
ring_size = 50
epoch_blocks = $E
TOML
"$bin/ledger-localnet" --config net.toml --out net > localnet.log 2>&1 &
localnet=$!
trap 'kill $localnet ${issuer:-} 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do [ -f net/ready ] && break; sleep 0.5; done
"$bin/reviews-issuer" --log-level warn --genesis net/genesis.toml --issuer-key issuer.pem \
  --checkpoint issuer.ckpt > issuer.log 2>&1 &
issuer=$!
net() { "$bin/reviews-net" --log-level warn --genesis net/genesis.toml --checkpoint "${CKPT:-cli.ckpt}" "$@"; }
echo "   citizen 0 creates \"cafe du coin\" in its namespace now: reviewable from two epochs on"
net create-item --name "cafe du coin" --citizen-key net/keys/citizen-0.key \
  --identity net/keys/citizen-0.id | sed 's/^/   /'
# The keys' epoch, with room for each client's first sync, the issuer and a registration drawn
# up to 4 blocks before the close.
height=$(net list --json | jq .height)
epoch=2
while [ $(( (epoch - 1) * E )) -lt $(( height + 20 )) ]; do epoch=$((epoch + 1)); done
echo "   3 citizens get review keys for epoch $epoch (request, blind issue by reviews-issuer,"
echo "   anonymous registration at a height each client draws up to the close)"
jobs_=()
for i in 0 1 2; do
  CKPT=c$i.ckpt net get-key --citizen-key net/keys/citizen-$i.key --identity net/keys/citizen-$i.id \
    --epoch $epoch --out lkey$i.json > get-key-$i.log &
  jobs_+=($!)
done
for j in "${jobs_[@]}"; do wait "$j"; done
tail -qn1 get-key-*.log | sed 's/^/   /'
echo "   a second request by citizen 0 for epoch $epoch:"
net get-key --citizen-key net/keys/citizen-0.key --identity net/keys/citizen-0.id \
  --epoch $epoch --out lkey0-again.json 2>&1 | grep error | sed 's/^/   /' || true
echo "   the review key files name no identity: $(grep -c citizen lkey0.json || true) mentions"
echo "   reviews in epoch $epoch (each client waits for the window):"
jobs_=()
i=0
for review in "5|great coffee" "4|nice terrace" "2|slow service"; do
  CKPT=r$i.ckpt net review --key lkey$i.json --item "cafe du coin" --rating "${review%%|*}" \
    --text "${review#*|}" > review-$i.log &
  jobs_+=($!)
  i=$((i + 1))
done
for j in "${jobs_[@]}"; do wait "$j"; done
cat review-*.log | sed 's/^/   /'
echo "   citizen 0's key reviews it again, bypassing the client's own check:"
net review --key lkey0.json --item "cafe du coin" --rating 1 --text "changed my mind" --force 2>&1 \
  | sed 's/^/   /' || true
net list | sed 's/^/   /'
net verify-tally --item "cafe du coin" | sed 's/^/   /'
net show --item "cafe du coin" --json > copy.json
jq '.reviews[0].rating = 1' copy.json > tampered.json
echo "   a tampered local copy (one rating changed):"
net verify-tally --item "cafe du coin" --reviews tampered.json 2>&1 | sed 's/^/   /' || true
echo "   signing on the user's side only: citizen 1 signs a review a relay (the web page) can post"
until [ "$(net list --json | jq .height)" -ge $(( (epoch + 1) * E )) ]; do sleep 0.5; done
echo "   (epoch $((epoch + 1)): the item stays open; an epoch-$epoch key is refused)"
net sign-review --key lkey1.json --item "cafe du coin" --rating 3 --text late --out late.json 2>&1 \
  | sed 's/^/   /' || true
kill $issuer
kill -TERM $localnet && wait $localnet || true
echo "   local network audit: $(jq -c '{blocks, forks, invalid_blocks, proofs_ok, app_txs_applied}' net/report.json)"
