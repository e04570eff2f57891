#!/usr/bin/env bash
# Runs the test suite one test module at a time. The library's consistency
# loops are CPU-bound; run beside the explorer's and Redis's real-time tests
# (workloads with rates, real servers, tmux) on a 2-core machine they starve
# them of the cooperative pool, so the modules take turns. Extra arguments go
# to every `swift test` call.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
modules=(StrataTests StrataRedisTests StrataExplorerTests)
status=0
for module in "${modules[@]}"; do
  echo "== $module"
  "$SWIFT" test --skip-build --filter "^${module}\\." "$@" || status=1
done
echo "== other test modules"
skip=$(IFS='|'; echo "${modules[*]}")
"$SWIFT" test --skip-build --skip "^(${skip})\\." "$@" || status=1
exit $status
