#!/usr/bin/env python3
"""Summarises a profile_steps trace (Chrome/Perfetto JSON): GPU kernel time by kernel, per step.
   python3 tests/gpu/trace_summary.py TRACE.json STEPS [TOP] [full|ops]
   full: kernel names with their template arguments (which functor an elementwise kernel ran).
   ops:  full names, and under each kernel the operators that launched it (innermost first, with the autograd node
         around it and the input shapes), so a kernel's time can be traced to the model code. Only for
         kernels launched one by one: a replayed CUDA graph's kernels have no launching operator."""
import bisect
import collections
import json
import re
import sys


def launching_ops(events):
    """correlation id -> 'op [shapes] < parent < grandparent' of the CPU operator that launched it."""
    ops_by_thread = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "cpu_op" and "dur" in e:
            ops_by_thread[e.get("tid")].append(e)
    for ops in ops_by_thread.values():
        ops.sort(key=lambda e: (e["ts"], -e["dur"]))
    starts = {tid: [e["ts"] for e in ops] for tid, ops in ops_by_thread.items()}

    def enclosing(tid, ts):
        # The operators whose span holds ts, innermost (latest started) first.
        ops, found = ops_by_thread.get(tid, []), []
        i = bisect.bisect_right(starts.get(tid, []), ts) - 1
        stop = i - 5000  # a bound on the walk back past finished siblings: outer operators beyond it go unnamed
        while i >= 0 and i > stop and len(found) < 3:
            op = ops[i]
            if op["ts"] + op["dur"] >= ts and (not found or op["ts"] + op["dur"] >= found[-1]["ts"] + found[-1]["dur"]):
                found.append(op)
            i -= 1
        return found

    out = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            chain = enclosing(e.get("tid"), e["ts"])
            if chain:
                dims = chain[0].get("args", {}).get("Input Dims")
                label = chain[0]["name"] + (f" {dims}" if dims else "")
                out[e["args"]["correlation"]] = " < ".join([label] + [op["name"] for op in chain[1:]])
    return out


def main():
    trace, steps = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    mode = sys.argv[4] if len(sys.argv) > 4 else ""
    events = json.load(open(trace))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    by_name, count = collections.Counter(), collections.Counter()
    by_op = collections.defaultdict(collections.Counter)
    launched_by = launching_ops(events) if mode == "ops" else {}
    for k in kernels:
        name = k["name"][:160] if mode in ("full", "ops") else re.sub(r"<.*", "", k["name"])[:90]
        by_name[name] += k["dur"]
        count[name] += 1
        if mode == "ops":
            by_op[name][launched_by.get(k.get("args", {}).get("correlation"), "(no launching operator)")] += k["dur"]
    total = sum(by_name.values())
    span = (max(k["ts"] + k["dur"] for k in kernels) - min(k["ts"] for k in kernels)) if kernels else 0
    print(f"{len(kernels)} kernels over {steps} steps: {total / 1000 / steps:.1f} ms of kernel time per step, "
          f"{span / 1000 / steps:.1f} ms of GPU span per step ({len(kernels) / steps:.0f} kernels per step)")
    # Copies and fills run on the GPU too, outside the kernel count (cudaMemcpyAsync of a same-dtype copy_).
    for cat in ("gpu_memcpy", "gpu_memset"):
        spans = [e for e in events if e.get("cat") == cat and "dur" in e]
        if spans:
            names = collections.Counter(e["name"] for e in spans)
            print(f"{sum(e['dur'] for e in spans) / 1000 / steps:.1f} ms per step in {len(spans) // steps} {cat} per step "
                  f"({', '.join(f'{n}: {c // steps}' for n, c in names.most_common(3))})")
    for name, us in by_name.most_common(top):
        print(f"{us / 1000 / steps:8.2f} ms/step {100 * us / total:5.1f}% {count[name] // steps:5d}x  {name}")
        for op, op_us in by_op[name].most_common(3):
            print(f"{'':10}{op_us / 1000 / steps:8.2f} ms/step  from {op[:200]}")


if __name__ == "__main__":
    main()
