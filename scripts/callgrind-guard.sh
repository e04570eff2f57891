#!/usr/bin/env bash
# Regression guard for the get-hit path: instructions per get-hit, counted by
# `valgrind --tool=callgrind`, checked against Tests/callgrind-budgets.txt.
#
# For each kind, strata-hitpath runs twice (LOW and HIGH iterations); the
# difference of the two totals divided by (HIGH - LOW) is the cost of one
# warm hit, with start-up and the warm-up fill cancelled out. Hashing is made
# deterministic so both runs do the same start-up work.
#
# Usage: scripts/callgrind-guard.sh [--no-build] [--update]
#   --update  rewrites the budgets file from this run (measured x margin).
set -euo pipefail
cd "$(dirname "$0")/.."

BUDGETS=${CALLGRIND_BUDGETS:-Tests/callgrind-budgets.txt}
LOW=${CALLGRIND_LOW:-1000}
HIGH=${CALLGRIND_HIGH:-6000}
build=1 update=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --update) update=1 ;;
    *) echo "callgrind-guard: unknown argument $arg" >&2; exit 2 ;;
  esac
done

if [ "$(uname -m)" != x86_64 ]; then
  echo "callgrind-guard: budgets are for x86_64; skipped on $(uname -m)"
  exit 0
fi
if ! command -v valgrind >/dev/null 2>&1; then
  echo "callgrind-guard: valgrind is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi

SCRATCH=${CALLGRIND_SCRATCH:-.build}
if [ "$build" = 1 ]; then
  swift build -c release --scratch-path "$SCRATCH" --product strata-hitpath >/dev/null
fi
bin="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/strata-hitpath"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions (Ir) of one run.
instructions() {
  local kind=$1 n=$2 out="$tmp/cg.$1.$2"
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$bin" "$kind" "$n" >/dev/null 2>"$tmp/log.$kind.$n" || { cat "$tmp/log.$kind.$n" >&2; return 1; }
  grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}'
}

# Instructions per hit of one kind, written to $tmp/perhit.KIND.
perhit() {
  local kind=$1 low high
  low=$(instructions "$kind" "$LOW")
  high=$(instructions "$kind" "$HIGH")
  echo $(( (high - low) / (HIGH - LOW) )) > "$tmp/perhit.$kind"
}

# Budget file: "kind budget margin-note" lines; '#' comments.
kinds=$(grep -vE '^\s*(#|$)' "$BUDGETS" | awk '{print $1}')
failed=0
declare -A measured
# Two kinds at a time (each valgrind run is single-threaded).
pids=()
for kind in $kinds; do
  perhit "$kind" &
  pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid" || exit 1; done
printf '%-18s %12s %10s %8s  %s\n' kind "instr/hit" budget ratio result
for kind in $kinds; do
  budget=$(awk -v k="$kind" '$1 == k {print $2}' "$BUDGETS")
  value=$(cat "$tmp/perhit.$kind")
  measured[$kind]=$value
  ratio=$(awk -v v="$value" -v b="$budget" 'BEGIN { printf "%.2f", v / b }')
  if [ "$value" -le "$budget" ]; then result=ok; else result=OVER; failed=1; fi
  printf '%-18s %12d %10d %8s  %s\n' "$kind" "$value" "$budget" "$ratio" "$result"
done

if [ "$update" = 1 ]; then
  margin=${CALLGRIND_MARGIN:-1.25}
  {
    grep -E '^\s*#' "$BUDGETS"
    for kind in $kinds; do
      printf '%-18s %d\n' "$kind" "$(awk -v v="${measured[$kind]}" -v m="$margin" 'BEGIN { printf "%d", v * m + 0.5 }')"
    done
  } > "$BUDGETS.new"
  mv "$BUDGETS.new" "$BUDGETS"
  echo "callgrind-guard: budgets rewritten with margin $margin"
  exit 0
fi

if [ "$failed" = 1 ]; then
  echo "callgrind-guard: a get-hit path costs more instructions than its budget in $BUDGETS" >&2
  exit 1
fi
echo "callgrind-guard: every get-hit path within budget"
