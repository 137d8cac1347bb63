#!/usr/bin/env bash
# Writes the DevTools engine's answers next to every fixture, for `cargo test` to compare with
# (NAME.oracle*.json, gzipped when over 64 KB):
#   NAME.oracle.json.gz           @paulirish/trace_engine 0.0.65 (trace mode; integrator mode for
#                                 a .cpuprofile)
#   NAME.oracle-devtools.json.gz  .cpuprofile only: the Performance panel's own algorithm
#   NAME.oracle-v6.json.gz        traces only: the engine patched to the newest DevTools (V6),
#                                 for `--engine latest`
#   NAME.oracle-tree*.json.gz     the same three, with --tree: DevTools' Call tree and Bottom-up
#                                 (`jscalls tree --format devtools`)
#   NAME.oracle-lines.json.gz     with --lines: the Sources panel's time per line
#                                 (`jscalls lines --format devtools`); also for fixtures/lines/
#                                 and the bundles' traces of fixtures/sourcemaps/
# It runs ../shared/oracle (oracle.mjs, patch-v6.mjs) from a scratch copy in target/oracle, so the
# oracle's npm install never touches ../shared. Needs node 20 and npm.
# With --shared, it writes instead the newest DevTools' answers for the public inputs of
# ../shared/conformance (which has the 0.0.65 answers) into conformance/latest/, plain JSON when
# under 64 KB (a diff shows a change), gzipped otherwise.
# With --sourcemaps, it writes the source-map oracle's answers (../shared/smoracle, DevTools' own
# source-map code) for each bundle of fixtures/sourcemaps/: app.smoracle.json(.gz), both name states
# (before and after DevTools' AST scopes fallback), the bundle's folder given as --maps and its
# script as --script; app.trace.smoracle.json for a node trace of the bundle; and for the
# Chromium page, trace.smoracle.json (the folder as --maps) and trace-saved.smoracle.json (the
# trace's own maps only), and the same for the positions its samples recorded
# (TRACE.positions.smoracle.json: fixtures/record/sourcemaps/positions.mjs makes them frames).
# For the Firefox profile of firefox-page/, profile.smoracle.json: DevTools' rules at Firefox's
# positions (fixtures/record/sourcemaps/gecko-frames.mjs makes its JS frames a .cpuprofile).
# usage: bash conformance/regenerate.sh [FIXTURE...]
#        bash conformance/regenerate.sh --shared
#        bash conformance/regenerate.sh --sourcemaps
#        bash conformance/regenerate.sh --ranges   (fixtures/ranges/: conformance/ranges.tsv's windows,
#                                                   range-queries.tsv's measures, interactions, marks)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
RUN="$ROOT/target/oracle"
if [ "${1:-}" = --sourcemaps ]; then
  SM="$ROOT/target/smoracle"
  mkdir -p "$SM"
  cp -r "$SHARED"/smoracle/{*.mjs,package.json,package-lock.json,src} "$SM/"
  [ -d "$SM/node_modules/chrome-devtools-frontend" ] || (cd "$SM" && npm ci --no-audit --no-fund >/dev/null)
  for d in "$ROOT"/fixtures/sourcemaps/*/; do
    tmp="$(mktemp -d)"
    for f in "$d"*.gz; do gzip -dc "$f" > "$tmp/$(basename "${f%.gz}")"; done
    echo "smoracle: $(basename "$d")" >&2
    rm -f "$d"*.smoracle.json*
    if [ -f "$tmp/app.cpuprofile" ]; then
      # The script's URL as the profile recorded it.
      url="$(node -e 'const p=JSON.parse(require("fs").readFileSync(process.argv[1]));console.log(p.nodes.map(n=>n.callFrame.url).find(u=>u.endsWith("/app.js")))' "$tmp/app.cpuprofile")"
      node "$SM/oracle.mjs" "$tmp/app.cpuprofile" --maps "$tmp" --script "$url=$tmp/app.js" --out "$d/app.smoracle.json"
    fi
    if [ -f "$tmp/app.trace.json" ]; then
      # Node's trace names the script by its path, against which DevTools completes no map
      # URL; jscalls takes the path's file: URL, given here as the map's URL.
      path="$(node -e 'const t=JSON.parse(require("fs").readFileSync(process.argv[1]));for(const e of t.traceEvents)for(const n of e.args?.data?.cpuProfile?.nodes??[])if((n.callFrame.url??"").endsWith("/app.js")){console.log(n.callFrame.url);process.exit()}' "$tmp/app.trace.json")"
      node "$SM/oracle.mjs" "$tmp/app.trace.json" --maps "$tmp" --script "$path=$tmp/app.js" \
        --map-url "$path=file://$path.map" --out "$d/app.trace.smoracle.json"
    fi
    if [ -f "$tmp/trace.json" ]; then
      # The page's trace carries the scripts' text; the external map is in the folder.
      node "$SM/oracle.mjs" "$tmp/trace.json" --maps "$tmp" --out "$d/trace.smoracle.json"
      # Saved with its maps: nothing else given.
      node "$SM/oracle.mjs" "$tmp/trace-saved.json" --out "$d/trace-saved.smoracle.json"
      # Where the Sources panel puts each sampled line: the samples' positions as frames.
      for t in trace trace-saved; do
        node "$ROOT/fixtures/record/sourcemaps/positions.mjs" "$tmp/$t.json" "$tmp/$t.positions.json"
      done
      node "$SM/oracle.mjs" "$tmp/trace.positions.json" --maps "$tmp" --out "$d/trace.positions.smoracle.json"
      node "$SM/oracle.mjs" "$tmp/trace-saved.positions.json" --out "$d/trace-saved.positions.smoracle.json"
    fi
    if [ -f "$tmp/profile.json" ]; then
      # A Firefox profile of a page running the Chromium page's bundle: its JS frames as a
      # .cpuprofile (Firefox has no script ids: one a URL, written back as "0"), answered with
      # the bundle and its map.
      for f in app.js app.js.map; do gzip -dc "$ROOT/fixtures/sourcemaps/chromium-page/$f.gz" > "$tmp/$f"; done
      node "$ROOT/fixtures/record/sourcemaps/gecko-frames.mjs" "$tmp/profile.json" "$tmp/profile.cpuprofile"
      node "$SM/oracle.mjs" "$tmp/profile.cpuprofile" --maps "$tmp" --script "http://127.0.0.1:8711/app.js=$tmp/app.js" \
        --out "$d/profile.smoracle.json"
      node "$ROOT/fixtures/record/sourcemaps/gecko-frames.mjs" --script-ids-to-zero "$d/profile.smoracle.json"
    fi
    for f in "$d"*.smoracle.json; do
      if [ "$(stat -c %s "$f")" -gt 65536 ]; then gzip -9n "$f"; fi
    done
    rm -rf "$tmp"
  done
  exit 0
fi

mkdir -p "$RUN"
cp "$SHARED"/oracle/{oracle.mjs,tree.mjs,lines.mjs,patch-v6.mjs,compare.mjs,compare-tree.mjs,compare-lines.mjs,package.json,package-lock.json} "$RUN/"
[ -d "$RUN/node_modules/@paulirish/trace_engine" ] || (cd "$RUN" && npm ci --no-audit --no-fund >/dev/null)
[ -f "$RUN/engine-v6/PATCHED-V6.json" ] || (cd "$RUN" && node patch-v6.mjs >/dev/null)

if [ "${1:-}" = --ranges ]; then
  # DevTools' trees of each selected range of conformance/ranges.tsv, both engines:
  # fixtures/ranges/NAME.rangeK.oracle-tree(-v6).json(.gz), K counted per input from 1.
  rm -f "$ROOT"/fixtures/ranges/*.oracle-tree*.json*
  declare -A seen
  grep -v '^#' "$ROOT/conformance/ranges.tsv" | while IFS=$'\t' read -r input start end what; do
    base="${input%.json.gz}"
    seen[$base]=$(( ${seen[$base]:-0} + 1 ))
    out="$ROOT/fixtures/ranges/$base.range${seen[$base]}"
    echo "range: $input $start..$end ($what)" >&2
    node "$RUN/oracle.mjs" "$ROOT/fixtures/$input" --tree-range "$start,$end" --quiet-engine --out "$out.oracle-tree.json"
    node "$RUN/oracle.mjs" "$ROOT/fixtures/$input" --tree-range "$start,$end" --quiet-engine --engine v6 \
      --out "$out.oracle-tree-v6.json"
    for f in "$out".oracle-tree*.json; do
      if [ "$(stat -c %s "$f")" -gt 65536 ]; then gzip -9n "$f"; fi
    done
  done
  # Ranges picked by name (conformance/range-queries.tsv): NAME.queryK.oracle-tree(-v6).json(.gz).
  declare -A qseen
  grep -v '^#' "$ROOT/conformance/range-queries.tsv" | while IFS=$'\t' read -r input query oracle what; do
    base="${input%.json.gz}"
    qseen[$base]=$(( ${qseen[$base]:-0} + 1 ))
    out="$ROOT/fixtures/ranges/$base.query${qseen[$base]}"
    read -r opt arg <<< "$oracle"
    case "$opt" in
      --marks|--node-time) set -- --tree-range "$(node "$ROOT/conformance/range-window.mjs" "$ROOT/fixtures/$input" "$opt" "$arg")" ;;
      *) set -- "$opt" "$arg" ;;
    esac
    echo "query: $input $query ($what): $*" >&2
    node "$RUN/oracle.mjs" "$ROOT/fixtures/$input" "$@" --quiet-engine --out "$out.oracle-tree.json"
    node "$RUN/oracle.mjs" "$ROOT/fixtures/$input" "$@" --quiet-engine --engine v6 --out "$out.oracle-tree-v6.json"
    for f in "$out".oracle-tree*.json; do
      if [ "$(stat -c %s "$f")" -gt 65536 ]; then gzip -9n "$f"; fi
    done
  done
  exit 0
fi

if [ "${1:-}" = --shared ]; then
  mkdir -p "$ROOT/conformance/latest"
  rm -f "$ROOT"/conformance/latest/*.oracle-v6.json* "$ROOT"/conformance/latest/*.oracle-tree-v6.json*
  for f in "$SHARED"/conformance/*; do
    case "$f" in *.oracle*|*README*|*.cpuprofile*) continue ;; esac
    base="$(basename "$f")"; base="${base%.gz}"; base="${base%.json}"
    out="$ROOT/conformance/latest/$base.oracle-v6.json"
    echo "oracle v6: $(basename "$f")" >&2
    node "$RUN/oracle.mjs" "$f" --quiet-engine --engine v6 --handlers minimal --out "$out"
    tree="$ROOT/conformance/latest/$base.oracle-tree-v6.json"
    node "$RUN/oracle.mjs" "$f" --tree --quiet-engine --engine v6 --handlers minimal --out "$tree"
    for g in "$out" "$tree"; do
      if [ "$(stat -c %s "$g")" -gt 65536 ]; then gzip -9n "$g"; fi
    done
  done
  exit 0
fi

if [ $# -gt 0 ]; then files=("$@"); else
  shopt -s nullglob
  files=("$ROOT"/fixtures/*.json.gz "$ROOT"/fixtures/*.cpuprofile.gz "$ROOT"/fixtures/rules/*.json "$ROOT"/fixtures/rules/*.cpuprofile
         "$ROOT"/fixtures/lines/*.json "$ROOT"/fixtures/lines/*.cpuprofile
         "$ROOT"/fixtures/sourcemaps/chromium-page/trace.json.gz "$ROOT"/fixtures/sourcemaps/terser/app.trace.json.gz)
fi
for f in "${files[@]}"; do
  case "$f" in *.oracle*) continue ;; esac
  base="${f%.gz}"; base="${base%.json}"
  echo "oracle: $(basename "$f")" >&2
  rm -f "$base".oracle*.json "$base".oracle*.json.gz
  node "$RUN/oracle.mjs" "$f" --lines --quiet-engine --out "$base.oracle-lines.json"
  # The line-time inputs (and the bundles' traces, whose frames the source-map oracle answers
  # for) take line times only.
  if [[ "$f" == */fixtures/lines/* || "$f" == */fixtures/sourcemaps/* ]]; then continue; fi
  for tree in "" "--tree"; do
    t="${tree:+-tree}"
    node "$RUN/oracle.mjs" "$f" $tree --quiet-engine --out "$base.oracle$t.json"
    if [[ "$f" == *.cpuprofile* ]]; then
      node "$RUN/oracle.mjs" "$f" $tree --quiet-engine --mode devtools --out "$base.oracle$t-devtools.json"
    else
      node "$RUN/oracle.mjs" "$f" $tree --quiet-engine --engine v6 --out "$base.oracle$t-v6.json"
    fi
  done
  # Plain when small, so that a diff shows a change; gzipped when large.
  for g in "$base".oracle*.json; do
    if [ "$(stat -c %s "$g")" -gt 65536 ]; then gzip -9nf "$g"; fi
  done
done
