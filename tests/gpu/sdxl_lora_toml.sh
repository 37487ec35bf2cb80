# Sourced by the GPU scripts: the full-size SDXL LoRA run they train (a random checkpoint, the
# generated dataset at 1024 buckets, cached latents and text outputs, rank 32 on the UNet, bf16).
#   prepare_sdxl_work RUNNER WORK        makes WORK's random full-size checkpoint, dataset and tokenizer once
#   write_sdxl_lora_toml WORK OUTPUT_DIR OUTPUT_NAME STEPS CHECKPOINT > run.toml
#   report_warmup RUN EVENTS.jsonl LOG   prints the run's warm-up, median step, GEMM results read or tuned
prepare_sdxl_work() {
  mkdir -p "$2"
  [ -f "$2/sdxl.safetensors" ] || "$1" --init_checkpoint "$2/sdxl.safetensors" --model_family sdxl --model_size full --seed 1
  [ -d "$2/images" ] || "$1" --init_dataset "$2/images" --seed 1
  [ -d "$2/tokenizer" ] || "$1" --init_tokenizer "$2/tokenizer"
}

write_sdxl_lora_toml() {
  cat <<TOML
[model]
model_family = "sdxl"
pretrained_model_name_or_path = "$5"
clip_tokenizer = "$1/tokenizer"
output_dir = "$2"
output_name = "$3"
[dataset]
train_data_dir = "$1/images"
resolution = "1024,1024"
enable_bucket = true
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
[training]
max_train_steps = $4
mixed_precision = "bf16"
seed = 1
[network]
network_dim = 32
network_alpha = 16.0
network_train_unet_only = true
[optimizer]
learning_rate = 0.0002
TOML
}

report_warmup() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
run, events, log = sys.argv[1:]
lines = [json.loads(l) for l in open(events) if l.startswith("{")]
warmup = sum(e["seconds"] for e in lines if e.get("type") == "warmup")
steps = sorted(e["step_ms"] for e in lines if e.get("type") == "step")[5:]
text = open(log, errors="replace").read()
read = "could not open" not in text  # TunableOp's verbose log says whether it found the results file
print(f"{run} run: warm-up {warmup:.2f} s, median step {steps[len(steps) // 2]:.1f} ms, "
      f"tuning results {'read from the cache' if read else 'not cached yet: every GEMM shape tuned'}")
PY
}
