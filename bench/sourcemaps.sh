#!/usr/bin/env bash
# Times `jscalls calls` with source maps against `--no-source-maps` on TypeScript's compiler
# bundled and minified by esbuild (a 3.5 MB script with a 14 MB map) while it type-checks
# typescript.d.ts twice: a node trace (trace events with the CPU profile) and a `.cpuprofile` of
# the same run; and on two such bundles in one program ("two": one type-checks, the other
# transpiles), whose maps are read side by side; where Debian's chromium is, also a page that
# runs the same compiler bundled for the browser, recorded as the Performance panel records
# ("page": a trace of about 16 MB, a few seconds of a user's recording). Rounds are interleaved;
# prints medians, ratios and peak memory. With
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
# Records DIR/NAME.js as a node trace (DIR/NAME.trace.json) and a .cpuprofile (DIR/NAME.cpuprofile).
record() {
  (
    cd "$1" && mkdir trace
    node --trace-event-file-pattern "trace/\${pid}.json" "$ROOT/fixtures/record/workloads/trace_wrap.js" "$2.js" > /dev/null
    mv trace/*.json "$2.trace.json" && rmdir trace
    node --cpu-prof --cpu-prof-interval 100 --cpu-prof-name "$2.cpuprofile" "$2.js" > /dev/null
  )
}
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
  record out app
  cd "$ROOT"
fi
if [ ! -f "$W/out2/two.trace.json" ]; then
  cd "$W"
  mkdir -p out2
  cat > a.js <<'A'
const ts = require('typescript');
const files = [require.resolve('typescript/lib/typescript.d.ts')];
ts.getPreEmitDiagnostics(ts.createProgram(files, { noEmit: true, lib: ['lib.es2020.d.ts'], strict: true }));
A
  cat > b.js <<'A'
const ts = require('typescript');
const src = require('fs').readFileSync(require.resolve('typescript/lib/typescript.d.ts'), 'utf8');
for (let i = 0; i < 3; i++) ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS } });
A
  for b in a b; do
    npx esbuild $b.js --bundle --platform=node --minify --sourcemap --outfile=out2/$b.js --log-level=error
  done
  cp node_modules/typescript/lib/lib*.d.ts out2/
  printf "require('./a.js');\nrequire('./b.js');\n" > out2/two.js
  record out2 two
  cd "$ROOT"
fi
# A page: the same compiler bundled for the browser, transpiling for four seconds, recorded in
# headless Chromium as the Performance panel records (only where Debian's chromium is).
CHROMIUM="$(command -v chromium || true)"
if [ ! -f "$W/page/trace.json" ] && [ -n "$CHROMIUM" ]; then
  cd "$W"
  mkdir -p page/site
  cat > page.js <<'A'
const ts = require('typescript');
let src = '';
for (let i = 0; i < 400; i++) {
  src += `export class C${i}<T extends {id: number}> { private items: T[] = []; add(x: T): number { this.items.push(x); return this.items.length; }\n` +
    `  find(id: number): T | undefined { return this.items.find(v => v.id === id); } }\n` +
    `export function f${i}(a: number, b: string = "x"): string { return [a, b].map(v => String(v)).join(","); }\n`;
}
const t0 = performance.now();
let n = 0;
while (performance.now() - t0 < 4000) {
  n += ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext } }).outputText.length;
  document.title = String(n);
}
A
  npx esbuild page.js --bundle --platform=browser --minify --sourcemap --outfile=page/site/ts.js --log-level=error
  printf '<!doctype html>\n<html><head><meta charset="utf-8"><title>ts</title></head><body>\n<script src="ts.js"></script>\n<script>window.__done = true;</script>\n</body></html>\n' > page/site/index.html
  (cd "$ROOT/fixtures/record" && { [ -d node_modules ] || npm ci --no-audit --no-fund --silent; } &&
    node chrome.mjs index "$W/page/trace.json" --pages "$W/page/site" --hires)
  cd "$ROOT"
fi
cargo build --quiet --release --bin jscalls
J="$ROOT/target/release/jscalls"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

. "$ROOT/bench/lib.sh"

# input name, its file and its maps' folder
INPUTS="trace out/app.trace.json out
profile out/app.cpuprofile out
two_trace out2/two.trace.json out2
two_profile out2/two.cpuprofile out2"
[ -f "$W/page/trace.json" ] && INPUTS="$INPUTS
page page/trace.json page/site"
KEYS=""
while read -r input _ _; do
  KEYS="$KEYS ${input}_maps ${input}_none"
  [ -n "${BEFORE:-}" ] && KEYS="$KEYS ${input}_before"
done <<< "$INPUTS"
for k in $KEYS; do : > "$OUT/$k.s"; : > "$OUT/$k.m"; done
for _ in $(seq "$RUNS"); do
  while read -r input f dir; do
    # Each run writes a new file (see compare.sh).
    rm -f "$OUT"/*.json
    measure "${input}_maps" "$J" calls "$W/$f" --source-maps "$W/$dir" -q -o "$OUT/maps.json"
    measure "${input}_none" "$J" calls "$W/$f" --no-source-maps -q -o "$OUT/none.json"
    if [ -n "${BEFORE:-}" ]; then
      measure "${input}_before" "$BEFORE" calls "$W/$f" --source-maps "$W/$dir" -q -o "$OUT/before.json"
    fi
  done <<< "$INPUTS"
done
"$J" calls "$W/out/app.trace.json" --source-maps "$W/out" -o "$OUT/out.json" 2>&1 | grep 'source maps' || true
"$J" calls "$W/out2/two.trace.json" --source-maps "$W/out2" -o "$OUT/out.json" 2>&1 | grep 'source maps' || true
[ -f "$W/page/trace.json" ] && { "$J" calls "$W/page/trace.json" --source-maps "$W/page/site" -o "$OUT/out.json" 2>&1 | grep 'source maps' || true; echo "page: trace $(wc -c < "$W/page/trace.json") bytes"; }
echo "script $(wc -c < "$W/out/app.js") bytes, map $(wc -c < "$W/out/app.js.map") bytes;" \
  "trace $(wc -c < "$W/out/app.trace.json") bytes, profile $(wc -c < "$W/out/app.cpuprofile") bytes;" \
  "two: trace $(wc -c < "$W/out2/two.trace.json") bytes, profile $(wc -c < "$W/out2/two.cpuprofile") bytes; $RUNS runs, medians"
for k in $KEYS; do
  printf "%-18s %8s s %6s MB   runs: %s\n" "$k" "$(median < "$OUT/$k.s")" "$(( $(sort -n "$OUT/$k.m" | tail -1) / 1024 ))" \
    "$(tr '\n' ' ' < "$OUT/$k.s")"
done
while read -r input _ _; do
  echo "$input: with maps / --no-source-maps: $(awk -v a="$(median < "$OUT/${input}_maps.s")" \
    -v b="$(median < "$OUT/${input}_none.s")" 'BEGIN{printf "%.2f", a/b}')"
done <<< "$INPUTS"

SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
if [ -d "$SHARED/smoracle" ] && command -v node > /dev/null; then
  SM="$(smoracle "$ROOT" "$SHARED")"
  # Per folder: its recording's name and its scripts.
  while read -r dir rec scripts; do
    pargs=() targs=()
    for sc in $scripts; do
      url="$(node -e 'const p=JSON.parse(require("fs").readFileSync(process.argv[1]));
        console.log(p.nodes.map(n=>n.callFrame.url).find(u=>u.endsWith("/"+process.argv[2])))' "$W/$dir/$rec.cpuprofile" "$sc")"
      path="$W/$dir/$sc"
      pargs+=(--script "$url=$path")
      # Node's trace names the script by its path: its map's URL given as jscalls makes it.
      targs+=(--script "$path=$path" --map-url "$path=file://$path.map")
    done
    node "$SM/oracle.mjs" "$W/$dir/$rec.cpuprofile" --maps "$W/$dir" "${pargs[@]}" --out "$OUT/p.sm.json" 2> /dev/null
    node "$SM/oracle.mjs" "$W/$dir/$rec.trace.json" --maps "$W/$dir" "${targs[@]}" --out "$OUT/t.sm.json" 2> /dev/null
    for input in p t; do
      f="$W/$dir/$rec.cpuprofile"; [ "$input" = t ] && f="$W/$dir/$rec.trace.json"
      "$J" frames "$f" --source-maps "$W/$dir" --format smoracle -q -o "$OUT/$input.j.json"
      first_pass "$OUT/$input.j.json" > "$OUT/$input.j1.json"
      echo "parity $(basename "$f"), final names: $(node "$SM/compare.mjs" "$OUT/$input.sm.json" "$OUT/$input.j.json" --shown --ast | tail -1)"
      echo "parity $(basename "$f"), first pass: $(node "$SM/compare.mjs" "$OUT/$input.sm.json" "$OUT/$input.j1.json" --shown | tail -1)"
    done
  done <<< "out app app.js
out2 two a.js b.js"
  if [ -f "$W/page/trace.json" ]; then
    url="$(node -e 'const t=JSON.parse(require("fs").readFileSync(process.argv[1])); const e=t.traceEvents||t;
      for (const ev of e) for (const n of ev.args?.data?.cpuProfile?.nodes||[])
        if ((n.callFrame.url || "").endsWith("/ts.js")) { console.log(n.callFrame.url); process.exit(0); }' "$W/page/trace.json")"
    node "$SM/oracle.mjs" "$W/page/trace.json" --maps "$W/page/site" --script "$url=$W/page/site/ts.js" \
      --out "$OUT/g.sm.json" 2> /dev/null
    "$J" frames "$W/page/trace.json" --source-maps "$W/page/site" --format smoracle -q -o "$OUT/g.j.json"
    first_pass "$OUT/g.j.json" > "$OUT/g.j1.json"
    echo "parity page trace.json, final names: $(node "$SM/compare.mjs" "$OUT/g.sm.json" "$OUT/g.j.json" --shown --ast | tail -1)"
    echo "parity page trace.json, first pass: $(node "$SM/compare.mjs" "$OUT/g.sm.json" "$OUT/g.j1.json" --shown | tail -1)"
  fi
fi
