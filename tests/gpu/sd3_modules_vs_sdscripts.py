"""The runner's SD 3 MMDiT, VAE and CLIPs against sd-scripts' own, on the same random weights, in fp32
(issue 55).

Builds sd-scripts' library.sd3_models.MMDiT through create_sd3_mmdit at the three released shapes
(SD 3 Medium: 24 blocks, no qk norm; SD 3.5 Medium: MMDiT-X, qk norm, attn2 in blocks 0-12, a 384
position table; SD 3.5 Large: 38 blocks, qk norm), with random weights (qk norm weights drawn too)
and a sin-cos position table, its SDVAE, and transformers' CLIPTextModelWithProjection for CLIP-L
and CLIP-G as sd3_utils configures them; saves each in SAI's single-file layout
(model.diffusion_model., first_stage_model., text_encoders.clip_l/clip_g.transformer.), runs
`sinter-runner --module_outputs --model_family sd3` on them and sd-scripts' modules on the same
inputs with TF32 off (and again in float64), and prints each output's relative error. Also
networks.lora_sd3.create_network on a full-size SD 3.5 Medium with both CLIPs (meta device) beside
`--print_lora_layout --model_family sd3 --model_size full`.
Fails (exit 1) above 1e-5 unless ours is as close to the float64 outputs as sd-scripts' float32
(within 10%), or where the LoRA module names differ.

Usage, on the GPU machine, with sd-scripts' library/ and networks/ in .bench/sd-scripts:
  PYTHONPATH=.bench/sd-scripts:tests/gpu python3 tests/gpu/sd3_modules_vs_sdscripts.py build-cuda/bin/sinter-runner [WORKDIR]
"""
import json
import os
import subprocess
import sys

import torch

import diffusers_names  # noqa: F401  (before sd-scripts' library: names it imports from diffusers)
from safetensors.torch import load_file, save_file  # noqa: E402
from transformers import CLIPTextConfig, CLIPTextModelWithProjection  # noqa: E402
from library import sd3_models  # noqa: E402

LIMIT = 1e-5


def relative_error(ours, theirs):
    ours, theirs = ours.double().cpu(), theirs.double().cpu()
    return ((ours - theirs).norm() / theirs.norm()).item()


def params(depth, qk_norm, attn2_layers, pos_max):
    return sd3_models.SD3Params(patch_size=2, depth=depth, num_patches=pos_max * pos_max, pos_embed_max_size=pos_max,
                                adm_in_channels=2048, qk_norm=qk_norm, x_block_self_attn_layers=attn2_layers,
                                context_embedder_in_features=4096, context_embedder_out_features=64 * depth, model_type="")


def random_mmdit(p):
    model = sd3_models.create_sd3_mmdit(p, attn_mode="torch")
    with torch.no_grad():
        for name, t in model.named_parameters():
            if name.endswith("ln_q.weight") or name.endswith("ln_k.weight"):
                t.uniform_(0.5, 1.5)
            elif t.dim() >= 2:
                torch.nn.init.normal_(t, std=0.02)
            else:
                torch.nn.init.normal_(t, std=0.02)
        table = sd3_models.get_2d_sincos_pos_embed(model.hidden_size, p.pos_embed_max_size)
        model.pos_embed.copy_(torch.from_numpy(table).float().unsqueeze(0))
    return model


def with_reference_attn2_heads(model):
    """sd-scripts' MMDiTBlock passes attn2.num_heads where its attention() takes head_dim, so its MMDiT-X
    self-attention splits 1536 features into 64 heads of 24 rather than the 24 heads of 64 that SAI's
    mmditx.py (attention(q, k, v, heads)) and ComfyUI use, and that SD 3.5 Medium was trained with. Ours
    follows the reference; to compare the rest of the model, give sd-scripts' call the head_dim it reads
    the argument as. Returns sd-scripts' own split as "H heads of D" ("" where the model has no attn2)."""
    split = ""
    for block in model.joint_blocks:
        attn2 = block.x_block.attn2 if getattr(block.x_block, "x_block_self_attn", False) else None
        if attn2 is not None:
            hidden = attn2.num_heads * attn2.head_dim
            split = f"{hidden // attn2.num_heads} heads of {attn2.num_heads}"
            attn2.num_heads = attn2.head_dim
    return split


def clip(width, layers, heads, mlp, act, proj):
    config = CLIPTextConfig(vocab_size=49408, hidden_size=width, intermediate_size=mlp, num_hidden_layers=layers,
                            num_attention_heads=heads, max_position_embeddings=77, hidden_act=act, layer_norm_eps=1e-5,
                            pad_token_id=1, bos_token_id=0, eos_token_id=2, projection_dim=proj)
    return CLIPTextModelWithProjection(config)


def lora_names(runner, mmdit_params, clip_l, clip_g):
    from networks import lora_sd3
    with torch.device("meta"):
        model = sd3_models.create_sd3_mmdit(mmdit_params, attn_mode="torch")
        te = [clip_l, clip_g, None]
    net = lora_sd3.create_network(1.0, 4, 1.0, None, te, model)
    theirs = sorted(m.lora_name for m in net.unet_loras + net.text_encoder_loras)
    out = subprocess.run([runner, "--print_lora_layout", "--model_family", "sd3", "--model_size", "full"], check=True,
                         capture_output=True, text=True).stdout
    ours = sorted(m["name"] for m in json.loads(out)["modules"])
    return ours, theirs


def main():
    runner = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/sd3_modules_vs_sdscripts"
    os.makedirs(work, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator().manual_seed(1234)
    b = 2
    inputs = {"x": torch.randn(b, 16, 64, 64, generator=g), "timesteps": torch.tensor([900.0, 300.0]),
              "y": torch.randn(b, 2048, generator=g), "context": torch.randn(b, 77 + 256, 4096, generator=g),
              "images": torch.rand(b, 3, 256, 256, generator=g) * 2 - 1,
              "clip_l_ids": torch.cat([torch.tensor([[49406] + list(range(320, 330)) + [49407] * 66])] * b),
              "clip_g_ids": torch.cat([torch.tensor([[49406] + list(range(400, 415)) + [49407] + [0] * 60])] * b)}
    inputs_path = os.path.join(work, "inputs.safetensors")
    save_file(inputs, inputs_path)
    x = {k: v.to(dev) for k, v in inputs.items()}
    failed, rows = [], {}

    def compare(name, ours, theirs, exact=None):
        err = relative_error(ours, theirs)
        rows[name] = err
        line, ok = f"{name:24s} {str(tuple(theirs.shape)):22s} {err:.3e}", err <= LIMIT
        if exact is not None:
            oe, te = relative_error(ours, exact), relative_error(theirs, exact)
            rows[name + "_ours_vs_fp64"], rows[name + "_theirs_vs_fp64"] = oe, te
            line += f"   vs float64: ours {oe:.3e}, sd-scripts' {te:.3e}"
            ok = ok or oe <= 1.1 * te
        print(line + ("" if ok else "  FAIL"), flush=True)
        if not ok:
            failed.append(f"{name} ({err:.3e})")

    torch.manual_seed(7)
    clip_l = clip(768, 12, 12, 3072, "quick_gelu", 768)
    clip_g = clip(1280, 32, 20, 5120, "gelu", 1280)
    vae = sd3_models.SDVAE()
    variants = [("sd3_medium", params(24, None, [], 192)), ("sd35_medium", params(24, "rms", list(range(13)), 384)),
                ("sd35_large", params(38, "rms", [], 192))]
    print(f"{'output':24s} {'shape':22s} relative error (limit {LIMIT:g})", flush=True)
    only = os.environ.get("SINTER_SD3_VARIANTS")  # e.g. "sd35_medium": one shape (the VAE and CLIPs ride with it)
    for variant, p in variants:
        if only and variant not in only.split():
            continue
        torch.manual_seed(11)
        mmdit = random_mmdit(p)
        sd = {"model.diffusion_model." + k: v.contiguous() for k, v in mmdit.state_dict().items()}
        first = variant == "sd35_medium"
        if first:  # the VAE and both CLIPs ride in one file
            sd.update({"first_stage_model." + k: v.contiguous() for k, v in vae.state_dict().items()})
            sd.update({"text_encoders.clip_l.transformer." + k: v.contiguous() for k, v in clip_l.state_dict().items()})
            sd.update({"text_encoders.clip_g.transformer." + k: v.contiguous() for k, v in clip_g.state_dict().items()})
        path = os.path.join(work, variant + ".safetensors")
        save_file(sd, path)
        del sd
        out_path = os.path.join(work, f"ours_{variant}.safetensors")
        subprocess.run([runner, "--module_outputs", out_path, "--module_inputs", inputs_path, "--model_family", "sd3",
                        "--pretrained_model_name_or_path", path], check=True)
        os.remove(path)
        ours = load_file(out_path)
        with torch.no_grad():
            m = mmdit.float().to(dev).eval()
            as_released = m(x["x"], x["timesteps"], y=x["y"], context=x["context"]).cpu()
            split_like_reference = with_reference_attn2_heads(m)
            theirs = m(x["x"], x["timesteps"], y=x["y"], context=x["context"]).cpu() if split_like_reference else as_released
            m = m.double()
            exact = m(x["x"].double(), x["timesteps"].double(), y=x["y"].double(), context=x["context"].double()).cpu()
            m.cpu()
        del mmdit, m
        torch.cuda.empty_cache()
        compare(f"mmdit_{variant}", ours["mmdit"], theirs, exact)
        if split_like_reference:
            rows[f"mmdit_{variant}_vs_sdscripts_attn2_as_released"] = relative_error(ours["mmdit"], as_released)
            print(f"  (sd-scripts' attn2 as released, {split_like_reference}: "
                  f"{rows[f'mmdit_{variant}_vs_sdscripts_attn2_as_released']:.3e} from ours; see RESULTS.md)", flush=True)
        if first:
            with torch.no_grad():
                v = vae.float().to(dev).eval()
                mean = torch.chunk(v.encoder(x["images"]), 2, dim=1)[0]
                latents = sd3_models.SDVAE.process_in(mean)
                decoded = v.decode(sd3_models.SDVAE.process_out(latents))
                v = v.double()
                mean64 = torch.chunk(v.encoder(x["images"].double()), 2, dim=1)[0]
                latents64 = sd3_models.SDVAE.process_in(mean64)
                decoded64 = v.decode(sd3_models.SDVAE.process_out(latents64))  # each side's whole pipeline against float64's
                compare("vae_mean", ours["vae_mean"], mean.cpu(), mean64.cpu())
                compare("vae_latents", ours["vae_latents"], latents.cpu(), latents64.cpu())
                compare("vae_decoded", ours["vae_decoded"], decoded.cpu(), decoded64.cpu())
                v.float().cpu()
                for name, model in (("clip_l", clip_l), ("clip_g", clip_g)):
                    c = model.float().to(dev).eval()
                    o = c(x[name + "_ids"], output_hidden_states=True)
                    compare(name + "_penultimate", ours[name + "_penultimate"], o.hidden_states[-2].cpu())
                    compare(name + "_embeds", ours[name + "_embeds"], o.text_embeds.cpu())
                    # apply_lg_attn_mask: the tokenizer's attention_mask, 1 through the first <|endoftext|>
                    ids = x[name + "_ids"]
                    eos = ids.argmax(-1, keepdim=True)
                    mask = (torch.arange(ids.shape[1], device=dev).unsqueeze(0) <= eos).long()
                    o = c(ids, attention_mask=mask, output_hidden_states=True)
                    compare(name + "_masked_penultimate", ours[name + "_masked_penultimate"], o.hidden_states[-2].cpu())
                    compare(name + "_masked_embeds", ours[name + "_masked_embeds"], o.text_embeds.cpu())
                    c.cpu()
    ours_names, theirs_names = lora_names(runner, variants[1][1], clip_l, clip_g)
    print(f"SD 3.5 Medium LoRA modules (MMDiT, CLIP-L, CLIP-G): {len(ours_names)} ours, {len(theirs_names)} sd-scripts', "
          f"{'the same names' if ours_names == theirs_names else 'DIFFERENT'}", flush=True)
    if ours_names != theirs_names:
        failed.append(f"LoRA names (only ours {sorted(set(ours_names) - set(theirs_names))[:3]}, "
                      f"only theirs {sorted(set(theirs_names) - set(ours_names))[:3]})")
    print("RESULT " + json.dumps({"relative_error": rows, "limit": LIMIT, "failed": failed}))
    if failed:
        print("FAILED: " + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
