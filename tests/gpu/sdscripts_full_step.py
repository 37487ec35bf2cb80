"""The reference for the full fine-tune benchmark: one step of sd-scripts' SDXL UNet or FLUX.1-dev
transformer trained whole, as sdxl_train.py's and flux_train.py's low-memory recipes do it
(full_bf16, Adafactor with scale_parameter, relative_step and warmup_init off, fused_backward_pass
through library/adafactor_fused.py and a post-accumulate-grad hook per parameter, max_grad_norm
1.0 clipping each gradient by its own norm; FLUX optionally with blocks_to_swap, set up as
flux_train.py does), random weights, bs1, eager. Run on the GPU machine with sd-scripts' library/
on PYTHONPATH.
Usage: python3 sdscripts_full_step.py {sdxl|flux} [batch] [res] [gc|nogc] [blocks_to_swap]
Prints RESULT {"step_ms": mean of 10 steps after 4, "peak_gib": ...}."""
import json, sys, time

import diffusers_names  # noqa: F401  (before sd-scripts' library: names it imports from diffusers)
import torch
import transformers
from library import adafactor_fused, sdxl_original_unet

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
family = sys.argv[1]
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 1
res = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
gc = len(sys.argv) > 4 and sys.argv[4] == "gc"
swap = int(sys.argv[5]) if len(sys.argv) > 5 else 0
dev = torch.device("cuda")
torch.manual_seed(0)
if family == "sdxl":
    with torch.device(dev):
        model = sdxl_original_unet.SdxlUNet2DConditionModel()
    model.set_use_sdpa(True)
else:
    from library import flux_models
    with torch.device(dev):
        model = flux_models.Flux(flux_models.configs["dev"].params)
model.to(torch.bfloat16)
if gc:
    model.enable_gradient_checkpointing()
if swap:
    model.enable_block_swap(swap, dev)
    model.move_to_device_except_swap_blocks(dev)
    model.prepare_block_swap_before_forward()
model.train()
params = [p for p in model.parameters()]
optimizer = transformers.optimization.Adafactor(params, lr=1e-5, scale_parameter=False, relative_step=False, warmup_init=False)
adafactor_fused.patch_adafactor_fused(optimizer)
for group in optimizer.param_groups:
    for p in group["params"]:
        def hook(tensor, group=group):
            torch.nn.utils.clip_grad_norm_(tensor, 1.0)
            optimizer.step_param(tensor, group)
            tensor.grad = None
        p.register_post_accumulate_grad_hook(hook)

bf16 = torch.bfloat16
def forward():
    if family == "sdxl":
        lat = res // 8
        x = torch.randn(batch, 4, lat, lat, device=dev, dtype=bf16)
        t = torch.randint(0, 1000, (batch,), device=dev)
        context = torch.randn(batch, 77, 2048, device=dev, dtype=bf16)
        y = torch.randn(batch, 2816, device=dev, dtype=bf16)
        return model(x, t, context, y), x
    n_img = (res // 16) ** 2
    img = torch.randn(batch, n_img, 64, device=dev, dtype=bf16)
    out = model(img=img, img_ids=torch.zeros(batch, n_img, 3, device=dev, dtype=bf16),
                txt=torch.randn(batch, 512, 4096, device=dev, dtype=bf16), txt_ids=torch.zeros(batch, 512, 3, device=dev, dtype=bf16),
                timesteps=torch.rand(batch, device=dev, dtype=bf16), y=torch.randn(batch, 768, device=dev, dtype=bf16),
                guidance=torch.full((batch,), 1.0, device=dev, dtype=bf16))
    return out, img

def step():
    with torch.autocast("cuda", dtype=bf16):
        pred, target = forward()
    loss = torch.nn.functional.mse_loss(pred.float(), target.float())
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
what = "full UNet" if family == "sdxl" else "full FLUX.1-dev transformer" + (f", blocks_to_swap {swap}" if swap else "")
print("RESULT " + json.dumps({"what": f"sd-scripts {what}, Adafactor, fused backward", "batch": batch, "res": res, "gc": gc,
                              "step_ms": (time.time() - start) / 10 * 1000,
                              "peak_gib": torch.cuda.max_memory_allocated() / 2**30}))
