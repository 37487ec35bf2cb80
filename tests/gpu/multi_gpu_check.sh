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
# Issue 57 on two ranks: best-k and early stop (every rank stops at the same step), and the controls
# during a run fed on stdin (rank 0 decides, every rank acts; each acknowledged by a control event).
run early_stop --validation_split 0.25 --validate_every_n_steps 4 --save_best_k 2 --early_stop_patience 2 \
  --early_stop_min_delta 10 --max_train_steps 400
echo "    kept: $(ls "$work/early_stop" | tr '\n' ' ')"
grep -o '"kind":"best"[^}]*' "$out/early_stop.events.jsonl" | tail -3 | sed 's/^/    /'
grep -i "early stop\|early_stop" "$out/early_stop.log" | tail -2 | sed 's/^/    /'
echo "a cat --w 128 --h 128 --s 4 --d 1" > "$work/prompts.txt"
if (sleep 20; echo save; sleep 2; echo pause; sleep 3; echo resume; sleep 2; echo sample; sleep 2; echo stop_after_epoch) |
    timeout 240 "$runner" --config_file "$work/run.toml" --output_dir "$work/controls" --nproc_per_node 2 --events jsonl --control stdin \
      --max_train_steps 100000 --sample_prompts "$work/prompts.txt" > "$out/controls.events.jsonl" 2> "$out/controls.log"; then
  echo "controls: exit 0; $(grep -c '"type":"step"' "$out/controls.events.jsonl") steps; $(grep -o 'the trained weights are identical on all 2 ranks' "$out/controls.log" | head -1)"
else
  echo "controls: FAILED (exit $?)"; tail -20 "$out/controls.log"; status=1
fi
grep -o '"type":"control"[^}]*' "$out/controls.events.jsonl" | sed 's/^/    /'
echo "    files: $(ls -R "$work/controls" | tr '\n' ' ')"
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
