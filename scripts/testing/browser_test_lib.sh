# Shared by the end-to-end browser tests (reviews/web/browser_test.sh,
# cluster/service/dashboard_browser_test.sh); sourced, not run. After sourcing:
#   browser_test_start NAME SCREENSHOT_DIR_OR_EMPTY GRACE_TENTHS
# skips the test (exit 77, ctest's SKIP_RETURN_CODE) when chromium is not installed; makes
# $work (a temporary directory removed at exit) and $shots; and on exit stops every pid the
# caller appended to the array `pids` (SIGTERM, up to GRACE_TENTHS tenths of a second each, then
# SIGKILL) and, if the test failed, prints the last lines of each $work/*.log.
#   fail MESSAGE...   prints "FAIL: MESSAGE" and exits 1.

browser_test_start() {
  local name=$1 screenshots=$2
  _browser_test_grace=$3
  if ! command -v chromium > /dev/null; then
    echo "SKIP: chromium is not installed (scripts/setup installs it)"
    exit 77
  fi
  work=$(mktemp -d "/tmp/$name.XXXXXX")
  shots=${screenshots:-$work/screenshots}
  mkdir -p "$shots"
  shots=$(cd "$shots" && pwd)
  pids=()
  trap _browser_test_cleanup EXIT
}

_browser_test_cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 "$_browser_test_grace"); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2> /dev/null || true
  done
  if [ "$status" -ne 0 ]; then
    for log in "$work"/*.log; do
      [ -f "$log" ] && { echo "---- $(basename "$log") (last lines)"; tail -n 15 "$log"; }
    done
  fi
  rm -rf "$work"
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
