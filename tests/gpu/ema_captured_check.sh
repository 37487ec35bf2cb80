#!/usr/bin/env bash
# On the GPU machine (issue 57 item 3): the EMA of the trained weights where the step is captured.
# The tiny SDXL demo LoRA trained eager, per block captured and with the whole step captured, the EMA
# updated every step (ema_decay 0.9, ema_update_every 1, warm-up off) on the GPU and (eager) in host
# memory; each run's -ema file against the float64 decay rule applied to its own per-step saves (the
# LoRA's up factors, zero at the start), beside how far its trained weights and EMA are from eager's.
#   tests/gpu/ema_captured_check.sh RUNNER OUT
set -euo pipefail
runner="$1"
out="$2"
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
caption_extension = ".txt"
max_data_loader_n_workers = 0
cache_latents = true
network_train_unet_only = true
network_dim = 4
network_alpha = 4.0
learning_rate = 0.001
mixed_precision = "bf16"
seed = 7
max_train_steps = 12
ema_decay = 0.9
ema_update_every = 1
ema_warmup = false
save_every_n_steps = 1
save_precision = "float"
TOML
status=0
run() {
  local name="$1"; shift
  if "$runner" --config_file "$work/run.toml" --output_dir "$work/$name" --events jsonl "$@" > "$out/$name.events.jsonl" 2> "$out/$name.log"; then
    echo "$name: exit 0; $(grep -c '"type":"step"' "$out/$name.events.jsonl") steps; $(grep -m1 -o 'CUDA graphs:[^;]*' "$out/$name.log" || true)"
  else
    echo "$name: FAILED"; tail -20 "$out/$name.log"; status=1
  fi
  grep -i "ema" "$out/$name.log" | grep -v "^\[W" | head -3 | sed 's/^/    /'
}
run eager
[ -n "${SINTER_EMA_QUICK:-}" ] || run eager_host --ema_device cpu
[ -n "${SINTER_EMA_QUICK:-}" ] || run per_block --compile --compile_mode reduce-overhead
run whole_step --compile --compile_mode reduce-overhead --compile_fullgraph
python3 - "$work" <<'PY'
import os, sys
import torch
from safetensors.torch import load_file
work = sys.argv[1]
def rel(a, b):
    num = sum(float((a[k].double() - b[k].double()).pow(2).sum()) for k in a)
    den = sum(float(b[k].double().pow(2).sum()) for k in b)
    return (num / max(den, 1e-300)) ** 0.5
eager_w = load_file(f"{work}/eager/t.safetensors")
eager = load_file(f"{work}/eager/t-ema.safetensors")
for run in [r for r in ("eager", "eager_host", "per_block", "whole_step") if os.path.exists(f"{work}/{r}/t-ema.safetensors")]:
    ema = load_file(f"{work}/{run}/t-ema.safetensors")
    trained = load_file(f"{work}/{run}/t.safetensors")
    keys = [k for k in ema if not k.endswith(".alpha")]
    # The rule in float64 on the run's own per-step saves, for the up factors (zero at the start, so
    # the starting weights drop out): e_12 = sum over k of 0.1 * 0.9^(12 - k) * w_k.
    ups = [k for k in keys if "lora_up" in k]
    ref = {k: 0 for k in ups}
    for step in range(1, 13):
        # The last step's weights are the final file (no step file at the run's end, as sd-scripts).
        w = load_file(f"{work}/{run}/t-step{step:08d}.safetensors" if step < 12 else f"{work}/{run}/t.safetensors")
        for k in ups:
            ref[k] = ref[k] + 0.1 * 0.9 ** (12 - step) * w[k].double()
    print(f"{run}: -ema vs the float64 rule on its own steps {rel({k: ema[k] for k in ups}, ref):.2e}; trained weights vs eager's "
          f"{rel({k: trained[k] for k in keys}, {k: eager_w[k] for k in keys}):.2e}; -ema vs eager's -ema "
          f"{rel({k: ema[k] for k in keys}, {k: eager[k] for k in keys}):.2e}")
PY
rm -rf "$work"
exit $status
