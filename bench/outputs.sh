#!/usr/bin/env bash
# The md5 of every command's output on every fixture: run before and after a change that
# must not change outputs, and compare the two lists (`diff a.txt b.txt`).
#   bench/outputs.sh [BINARY] > a.txt
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/jscalls}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inputs=(fixtures/*.json.gz fixtures/*.cpuprofile.gz fixtures/rules/*.json fixtures/rules/*.cpuprofile
  fixtures/gecko/*.json.gz fixtures/gecko/hand.json)
run() {
  local label=$1; shift
  "$bin" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  printf '%s rc=%s out=%s err=%s\n' "$label" "$rc" "$(sed "s#$tmp#TMP#g" "$tmp/out" | md5sum | cut -c1-12)" \
    "$(sed "s#$tmp#TMP#g" "$tmp/err" | md5sum | cut -c1-12)"
}
for f in "${inputs[@]}"; do
  case $f in *oracle*) continue ;; esac
  run "$f calls" calls "$f" --format json
  run "$f calls-summary" calls "$f" --format summary
  run "$f calls-bounds-midway" calls "$f" --format json --bounds --estimator midway
  run "$f calls-0.0.65" calls "$f" --format json --engine 0.0.65
  run "$f timeline" timeline "$f"
  run "$f tree" tree "$f"
  run "$f tree-json" tree "$f" --format json
  run "$f tree-flat-js" tree "$f" --flat --js-only
  run "$f tree-invert" tree "$f" --invert --min-percent 0
  run "$f tree-devtools" tree "$f" --format devtools
  run "$f speedscope" export "$f" --to speedscope
  run "$f firefox" export "$f" --to firefox
  run "$f collapsed" export "$f" --to collapsed
  run "$f svg" export "$f" --to svg
  run "$f collapsed-by-time" export "$f" --to collapsed --by-time
  run "$f svg-by-time-icicle" export "$f" --to svg --by-time --icicle
  run "$f speedscope-samples" export "$f" --to speedscope --weight samples
  run "$f pprof" export "$f" --to pprof
  run "$f lines" lines "$f" --format json
  run "$f pprof-sample-time" export "$f" --to pprof --weight sample-time
done
run "diff runs" diff fixtures/chrome-worker-run1.json.gz fixtures/chrome-worker-run2.json.gz
run "diff runs json" diff fixtures/chrome-worker-run1.json.gz fixtures/chrome-worker-run2.json.gz --format json
run "diff runs pprof" diff fixtures/chrome-worker-run1.json.gz fixtures/chrome-worker-run2.json.gz --format pprof
run "diff runs md" diff fixtures/chrome-worker-run1.json.gz fixtures/chrome-worker-run2.json.gz --format markdown
run "diff engines" diff fixtures/chrome-ui.json.gz --base-opt '--engine 0.0.65' --new-opt '--engine latest'
cat > "$tmp/budget.toml" <<'TOML'
[[rule]]
function = "relayout"
self = "20ms"
[[rule]]
function = "frame"
longest-call = "5ms"
[[rule]]
thread = "CrRendererMain"
js = 300
[[rule]]
long-tasks = 2
TOML
for fmt in text json markdown junit; do
  run "check $fmt" check fixtures/chrome-ui.json.gz --budget "$tmp/budget.toml" --format $fmt
done
