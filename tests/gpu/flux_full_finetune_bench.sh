#!/usr/bin/env bash
# On the GPU machine: issue 10's FLUX benchmark. The full FLUX.1-dev transformer fine-tuned at bs1,
# 1024² (4096 image tokens, 512 T5 tokens), full_bf16, Adafactor (scale_parameter, relative_step and
# warmup_init off, lr 1e-5) with fused_backward_pass and gradient checkpointing, random weights:
# sinter-runner's benchmark step (--benchmark_steps with --training_type finetune) with and without
# blocks_to_swap, and sd-scripts' own step of the same recipe (sdscripts_full_step.py flux) in the
# same call.
#   tests/gpu/flux_full_finetune_bench.sh RUNNER SD_SCRIPTS_DIR [BLOCKS_TO_SWAP (default 8)]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runner="$(realpath "$1")"
sdscripts="$(realpath "$2")"
swap="${3:-8}"
status=0
for blocks in "$swap" 0; do
  "$runner" --benchmark_steps 10 --model_family flux --training_type finetune --mixed_precision bf16 --full_bf16 \
    --fused_backward_pass --gradient_checkpointing --blocks_to_swap "$blocks" || status=1
done
PYTHONPATH="$sdscripts" python3 "$here/sdscripts_full_step.py" flux 1 1024 gc "$swap" || status=1
exit $status
