#!/usr/bin/env bash
# `jscalls view` against the export it serves, in one run: the time from starting `view
# --no-open` until a client (curl, as the viewer would fetch it) has the whole profile and
# view has exited, beside `export --to firefox` of the same input to a file.
#
# usage: bash bench/view.sh FILE [RUNS]      (RUNS default 5; medians)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE="${1:?usage: bench/view.sh FILE [RUNS]}"
RUNS="${2:-5}"
cd "$ROOT"
cargo build --quiet --release --bin jscalls
J="$ROOT/target/release/jscalls"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
. "$ROOT/bench/lib.sh"
for _ in $(seq "$RUNS"); do
  rm -f "$OUT/x.json"
  t0=$EPOCHREALTIME
  "$J" export "$FILE" --to firefox -q -o "$OUT/x.json"
  t1=$EPOCHREALTIME
  echo "$t1 - $t0" | bc >> "$OUT/export.s"
  t0=$EPOCHREALTIME
  view_once "$OUT/served" "$J" view "$FILE" --no-open --timeout 60
  t1=$EPOCHREALTIME
  echo "$t1 - $t0" | bc >> "$OUT/view.s"
done
E=$(median < "$OUT/export.s"); V=$(median < "$OUT/view.s")
echo "runs export: $(tr '\n' ' ' < "$OUT/export.s")"
echo "runs view:   $(tr '\n' ' ' < "$OUT/view.s")"
echo "export --to firefox: $E s; view until served and exited: $V s; view / export: $(awk -v v="$V" -v e="$E" 'BEGIN{printf "%.2f", v/e}')"
echo "served $(wc -c < "$OUT/served") bytes; the export wrote $(wc -c < "$OUT/x.json")"
