#!/usr/bin/env bash
# On the GPU machine: a full-size SDXL checkpoint with random weights, a small generated dataset,
# a few hundred LoRA steps in bf16; prints the mean loss of the first and last 50 steps.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
. "$root/tests/gpu/sdxl_lora_toml.sh"
runner="$root/build-cuda/bin/sinter-runner"
work="${SINTER_GPU_WORK:-/tmp/sinter-gpu}"
steps="${SINTER_GPU_STEPS:-300}"
rm -rf "$work" && mkdir -p "$work"
"$runner" --init_checkpoint "$work/sdxl_random.safetensors" --model_family sdxl --model_size full --seed 1
"$runner" --init_dataset "$work/images" --seed 1
"$runner" --init_tokenizer "$work/tokenizer"
write_sdxl_lora_toml "$work" "$work/out" gpu_lora "$steps" "$work/sdxl_random.safetensors" > "$work/run.toml"
"$runner" --config_file "$work/run.toml" --events jsonl > "$work/events.jsonl"
python3 - "$work/events.jsonl" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l]
loss = [s["loss"] for s in steps]
ms = sorted(s["step_ms"] for s in steps[5:])
print(f"steps {len(loss)}; mean loss first 50 {sum(loss[:50])/50:.4f}, last 50 {sum(loss[-50:])/50:.4f}; "
      f"median step {ms[len(ms)//2]:.1f} ms; peak {steps[-1]['peak_mem_mb']:.0f} MiB")
PY
