#!/usr/bin/env bash
# Times, in one run on one file: the DevTools engine (../shared/oracle: read + JSON.parse +
# Model.parse with all handlers), the bare-parse floor (serde_json into IgnoredAny), and
# `jscalls calls` (also with --bounds, --estimator midway and log-midway) / `timeline` / `tree` /
# `export` (speedscope, firefox, collapsed, svg, pprof) / `lines` / `diff` / `calls` of the same
# trace gzipped (gzip -6, as the Performance panel saves it; made once, when FILE is not gzipped)
# (FILE against itself, call by call; its DevTools estimate against its midway one; with
# DIFF_WITH=FILE2 also FILE against FILE2, function by function) end to end; prints medians,
# ratios and peak memory.
#
# usage: bash bench/compare.sh FILE [RUNS]          (RUNS default 5, for every column)
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
GZ=0
if [ "$(head -c2 "$FILE" | od -An -tx1 | tr -d ' ')" != "1f8b" ]; then
  GZ=1
  gzip -6 -c "$FILE" > "$OUT/input.json.gz"
fi

. "$ROOT/bench/lib.sh"

DEVTOOLS=0
SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
if [ ! -d "$SHARED/oracle" ]; then
  echo "compare.sh: no DevTools oracle in $SHARED/oracle (set JSCALLS_SHARED): jscalls alone" >&2
elif [ "$BYTES" -lt 536870000 ] && command -v node > /dev/null; then
  DEVTOOLS=1
  mkdir -p target/oracle
  cp "$SHARED"/oracle/*.mjs "$SHARED"/oracle/package.json "$SHARED"/oracle/package-lock.json target/oracle/
  [ -d target/oracle/node_modules/@paulirish/trace_engine ] || (cd target/oracle && npm ci --no-audit --no-fund > /dev/null)
fi

# Rounds are interleaved (floor, calls, timeline, DevTools, then again), so that the host's
# drift over the run falls on all of them alike.
for name in floor calls calls_gz bounds midway logmid timeline tree speedscope firefox collapsed svg pprof lines diff diffmid diff2 dt; do : > "$OUT/$name.s"; : > "$OUT/$name.m"; done
for _ in $(seq "$RUNS"); do
  measure floor "$ROOT/target/release/examples/bareparse" "$FILE"
  # Each run writes a new file: replacing the previous run's output would time the file system
  # freeing that file's blocks inside jscalls' final rename (5-9 ms for the 30 MB calls of a
  # 100 MB trace on this machine's ext4, mounted with online discard), a cost of this loop,
  # not of the conversion. (DevTools' figure leaves out writing altogether.)
  rm -f "$OUT/calls.json" "$OUT/bounds.json" "$OUT/midway.json" "$OUT/logmid.json" "$OUT/timeline.json" "$OUT/tree.json" "$OUT/x.speedscope.json" "$OUT/x.json.gz" "$OUT/x.collapsed" "$OUT/x.svg" "$OUT/x.pb.gz" "$OUT/lines.json"
  measure calls "$J" calls "$FILE" --engine 0.0.65 -q -o "$OUT/calls.json"
  if [ "$GZ" = 1 ]; then
    rm -f "$OUT/calls-gz.json"
    measure calls_gz "$J" calls "$OUT/input.json.gz" --engine 0.0.65 -q -o "$OUT/calls-gz.json"
  fi
  measure bounds "$J" calls "$FILE" --engine 0.0.65 --bounds -q -o "$OUT/bounds.json"
  measure midway "$J" calls "$FILE" --engine 0.0.65 --estimator midway -q -o "$OUT/midway.json"
  measure logmid "$J" calls "$FILE" --engine 0.0.65 --estimator log-midway -q -o "$OUT/logmid.json"
  measure timeline "$J" timeline "$FILE" --engine 0.0.65 -q -o "$OUT/timeline.json"
  measure tree "$J" tree "$FILE" --engine 0.0.65 -q --format json -o "$OUT/tree.json"
  measure speedscope "$J" export "$FILE" --engine 0.0.65 -q -o "$OUT/x.speedscope.json"
  measure firefox "$J" export "$FILE" --engine 0.0.65 -q -o "$OUT/x.json.gz"
  measure collapsed "$J" export "$FILE" --engine 0.0.65 -q -o "$OUT/x.collapsed"
  measure svg "$J" export "$FILE" --engine 0.0.65 -q -o "$OUT/x.svg"
  measure pprof "$J" export "$FILE" --engine 0.0.65 -q -o "$OUT/x.pb.gz"
  measure lines "$J" lines "$FILE" --engine 0.0.65 -q --format json -o "$OUT/lines.json"
  rm -f "$OUT/diff.txt" "$OUT/diffmid.txt" "$OUT/diff2.txt"
  measure diff "$J" diff "$FILE" "$FILE" --engine 0.0.65 -q -o "$OUT/diff.txt"
  measure diffmid "$J" diff "$FILE" --new-opt "--estimator midway" --engine 0.0.65 -q -o "$OUT/diffmid.txt"
  if [ -n "${DIFF_WITH:-}" ]; then
    measure diff2 "$J" diff "$FILE" "$DIFF_WITH" --engine 0.0.65 -q -o "$OUT/diff2.txt"
  fi
  if [ "$DEVTOOLS" = 1 ]; then
    node --max-old-space-size=16000 target/oracle/oracle.mjs "$FILE" --timing --quiet-engine --out "$OUT/oracle.json" 2> "$OUT/dt.err" \
      || { cat "$OUT/dt.err" >&2; exit 1; }
    # DevTools' cost: read + JSON.parse + Model.parse (the engine), as the oracle reports it.
    tail -1 "$OUT/dt.err" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s);console.log(((t.parse_ms+t.engine_ms)/1000).toFixed(3), t.peak_rss_mb)})' >> "$OUT/dt.s"
  fi
done
declare -A SECS RSS
KEYS="floor calls bounds midway logmid timeline tree speedscope firefox collapsed svg pprof lines diff diffmid"
[ -n "${DIFF_WITH:-}" ] && KEYS="$KEYS diff2"
[ "$GZ" = 1 ] && KEYS="$KEYS calls_gz"
for k in $KEYS; do
  SECS[$k]=$(median < "$OUT/$k.s"); RSS[$k]=$(sort -n "$OUT/$k.m" | tail -1)
done
DT="n/a"
if [ "$DEVTOOLS" = 1 ]; then
  DT=$(cut -d' ' -f1 "$OUT/dt.s" | median)
  DTRSS=$(cut -d' ' -f2 "$OUT/dt.s" | sort -n | tail -1)
  PARITY=$(node target/oracle/compare.mjs "$OUT/oracle.json" "$OUT/calls.json" --tree --tol 0 | tail -1)
fi
# Every run, for a reader who wants more than the median.
for k in floor calls calls_gz bounds midway logmid timeline tree speedscope firefox collapsed svg pprof lines diff diffmid diff2 dt; do
  if [ -s "$OUT/$k.s" ]; then echo "runs $k: $(cut -d' ' -f1 "$OUT/$k.s" | tr '\n' ' ')"; fi
done

MB=$(awk -v b="$BYTES" 'BEGIN{printf "%.1f", b/1e6}')
echo "file: $FILE ($MB MB uncompressed), $RUNS runs each, medians; peak RSS is the max over runs"
printf "%-34s %9s %10s %10s\n" "" "seconds" "MB/s" "peak MB"
for k in $KEYS; do
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
for k in bounds midway logmid; do
  case $k in bounds) opt="--bounds" ;; midway) opt="--estimator midway" ;; *) opt="--estimator log-midway" ;; esac
  echo "calls $opt / calls: $(awk -v t="${SECS[$k]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time"
done
echo "timeline / calls: $(awk -v t="${SECS[timeline]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time"
if [ "$GZ" = 1 ]; then
  echo "calls of the gzipped trace / calls: $(awk -v t="${SECS[calls_gz]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time"
fi
echo "tree / calls: $(awk -v t="${SECS[tree]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time; peak memory / input size (tree): $(awk -v m="${RSS[tree]}" -v b="$BYTES" 'BEGIN{printf "%.2f", m*1024/b}')"
for k in speedscope firefox collapsed svg pprof; do
  echo "export $k / calls: $(awk -v t="${SECS[$k]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time; peak memory / input size: $(awk -v m="${RSS[$k]}" -v b="$BYTES" 'BEGIN{printf "%.2f", m*1024/b}')"
done
echo "lines / calls: $(awk -v t="${SECS[lines]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time"
echo "diff of FILE with itself / calls: $(awk -v t="${SECS[diff]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time; peak memory / input size: $(awk -v m="${RSS[diff]}" -v b="$BYTES" 'BEGIN{printf "%.2f", m*1024/b}')"
echo "diff of FILE's DevTools and midway estimates / calls: $(awk -v t="${SECS[diffmid]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time; peak memory / input size: $(awk -v m="${RSS[diffmid]}" -v b="$BYTES" 'BEGIN{printf "%.2f", m*1024/b}')"
if [ -n "${DIFF_WITH:-}" ]; then
  echo "diff of FILE with $DIFF_WITH / calls: $(awk -v t="${SECS[diff2]}" -v c="${SECS[calls]}" 'BEGIN{printf "%.2f", t/c}') of the time; peak memory / input size: $(awk -v m="${RSS[diff2]}" -v b="$BYTES" 'BEGIN{printf "%.2f", m*1024/b}')"
fi
