"""LyCORIS loads lycoris.kohya files the runner saved for SD 3.x, strictly (issue 55): its own
create_network_from_weights on sd-scripts' MMDiT built from the checkpoint's keys
(as sd3_utils.analyze_state_dict_state reads it) and transformers' CLIP-L / CLIP-G sized from the checkpoint,
then apply_to and load_state_dict(strict=True), which checks every name and shape. Exit 1 when a key is
missing, unexpected or of another shape, or when a module of the file found no layer.

Usage (CPU is enough): PYTHONPATH=.bench/sd-scripts:.bench:tests/gpu python3 tests/gpu/lycoris_sd3_load.py CHECKPOINT FILE...
"""
import sys
import types

import torch

for _name in ("einops", "toml"):  # imported by LyCORIS modules this check does not run
    try:
        __import__(_name)
    except ImportError:
        sys.modules[_name] = types.ModuleType(_name)
        sys.modules[_name].rearrange = None

import diffusers_names  # noqa: F401  (before sd-scripts' library)
from safetensors.torch import load_file  # noqa: E402
from transformers import CLIPTextConfig, CLIPTextModelWithProjection  # noqa: E402
from library import sd3_models  # noqa: E402
from lycoris import kohya as lycoris_kohya  # noqa: E402


def clip_from(state, prefix):
    width = state[f"{prefix}text_model.embeddings.token_embedding.weight"].shape[1]
    layers = len({k[len(prefix):].split(".")[3] for k in state if k.startswith(f"{prefix}text_model.encoder.layers.")})
    mlp = state[f"{prefix}text_model.encoder.layers.0.mlp.fc1.weight"].shape[0]
    proj = state[f"{prefix}text_projection.weight"].shape[0]
    heads = next(h for h in (20, 16, 12, 8, 4, 2, 1) if width % h == 0)
    config = CLIPTextConfig(vocab_size=state[f"{prefix}text_model.embeddings.token_embedding.weight"].shape[0], hidden_size=width,
                            intermediate_size=mlp, num_hidden_layers=layers, num_attention_heads=heads,
                            max_position_embeddings=state[f"{prefix}text_model.embeddings.position_embedding.weight"].shape[0],
                            projection_dim=proj)
    return CLIPTextModelWithProjection(config)


checkpoint, files = sys.argv[1], sys.argv[2:]
state = load_file(checkpoint)
# sd3_utils.analyze_state_dict_state's reading (that module imports diffusers' pipelines, not needed here).
m = "model.diffusion_model."
depth = state[f"{m}x_embedder.proj.weight"].shape[0] // 64
attn2 = sorted({int(k[len(m):].split(".")[1]) for k in state if k.startswith(f"{m}joint_blocks.") and ".x_block.attn2.ln_k.weight" in k})
params = sd3_models.SD3Params(patch_size=state[f"{m}x_embedder.proj.weight"].shape[2], depth=depth,
                              num_patches=state[f"{m}pos_embed"].shape[1], pos_embed_max_size=round(state[f"{m}pos_embed"].shape[1] ** 0.5),
                              adm_in_channels=state[f"{m}y_embedder.mlp.0.weight"].shape[1],
                              qk_norm="rms" if f"{m}joint_blocks.0.context_block.attn.ln_k.weight" in state else None,
                              x_block_self_attn_layers=attn2, context_embedder_in_features=state[f"{m}context_embedder.weight"].shape[1],
                              context_embedder_out_features=state[f"{m}context_embedder.weight"].shape[0], model_type="")
mmdit = sd3_models.create_sd3_mmdit(params, attn_mode="torch")
text_encoders = [clip_from(state, "text_encoders.clip_l.transformer."), clip_from(state, "text_encoders.clip_g.transformer."),
                 torch.nn.Module()]
failed = False
for path in files:
    weights = load_file(path)
    names = {k.split(".")[0] for k in weights}
    net, _ = lycoris_kohya.create_network_from_weights(1.0, path, None, text_encoders, mmdit, weights_sd=weights)
    net.apply_to(text_encoders, mmdit, apply_text_encoder=True, apply_unet=True)  # registers the modules, as a trainer or UI does
    loaded = {m.lora_name for m in net.unet_loras + net.text_encoder_loras}
    missing = sorted(names - loaded)
    try:
        net.load_state_dict(weights, strict=True)
        strict = "strictly"
    except RuntimeError as e:
        strict, failed = f"NOT strictly: {str(e)[:300]}", True
    if missing:
        failed = True
    algos = sorted({type(m).__name__ for m in net.unet_loras + net.text_encoder_loras})
    print(f"RESULT LyCORIS loaded {path} {strict}: {len(weights)} tensors, {len(net.unet_loras)} MMDiT and "
          f"{len(net.text_encoder_loras)} text encoder modules ({', '.join(algos)}); modules without a layer: {missing[:5]}")
sys.exit(1 if failed else 0)
