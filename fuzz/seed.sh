#!/usr/bin/env bash
# Seeds the fuzz corpora from the project's fixtures (small ones whole, larger ones cut to their
# first events, which also seeds truncated inputs). usage: bash fuzz/seed.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
T="$HERE/corpus/trace"; P="$HERE/corpus/cpuprofile"; G="$HERE/corpus/gecko"
mkdir -p "$T" "$P" "$G"
cp "$ROOT"/fixtures/gecko/hand.json "$G/"
{ zcat "$ROOT"/fixtures/gecko/node-mixed.gecko.json.gz || true; } > "$G/node-mixed.json"
python3 - "$ROOT/fixtures/gecko/hand.json" "$G/threads" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write(json.dumps(d["threads"], separators=(",", ":"))[1:-1])
PY
for f in "$ROOT"/fixtures/rules/*.json; do case "$f" in *.oracle*) continue ;; esac; cp "$f" "$T/$(basename "$f")"; done
for f in "$ROOT"/fixtures/*.json.gz; do
  case "$f" in *.oracle*) continue ;; esac
  { zcat "$f" || true; } | head -c 60000 > "$T/$(basename "$f" .json.gz)-head.json"
  head -c 4000 "$f" > "$T/$(basename "$f")-head.gz"
done
cp "$ROOT"/fixtures/rules/*.cpuprofile "$P/"
for f in "$ROOT"/fixtures/*.cpuprofile.gz; do
  { zcat "$f" || true; } | head -c 40000 > "$P/$(basename "$f" .gz)-head"
done
python3 - "$ROOT/fixtures/rules/parent-style.cpuprofile" "$P/inner-values" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
body = json.dumps({k: d[k] for k in ("nodes", "samples", "timeDeltas")}, separators=(",", ":"))[1:-1]
open(sys.argv[2], "w").write(body)
PY
ls "$T" "$P" "$G" | wc -l
