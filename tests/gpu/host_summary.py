#!/usr/bin/env python3
"""Where a profile_steps trace spends the host's time: per step, the CUDA runtime calls (count and time,
syncs and allocations included) and the operators (count, inclusive time), and with two traces the rows
that differ most. For steps bound by the host's launches, where GPU kernel time says nothing.
   python3 tests/gpu/host_summary.py TRACE.json STEPS [TOP]
   python3 tests/gpu/host_summary.py A.json B.json STEPS [TOP]     rows of B against A, largest difference first"""
import collections
import json
import sys


def summary(path, steps):
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    runtime, ops = collections.defaultdict(lambda: [0, 0.0]), collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        if "dur" not in e:
            continue
        cat = e.get("cat")
        table = runtime if cat in ("cuda_runtime", "cuda_driver") else ops if cat in ("cpu_op", "user_annotation") else None
        if table is None:
            continue
        row = table[e["name"]]
        row[0] += 1
        row[1] += e["dur"] / 1000.0
    per_step = lambda t: {k: (v[0] / steps, v[1] / steps) for k, v in t.items()}
    return per_step(runtime), per_step(ops)


def show(title, table, top):
    print(f"\n{title} (per step: count, ms)")
    for name, (count, ms) in sorted(table.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {count:10.1f} {ms:10.2f}  {name[:110]}")


def diff(title, a, b, top):
    print(f"\n{title}: B - A per step (count, ms), largest time difference first")
    rows = []
    for name in set(a) | set(b):
        ca, ta = a.get(name, (0, 0.0))
        cb, tb = b.get(name, (0, 0.0))
        rows.append((tb - ta, cb - ca, name))
    for dt, dc, name in sorted(rows, key=lambda r: -abs(r[0]))[:top]:
        print(f"  {dc:+10.1f} {dt:+10.2f}  {name[:110]}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[2].endswith(".json"):
        steps = int(sys.argv[3])
        top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
        (ra, oa), (rb, ob) = summary(sys.argv[1], steps), summary(sys.argv[2], steps)
        for name, t in (("A", (ra, oa)), ("B", (rb, ob))):
            print(f"{name}: runtime calls {sum(c for c, _ in t[0].values()):.0f} ({sum(m for _, m in t[0].values()):.1f} ms), "
                  f"operators {sum(c for c, _ in t[1].values()):.0f} a step")
        diff("CUDA runtime", ra, rb, top)
        diff("operators", oa, ob, top)
    else:
        steps = int(sys.argv[2])
        top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
        r, o = summary(sys.argv[1], steps)
        show("CUDA runtime", r, top)
        show("operators", o, top)
