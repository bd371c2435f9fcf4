#!/usr/bin/env bash
# The page's ring signer (static/review_sign.mjs, libsodium from npm) against the C++ verifier:
# reviews signed in node over rings of 1, 3 and 50 keys must verify with `reviews-tool verify`,
# and each one with its rating changed after signing must not.
# Usage: sign_js_test.sh BIN_DIR. Exit 0 passed, 1 failed, 77 skipped (no node, or the npm
# package scripts/setup installs is missing).
set -euo pipefail
bin=$(cd "${1:?usage: sign_js_test.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
command -v node > /dev/null || { echo "SKIP: node is not installed"; exit 77; }
module=""
for root in /usr/lib/node_modules /usr/local/lib/node_modules; do
  candidate=$root/libsodium-wrappers-sumo/dist/modules-sumo-esm/libsodium-wrappers.mjs
  [ -f "$candidate" ] && module=$candidate && break
done
[ -n "$module" ] || { echo "SKIP: libsodium-wrappers-sumo is not installed (scripts/setup)"; exit 77; }
work=$(mktemp -d /tmp/reviews-sign-js.XXXXXX)
trap 'rm -rf "$work"' EXIT
keys=()
for i in $(seq 1 50); do
  "$bin/reviews-tool" review-keygen --epoch 7 --out "$work/k$i.json" > /dev/null
  keys+=("$work/k$i.json")
done
(cd "$here" && node sign_js_check.mjs "$module" "$work" "${keys[@]}")
for n in 1 3 50; do
  "$bin/reviews-tool" verify --ring "$work/ring$n.json" --review "$work/review$n.json" ||
    { echo "FAIL: the JS signature over $n keys does not verify in C++"; exit 1; }
  if "$bin/reviews-tool" verify --ring "$work/ring$n.json" --review "$work/tampered$n.json" \
    > /dev/null 2>&1; then
    echo "FAIL: a JS-signed review with its rating changed verifies over $n keys"
    exit 1
  fi
done
echo "PASS: reviews signed in JS (rings of 1, 3, 50) verify with the C++ verifier; tampered ones do not"
