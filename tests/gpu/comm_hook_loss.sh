#!/usr/bin/env bash
# On a machine with 2+ GPUs, after build_cuda_runner.sh: what ddp_comm_hook's 16-bit gradients do to
# training. The demo preset (tiny SDXL, real pictures, bf16 mixed precision, the whole step captured)
# trains on 2 GPUs with ddp_comm_hook "no" twice (run-to-run noise: atomic adds make two GPU runs
# differ) and with each 16-bit hook; prints each run's mean loss over the last fifth of the steps,
# the largest step-by-step loss deviation from the first "no" run, and the LoRA's relative distance.
#   tests/gpu/comm_hook_loss.sh [STEPS] [HOOKS]     (default 300, "bf16 fp16")
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runner="$root/build-cuda/bin/sinter-runner"
steps="${1:-300}"
hooks="${2:-bf16 fp16}"
work="${SINTER_GPU_WORK:-/tmp/sinter-comm-hook}"
mkdir -p "$work"
cd "$work"
[ -f demo-output/tiny_sdxl.safetensors ] || "$runner" --init_checkpoint demo-output/tiny_sdxl.safetensors --model_family sdxl --model_size tiny --seed 1
[ -d demo-output/images ] || "$runner" --init_dataset demo-output/images --seed 1
[ -d demo-output/tokenizer ] || "$runner" --init_tokenizer demo-output/tokenizer
runs=""
for run in no no2 $hooks; do
  hook="${run%2}"
  out="$work/out-$run"
  rm -rf "$out"
  "$runner" --config_file "$root/presets/demo_sdxl_lora_tiny.toml" --output_dir "$out" --output_name run --sample_prompts "" \
    --max_train_steps "$steps" --mixed_precision bf16 --compile --compile_mode reduce-overhead --compile_fullgraph \
    --nproc_per_node 2 --ddp_comm_hook "$hook" --events jsonl > "$out.events.jsonl" 2> "$out.log" ||
    { echo "ddp_comm_hook $run: the run failed"; tail -20 "$out.log"; continue; }
  runs="$runs $run"
done
PYTHONPATH="$root/tests/gpu" python3 - "$work" $runs <<'PY'
import sys
from run_outputs import relative_distance, safetensors_float64, step_losses
work, runs = sys.argv[1], sys.argv[2:]
losses = lambda run: step_losses(f"{work}/out-{run}.events.jsonl")
lora = lambda run: safetensors_float64(f"{work}/out-{run}/run.safetensors")
base, base_lora = losses("no"), lora("no")
print("| ddp_comm_hook | steps | mean loss, last fifth | max loss deviation from `no` | LoRA relative distance from `no` |")
print("|---|---|---|---|---|")
for run in runs:
    l = losses(run)
    tail = l[len(l) * 4 // 5:]
    dev = max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(l, base))
    print(f"| {run} | {len(l)} | {sum(tail) / len(tail):.5f} | {dev:.2e} | {relative_distance(lora(run), base_lora):.2e} |")
PY
