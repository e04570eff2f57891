"""Prints the public symbols without an abstract (a doc comment's first
line) in a DocC documentation-coverage.json, one documentation path a line.

The symbol graphs are extracted without synthesized members (a protocol's
defaults on each conforming type, whose documentation is the protocol's)."""
import json
import sys

entries = json.load(open(sys.argv[1]))
missing = set()
for entry in entries:
    if entry.get("hasAbstract") or not entry.get("kind", {}).get("isSymbol"):
        continue
    path = entry["referencePath"].split("/documentation/", 1)[-1]
    missing.add(path)
for path in sorted(missing):
    print(path)
