#!/usr/bin/env python3
"""Which cuDNN work needs the CUDA driver's JIT (PTX to machine code, kept per machine) when its cache
is empty: the SDXL U-Net's convolution shapes at 1024x1024 (128x128 latents), bf16, forward and input
gradient, with cudnn.benchmark off ("heuristic") or on ("bench", optionally with a benchmark_limit), or
cuDNN's SDPA ("sdpa"). One case per fresh process; prints its seconds. For example:
  for c in heuristic bench bench sdpa sdpa; do CUDA_CACHE_PATH=/tmp/jit-$c python3 tests/gpu/cudnn_jit_probe.py $c
    find /tmp/jit-$c -type f | wc -l; done      # the second run of a case finds the cache warm
"""
import sys
import time

import torch
import torch.nn.functional as F

case = sys.argv[1]
torch.backends.cudnn.benchmark = case.startswith("bench")
if len(sys.argv) > 2:
    torch.backends.cudnn.benchmark_limit = int(sys.argv[2])  # 0: every candidate
dev = "cuda"
torch.zeros(1, device=dev)
shapes = [(4, 320, 128, 1, 3), (320, 320, 128, 1, 3), (320, 320, 128, 2, 3), (320, 640, 64, 1, 3), (640, 640, 64, 1, 3),
          (320, 640, 64, 1, 1), (640, 640, 64, 2, 3), (640, 1280, 32, 1, 3), (1280, 1280, 32, 1, 3), (640, 1280, 32, 1, 1),
          (2560, 1280, 32, 1, 3), (1920, 1280, 32, 1, 3), (2560, 1280, 32, 1, 1), (1920, 1280, 32, 1, 1),
          (1280, 1280, 64, 1, 3), (1920, 640, 64, 1, 3), (1280, 640, 64, 1, 3), (960, 640, 64, 1, 3), (1920, 640, 64, 1, 1),
          (1280, 640, 64, 1, 1), (960, 640, 64, 1, 1), (640, 640, 128, 1, 3), (960, 320, 128, 1, 3), (640, 320, 128, 1, 3),
          (960, 320, 128, 1, 1), (640, 320, 128, 1, 1), (320, 4, 128, 1, 3)]
t0 = time.time()
if case in ("bench", "heuristic"):
    for cin, cout, s, stride, k in shapes:
        x = torch.randn(1, cin, s, s, device=dev, dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(cout, cin, k, k, device=dev, dtype=torch.bfloat16) * 0.02
        y = F.conv2d(x, w, padding=k // 2, stride=stride)
        y.backward(torch.ones_like(y))
elif case == "sdpa":
    from torch.nn.attention import sdpa_kernel, SDPBackend
    for L, H in ((4096, 10), (1024, 20), (4608, 24)):
        q = torch.randn(1, H, L, 64 if L < 4608 else 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            o = F.scaled_dot_product_attention(q, q, q)
            o.backward(torch.ones_like(o))
torch.cuda.synchronize()
print(f"{case}: {time.time() - t0:.2f} s", flush=True)
