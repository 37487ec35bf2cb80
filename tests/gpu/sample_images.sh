#!/usr/bin/env bash
# On the GPU machine: sample images in CUDA runs. The tiny SDXL demo trained eagerly, with per-block
# graphs and with the whole step captured, each with samples (at first, every 4 steps) and without:
# the samples are made and the losses are those of the run without them, to the GPU's own
# run-to-run difference (some CUDA kernels add atomically, so the run without samples is trained
# twice: the sampled run may differ from it no more than 10x as much, 1e-6 at least, and must be
# bitwise equal where the two plain runs are). The per-block run's samples replay the training
# graphs (batch 2 at 128², as the guided samples): its images at first, before training, are the
# whole-step run's (sampled eagerly, with the same kernels) to half a level. Then one full-size SDXL sample (1024², 30 DDIM steps, CFG 7.5) from
# a random checkpoint in bf16 per-block runs of batch 2, at first and after step 2 (both replaying
# the graphs the warm-up captured), with their seconds, and the same run with LoRA dropout, which
# samples eagerly. (FLUX needs T5's tokenizer,
# which the GPU machine's build leaves out.)
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
import struct, zlib
def pixels(path):  # an 8-bit RGB PNG's bytes, unfiltered
    data = open(path, "rb").read()
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        if kind == b"IHDR": width, height = struct.unpack(">II", body[:8])
        if kind == b"IDAT": idat += body
        pos += 12 + size
    raw, stride, out, prev = zlib.decompress(idat), width * 3, [], bytearray(width * 3)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a, b = row[i - 3] if i >= 3 else 0, prev[i]
            c = prev[i - 3] if i >= 3 else 0
            if kind == 1: row[i] = (row[i] + a) & 255
            elif kind == 2: row[i] = (row[i] + b) & 255
            elif kind == 3: row[i] = (row[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += row
        prev = row
    return out
def image_gap(mode, reference, at_first):  # largest mean absolute difference per channel, in levels of 255
    def paths(name):
        return {(e["step"], e["index"]): e["path"] for e in events(name) if e["type"] == "sample" and (e["step"] == 0) == at_first}
    mine, theirs = paths(f"sdxl-{mode}-samples"), paths(f"sdxl-{reference}-samples")
    diffs = []
    for key in sorted(mine):
        a, b = pixels(mine[key]), pixels(theirs[key])
        diffs.append(sum(abs(x - y) for x, y in zip(a, b)) / len(a))
    return max(diffs) if diffs else float("inf")
# At first every mode samples the same weights: the per-block run replaying the graphs its warm-up
# captured, the whole-step run eagerly with the same kernels (the eager run's are others: without
# compile there are no fused kernels). Later samples differ by what training's noise does to them.
replays = [l for l in open(f"{work}/sdxl-blocks-samples.log") if "sample images replayed" in l]
gap = image_gap("blocks", "whole", True)
reused = bool(replays) and gap <= 0.5
print(f"sdxl blocks: {replays[0].strip() if replays else 'no block pass replayed for the samples'}; its images at first "
      f"differ from the whole-step run's (sampled eagerly with the same kernels) by {gap:.3f} levels (mean of 255): "
      f"{'ok' if reused else 'TOO FAR'}; from the eager run's by {image_gap('blocks', 'eager', True):.1f}; "
      f"later ones from the whole-step run's by {image_gap('blocks', 'whole', False):.1f}")
ok &= reused
sys.exit(0 if ok else 1)
PY
if [ "${2:-}" = full ]; then
  [ -f sdxl.safetensors ] || "$runner" --init_checkpoint sdxl.safetensors --model_family sdxl --model_size full --seed 1
  [ -d images ] || "$runner" --init_dataset images --seed 1
  [ -d tokenizer ] || "$runner" --init_tokenizer tokenizer
  write_sdxl_lora_toml "$work" "$work/out-full" full 2 "$work/sdxl.safetensors" > full.toml
  echo "a red circle on white --w 1024 --h 1024 --d 1 --s 30" > full_prompts.txt
  # Batch 2, as the guided sample: the sample replays the training graphs of its 1024² bucket. With
  # LoRA dropout (which those graphs draw) it samples eagerly: the same sample's time without reuse.
  for variant in reuse eager; do
    flags=()
    [ "$variant" = eager ] && flags=(--network_dropout 0.1)
    "$runner" --config_file full.toml --compile --compile_mode reduce-overhead --train_batch_size 2 "${flags[@]}" \
      --sample_prompts full_prompts.txt --sample_at_first --sample_every_n_steps 2 --output_dir "$work/out-full-$variant" \
      --events jsonl > "full-$variant.events.jsonl" 2> "full-$variant.log" || { echo "full $variant: the run failed"; tail -20 "full-$variant.log"; status=1; }
    echo "full $variant:"
    grep '"type":"sample"' "full-$variant.events.jsonl" || status=1
    grep -E "sample images|completed after" "full-$variant.log" || true
  done
fi
exit $status
