"""The reference for the full fine-tune benchmark: one step of sd-scripts' SDXL UNet trained whole,
as sdxl_train.py's low-memory recipe does it (full_bf16, Adafactor with scale_parameter,
relative_step and warmup_init off, fused_backward_pass through library/adafactor_fused.py and a
post-accumulate-grad hook per parameter, max_grad_norm 1.0 clipping each gradient by its own
norm), random weights, bs1, eager. Run on the GPU machine with sd-scripts' library/ on PYTHONPATH.
Usage: python3 sdscripts_full_step.py [batch] [res] [gc]
Prints RESULT {"step_ms": mean of 10 steps after 4, "peak_gib": ...}."""
import json, sys, time, types

def _stub(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m; return m

class _Names:  # diffusers is not on the GPU machine; sd-scripts imports only names from it
    pass
_stub("diffusers", AutoencoderKL=_Names, EulerAncestralDiscreteScheduler=_Names)
_stub("diffusers.schedulers")
_stub("diffusers.schedulers.scheduling_euler_ancestral_discrete", EulerAncestralDiscreteSchedulerOutput=_Names)

import torch
import transformers
from library import adafactor_fused, sdxl_original_unet

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
batch = int(sys.argv[1]) if len(sys.argv) > 1 else 1
res = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
gc = len(sys.argv) > 3 and sys.argv[3] == "gc"
dev = torch.device("cuda")
torch.manual_seed(0)
with torch.device(dev):
    unet = sdxl_original_unet.SdxlUNet2DConditionModel()
unet.set_use_sdpa(True)
unet.to(torch.bfloat16)
if gc:
    unet.enable_gradient_checkpointing()
unet.train()
params = [p for p in unet.parameters()]
optimizer = transformers.optimization.Adafactor(params, lr=1e-5, scale_parameter=False, relative_step=False, warmup_init=False)
adafactor_fused.patch_adafactor_fused(optimizer)
for group in optimizer.param_groups:
    for p in group["params"]:
        def hook(tensor, group=group):
            torch.nn.utils.clip_grad_norm_(tensor, 1.0)
            optimizer.step_param(tensor, group)
            tensor.grad = None
        p.register_post_accumulate_grad_hook(hook)

lat = res // 8
def step():
    x = torch.randn(batch, 4, lat, lat, device=dev, dtype=torch.bfloat16)
    t = torch.randint(0, 1000, (batch,), device=dev)
    context = torch.randn(batch, 77, 2048, device=dev, dtype=torch.bfloat16)
    y = torch.randn(batch, 2816, device=dev, dtype=torch.bfloat16)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        pred = unet(x, t, context, y)
    loss = torch.nn.functional.mse_loss(pred.float(), x.float())
    loss.backward()
    optimizer.zero_grad(set_to_none=True)

for _ in range(4):
    step()
torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
start = time.time()
for _ in range(10):
    step()
torch.cuda.synchronize()
print("RESULT " + json.dumps({"what": "sd-scripts full UNet, Adafactor, fused backward", "batch": batch, "res": res, "gc": gc,
                              "step_ms": (time.time() - start) / 10 * 1000,
                              "peak_gib": torch.cuda.max_memory_allocated() / 2**30}))
