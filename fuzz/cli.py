#!/usr/bin/env python3
"""Mutates the fixtures and runs every command of the built binary on them.

The cargo-fuzz targets check the library; this checks what a user sees: each run must exit 0,
1 (bad input), 3 (a broken rule) or 4 (a check rule that measured nothing), within the time
limit; 2 only for the usage errors the command line can cause from an input (a transform or
thread naming nothing, an ambiguous name). A third of the runs mutate a file an option reads
instead (a --budget, a --symbols table): there a usage error (2) is a right answer too, a
crash or a hang never. Another third give a bundle's profile with its build folder
(`--source-maps`), its map, its script or the script's `sourceMappingURL` mutated: a bad map
is a warning (with `--strict`, exit 1). Inputs that break the rule are kept in OUT_DIR (a
folder's files side by side) with the command that broke it.

usage: python3 fuzz/cli.py [--runs N] [--seed S] [--bin PATH] [--out OUT_DIR]
"""
import argparse
import copy
import glob
import gzip
import json
import os
import random
import re
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
    paths += [os.path.join(ROOT, p) for p in ("fixtures/gecko/hand.json", "fixtures/gecko/processed-v55.json.gz",
                                              "fixtures/gecko/processed-v70.json.gz", "fixtures/truth/synth-lag30.cpuprofile.gz",
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
        ["lines", path, "--list", "--top", "5"],
        ["ranges", path],
        ["export", path, "--to", "pprof"],
        ["tree", path, "--invert", "--weight", "samples", "--by-line"],
        ["export", path, "--to", "svg", "--by-time", "--weight", "sample-time", "--by-line"],
        ["export", path, "--to", "collapsed", "--by-time"],
    ]


# The bundles whose build folder has a script and its map, and their profiles: the fixture folder
# with the script and map, and the one with the profile and its name (a Firefox profile of the
# Chromium page's bundle too).
BUNDLES = {b: (b, b, "app.cpuprofile") for b in ["esbuild", "esbuild-es2017", "esbuild-pasta", "esbuild-scopes",
                                                 "esbuild-scopes-no-ranges", "rollup", "terser", "webpack"]}
BUNDLES["firefox-page"] = ("chromium-page", "firefox-page", "profile.json")
# What a `sourceMappingURL` comment may say, from plain to hostile.
MAP_URLS = ["app.js.map", "../app.js.map", "../../../../etc/passwd", "/etc/passwd", "app.js", ".", "..", "",
            "data:application/json;base64,e30=", "data:application/json;base64,!!!", "data:application/json,{",
            "data:application/json;charset=utf-8,%7B%22version%22%3A3%7D", "http://example.com/app.js.map",
            "file:///etc/passwd", "app.js.map?x=1#y", "%2e%2e/%2e%2e/etc/passwd", "a" * 5000, "sub/../app.js.map"]
VLQ = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/,;"


def mutate_text(rng, text):
    """Character edits of a string: VLQ digits and separators, brackets, quotes, cuts."""
    t = list(text)
    for _ in range(rng.randint(1, 6)):
        p = rng.randrange(len(t) + 1)
        r = rng.random()
        if r < 0.5:
            t[p:p] = rng.choice([rng.choice(VLQ), "gggggggggggggggggA", "/////////////", ";;;;", "!", "=", "\u00e9",
                                 "{", "}", "(", ")", "`", "/", "'", "\\"])
        elif r < 0.8:
            del t[p:p + rng.randint(1, 20)]
        else:
            t[p:p] = t[rng.randrange(len(t) + 1):][:rng.randint(1, 40)]
    return "".join(t)


def mutate_map(rng, doc):
    """Edits of a map: its mappings text, its fields' values and types, sections around it."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.4 and isinstance(doc.get("mappings"), str):
            doc["mappings"] = mutate_text(rng, doc["mappings"])
        elif r < 0.55:
            doc[rng.choice(["version", "sources", "names", "sourceRoot", "sourcesContent", "mappings", "file",
                            "ignoreList", "x_google_ignoreList", "scopes", "x_com_bloomberg_sourcesFunctionMappings"])] = \
                rng.choice(WEIRD + [["a", None, 3], ["x"] * 3, "AAAA;;AACA", [[0, 1], "AA"], 2 ** 40])
        elif r < 0.65 and isinstance(doc.get("scopes"), str):
            doc["scopes"] = mutate_text(rng, doc["scopes"])
        elif r < 0.75:
            # An index map of one or two sections at odd offsets.
            section = {"offset": {"line": rng.choice([0, 0, 1, -1, 10 ** 9, 1.5]), "column": rng.choice([0, 5, -3])},
                       "map": doc}
            doc = {"version": 3, "sections": [section] + ([copy.deepcopy(section)] if rng.random() < 0.5 else [])}
        else:
            return json.loads(mutate_json(rng, doc))
    return doc


def bundle_run(rng, work, docs):
    """A bundle's build folder with its map, its script or the script's map URL mutated, and a
    command run on its profile with `--source-maps`."""
    bundle = rng.choice(sorted(BUNDLES))
    script_from, profile_from, profile_name = BUNDLES[bundle]
    folder = os.path.join(work, "folder")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for src, name in ((profile_from, profile_name), (script_from, "app.js"), (script_from, "app.js.map")):
        data = gzip.decompress(open(os.path.join(ROOT, "fixtures/sourcemaps", src, name + ".gz"), "rb").read())
        open(os.path.join(folder, name), "wb").write(data)
    if bundle not in docs:
        docs[bundle] = json.load(open(os.path.join(folder, "app.js.map")))
    r = rng.random()
    if r < 0.5:
        data = json.dumps(mutate_map(rng, docs[bundle])).encode()
        if rng.random() < 0.3:
            data = mutate_bytes(rng, data)
        open(os.path.join(folder, "app.js.map"), "wb").write(data)
    elif r < 0.8:
        text = open(os.path.join(folder, "app.js"), encoding="utf-8").read()
        open(os.path.join(folder, "app.js"), "w", encoding="utf-8").write(mutate_text(rng, text))
    else:
        text = open(os.path.join(folder, "app.js"), encoding="utf-8").read()
        text = re.sub(r"sourceMappingURL=\S*", lambda _: "sourceMappingURL=" + rng.choice(MAP_URLS), text)
        open(os.path.join(folder, "app.js"), "w", encoding="utf-8").write(text)
    profile = os.path.join(folder, profile_name)
    cmd = rng.choice([
        ["calls", profile, "--format", "json"],
        ["tree", profile, "--format", "json"],
        ["frames", profile, "--format", "json"],
        ["export", profile, "--to", "firefox"],
        ["export", profile, "--to", "collapsed"],
        ["lines", profile, "--list", "--top", "5"],
    ]) + ["--source-maps", folder] + (["--strict"] if rng.random() < 0.2 else [])
    return folder, cmd


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
    maps = {}
    for run in range(args.runs):
        original = rng.choice(sorted(docs))
        path = os.path.join(work, "input")
        pick = rng.random()
        side = pick < 1 / 3
        if pick > 2 / 3:
            path, cmd = bundle_run(rng, work, maps)
        elif side:
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
        shown = " ".join(kept if a == path else a.replace(path + "/", kept + "/") if os.path.isdir(kept) else
                         a.replace(path, kept) for a in cmd)
        print(f"exit {code}: jscalls {shown}  ({last})", flush=True)
    if out != work or not broken:
        shutil.rmtree(work)
    print(f"{args.runs} runs, {broken} broken (seed {args.seed})")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
