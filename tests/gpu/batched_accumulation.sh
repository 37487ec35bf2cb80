#!/usr/bin/env bash
# On the GPU machine: gradient accumulation as one pass (issue 56, docs/DESIGN.md §6) against the
# same run with its micro-batches one after another (SINTER_BATCHED_ACCUMULATION=0), from the same
# seed. Each setting trains three runs: one after another twice (what the GPU's own nondeterminism
# gives) and joined. Prints, per setting: how many steps joined (the run's log), the loss and LoRA
# deviations (joined against the first sequential run, beside sequential against sequential), the
# median step and the peak memory of both; and the joined run's headline and memory lines.
#   tests/gpu/batched_accumulation.sh RUNNER [tiny|full] [STEPS]
# tiny: the demo preset (tiny SDXL, batch 2, several buckets: some steps join, some do not) with
#   gradient_accumulation_steps 2, in fp32 and bf16 (SINTER_PRECISIONS), eager, whole-step graphs
#   and per-block graphs (SINTER_MODES="eager fullgraph blocks").
# full: the full-size random SDXL LoRA of sdxl_lora_toml.sh, 1024² in one bucket, batch 1,
#   gradient_accumulation_steps 4 (SINTER_ACCUMULATION), bf16: the speed the joined pass gains.
# What to expect: the joined run's log says "gradient accumulation: N of M steps ran their
# micro-batches as one pass" with N > 0 (tiny: some, full: all but step 1); its deviations are of
# the order of the sequential runs' own (fp32: within 1e-5 where those are 0; bf16: the rounding of
# a batch-4 kernel against batch-2 ones), never a different training; full: a shorter median step.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
. "$root/tests/gpu/sdxl_lora_toml.sh"
runner="$(realpath "$1")"
size="${2:-tiny}"
steps="${3:-20}"
work="${SINTER_GPU_WORK:-/tmp/sinter-batched-accumulation}"
mkdir -p "$work"
cd "$work"
if [ "$size" = tiny ]; then
  [ -f demo-output/tiny_sdxl.safetensors ] || "$runner" --init_checkpoint demo-output/tiny_sdxl.safetensors --model_family sdxl --model_size tiny --seed 1
  [ -d demo-output/images ] || "$runner" --init_dataset demo-output/images --seed 1
  [ -d demo-output/tokenizer ] || "$runner" --init_tokenizer demo-output/tokenizer
  config="$root/presets/demo_sdxl_lora_tiny.toml"
  base_flags=(--sample_prompts "" --gradient_accumulation_steps "${SINTER_ACCUMULATION:-2}")
  precisions="${SINTER_PRECISIONS:-no bf16}"
else
  prepare_sdxl_work "$runner" "$work"
  write_sdxl_lora_toml "$work" "$work/unused" joined "$steps" "$work/sdxl.safetensors" > full.toml
  config="$work/full.toml"
  base_flags=(--no-enable_bucket --gradient_accumulation_steps "${SINTER_ACCUMULATION:-4}")
  precisions="${SINTER_PRECISIONS:-bf16}"
fi
status=0
for precision in $precisions; do
  for mode in ${SINTER_MODES:-eager fullgraph blocks}; do
    case "$mode" in
      eager) mode_flags=() ;;
      fullgraph) mode_flags=(--compile --compile_mode reduce-overhead --compile_fullgraph) ;;
      blocks) mode_flags=(--compile --compile_mode reduce-overhead) ;;
      *) echo "unknown mode $mode"; exit 2 ;;
    esac
    base="$work/out-$size-$precision-$mode"
    for run in one one2 joined; do
      out="$base-$run"
      rm -rf "$out"
      env=()
      [ "$run" != joined ] && env=(SINTER_BATCHED_ACCUMULATION=0)
      env "${env[@]}" "$runner" --config_file "$config" --output_dir "$out" --output_name run --max_train_steps "$steps" \
        --mixed_precision "$precision" "${base_flags[@]}" "${mode_flags[@]}" --events jsonl > "$out.events.jsonl" 2> "$out.log" ||
        { echo "$size $precision $mode $run: the run failed"; tail -20 "$out.log"; status=1; continue 2; }
    done
    echo "== $size $precision $mode"
    grep -h "gradient accumulation: " "$base-joined.log" | sed 's/^/  joined: /' || true
    PYTHONPATH="$root/tests/gpu" python3 - "$base" <<'PY' || status=1
import sys
from run_outputs import read_events, safetensors_float64, step_losses, relative_distance
base = sys.argv[1]
def loss_dev(a, b):
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b))
def stats(run):
    ev = read_events(f"{base}-{run}.events.jsonl")
    ms = sorted(e["step_ms"] for e in ev if e["type"] == "step")[2:]
    peak = max((e["peak_mem_mb"] for e in ev if e["type"] == "step"), default=0)
    return ms[len(ms) // 2], peak
one, one2, joined = (step_losses(f"{base}-{r}.events.jsonl") for r in ("one", "one2", "joined"))
la, la2, lj = (safetensors_float64(f"{base}-{r}/run.safetensors") for r in ("one", "one2", "joined"))
assert len(one) == len(joined) == len(one2) and la.keys() == lj.keys()
noise = (loss_dev(one2, one), relative_distance(la2, la))
dev = (loss_dev(joined, one), relative_distance(lj, la))
(ms1, peak1), (msj, peakj) = stats("one"), stats("joined")
print(f"  losses: joined vs one after another {dev[0]:.2e} (one after another twice: {noise[0]:.2e}); "
      f"LoRA {dev[1]:.2e} ({noise[1]:.2e})")
print(f"  median step: one after another {ms1:.1f} ms, joined {msj:.1f} ms ({ms1 / msj:.2f}x); "
      f"peak {peak1:.0f} MiB, joined {peakj:.0f} MiB")
PY
  done
done
exit $status
