#!/usr/bin/env python3
"""Writes a Firefox processed profile whose first thread is copied N times (each copy its own
tid), all reading the profile's shared tables: many threads that each reach every stack.
usage: python3 bench/copied-threads.py N IN OUT
IN is a processed profile, e.g. `jscalls export fixtures/node-mixed.cpuprofile.gz --to firefox
-o IN` (version 60 or later, whose threads share one stack table)."""
import copy
import json
import sys

n, src, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(src) as f:
    profile = json.load(f)
first = profile["threads"][0]
threads = []
for k in range(n):
    t = copy.copy(first)
    t["tid"] = 1000 + k
    t["name"] = f"copy {k}"
    threads.append(t)
profile["threads"] = threads
with open(out, "w") as f:
    json.dump(profile, f, separators=(",", ":"))
