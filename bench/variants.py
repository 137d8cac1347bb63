#!/usr/bin/env python3
"""Every command and its main options against `calls` on one input: medians of ROUNDS
interleaved rounds (each command once a round, in the order below), output to a new file
each time, as a Markdown table of seconds and the ratio to `calls`.

    python3 bench/variants.py FILE [BINARY] [ROUNDS]     (default target/release/jscalls, 5)

The budget of `check` is written beside the outputs (three rules on every thread). A command
that fails is reported and left out of the table.
"""
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = """
calls
calls --format summary
calls --bounds
calls --estimator midway
timeline
tree
tree --invert
tree --flat
tree --format json
tree --format json --invert
tree --format devtools
tree --js-only
tree --weight samples
tree --weight sample-time --by-line
lines
lines --format devtools
ranges
frames
check --budget BUDGET
export --to speedscope
export --to firefox
export --to collapsed
export --to svg
export --to svg --icicle
export --to pprof
export --to collapsed --by-time
export --to svg --by-time
export --to speedscope --weight samples
export --to firefox --weight sample-time
export --to firefox --by-line --weight sample-time
export --to pprof --weight sample-time
""".strip().splitlines()

BUDGET = """[[rule]]
js = "300ms"

[[rule]]
long-tasks = 2

[[rule]]
function = "main"
self = "4ms"
allow-missing = true
"""


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "target/release/jscalls")
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with tempfile.TemporaryDirectory() as out:
        budget = os.path.join(out, "budget.toml")
        with open(budget, "w") as f:
            f.write(BUDGET)
        times = {c: [] for c in COMMANDS}
        failed = set()
        for _ in range(rounds):
            for c in COMMANDS:
                args = [budget if a == "BUDGET" else a for a in shlex.split(c)]
                gz = "firefox" in c or "pprof" in c
                target = os.path.join(out, "out" + (".gz" if gz else ""))
                if os.path.exists(target):
                    os.remove(target)
                start = time.perf_counter()
                run = subprocess.run([binary, *args, path, "-o", target, "-q"], stderr=subprocess.PIPE)
                times[c].append(time.perf_counter() - start)
                # `check` exits 3 when a rule is broken: it still did its work.
                if run.returncode not in (0, 3):
                    failed.add(c)
                    print(f"{c}: failed: {run.stderr.decode(errors='replace').strip()}", file=sys.stderr)
    base = statistics.median(times["calls"])
    print(f"{os.path.basename(path)}, medians of {rounds} interleaved rounds\n")
    print("| command | time | vs `calls` |")
    print("|---|---:|---:|")
    for c in COMMANDS:
        if c not in failed:
            m = statistics.median(times[c])
            shown = c.replace("BUDGET", "budget.toml")
            print(f"| `{shown}` | {m:.3f} s | {m / base:.2f}× |")


if __name__ == "__main__":
    main()
