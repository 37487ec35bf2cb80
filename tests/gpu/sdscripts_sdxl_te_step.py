"""One SDXL LoRA training step of sd-scripts' own code with both text encoders trained (sd-scripts'
default, and 18 of kohya_ss's 19 SDXL LoRA presets): sdxl_original_unet's U-Net, transformers'
CLIPTextModel (CLIP-L) and CLIPTextModelWithProjection (OpenCLIP bigG) as sdxl_train_network.py
loads them, all three in bf16 and frozen, networks.lora rank 32 alpha 16 on the U-Net and both
encoders (lora_te1_, lora_te2_), fused AdamW, bf16 autocast, TF32 on; random weights, 1024x1024
bs1, 77 random tokens per encoder. The encoders run as train_util.get_hidden_states_sdxl runs them
(CLIP-L's hidden state 11, bigG's penultimate, bigG's pooled output through text_projection at
the end-of-text token), the conditioning vector is the pooled output and 1536 size-embedding values.

  compile: every U-Net block and every encoder layer through torch.compile (inductor, default
  mode), the per-block way. "unet" leaves the encoders out (their outputs random, as cached).
Run on the GPU machine with sd-scripts' library/ and networks/ on PYTHONPATH.
Usage: python3 sdscripts_sdxl_te_step.py {eager|compile} [te|unet]
Prints one RESULT {...} line: step_ms (mean of 10 steps after 4), first_step_s, peak_gib."""
import json
import sys
import time

import diffusers_names  # noqa: F401  (before sd-scripts' library: names it imports from diffusers)
import torch
import transformers
from library import sdxl_original_unet
from networks import lora

how = sys.argv[1]
with_te = (sys.argv[2] if len(sys.argv) > 2 else "te") == "te"
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
dev, dt = torch.device("cuda"), torch.bfloat16
torch.manual_seed(0)

with torch.device(dev):
    unet = sdxl_original_unet.SdxlUNet2DConditionModel()
    te1 = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
        max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=768))
    te2 = transformers.CLIPTextModelWithProjection(transformers.CLIPTextConfig(
        vocab_size=49408, hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_attention_heads=20,
        max_position_embeddings=77, hidden_act="gelu", projection_dim=1280))
unet.set_use_sdpa(True)
for m in (unet, te1, te2):
    m.requires_grad_(False)
    m.to(dt)
text_encoders = [te1, te2]
net = lora.create_network(1.0, 32, 16, None, text_encoders, unet)
net.apply_to(text_encoders, unet, apply_text_encoder=with_te, apply_unet=True)
net.to(dev)
net.train()
for m in (unet, te1, te2):
    m.train()
params = [p for p in net.parameters() if p.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4, fused=True)

if how == "compile":
    for mod in list(unet.input_blocks) + [unet.middle_block] + list(unet.output_blocks):
        for layer in mod:
            layer.compile(backend="inductor", mode="default", dynamic=None, fullgraph=False)
    if with_te:
        for te in text_encoders:  # by class: transformers 5 no longer nests them under text_model
            for layer in [m for m in te.modules() if type(m).__name__ == "CLIPEncoderLayer"]:
                layer.compile(backend="inductor", mode="default", dynamic=None, fullgraph=False)


def make_inputs():
    ids = [torch.randint(0, 49406, (1, 77), device=dev) for _ in range(2)]
    for i in ids:
        i[:, 0], i[:, 60] = 49406, 49407  # start and end of text
    return dict(x=torch.randn(1, 4, 128, 128, device=dev, dtype=dt), t=torch.randint(0, 1000, (1,), device=dev),
                ids1=ids[0], ids2=ids[1], sizes=torch.randn(1, 1536, device=dev, dtype=dt),
                context=torch.randn(1, 77, 2048, device=dev, dtype=dt), pool=torch.randn(1, 1280, device=dev, dtype=dt))


def step(inp):
    with torch.autocast("cuda", dtype=dt):
        if with_te:
            h1 = te1(inp["ids1"], output_hidden_states=True, return_dict=True)["hidden_states"][11]
            out2 = te2(inp["ids2"], output_hidden_states=True, return_dict=True)
            h2 = out2["hidden_states"][-2]
            last = out2["last_hidden_state"]
            eos = last[torch.arange(last.size(0), device=dev), inp["ids2"].argmax(dim=-1)]
            pool = te2.text_projection(eos.to(te2.text_projection.weight.dtype))
            context = torch.cat([h1, h2], dim=2)
        else:
            context, pool = inp["context"], inp["pool"]
        y = torch.cat([pool, inp["sizes"]], dim=1)
        out = unet(inp["x"], inp["t"], context, y)
        loss = torch.nn.functional.mse_loss(out.float(), inp["x"].float())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


inputs = [make_inputs() for _ in range(4)]
torch.cuda.synchronize()
t0 = time.time()
step(inputs[0])
torch.cuda.synchronize()
first = time.time() - t0
for i in range(3):
    step(inputs[(i + 1) % 4])
torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for i in range(10):
    step(inputs[i % 4])
end.record()
torch.cuda.synchronize()
print("RESULT " + json.dumps(dict(arch="sdxl", how=how, trained="U-Net + both text encoders" if with_te else "U-Net",
                                  step_ms=round(start.elapsed_time(end) / 10, 2), first_step_s=round(first, 2),
                                  peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2),
                                  lora_params=sum(p.numel() for p in params), torch=torch.__version__,
                                  transformers=transformers.__version__, gpu=torch.cuda.get_device_name())), flush=True)
