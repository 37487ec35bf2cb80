#!/usr/bin/env bash
# On the lent GPU machine: the SDXL step (full size, bs1, 1024², bf16, AdamW) with standard LoRA
# and each LyCORIS algorithm (preset attn-mlp, dim 32, LoKr factor 8), eager and captured, beside
# sd-scripts' own step with networks.lora and with LyCORIS's modules (eager) in the same call; and
# the module lists LyCORIS's create_network makes on sd-scripts' SDXL and FLUX models, for
# tests/data/lycoris. Needs .deps and .bench (sd-scripts' library/ and networks/, LyCORIS's lycoris/)
# carried; see README.md.
#   bash tests/gpu/lycoris_steps.sh [STEPS] [OUT]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
steps="${1:-10}"
out="${2:-${OUT:-/tmp}}"
cd "$root"
[ -x build-cuda/bin/sinter-runner ] || bash tests/gpu/build_cuda_runner.sh > "$out/build.log" 2>&1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
if [ -d .bench/lycoris ]; then
  PYTHONPATH=.bench python3 tests/gpu/lycoris_module_lists.py "$out/lycoris_modules" 2>&1 | grep -v '^\s*$' | tail -20 || true
fi
build-cuda/bin/sinter-runner --benchmark_steps "$steps" --mixed_precision bf16 --benchmark_networks 2>&1 | tee "$out/lycoris_steps.txt"
if [ -d .bench ]; then
  (cd .bench && PYTHONPATH=. python3 sdscripts_step.py sdxl eager) 2>&1 | grep RESULT | tee -a "$out/lycoris_steps.txt"
  for run in "locon" "locon dora_wd=True" "loha" "lokr factor=8" "ia3" "full"; do
    PYTHONPATH=.bench python3 tests/gpu/sdscripts_lycoris_step.py $run 2>&1 | grep -E 'RESULT|Error|error' | tail -3 | tee -a "$out/lycoris_steps.txt"
  done
fi
