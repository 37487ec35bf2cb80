"""Times sd-scripts' own SD 3.5 LoRA step (sd3_train_network.py's), set up as it sets it up: the MMDiT
built by sd3_models.create_sd3_mmdit at SD 3.5 Medium's (or Large's) shape in bf16 on the GPU,
networks.lora_sd3 rank 32 alpha 16 on the MMDiT (network_train_unet_only), fused AdamW, bf16 autocast,
1024x1024 latents bs1, cached text outputs (context 77 + 256 tokens, pooled 2048), the objective of
sd3_train_utils.get_noisy_model_input_and_timesteps and get_noise_pred_and_target (uniform weighting,
training_shift 1), random weights.

Usage: python3 sdscripts_sd3_step.py [medium|large] [BLOCKS_TO_SWAP]
(BLOCKS_TO_SWAP: sd3_train_network's enable_block_swap, move_to_device_except_swap_blocks and
prepare_block_swap_before_forward, as it sets the MMDiT up.)
Prints one RESULT {...} line: step_ms (mean of 6 steps after 3), peak_gib."""
import json
import sys
import time

import torch

from step_timer import time_steps
import diffusers_names  # noqa: F401  (before sd-scripts' library: names it imports from diffusers)
from library import sd3_models  # noqa: E402
from networks import lora_sd3  # noqa: E402

large = (sys.argv[1] if len(sys.argv) > 1 else "medium") == "large"
swap = int(sys.argv[2]) if len(sys.argv) > 2 else 0
dev = torch.device("cuda", 0)
dt = torch.bfloat16
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.manual_seed(0)

t_build = time.time()
depth, attn2, pos = (38, [], 192) if large else (24, list(range(13)), 384)
p = sd3_models.SD3Params(patch_size=2, depth=depth, num_patches=pos * pos, pos_embed_max_size=pos, adm_in_channels=2048,
                         qk_norm="rms", x_block_self_attn_layers=attn2, context_embedder_in_features=4096,
                         context_embedder_out_features=64 * depth, model_type="5-large" if large else "5-medium")
with torch.device(dev):
    torch.set_default_dtype(dt)
    model = sd3_models.create_sd3_mmdit(p, attn_mode="torch")
    torch.set_default_dtype(torch.float32)
model.requires_grad_(False)
if swap:
    model.enable_block_swap(swap, dev)
    model.move_to_device_except_swap_blocks(dev)
    model.prepare_block_swap_before_forward()
no_text_encoders = [torch.nn.Module(), torch.nn.Module()]  # cached outputs: the text encoders get no LoRA
net = lora_sd3.create_network(1.0, 32, 16, None, no_text_encoders, model)
net.apply_to(no_text_encoders, model, apply_text_encoder=False, apply_unet=True)
net.to(dev)
net.train()
model.train()
params = [q for q in net.parameters() if q.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
t_build = time.time() - t_build


def make_inputs():
    return dict(latents=torch.randn(1, 16, 128, 128, device=dev, dtype=dt), context=torch.randn(1, 333, 4096, device=dev, dtype=dt),
                pooled=torch.randn(1, 2048, device=dev, dtype=dt))


def step(inp):
    latents = inp["latents"]
    noise = torch.randn_like(latents)
    u = torch.rand(1)  # weighting_scheme uniform: compute_density_for_timestep_sampling
    timesteps = (u * 1000).long().to(device=dev, dtype=dt)
    sigmas = (timesteps / 1000).view(-1, 1, 1, 1)
    noisy = sigmas * noise + (1.0 - sigmas) * latents
    with torch.autocast("cuda", dtype=dt):
        pred = model(noisy, timesteps, context=inp["context"], y=inp["pooled"])
    pred = pred * (-sigmas) + noisy
    loss = torch.nn.functional.mse_loss(pred.float(), latents.float())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


inputs = [make_inputs() for _ in range(2)]
first, ms = time_steps(step, inputs)
print("RESULT " + json.dumps(dict(what=f"sd-scripts SD 3.5 {'Large' if large else 'Medium'} LoRA rank 32, eager" + (f", blocks_to_swap {swap}" if swap else ""), step_ms=round(ms, 1),
                                  first_step_s=round(first, 2), build_s=round(t_build, 1),
                                  peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2), torch=torch.__version__,
                                  gpu=torch.cuda.get_device_name())), flush=True)
