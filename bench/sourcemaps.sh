#!/usr/bin/env bash
# Times `jscalls calls` with source maps against `--no-source-maps` on TypeScript's compiler
# bundled and minified by esbuild (a 3.5 MB script with a 14 MB map) while it type-checks
# typescript.d.ts twice: a node trace (trace events with the CPU profile) and a `.cpuprofile` of
# the same run. Rounds are interleaved; prints medians, ratios and peak memory. With
# BEFORE=OTHER_BINARY, that binary with maps is timed in the same rounds. Where ../shared/smoracle
# is (JSCALLS_SHARED), it also compares every frame's name (both of DevTools' states) and
# original place with DevTools' own source-map code.
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

. "$ROOT/bench/lib.sh"

KEYS="trace_maps trace_none profile_maps profile_none"
[ -n "${BEFORE:-}" ] && KEYS="$KEYS trace_before profile_before"
for k in $KEYS; do : > "$OUT/$k.s"; : > "$OUT/$k.m"; done
for _ in $(seq "$RUNS"); do
  for input in trace profile; do
    f="$W/out/app.trace.json"; [ "$input" = profile ] && f="$W/out/app.cpuprofile"
    # Each run writes a new file (see compare.sh).
    rm -f "$OUT"/*.json
    measure "${input}_maps" "$J" calls "$f" --source-maps "$W/out" -q -o "$OUT/maps.json"
    measure "${input}_none" "$J" calls "$f" --no-source-maps -q -o "$OUT/none.json"
    if [ -n "${BEFORE:-}" ]; then
      measure "${input}_before" "$BEFORE" calls "$f" --source-maps "$W/out" -q -o "$OUT/before.json"
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

SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
if [ -d "$SHARED/smoracle" ] && command -v node > /dev/null; then
  SM="$ROOT/target/smoracle"
  mkdir -p "$SM"
  cp -r "$SHARED"/smoracle/{*.mjs,package.json,package-lock.json,src} "$SM/"
  [ -d "$SM/node_modules/chrome-devtools-frontend" ] || (cd "$SM" && npm ci --no-audit --no-fund > /dev/null)
  # jscalls writes the final name as resolvedName and the first pass's as resolvedNameFirst.
  first() { node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1]));
    for (const f of d.frames) f.resolvedName = f.resolvedNameFirst; console.log(JSON.stringify(d))' "$1"; }
  url="$(node -e 'const p=JSON.parse(require("fs").readFileSync(process.argv[1]));console.log(p.nodes.map(n=>n.callFrame.url).find(u=>u.endsWith("/app.js")))' "$W/out/app.cpuprofile")"
  path="$W/out/app.js"
  node "$SM/oracle.mjs" "$W/out/app.cpuprofile" --maps "$W/out" --script "$url=$W/out/app.js" --out "$OUT/p.sm.json" 2> /dev/null
  # Node's trace names the script by its path: its map's URL given as jscalls makes it.
  node "$SM/oracle.mjs" "$W/out/app.trace.json" --maps "$W/out" --script "$path=$W/out/app.js" \
    --map-url "$path=file://$path.map" --out "$OUT/t.sm.json" 2> /dev/null
  for input in p t; do
    f="$W/out/app.cpuprofile"; [ "$input" = t ] && f="$W/out/app.trace.json"
    "$J" frames "$f" --source-maps "$W/out" --format smoracle -q -o "$OUT/$input.j.json"
    first "$OUT/$input.j.json" > "$OUT/$input.j1.json"
    echo "parity $(basename "$f"), final names: $(node "$SM/compare.mjs" "$OUT/$input.sm.json" "$OUT/$input.j.json" --shown --ast | tail -1)"
    echo "parity $(basename "$f"), first pass: $(node "$SM/compare.mjs" "$OUT/$input.sm.json" "$OUT/$input.j1.json" --shown | tail -1)"
  done
fi
