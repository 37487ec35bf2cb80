"""SD 1.x/2.x against sd-scripts' own models (train_network.py's), three checks in one script.

  names OUTDIR           the LoRA modules sd-scripts' networks.lora creates for SD 1.5 and SD 2.1
                         (full configs: model_util's UNet and CLIPTextModel configs, built on the
                         meta device), with and without conv_dim: "<lora name> <kernel>" per line,
                         0 for a Linear. Kept as tests/data/sd_lora/*.txt.
  modules RUNNER [WORK]  the runner's full-size UNet and text encoder against sd-scripts' on the same
                         random weights (sinter-runner --init_checkpoint, loaded by sd-scripts'
                         model_util.load_models_from_stable_diffusion_checkpoint), fp32, TF32 off:
                         relative error per output, fails above 1e-5.
  step [RES] [BATCH] [v2]  one LoRA training step of sd-scripts' SD 1.5 UNet (SD 2.1's with v2:
                         linear projections, 1024-wide context) (original_unet, SDPA, networks.lora
                         rank 32 on its default targets, fused AdamW, bf16 autocast), eager, as
                         sdscripts_step.py times SDXL's.

Needs sd-scripts' library/ and networks/ on PYTHONPATH (.bench, tests/gpu/README.md). The GPU
machine has no diffusers: the names sd-scripts imports from it are stubbed (its VAE is not built).
"""
import json
import os
import subprocess
import sys
import time
import types

import torch


class _Name(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def load_state_dict(self, *args, **kwargs):  # the stubbed VAE: nothing to load, nothing compared
        return "not loaded: diffusers is not installed"


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Name


for _name in ("diffusers", "diffusers.schedulers", "diffusers.schedulers.scheduling_euler_ancestral_discrete"):
    sys.modules[_name] = _StubModule(_name)
sys.modules["diffusers"].__version__ = "0.25.0"

from transformers import CLIPTextConfig, CLIPTextModel  # noqa: E402
from library import model_util, original_unet  # noqa: E402


class _ClipTextModel(CLIPTextModel):
    # The GPU machine's transformers names CLIPTextModel's keys without "text_model." and keeps
    # position_ids out of the state (sd-scripts pins an older one): the same tensors, under the
    # names this version expects.
    def load_state_dict(self, state_dict, strict=True, **kwargs):
        expected = set(self.state_dict().keys())
        renamed = {}
        for k, v in state_dict.items():
            if k not in expected and k.startswith("text_model.") and k[len("text_model."):] in expected:
                k = k[len("text_model."):]
            if k in expected:
                renamed[k] = v
            elif not k.endswith("position_ids"):
                raise KeyError(f"unexpected text encoder key {k}")
        return super().load_state_dict(renamed, strict=strict, **kwargs)


model_util.CLIPTextModel = _ClipTextModel

LIMIT = 1e-5


def text_config(v2):
    # model_util.load_models_from_stable_diffusion_checkpoint's configs
    if v2:
        return CLIPTextConfig(vocab_size=49408, hidden_size=1024, intermediate_size=4096, num_hidden_layers=23,
                              num_attention_heads=16, max_position_embeddings=77, hidden_act="gelu")
    return CLIPTextConfig(vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                          num_attention_heads=12, max_position_embeddings=77, hidden_act="quick_gelu")


def with_text_model(model):
    # sd-scripts' transformers (4.x) names CLIP's modules text_model.encoder...; a newer
    # CLIPTextModel may be the text transformer itself. The listing wants sd-scripts' names.
    if hasattr(model, "text_model"):
        return model
    holder = torch.nn.Module()
    holder.text_model = model
    return holder


def names(outdir):
    from networks import lora
    os.makedirs(outdir, exist_ok=True)
    # LoRANetwork.__init__ extends its class's UNET_TARGET_REPLACE_MODULE in place (+=) when conv
    # blocks are asked for, so every later network of the process would target them too: each
    # listing starts from the class's own list, as a fresh training process does.
    unet_targets = list(lora.LoRANetwork.UNET_TARGET_REPLACE_MODULE)
    for v2 in (False, True):
        with torch.device("meta"):
            unet = original_unet.UNet2DConditionModel(**model_util.create_unet_diffusers_config(v2, True))
            text = with_text_model(CLIPTextModel(text_config(v2)))
        for conv_dim in (None, 4):
            kwargs = {"conv_dim": conv_dim, "conv_alpha": 1} if conv_dim else {}
            lora.LoRANetwork.UNET_TARGET_REPLACE_MODULE = list(unet_targets)
            net = lora.create_network(1.0, 8, 4, None, text, unet, **kwargs)
            lines = []
            for m in net.text_encoder_loras + net.unet_loras:
                org = m.org_module
                kernel = 0 if isinstance(org, torch.nn.Linear) else org.kernel_size[0]
                lines.append(f"{m.lora_name} {kernel}")
            name = f"{'sd21' if v2 else 'sd15'}{'_conv_dim' if conv_dim else ''}.txt"
            with open(os.path.join(outdir, name), "w") as f:
                f.write("\n".join(sorted(lines)) + "\n")
            print(f"{name}: {len(lines)} modules")


def relative_error(ours, theirs):
    ours, theirs = ours.double().cpu(), theirs.double().cpu()
    return ((ours - theirs).norm() / theirs.norm()).item()


def modules(runner, work):
    os.makedirs(work, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    from safetensors.torch import load_file, save_file
    dev = torch.device("cuda")
    rows, failed = {}, []
    for family, v2 in (("sd15", False), ("sd2", True)):
        checkpoint = os.path.join(work, family + "_random.safetensors")
        if not os.path.exists(checkpoint):
            subprocess.run([runner, "--init_checkpoint", checkpoint, "--model_family", family, "--model_size", "full",
                            "--seed", "7"], check=True)
        g = torch.Generator().manual_seed(1234)
        ids = torch.randint(0, 49406, (2, 77), generator=g)
        ids[:, 0], ids[:, 60:] = 49406, 49407
        if v2:
            ids[:, 61:] = 0  # SD 2.x pads with "!" (0) after the <|endoftext|>
        width = 1024 if v2 else 768
        inputs = {"x": torch.randn(2, 4, 64, 64, generator=g), "timesteps": torch.tensor([999, 10]),
                  "context": torch.randn(2, 77, width, generator=g), "input_ids": ids}
        inputs_path, ours_path = os.path.join(work, family + "_inputs.safetensors"), os.path.join(work, family + "_ours.safetensors")
        save_file(inputs, inputs_path)
        subprocess.run([runner, "--module_outputs", ours_path, "--module_inputs", inputs_path, "--model_family", family,
                        "--pretrained_model_name_or_path", checkpoint], check=True)
        ours = load_file(ours_path)

        text, _vae, unet = model_util.load_models_from_stable_diffusion_checkpoint(v2, checkpoint, "cpu")
        theirs = {}
        with torch.no_grad():
            unet = unet.float().to(dev).eval()
            unet.set_use_sdpa(True)
            theirs["unet"] = unet(inputs["x"].to(dev), inputs["timesteps"].to(dev), inputs["context"].to(dev)).sample.cpu()
            del unet
            text = text.float().to(dev).eval()
            out = text(ids.to(dev), output_hidden_states=True, return_dict=True)
            final_norm = text.text_model.final_layer_norm if hasattr(text, "text_model") else text.final_layer_norm
            theirs["text_clip_skip1"] = out["last_hidden_state"].cpu()  # strategy_sd.py without clip_skip
            theirs["text_clip_skip2"] = final_norm(out["hidden_states"][-2]).cpu()
            del text
            torch.cuda.empty_cache()
        for name, t in theirs.items():
            key = f"{family}_{name}"
            if name not in ours or tuple(ours[name].shape) != tuple(t.shape):
                failed.append(key + " (missing or misshapen)")
                continue
            err = relative_error(ours[name], t)
            rows[key] = err
            print(f"{key:24s} {str(tuple(t.shape)):22s} {err:.3e}{'' if err <= LIMIT else '  FAIL'}")
            if not err <= LIMIT:
                failed.append(f"{key} ({err:.3e})")
    print("RESULT " + json.dumps({"relative_error": rows, "limit": LIMIT, "failed": failed}))
    return 1 if failed else 0


def step(res, batch, v2=False):
    from networks import lora
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev, dt = torch.device("cuda"), torch.bfloat16
    torch.manual_seed(0)
    with torch.device(dev):
        unet = original_unet.UNet2DConditionModel(**model_util.create_unet_diffusers_config(v2, v2))
    unet.set_use_sdpa(True)
    unet.to(dt)
    net = lora.create_network(1.0, 32, 16, None, [], unet)
    net.apply_to([], unet, apply_text_encoder=False, apply_unet=True)
    for p in unet.parameters():
        p.requires_grad_(False)
    net.to(dev)
    net.train()
    unet.train()
    params = [p for p in net.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
    lat = res // 8

    def make():
        return (torch.randn(batch, 4, lat, lat, device=dev, dtype=dt), torch.randint(0, 1000, (batch,), device=dev),
                torch.randn(batch, 77, 1024 if v2 else 768, device=dev, dtype=dt))

    def one(inp):
        with torch.autocast("cuda", dtype=dt):
            out = unet(*inp).sample
            loss = torch.nn.functional.mse_loss(out.float(), inp[0].float())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    inputs = [make() for _ in range(4)]
    for i in range(4):
        one(inputs[i % 4])
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(20):
        one(inputs[i % 4])
    end.record()
    torch.cuda.synchronize()
    print("RESULT " + json.dumps(dict(arch="sd21" if v2 else "sd15", how="eager", batch=batch, res=res, step_ms=round(start.elapsed_time(end) / 20, 2),
                                      peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2),
                                      lora_modules=len(net.unet_loras), gpu=torch.cuda.get_device_name())), flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "names":
        names(sys.argv[2])
    elif mode == "modules":
        sys.exit(modules(os.path.abspath(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "/tmp/sd_vs_sdscripts"))
    else:
        step(int(sys.argv[2]) if len(sys.argv) > 2 else 512, int(sys.argv[3]) if len(sys.argv) > 3 else 1,
             len(sys.argv) > 4 and sys.argv[4] == "v2")
