#!/usr/bin/env bash
# On a lent machine with 2 GPUs (nvidia-h200-x2), after build_cuda_runner.sh: the tiny SDXL demo
# trained by `--nproc_per_node 2` over NCCL, eager, per block and with the whole step (its
# all-reduce inside) captured; each run must finish with identical weights on both ranks (the
# runner checks it), and the captured runs must train as the eager one does (their losses side by
# side). Writes the logs under $1.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/multi-gpu-check}"
runner="$root/build-cuda/bin/sinter-runner"
mkdir -p "$out"
work="$(mktemp -d)"
"$runner" --init_checkpoint "$work/tiny.safetensors" --model_family sdxl --model_size tiny --seed 3 2>/dev/null
"$runner" --init_dataset "$work/images" --seed 3 2>/dev/null
"$runner" --init_tokenizer "$work/tok" 2>/dev/null
cat > "$work/run.toml" <<TOML
model_family = "sdxl"
pretrained_model_name_or_path = "$work/tiny.safetensors"
clip_tokenizer = "$work/tok"
train_data_dir = "$work/images"
output_name = "t"
resolution = "128,128"
enable_bucket = true
min_bucket_reso = 64
max_bucket_reso = 256
bucket_reso_steps = 32
caption_extension = ".txt"
max_data_loader_n_workers = 0
cache_latents = true
network_train_unet_only = true
network_dim = 4
network_alpha = 4.0
learning_rate = 0.001
mixed_precision = "bf16"
seed = 7
max_train_steps = 40
TOML
status=0
run() {
  local name="$1"; shift
  if "$runner" --config_file "$work/run.toml" --output_dir "$work/$name" --nproc_per_node 2 --events jsonl "$@" \
      > "$out/$name.events.jsonl" 2> "$out/$name.log"; then
    echo "$name: exit 0; $(grep -c '"type":"step"' "$out/$name.events.jsonl") steps; $(grep -o 'the trained weights are identical on all 2 ranks' "$out/$name.log" | head -1)"
  else
    echo "$name: FAILED (exit $?)"; tail -20 "$out/$name.log"; status=1
  fi
  grep -E "all-reduce|data parallel|CUDA graphs:|warning" "$out/$name.log" | grep -v '^\[W' | head -8 | sed 's/^/    /'
}
run eager
run per_block --compile --compile_mode reduce-overhead
run whole_step --compile --compile_mode reduce-overhead --compile_fullgraph
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def losses(name):
    return [e["loss"] for e in map(json.loads, open(f"{out}/{name}.events.jsonl")) if e.get("type") == "step"]
eager = losses("eager")
for name in ("per_block", "whole_step"):
    other = losses(name)
    worst = max(abs(a - b) for a, b in zip(eager, other)) if other else float("nan")
    print(f"{name} vs eager: {len(other)} steps, largest loss difference {worst:.2e} (mean loss {sum(other)/max(1,len(other)):.4f} vs {sum(eager)/len(eager):.4f})")
PY
rm -rf "$work"
exit $status
