#!/usr/bin/env python3
"""On the GPU machine (issue 56): SDXL's attention at 1024² by each of PyTorch's SDPA backends, forward and
backward, to choose the runner's head-dim-64 attention by measurement. Every call the U-Net's step makes
(self-attention at 4096 and 1024 tokens, cross-attention to the 77 text tokens), bf16, timed from one
CUDA graph per backend so launch gaps do not count.
   python3 tests/gpu/sdxl_attention_backends.py [BATCH]
Prints per backend and shape the forward and forward+backward time, TFLOP/s, and the step's total."""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 1
# (tokens, kv tokens, heads, calls a step): SDXL's transformer blocks at 1024² (64² and 32² latents).
shapes = [(4096, 4096, 10, 10), (4096, 77, 10, 10), (1024, 1024, 20, 60), (1024, 77, 20, 60)]
backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def flops(lq, lk, heads, with_backward):
    f = 4 * batch * heads * lq * lk * 64
    return f * 3.5 if with_backward else f  # backward: 2.5x the forward's products (dq, dk, dv, dp, recompute)


def timed(fn, reps=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(5):
        start.record()
        g.replay()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / reps)
    return best


print(f"| backend | tokens | kv tokens | heads | forward µs | fwd TFLOP/s | fwd+bwd µs | fwd+bwd TFLOP/s |")
print("|---|---|---|---|---|---|---|---|")
for name, backend in backends.items():
    step_fwd = step_all = 0.0
    ok = True
    for lq, lk, heads, calls in shapes:
        q = torch.randn(batch, heads, lq, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(batch, heads, lk, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(batch, heads, lk, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn(batch, heads, lq, 64, device="cuda", dtype=torch.bfloat16)
        try:
            with sdpa_kernel(backend):
                fwd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))

                def both():
                    y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
                    torch.autograd.grad(y, (q, k, v), dy)
                whole = timed(both)
        except Exception as e:  # a backend that refuses the shape says so in its row
            print(f"| {name} | {lq} | {lk} | {heads} | refused: {str(e).splitlines()[0][:80]} | | | |")
            ok = False
            continue
        step_fwd += fwd * calls
        step_all += whole * calls
        print(f"| {name} | {lq} | {lk} | {heads} | {fwd * 1e3:.1f} | {flops(lq, lk, heads, False) / fwd / 1e9:.0f} | "
              f"{whole * 1e3:.1f} | {flops(lq, lk, heads, True) / whole / 1e9:.0f} |")
    if ok:
        print(f"| **{name}, the step's calls** | | | | **{step_fwd:.2f} ms** | | **{step_all:.2f} ms** | |")
print(f"({torch.cuda.get_device_name()}, batch {batch}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()})")
