#!/usr/bin/env bash
# Accuracy against ground truth (docs/accuracy.md): jscalls' bounds and midway estimate scored
# by ../shared/truth next to DevTools' engine, on the six synthetic variants (seeds 1-24) and on
# real Chromium recordings, then the tables of docs/accuracy.md.
#
# usage: bash bench/accuracy.sh [OUT_DIR] [RECORDING.json.gz ...]
#   OUT_DIR     where results go (default target/accuracy)
#   RECORDING   real recordings made with ../shared/truth/record_real.mjs; without any, three are
#               recorded (seed 1, 8 s; seed 4, 20 s; seed 3, 6 s without .hires), as the truth
#               README's reference tables were
# Needs node 20, ../shared/oracle and ../shared/recording installed (npm ci), and Chromium for
# recording. Takes about 10 minutes on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${JSCALLS_SHARED:-$ROOT/../shared}"
OUT="$(mkdir -p "${1:-$ROOT/target/accuracy}" && cd "${1:-$ROOT/target/accuracy}" && pwd)"
shift || true
cargo build --release --manifest-path "$ROOT/Cargo.toml" >&2
J="$OUT/jscalls"
cp "$ROOT/target/release/jscalls" "$J"
[ -f "$SHARED/oracle/engine-v6/PATCHED-V6.json" ] || (cd "$SHARED/oracle" && node patch-v6.mjs >/dev/null)

EST=(--est "jscalls-bounds=$J calls {in} --bounds -o {out}"
     --est "jscalls-midway=$J calls {in} --estimator midway --bounds -o {out}"
     --est "jscalls-log-midway=$J calls {in} --estimator log-midway -o {out}")
EST_CPU=(--est-cpu "jscalls-bounds=$J calls {in} --bounds -o {out}"
         --est-cpu "jscalls-midway=$J calls {in} --estimator midway --bounds -o {out}"
         --est-cpu "jscalls-log-midway=$J calls {in} --estimator log-midway -o {out}")

cd "$SHARED/truth"
for v in default lag30 busy vm no-trace-ids raf-no-v8; do
  echo "synthetic: $v" >&2
  node suite.mjs --variant "$v" --seeds 1-24 --jobs 2 --results "$OUT/synthetic" \
    --dir "$OUT/work" "${EST[@]}" "${EST_CPU[@]}" \
    --est "jscalls-midway-0.0.65=$J calls {in} --engine 0.0.65 --estimator midway -o {out}" > "$OUT/$v.log" 2>&1
done

recs=("$@")
if [ ${#recs[@]} -eq 0 ]; then
  mkdir -p "$OUT/recordings"
  node record_real.mjs --out "$OUT/recordings/real-marks.json.gz" --seed 1 --ms 8000 --no-console >&2
  node record_real.mjs --out "$OUT/recordings/real-marks2.json.gz" --seed 4 --ms 20000 --no-console >&2
  node record_real.mjs --out "$OUT/recordings/real-lores.json.gz" --seed 3 --ms 6000 --no-hires --no-console >&2
  recs=("$OUT/recordings/real-marks.json.gz" "$OUT/recordings/real-marks2.json.gz" "$OUT/recordings/real-lores.json.gz")
fi
echo "real: ${recs[*]}" >&2
node real_suite.mjs "${recs[@]}" --pool marks --dir "$OUT/real-work" --results "$OUT/real" --jobs 2 \
  "${EST[@]}" "${EST_CPU[@]}" > "$OUT/real.log" 2>&1

python3 "$ROOT/bench/accuracy_tables.py" "$OUT/synthetic" "$OUT/real/real-marks.json" > "$OUT/tables.md"
echo "$OUT/tables.md" >&2
