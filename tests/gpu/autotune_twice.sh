#!/usr/bin/env bash
# On the GPU machine: the full-size SDXL LoRA loop with compile_mode max-autotune, run twice with
# an empty GEMM-tuning cache (SINTER_CACHE_DIR): the first run tunes every GEMM shape during its
# warm-up, the second reads the results and tunes nothing. Prints each run's warm-up time, median
# step and whether the results were read, then the results file (one line per tuned GEMM).
#   tests/gpu/autotune_twice.sh RUNNER [STEPS]
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
runner="$(realpath "$1")"
steps="${2:-30}"
work="${SINTER_GPU_WORK:-/tmp/sinter-autotune}"
export SINTER_CACHE_DIR="$work/cache"
rm -rf "$SINTER_CACHE_DIR"
prepare_sdxl_work "$runner" "$work"
for run in first second; do
  write_sdxl_lora_toml "$work" "$work/out-$run" "$run" "$steps" "$work/sdxl.safetensors" > "$work/$run.toml"
  PYTORCH_TUNABLEOP_VERBOSE=1 "$runner" --config_file "$work/$run.toml" --no-enable_bucket --compile --compile_mode max-autotune \
    --compile_fullgraph --events jsonl > "$work/$run.events.jsonl" 2> "$work/$run.log"
  report_warmup "$run" "$work/$run.events.jsonl" "$work/$run.log"
done
wc -l "$SINTER_CACHE_DIR"/*.csv
