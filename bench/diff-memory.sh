#!/usr/bin/env bash
# Peak memory of `diff` against `calls` on the generated trace (default 100 MB): one
# recording against a copy (call by call), against a second recording (`--seed 2`, function
# by function), and two estimators of one; text and JSON reports.
#   bash bench/diff-memory.sh [SIZE]
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-100M}
FILE="bench-data/gen-$SIZE.json"
cargo build --quiet --release --bin jscalls --example gentrace
[ -f "$FILE" ] || target/release/examples/gentrace --size "$SIZE" --seed 1 -o "$FILE"
OTHER="bench-data/gen-$SIZE-seed2.json"
[ -f "$OTHER" ] || target/release/examples/gentrace --size "$SIZE" --seed 2 -o "$OTHER"
J=target/release/jscalls
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$FILE" "$TMP/copy.json"
peak() { /usr/bin/time -f "%M" "$@" -q -o "$TMP/out" 2>&1 >/dev/null | tail -1; }
calls=$(peak "$J" calls "$FILE")
printf '%-40s %8s KB\n' "calls" "$calls"
for args in "text, a copy|$FILE $TMP/copy.json" "json, a copy|$FILE $TMP/copy.json --format json" \
            "text, two recordings|$FILE $OTHER" "json, two recordings|$FILE $OTHER --format json" \
            "json, two estimators|$FILE --new-opt --estimator=midway --format json"; do
  label=${args%%|*}
  # shellcheck disable=SC2086
  kb=$(peak "$J" diff ${args#*|})
  printf '%-40s %8s KB  %.2fx calls\n' "diff $label" "$kb" "$(echo "$kb / $calls" | bc -l)"
done
