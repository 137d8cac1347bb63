#!/usr/bin/env python3
"""Writes a trace of N threads, each running K functions of its own (a profile of K nodes,
3K samples, one FunctionCall around them). `jscalls export --to firefox` of it is a processed
profile whose threads share one stack table: the shape of a long browser session's profile.
usage: python3 bench/own-threads.py N K OUT"""
import json
import random
import sys

n, k, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(1)
with open(out, "w") as f:
    f.write("[\n")
    for t in range(n):
        pid, tid, profile = 1 + t // 100, 1 + t % 100, f"0x{t + 1:x}"
        nodes = [{"id": 1, "callFrame": {"functionName": "(root)", "scriptId": 0}}]
        for i in range(2, k + 2):
            frame = {"functionName": f"f{t}_{i}", "scriptId": t + 1, "url": f"t{t}.js", "lineNumber": i, "columnNumber": 1}
            nodes.append({"id": i, "parent": max(1, i - 1 - rng.randrange(3)), "callFrame": frame})
        samples = [rng.randrange(2, k + 2) for _ in range(3 * k)]
        chunk = {"cpuProfile": {"nodes": nodes, "samples": samples}, "timeDeltas": [100] * len(samples)}
        events = [
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "ts": 0, "args": {"name": f"T{t}"}},
            {"name": "Profile", "ph": "P", "pid": pid, "tid": tid, "ts": 0, "id": profile, "args": {"data": {"startTime": 0}}},
            {"name": "ProfileChunk", "ph": "P", "pid": pid, "tid": tid, "ts": 0, "id": profile, "args": {"data": chunk}},
            {"name": "FunctionCall", "ph": "X", "pid": pid, "tid": tid, "ts": 5, "dur": 300 * k},
        ]
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in events))
        f.write(",\n" if t + 1 < n else "\n]\n")
