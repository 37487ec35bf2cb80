#!/usr/bin/env bash
# On the lent GPU machine: the SDXL LoRA step (full size, bs1, 1024², rank 32, bf16) with every
# optimizer this build has, eager and captured whole, beside AdamW's, and sd-scripts' own step
# (AdamW, eager) in the same call. Needs .deps (and .bench for sd-scripts) carried; see README.md.
#   bash tests/gpu/optimizer_steps.sh [STEPS] [OUT]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
steps="${1:-10}"
out="${2:-${OUT:-/tmp}}"
cd "$root"
[ -x build-cuda/bin/sinter-runner ] || bash tests/gpu/build_cuda_runner.sh > "$out/build.log" 2>&1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
build-cuda/bin/sinter-runner --benchmark_steps "$steps" --mixed_precision bf16 --benchmark_optimizers 2>&1 | tee "$out/optimizer_steps.txt"
if [ -d .bench ]; then
  (cd .bench && PYTHONPATH=. python3 sdscripts_step.py sdxl eager) 2>&1 | grep RESULT | tee -a "$out/optimizer_steps.txt"
fi
