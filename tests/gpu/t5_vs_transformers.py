"""The runner's T5 v1.1 encoder against Hugging Face transformers' T5EncoderModel, on the same random
weights, in fp32.

Builds transformers' T5EncoderModel with google/t5-v1_1-xxl's sizes (d_model 4096, 64 heads of 64,
d_ff 10240, gated GELU, 32 relative buckets up to 128) at a reduced depth (4 blocks; every block of the
released model is one of these), random weights (the layer norms drawn too, so that they matter),
saved as t5xxl_fp16.safetensors' keys; runs the runner on the same token ids (sinter-runner
--module_outputs --model_family flux --t5xxl) with and without the padding mask, TF32 off, and prints
each output's relative error ||ours - theirs|| / ||theirs||. Fails (exit 1) above 1e-5.

Usage, on the GPU machine (transformers is installed there):
  python3 tests/gpu/t5_vs_transformers.py build-cuda/bin/sinter-runner [WORKDIR]
"""
import json
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import T5Config, T5EncoderModel

LIMIT = 1e-5


def main():
    runner = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/sinter-t5"
    os.makedirs(work, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    config = T5Config(vocab_size=32128, d_model=4096, d_kv=64, d_ff=10240, num_layers=4, num_heads=64,
                      relative_attention_num_buckets=32, relative_attention_max_distance=128,
                      feed_forward_proj="gated-gelu", dropout_rate=0.0, is_encoder_decoder=False)
    model = T5EncoderModel(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name:
                p.uniform_(0.5, 1.5)
    path = os.path.join(work, "t5.safetensors")
    save_file({k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}, path)

    ids = torch.randint(2, 32128, (2, 96))
    ids[0, 40] = 1  # </s>, then padding
    ids[0, 41:] = 0
    ids[1, 90] = 1
    ids[1, 91:] = 0
    mask = (torch.arange(96)[None, :] <= torch.tensor([[40], [90]])).long()
    inputs_path = os.path.join(work, "inputs.safetensors")
    results = {}
    model = model.cuda()
    for masked in (False, True):
        inputs = {"t5_ids": ids}
        if masked:
            inputs["t5_mask"] = mask.float()
        save_file(inputs, inputs_path)
        ours_path = os.path.join(work, f"ours_{masked}.safetensors")
        subprocess.run([runner, "--module_outputs", ours_path, "--module_inputs", inputs_path, "--model_family", "flux",
                        "--t5xxl", path], check=True)
        ours = load_file(ours_path)["t5"].double()
        with torch.no_grad():
            theirs = model(ids.cuda(), attention_mask=mask.cuda() if masked else None).last_hidden_state.double().cpu()
        results["t5" + ("_masked" if masked else "")] = ((ours - theirs).norm() / theirs.norm()).item()
    for name, err in results.items():
        print(f"{name:12s} {err:.3e}")
    failed = [n for n, e in results.items() if not e <= LIMIT]
    print("RESULT " + json.dumps({"relative_error": results, "limit": LIMIT, "failed": failed}))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
