#!/usr/bin/env bash
# Issue 54's GPU check: each LoRA tool of sinter-runner beside sd-scripts' own script on the same
# inputs, full size, in one call: the outputs compared (lora_tools_compare.py: relative error of each
# module's product or each tensor) and each side's wall time. The inputs: a random full-size SDXL
# checkpoint and two LoRAs trained here (the real loop, 10 steps, text encoders and conv_dim);
# FLUX: a random full-size FLUX.1-dev transformer and a LoRA trained here.
#   bash tests/gpu/lora_tools_vs_sdscripts.sh PART OUT [RUNNER]
# PART: sdxl-loras (train the LoRAs; resize, svd_merge, merge into one LoRA), sdxl-checkpoint
# (merge into the checkpoint, extract), flux (train a FLUX LoRA, flux_merge_lora, flux_extract_lora;
# the transformer twice on disk and sd-scripts' merged one in /dev/shm (SINTER_GPU_SHM): fits 64 GiB). WORK
# (SINTER_GPU_WORK, default /tmp/lora_tools) keeps the files between parts on one machine.
# sd-scripts' library/ and networks/ are read from .bench/sd-scripts (git-ignored; the public
# kohya-ss/sd-scripts repository); tests/gpu/sdscripts_tool.py runs its scripts.
set -euo pipefail
part="$1"
out="$2"
runner="${3:-build-cuda/bin/sinter-runner}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${SINTER_GPU_WORK:-/tmp/lora_tools}"
sds="$root/.bench/sd-scripts"
mkdir -p "$out" "$work"
# The TIME / COMPARE lines also go to OUT/summary.txt: a call's output tail can lose them behind a long log.
exec > >(tee -a "$out/summary.txt") 2>&1
source "$root/tests/gpu/sdxl_lora_toml.sh"

# Runs a command, its log to $out/NAME.log, and prints "TIME NAME SECONDS".
timed() {
  local name="$1"
  shift
  local start end rc=0
  start=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED $name (exit $rc): $(tail -3 "$out/$name.log" | tr '\n' ' ')"
    return 0
  fi
  end=$(date +%s.%N)
  echo "TIME $name $(python3 -c "print(f'{$end - $start:.1f}')")"
}
# Our side again only where its output is not there yet (a later call on the same machine).
ours() {
  local name="$1" made="$2"
  shift 2
  [ -f "$made" ] && { echo "KEPT $name ($made from an earlier call)"; return 0; }
  timed "$name" "$@"
}
sdscripts() { python3 "$root/tests/gpu/sdscripts_tool.py" "$sds" "$@"; }
# sd-scripts' side likewise: `theirs NAME OUTFILE SCRIPT ARGS...`; SINTER_TOOLS_SKIP="NAME ..." leaves
# out sd-scripts' runs a call has no time for (one measured in an earlier call).
theirs() {
  local name="$1" made="$2"
  shift 2
  [ -f "$made" ] && { echo "KEPT $name ($made from an earlier call)"; return 0; }
  [[ " ${SINTER_TOOLS_SKIP:-} " == *" $name "* ]] && { echo "SKIPPED $name (SINTER_TOOLS_SKIP)"; return 0; }
  timed "$name" sdscripts "$@"
}
compare() { python3 "$root/tests/gpu/lora_tools_compare.py" "$@" || echo "COMPARE-FAILED $2"; }

sdxl_lora_run() {  # NAME SEED DIM ALPHA LR
  local name="$1"
  [ -f "$work/lora/$name.safetensors" ] && return 0
  cat > "$work/$name.toml" <<TOML
[model]
model_family = "sdxl"
pretrained_model_name_or_path = "$work/sdxl.safetensors"
clip_tokenizer = "$work/tokenizer"
output_dir = "$work/lora"
output_name = "$name"
[dataset]
train_data_dir = "$work/images"
resolution = "1024,1024"
enable_bucket = true
caption_extension = ".txt"
cache_latents = true
[training]
max_train_steps = 10
mixed_precision = "bf16"
seed = $2
[network]
network_dim = $3
network_alpha = $4
network_args = ["conv_dim=8", "conv_alpha=4"]
[optimizer]
learning_rate = $5
text_encoder_lr = 0.0001
TOML
  timed "train-$name" "$runner" --config_file "$work/$name.toml"
}

case "$part" in
  sdxl-loras)
    [ -f "$work/sdxl.safetensors" ] || timed checkpoint prepare_sdxl_work "$runner" "$work"
    sdxl_lora_run lora_a 1 32 16 0.001
    sdxl_lora_run lora_b 2 16 8 0.002
    a="$work/lora/lora_a.safetensors" b="$work/lora/lora_b.safetensors"
    ours resize-ours "$work/resize_ours.safetensors" "$runner" resize_lora --model "$a" --save_to "$work/resize_ours.safetensors" --new_rank 8 --device cuda
    theirs resize-sdscripts "$work/resize_sds.safetensors" networks/resize_lora.py --model "$a" --save_to "$work/resize_sds.safetensors" --new_rank 8 --device cuda
    [ -f "$work/resize_sds.safetensors" ] && compare lora resize "$work/resize_ours.safetensors" "$work/resize_sds.safetensors"
    # Which side of a difference is rounding: both against the float64 best rank-8 approximation.
    [ -n "${SINTER_TOOLS_NO_REFERENCE:-}" ] || python3 "$root/tests/gpu/lora_tools_compare.py" reference resize "$a" 8 "$work/resize_ours.safetensors" \
      $([ -f "$work/resize_sds.safetensors" ] && echo "$work/resize_sds.safetensors") || echo "COMPARE-FAILED reference"
    ours resize-fro-ours "$work/resize_fro_ours.safetensors" "$runner" resize_lora --model "$a" --save_to "$work/resize_fro_ours.safetensors" --new_rank 32 \
      --dynamic_method sv_fro --dynamic_param 0.9 --device cuda
    theirs resize-fro-sdscripts "$work/resize_fro_sds.safetensors" networks/resize_lora.py --model "$a" --save_to "$work/resize_fro_sds.safetensors" --new_rank 32 \
      --dynamic_method sv_fro --dynamic_param 0.9 --device cuda
    [ -f "$work/resize_fro_sds.safetensors" ] && compare lora resize-sv_fro "$work/resize_fro_ours.safetensors" "$work/resize_fro_sds.safetensors"
    ours svd-merge-ours "$work/svd_ours.safetensors" "$runner" svd_merge_lora --models "$a" "$b" --ratios 0.7 0.4 --new_rank 16 --device cuda \
      --save_to "$work/svd_ours.safetensors"
    theirs svd-merge-sdscripts "$work/svd_sds.safetensors" networks/svd_merge_lora.py --models "$a" "$b" --ratios 0.7 0.4 --new_rank 16 --device cuda \
      --save_to "$work/svd_sds.safetensors"
    compare lora svd_merge_lora "$work/svd_ours.safetensors" "$work/svd_sds.safetensors"
    ours concat-ours "$work/concat_ours.safetensors" "$runner" sdxl_merge_lora --models "$a" "$b" --ratios 1 -0.5 --concat --save_to "$work/concat_ours.safetensors"
    theirs concat-sdscripts "$work/concat_sds.safetensors" networks/sdxl_merge_lora.py --models "$a" "$b" --ratios 1 -0.5 --concat \
      --save_to "$work/concat_sds.safetensors"
    compare lora "sdxl_merge_lora --concat" "$work/concat_ours.safetensors" "$work/concat_sds.safetensors"
    ;;
  sdxl-checkpoint)
    a="$work/lora/lora_a.safetensors"
    timed merge-ours "$runner" sdxl_merge_lora --sd_model "$work/sdxl.safetensors" --models "$a" --ratios 0.8 \
      --save_precision fp16 --save_to "$work/merged_ours.safetensors"
    theirs merge-sdscripts "$work/merged_sds.safetensors" networks/sdxl_merge_lora.py --sd_model "$work/sdxl.safetensors" --models "$a" --ratios 0.8 \
      --save_precision fp16 --save_to "$work/merged_sds.safetensors"
    compare checkpoint sdxl_merge_lora "$work/merged_ours.safetensors" "$work/merged_sds.safetensors"
    timed extract-ours "$runner" extract_lora_from_models --model_org "$work/sdxl.safetensors" \
      --model_tuned "$work/merged_ours.safetensors" --save_to "$work/extract_ours.safetensors" --dim 16 --conv_dim 8 --device cuda
    theirs extract-sdscripts "$work/extract_sds.safetensors" networks/extract_lora_from_models.py --sdxl --model_org "$work/sdxl.safetensors" \
      --model_tuned "$work/merged_ours.safetensors" --save_to "$work/extract_sds.safetensors" --dim 16 --conv_dim 8 --device cuda
    compare lora extract_lora_from_models "$work/extract_ours.safetensors" "$work/extract_sds.safetensors"
    ;;
  flux)
    [ -f "$work/flux/flux1-dev.safetensors" ] ||
      timed flux-checkpoint "$runner" --init_checkpoint "$work/flux/flux1-dev.safetensors" --model_family flux --model_size full --seed 1
    [ -d "$work/images" ] || "$runner" --init_dataset "$work/images" --seed 1
    [ -d "$work/tokenizer" ] || "$runner" --init_tokenizer "$work/tokenizer"
    cat > "$work/flux_lora.toml" <<TOML
[model]
model_family = "flux"
pretrained_model_name_or_path = "$work/flux/flux1-dev.safetensors"
clip_l = "$work/flux/clip_l.safetensors"
t5xxl = "$work/flux/t5xxl_fp16.safetensors"
ae = "$work/flux/ae.safetensors"
clip_tokenizer = "$work/tokenizer"
t5_tokenizer = "$work/tokenizer"
output_dir = "$work/lora"
output_name = "flux_lora"
[dataset]
train_data_dir = "$work/images"
resolution = "512,512"
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
[training]
max_train_steps = 5
mixed_precision = "bf16"
seed = 1
[network]
network_module = "networks.lora_flux"
network_dim = 16
network_alpha = 8
network_train_unet_only = true
[optimizer]
learning_rate = 0.001
TOML
    [ -f "$work/lora/flux_lora.safetensors" ] || timed train-flux "$runner" --config_file "$work/flux_lora.toml"
    f="$work/lora/flux_lora.safetensors"
    # The disk: T5 is needed for training only, and sd-scripts' merged transformer goes to memory
    # (/dev/shm), so the input and ours fit a 64 GiB disk beside the build.
    rm -f "$work/flux/t5xxl_fp16.safetensors"
    shm="${SINTER_GPU_SHM:-/dev/shm/lora_tools}"
    mkdir -p "$shm"
    ours flux-merge-ours "$work/flux_merged_ours.safetensors" "$runner" flux_merge_lora --flux_model "$work/flux/flux1-dev.safetensors" --models "$f" --ratios 0.9 \
      --save_precision bf16 --save_to "$work/flux_merged_ours.safetensors" --device cuda
    theirs flux-merge-sdscripts "$shm/flux_merged_sds.safetensors" networks/flux_merge_lora.py --flux_model "$work/flux/flux1-dev.safetensors" --models "$f" \
      --ratios 0.9 --save_precision bf16 --save_to "$shm/flux_merged_sds.safetensors" --working_device cuda
    [ -f "$shm/flux_merged_sds.safetensors" ] && compare checkpoint flux_merge_lora "$work/flux_merged_ours.safetensors" "$shm/flux_merged_sds.safetensors"
    rm -f "$shm/flux_merged_sds.safetensors"
    ours flux-extract-ours "$work/flux_extract_ours.safetensors" "$runner" flux_extract_lora --model_org "$work/flux/flux1-dev.safetensors" \
      --model_tuned "$work/flux_merged_ours.safetensors" --save_to "$work/flux_extract_ours.safetensors" --dim 16 --device cuda
    theirs flux-extract-sdscripts "$work/flux_extract_sds.safetensors" networks/flux_extract_lora.py --model_org "$work/flux/flux1-dev.safetensors" \
      --model_tuned "$work/flux_merged_ours.safetensors" --save_to "$work/flux_extract_sds.safetensors" --dim 16 --device cuda
    compare lora flux_extract_lora "$work/flux_extract_ours.safetensors" "$work/flux_extract_sds.safetensors"
    ;;
  *)
    echo "usage: lora_tools_vs_sdscripts.sh sdxl-loras|sdxl-checkpoint|flux OUT [RUNNER]" >&2
    exit 2
    ;;
esac
