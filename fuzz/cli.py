#!/usr/bin/env python3
"""Mutates the fixtures and runs every command of the built binary on them.

The cargo-fuzz targets check the library; this checks what a user sees: each run must exit 0,
1 (bad input), 3 (a broken rule) or 4 (a check rule that measured nothing), within the time
limit; 2 only for the usage errors the command line can cause from an input (a transform or
thread naming nothing, an ambiguous name). A third of the runs mutate a file an option reads
instead (a --budget, a --symbols table): there a usage error (2) is a right answer too, a
crash or a hang never. Inputs that break the rule are kept in OUT_DIR with the command that
broke it.

usage: python3 fuzz/cli.py [--runs N] [--seed S] [--bin PATH] [--out OUT_DIR]
"""
import argparse
import copy
import glob
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEIRD = [0, -1, 1, -100000, 10**15, -(10**15), 2**53, 1.5, -0.5, 1e300, 7, 100, "", "B", "E", "X", "P", "0x1", None, [], {}]
# An exit of 2 that the input itself can cause through a command's options.
INPUT_USAGE = ("--thread", "transform", "no function", "functions are named")
BUDGET = '[[rule]]\nfunction = "work"\nself = "0.1ms"\n\n[[rule]]\nthread = "CrRendererMain"\njs = "300ms"\n'


def inputs():
    """The fixtures small enough to mutate quickly, parsed."""
    paths = [p for p in glob.glob(os.path.join(ROOT, "fixtures/rules/*")) if ".oracle" not in p and not p.endswith(".py")]
    paths += [os.path.join(ROOT, p) for p in ("fixtures/gecko/hand.json", "fixtures/truth/synth-lag30.cpuprofile.gz",
                                              "fixtures/node-mixed.cpuprofile.gz", "fixtures/node-trace-mixed.json.gz")]
    out = {}
    for p in paths:
        raw = open(p, "rb").read()
        out[p] = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return out


def leaves(o, path, out):
    if isinstance(o, (bool, int, float, str)) or o is None:
        out.append(path)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            leaves(v, path + [i], out)
    elif isinstance(o, dict):
        for k, v in o.items():
            leaves(v, path + [k], out)


def mutate_json(rng, doc):
    """A few edits of values, array elements and keys."""
    doc = copy.deepcopy(doc)
    paths = []
    leaves(doc, [], paths)
    for _ in range(rng.randint(1, 6)):
        p = rng.choice(paths)
        parent = doc
        try:
            for k in p[:-1]:
                parent = parent[k]
            key, r = p[-1], rng.random()
            if r < 0.6:
                v = parent[key]
                numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
                parent[key] = v + rng.randint(-300, 300) if numeric and rng.random() < 0.5 else rng.choice(WEIRD)
            elif isinstance(parent, list):
                if r < 0.8 and len(parent) > 1:
                    del parent[key]
                else:
                    parent.insert(key, copy.deepcopy(parent[key]))
            elif isinstance(parent, dict):
                del parent[key]
        except (IndexError, KeyError, TypeError):
            pass  # an earlier edit removed the path
    return json.dumps(doc).encode()


def mutate_bytes(rng, data):
    """Byte edits, cuts and splices; sometimes gzipped, sometimes cut inside the gzip stream."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if len(b) < 2:
            break
        p, r = rng.randrange(len(b)), rng.random()
        if r < 0.4:
            b[p] = rng.choice(b'0123456789-.,:[]{}"eE \x00\xff')
        elif r < 0.6:
            del b[p:p + rng.randint(1, 50)]
        elif r < 0.8:
            b[p:p] = b[rng.randrange(len(b)):][:rng.randint(1, 80)]
        else:
            del b[p:]
    if rng.random() < 0.2:
        z = gzip.compress(bytes(b))
        b = z if rng.random() < 0.5 else z[:rng.randrange(10, max(11, len(z)))]
    return bytes(b)


def commands(path, original, budget):
    return [
        ["calls", path, "--format", "json", "--bounds", "--estimator", "midway"],
        ["calls", path, "--format", "summary", "--bounds", "--estimator", "log-midway", "--engine", "0.0.65"],
        ["calls", path, "--format", "json", "--cpuprofile-mode", "performance-panel"],
        ["timeline", path, "--estimator", "midway", "--bounds"],
        ["tree", path, "--format", "json", "--invert", "--js-only"],
        ["tree", path, "--format", "devtools"],
        ["tree", path, "--flat", "--transform", "collapse-recursion:work"],
        ["export", path, "--to", "speedscope"],
        ["export", path, "--to", "firefox", "--js-only"],
        ["export", path, "--to", "collapsed"],
        ["export", path, "--to", "svg"],
        ["diff", original, path],
        ["diff", path, path, "--base-opt", "--engine 0.0.65"],
        ["check", path, "--budget", budget, "--format", "junit"],
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/jscalls"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    docs = inputs()
    work = tempfile.mkdtemp(prefix="jscalls-cli-fuzz-")
    out = args.out or work
    os.makedirs(out, exist_ok=True)
    budget = os.path.join(work, "budget.toml")
    open(budget, "w").write(BUDGET)
    broken = 0
    nm = open(os.path.join(ROOT, "fixtures/gecko/app.nm"), "rb").read()
    for run in range(args.runs):
        original = rng.choice(sorted(docs))
        path = os.path.join(work, "input")
        side = rng.random() < 1 / 3
        if side:
            # A file an option reads, mutated; the recording stays whole.
            if rng.random() < 0.5:
                open(path, "wb").write(mutate_bytes(rng, BUDGET.encode()))
                cmd = ["check", os.path.join(ROOT, "fixtures/chrome-ui.json.gz"), "--budget", path]
            else:
                open(path, "wb").write(mutate_bytes(rng, nm))
                cmd = ["tree", os.path.join(ROOT, "fixtures/gecko/hand.json"), "--symbols", f"app={path}"]
        else:
            data = mutate_json(rng, docs[original])
            if rng.random() < 0.4:
                data = mutate_bytes(rng, data)
            open(path, "wb").write(data)
            cmd = rng.choice(commands(path, original, budget))
        try:
            r = subprocess.run([args.bin] + cmd + ["-o", "-"], capture_output=True, timeout=20)
            code, err = r.returncode, r.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            code, err = "timeout", ""
        last = err.strip().splitlines()[-1] if err.strip() else ""
        if code in (0, 1, 3, 4) or (code == 2 and (side or any(s in last for s in INPUT_USAGE))):
            continue
        broken += 1
        kept = os.path.join(out, f"broken-{args.seed}-{run}")
        shutil.move(path, kept)  # OUT_DIR may be on another file system
        shown = " ".join(kept if a == path else a.replace(path, kept) for a in cmd)
        print(f"exit {code}: jscalls {shown}  ({last})", flush=True)
    if out != work or not broken:
        shutil.rmtree(work)
    print(f"{args.runs} runs, {broken} broken (seed {args.seed})")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
