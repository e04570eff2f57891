#!/usr/bin/env bash
# Runs the test suite one test module at a time. The library's consistency
# loops are CPU-bound; run beside the explorer's and Redis's real-time tests
# (workloads with rates, real servers, tmux) on a 2-core machine they starve
# them of the cooperative pool, so the modules take turns. Extra arguments go
# to every `swift test` call.
#
# Each module's output is also kept in a log; when a module fails, the lines
# that name failed tests, recorded issues and crashes are printed again at
# the very end, so the tail of a CI log says what went wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
modules=(StrataTests StrataRedisTests StrataExplorerTests)
logs=$(mktemp -d "${TMPDIR:-/tmp}/strata-test-logs.XXXXXX")
trap 'rm -rf "$logs"' EXIT
status=0
failed=()

run() {
  local name=$1; shift
  local log="$logs/$name.log"
  local code=0
  "$SWIFT" test --skip-build "$@" 2>&1 | tee "$log" || code=$?
  if [ "$code" -ne 0 ]; then
    status=1
    failed+=("$name (exit $code)")
    {
      echo "---- $name failed (exit $code): failing tests and issues"
      grep -E "✘|error:|Fatal error|fatal error|Crash|crashed|signal [0-9]+|Assertion failed|Precondition failed|Exited with" "$log" | grep -v "passed after" | head -60 || true
      echo "---- last lines of $name"
      tail -8 "$log"
    } >"$logs/$name.summary"
  fi
}

for module in "${modules[@]}"; do
  echo "== $module"
  run "$module" --filter "^${module}\\." "$@"
done
echo "== other test modules"
skip=$(IFS='|'; echo "${modules[*]}")
run "others" --skip "^(${skip})\\." "$@"

if [ "$status" -ne 0 ]; then
  echo
  echo "==== test modules that failed: ${failed[*]}"
  cat "$logs"/*.summary
fi
exit $status
