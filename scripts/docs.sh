#!/usr/bin/env bash
# Builds the DocC documentation of Strata and StrataRedis into
# .build/docs/<Module> (static HTML), from their catalogs
# (Sources/<Module>/<Module>.docc, whose guides are docs/*.md) and the
# modules' public symbols. Every DocC warning (a link that does not resolve,
# a parameter that does not exist) fails the build, and so does a public
# symbol without documentation (listed by name).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
modules=(Strata StrataRedis)

# docc and swift-symbolgraph-extract come with the Swift toolchain, next to
# swift: found on PATH, else beside the swift binary (symlinks resolved).
toolchain_bin=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")
tool() {
  if command -v "$1" >/dev/null 2>&1; then command -v "$1"
  elif [ -x "$toolchain_bin/$1" ]; then echo "$toolchain_bin/$1"
  else echo "docs: $1 not found on PATH nor in $toolchain_bin (it comes with the Swift toolchain)" >&2; return 1
  fi
}
DOCC=$(tool docc)
SYMBOLGRAPH_EXTRACT=$(tool swift-symbolgraph-extract)

graphs=$(mktemp -d "${TMPDIR:-/tmp}/strata-docs.XXXXXX")
trap 'rm -rf "$graphs"' EXIT
# The build's output only if it fails (the packages' warnings are not ours).
if ! $SWIFT build --target StrataRedis > "$graphs/build.log" 2>&1; then
  cat "$graphs/build.log"
  echo "docs: building StrataRedis failed (above)" >&2
  exit 1
fi
bin=$($SWIFT build --show-bin-path)
triple=$($SWIFT -print-target-info | sed -n 's/.*"triple": "\(.*\)".*/\1/p' | head -1)
maps=()
# The C modules the Swift modules import: generated ones, and the packages' own.
while IFS= read -r map; do maps+=(-Xcc "-fmodule-map-file=$map"); done \
  < <(ls "$bin"/*.build/module.modulemap; find .build/checkouts -path '*/include/module.modulemap')

status=0
for module in "${modules[@]}"; do
  mkdir -p "$graphs/$module"
  "$SYMBOLGRAPH_EXTRACT" -module-name "$module" -I "$bin/Modules" -target "$triple" \
    -minimum-access-level public -skip-synthesized-members -output-dir "$graphs/$module" "${maps[@]}"
  out=".build/docs/$module"
  rm -rf "$out" && mkdir -p .build/docs
  if ! "$DOCC" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs/$module" \
      --fallback-display-name "$module" --fallback-bundle-identifier "dev.strata.$module" \
      --output-path "$out" --warnings-as-errors \
      --experimental-documentation-coverage --coverage-summary-level none > "$graphs/$module.log" 2>&1; then
    grep -E "^(warning|error):" "$graphs/$module.log" | sort -u || tail -20 "$graphs/$module.log"
    echo "docs: $module: DocC reported the problems above" >&2
    status=1
    continue
  fi
  undocumented=$(python3 scripts/docs-coverage.py "$out/documentation-coverage.json")
  if [ -n "$undocumented" ]; then
    echo "$undocumented"
    echo "docs: $module: $(echo "$undocumented" | wc -l) public symbols have no documentation (above)" >&2
    status=1
    continue
  fi
  echo "docs: $module: $out (no warnings, every public symbol documented)"
done
exit $status
