#!/usr/bin/env bash
# DevTools' own engine (../shared/oracle, both engines) estimates the same calls from each
# fixture's timeline as from the fixture itself: the added events change nothing it computes.
#   bench/timeline-devtools.sh [BIN]      needs ../shared/oracle with `npm ci` done
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/jscalls}
oracle=$(cd ../shared/oracle && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for f in chrome-ui chrome-worker-hires node-trace-mixed; do
  "$bin" timeline "fixtures/$f.json.gz" -o "$tmp/$f.timeline.json" -q
  for engine in npm v6; do
    node "$oracle/oracle.mjs" "fixtures/$f.json.gz" --engine $engine --out "$tmp/in.json"
    node "$oracle/oracle.mjs" "$tmp/$f.timeline.json" --engine $engine --out "$tmp/tl.json"
    # Everything but the input's name.
    if python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); a.pop("input"); b.pop("input"); sys.exit(a!=b)' "$tmp/in.json" "$tmp/tl.json"; then
      echo "$f ($engine): the same calls"
    else
      echo "$f ($engine): OTHER CALLS from the timeline"; fail=1
    fi
  done
done
exit $fail
