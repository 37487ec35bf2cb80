"""Times FLUX's attention (one joint txt+img sequence: [1, 24, 4608, 128], bf16) forward and backward
under each scaled_dot_product_attention backend PyTorch has on this machine, to see whether the
runner's choice (cuDNN) leaves time on the table. Run on the GPU machine: python3 attention_backends_probe.py"""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, L, D = 1, 24, 4608, 128
torch.manual_seed(0)
q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
g = torch.randn(B, H, L, D, device="cuda", dtype=torch.bfloat16)
flops_fwd = 4 * B * H * L * L * D


def timed(fn, n=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / n


for name in ("CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION"):
    backend = getattr(SDPBackend, name)
    try:
        with sdpa_kernel(backend):
            fwd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))

            def both():
                o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
                torch.autograd.grad(o, (q, k, v), g)

            total = timed(both)
        print(f"{name}: forward {fwd:.3f} ms ({flops_fwd / fwd / 1e9:.0f} TFLOP/s), backward {total - fwd:.3f} ms "
              f"({2.5 * flops_fwd / (total - fwd) / 1e9:.0f} TFLOP/s), both {total:.3f} ms; x57 blocks: {57 * total:.1f} ms")
    except Exception as e:  # a backend this build or GPU lacks
        print(f"{name}: unavailable ({str(e).splitlines()[0][:160]})")
print("torch", torch.__version__, torch.cuda.get_device_name(), "cuDNN", torch.backends.cudnn.version())
