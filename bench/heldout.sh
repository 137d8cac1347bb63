#!/usr/bin/env bash
# Parity on data no test has seen: records new inputs (new data on every run), asks DevTools'
# engine (../shared/oracle) and its source-map code (../shared/smoracle) for their answers, and
# compares jscalls' with them field by field, with no tolerance. One line a comparison; the
# exit status is 1 when any differs.
#
# Recorded into OUT_DIR (default target/heldout):
#   page.json.gz, page-hires.json.gz, page.cpuprofile.gz
#              fixtures/record/pages/mix.html in headless Chromium (record/chrome.mjs): a trace,
#              one at 100 µs sampling, and a .cpuprofile (only where Debian's chromium is)
#   node.cpuprofile, node.trace.json
#              fixtures/record/workloads/services.js under node --cpu-prof and node's trace events
#   min/services.js (+ .map), min.cpuprofile, min.trace.json
#              the same workload bundled and minified by esbuild with a map, profiled both ways
#              (where fixtures/record/sourcemaps has its npm packages installed)
# Compared: `calls` (DevTools 0.0.65 and the newest), `tree --format devtools` (both), `lines
# --format devtools`, a .cpuprofile's Performance-panel mode, and for the minified bundle every
# frame's name (both of DevTools' states) and original place through the map.
#
# usage: bash bench/heldout.sh [OUT_DIR]
# needs: node 20 and npm; ../shared/oracle and ../shared/smoracle (installed in target/ here).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
OUT="$(mkdir -p "${1:-$ROOT/target/heldout}" && cd "${1:-$ROOT/target/heldout}" && pwd)"
REC="$ROOT/fixtures/record"
cargo build --quiet --release --bin jscalls --manifest-path "$ROOT/Cargo.toml" || exit 1
J="$ROOT/target/release/jscalls"

. "$ROOT/bench/lib.sh"
# The oracles, copied out of ../shared (their npm installs never touch it).
O="$ROOT/target/oracle"
mkdir -p "$O"
cp "$SHARED"/oracle/{oracle.mjs,tree.mjs,lines.mjs,patch-v6.mjs,compare.mjs,compare-tree.mjs,compare-lines.mjs,package.json,package-lock.json} "$O/"
[ -d "$O/node_modules/@paulirish/trace_engine" ] || (cd "$O" && npm ci --no-audit --no-fund > /dev/null)
[ -f "$O/engine-v6/PATCHED-V6.json" ] || (cd "$O" && node patch-v6.mjs > /dev/null)
SM="$(smoracle "$ROOT" "$SHARED")"

cd "$OUT"
rm -rf ./*
echo "recording into $OUT" >&2
inputs=()
if command -v chromium > /dev/null; then
  [ -d "$REC/node_modules/playwright-core" ] || (cd "$REC" && npm ci --no-audit --no-fund > /dev/null)
  node "$REC/chrome.mjs" mix page.json.gz --clicks 2 2> /dev/null
  node "$REC/chrome.mjs" mix page-hires.json.gz --hires --clicks 3 2> /dev/null
  node "$REC/chrome.mjs" mix page.cpuprofile.gz --cpuprofile --clicks 2 2> /dev/null
  inputs+=(page.json.gz page-hires.json.gz page.cpuprofile.gz)
else
  echo "no chromium: the page is not recorded" >&2
fi
# Records a node script as a .cpuprofile (NAME.cpuprofile) and a trace (NAME.trace.json).
node_both() { # script, name
  node --cpu-prof --cpu-prof-interval 100 --cpu-prof-dir . --cpu-prof-name "$2.cpuprofile" "$1" > /dev/null
  mkdir trace && node --trace-event-file-pattern "trace/\${pid}.json" "$REC/workloads/trace_wrap.js" "$1" > /dev/null
  mv trace/*.json "$2.trace.json" && rmdir trace
}
node_both "$REC/workloads/services.js" node
inputs+=(node.cpuprofile node.trace.json)
ESBUILD="$REC/sourcemaps/node_modules/.bin/esbuild"
if [ -x "$ESBUILD" ]; then
  mkdir min
  "$ESBUILD" "$REC/workloads/services.js" --bundle --platform=node --minify --sourcemap --outfile=min/services.js \
    --log-level=error
  node_both min/services.js min
  inputs+=(min.cpuprofile min.trace.json)
else
  echo "no esbuild (npm ci in fixtures/record/sourcemaps): no minified bundle" >&2
fi

compared=0 differ=0
# Prints one comparison's line; counts it.
check() { # what, its comparison's last line
  compared=$((compared + 1))
  case "$2" in EQUAL*|*'"differ":0,"missing":0,"extra":0,'*) ;; *) differ=$((differ + 1));; esac
  printf "%-40s %s\n" "$1" "$2"
}
for f in "${inputs[@]}"; do
  b="${f%.gz}"; b="${b%.json}"
  node "$O/oracle.mjs" "$f" --quiet-engine --out "$b.o.json"
  node "$O/oracle.mjs" "$f" --quiet-engine --tree --out "$b.o-tree.json"
  node "$O/oracle.mjs" "$f" --quiet-engine --lines --out "$b.o-lines.json"
  "$J" calls "$f" --engine 0.0.65 -q -o "$b.j.json"
  check "$f calls (0.0.65)" "$(node "$O/compare.mjs" "$b.o.json" "$b.j.json" 2>&1 | tail -1)"
  "$J" tree "$f" --engine 0.0.65 --format devtools -q -o "$b.j-tree.json"
  check "$f tree (0.0.65)" "$(node "$O/compare-tree.mjs" "$b.o-tree.json" "$b.j-tree.json" 2>&1 | tail -1)"
  "$J" lines "$f" --engine 0.0.65 --format devtools -q -o "$b.j-lines.json"
  check "$f lines" "$(node "$O/compare-lines.mjs" "$b.o-lines.json" "$b.j-lines.json" 2>&1 | tail -1)"
  case "$f" in
    *.cpuprofile*)
      node "$O/oracle.mjs" "$f" --quiet-engine --mode devtools --out "$b.o-panel.json"
      node "$O/oracle.mjs" "$f" --quiet-engine --mode devtools --tree --out "$b.o-tree-panel.json"
      "$J" calls "$f" --engine 0.0.65 --cpuprofile-mode performance-panel -q -o "$b.j-panel.json"
      check "$f calls (panel)" "$(node "$O/compare.mjs" "$b.o-panel.json" "$b.j-panel.json" 2>&1 | tail -1)"
      "$J" tree "$f" --engine 0.0.65 --cpuprofile-mode performance-panel --format devtools -q -o "$b.j-tree-panel.json"
      check "$f tree (panel)" "$(node "$O/compare-tree.mjs" "$b.o-tree-panel.json" "$b.j-tree-panel.json" 2>&1 | tail -1)"
      ;;
    *)
      node "$O/oracle.mjs" "$f" --quiet-engine --engine v6 --out "$b.o-v6.json"
      node "$O/oracle.mjs" "$f" --quiet-engine --engine v6 --tree --out "$b.o-tree-v6.json"
      "$J" calls "$f" -q -o "$b.j-v6.json"
      check "$f calls (latest)" "$(node "$O/compare.mjs" "$b.o-v6.json" "$b.j-v6.json" 2>&1 | tail -1)"
      "$J" tree "$f" --format devtools -q -o "$b.j-tree-v6.json"
      check "$f tree (latest)" "$(node "$O/compare-tree.mjs" "$b.o-tree-v6.json" "$b.j-tree-v6.json" 2>&1 | tail -1)"
      ;;
  esac
done
if [ -d min ]; then
  # The profile names the bundle by its file: URL, node's trace by its path (jscalls takes the
  # path's file: URL, given to the oracle as the map's URL).
  path="$OUT/min/services.js"
  node "$SM/oracle.mjs" min.cpuprofile --maps min --script "file://$path=$path" --out min.sm.json 2> /dev/null
  node "$SM/oracle.mjs" min.trace.json --maps min --script "$path=$path" --map-url "$path=file://$path.map" \
    --out min.trace.sm.json 2> /dev/null
  for f in min.cpuprofile min.trace.json; do
    s="${f%.json}"; s="${s%.cpuprofile}"; [ "$f" = min.trace.json ] && s=min.trace
    "$J" frames "$f" --source-maps min --format smoracle -q -o "$s.j-frames.json"
    check "$f source maps (final)" "$(node "$SM/compare.mjs" "$s.sm.json" "$s.j-frames.json" --shown --ast 2>&1 | tail -1)"
    first_pass "$s.j-frames.json" > "$s.j-first.json"
    check "$f source maps (first pass)" "$(node "$SM/compare.mjs" "$s.sm.json" "$s.j-first.json" --shown 2>&1 | tail -1)"
  done
fi
echo "$compared comparisons, $differ with differences"
[ "$differ" = 0 ]
