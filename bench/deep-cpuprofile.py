#!/usr/bin/env python3
"""Writes a profile whose stack is N frames deep: f1 > f2 > f0 > f1 > ... (three functions
in turn).

    python3 bench/deep-cpuprofile.py N OUT            sampled at the bottom twice, half way
                                                      down once and at the root once
    python3 bench/deep-cpuprofile.py N OUT --grow     one sample per level, from the top down
                                                      to the bottom and back up: every sample
                                                      changes the stack by one frame
    python3 bench/deep-cpuprofile.py N OUT --grow --trace
                                                      the same as a trace (Profile and
                                                      ProfileChunk events, 1,000 samples a
                                                      chunk, and one task over them all)
    python3 bench/deep-cpuprofile.py N OUT --firefox-native
                                                      a Firefox profile: one script frame
                                                      with N native frames above it, N
                                                      samples on the top one (their lines
                                                      are the script frame's)
"""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
grow, trace = "--grow" in sys.argv[3:], "--trace" in sys.argv[3:]
if "--firefox-native" in sys.argv[3:]:
    # Gecko's raw format: stack 0 is the script frame, stack k (1..N) a native frame on k - 1.
    thread = {
        "name": "GeckoMain", "processType": "default", "pid": 1, "tid": 1, "registerTime": 0, "unregisterTime": None,
        "samples": {"schema": {"stack": 0, "time": 1}, "data": [[n, float(k + 1)] for k in range(n)]},
        "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5},
                    "data": []},
        "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[None, 0]] + [[k, 1] for k in range(n)]},
        "frameTable": {"schema": {"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3,
                                  "line": 4, "column": 5, "category": 6, "subcategory": 7},
                       "data": [[0, False, 0, None, 12, 7, 0, 0], [1, False, 0, None, None, None, 0, 0]]},
        "stringTable": ["render (http://a.test/app.js:10:3)", "0x1234"],
    }
    meta = {"version": 27, "startTime": 0, "interval": 1, "processType": 0, "product": "Firefox",
            "categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]}]}
    with open(out, "w") as f:
        json.dump({"meta": meta, "libs": [], "threads": [thread]}, f)
    sys.exit(0)
nodes = [{"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}}]
for i in range(2, n + 2):
    nodes.append({"id": i, "parent": i - 1, "callFrame": {"functionName": "f%d" % (i % 3), "scriptId": "1",
                                                           "url": "r.js", "lineNumber": i % 3, "columnNumber": 0}})
if grow:
    samples = list(range(2, n + 2)) + list(range(n + 1, 1, -1))
else:
    samples = [n + 1, n + 1, n // 2, 1]
deltas = [100] * len(samples)

if not trace:
    with open(out, "w") as f:
        json.dump({"nodes": nodes, "startTime": 0, "endTime": 100 * (len(samples) + 1), "samples": samples,
                   "timeDeltas": deltas}, f)
    sys.exit(0)

# A trace: the nodes in the first chunk (as Chrome sends them, in parts), the samples after.
meta = {"pid": 1, "tid": 1}
events = [
    {"name": "thread_name", "ph": "M", "args": {"name": "main"}, **meta, "ts": 0},
    {"name": "Profile", "ph": "P", "id": "0x1", "args": {"data": {"startTime": 0}}, **meta, "ts": 0},
]
CHUNK = 1000
t = 0
for k in range(0, max(len(samples), len(nodes)), CHUNK):
    part = {"timeDeltas": deltas[k:k + CHUNK], "cpuProfile": {"samples": samples[k:k + CHUNK]}}
    if k < len(nodes):
        part["cpuProfile"]["nodes"] = [
            {"id": x["id"], "parent": x.get("parent"), "callFrame": {**x["callFrame"], "codeType": "JS"}}
            if "parent" in x else {"id": x["id"], "callFrame": x["callFrame"]} for x in nodes[k:k + CHUNK]]
    events.append({"name": "ProfileChunk", "ph": "P", "id": "0x1", "args": {"data": part}, **meta, "ts": t})
    t += 100 * len(part["timeDeltas"])
# One task over every sample: a task's start ends every call, so one a chunk would make the
# calls quadratic in the depth (DevTools' answer, not a cost of the estimate).
events.append({"name": "RunTask", "ph": "X", "cat": "disabled-by-default-devtools.timeline", **meta,
               "ts": 50, "dur": t})
with open(out, "w") as f:
    json.dump({"traceEvents": events}, f)
