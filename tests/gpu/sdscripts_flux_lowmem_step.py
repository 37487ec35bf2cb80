"""Times sd-scripts' own FLUX.1-dev LoRA step with its low-memory settings (its README's 12 GB
recipe: --fp8_base --blocks_to_swap 16 --gradient_checkpointing), set up as flux_train_network.py
and train_network.py set them up: the transformer cast to float8_e4m3fn on the CPU
(model.to(torch.float8_e4m3fn)), enable_block_swap, move_to_device_except_swap_blocks,
prepare_block_swap_before_forward, bf16 autocast; networks.lora_flux rank 32 alpha 16 with fused
AdamW, as shared/bench/sdscripts_step.py (random weights, 1024x1024 bs1, 512 T5 tokens).

With CAP_GIB the allocator is capped (torch.cuda.set_per_process_memory_fraction) to emulate a card
of that size. sdscripts_step.py in /work/shared/bench cannot run this recipe: it builds the model
on the GPU in bf16 (23.8 GB) and has neither fp8_base nor blocks_to_swap.

With MODEL chroma it is sd-scripts' Chroma LoRA step instead (flux_train_network.py --model_type
chroma): chroma_models.Chroma at full size, its modulation vectors made under no_grad before the
forward as that script makes them, guidance 0, the T5 mask of a 77-token caption in 512 (the text
trimmed to 78 tokens per sample, as Chroma.forward does).

Usage: python3 sdscripts_flux_lowmem_step.py [blocks_to_swap=16] [fp8|nofp8] [gc|nogc] [CAP_GIB] [flux|chroma]
Prints one RESULT {...} line: step_ms (mean of 6 steps after 3), peak_gib."""
import json
import sys
import time

import torch

from step_timer import time_steps
import diffusers_names  # noqa: F401  (before sd-scripts' library: names it imports from diffusers)

swap = int(sys.argv[1]) if len(sys.argv) > 1 else 16
fp8 = (sys.argv[2] if len(sys.argv) > 2 else "fp8") == "fp8"
gc = (sys.argv[3] if len(sys.argv) > 3 else "gc") == "gc"
cap = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
chroma = (sys.argv[5] if len(sys.argv) > 5 else "flux") == "chroma"
dev = torch.device("cuda", 0)  # an index: set_per_process_memory_fraction refuses a bare "cuda"
dt = torch.bfloat16
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
if cap > 0:
    total = torch.cuda.get_device_properties(dev).total_memory
    torch.cuda.set_per_process_memory_fraction(cap * 2**30 / total, dev)
torch.manual_seed(0)

from library import chroma_models, flux_models  # noqa: E402
from networks import lora_flux  # noqa: E402

t_build = time.time()
torch.set_default_dtype(dt)  # the transformer is built on the CPU in bf16 (as loaded from a bf16 file)
model = chroma_models.Chroma(chroma_models.chroma_params) if chroma else flux_models.Flux(flux_models.configs["dev"].params)
torch.set_default_dtype(torch.float32)
if fp8:
    model.to(torch.float8_e4m3fn)  # flux_train_network.py: "Cast FLUX model to fp8"
model.requires_grad_(False)
if gc:
    model.enable_gradient_checkpointing(cpu_offload=False)
if swap > 0:
    model.enable_block_swap(swap, dev)  # flux_train_network.py load_target_model, before the network
net = lora_flux.create_network(1.0, 32, 16, None, [None, None], model)
net.apply_to([None, None], model, apply_text_encoder=False, apply_unet=True)
if swap > 0:
    model.move_to_device_except_swap_blocks(dev)  # prepare_unet_with_accelerator
    model.prepare_block_swap_before_forward()
else:
    model.to(dev)
net.to(dev)
net.train()
model.train()
params = [p for p in net.parameters() if p.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
t_build = time.time() - t_build

n_img = (1024 // 16) ** 2
def make_inputs():
    return dict(img=torch.randn(1, n_img, 64, device=dev, dtype=dt), img_ids=torch.zeros(1, n_img, 3, device=dev, dtype=dt),
                txt=torch.randn(1, 512, 4096, device=dev, dtype=dt), txt_ids=torch.zeros(1, 512, 3, device=dev, dtype=dt),
                timesteps=torch.rand(1, device=dev, dtype=dt), y=torch.randn(1, 768, device=dev, dtype=dt),
                guidance=torch.full((1,), 0.0 if chroma else 1.0, device=dev, dtype=dt),
                mask=(torch.arange(512, device=dev) < 77).long()[None])

def step(inp):
    with torch.autocast("cuda", dtype=dt):
        if chroma:  # flux_train_network.py: the modulation vectors under no_grad, then the forward with the T5 mask
            with torch.no_grad():
                mod_vectors = model.get_mod_vectors(timesteps=inp["timesteps"], guidance=inp["guidance"], batch_size=1)
            out = model(img=inp["img"], img_ids=inp["img_ids"], txt=inp["txt"], txt_ids=inp["txt_ids"], timesteps=inp["timesteps"],
                        y=inp["y"], guidance=inp["guidance"], txt_attention_mask=inp["mask"], mod_vectors=mod_vectors)
        else:
            out = model(img=inp["img"], img_ids=inp["img_ids"], txt=inp["txt"], txt_ids=inp["txt_ids"],
                        timesteps=inp["timesteps"], y=inp["y"], guidance=inp["guidance"])
        loss = torch.nn.functional.mse_loss(out.float(), inp["img"].float())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

inputs = [make_inputs() for _ in range(2)]
first, ms = time_steps(step, inputs)
print("RESULT " + json.dumps(dict(what=f"sd-scripts {'Chroma' if chroma else 'FLUX'} LoRA, blocks_to_swap {swap}, fp8_base {fp8}, gradient checkpointing {gc}",
                                  cap_gib=cap, step_ms=round(ms, 1), first_step_s=round(first, 2), build_s=round(t_build, 1),
                                  peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2), torch=torch.__version__,
                                  gpu=torch.cuda.get_device_name())), flush=True)
