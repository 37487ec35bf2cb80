#!/usr/bin/env bash
# On the GPU machine: the same run trained eagerly and with the whole step captured as CUDA graphs
# (--compile --compile_mode reduce-overhead --compile_fullgraph; SINTER_CAPTURE_FLAGS="--compile
# --compile_mode reduce-overhead" for per-block graphs), from the same state and seed;
# compares every step's loss and the saved LoRA. Graphs replay the eager kernels, but some CUDA
# kernels are not deterministic (atomic adds in backward passes), so two eager runs differ too: the
# run is trained eagerly twice, and the captured run must differ from the first eager run no more
# than the second does (10x that, as the differences grow chaotically over steps; 1e-6 at least).
# When the two eager runs are identical, the captured one must be identical bit for bit.
#   tests/gpu/captured_vs_eager.sh RUNNER [tiny|full] [STEPS]
# tiny: the demo preset (tiny model, batch 2, several buckets, so several graphs), in fp32, bf16
# and fp16 (loss scaling). full: the full-size random SDXL run of sdxl_lora_toml.sh in bf16.
# tiny-sd15: the SD 1.5 demo preset, whose step the runner captures by its own choice (no compile
# panel, issue 56): the eager runs set SINTER_SD_CAPTURE=0, the captured one takes no flags.
# SINTER_PRECISIONS picks the precisions; SINTER_EXTRA_FLAGS adds runner flags to all three runs
# (such as "--gradient_checkpointing --gradient_accumulation_steps 2"). With "--compile" there the eager
# runs use the compile plan's fused kernels too, which round differently from the unfused operators:
# then the comparison is of the capture alone (tests/gpu/RESULTS.md, issue 51's loss read-outs).
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"
runner="$(realpath "$1")"
size="${2:-tiny}"
steps="${3:-20}"
work="${SINTER_GPU_WORK:-/tmp/sinter-captured}"
mkdir -p "$work"
cd "$work"
eager_env=()
if [ "$size" = tiny-sd15 ]; then
  [ -f demo-output/tiny_sd15.safetensors ] || "$runner" --init_checkpoint demo-output/tiny_sd15.safetensors --model_family sd15 --model_size tiny --seed 1
  [ -d demo-output/images ] || "$runner" --init_dataset demo-output/images --seed 1
  [ -d demo-output/tokenizer ] || "$runner" --init_tokenizer demo-output/tokenizer
  config="$root/presets/demo_sd15_lora_tiny.toml"
  preset_flags=(--sample_prompts "")
  precisions="${SINTER_PRECISIONS:-no bf16 fp16}"
  eager_env=(SINTER_SD_CAPTURE=0)
  SINTER_CAPTURE_FLAGS="${SINTER_CAPTURE_FLAGS:- }"
elif [ "$size" = tiny ]; then
  [ -f demo-output/tiny_sdxl.safetensors ] || "$runner" --init_checkpoint demo-output/tiny_sdxl.safetensors --model_family sdxl --model_size tiny --seed 1
  [ -d demo-output/images ] || "$runner" --init_dataset demo-output/images --seed 1
  [ -d demo-output/tokenizer ] || "$runner" --init_tokenizer demo-output/tokenizer
  config="$root/presets/demo_sdxl_lora_tiny.toml"
  # No sample images (the preset names its prompts relative to the repository root, where the demo
  # runs; samples change nothing of the training compared here).
  preset_flags=(--sample_prompts "")
  precisions="${SINTER_PRECISIONS:-no bf16 fp16}"
else
  [ -f sdxl.safetensors ] || "$runner" --init_checkpoint sdxl.safetensors --model_family sdxl --model_size full --seed 1
  [ -d images ] || "$runner" --init_dataset images --seed 1
  [ -d tokenizer ] || "$runner" --init_tokenizer tokenizer
  write_sdxl_lora_toml "$work" "$work/unused" captured "$steps" "$work/sdxl.safetensors" > full.toml
  config="$work/full.toml"
  preset_flags=()
  precisions="${SINTER_PRECISIONS:-bf16}"
fi
status=0
for precision in $precisions; do
  for mode in eager eager2 captured; do
    out="$work/out-$size-$precision-$mode"
    rm -rf "$out"
    flags=()
    env=("${eager_env[@]}")
    [ "$mode" = captured ] && read -r -a flags <<< "${SINTER_CAPTURE_FLAGS:---compile --compile_mode reduce-overhead --compile_fullgraph}" && env=()
    env "${env[@]}" "$runner" --config_file "$config" --output_dir "$out" --output_name run --max_train_steps "$steps" \
      --mixed_precision "$precision" "${preset_flags[@]}" ${SINTER_EXTRA_FLAGS:-} "${flags[@]}" --events jsonl > "$out.events.jsonl" 2> "$out.log" ||
      { echo "$size $precision $mode: the run failed"; tail -20 "$out.log"; status=1; continue 2; }
  done
  PYTHONPATH="$root/tests/gpu" python3 - "$size" "$precision" "$work/out-$size-$precision" <<'PY' || status=1
import json, sys, struct
size, precision, base = sys.argv[1:4]
from run_outputs import read_events, safetensors_float64, step_losses
def events(mode):
    return read_events(f"{base}-{mode}.events.jsonl")
def losses(mode):
    return step_losses(f"{base}-{mode}.events.jsonl")
def lora(mode):
    return safetensors_float64(f"{base}-{mode}/run.safetensors")
def loss_dev(a, b):
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
def lora_dev(a, b):
    import torch
    num = sum(float((a[k] - b[k]).norm() ** 2) for k in a)
    den = sum(float(a[k].norm() ** 2) for k in a)
    return (num / den) ** 0.5
e, e2, c = losses("eager"), losses("eager2"), losses("captured")
la, la2, lc = lora("eager"), lora("eager2"), lora("captured")
assert len(e) == len(c) == len(e2) and la.keys() == lc.keys()
noise_loss, noise_lora = loss_dev(e, e2), lora_dev(la, la2)
cap_loss, cap_lora = loss_dev(e, c), lora_dev(la, lc)
def median_ms(mode):
    ms = sorted(x["step_ms"] for x in events(mode) if x["type"] == "step")
    return ms[len(ms) // 2]
warm = [x for x in events("captured") if x["type"] == "warmup"]
print(f"{size} {precision}: {len(c)} steps; loss rel. deviation eager-vs-eager {noise_loss:.2e}, eager-vs-captured {cap_loss:.2e}; "
      f"LoRA rel. deviation {noise_lora:.2e} / {cap_lora:.2e}; median step eager {median_ms('eager'):.1f} ms, "
      f"captured {median_ms('captured'):.1f} ms; warm-up {sum(w['seconds'] for w in warm):.2f} s over {len(warm)} shapes")
# Where the losses part: the first step whose loss differs, and how many do (a read-out one step off
# shows as every step differing by a step's change; rounding shows as small differences from one step on).
differing = [i for i, (x, y) in enumerate(zip(e, c)) if x != y]
if differing:
    i = differing[0]
    print(f"  losses differ at {len(differing)} of {len(c)} steps, first at step {i + 1}: eager {e[i]!r}, captured {c[i]!r}; "
          f"per step eager {[float(f'{x:.6g}') for x in e[:6]]} captured {[float(f'{x:.6g}') for x in c[:6]]}")
if noise_loss == 0 and noise_lora == 0:
    ok = cap_loss == 0 and cap_lora == 0
else:
    ok = cap_loss <= max(10 * noise_loss, 1e-6) and cap_lora <= max(10 * noise_lora, 1e-6)
print("  " + ("agrees" if ok else "DIFFERS more than eager runs differ from each other"))
sys.exit(0 if ok else 1)
PY
done
exit $status
