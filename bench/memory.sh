#!/usr/bin/env bash
# Every command's time and peak memory on one file, one run each (`/usr/bin/time`), each
# writing to a file: the table of docs/performance.md on a generated 5.4 GB trace.
#
# usage: bash bench/memory.sh FILE [BINARY]
#        (make the 5.4 GB trace with: cargo run --release --example gentrace -- --size 5G --seed 1 -o FILE)
#        DIFF_WITH=SECOND also compares FILE with a second recording (--seed 2), function by function.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE="${1:?usage: bench/memory.sh FILE [BINARY]}"
J="${2:-$ROOT/target/release/jscalls}"
[ $# -ge 2 ] || (cd "$ROOT" && cargo build --quiet --release --bin jscalls)
OUT="$(mktemp -d)"
BUDGET="$(mktemp)"
trap 'rm -rf "$OUT" "$BUDGET"' EXIT
# Three rules on every thread, loose enough to hold (exit 0).
printf '[[rule]]\njs = "100000s"\n\n[[rule]]\nlong-tasks = 1000000\n\n[[rule]]\nfunction = "main"\nself = "4ms"\nallow-missing = true\n' > "$BUDGET"
. "$ROOT/bench/lib.sh"
run() {
  local label=$1 out=$2
  shift 2
  rm -f "$OUT"/*
  /usr/bin/time -f "%e %M" -o "$OUT/time" "$J" "$@" "$FILE" -o "$OUT/$out" -q > /dev/null || echo "$label: failed" >&2
  read -r secs kb < "$OUT/time"
  printf '| %s | %s s | %s MB |\n' "$label" "$secs" "$((kb / 1024))"
}
# `view` until a client (curl, as the viewer) has the profile and it has exited.
run_view() {
  rm -f "$OUT"/*
  view_once "$OUT/served" /usr/bin/time -f "%e %M" -o "$OUT/time" "$J" view "$FILE" --no-open --timeout 600
  read -r secs kb < "$OUT/time"
  printf '| %s | %s s | %s MB |\n' '`view` (the Firefox profile, served)' "$secs" "$((kb / 1024))"
}
echo "| command | time | peak memory |"
echo "|---|---:|---:|"
run '`calls`' x.json calls
run '`calls --bounds`' x.json calls --bounds
run '`calls --estimator midway`' x.json calls --estimator midway
run '`calls --estimator log-midway`' x.json calls --estimator log-midway
run '`timeline`' x.json timeline
run '`tree --format json`' x.json tree --format json
run '`tree --format devtools`' x.json tree --format devtools
run '`export --to speedscope`' x.speedscope.json export --to speedscope
run '`export --to firefox` (`.json.gz`)' x.json.gz export --to firefox
run '`export --to collapsed`' x.collapsed export --to collapsed
run '`export --to svg`' x.svg export --to svg
run '`export --to pprof`' x.pb.gz export --to pprof
run '`lines --format json`' x.json lines --format json
run '`tree --invert` (text)' x.txt tree --invert
run '`tree --weight samples`' x.txt tree --weight samples
run '`export --to collapsed --weight samples`' x.collapsed export --to collapsed --weight samples
run '`export --to pprof --weight samples`' x.pb.gz export --to pprof --weight samples
run '`export --to collapsed --by-time`' x.collapsed export --to collapsed --by-time
run '`export --to svg --by-time`' x.svg export --to svg --by-time
run '`export --to firefox --weight sample-time`' x.json.gz export --to firefox --weight sample-time
run '`export --to firefox --by-line --weight samples`' x.json.gz export --to firefox --by-line --weight samples
run '`export --to speedscope --weight sample-time`' x.speedscope.json export --to speedscope --weight sample-time
run '`tree --weight sample-time --by-line`' x.txt tree --weight sample-time --by-line
run '`export --to collapsed --by-line --weight sample-time`' x.collapsed export --to collapsed --by-line --weight sample-time
run '`calls --format summary`' x.txt calls --format summary
run '`ranges`' x.txt ranges
run '`frames`' x.json frames
run '`check` (three rules)' x.txt check --budget "$BUDGET"
command -v curl > /dev/null && run_view
# diff takes the file twice: BASE here, NEW appended by run (read once, estimated twice).
run '`diff` of the file with itself (one read, two estimates)' x.json diff "$FILE"
# Two estimators of one recording: read once, every call changed.
run "\`diff --new-opt=--estimator=midway\` (one read, two estimators)" x.txt diff "$FILE" --new-opt=--estimator=midway
run "\`diff --new-opt=--estimator=midway --format json\`" x.json diff "$FILE" --new-opt=--estimator=midway --format json
# Two engines read the file twice, as two recordings are.
run "\`diff --base-opt '--engine 0.0.65'\` (two reads, as two recordings take)" x.json diff --base-opt '--engine 0.0.65'
if [ -n "${DIFF_WITH:-}" ]; then
  # Two recordings, function by function: FILE is NEW here (run appends it).
  for f in text json svg pprof; do
    run "\`diff SECOND FILE --format $f\` (two recordings)" x.$f diff "$DIFF_WITH" --format "$f"
  done
fi
