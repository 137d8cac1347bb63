#!/usr/bin/env python3
"""Writes a trace of one main thread with N interactions (EventTiming pairs, each its own
interaction id), N user-timing measures (100 names) and N marks (each its own name, with the
navigation data Chrome gives a mark): what `ranges`, the summary and `--interaction` read.
usage: python3 bench/landmarks.py N OUT"""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
pid = tid = 5
root = {"id": 1, "callFrame": {"functionName": "(root)", "scriptId": 0}}
a = {"id": 2, "parent": 1, "callFrame": {"functionName": "a", "scriptId": 1, "url": "a.js"}}
events = [
    {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "ts": 0, "args": {"name": "CrRendererMain"}},
    {"name": "Profile", "ph": "P", "pid": pid, "tid": tid, "ts": 0, "id": "0x1", "args": {"data": {"startTime": 0}}},
    {"name": "ProfileChunk", "ph": "P", "pid": pid, "tid": tid, "ts": 0, "id": "0x1",
     "args": {"data": {"cpuProfile": {"nodes": [root, a], "samples": [2] * n}, "timeDeltas": [100] * n}}},
    {"name": "FunctionCall", "ph": "X", "pid": pid, "tid": tid, "ts": 1, "dur": 100 * n},
]
with open(out, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(e, separators=(",", ":")) for e in events))
    for k in range(n):
        ts, id_ = 10 + 100 * k, f"0x{k + 1:x}"
        data = {"duration": 5.0, "interactionId": k + 1, "processingEnd": 1.0, "processingStart": 0.5,
                "timeStamp": 1.0, "type": "click"}
        mark = {"navigationId": "4F2A8B6C1D3E5F7A9B0C", "startTime": ts / 1000, "detail": None}
        for e in [
            {"name": "EventTiming", "cat": "devtools.timeline", "ph": "b", "id": id_, "ts": ts, "args": {"data": data}},
            {"name": "EventTiming", "cat": "devtools.timeline", "ph": "e", "id": id_, "ts": ts + 50, "args": {}},
            {"name": f"m{k % 100}", "cat": "blink.user_timing", "ph": "b", "id": id_, "ts": ts + 1, "args": {}},
            {"name": f"m{k % 100}", "cat": "blink.user_timing", "ph": "e", "id": id_, "ts": ts + 40, "args": {}},
            {"name": f"mark{k}", "cat": "blink.user_timing", "ph": "R", "ts": ts + 2, "args": {"data": mark}},
        ]:
            e.update(pid=pid, tid=tid)
            f.write(",\n" + json.dumps(e, separators=(",", ":")))
    f.write("\n]\n")
