#!/usr/bin/env python3
"""Writes a .cpuprofile whose stack is N frames deep: f1 > f2 > f0 > f1 > ... (three functions
in turn), sampled at the bottom twice, half way down once and at the root once.
usage: python3 bench/deep-cpuprofile.py N OUT"""
import json, sys

n, out = int(sys.argv[1]), sys.argv[2]
nodes = [{"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}}]
for i in range(2, n + 2):
    nodes.append({"id": i, "parent": i - 1, "callFrame": {"functionName": "f%d" % (i % 3), "scriptId": "1",
                                                           "url": "r.js", "lineNumber": i % 3, "columnNumber": 0}})
with open(out, "w") as f:
    json.dump({"nodes": nodes, "startTime": 0, "endTime": 1000, "samples": [n + 1, n + 1, n // 2, 1],
               "timeDeltas": [100, 100, 100, 100]}, f)
