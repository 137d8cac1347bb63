#!/usr/bin/env bash
# Seeds the fuzz corpora from the project's fixtures (small ones whole, larger ones cut to their
# first events, which also seeds truncated inputs). usage: bash fuzz/seed.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
T="$HERE/corpus/trace"; P="$HERE/corpus/cpuprofile"; G="$HERE/corpus/gecko"
# events makes its inputs from the bytes: it starts from an empty corpus.
mkdir -p "$T" "$P" "$G" "$HERE/corpus/events"
cp "$ROOT"/fixtures/gecko/hand.json "$G/"
{ zcat "$ROOT"/fixtures/gecko/node-mixed.gecko.json.gz || true; } > "$G/node-mixed.json"
for v in 55 70; do { zcat "$ROOT/fixtures/gecko/processed-v$v.json.gz" || true; } > "$G/processed-v$v.json"; done
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
# diff: two inputs joined by a 0xFF byte (a recording and itself, two rules, a calls document).
D="$HERE/corpus/diff"; S="$HERE/corpus/symbols"
mkdir -p "$D" "$S"
rules=()
for f in "$ROOT"/fixtures/rules/*.json; do case "$f" in *.oracle*) ;; *) rules+=("$f") ;; esac; done
for k in 0 1 2 3; do
  a=${rules[$k]}; b=${rules[$((k + 1))]}
  { cat "$a"; printf '\xff'; cat "$a"; } > "$D/same-$k"
  { cat "$a"; printf '\xff'; cat "$b"; } > "$D/two-$k"
done
{ cat "$ROOT"/fixtures/rules/be-pairing.oracle.json; printf '\xff'; cat "$ROOT"/fixtures/rules/be-pairing.json; } > "$D/calls-doc"
# symbols: nm tables.
printf '0000000000001000 T main\n0000000000001040 T doSomething\n00000000000010a0 t someInterlude\n                 U printf\n' > "$S/nm"
printf '0000000000001000 T main\n0000000000001000 W alias\nzz T bad\n' > "$S/bad-line"
# sourcemap: a map, a 0xFF byte, its script: the bundles' own, and a small one written here
# (declarations, expressions, arrows and methods, each start mapped and named).
M="$HERE/corpus/sourcemap"
mkdir -p "$M"
for b in esbuild terser webpack esbuild-scopes; do
  { zcat "$ROOT/fixtures/sourcemaps/$b/app.js.map.gz"; printf '\xff'; zcat "$ROOT/fixtures/sourcemaps/$b/app.js.gz"; } > "$M/$b"
done
python3 - "$M" <<'PY'
import json, sys
script = "function a(b){return b+1}\nvar c=function(){return a(2)},d=(e)=>e*2;\nclass F{g(){return 1}static h(i){try{return i()}catch(j){}}}\nlet k={l(m){return m},n:function(){}};\n"
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
def vlq(v):
    v = (-v << 1) | 1 if v < 0 else v << 1
    out = ""
    while True:
        d, v = v & 31, v >> 5
        out += B64[d | (32 if v else 0)]
        if not v:
            return out
names, lines, prev = [], [], [0, 0, 0, 0]
for ln, text in enumerate(script.split("\n")):
    segs, col0 = [], 0
    for col, ch in enumerate(text):
        if ch in "(=" or text.startswith("function", col):
            name = len(names); names.append(f"orig{name}")
            seg = [col - col0, 0, ln * 3 - prev[1], col * 2 - prev[2], name - prev[3]]
            prev = [0, ln * 3, col * 2, name]; col0 = col
            segs.append("".join(vlq(x) for x in seg))
    lines.append(",".join(segs))
m = {"version": 3, "sources": ["src/app.ts"], "sourcesContent": ["// original"], "names": names, "mappings": ";".join(lines)}
open(sys.argv[1] + "/small", "wb").write(json.dumps(m).encode() + b"\xff" + script.encode())
PY
ls "$T" "$P" "$G" "$D" "$S" "$M" | wc -l
