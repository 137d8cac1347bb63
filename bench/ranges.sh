#!/usr/bin/env bash
# The cost of a range, in one run on one file: `tree` (text and DevTools' document) of the whole
# recording against the same with --range (the middle half of the recording) and, when the
# recording has them, --interaction (the slowest); `check` with four rules in two ranges against
# the same rules over the whole recording; and `calls` (with BEFORE=BINARY, against an older
# build: the cost of gathering marks, measures and interactions while reading). Medians of RUNS
# interleaved rounds, wall time and peak memory.
#
# usage: bash bench/ranges.sh FILE [RUNS]       (RUNS default 5)
#        BEFORE=/path/to/old/jscalls bash bench/ranges.sh FILE [RUNS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
FILE="${1:?usage: bench/ranges.sh FILE [RUNS]}"
RUNS="${2:-5}"
cargo build --quiet --release --bin jscalls
J="$ROOT/target/release/jscalls"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
. "$ROOT/bench/lib.sh"

# The middle half of the recording, from its bounds.
read -r LO HI < <("$J" ranges "$FILE" --format json -q | python3 -c '
import json, sys
b = json.load(sys.stdin)["traceBounds"]; span = b["max"] - b["min"]
print((b["min"] + span / 4) / 1000, (b["max"] - span / 4) / 1000)')
RANGE="$LO..$HI"
INTER=$("$J" ranges "$FILE" --format json -q | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["interactions"]))')
cat > "$OUT/whole.toml" <<'TOML'
[[rule]]
function = "(anonymous)"
self = "1000s"
[[rule]]
js = "1000s"
[[rule]]
long-tasks = 1000000
[[rule]]
function = "(anonymous)"
longest-call = "1000s"
TOML
sed "s/^\[\[rule\]\]$/[[rule]]\nwithin = \"range:$RANGE\"/" "$OUT/whole.toml" > "$OUT/ranged.toml"
if [ "$INTER" -gt 0 ]; then
  sed -n '1,6p' "$OUT/ranged.toml" > "$OUT/two.toml"
  sed "s/^\[\[rule\]\]$/[[rule]]\nwithin = \"interaction\"/" "$OUT/whole.toml" | sed -n '7,$p' >> "$OUT/two.toml"
else
  cp "$OUT/ranged.toml" "$OUT/two.toml"
fi
NAMES="calls tree tree-range tree-inter dt dt-range dt-inter check check-ranges"
[ -n "${BEFORE:-}" ] && NAMES="$NAMES calls-before"
for name in $NAMES; do : > "$OUT/$name.s"; : > "$OUT/$name.m"; done
for _ in $(seq "$RUNS"); do
  measure calls "$J" calls "$FILE" -q --format json -o "$OUT/c.json"
  [ -n "${BEFORE:-}" ] && measure calls-before "$BEFORE" calls "$FILE" -q --format json -o "$OUT/c.json"
  measure tree "$J" tree "$FILE" -q --format json -o "$OUT/t.json"
  measure tree-range "$J" tree "$FILE" -q --format json --range "$RANGE" -o "$OUT/t.json"
  [ "$INTER" -gt 0 ] && measure tree-inter "$J" tree "$FILE" -q --format json --interaction slowest -o "$OUT/t.json"
  measure dt "$J" tree "$FILE" -q --format devtools -o "$OUT/d.json"
  measure dt-range "$J" tree "$FILE" -q --format devtools --range "$RANGE" -o "$OUT/d.json"
  [ "$INTER" -gt 0 ] && measure dt-inter "$J" tree "$FILE" -q --format devtools --interaction slowest -o "$OUT/d.json"
  measure check "$J" check "$FILE" -q --budget "$OUT/whole.toml" -o "$OUT/k.txt"
  measure check-ranges "$J" check "$FILE" -q --budget "$OUT/two.toml" -o "$OUT/k.txt"
done
echo "$(basename "$FILE"): medians of $RUNS; range $RANGE ms; $INTER interaction(s)"
declare -A S M
for name in $NAMES; do
  [ -s "$OUT/$name.s" ] || continue
  S[$name]=$(median < "$OUT/$name.s"); M[$name]=$(median < "$OUT/$name.m")
  printf "  %-13s %8.3f s  %6d MB\n" "$name" "${S[$name]}" "$(( ${M[$name]} / 1024 ))"
done
ratio() { awk -v a="${S[$1]}" -v b="${S[$2]}" 'BEGIN{printf "%.2f", a/b}'; }
echo "tree --range / tree: $(ratio tree-range tree); devtools --range / devtools: $(ratio dt-range dt)"
[ -n "${S[tree-inter]:-}" ] && echo "tree --interaction / tree: $(ratio tree-inter tree); devtools --interaction / devtools: $(ratio dt-inter dt)"
echo "check, rules in two ranges / the same rules over the whole recording: $(ratio check-ranges check)"
[ -n "${BEFORE:-}" ] && echo "calls / calls before: $(ratio calls calls-before)"
exit 0
