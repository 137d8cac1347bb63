#!/usr/bin/env python3
"""The tables of docs/accuracy.md from the JSON that ../shared/truth's suite.mjs and
real_suite.mjs write (see bench/accuracy.sh).

usage: accuracy_tables.py SYNTHETIC_DIR REAL_POOLED.json
"""
import json
import sys

VARIANTS = ["default", "lag30", "busy", "vm", "no-trace-ids", "raf-no-v8"]
BUCKETS = ["0.2–1 ms", "1–5 ms", "5–20 ms", ">20 ms"]


def pct(x, base):
    return f"{100 * (x / base - 1):+.0f} %"


def estimate_rows(label, methods, base_name, names):
    """One row per method: median |Δdur| and |Δstart| for true calls ≥ 0.2 ms, the change from
    the base, and p90 |Δdur| per bucket of 0.2 ms and more."""
    base = methods[base_name]
    b = base["ge200"]
    rows = []
    for name in names:
        if name not in methods:
            continue
        g = methods[name]["ge200"]
        p90 = [x["absDurP90"] for x in methods[name]["buckets"][1:]]
        bp90 = [x["absDurP90"] for x in base["buckets"][1:]]
        worse = [BUCKETS[i] for i, (v, w) in enumerate(zip(p90, bp90)) if v > w]
        rows.append(
            f"| {label} | {name} | {g['absDurMed']:.0f} ({pct(g['absDurMed'], b['absDurMed'])}) "
            f"| {g['absStartMed']:.0f} ({pct(g['absStartMed'], b['absStartMed'])}) "
            f"| {' / '.join(f'{v:.0f}' for v in p90)} | {', '.join(worse) or 'none'} |"
        )
    return rows


def short_rows(label, methods, base_name, names):
    """One row per method: median |Δdur| for true calls under 0.2 ms and for all true calls,
    with the change from the base, and median |Δstart| under 0.2 ms."""
    base = methods[base_name]
    bs, ba = base["buckets"][0], base["all"]
    rows = []
    for name in names:
        if name not in methods:
            continue
        s, a = methods[name]["buckets"][0], methods[name]["all"]
        rows.append(
            f"| {label} | {name} | {s['absDurMed']:.0f} ({pct(s['absDurMed'], bs['absDurMed'])}) "
            f"| {a['absDurMed']:.0f} ({pct(a['absDurMed'], ba['absDurMed'])}) "
            f"| {s['absStartMed']:.0f} ({pct(s['absStartMed'], bs['absStartMed'])}) |"
        )
    return rows


def bounds_row(label, name, m):
    e = m.get("estBounds")
    if not e:
        return None
    g, a = e["ge200"], e["all"]
    return (
        f"| {label} | {name} | {g['matched']:,} | {100 * g['coveredMatched']:.2f} % "
        f"| {100 * g['coveredOverlapped']:.2f} % | {100 * a['coveredMatched']:.2f} % "
        f"| {g['startWidthMed']:.0f} / {g['endWidthMed']:.0f} |"
    )


def main():
    syn, real = sys.argv[1], sys.argv[2]
    est_head = [
        "| input | estimator | median abs Δdur µs (vs DevTools) | median abs Δstart µs (vs DevTools) "
        "| p90 abs Δdur µs by bucket (0.2–1 / 1–5 / 5–20 / >20 ms) | buckets worse than DevTools at p90 |",
        "|---|---|---:|---:|---:|---|",
    ]
    bounds_head = [
        "| input | estimator | matched true calls ≥0.2 ms | covered among matched | covered among matched + absorbed "
        "| covered, all durations | median width µs (start / end) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    short_head = [
        "| input | estimator | median abs Δdur µs, calls under 0.2 ms (vs DevTools) "
        "| median abs Δdur µs, all calls (vs DevTools) | median abs Δstart µs, calls under 0.2 ms (vs DevTools) |",
        "|---|---|---:|---:|---:|",
    ]
    est, bnd, short = list(est_head), list(bounds_head), list(short_head)
    for v in VARIANTS:
        try:
            with open(f"{syn}/{v}.json") as f:
                j = json.load(f)
        except FileNotFoundError:
            continue
        m = j["trace"]["methods"]
        est += estimate_rows(
            v, m, "devtools-trace",
            ["devtools-trace", "devtools-v6-trace", "devtools-trace+midway", "jscalls-midway", "jscalls-midway-0.0.65",
             "jscalls-log-midway"],
        )
        short += short_rows(v, m, "devtools-trace", ["devtools-trace", "jscalls-midway", "jscalls-log-midway"])
        for name in ["jscalls-bounds", "jscalls-midway"]:
            r = bounds_row(v, name, m.get(name, {}))
            if r:
                bnd.append(r)
        cm = j["cpuprofile"]["methods"]
        est += estimate_rows(
            v + " (.cpuprofile)", cm, "devtools-cpuprofile", ["devtools-cpuprofile", "jscalls-midway", "jscalls-log-midway"]
        )
        r = bounds_row(v + " (.cpuprofile)", "jscalls-bounds", cm.get("jscalls-bounds", {}))
        if r:
            bnd.append(r)
    with open(real) as f:
        j = json.load(f)
    for side, base in [("stripped", "devtools-trace"), ("recorded", "devtools-trace"), ("cpuprofile", "devtools-cpuprofile")]:
        m = j[side]["methods"]
        label = f"real, {side}"
        est += estimate_rows(
            label, m, base, [base, "devtools-trace+midway", "devtools-cpuprofile+midway", "jscalls-midway", "jscalls-log-midway"]
        )
        short += short_rows(label, m, base, [base, "jscalls-midway", "jscalls-log-midway"])
        for name in ["jscalls-bounds", "jscalls-midway"]:
            r = bounds_row(label, name, m.get(name, {}))
            if r:
                bnd.append(r)
    print("### Estimates (true calls of 0.2 ms or more)\n")
    print("\n".join(est))
    print("\n### Estimates (short calls, and every call)\n")
    print("\n".join(short))
    print("\n### Bounds\n")
    print("\n".join(bnd))


if __name__ == "__main__":
    main()
