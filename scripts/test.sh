#!/usr/bin/env bash
# Runs the test suite one test module at a time. The library's consistency
# loops are CPU-bound; run beside the explorer's and Redis's real-time tests
# (workloads with rates, real servers, tmux) on a 2-core machine they starve
# them of the cooperative pool, so the modules take turns (the simulator's
# hit-ratio tables too: beside them the Combine publishers' tests starved).
# Extra arguments go to every `swift test` call.
#
# Each module's output is also kept in a log; when a module fails, the lines
# that name failed tests, recorded issues and crashes are printed again at
# the very end, so the tail of a CI log says what went wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
modules=(StrataTests StrataRedisTests StrataExplorerTests StrataSimTests)
logs=$(mktemp -d "${TMPDIR:-/tmp}/strata-test-logs.XXXXXX")
trap 'rm -rf "$logs"' EXIT
status=0
failed=()

# A module that runs longer than this is stuck: its tests are listed, every
# thread of the test process is printed (gdb), and it is killed, so that a
# hang turns into a red run that says where, not a CI time-out that says
# nothing. A whole module takes 1-6 minutes here.
limit=${STRATA_TEST_MODULE_LIMIT:-1200}

# Tests that started and have not finished, from a module's log
# ("◇ Test x() started." against "✔ Test x() passed after …" and the like).
unfinished() {
  awk '
    / Test .* started\.$/ { sub(/^.* Test /, ""); sub(/ started\.$/, ""); started[$0]++; next }
    / Test .* (passed|failed|skipped)/ {
      line = $0; sub(/^.* Test /, "", line)
      sub(/ (with [0-9]+ test cases? )?(passed|failed|skipped).*$/, "", line); ended[line]++
    }
    END { for (t in started) if (started[t] > ended[t] && t != "run" && t !~ /^case passing/) print "  " t }
  ' "$1"
}

# Every process below `$1` (children first found, then theirs).
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# Waits for `pid` (a `swift test` run); past the limit, reports and kills
# what runs below it (the test process, and what it started), but not `tee`,
# which keeps the log. It goes on killing until the run ends: SwiftPM runs
# the test bundle twice (XCTest, then swift-testing), and the second run
# must not go unwatched.
watchdog() {
  local pid=$1 name=$2 log=$3 waited=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    waited=$((waited + 5))
    [ "$waited" -lt "$limit" ] && continue
    if [ ! -f "$logs/$name.hang" ]; then
      {
        echo
        echo "==== $name is still running after ${limit}s: tests that started and did not finish:"
        unfinished "$log"
        for test in $(descendants "$pid"); do
          grep -q "xctest" "/proc/$test/cmdline" 2>/dev/null || continue
          echo "==== threads of $(tr '\0' ' ' </proc/"$test"/cmdline 2>/dev/null | cut -c1-200)"
          trace=$(timeout 120 gdb -p "$test" -batch -ex "thread apply all bt" 2>&1 || true)
          if grep -q "^Thread" <<<"$trace"; then
            grep -E "^Thread|^#" <<<"$trace" | cut -c1-220
          else
            echo "$trace" | tail -5  # why gdb could not attach (ptrace not permitted, …)
          fi
        done
        echo "==== processes below the run"
        ps -o pid,ppid,etime,stat,args -p "$(descendants "$pid" | tr '\n' ',' | sed 's/,$//')" 2>/dev/null | cut -c1-200 || true
      } >"$logs/$name.hang.txt"
      mv "$logs/$name.hang.txt" "$logs/$name.hang"
      cat "$logs/$name.hang"
    fi
    for victim in $(descendants "$pid"); do
      # The explorer tests' tmux servers leave the tree (they daemonise);
      # their sockets are named after the test process.
      if grep -q "xctest" "/proc/$victim/cmdline" 2>/dev/null; then
        for socket in "/tmp/tmux-$(id -u)/strata-test-$victim-"*; do
          [ -S "$socket" ] && timeout 10 tmux -L "$(basename "$socket")" kill-server 2>/dev/null || true
        done
      fi
      grep -q "^tee" "/proc/$victim/cmdline" 2>/dev/null || kill -KILL "$victim" 2>/dev/null || true
    done
  done
}

run() {
  local name=$1; shift
  local log="$logs/$name.log"
  local code=0
  # Line-buffered, so that what a stuck test process printed last is in the log.
  ( set -o pipefail; stdbuf -oL -eL "$SWIFT" test --skip-build "$@" 2>&1 | tee "$log" ) &
  local pid=$!
  watchdog "$pid" "$name" "$log" &
  local dog=$!
  wait "$pid" || code=$?
  kill "$dog" 2>/dev/null || true
  wait "$dog" 2>/dev/null || true
  if [ -f "$logs/$name.hang" ] && [ "$code" -eq 0 ]; then code=124; fi
  if [ "$code" -ne 0 ]; then
    status=1
    failed+=("$name (exit $code)")
    {
      echo "---- $name failed (exit $code): failing tests and issues"
      grep -E "✘|error:|Fatal error|fatal error|Crash|crashed|signal [0-9]+|Assertion failed|Precondition failed|Exited with" "$log" | grep -v "passed after" | head -60 || true
      echo "---- last lines of $name"
      tail -8 "$log"
      if [ -f "$logs/$name.hang" ]; then
        echo "---- $name hung; tests that did not finish:"
        unfinished "$log"
      fi
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
