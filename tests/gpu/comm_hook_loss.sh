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
python3 - "$work" $runs <<'PY'
import json, struct, sys
import torch
work, runs = sys.argv[1], sys.argv[2:]
def losses(run):
    return [e["loss"] for e in map(json.loads, open(f"{work}/out-{run}.events.jsonl")) if e["type"] == "step"]
def lora(run):
    with open(f"{work}/out-{run}/run.safetensors", "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    return {k: torch.frombuffer(bytearray(data[v["data_offsets"][0]:v["data_offsets"][1]]), dtype=dtypes[v["dtype"]]).double()
            for k, v in header.items()}
base, base_lora = losses("no"), lora("no")
print("| ddp_comm_hook | steps | mean loss, last fifth | max loss deviation from `no` | LoRA relative distance from `no` |")
print("|---|---|---|---|---|")
for run in runs:
    l, w = losses(run), lora(run)
    tail = l[len(l) * 4 // 5:]
    dev = max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(l, base))
    dist = (sum(float((w[k] - base_lora[k]).norm() ** 2) for k in w) / sum(float(base_lora[k].norm() ** 2) for k in w)) ** 0.5
    print(f"| {run} | {len(l)} | {sum(tail) / len(tail):.5f} | {dev:.2e} | {dist:.2e} |")
PY
