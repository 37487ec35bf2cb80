#!/usr/bin/env bash
# On the GPU machine: the benchmark step and the real training loop of one or more sinter-runner
# builds, side by side on the same full-size random SDXL checkpoint and generated dataset (LoRA
# rank 32 on the UNet, batch 1, 1024x1024 buckets, bf16, cached latents and text outputs).
#   tests/gpu/loop_vs_step.sh LABEL=RUNNER [LABEL=RUNNER ...]
# Prints per build: the benchmark's median step, the loop's median step (steps 6 on), their
# ratio, and the loop's peak memory.
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
work="${SINTER_GPU_WORK:-/tmp/sinter-loop}"
steps="${SINTER_GPU_STEPS:-100}"
first="${1#*=}"
mkdir -p "$work"
[ -f "$work/sdxl.safetensors" ] || "$first" --init_checkpoint "$work/sdxl.safetensors" --model_family sdxl --model_size full --seed 1
[ -d "$work/images" ] || "$first" --init_dataset "$work/images" --seed 1
[ -d "$work/tokenizer" ] || "$first" --init_tokenizer "$work/tokenizer"
for entry in "$@"; do
  label="${entry%%=*}"
  runner="${entry#*=}"
  bench="$("$runner" --benchmark_steps 30 --mixed_precision bf16 | grep 'steps timed')"
  out="$work/out-$label"
  rm -rf "$out" "$work/$label.toml"
  write_sdxl_lora_toml "$work" "$out" loop "$steps" "$work/sdxl.safetensors" > "$work/$label.toml"
  "$runner" --config_file "$work/$label.toml" --events jsonl > "$work/$label.events.jsonl" 2> "$work/$label.log"
  python3 - "$label" "$bench" "$work/$label.events.jsonl" <<'PY'
import json, re, sys
label, bench, events = sys.argv[1], sys.argv[2], sys.argv[3]
step_ms = float(re.search(r"median ([0-9.]+) ms", bench).group(1))
steps = [json.loads(l) for l in open(events) if '"type":"step"' in l]
loop = sorted(s["step_ms"] for s in steps[5:])
median = loop[len(loop) // 2]
print(f"{label}: benchmark step median {step_ms:.1f} ms; real loop median {median:.1f} ms over {len(loop)} steps "
      f"({median / step_ms:.3f}x the step); loop peak {steps[-1]['peak_mem_mb']:.0f} MiB")
PY
done
