#!/usr/bin/env bash
# On the GPU machine (issue 51): full-size SDXL LoRA through the real loop, 1024², bs1, bf16, with
# each compile setting, the U-Net alone (text outputs cached) and with both text encoders trained
# (sd-scripts' default, and 18 of kohya_ss's 19 SDXL LoRA presets). One table row a run: exit code,
# warm-up seconds, the first step, the median step (steps 6 on), peak memory, and the error line of a failed run.
#   tests/gpu/text_encoder_matrix.sh RUNNER [STEPS]
# SINTER_MATRIX_SETTINGS picks settings by name (off default mano ro ro-fullgraph), SINTER_MATRIX_TE
# which of "unet te" run, SINTER_MATRIX_NETWORK adds network flags to every run (such as
# "--network_module lycoris.kohya --network_args algo=loha"). SINTER_MATRIX_CPUS pins every run to those
# CPUs (taskset's list, such as "0-7"): a step bound by its launches on the host varies by ±20% between
# runs of one config unpinned (tests/gpu/RESULTS.md, issue 51). SINTER_MATRIX_METHOD=ti trains a textual
# inversion embedding instead of the LoRA (issue 58: 2 vectors for a new token, both encoders' rows; the
# TOML's LoRA keys are warned about and ignored), "te" alone by default: its encoders always run with
# gradients, and cached text outputs are refused.
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
runner="$1"
steps="${2:-20}"
work="${SINTER_GPU_WORK:-/tmp/sinter-te-matrix}"
prepare_sdxl_work "$runner" "$work"

. "$(dirname "$0")/compile_settings.sh"
declare -A parts=(
  [unet]=""
  [te]="--no-network_train_unet_only --no-cache_text_encoder_outputs"
)
method_flags=""
te_label="U-Net + both text encoders"
if [ "${SINTER_MATRIX_METHOD:-lora}" = ti ]; then
  method_flags="--training_type textual_inversion --token_string zqxv --init_word shape --num_vectors_per_token 2 --learning_rate 0.005"
  te_label="embedding (2 vectors, both encoders' rows)"
  : "${SINTER_MATRIX_TE:=te}"
fi
echo "| setting | trained | exit | warm-up s | step 1 ms | median step ms | peak MiB | error |"
echo "|---|---|---|---|---|---|---|---|"
for te in ${SINTER_MATRIX_TE:-unet te}; do
  for setting in ${SINTER_MATRIX_SETTINGS:-off default mano ro ro-fullgraph}; do
    name="$te-$setting"
    out="$work/out-$name"
    rm -rf "$out"
    write_sdxl_lora_toml "$work" "$out" m "$steps" "$work/sdxl.safetensors" > "$work/$name.toml"
    code=0
    pin=()
    [ -n "${SINTER_MATRIX_CPUS:-}" ] && pin=(taskset -c "$SINTER_MATRIX_CPUS")
    # shellcheck disable=SC2086
    "${pin[@]}" "$runner" --config_file "$work/$name.toml" --no-enable_bucket ${compile_flags[$setting]} ${parts[$te]} \
      ${method_flags} ${SINTER_MATRIX_NETWORK:-} --events jsonl > "$work/$name.events.jsonl" 2> "$work/$name.log" || code=$?
    python3 "$(dirname "$0")/matrix_row.py" "$setting" "$( [ "$te" = te ] && echo "$te_label" || echo U-Net )" "$code" "$work/$name.events.jsonl" "$work/$name.log"
  done
done
