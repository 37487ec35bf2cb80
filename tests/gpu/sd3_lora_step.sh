#!/usr/bin/env bash
# On the GPU machine (issue 55): a full-size random SD 3.5 Medium LoRA through the real loop (1024², bs1,
# bf16, rank 32 on the MMDiT, cached latents and text outputs), a table row each without and with fp8_base
# (matrix_row.py) and one with blocks_to_swap 12, and
# sd-scripts' own step beside it in the same call (sdscripts_sd3_step.py; needs .bench/sd-scripts), then
# sd-scripts' lora_sd3 loading the saved LoRA strictly (sdscripts_sd3_lora_load.py).
#   tests/gpu/sd3_lora_step.sh RUNNER [STEPS]
set -euo pipefail
runner="$1"
steps="${2:-12}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${SINTER_GPU_WORK:-/tmp/sinter-sd3-step}"
mkdir -p "$work"
[ -f "$work/sd3/t5xxl_fp16.safetensors" ] ||
  "$runner" --init_checkpoint "$work/sd3/sd3.5_medium.safetensors" --model_family sd3 --model_size full --seed 1 > "$work/init.log" 2>&1
[ -d "$work/images" ] || "$runner" --init_dataset "$work/images" --seed 1 >> "$work/init.log" 2>&1
[ -d "$work/tokenizer" ] || "$runner" --init_tokenizer "$work/tokenizer" >> "$work/init.log" 2>&1
cat > "$work/lora.toml" <<TOML
model_family = "sd3"
pretrained_model_name_or_path = "$work/sd3/sd3.5_medium.safetensors"
t5xxl = "$work/sd3/t5xxl_fp16.safetensors"
t5_tokenizer = "$work/tokenizer"
output_dir = "$work/out"
output_name = "m"
train_data_dir = "$work/images"
resolution = "1024,1024"
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
network_train_unet_only = true
network_dim = 32
network_alpha = 16.0
learning_rate = 1e-4
max_train_steps = $steps
mixed_precision = "bf16"
seed = 1
TOML
echo "| setting | trained | exit | warm-up s | step 1 ms | median step ms | peak MiB | error |"
echo "|---|---|---|---|---|---|---|---|"
code=0
"$runner" --config_file "$work/lora.toml" --no-enable_bucket --events jsonl > "$work/lora.events.jsonl" 2> "$work/lora.log" || code=$?
python3 "$here/matrix_row.py" "eager (no compile panel)" "MMDiT (SD 3.5 Medium)" "$code" "$work/lora.events.jsonl" "$work/lora.log"
code=0
"$runner" --config_file "$work/lora.toml" --no-enable_bucket --fp8_base --output_name m_fp8 --events jsonl > "$work/fp8.events.jsonl" 2> "$work/fp8.log" || code=$?
python3 "$here/matrix_row.py" "eager, fp8_base" "MMDiT (SD 3.5 Medium)" "$code" "$work/fp8.events.jsonl" "$work/fp8.log"
code=0
"$runner" --config_file "$work/lora.toml" --no-enable_bucket --blocks_to_swap 12 --output_name m_swap --events jsonl > "$work/swap.events.jsonl" 2> "$work/swap.log" || code=$?
python3 "$here/matrix_row.py" "eager, blocks_to_swap 12" "MMDiT (SD 3.5 Medium)" "$code" "$work/swap.events.jsonl" "$work/swap.log"
grep -m1 "blocks_to_swap 12:" "$work/swap.log" || true
if [ -d "$root/.bench/sd-scripts/library" ]; then
  (cd "$root/.bench/sd-scripts" && PYTHONPATH=.:"$here" python3 "$here/sdscripts_sd3_step.py" medium 2>&1 | grep RESULT) || echo "sd-scripts' step failed"
  (cd "$root/.bench/sd-scripts" && PYTHONPATH=.:"$here" python3 "$here/sdscripts_sd3_step.py" medium 12 2>&1 | grep RESULT) ||
    echo "sd-scripts' step with blocks_to_swap 12 failed"
  (cd "$root/.bench/sd-scripts" && PYTHONPATH=.:"$here" python3 "$here/sdscripts_sd3_lora_load.py" "$work/out/m.safetensors" 2>&1 | grep -E "RESULT|Error") ||
    echo "sd-scripts did not load the LoRA strictly"
fi
