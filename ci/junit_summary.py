#!/usr/bin/env python3
"""Merges the JUnit files of sharded `testbench regress` runs (GitHub Actions matrix jobs, Slurm
array tasks, ci/regress-million.sh) and prints a Markdown summary: a row per suite run (tests,
failures, NVMe commands, seconds), the shards that are missing, and every failed case.

    python3 ci/junit_summary.py target/junit/                       # every *.xml under it
    python3 ci/junit_summary.py a.xml b.xml --min-commands 1000000  # each run: at least 10^6 commands

Every file must be well-formed XML with `testbench regress`'s properties (seed, cases, shard,
properties, x_init, commands). Exit status: 0 all passed (and enough commands), 1 a case failed,
a shard is missing or a run completed too few commands, 2 a file is unreadable or not a regress report.
"""

import argparse
import pathlib
import sys
import xml.etree.ElementTree as ET


def files_of(paths):
    for p in map(pathlib.Path, paths):
        if p.is_dir():
            yield from sorted(p.rglob("*.xml"))
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="JUnit files or folders holding them")
    ap.add_argument("--min-commands", type=int, default=0,
                    help="fail unless every run (a suite's shards merged) completed at least "
                         "this many NVMe commands")
    args = ap.parse_args()

    # One run = (suite, properties, seed, cases, initial values); its shards are its files.
    runs = {}
    failed = []
    bad = False
    n_files = 0
    for f in files_of(args.paths):
        n_files += 1
        try:
            root = ET.parse(f).getroot()
        except (ET.ParseError, OSError) as e:
            print(f"junit_summary: {f}: {e}", file=sys.stderr)
            bad = True
            continue
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        if root.tag not in ("testsuite", "testsuites") or not suites:
            print(f"junit_summary: {f}: no <testsuite>", file=sys.stderr)
            bad = True
            continue
        for ts in suites:
            props = {p.get("name"): p.get("value") for p in ts.findall("properties/property")}
            need = ("seed", "cases", "shard", "properties", "x_init", "commands")
            if any(k not in props for k in need):
                print(f"junit_summary: {f}: not a `testbench regress` report (properties {sorted(props)})",
                      file=sys.stderr)
                bad = True
                continue
            k, m = (int(x) for x in props["shard"].split("/"))
            key = (ts.get("name"), props["properties"], props["seed"], props["cases"], props["x_init"])
            r = runs.setdefault(key, {"shards": {}, "m": m, "tests": 0, "failures": 0,
                                      "commands": 0, "time": 0.0})
            if k in r["shards"]:
                print(f"junit_summary: {f}: shard {k}/{m} also in {r['shards'][k]} (counted once)",
                      file=sys.stderr)
                continue
            r["shards"][k] = f
            r["m"] = m
            cases = ts.findall("testcase")
            r["tests"] += len(cases)
            r["commands"] += int(props["commands"])
            r["time"] += float(ts.get("time", "0"))
            for c in cases:
                fl = c.find("failure")
                if fl is None:
                    fl = c.find("error")
                if fl is not None:
                    r["failures"] += 1
                    failed.append((c.get("classname"), c.get("name"), fl.get("message", "")))
    if n_files == 0:
        print("junit_summary: no JUnit files found", file=sys.stderr)
        return 2

    print("| suite | properties | seed | cases | initial values | shards | tests | failed | NVMe commands | case seconds |")
    print("|---|---|---|---:|---|---:|---:|---:|---:|---:|")
    missing = []
    short = []
    total = {"tests": 0, "failures": 0, "commands": 0, "time": 0.0}
    for key in sorted(runs):
        suite, props, seed, cases, x_init = key
        r = runs[key]
        gone = [k for k in range(1, r["m"] + 1) if k not in r["shards"]]
        if gone:
            listed = ", ".join(map(str, gone[:10])) + (", ..." if len(gone) > 10 else "")
            missing.append(f"{suite} (seed {seed}, {cases} cases): {len(gone)} of {r['m']} shards ({listed})")
        if r["commands"] < args.min_commands:
            short.append(f"{suite} (seed {seed}, {cases} cases): {r['commands']}")
        for t in total:
            total[t] += r[t]
        names = props.split(",")
        shown = ", ".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "")
        print(f"| {suite} | {shown} | {seed} | {cases} | {x_init} | "
              f"{len(r['shards'])}/{r['m']} | {r['tests']} | {r['failures']} | {r['commands']} | {r['time']:.0f} |")
    print(f"| **all** | | | | | | {total['tests']} | {total['failures']} | {total['commands']} | {total['time']:.0f} |")
    print()
    status = 2 if bad else 0
    if missing:
        print("**Missing shards:** " + "; ".join(missing))
        status = status or 1
    if failed:
        print(f"**{len(failed)} failed cases** (each saved to its suite's regression file on the machine that ran it):")
        print()
        for cls, name, msg in failed:
            print(f"- `{cls}` {name}: {msg}")
        status = status or 1
    if short:
        print(f"**Too few NVMe commands** (at least {args.min_commands} wanted): " + "; ".join(short))
        status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
