#!/usr/bin/env bash
# Where one operation of strata-hitpath spends its instructions: runs KIND
# under callgrind at two iteration counts and prints, per function, the
# difference divided by the extra iterations (instructions per operation),
# largest first. Look for symbols without a `Tg5` suffix (unspecialised
# generic code), `Vwcp`/`Vwxx` (generic value-witness copies and destroys) and
# the callers of swift_retain/release.
# Usage: scripts/callgrind-profile.sh KIND [LINES]   (build first:
#   swift build -c release --product strata-hitpath)
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/callgrind-profile.sh KIND [LINES]}
lines=${2:-40}
bin="$(swift build -c release --show-bin-path)/strata-hitpath"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 10000 20000; do
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" "$bin" "$kind" "$n" >/dev/null 2>&1
  callgrind_annotate "$tmp/cg.$n" 2>/dev/null | grep -E '^ *[0-9,]+ \(' \
    | sed -E 's/^ *([0-9,]+) \([^)]*\) +(.*)$/\1\t\2/' | sed 's/,//g' \
    | awk -F'\t' '{sub(/ \[.*$/,"",$2); print $2"\t"$1}' | sort > "$tmp/f.$n"
done
join -t$'\t' -a1 -a2 -e0 -o 0,1.2,2.2 "$tmp/f.10000" "$tmp/f.20000" \
  | awk -F'\t' '{d=($3-$2)/10000; if (d>3||d<-3) printf "%8.1f %s\n", d, $1}' | sort -rn | head -"$lines"
