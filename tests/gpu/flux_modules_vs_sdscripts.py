"""The runner's FLUX.1 and Chroma transformers and autoencoder against sd-scripts' own, on the same random
weights, in fp32.

Builds sd-scripts' library.flux_models.Flux at full width with a reduced depth (2 double and 2 single
blocks; every block of the released models is one of these), as dev (guidance_in) and as schnell,
library.chroma_models.Chroma likewise (its full approximator: 64 -> 5120, 5 layers; the T5 mask with
one sample's caption shorter than the other's), and its AutoEncoder at full size, with random weights (the RMSNorm scales drawn too, so that they matter);
saves them in BFL's layout (flux1-dev.safetensors' and ae.safetensors' keys), runs the runner on them
(sinter-runner --module_outputs --model_family flux) and sd-scripts on the same inputs with TF32 off,
and prints each output's relative error ||ours - theirs|| / ||theirs||, and for Chroma and the
autoencoder each side's error against sd-scripts' modules run in float64; and networks.lora_flux's
create_network on a full-size Chroma (meta device) beside --print_lora_layout --model_type chroma.
Fails (exit 1) above 1e-5, unless ours is as close to the float64 outputs as sd-scripts' float32 (the
difference then is sd-scripts' rounding as much as ours), or where the LoRA module names differ.

Usage, on the GPU machine, with sd-scripts' library/ in .bench (README.md here):
  PYTHONPATH=.bench python3 tests/gpu/flux_modules_vs_sdscripts.py build-cuda/bin/sinter-runner [WORKDIR]
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


# diffusers is not installed there; library.utils (imported by flux_models) imports names from it
# that this check never uses.
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
        module.__version__ = "0.25.0"


sys.meta_path.insert(0, _StubFinder())

from safetensors.torch import load_file, save_file  # noqa: E402
from library import chroma_models, flux_models  # noqa: E402


def relative_error(ours, theirs):
    ours, theirs = ours.double().cpu(), theirs.double().cpu()
    return ((ours - theirs).norm() / theirs.norm()).item()


def image_ids(batch, h, w):
    # sd-scripts' flux_utils.prepare_img_ids (that module imports text encoders this check does not need)
    ids = torch.zeros(h, w, 3)
    ids[..., 1] += torch.arange(h)[:, None]
    ids[..., 2] += torch.arange(w)[None, :]
    return ids.reshape(1, h * w, 3).repeat(batch, 1, 1)


def with_random_scales(model):
    # The RMSNorm scales drawn too (their initial ones would hide a misuse).
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".scale"):
                p.uniform_(0.5, 1.5)
    return model


def ae_outputs(ae, images):
    latents = ae.encode(images)  # scale_factor * (mean - shift_factor)
    return {"ae_mean": torch.chunk(ae.encoder(images), 2, dim=1)[0].cpu(), "ae_latents": latents.cpu(),
            "ae_decoded": ae.decode(latents).cpu()}


def save_state(module, path):
    save_file({k: v.detach().contiguous().cpu() for k, v in module.state_dict().items()}, path)


def chroma_lora_names(runner):
    """networks.lora_flux's create_network on a full-size Chroma (meta device) beside the runner's
    --print_lora_layout --model_type chroma: the U-Net module names each makes."""
    from networks import lora_flux
    with torch.device("meta"):
        model = chroma_models.Chroma(chroma_models.chroma_params)
    net = lora_flux.create_network(1.0, 4, 1.0, None, [None, None], model)
    theirs = sorted(m.lora_name for m in net.unet_loras)
    out = subprocess.run([runner, "--print_lora_layout", "--model_family", "flux", "--model_type", "chroma", "--network_train_unet_only"],
                         check=True, capture_output=True, text=True).stdout
    ours = sorted(m["name"] for m in json.loads(out)["modules"])
    return ours, theirs


def main():
    runner = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/flux_modules_vs_sdscripts"
    os.makedirs(work, exist_ok=True)
    dev_path, schnell_path = os.path.join(work, "flux_dev_2x2.safetensors"), os.path.join(work, "flux_schnell_2x2.safetensors")
    ae_path = os.path.join(work, "ae.safetensors")
    inputs_path = os.path.join(work, "inputs.safetensors")

    torch.manual_seed(7)
    models = {}
    for variant, path in (("dev", dev_path), ("schnell", schnell_path)):
        params = flux_models.configs[variant].params
        params = type(params)(**{**params.__dict__, "depth": 2, "depth_single_blocks": 2})
        model = with_random_scales(flux_models.Flux(params))
        save_state(model, path)
        models[variant] = model
    chroma_path = os.path.join(work, "chroma_2x2.safetensors")
    params = chroma_models.ChromaParams(**{**chroma_models.chroma_params.__dict__, "depth": 2, "depth_single_blocks": 2})
    chroma = with_random_scales(chroma_models.Chroma(params))
    save_state(chroma, chroma_path)
    ae = flux_models.AutoEncoder(flux_models.configs["dev"].ae_params)
    save_state(ae, ae_path)

    # Batch 2 at 512x512 (64x64 latents, 32x32 = 1024 tokens), 256 text tokens, a late and an early sigma.
    g = torch.Generator().manual_seed(1234)
    b, h, w, t = 2, 32, 32, 256
    inputs = {"img": torch.randn(b, h * w, 64, generator=g), "img_ids": image_ids(b, h, w),
              "txt": torch.randn(b, t, 4096, generator=g), "txt_ids": torch.zeros(b, t, 3),
              "timesteps": torch.tensor([0.9, 0.3]), "y": torch.randn(b, 768, generator=g),
              "guidance": torch.tensor([3.5, 1.0]), "images": torch.rand(b, 3, 256, 256, generator=g) * 2 - 1,
              # Chroma: the first caption 77 tokens long, the second filling all 256
              "txt_mask": torch.cat([(torch.arange(t) < 77).long()[None], torch.ones(1, t, dtype=torch.long)])}
    save_file(inputs, inputs_path)
    ours = {}
    for variant, path in (("dev", dev_path), ("schnell", schnell_path), ("chroma", chroma_path)):
        out_path = os.path.join(work, f"ours_{variant}.safetensors")
        args = [runner, "--module_outputs", out_path, "--module_inputs", inputs_path, "--model_family", "flux",
                "--pretrained_model_name_or_path", path]
        if variant == "dev":
            args += ["--ae", ae_path]
        subprocess.run(args, check=True)
        for name, tensor in load_file(out_path).items():
            ours[f"{variant}_flux" if name in ("flux", "chroma") else name] = tensor

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    x = {k: v.to(dev) for k, v in inputs.items()}
    theirs, exact = {}, {}
    with torch.no_grad():
        for variant, model in models.items():
            model = model.float().to(dev).eval()
            theirs[f"{variant}_flux"] = model(img=x["img"], img_ids=x["img_ids"], txt=x["txt"], txt_ids=x["txt_ids"],
                                              timesteps=x["timesteps"], y=x["y"],
                                              guidance=x["guidance"] if variant == "dev" else None).cpu()
            model.cpu()
        chroma = chroma.float().to(dev).eval()
        theirs["chroma_flux"] = chroma(img=x["img"], img_ids=x["img_ids"], txt=x["txt"], txt_ids=x["txt_ids"],
                                       timesteps=x["timesteps"], y=x["y"], guidance=x["guidance"],
                                       txt_attention_mask=x["txt_mask"]).cpu()
        chroma.cpu()
        ae = ae.float().to(dev).eval()
        ae.reg.sample = False  # the mean, as the runner's deterministic output
        theirs.update(ae_outputs(ae, x["images"]))
        # sd-scripts' Chroma and autoencoder again in float64: the exact outputs both fp32 results are
        # measured against, so that a difference above the limit shows whose rounding it is.
        x64 = {k: v.double() if v.is_floating_point() else v for k, v in x.items()}
        try:
            exact["chroma_flux"] = chroma.double().to(dev)(
                img=x64["img"], img_ids=x64["img_ids"], txt=x64["txt"], txt_ids=x64["txt_ids"], timesteps=x64["timesteps"],
                y=x64["y"], guidance=x64["guidance"], txt_attention_mask=x["txt_mask"]).cpu()
            chroma.cpu()
            exact.update(ae_outputs(ae.double(), x64["images"]))
        except Exception as e:  # the float32 comparison stands without it
            print(f"float64 pass failed: {type(e).__name__}: {e}")

    failed = []
    rows = {}
    ours_names, theirs_names = chroma_lora_names(runner)
    print(f"Chroma LoRA modules: {len(ours_names)} ours, {len(theirs_names)} sd-scripts', "
          f"{'the same names' if ours_names == theirs_names else 'DIFFERENT'}")
    if ours_names != theirs_names:
        failed.append(f"chroma LoRA names (only ours {sorted(set(ours_names) - set(theirs_names))[:3]}, "
                      f"only theirs {sorted(set(theirs_names) - set(ours_names))[:3]})")
    print(f"{'output':16s} {'shape':24s} relative error (limit {LIMIT:g})")
    for name, tensor in theirs.items():
        if name not in ours:
            failed.append(name + " (missing from the runner's outputs)")
            continue
        if tuple(ours[name].shape) != tuple(tensor.shape):
            failed.append(f"{name} (shape {tuple(ours[name].shape)} vs {tuple(tensor.shape)})")
            continue
        err = relative_error(ours[name], tensor)
        rows[name] = err
        line = f"{name:16s} {str(tuple(tensor.shape)):24s} {err:.3e}"
        ok = err <= LIMIT
        if name in exact:
            # Above the limit, ours passes only if its float32 is as close to the float64 outputs as sd-scripts' own (within 10%).
            ours_exact, theirs_exact = relative_error(ours[name], exact[name]), relative_error(tensor, exact[name])
            rows[name + "_ours_vs_fp64"], rows[name + "_theirs_vs_fp64"] = ours_exact, theirs_exact
            line += f"   vs float64: ours {ours_exact:.3e}, sd-scripts' {theirs_exact:.3e}"
            ok = ok or ours_exact <= 1.1 * theirs_exact
        print(line + ("" if ok else "  FAIL"))
        if not ok:
            failed.append(f"{name} ({err:.3e})")
    print("RESULT " + json.dumps({"relative_error": rows, "limit": LIMIT, "failed": failed}))
    if failed:
        print("FAILED: " + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
