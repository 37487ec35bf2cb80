#!/usr/bin/env bash
# On the GPU machine: the benchmark step and the real training loop of one or more sinter-runner
# builds, side by side on the same full-size random SDXL checkpoint and generated dataset (LoRA
# rank 32 on the UNet, batch 1, 1024x1024 buckets, bf16, cached latents and text outputs).
#   tests/gpu/loop_vs_step.sh LABEL=RUNNER [LABEL=RUNNER ...]
# Prints per build: the benchmark's median step, the loop's median step (steps 6 on), their
# ratio, and the loop's peak memory. SINTER_LOOP_FLAGS adds runner flags to the loop (such as
# "--compile --compile_mode reduce-overhead --compile_fullgraph"; with --compile the benchmark row
# compared is the whole-step graph's, else the eager one; add --no-enable_bucket so that every
# batch has the benchmark's 1024x1024 shape).
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
work="${SINTER_GPU_WORK:-/tmp/sinter-loop}"
steps="${SINTER_GPU_STEPS:-100}"
first="${1#*=}"
prepare_sdxl_work "$first" "$work"
for entry in "$@"; do
  label="${entry%%=*}"
  runner="${entry#*=}"
  row="eager (compile off)"
  case " ${SINTER_LOOP_FLAGS:-} " in *" --compile "*) row="inductor, reduce-overhead, fullgraph" ;; esac
  bench="$("$runner" --benchmark_steps 10 --mixed_precision bf16 | grep -F "| $row | bs1 ")"
  out="$work/out-$label"
  rm -rf "$out" "$work/$label.toml"
  write_sdxl_lora_toml "$work" "$out" loop "$steps" "$work/sdxl.safetensors" > "$work/$label.toml"
  # shellcheck disable=SC2086
  "$runner" --config_file "$work/$label.toml" ${SINTER_LOOP_FLAGS:-} --events jsonl > "$work/$label.events.jsonl" 2> "$work/$label.log"
  python3 - "$label" "$bench" "$work/$label.events.jsonl" <<'PY'
import json, re, sys
label, bench, events = sys.argv[1], sys.argv[2], sys.argv[3]
step_ms = float(bench.split("|")[5].split()[0])  # the benchmark table's median step
steps = [json.loads(l) for l in open(events) if '"type":"step"' in l]
loop = sorted(s["step_ms"] for s in steps[5:])
median = loop[len(loop) // 2]
print(f"{label}: benchmark step median {step_ms:.1f} ms; real loop median {median:.1f} ms over {len(loop)} steps "
      f"({median / step_ms:.3f}x the step); loop peak {steps[-1]['peak_mem_mb']:.0f} MiB")
PY
done
