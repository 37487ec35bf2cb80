"""The modules lycoris.kohya's create_network puts on sd-scripts' SDXL models (UNet, CLIP-L,
OpenCLIP bigG), FLUX.1-dev models (transformer, CLIP-L; T5 is no target class) and SD 3.x models
(the MMDiT of SD 3 Medium, SD 3.5 Medium and SD 3.5 Large, CLIP-L, CLIP-G, T5-XXL: no target class),
for every preset (SD 3 Medium and SD 3.5 Large: "full" only), written as test data for
tests/runner/network_lycoris_test.cpp. The models are built on
the meta device: only their module trees matter. Needs sd-scripts' library/ and LyCORIS's
lycoris/ on PYTHONPATH (the carried .bench folder) and transformers.
Usage: python3 lycoris_module_lists.py OUT_DIR"""
import os, sys, types

class _Name:  # sd-scripts imports a few diffusers names that module trees never use
    pass
for name, attrs in [("diffusers", dict(AutoencoderKL=_Name, EulerAncestralDiscreteScheduler=_Name)),
                    ("diffusers.schedulers", {}),
                    ("diffusers.schedulers.scheduling_euler_ancestral_discrete",
                     dict(EulerAncestralDiscreteSchedulerOutput=_Name))]:
    if name not in sys.modules:
        m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m
for name in ("einops", "toml"):  # imported by LyCORIS modules this listing does not run
    try:
        __import__(name)
    except ImportError:
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].rearrange = None

import torch
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, T5Config, T5EncoderModel
from lycoris import kohya as lycoris_kohya
from lycoris.config import PRESET

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
PRESETS = ["full", "full-lin", "attn-mlp", "attn-only", "unet-transformer-only", "unet-convblock-only"]
BASE_PRESET = {k: list(v) if isinstance(v, list) else v for k, v in PRESET["full"].items()}

def clip_l():
    return CLIPTextModel(CLIPTextConfig(vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                        num_attention_heads=12, max_position_embeddings=77, hidden_act="quick_gelu"))

def clip_bigg():
    return CLIPTextModelWithProjection(CLIPTextConfig(vocab_size=49408, hidden_size=1280, intermediate_size=5120,
                                                      num_hidden_layers=32, num_attention_heads=20, max_position_embeddings=77,
                                                      hidden_act="gelu", projection_dim=1280))

def with_text_model(model):
    # sd-scripts' transformers (4.x) names CLIP's modules text_model.encoder...; a newer
    # CLIPTextModel may be the text transformer itself. The listing wants sd-scripts' names.
    if hasattr(model, "text_model"):
        return model
    holder = torch.nn.Module()
    holder.text_model = model
    return holder

def listing(unet, text_encoders, preset, extra):
    # create_network changes class attributes per preset: start each listing from "full"'s.
    lycoris_kohya.LycorisNetworkKohya.apply_preset(BASE_PRESET)
    args = dict(algo="locon", preset=preset, **extra)  # strings, as sd-scripts hands network_args over
    net = lycoris_kohya.create_network(1.0, 4, 1.0, None, text_encoders, unet, **args)
    rows = []
    for lora in net.unet_loras + net.text_encoder_loras:
        org = lora.org_module[0] if isinstance(lora.org_module, list) else lora.org_module
        kernel = org.kernel_size[0] if isinstance(org, torch.nn.Conv2d) else 0
        rows.append(f"{lora.lora_name} {kernel}")
    return sorted(rows)

with torch.device("meta"):
    from library import sdxl_original_unet, flux_models
    sdxl = (sdxl_original_unet.SdxlUNet2DConditionModel(), [with_text_model(clip_l()), with_text_model(clip_bigg())])
    flux = (flux_models.Flux(flux_models.configs["dev"].params), [with_text_model(clip_l()), torch.nn.Module()])

    # sd3_train_network hands create_network [CLIP-L, CLIP-G, T5-XXL]; LyCORIS names them lora_te1/2/3.
    from library import sd3_models
    def sd3(depth, qk_norm, attn2_layers, pos_max):
        p = sd3_models.SD3Params(patch_size=2, depth=depth, num_patches=pos_max * pos_max, pos_embed_max_size=pos_max,
                                 adm_in_channels=2048, qk_norm=qk_norm, x_block_self_attn_layers=attn2_layers,
                                 context_embedder_in_features=4096, context_embedder_out_features=64 * depth, model_type="")
        t5 = T5EncoderModel(T5Config(vocab_size=32128, d_model=4096, d_kv=64, d_ff=10240, num_layers=24, num_heads=64,
                                     feed_forward_proj="gated-gelu"))
        return (sd3_models.create_sd3_mmdit(p, attn_mode="torch"), [with_text_model(clip_l()), with_text_model(clip_bigg()), t5])
    models = [("sdxl", sdxl, PRESETS), ("flux", flux, PRESETS),
              ("sd3_medium", sd3(24, None, [], 192), ["full"]),
              ("sd35_medium", sd3(24, "rms", list(range(13)), 384), PRESETS),
              ("sd35_large", sd3(38, "rms", [], 192), ["full"])]

    for family, (unet, tes), presets in models:
        for preset in presets:
            for suffix, extra in (("", {}), ("_conv_dim_0", {"conv_dim": "0"})):
                if suffix and (preset != "full" or family.startswith("sd3")):
                    continue
                rows = listing(unet, tes, preset, extra)
                path = os.path.join(out_dir, f"{family}_{preset}{suffix}.txt")
                with open(path, "w") as f:
                    f.write("\n".join(rows) + "\n")
                print(f"{path}: {len(rows)} modules", flush=True)
