#!/usr/bin/env bash
# On the GPU machine: the SD 1.5 LoRA step of sinter-runner's real training loop beside sd-scripts'
# own (tests/gpu/sd_vs_sdscripts.py step: original_unet + networks.lora, eager) in the same call.
# Full-size random SD 1.5 checkpoint, generated dataset at 512x512 (no buckets), batch 1, LoRA rank
# 32 alpha 16 on the UNet's default targets, AdamW, bf16, cached latents and text outputs. SD 1.x
# has no compile panel: the runner captures the step by its own choice (SINTER_SD_CAPTURE=0: eager).
# SINTER_SD_VERSION=sd21: SD 2.1 instead, 768x768, v-parameterization, sd-scripts' v2 U-Net beside it.
#   PYTHONPATH=.bench tests/gpu/sd15_lora_step.sh build-cuda/bin/sinter-runner
set -euo pipefail
runner="$1"
version="${SINTER_SD_VERSION:-sd15}"
case "$version" in
  sd15) family=sd15 res=512 v2_keys="" v2_arg="" label="SD 1.5" ;;
  sd21) family=sd2 res=768 v2_keys=$'v2 = true\nv_parameterization = true' v2_arg=v2 label="SD 2.1" ;;
  *) echo "SINTER_SD_VERSION: sd15 or sd21, not $version" >&2; exit 2 ;;
esac
work="${SINTER_GPU_WORK:-/tmp/sinter-$version}"
steps="${SINTER_GPU_STEPS:-60}"
mkdir -p "$work"
[ -f "$work/$version.safetensors" ] || "$runner" --init_checkpoint "$work/$version.safetensors" --model_family $family --model_size full --seed 1
[ -d "$work/images" ] || "$runner" --init_dataset "$work/images" --seed 1
[ -d "$work/tokenizer" ] || "$runner" --init_tokenizer "$work/tokenizer"
rm -rf "$work/out"
cat > "$work/$version.toml" <<TOML
model_family = "$family"
$v2_keys
pretrained_model_name_or_path = "$work/$version.safetensors"
clip_tokenizer = "$work/tokenizer"
train_data_dir = "$work/images"
output_dir = "$work/out"
output_name = "$version"
resolution = "$res,$res"
caption_extension = ".txt"
train_batch_size = 1
max_train_steps = $steps
network_dim = 32
network_alpha = 16.0
network_train_unet_only = true
optimizer_type = "AdamW"
learning_rate = 0.0001
mixed_precision = "bf16"
cache_latents = true
cache_text_encoder_outputs = true
sdpa = true
seed = 1
TOML
"$runner" --config_file "$work/$version.toml" --events jsonl > "$work/events.jsonl" 2> "$work/log.txt"
ours="$(python3 - "$work/events.jsonl" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l]
loop = sorted(s["step_ms"] for s in steps[10:])
print(json.dumps({"step_ms_median": round(loop[len(loop) // 2], 2), "steps": len(loop), "peak_mib": steps[-1]["peak_mem_mb"]}))
PY
)"
theirs="$(python3 "$(dirname "$0")/sd_vs_sdscripts.py" step $res 1 $v2_arg | grep '^RESULT ' | cut -c8-)"
python3 - "$ours" "$theirs" "$label" "$res" <<'PY'
import json, sys
ours, theirs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"{sys.argv[3]} LoRA {sys.argv[4]}x{sys.argv[4]} bs1: sinter-runner loop median {ours['step_ms_median']} ms ({ours['steps']} steps, peak "
      f"{ours['peak_mib']:.0f} MiB); sd-scripts eager {theirs['step_ms']} ms (peak {theirs['peak_gib']} GiB); "
      f"speed-up {theirs['step_ms'] / ours['step_ms_median']:.2f}x on {theirs['gpu']}")
print("RESULT " + json.dumps({"ours": ours, "sd_scripts": theirs}))
PY
