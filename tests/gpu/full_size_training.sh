#!/usr/bin/env bash
# On the GPU machine: a full-size SDXL checkpoint with random weights, a small generated dataset,
# a few hundred LoRA steps in bf16; prints the mean loss of the first and last 50 steps.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runner="$root/build-cuda/bin/sinter-runner"
work="${SINTER_GPU_WORK:-/tmp/sinter-gpu}"
steps="${SINTER_GPU_STEPS:-300}"
rm -rf "$work" && mkdir -p "$work"
"$runner" --init_checkpoint "$work/sdxl_random.safetensors" --model_family sdxl --model_size full --seed 1
"$runner" --init_dataset "$work/images" --seed 1
"$runner" --init_tokenizer "$work/tokenizer"
cat > "$work/run.toml" <<TOML
[model]
model_family = "sdxl"
pretrained_model_name_or_path = "$work/sdxl_random.safetensors"
clip_tokenizer = "$work/tokenizer"
output_dir = "$work/out"
output_name = "gpu_lora"
[dataset]
train_data_dir = "$work/images"
resolution = "1024,1024"
enable_bucket = true
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
[training]
max_train_steps = $steps
mixed_precision = "bf16"
seed = 1
[network]
network_dim = 32
network_alpha = 16.0
network_train_unet_only = true
[optimizer]
learning_rate = 0.0002
TOML
"$runner" --config_file "$work/run.toml" --events jsonl > "$work/events.jsonl"
python3 - "$work/events.jsonl" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l]
loss = [s["loss"] for s in steps]
ms = sorted(s["step_ms"] for s in steps[5:])
print(f"steps {len(loss)}; mean loss first 50 {sum(loss[:50])/50:.4f}, last 50 {sum(loss[-50:])/50:.4f}; "
      f"median step {ms[len(ms)//2]:.1f} ms; peak {steps[-1]['peak_mem_mb']:.0f} MiB")
PY
