#!/usr/bin/env python3
"""Input costs linear time whatever its layout: each pathological shape is written at two
sizes, 4x apart (up to 10 MB of the shape), and the command run on both; a cost that grows
more than 8x (a quadratic one grows 16x) fails. The fastest of five runs is compared, with
a floor of 20 ms under which timings are noise.

    bench/linear.py [BINARY]      exit 1 when a shape is superlinear
"""
import gzip
import os
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/jscalls"
# Seconds a run may take: what a linear scan of 10 MB needs, many times over.
LIMIT = 20
EV = '{"name":"a","ph":"I","pid":1,"tid":1,"ts":1}'
SAMPLED = ('{"name":"Profile","ph":"P","pid":1,"tid":1,"ts":0,"id":"0x1","args":{"data":{"startTime":0}}},'
           '{"name":"ProfileChunk","ph":"P","pid":1,"tid":1,"ts":1,"id":"0x1","args":{"data":{"cpuProfile":'
           '{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":"","scriptId":0,"lineNumber":-1,'
           '"columnNumber":-1}},{"id":2,"parent":1,"callFrame":{"functionName":"f","url":"a.js","scriptId":1,'
           '"lineNumber":1,"columnNumber":1}}],"samples":[2,2,1]},"timeDeltas":[1,100,100]}}}')


def shapes(n):
    """(name, bytes) of each shape with about n bytes of its pathological part."""
    for ws_name, ws in [("newlines", "\n"), ("spaces", " "), ("crlf", "\r\n"), ("tabs", "\t"), ("mixed", " \n\t\r")]:
        run = ws * (n // len(ws))
        yield f"{ws_name} after the array", f"[{EV}]{run}"
        yield f"{ws_name} before the array", f"{run}[{EV}]"
        yield f"{ws_name} between events", f"[{EV},{run}{EV}]"
        yield f"{ws_name} inside an event", f'[{{"name":{run}"a","ph":"I","pid":1,"tid":1,"ts":1}}]'
        yield f"{ws_name} around traceEvents", f'{{"traceEvents":{run}[{EV}]{run}}}'
        yield f"{ws_name} in a profile's args", "[" + SAMPLED[:-3] + run + "}}}]"
        yield f"{ws_name} at each event", "[" + ",".join([EV + ws * 64] * (n // (64 * len(ws) + len(EV)))) + "]"
    yield "a long string", f'[{{"name":"{"x" * n}","ph":"I","pid":1,"tid":1,"ts":1}}]'
    yield "a string of escapes", f'[{{"name":"{chr(92) * 2 * (n // 2)}","ph":"I","pid":1,"tid":1,"ts":1}}]'
    yield "a string of \\u escapes", '[{"name":"' + "\\u0041" * (n // 6) + '","ph":"I","pid":1,"tid":1,"ts":1}]'
    yield "a long number", f'[{{"name":"a","ph":"I","pid":1,"tid":1,"ts":1{"0" * n}}}]'
    yield "a long fraction", f'[{{"name":"a","ph":"I","pid":1,"tid":1,"ts":1.{"5" * n}}}]'
    yield "nested args", '[{"name":"a","ph":"I","pid":1,"tid":1,"ts":1,"args":' + "[" * (n // 2) + "]" * (n // 2) + "}]"
    yield "many small events", "[" + ",".join([EV] * (n // (len(EV) + 1))) + "]"
    yield "one-line events, no newline", "[" + ",".join([SAMPLED] * (n // (len(SAMPLED) + 1))) + "]"


def fastest(args, runs=5):
    best = None
    for _ in range(runs):
        # Write-only /dev/null: the command tells a read-write one from a closed stdout.
        with open(os.devnull, "w") as out:
            t = time.perf_counter()
            try:
                r = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, timeout=LIMIT)
            except subprocess.TimeoutExpired:
                return float("inf")
            d = time.perf_counter() - t
        if r.returncode != 0:
            sys.exit(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
        best = d if best is None else min(best, d)
    return best


def main():
    small, large = 10 << 20 >> 2, 10 << 20
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for (name, a), (_, b) in zip(shapes(small), shapes(large)):
            times = []
            for size, text in (("small", a), ("large", b)):
                path = os.path.join(d, f"{size}.json.gz")
                with gzip.open(path, "wb", compresslevel=1) as f:
                    f.write(text.encode())
                times.append(fastest([BIN, "calls", path, "--format", "json"]))
            ratio = max(times[1], 0.02) / max(times[0], 0.02)
            ok = ratio <= 8
            failed += not ok
            print(f"{'ok ' if ok else 'SUPERLINEAR'} {name:40} {times[0] * 1000:8.1f} ms -> {times[1] * 1000:8.1f} ms  x{ratio:.1f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
