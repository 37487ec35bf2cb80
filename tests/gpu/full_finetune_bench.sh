#!/usr/bin/env bash
# On the GPU machine: issue 10's benchmark. The full SDXL UNet fine-tuned at bs1, 1024² (no
# buckets), full_bf16, Adafactor (scale_parameter, relative_step, warmup_init off), cached latents
# and text encoder outputs, random weights: sinter-runner's real loop with fused_backward_pass and
# without, and sd-scripts' own step of the same recipe (sdscripts_full_step.py) in the same call.
# Each runner figure is the median step of steps 5-14 and the peak memory from its step events.
#   tests/gpu/full_finetune_bench.sh RUNNER SD_SCRIPTS_DIR [gc]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runner="$(realpath "$1")"
sdscripts="$(realpath "$2")"
gc="${3:-}"
work="${SINTER_GPU_WORK:-/tmp/sinter-full-ft}"
mkdir -p "$work"
cd "$work"
[ -f sdxl.safetensors ] || "$runner" --init_checkpoint sdxl.safetensors --model_family sdxl --model_size full --seed 1
[ -d images ] || "$runner" --init_dataset images --seed 1
[ -d tokenizer ] || "$runner" --init_tokenizer tokenizer
cat > ft.toml <<TOML
[model]
model_family = "sdxl"
training_type = "finetune"
pretrained_model_name_or_path = "$work/sdxl.safetensors"
clip_tokenizer = "$work/tokenizer"
output_dir = "$work/out"
output_name = "ft"
[dataset]
train_data_dir = "$work/images"
resolution = "1024,1024"
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
[training]
max_train_steps = 14
mixed_precision = "bf16"
full_bf16 = true
gradient_checkpointing = $([ "$gc" = gc ] && echo true || echo false)
seed = 1
[optimizer]
optimizer_type = "Adafactor"
optimizer_args = ["scale_parameter=False", "relative_step=False", "warmup_init=False"]
learning_rate = 1e-5
[saving]
save_precision = "bf16"
TOML
status=0
for variant in fused plain; do
  flags=()
  [ "$variant" = fused ] && flags=(--fused_backward_pass)
  "$runner" --config_file ft.toml "${flags[@]}" --events jsonl > "$variant.events.jsonl" 2> "$variant.log" \
    || { echo "$variant: the run failed"; tail -20 "$variant.log"; status=1; }
  python3 - "$variant" <<'PY'
import json, statistics, sys
steps = [e for e in map(json.loads, open(f"{sys.argv[1]}.events.jsonl")) if e["type"] == "step"]
ms = statistics.median(e["step_ms"] for e in steps[4:])
print(f"RESULT {json.dumps({'what': 'sinter-runner full UNet, Adafactor, ' + sys.argv[1], 'steps': len(steps), 'step_ms': ms, 'peak_gib': max(e['peak_mem_mb'] for e in steps) / 1024})}")
PY
done
PYTHONPATH="$sdscripts" python3 "$here/sdscripts_full_step.py" sdxl 1 1024 "${gc:-nogc}" || status=1
exit $status
