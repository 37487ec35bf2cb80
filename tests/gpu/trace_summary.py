#!/usr/bin/env python3
"""Summarises a profile_steps trace (Chrome/Perfetto JSON): GPU kernel time by kernel, per step.
   python3 tests/gpu/trace_summary.py TRACE.json STEPS [TOP] [full]
   full: kernel names with their template arguments (which functor an elementwise kernel ran)."""
import collections
import json
import re
import sys

trace, steps = sys.argv[1], int(sys.argv[2])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
full = len(sys.argv) > 4 and sys.argv[4] == "full"
events = json.load(open(trace))["traceEvents"]
kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
by_name = collections.Counter()
count = collections.Counter()
for k in kernels:
    name = k["name"][:160] if full else re.sub(r"<.*", "", k["name"])[:90]
    by_name[name] += k["dur"]
    count[name] += 1
total = sum(by_name.values())
span = (max(k["ts"] + k["dur"] for k in kernels) - min(k["ts"] for k in kernels)) if kernels else 0
print(f"{len(kernels)} kernels over {steps} steps: {total / 1000 / steps:.1f} ms of kernel time per step, "
      f"{span / 1000 / steps:.1f} ms of GPU span per step ({len(kernels) / steps:.0f} kernels per step)")
for name, us in by_name.most_common(top):
    print(f"{us / 1000 / steps:8.2f} ms/step {100 * us / total:5.1f}% {count[name] // steps:5d}x  {name}")
