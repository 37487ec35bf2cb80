#!/usr/bin/env bash
# On the GPU machine: sample images in CUDA runs. The tiny SDXL demo trained eagerly, with per-block
# graphs and with the whole step captured, each with samples (at first, every 4 steps) and without:
# the samples are made and the losses are those of the run without them, to the GPU's own
# run-to-run difference (some CUDA kernels add atomically, so the run without samples is trained
# twice: the sampled run may differ from it no more than 10x as much, 1e-6 at least, and must be
# bitwise equal where the two plain runs are). Then one full-size SDXL
# sample (1024², 30 DDIM steps, CFG 7.5) from a random checkpoint in a bf16 per-block run, with its
# seconds. (FLUX needs T5's tokenizer, which the GPU machine's build leaves out.)
#   tests/gpu/sample_images.sh RUNNER [full]
set -euo pipefail
. "$(dirname "$0")/sdxl_lora_toml.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"
runner="$(realpath "$1")"
work="${SINTER_GPU_WORK:-/tmp/sinter-samples}"
mkdir -p "$work/presets"
cd "$work"
cp "$root/presets/demo_sample_prompts.txt" presets/
[ -f demo-output/tiny_sdxl.safetensors ] || "$runner" --init_checkpoint demo-output/tiny_sdxl.safetensors --model_family sdxl --model_size tiny --seed 1
[ -d demo-output/images ] || "$runner" --init_dataset demo-output/images --seed 1
[ -d demo-output/tokenizer ] || "$runner" --init_tokenizer demo-output/tokenizer
status=0
run() {  # NAME CONFIG FLAGS...
  local name="$1" config="$2"
  shift 2
  "$runner" --config_file "$config" --output_dir "$work/out-$name" --max_train_steps 8 --mixed_precision bf16 "$@" \
    --events jsonl > "$work/$name.events.jsonl" 2> "$work/$name.log" || { echo "$name: the run failed"; tail -20 "$work/$name.log"; status=1; }
}
for mode in eager blocks whole; do
  flags=()
  [ "$mode" = blocks ] && flags=(--compile --compile_mode reduce-overhead)
  [ "$mode" = whole ] && flags=(--compile --compile_mode reduce-overhead --compile_fullgraph)
  run "sdxl-$mode-samples" "$root/presets/demo_sdxl_lora_tiny.toml" "${flags[@]}" --sample_at_first --sample_every_n_steps 4
  run "sdxl-$mode-plain" "$root/presets/demo_sdxl_lora_tiny.toml" "${flags[@]}" --sample_prompts ""
  run "sdxl-$mode-plain2" "$root/presets/demo_sdxl_lora_tiny.toml" "${flags[@]}" --sample_prompts ""
done
python3 - "$work" <<'PY' || status=1
import json, sys
work = sys.argv[1]
def events(name):
    return [json.loads(l) for l in open(f"{work}/{name}.events.jsonl")]
ok = True
def losses(name):
    return [e["loss"] for e in events(name) if e["type"] == "step"]
def gap(a, b):
    return max(abs(x - y) for x, y in zip(a, b)) if len(a) == len(b) else float("inf")
for mode in ["eager", "blocks", "whole"]:
    samples = [e for e in events(f"sdxl-{mode}-samples") if e["type"] == "sample"]
    sampled, plain, plain2 = losses(f"sdxl-{mode}-samples"), losses(f"sdxl-{mode}-plain"), losses(f"sdxl-{mode}-plain2")
    noise, diff = gap(plain2, plain), gap(sampled, plain)
    same = diff == 0 if noise == 0 else diff <= max(10 * noise, 1e-6)
    print(f"sdxl {mode}: {len(samples)} samples at steps {sorted({s['step'] for s in samples})}, "
          f"{sum(s['seconds'] for s in samples) / max(1, len(samples)):.2f} s each; losses with samples differ by {diff:.2e} "
          f"from the plain run, which differs by {noise:.2e} from itself: {'ok' if same else 'TOO FAR'}")
    ok &= len(samples) == 6 and same  # steps 0, 4, 8; two prompts
sys.exit(0 if ok else 1)
PY
if [ "${2:-}" = full ]; then
  [ -f sdxl.safetensors ] || "$runner" --init_checkpoint sdxl.safetensors --model_family sdxl --model_size full --seed 1
  [ -d images ] || "$runner" --init_dataset images --seed 1
  [ -d tokenizer ] || "$runner" --init_tokenizer tokenizer
  write_sdxl_lora_toml "$work" "$work/out-full" full 2 "$work/sdxl.safetensors" > full.toml
  echo "a red circle on white --w 1024 --h 1024 --d 1 --s 30" > full_prompts.txt
  "$runner" --config_file full.toml --compile --compile_mode reduce-overhead --sample_prompts full_prompts.txt --sample_at_first \
    --events jsonl > full.events.jsonl 2> full.log || { echo "full: the run failed"; tail -20 full.log; status=1; }
  grep '"type":"sample"' full.events.jsonl || status=1
  grep -E "sample images|completed after" full.log || true
fi
exit $status
