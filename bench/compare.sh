#!/usr/bin/env bash
# Times, in one run on one file: the DevTools engine (../shared/oracle: read + JSON.parse +
# Model.parse with all handlers), the bare-parse floor (serde_json into IgnoredAny), and
# `jscalls calls` / `jscalls timeline` end to end; prints medians, ratios and peak memory.
#
# usage: bash bench/compare.sh FILE [RUNS]          (RUNS default 5; DevTools runs min(RUNS,3))
#        bash bench/compare.sh --gen SIZE [RUNS]    (generates bench-data/gen-SIZE.json first)
# needs: cargo; node + npm for the DevTools column (skipped when the file is over V8's 512 MB
# string limit, which DevTools cannot read at all).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [ "${1:-}" = "--gen" ]; then
  mkdir -p bench-data
  FILE="bench-data/gen-$2.json"
  [ -f "$FILE" ] || cargo run --quiet --release --example gentrace -- --size "$2" --seed 1 -o "$FILE"
  shift 2
else
  FILE="${1:?usage: bench/compare.sh FILE [RUNS] | --gen SIZE [RUNS]}"
  shift
fi
RUNS="${1:-5}"
cargo build --quiet --release --bin jscalls --example bareparse
J="$ROOT/target/release/jscalls"
BYTES=$(if [ "$(head -c2 "$FILE" | od -An -tx1 | tr -d ' ')" = "1f8b" ]; then gzip -dc "$FILE" | wc -c; else wc -c < "$FILE"; fi)
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# Prints "seconds peak_rss_kb" for one run of a command.
measure() { /usr/bin/time -f "%e %M" -o "$OUT/t" "$@" > /dev/null 2> "$OUT/err" || { cat "$OUT/err" >&2; exit 1; }; cat "$OUT/t"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

declare -A SECS RSS
run_many() { # name, command...
  local name="$1"; shift
  : > "$OUT/$name.s"; : > "$OUT/$name.m"
  for _ in $(seq "$RUNS"); do
    read -r s m < <(measure "$@")
    echo "$s" >> "$OUT/$name.s"; echo "$m" >> "$OUT/$name.m"
  done
  SECS[$name]=$(median < "$OUT/$name.s"); RSS[$name]=$(sort -n "$OUT/$name.m" | tail -1)
}

run_many floor "$ROOT/target/release/examples/bareparse" "$FILE"
run_many calls "$J" calls "$FILE" -q -o "$OUT/calls.json"
run_many timeline "$J" timeline "$FILE" -q -o "$OUT/timeline.json"

DT="n/a"
if [ "$BYTES" -lt 536870000 ] && command -v node > /dev/null; then
  SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
  mkdir -p target/oracle
  cp "$SHARED"/oracle/{oracle.mjs,compare.mjs,patch-v6.mjs,package.json,package-lock.json} target/oracle/
  [ -d target/oracle/node_modules/@paulirish/trace_engine ] || (cd target/oracle && npm ci --no-audit --no-fund > /dev/null)
  : > "$OUT/dt.s"
  DTRUNS=$(( RUNS < 3 ? RUNS : 3 ))
  for _ in $(seq "$DTRUNS"); do
    node --max-old-space-size=16000 target/oracle/oracle.mjs "$FILE" --timing --quiet-engine --out "$OUT/oracle.json" 2> "$OUT/dt.err"
    # DevTools' cost: read + JSON.parse + Model.parse (the engine), as the oracle reports it.
    tail -1 "$OUT/dt.err" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s);console.log(((t.parse_ms+t.engine_ms)/1000).toFixed(3), t.peak_rss_mb)})' >> "$OUT/dt.s"
  done
  DT=$(cut -d' ' -f1 "$OUT/dt.s" | median)
  DTRSS=$(cut -d' ' -f2 "$OUT/dt.s" | sort -n | tail -1)
  PARITY=$(node target/oracle/compare.mjs "$OUT/oracle.json" "$OUT/calls.json" --tree --tol 0 | tail -1)
fi

MB=$(awk -v b="$BYTES" 'BEGIN{printf "%.1f", b/1e6}')
echo "file: $FILE ($MB MB uncompressed), $RUNS runs each, medians; peak RSS is the max over runs"
printf "%-34s %9s %10s %10s\n" "" "seconds" "MB/s" "peak MB"
for k in floor calls timeline; do
  printf "%-34s %9s %10s %10s\n" "$k" "${SECS[$k]}" "$(awk -v b="$BYTES" -v s="${SECS[$k]}" 'BEGIN{printf "%.0f", b/1e6/s}')" "$(( ${RSS[$k]} / 1024 ))"
done
if [ "$DT" != "n/a" ]; then
  printf "%-34s %9s %10s %10s\n" "DevTools (read+parse+engine)" "$DT" "$(awk -v b="$BYTES" -v s="$DT" 'BEGIN{printf "%.0f", b/1e6/s}')" "$DTRSS"
  echo "speed-up of jscalls calls over DevTools: $(awk -v a="$DT" -v b="${SECS[calls]}" 'BEGIN{printf "%.1fx", a/b}')"
  echo "parity: $PARITY"
else
  echo "DevTools: not measured (input over V8's 512 MB string limit: DevTools cannot read it)"
fi
echo "jscalls calls throughput / bare-parse floor: $(awk -v f="${SECS[floor]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", f/c}')"
echo "peak memory / input size (calls): $(awk -v m="${RSS[calls]}" -v b="$BYTES" 'BEGIN{printf "%.2f", m*1024/b}')"
