"""One LyCORIS training step of sd-scripts' own SDXL UNet (random weights, real architecture),
eager, the way sd-scripts trains with network_module = "lycoris.kohya": LyCORIS's own modules
(preset attn-mlp, the modules networks.lora adapts; dim 32, alpha 16; LoKr factor 8), fp32
network, fused AdamW, bf16 autocast, TF32 on. The anchor for sinter-runner --benchmark_networks.
Needs sd-scripts' library/ and LyCORIS's lycoris/ on PYTHONPATH (the carried .bench folder).
Usage: python3 sdscripts_lycoris_step.py ALGO [key=value ...]   e.g. lokr factor=8, locon dora_wd=True"""
import json, sys, time, types

class _Name:  # sd-scripts imports a few diffusers names that the step never uses
    pass
for name, attrs in [("diffusers", dict(AutoencoderKL=_Name, EulerAncestralDiscreteScheduler=_Name)),
                    ("diffusers.schedulers", {}),
                    ("diffusers.schedulers.scheduling_euler_ancestral_discrete",
                     dict(EulerAncestralDiscreteSchedulerOutput=_Name))]:
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m
for name in ("einops", "toml"):  # imported by LyCORIS modules (BOFT, presets from files) this step does not run
    try:
        __import__(name)
    except ImportError:
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].rearrange = None

import torch
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
from library import sdxl_original_unet
from lycoris import kohya as lycoris_kohya

algo = sys.argv[1]
extra = dict(a.split("=", 1) for a in sys.argv[2:])
dev, dt = torch.device("cuda"), torch.bfloat16
torch.manual_seed(0)
with torch.device(dev):
    model = sdxl_original_unet.SdxlUNet2DConditionModel()
model.set_use_sdpa(True)
model.to(dt)
for p in model.parameters():
    p.requires_grad_(False)
net = lycoris_kohya.create_network(1.0, 32, 16, None, [], model, algo=algo, preset="attn-mlp", **extra)
net.apply_to([], model, apply_text_encoder=False, apply_unet=True)
net.to(dev, dtype=torch.float32)
net.train()
model.train()
params = [p for p in net.parameters() if p.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4, fused=True)

def inputs():
    return (torch.randn(1, 4, 128, 128, device=dev, dtype=dt), torch.randint(0, 1000, (1,), device=dev),
            torch.randn(1, 77, 2048, device=dev, dtype=dt), torch.randn(1, 2816, device=dev, dtype=dt))

def step(inp):
    with torch.autocast("cuda", dtype=dt):
        out = model(*inp)
        loss = torch.nn.functional.mse_loss(out.float(), inp[0].float())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

batches = [inputs() for _ in range(4)]
for i in range(4):
    step(batches[i])
torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for i in range(10):
    step(batches[i % 4])
end.record()
torch.cuda.synchronize()
print("RESULT " + json.dumps(dict(algo=algo, args=extra, modules=len(net.unet_loras), params=sum(p.numel() for p in params),
                                  step_ms=round(start.elapsed_time(end) / 10, 2),
                                  peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2),
                                  gpu=torch.cuda.get_device_name(), torch=torch.__version__)), flush=True)
