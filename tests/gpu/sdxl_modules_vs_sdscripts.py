"""The runner's full-size SDXL modules against sd-scripts' own, on the same random weights, in fp32.

Writes a full-size checkpoint with random weights (sinter-runner --init_checkpoint), loads it with
sd-scripts' own loader (library.sdxl_model_util.load_models_from_sdxl_checkpoint: its U-Net and
its transformers text encoders, with bigG converted from the open_clip layout), runs both sides on
the same inputs with TF32 off, and prints each output's relative error ||ours - theirs|| / ||theirs||.
Fails (exit 1) above 1e-5. sd-scripts' VAE is diffusers' AutoencoderKL, which the GPU machine
lacks, so the VAE is not compared here.

Usage, on the GPU machine, with sd-scripts' library/ and networks/ in .bench (README.md here):
  PYTHONPATH=.bench python3 tests/gpu/sdxl_modules_vs_sdscripts.py build-cuda/bin/sinter-runner [WORKDIR]
"""
import importlib.abc
import importlib.util
import json
import os
import subprocess
import sys
import types

import torch

LIMIT = 1e-5


# diffusers is not installed there; sd-scripts imports names from it that this check never uses.
class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (torch.nn.Module,), {"__init__": lambda self, *a, **k: torch.nn.Module.__init__(self)})
        setattr(self, name, cls)
        return cls


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "diffusers" or fullname.startswith("diffusers."):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []
        module.__version__ = "0.25.0"  # sd-scripts compares it when converting a VAE it never builds here


sys.meta_path.insert(0, _StubFinder())

from safetensors.torch import load_file, save_file  # noqa: E402
from library import sdxl_model_util  # noqa: E402

_load_on_device = sdxl_model_util._load_state_dict_on_device


def _load_skipping_stub_vae(model, state_dict, device, dtype=None):
    if isinstance(model, sys.modules["diffusers"].AutoencoderKL):
        return "not loaded: diffusers is not installed"
    # The GPU machine's transformers names CLIPTextModel's keys without "text_model." (sd-scripts
    # pins an older one that has it): the same tensors, under the names this version expects.
    expected = model.state_dict().keys()
    if any(k not in expected and k.startswith("text_model.") and k[len("text_model."):] in expected for k in state_dict):
        state_dict = {(k[len("text_model."):] if k not in expected and k.startswith("text_model.") else k): v
                      for k, v in state_dict.items()}
    return _load_on_device(model, state_dict, device, dtype)


sdxl_model_util._load_state_dict_on_device = _load_skipping_stub_vae


def relative_error(ours, theirs):
    ours, theirs = ours.double().cpu(), theirs.double().cpu()
    return ((ours - theirs).norm() / theirs.norm()).item()


def main():
    runner = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/sdxl_modules_vs_sdscripts"
    os.makedirs(work, exist_ok=True)
    checkpoint = os.path.join(work, "sdxl_random.safetensors")
    inputs_path, ours_path = os.path.join(work, "inputs.safetensors"), os.path.join(work, "ours.safetensors")
    if not os.path.exists(checkpoint):
        subprocess.run([runner, "--init_checkpoint", checkpoint, "--model_family", "sdxl", "--model_size", "full",
                        "--seed", "7"], check=True)

    # Batch 2 at 1024x1024 (128x128 latents), a late and an early timestep, 77 tokens.
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, 49406, (2, 77), generator=g)
    ids[:, 0], ids[:, 60:] = 49406, 49407  # <|startoftext|> ... <|endoftext|> and padding with it, as SDXL pads
    inputs = {"x": torch.randn(2, 4, 128, 128, generator=g), "timesteps": torch.tensor([999, 10]),
              "context": torch.randn(2, 77, 2048, generator=g), "y": torch.randn(2, 2816, generator=g),
              "input_ids": ids}
    save_file(inputs, inputs_path)
    subprocess.run([runner, "--module_outputs", ours_path, "--module_inputs", inputs_path,
                    "--pretrained_model_name_or_path", checkpoint], check=True)
    ours = load_file(ours_path)

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    te1, te2, _vae, unet, _logit_scale, _info = sdxl_model_util.load_models_from_sdxl_checkpoint(
        "sdxl_base_v1-0", checkpoint, "cpu")
    theirs = {}
    with torch.no_grad():
        unet = unet.float().to(dev).eval()
        unet.set_use_sdpa(True)
        theirs["unet"] = unet(inputs["x"].to(dev), inputs["timesteps"].to(dev), inputs["context"].to(dev),
                              inputs["y"].to(dev)).cpu()
        del unet
        torch.cuda.empty_cache()
        te1, te2 = te1.float().to(dev).eval(), te2.float().to(dev).eval()
        ids_dev = ids.to(dev)
        out1 = te1(ids_dev, output_hidden_states=True, return_dict=True)
        theirs["clip_l_hidden_last_layer"] = out1["hidden_states"][-1].cpu()  # SDXL trains on [11], one layer before
        theirs["clip_l_last"] = out1["last_hidden_state"].cpu()
        out2 = te2(ids_dev, output_hidden_states=True, return_dict=True)
        theirs["big_g_penultimate"] = out2["hidden_states"][-2].cpu()
        # sd-scripts' pool_workaround (library/train_util.py, which needs packages the GPU machine
        # lacks): the first <|endoftext|>'s final hidden state through text_projection. sd-scripts'
        # single-file loader puts open_clip's text_projection P ([width, projection], applied as
        # x @ P by SGM, ComfyUI and diffusers, whose text_encoder_2 stores P transposed) into the
        # Linear's weight untransposed, so its own pooled output is x @ P^T. The runner computes
        # the original's x @ P, with the same tensor: compared as the original, the quirk reported.
        eos = torch.argmax((ids_dev == 49407).int(), dim=1)
        last = out2["last_hidden_state"]
        pooled_hidden = last[torch.arange(last.shape[0], device=dev), eos]
        theirs["big_g_pooled"] = (pooled_hidden @ te2.text_projection.weight).cpu()
        sdscripts_pooled = te2.text_projection(pooled_hidden).cpu()

    failed = []
    rows = {}
    print(f"{'output':28s} {'shape':22s} relative error (limit {LIMIT:g})")
    for name, t in theirs.items():
        if name not in ours:
            failed.append(name + " (missing from the runner's outputs)")
            continue
        if tuple(ours[name].shape) != tuple(t.shape):
            failed.append(f"{name} (shape {tuple(ours[name].shape)} vs {tuple(t.shape)})")
            continue
        err = relative_error(ours[name], t)
        rows[name] = err
        print(f"{name:28s} {str(tuple(t.shape)):22s} {err:.3e}{'' if err <= LIMIT else '  FAIL'}")
        if not err <= LIMIT:
            failed.append(f"{name} ({err:.3e})")
    quirk = relative_error(ours["big_g_pooled"], sdscripts_pooled) if "big_g_pooled" in ours else float("nan")
    print(f"big_g_pooled against sd-scripts' own x @ P^T (not compared; see above): relative difference {quirk:.3e}")
    print("RESULT " + json.dumps({"relative_error": rows, "limit": LIMIT, "failed": failed,
                                  "big_g_pooled_vs_sdscripts_transposed_projection": quirk}))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
