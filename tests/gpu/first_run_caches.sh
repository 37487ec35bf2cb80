#!/usr/bin/env bash
# On the GPU machine: which cache max-autotune's first run on a freshly started machine misses. The
# full-size SDXL LoRA loop (max-autotune, fullgraph) runs four times, each with its own GEMM-tuning
# cache (SINTER_CACHE_DIR) and the CUDA driver's JIT cache (CUDA_CACHE_PATH, where the driver keeps
# the machine code it compiles from PTX at run time, per machine) either empty or kept:
#   a: both empty                       (a freshly started machine)
#   b: both empty again                 (b ~ a: the extra time is paid whenever the JIT cache is empty)
#   c: tuning empty, JIT cache of a      (c ~ a: the JIT cache is not the cause)
#   d: tuning results of c, JIT empty    (d ~ a: the JIT work is outside GEMM tuning)
# Prints each run's warm-up and the size of each JIT cache.
#   tests/gpu/first_run_caches.sh RUNNER [STEPS]
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
runner="$(realpath "$1")"
steps="${2:-20}"
work="${SINTER_GPU_WORK:-/tmp/sinter-first-run}"
prepare_sdxl_work "$runner" "$work"
rm -rf "$work"/tuning-* "$work"/jit-*
for spec in a:tuning-a:jit-a b:tuning-b:jit-b c:tuning-c:jit-a d:tuning-c:jit-d; do
  IFS=: read -r run tuning jit <<< "$spec"
  write_sdxl_lora_toml "$work" "$work/out-$run" "$run" "$steps" "$work/sdxl.safetensors" > "$work/$run.toml"
  SINTER_CACHE_DIR="$work/$tuning" CUDA_CACHE_PATH="$work/$jit" PYTORCH_TUNABLEOP_VERBOSE=1 \
    "$runner" --config_file "$work/$run.toml" --no-enable_bucket --compile --compile_mode max-autotune \
    --compile_fullgraph --events jsonl > "$work/$run.events.jsonl" 2> "$work/$run.log"
  report_warmup "$run ($tuning, $jit)" "$work/$run.events.jsonl" "$work/$run.log"
done
for jit in "$work"/jit-*; do
  echo "$(basename "$jit"): $(du -sh "$jit" | cut -f1) in $(find "$jit" -type f | wc -l) files"
done
