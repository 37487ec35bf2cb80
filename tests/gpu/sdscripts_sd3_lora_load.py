"""sd-scripts loads a LoRA the runner saved for SD 3.5 Medium, strictly (issue 55): lora_sd3.create_network_from_weights
on a meta-device MMDiT, apply_to (which registers the modules), then load_state_dict(strict=True), which checks
every name and shape. Exit 1 when a key is missing, unexpected or of another shape.

Usage, from .bench/sd-scripts: PYTHONPATH=.:../../tests/gpu python3 ../../tests/gpu/sdscripts_sd3_lora_load.py LORA.safetensors
"""
import sys

import torch

import diffusers_names  # noqa: F401  (before sd-scripts' library)
from safetensors.torch import load_file  # noqa: E402
from library import sd3_models  # noqa: E402
from networks import lora_sd3  # noqa: E402

path = sys.argv[1]
depth, pos = 24, 384  # SD 3.5 Medium: MMDiT-X, attn2 in blocks 0-12
p = sd3_models.SD3Params(patch_size=2, depth=depth, num_patches=pos * pos, pos_embed_max_size=pos, adm_in_channels=2048,
                         qk_norm="rms", x_block_self_attn_layers=list(range(13)), context_embedder_in_features=4096,
                         context_embedder_out_features=64 * depth, model_type="5-medium")
with torch.device("meta"):
    mmdit = sd3_models.create_sd3_mmdit(p, attn_mode="torch")
weights = load_file(path)
no_text_encoders = [torch.nn.Module(), torch.nn.Module()]  # the run trained the MMDiT only
net, _ = lora_sd3.create_network_from_weights(1.0, path, None, no_text_encoders, mmdit, weights_sd=weights)
net.apply_to(no_text_encoders, mmdit, apply_text_encoder=False, apply_unet=True)
with torch.device("meta"):
    net.load_state_dict(weights, strict=True)
print(f"RESULT sd-scripts loaded {path} strictly: {len(weights)} tensors, {len(net.unet_loras)} MMDiT modules")
