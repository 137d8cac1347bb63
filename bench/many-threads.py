#!/usr/bin/env python3
"""Writes a trace of N threads, each with its own profile (Profile, one ProfileChunk of three
nodes and four samples) and one FunctionCall: the cost of many small threads.
usage: python3 bench/many-threads.py N OUT"""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write("[\n")
    for t in range(n):
        pid, tid, pid_id = 1 + t // 1000, 1 + t % 1000, f"0x{t + 1:x}"
        nodes = [
            {"id": 1, "callFrame": {"functionName": "(root)", "scriptId": 0}},
            {"id": 2, "parent": 1, "callFrame": {"functionName": "a", "scriptId": 1, "url": "a.js"}},
            {"id": 3, "parent": 2, "callFrame": {"functionName": "b", "scriptId": 1, "url": "a.js"}},
        ]
        events = [
            {"name": "Profile", "ph": "P", "pid": pid, "tid": tid, "ts": 0, "id": pid_id, "args": {"data": {"startTime": 0}}},
            {"name": "ProfileChunk", "ph": "P", "pid": pid, "tid": tid, "ts": 0, "id": pid_id,
             "args": {"data": {"cpuProfile": {"nodes": nodes, "samples": [2, 3, 3, 1]}, "timeDeltas": [10, 100, 100, 100]}}},
            {"name": "FunctionCall", "ph": "X", "pid": pid, "tid": tid, "ts": 5, "dur": 300},
        ]
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in events))
        f.write(",\n" if t + 1 < n else "\n]\n")
