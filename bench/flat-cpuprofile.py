#!/usr/bin/env python3
"""Writes a .cpuprofile of N distinct functions, each a child of the root and sampled once:
the most nodes and frames for its size (CDP style, `children` arrays), in SCRIPTS scripts
(100 unless given; N: each function a script of its own).
usage: python3 bench/flat-cpuprofile.py N OUT [SCRIPTS]"""
import sys

n, out = int(sys.argv[1]), sys.argv[2]
scripts = int(sys.argv[3]) if len(sys.argv) > 3 else 100
ids = range(2, n + 2)
with open(out, "w") as f:
    f.write('{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"",'
            '"lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[%s]}' % ",".join(map(str, ids)))
    for i in ids:
        f.write(',{"id":%d,"callFrame":{"functionName":"fn%d","scriptId":"%d","url":"https://example.com/s%d.js",'
                '"lineNumber":%d,"columnNumber":%d},"hitCount":1,"children":[]}' % (i, i, i % scripts, i % scripts, i % 1000, i % 77))
    f.write('],"samples":[%s],"timeDeltas":[%s],"startTime":0,"endTime":%d}'
            % (",".join(map(str, ids)), ",".join("100" for _ in ids), n * 100))
