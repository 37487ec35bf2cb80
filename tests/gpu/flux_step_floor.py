#!/usr/bin/env python3
"""The library floor of one FLUX.1-dev LoRA step (bs1, 1024x1024, 512 T5 tokens, bf16).

Replays, from one CUDA graph, only the work no Sinter kernel can take over: the frozen base
weights' GEMMs (forward, and the input gradient in backward: a LoRA step trains no base weight)
and the 57 blocks' attention forward and backward through cuDNN, with the step's shapes. Whatever a
real step takes beyond this is the rest of the step (norms, modulation, RoPE, GELU, residuals, the
LoRA products, the optimizer). Also times the GELU(tanh) epilogue cuBLASLt offers against a GEMM
followed by a GELU kernel, for linear1's MLP columns.

It also shows why this floor is above the GEMMs' and attention's share of a real step: the SM clock
and board power while the GEMMs run back to back (nvidia-smi, sampled), and one GEMM shape timed back
to back against the same GEMMs each followed by a memory-bound copy, as a step interleaves them.

Usage on the GPU machine: python3 tests/gpu/flux_step_floor.py
Prints one line per measurement: name, milliseconds, and for GEMMs the TFLOP/s reached.
"""
import subprocess

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HIDDEN, MLP, HEADS, HEAD_DIM = 3072, 12288, 24, 128
IMG, TXT = 4096, 512
DOUBLE, SINGLE = 19, 38
dev, bf16 = torch.device("cuda"), torch.bfloat16


def timed(fn, replays=10):
    """Milliseconds per call of fn, replayed from one CUDA graph (after warm-up)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / replays


def clocks_while(fn, seconds=3.0):
    """Mean SM clock (MHz) and board power (W) sampled by nvidia-smi while fn runs repeatedly."""
    sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                "-lms", "50"], stdout=subprocess.PIPE, text=True)
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    end = torch.cuda.Event(enable_timing=True)
    while True:
        fn()
        end.record()
        torch.cuda.synchronize()
        if start.elapsed_time(end) > seconds * 1e3:
            break
    sampler.terminate()
    rows = [line.split(",") for line in sampler.communicate()[0].splitlines() if "," in line]
    rows = rows[len(rows) // 4:]  # after the clocks settle
    if not rows:
        return float("nan"), float("nan")
    return (sum(float(r[0]) for r in rows) / len(rows), sum(float(r[1]) for r in rows) / len(rows))


def linears():
    """(tokens, in, out) of every frozen Linear on tokens in the step, one entry per weight."""
    shapes = []
    for _ in range(DOUBLE):
        for m in (IMG, TXT):
            shapes += [(m, HIDDEN, 3 * HIDDEN), (m, HIDDEN, HIDDEN), (m, HIDDEN, MLP), (m, MLP, HIDDEN)]
    for _ in range(SINGLE):
        shapes += [(IMG + TXT, HIDDEN, 3 * HIDDEN + MLP), (IMG + TXT, HIDDEN + MLP, HIDDEN)]
    return shapes


def main():
    torch.backends.cuda.matmul.allow_tf32 = True
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    shapes = linears()
    weights = [torch.randn(n, k, device=dev, dtype=bf16) * 0.02 for (_, k, n) in shapes]
    inputs = {}
    for m, k, n in shapes:
        inputs.setdefault((m, k), torch.randn(m, k, device=dev, dtype=bf16))
        inputs.setdefault((m, n), torch.randn(m, n, device=dev, dtype=bf16))
    flops = sum(2 * m * k * n for (m, k, n) in shapes)

    def forward_gemms():
        for (m, k, n), w in zip(shapes, weights):
            torch.mm(inputs[(m, k)], w.t())

    def backward_gemms():  # the input gradient: dX = dY W
        for (m, k, n), w in zip(shapes, weights):
            torch.mm(inputs[(m, n)], w)

    q, k, v = (torch.randn(1, HEADS, IMG + TXT, HEAD_DIM, device=dev, dtype=bf16, requires_grad=True) for _ in range(3))
    grad_out = torch.randn(1, HEADS, IMG + TXT, HEAD_DIM, device=dev, dtype=bf16)

    def attention():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            for _ in range(DOUBLE + SINGLE):
                out = F.scaled_dot_product_attention(q, k, v)
                torch.autograd.grad(out, (q, k, v), grad_out)

    fwd, bwd, att = timed(forward_gemms), timed(backward_gemms), timed(attention)

    def everything():
        forward_gemms()
        backward_gemms()
        attention()

    total = timed(everything)
    print(f"base GEMMs forward      {fwd:8.1f} ms  {flops / fwd / 1e9:6.0f} TFLOP/s")
    print(f"base GEMMs input grad   {bwd:8.1f} ms  {flops / bwd / 1e9:6.0f} TFLOP/s")
    att_flops = (DOUBLE + SINGLE) * 3.5 * 4 * (IMG + TXT) ** 2 * HEAD_DIM * HEADS
    print(f"attention fwd+bwd       {att:8.1f} ms  {att_flops / att / 1e9:6.0f} TFLOP/s")
    print(f"floor, one graph        {total:8.1f} ms")

    # The clocks: GEMMs back to back, then attention.
    for name, fn in (("base GEMMs", lambda: (forward_gemms(), backward_gemms())), ("attention", attention)):
        clock, power = clocks_while(fn)
        print(f"{name + ', back to back:':24s}SM clock {clock:6.0f} MHz, board power {power:5.0f} W")

    # linear1's forward shape 38 times back to back, against the same GEMMs each followed by a
    # memory-bound copy (256 MiB), less the copies alone.
    w1 = weights[DOUBLE * 2 * 4]  # the first single block's linear1 (after 19 x 2 streams x 4)
    x1 = inputs[(IMG + TXT, HIDDEN)]
    src = torch.empty(128 << 20, device=dev, dtype=bf16)
    dst = torch.empty_like(src)
    alone = timed(lambda: [torch.mm(x1, w1.t()) for _ in range(SINGLE)]) / SINGLE
    copies = timed(lambda: [dst.copy_(src) for _ in range(SINGLE)]) / SINGLE
    mixed = timed(lambda: [(torch.mm(x1, w1.t()), dst.copy_(src)) for _ in range(SINGLE)]) / SINGLE
    gemm_flops = 2 * (IMG + TXT) * HIDDEN * w1.size(0)
    print(f"linear1 GEMM, back to back   {alone * 1e3:8.1f} us  {gemm_flops / alone / 1e9:6.0f} TFLOP/s")
    print(f"linear1 GEMM, between copies {(mixed - copies) * 1e3:8.1f} us  {gemm_flops / (mixed - copies) / 1e9:6.0f} TFLOP/s "
          f"(copy alone {copies * 1e3:.1f} us)")

    # linear1's MLP columns: GEMM + bias, then GELU(tanh), against cuBLASLt's GELU epilogue.
    x = inputs[(IMG + TXT, HIDDEN)]
    w = torch.randn(MLP, HIDDEN, device=dev, dtype=bf16) * 0.02
    b = torch.randn(MLP, device=dev, dtype=bf16)
    plain = timed(lambda: [torch.addmm(b, x, w.t()) for _ in range(SINGLE)]) / SINGLE
    then_gelu = timed(lambda: [F.gelu(torch.addmm(b, x, w.t()), approximate="tanh") for _ in range(SINGLE)]) / SINGLE
    epilogue = timed(lambda: [torch._addmm_activation(b, x, w.t(), use_gelu=True) for _ in range(SINGLE)]) / SINGLE
    ref = F.gelu(torch.addmm(b, x, w.t()).float(), approximate="tanh")
    err = (torch._addmm_activation(b, x, w.t(), use_gelu=True).float() - ref).abs().max().item()
    print(f"linear1 MLP GEMM        {plain * 1e3:8.1f} us")
    print(f"  then a GELU kernel    {then_gelu * 1e3:8.1f} us")
    print(f"  GELU in the epilogue  {epilogue * 1e3:8.1f} us (max diff {err:.3g} from GELU of the GEMM)")


if __name__ == "__main__":
    main()
