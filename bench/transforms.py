#!/usr/bin/env python3
"""Times `jscalls tree` on the largest thread of FILE with and without a stack of ten
transforms on its heaviest functions (merge-function, collapse-recursion,
collapse-indirect-recursion, in turn), interleaved; prints medians and the ratio.
usage: python3 bench/transforms.py FILE [ROUNDS] [JSCALLS]"""
import json, shlex, statistics, subprocess, sys, time

file = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
exe = sys.argv[3] if len(sys.argv) > 3 else "target/release/jscalls"

flat = json.loads(subprocess.run([exe, "tree", file, "--flat", "--format", "json", "-q"],
                                 check=True, capture_output=True).stdout)
thread = max(flat["threads"], key=lambda t: t["total"])
names = [f["func"]["name"] for f in thread["functions"]]
# Functions named by a name no other function has, heaviest first.
unique = [n for n in names if n and not n.startswith("(") and names.count(n) == 1][:10]
if len(unique) < 10:
    sys.exit(f"the largest thread has only {len(unique)} uniquely named functions")
kinds = ["merge-function", "collapse-recursion", "collapse-indirect-recursion"]
transforms = [a for i, n in enumerate(unique) for a in ("--transform", f"{kinds[i % 3]}:{n}")]
base = [exe, "tree", file, "--thread", f"{thread['pid']}:{thread['tid']}", "-q", "--format", "json", "-o", "/dev/null"]
runs = {"tree": [], "tree + 10 transforms": []}
for _ in range(rounds):
    for name, cmd in (("tree", base), ("tree + 10 transforms", base + transforms)):
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        runs[name].append(time.perf_counter() - t)
print("transforms:", " ".join(shlex.quote(a) for a in transforms))
med = {k: statistics.median(v) for k, v in runs.items()}
for k, v in med.items():
    print(f"{k}: {v:.4f} s (median of {rounds})")
print(f"ratio: {med['tree + 10 transforms'] / med['tree']:.3f}")
