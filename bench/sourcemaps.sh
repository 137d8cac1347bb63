#!/usr/bin/env bash
# Times `jscalls calls` with source maps against `--no-source-maps` on TypeScript's compiler
# bundled and minified by esbuild (a 3.5 MB script with a 14 MB map) while it type-checks
# typescript.d.ts twice: a node trace (trace events with the CPU profile) and a `.cpuprofile` of
# the same run. Rounds are interleaved; prints medians, ratios and peak memory. With
# BEFORE=OTHER_BINARY, that binary with maps is timed in the same rounds.
#
# usage: bash bench/sourcemaps.sh [RUNS]          (RUNS default 7)
# needs: cargo, node 20 and npm (the bundle is built once, into bench-data/sourcemaps).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
RUNS="${1:-7}"
W="$ROOT/bench-data/sourcemaps"
if [ ! -f "$W/out/app.trace.json" ]; then
  rm -rf "$W" && mkdir -p "$W/out"
  cd "$W"
  cat > package.json <<'P'
{ "private": true, "dependencies": { "esbuild": "0.24.0", "typescript": "5.6.3" } }
P
  npm install --no-audit --no-fund --silent > /dev/null
  cat > app.js <<'A'
const ts = require('typescript');
const files = [require.resolve('typescript/lib/typescript.d.ts')];
for (let i = 0; i < 2; i++) {
  const program = ts.createProgram(files, { noEmit: true, lib: ['lib.es2020.d.ts'], strict: true });
  console.log(ts.getPreEmitDiagnostics(program).length);
}
A
  npx esbuild app.js --bundle --platform=node --minify --sourcemap --outfile=out/app.js --log-level=error
  cp node_modules/typescript/lib/lib*.d.ts out/
  cd out
  mkdir trace
  node --trace-event-file-pattern "trace/\${pid}.json" "$ROOT/fixtures/record/workloads/trace_wrap.js" app.js > /dev/null
  mv trace/*.json app.trace.json && rmdir trace
  node --cpu-prof --cpu-prof-interval 100 --cpu-prof-name app.cpuprofile app.js > /dev/null
  cd "$ROOT"
fi
cargo build --quiet --release --bin jscalls
J="$ROOT/target/release/jscalls"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

measure() { # name, command...
  local name="$1"; shift
  rm -f "$OUT/out.json"
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$OUT/t" "$@" > /dev/null 2> "$OUT/err" || { cat "$OUT/err" >&2; exit 1; }
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f\n", b-a}' >> "$OUT/$name.s"
  cat "$OUT/t" >> "$OUT/$name.m"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

KEYS="trace_maps trace_none profile_maps profile_none"
[ -n "${BEFORE:-}" ] && KEYS="$KEYS trace_before profile_before"
for k in $KEYS; do : > "$OUT/$k.s"; : > "$OUT/$k.m"; done
for _ in $(seq "$RUNS"); do
  for input in trace profile; do
    f="$W/out/app.trace.json"; [ "$input" = profile ] && f="$W/out/app.cpuprofile"
    measure "${input}_maps" "$J" calls "$f" --source-maps "$W/out" -q -o "$OUT/out.json"
    measure "${input}_none" "$J" calls "$f" --no-source-maps -q -o "$OUT/out.json"
    if [ -n "${BEFORE:-}" ]; then
      measure "${input}_before" "$BEFORE" calls "$f" --source-maps "$W/out" -q -o "$OUT/out.json"
    fi
  done
done
"$J" calls "$W/out/app.trace.json" --source-maps "$W/out" -o "$OUT/out.json" 2>&1 | grep 'source maps' || true
echo "script $(wc -c < "$W/out/app.js") bytes, map $(wc -c < "$W/out/app.js.map") bytes;" \
  "trace $(wc -c < "$W/out/app.trace.json") bytes, profile $(wc -c < "$W/out/app.cpuprofile") bytes; $RUNS runs, medians"
for k in $KEYS; do
  printf "%-16s %8s s %6s MB   runs: %s\n" "$k" "$(median < "$OUT/$k.s")" "$(( $(sort -n "$OUT/$k.m" | tail -1) / 1024 ))" \
    "$(tr '\n' ' ' < "$OUT/$k.s")"
done
for input in trace profile; do
  echo "$input: with maps / --no-source-maps: $(awk -v a="$(median < "$OUT/${input}_maps.s")" \
    -v b="$(median < "$OUT/${input}_none.s")" 'BEGIN{printf "%.2f", a/b}')"
done
