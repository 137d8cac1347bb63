#!/usr/bin/env bash
# How close midway could come in ../shared/truth's `lag30` variant if the file told each tick's
# capture lag (docs/accuracy.md, "Against the goals"): the same 24 traces (seeds 1-24) are made
# twice by synth.mjs, once as sampled (a tick stamped before its stack is captured, exp(30 µs)
# later) and once with every tick stamped at its capture. The random draws are the same, so
# the true calls are the same; only the stamps differ. Prints median |Δdur| and |Δstart| of
# true calls of 0.2 ms or more, DevTools (engine 0.0.65) and `jscalls calls --estimator midway`.
#
# usage: bash bench/lag-limit.sh [OUT_DIR]      (default target/lag-limit; about 2 minutes)
# Needs node 20 and ../shared/oracle installed (npm ci).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="$(cd "${JSCALLS_SHARED:-$ROOT/../shared}" && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/target/lag-limit}" && cd "${1:-$ROOT/target/lag-limit}" && pwd)"
cargo build --release --manifest-path "$ROOT/Cargo.toml" >&2
J="$OUT/jscalls"
cp "$ROOT/target/release/jscalls" "$J"

# A copy of the truth tools beside a link to the oracle (suite.mjs finds it at ../oracle).
rm -rf "$OUT/stamped" "$OUT/oracle"
cp -r "$SHARED/truth" "$OUT/stamped"
ln -s "$SHARED/oracle" "$OUT/oracle"
SYNTH="$OUT/stamped/synth.mjs"
grep -q 'samples.push({ts: t, kind, call})' "$SYNTH" || { echo "lag-limit.sh: synth.mjs's sampling line has changed" >&2; exit 1; }
sed -i 's/samples.push({ts: t, kind, call})/samples.push({ts: cap, kind, call})/' "$SYNTH"

EST=(--est "jscalls-midway=$J calls {in} --estimator midway -o {out}")
for side in sampled stamped; do
  dir="$SHARED/truth"
  [ "$side" = stamped ] && dir="$OUT/stamped"
  echo "lag30, $side" >&2
  (cd "$dir" && node suite.mjs --variant lag30 --seeds 1-24 --jobs 2 --results "$OUT/$side" --dir "$OUT/work-$side" \
    "${EST[@]}" > "$OUT/$side.log" 2>&1) || { tail -20 "$OUT/$side.log" >&2; exit 1; }
done

python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
m = {side: json.load(open(f"{out}/{side}/lag30.json"))["trace"]["methods"] for side in ("sampled", "stamped")}
base = m["sampled"]["devtools-trace"]["ge200"]
print("| ticks stamped | estimator | median abs Δdur µs (vs DevTools as sampled) | median abs Δstart µs (vs DevTools as sampled) |")
print("|---|---|---:|---:|")
for side, label in (("sampled", "before capture (as sampled)"), ("stamped", "at capture")):
    for name in ("devtools-trace", "jscalls-midway"):
        g = m[side][name]["ge200"]
        d = 100 * (g["absDurMed"] / base["absDurMed"] - 1)
        s = 100 * (g["absStartMed"] / base["absStartMed"] - 1)
        print(f"| {label} | {name} | {g['absDurMed']:g} ({d:+.0f} %) | {g['absStartMed']:g} ({s:+.0f} %) |")
EOF
