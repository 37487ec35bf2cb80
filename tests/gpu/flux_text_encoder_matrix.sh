#!/usr/bin/env bash
# On the GPU machine (issue 51): full-size FLUX.1-dev LoRA through the real loop, 1024², bs1, bf16,
# rank 32, cached latents and text outputs, with each compile setting, the transformer alone ("dit"),
# with CLIP-L's LoRA modules trained ("clip": sd-scripts' partial cache, T5-XXL's outputs cached,
# CLIP-L encoding in the step), with nothing cached ("clip-live": CLIP-L trained, T5-XXL's frozen
# forward in the step) and with T5-XXL's LoRA too ("t5": network_args train_t5xxl=True). One table
# row a run: exit code, warm-up seconds, the first step, the median step (steps 6 on), peak memory,
# and the error line of a failed run.
#   tests/gpu/flux_text_encoder_matrix.sh RUNNER [STEPS]
# SINTER_MATRIX_SETTINGS picks settings by name (compile_settings.sh: off ro ro-fullgraph ...), SINTER_MATRIX_TE which of
# "dit clip clip-live t5" run, SINTER_MATRIX_NETWORK adds flags to every run (such as "--network_module
# lycoris.kohya --network_args algo=lokr"), SINTER_MATRIX_CPUS pins every run to those CPUs (taskset's
# list). The random files are made once under SINTER_GPU_WORK. SINTER_MATRIX_MODEL_TYPE=chroma runs a
# full-size random Chroma instead (T5-XXL only, apply_t5_attn_mask; only "dit" and "t5" apply), with
# SINTER_MATRIX_SETTINGS such as "off ro ro-fullgraph fp8_fast".
set -euo pipefail
runner="$1"
steps="${2:-12}"
model_type="${SINTER_MATRIX_MODEL_TYPE:-flux}"
work="${SINTER_GPU_WORK:-/tmp/sinter-flux-te-matrix}/$model_type"
mkdir -p "$work"
[ -f "$work/flux/t5xxl_fp16.safetensors" ] ||
  "$runner" --init_checkpoint "$work/flux/flux1-dev.safetensors" --model_family flux --model_type "$model_type" \
    --model_size full --seed 1 > "$work/init.log" 2>&1
[ -d "$work/images" ] || "$runner" --init_dataset "$work/images" --seed 1 >> "$work/init.log" 2>&1
[ -d "$work/tokenizer" ] || "$runner" --init_tokenizer "$work/tokenizer" >> "$work/init.log" 2>&1

. "$(dirname "$0")/compile_settings.sh"
declare -A parts=(
  [dit]="--network_train_unet_only"
  [clip]="--no-network_train_unet_only"
  [clip-live]="--no-network_train_unet_only --no-cache_text_encoder_outputs"
  [t5]="--no-network_train_unet_only --no-cache_text_encoder_outputs --network_args train_t5xxl=True"
)
declare -A trained=(
  [dit]="transformer"
  [clip]="transformer + CLIP-L (T5-XXL cached)"
  [clip-live]="transformer + CLIP-L (T5-XXL frozen in the step)"
  [t5]="transformer + CLIP-L + T5-XXL"
)
echo "| setting | trained | exit | warm-up s | step 1 ms | median step ms | peak MiB | error |"
echo "|---|---|---|---|---|---|---|---|"
for te in ${SINTER_MATRIX_TE:-dit clip}; do
  for setting in ${SINTER_MATRIX_SETTINGS:-off ro ro-fullgraph}; do
    name="$te-$setting"
    if [ "$model_type" = chroma ]; then
      text_files='model_type = "chroma"
apply_t5_attn_mask = true'
    else
      text_files="clip_l = \"$work/flux/clip_l.safetensors\""
    fi
    cat > "$work/$name.toml" <<TOML
model_family = "flux"
pretrained_model_name_or_path = "$work/flux/flux1-dev.safetensors"
ae = "$work/flux/ae.safetensors"
$text_files
t5xxl = "$work/flux/t5xxl_fp16.safetensors"
clip_tokenizer = "$work/tokenizer"
t5_tokenizer = "$work/tokenizer"
output_dir = "$work/out-$name"
output_name = "m"
train_data_dir = "$work/images"
resolution = "1024,1024"
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
network_module = "networks.lora_flux"
network_dim = 32
network_alpha = 16.0
learning_rate = 1e-4
max_train_steps = $steps
mixed_precision = "bf16"
seed = 1
TOML
    code=0
    pin=()
    [ -n "${SINTER_MATRIX_CPUS:-}" ] && pin=(taskset -c "$SINTER_MATRIX_CPUS")
    # shellcheck disable=SC2086
    "${pin[@]}" "$runner" --config_file "$work/$name.toml" --no-enable_bucket ${compile_flags[$setting]} ${parts[$te]} \
      ${SINTER_MATRIX_NETWORK:-} --events jsonl > "$work/$name.events.jsonl" 2> "$work/$name.log" || code=$?
    python3 "$(dirname "$0")/matrix_row.py" "$setting" "${trained[$te]}" "$code" "$work/$name.events.jsonl" "$work/$name.log"
  done
done
