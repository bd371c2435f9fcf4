#!/usr/bin/env bash
# The scheduler's web dashboard end to end: a cluster-scheduler with tokens, two node agents,
# training jobs of three tenants in three tiers submitted with cluster-ctl, and the page driven
# by headless Chromium (dashboard_check.py: refusal without a token, tiers, tenants, nodes, jobs,
# events, self-refresh with a job submitted while the page is open, escaping, a screenshot).
#
# Usage: dashboard_browser_test.sh BIN_DIR [SCREENSHOT_DIR]
#   BIN_DIR         the build's bin/ (cluster-scheduler, cluster-agent, cluster-ctl,
#                   cluster-train-job)
#   SCREENSHOT_DIR  where cluster-dashboard.png is written (default: the run's temporary
#                   directory, removed); docs/img refreshes the documentation's
# Exit 0 passed, 1 failed, 77 skipped (chromium is not installed; scripts/setup installs it).
set -euo pipefail

bin=$(cd "${1:?usage: dashboard_browser_test.sh BIN_DIR [SCREENSHOT_DIR]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/testing/browser_test_lib.sh
source "$here/../../scripts/testing/browser_test_lib.sh"
browser_test_start cluster-dashboard "${2:-}" 50

ops=ops-token-0123456789abcd
printf '%s\n' "ops $ops admin" "vision vision-token-0123456789 premium" \
  "speech speech-token-0123456789" > "$work/tokens"
"$bin/cluster-scheduler" --listen 127.0.0.1:0 --state-dir "$work/db" --job-root "$work/jobs" \
  --metrics-listen 127.0.0.1:0 --tokens "$work/tokens" --tick-ms 200 --premium-headroom 0 \
  > "$work/scheduler.out" 2> "$work/scheduler.log" &
pids+=($!)
deadline=$((SECONDS + 30))
until grep -qs '^dashboard on ' "$work/scheduler.out"; do
  [ $SECONDS -lt $deadline ] || fail "the scheduler did not start"
  kill -0 "${pids[0]}" 2> /dev/null || fail "the scheduler exited"
  sleep 0.1
done
port=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$work/scheduler.out")
url=$(sed -n 's|^dashboard on \(http://[^ ]*\)/$|\1|p' "$work/scheduler.out")
ctl() { "$bin/cluster-ctl" --scheduler "127.0.0.1:$port" "$@"; }
for node in n0 n1; do
  "$bin/cluster-agent" --node-id $node --slots 8 --scheduler "127.0.0.1:$port" \
    --log-dir "$work/logs-$node" --heartbeat-ms 100 > "$work/$node.log" 2>&1 &
  pids+=($!)
done
job=(-- --steps 100000 --replica-ms 20 --checkpoint-every 50)
ids=()
ids+=("$(ctl --token vision-token-0123456789 submit --tier premium --workers 4 "${job[@]}")")
ids+=("$(ctl --token vision-token-0123456789 submit --tier standard --workers 4 "${job[@]}")")
ids+=("$(ctl --token speech-token-0123456789 submit --tier basic --workers 8 --min-workers 2 \
  "${job[@]}")")
ids+=("$(ctl --token $ops submit --tenant '<b>evil</b>' --tier basic --workers 4 "${job[@]}")")
echo "jobs: ${ids[*]}"
deadline=$((SECONDS + 60))
until [ "$(ctl --token $ops list | grep -c ' running ')" -ge 3 ]; do
  [ $SECONDS -lt $deadline ] || fail "the jobs did not start: $(ctl --token $ops list)"
  sleep 0.3
done

python3 "$here/dashboard_check.py" --url "$url" --token $ops \
  --expect-jobs "$(IFS=,; echo "${ids[*]}")" --new-job-file "$work/new-job" \
  --screenshot "$shots/cluster-dashboard.png" &
check=$!
sleep 3 # the page is open and has refreshed a few times
ctl --token speech-token-0123456789 submit --tier standard --workers 2 "${job[@]}" \
  > "$work/new-job.tmp"
mv "$work/new-job.tmp" "$work/new-job"
wait $check || fail "the browser check failed"
echo "PASS: cluster dashboard end to end (screenshot in $shots)"
