#!/usr/bin/env bash
# Instructions that `jscalls calls` executes on one file, on one thread, counted by valgrind's
# cachegrind: the same count on every run, however busy the machine is, so a change of a
# percent shows (wall times here move by 10-40% from minute to minute). User-space work only:
# the kernel's share (mapping the input, page faults, writing) and the memory system are not
# in it, so confirm a gain with `bench/compare.sh` or interleaved timings before trusting it.
#
# usage: bash bench/instructions.sh FILE [BINARY...]
#        (default binary: target/release/jscalls, built first; give two to compare them)
# needs: valgrind. Output is written to /dev/null. About 15 s per 100 MB per binary.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE="${1:?usage: bench/instructions.sh FILE [BINARY...]}"
shift
command -v valgrind > /dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
if [ $# -eq 0 ]; then
  (cd "$ROOT" && cargo build --quiet --release --bin jscalls)
  set -- "$ROOT/target/release/jscalls"
fi
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
for bin in "$@"; do
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$bin" calls "$FILE" --engine 0.0.65 --threads 1 -q -o /dev/null 2> "$OUT" || { cat "$OUT" >&2; exit 1; }
  refs=$(sed -n 's/.*I *refs: *//p' "$OUT" | tr -d ,)
  printf "%16s instructions  %s\n" "$(echo "$refs" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" "$bin"
done
