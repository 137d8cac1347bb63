#!/usr/bin/env python3
"""Writes a .cpuprofile of N distinct functions, each a child of the root and sampled once:
the most nodes and frames for its size (CDP style, `children` arrays).
usage: python3 bench/flat-cpuprofile.py N OUT"""
import sys

n, out = int(sys.argv[1]), sys.argv[2]
ids = range(2, n + 2)
with open(out, "w") as f:
    f.write('{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"",'
            '"lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[%s]}' % ",".join(map(str, ids)))
    for i in ids:
        f.write(',{"id":%d,"callFrame":{"functionName":"fn%d","scriptId":"%d","url":"https://example.com/s%d.js",'
                '"lineNumber":%d,"columnNumber":%d},"hitCount":1,"children":[]}' % (i, i, i % 100, i % 100, i % 1000, i % 77))
    f.write('],"samples":[%s],"timeDeltas":[%s],"startTime":0,"endTime":%d}'
            % (",".join(map(str, ids)), ",".join("100" for _ in ids), n * 100))
