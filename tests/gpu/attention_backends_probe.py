"""Times FLUX's attention (one joint txt+img sequence: [1, 24, 4608, 128], bf16) forward and backward
under each scaled_dot_product_attention backend PyTorch has on this machine, to see whether the
runner's choice (cuDNN) leaves time on the table; and cuDNN's with q, k and v laid out token-major
([B, L, H, D] memory seen as [B, H, L, D], as the fused QK kernel writes them): its speed, and whether
the output and gradients come back in that layout. Run on the GPU machine: python3 attention_backends_probe.py"""
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


token_major = [torch.randn(B, L, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_(True)
               for _ in range(3)]
g_token_major = torch.randn(B, L, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
runs = [("CUDNN_ATTENTION", (q, k, v), g, "head-major"), ("CUDNN_ATTENTION", token_major, g_token_major, "token-major"),
        ("FLASH_ATTENTION", (q, k, v), g, "head-major"), ("EFFICIENT_ATTENTION", (q, k, v), g, "head-major")]
for name, (q, k, v), g, layout in runs:
    backend = getattr(SDPBackend, name)
    try:
        with sdpa_kernel(backend):
            fwd = timed(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))

            def both():
                o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
                torch.autograd.grad(o, (q, k, v), g)

            total = timed(both)
            o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            dq = torch.autograd.grad(o, (q,), g)[0]
        name = f"{name} ({layout}; output strides {tuple(o.stride())}, dq strides {tuple(dq.stride())})"
        print(f"{name}: forward {fwd:.3f} ms ({flops_fwd / fwd / 1e9:.0f} TFLOP/s), backward {total - fwd:.3f} ms "
              f"({2.5 * flops_fwd / (total - fwd) / 1e9:.0f} TFLOP/s), both {total:.3f} ms; x57 blocks: {57 * total:.1f} ms")
    except Exception as e:  # a backend this build or GPU lacks
        print(f"{name}: unavailable ({str(e).splitlines()[0][:160]})")
print("torch", torch.__version__, torch.cuda.get_device_name(), "cuDNN", torch.backends.cudnn.version())

# The single block hands the attention back its output's gradient as a column range of linear2's input
# gradient: token-major like the output, but with a row stride of 18432, not 3072. Compare cuDNN's
# gradients for that and for the same values laid out exactly as the output, in both orders (a graph
# cached for one layout must not be reused for the other).
q, k, v = token_major
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    wide = torch.randn(B, L, H * D + 15360, device="cuda", dtype=torch.bfloat16)
    g_wide = wide[..., : H * D].view(B, L, H, D).transpose(1, 2)
    g_dense = g_wide.contiguous().transpose(1, 2).contiguous().transpose(1, 2)  # token-major, row stride H * D
    results = {}
    for name, grad in (("dense", g_dense), ("wide", g_wide), ("dense again", g_dense)):
        try:
            results[name] = torch.autograd.grad(o, (q, k, v), grad, retain_graph=True)
            torch.cuda.synchronize()
        except Exception as e:
            print(f"cuDNN backward with the {name} output gradient failed: {str(e).splitlines()[0][:200]}")
    if "wide" in results and "dense" in results:
        diff = max((a.float() - b.float()).abs().max().item() for a, b in zip(results["wide"], results["dense"]))
        print(f"cuDNN backward, output gradient at row stride {g_wide.stride(2)} vs {g_dense.stride(2)}: max |difference| {diff:.3e}")
