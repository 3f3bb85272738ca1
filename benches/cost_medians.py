#!/usr/bin/env python3
"""The medians of several cost runs, against issue 51's goals.

Reads the saved output of termbench (../shared/bench/termbench.py),
scalebench (../shared/bench/scalebench.py) and benches/isolation.py runs:
each file's last JSON line. Prints one Markdown table: each measure's
median, each run in brackets, the goal and whether the median meets it.

    python3 benches/cost_medians.py \
        --termbench T1 T2 T3 --scalebench S1 S2 S3 --isolation I1 I2 I3
"""

import argparse
import json
import statistics


def last_json(path):
    with open(path, encoding="utf-8") as f:
        for line in reversed(f.read().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)
    raise SystemExit(f"{path}: no JSON line (was the run cut short?)")


def dig(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


# (what, where in a run's JSON, goal as text, test of the median)
TERMBENCH = [
    ("echo p50", ("ratios", "tickloop_vs_tmux", "echo_p50"), "≤ 1.0", lambda v: v <= 1.0),
    ("echo p99", ("ratios", "tickloop_vs_tmux", "echo_p99"), "≤ 1.0", lambda v: v <= 1.0),
    ("attach", ("ratios", "tickloop_vs_tmux", "attach_median"), "≤ 1.0", lambda v: v <= 1.0),
    ("one session's PSS after 64 MiB of output",
     ("ratios", "tickloop_vs_tmux", "pss_idle_after_output"), "≤ 1.5", lambda v: v <= 1.5),
    ("throughput headless", ("ratios", "tickloop_vs_tmux", "throughput_headless"),
     "≥ 1.5 in every run", None),
    ("throughput attached", ("ratios", "tickloop_vs_tmux", "throughput_attached"),
     "≥ 1.5 in every run", None),
    ("keeper CPU headless", ("ratios", "tickloop_vs_tmux", "keeper_cpu_headless"), "≤ 0.6",
     lambda v: v <= 0.6),
    ("keeper CPU attached", ("ratios", "tickloop_vs_tmux", "keeper_cpu_attached"), "≤ 0.6",
     lambda v: v <= 0.6),
]


def catchup_gap(run):
    """Attached catch-up, tickloop's minus tmux's, in ms (goal: one 60 Hz frame)."""
    t = dig(run, "catchup_ms", "tickloop.attached", "median")
    m = dig(run, "catchup_ms", "tmux.attached", "median")
    return None if t is None or m is None else round(t - m, 2)


def row(what, values, goal, test, every=False):
    got = [v for v in values if v is not None]
    if not got:
        return f"| {what} | {goal} | no figure | — |"
    median = round(statistics.median(got), 2)
    runs = ", ".join("—" if v is None else f"{v}" for v in values)
    if every:
        met = "yes" if all(v >= 1.5 for v in got) else "no"
    else:
        met = "yes" if test(median) else "no"
    return f"| {what} | {goal} | **{median}** [{runs}] | {met} |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--termbench", nargs="*", default=[])
    ap.add_argument("--scalebench", nargs="*", default=[])
    ap.add_argument("--isolation", nargs="*", default=[])
    a = ap.parse_args()
    print("| measure | goal (ratio to tmux unless stated) | median [runs] | met? |")
    print("| --- | --- | --- | --- |")
    tb = [last_json(p) for p in a.termbench]
    for what, path, goal, test in TERMBENCH:
        values = [dig(r, *path) for r in tb]
        print(row(what, values, goal, test, every=test is None))
    if tb:
        gaps = [catchup_gap(r) for r in tb]
        print(row("attached catch-up after the flood, ms behind tmux", gaps,
                  "≤ 16.7 ms (one 60 Hz frame)", lambda v: v <= 16.7))
    sb = [last_json(p) for p in a.scalebench]
    if sb:
        n = sb[0].get("n")
        print(row(f"{n} idle shells, PSS", [dig(r, "tickloop_vs_tmux", "pss_kib") for r in sb],
                  "≤ 10", lambda v: v <= 10))
        print(row("open", [dig(r, "tickloop_vs_tmux", "open_each_ms") for r in sb], "≤ 1.5",
                  lambda v: v <= 1.5))
    iso = [last_json(p) for p in a.isolation]
    if iso:
        print(row("a quiet Tick's read under a 10-watcher flood (process), × its idle time",
                  [dig(r, "process", "ratio_p50") for r in iso], "≤ 1.5", lambda v: v <= 1.5))
        print(row("the same through one kept socket, × its idle time",
                  [dig(r, "socket", "ratio_p50") for r in iso], "≤ 1.5", lambda v: v <= 1.5))


if __name__ == "__main__":
    main()
