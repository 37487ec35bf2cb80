#!/usr/bin/env bash
# On the GPU machine, after build_cuda_runner.sh: issue 38's memory budgets (vram_budget_gb) on an
# H100/H200 that EMULATES smaller cards: each run's CUDA caching allocator is capped at the budget
# (SINTER_CUDA_MEMORY_CAP_GB, setMemoryFraction; sd-scripts' step: set_per_process_memory_fraction).
# The numbers are emulated: the card's bandwidth and compute are the big card's, only memory is capped.
#
#   tests/gpu/vram_budget.sh flux OUTDIR [BUDGETS...]     FLUX.1-dev LoRA 1024² bs1 rank 32 (default 8 12 16 24 GiB),
#                                                         --benchmark_steps: the full-size transformer step with random
#                                                         weights as the plan sets it up; then sd-scripts' 12 GB recipe
#                                                         (--fp8_base --blocks_to_swap 16 --gradient_checkpointing)
#                                                         timed in the same call at a 12 GiB cap (.bench: sd-scripts)
#   tests/gpu/vram_budget.sh sdscripts OUTDIR             sd-scripts' 12 GB recipe alone (SDSCRIPTS_SWAPS, SDSCRIPTS_CAP)
#   tests/gpu/vram_budget.sh flux-assets OUTDIR           full-size random FLUX.1-dev files (transformer, AE, CLIP-L, T5-XXL;
#                                                         about 34 GB under VRAM_WORK_DIR/flux-work), a dataset and tokenizers, for:
#   tests/gpu/vram_budget.sh flux-start OUTDIR [BUDGETS...]  FLUX.1-dev LoRA 1024² bs1 rank 32 through the REAL loop (default 8
#                                                         GiB), cached latents and text encoder outputs, at a cap of the budget:
#                                                         the staged start (AE, then CLIP-L + T5-XXL in fp8, then the
#                                                         transformer) must fit; the table gives the start's measured peak
#                                                         against the plan's start estimate, and the step's (one budget a call)
#   tests/gpu/vram_budget.sh sdxl OUTDIR [KIND:GIB...]    SDXL LoRA at 6 (the plan sets fp8_base) and 8 GiB, SDXL fine-tune (Adafactor, full_bf16,
#                                                         fused backward when the plan picks it) at 16 and 24 GiB: the
#                                                         real loop on a full-size random checkpoint, cached latents and
#                                                         text encoder outputs, median of steps 3-8, peak from its events
#   tests/gpu/vram_budget.sh measure OUTDIR               the measured activation costs for core/vram_costs.h (FLUX bench
#                                                         with and without checkpointing, no cap)
#
# Each part fits in about 4 minutes on an H100 (split FLUX's budgets over calls if the model build is
# slow: `flux OUT 8 12` then `flux OUT 16 24`). Every run's log is kept under OUTDIR; a failing
# budget is reported in the table and the others still run; the exit status is 1 if any failed.
# The files the runs work on (checkpoints, datasets, caches, trained outputs: thousands of files and
# tens of GB) go under VRAM_WORK_DIR (default /tmp/sinter-vram-work), not OUTDIR, so that OUTDIR
# holds only logs and tables and comes back whole from the lent machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
part="${1:?usage: vram_budget.sh flux|sdscripts|flux-assets|flux-start|sdxl|measure OUTDIR [BUDGETS...]}"
out="$(mkdir -p "${2:?OUTDIR}" && cd "$2" && pwd)"
shift 2
runner="${SINTER_RUNNER:-$root/build-cuda/bin/sinter-runner}"
work="$(mkdir -p "${VRAM_WORK_DIR:-/tmp/sinter-vram-work}" && cd "${VRAM_WORK_DIR:-/tmp/sinter-vram-work}" && pwd)"
export SINTER_CACHE_DIR="$work/cache"  # the re-plan record of these runs, kept apart from the user's
steps="${VRAM_BENCH_STEPS:-6}"
status=0
summary="$out/summary-$part.md"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

# The plan's lines from a log ("plan: ...", "estimated step peak ..."), on one line.
plan_of() { { grep -E 'plan: |no plan fits|estimated step peak' "$1" || true; } | sed -E 's/^[a-z]+ +//; s/^ +//' | head -2 | tr '\n' ' ' | cut -c1-260; }
# The last error line of a log, for the table.
why_of() { { grep -E "$2" "$1" || tail -1 "$1"; } | tail -1 | cut -c1-200; }

flux_budget() {
  local b="$1" log="$out/flux-$1.log"
  local rc=0
  SINTER_CUDA_MEMORY_CAP_GB="$b" timeout "${VRAM_RUN_TIMEOUT:-280}" "$runner" --benchmark_steps "$steps" --benchmark_scaling --model_family flux \
    --mixed_precision bf16 --vram_budget_gb "$b" > "$log" 2>&1 || rc=$?
  local plan; plan="$(plan_of "$log")"
  # The benchmark's rows: | mode | shapes | mechanism | first | median | pipelined | vs eager | peak | replayed |
  local rows; rows="$(grep -E '^\| (eager|inductor|cudagraphs)' "$log" || true)"
  if [ "$rc" -ne 0 ] || [ -z "$rows" ]; then
    say "| $b GiB | $plan | failed (exit $rc): $(why_of "$log" 'error|out of memory|refused') | | |"
    status=1
    return
  fi
  while IFS= read -r row; do
    local mode median peak
    mode="$(echo "$row" | awk -F'|' '{gsub(/^ +| +$/, "", $2); print $2}')"
    median="$(echo "$row" | awk -F'|' '{gsub(/^ +| +$/, "", $6); print $6}')"
    peak="$(echo "$row" | awk -F'|' '{gsub(/^ +| +$/, "", $9); print $9}')"
    if echo "$row" | grep -qE 'refused|failed'; then
      say "| $b GiB | $plan | $mode: $(echo "$row" | awk -F'|' '{print $4}' | cut -c1-120) | | |"
    else
      local over; over="$(python3 -c "import sys; p=float('$peak'.split()[0])/1024; print(f'{p:.2f} GiB' + (' OVER' if p > $b else ''))")"
      say "| $b GiB | $plan | $mode | $median | $over |"
    fi
  done <<< "$rows"
}

sdscripts_recipe() {
  local swap="$1" cap="$2" log="$out/sdscripts-swap$1-cap$2.log"
  if [ ! -d "$root/.bench/library" ]; then
    say "| sd-scripts | swap $swap fp8 gc at ${cap} GiB | not run: .bench has no sd-scripts (library/, networks/) | | |"
    return
  fi
  local rc=0
  PYTHONPATH="$root/.bench" timeout "${VRAM_RUN_TIMEOUT:-280}" python3 "$root/tests/gpu/sdscripts_flux_lowmem_step.py" "$swap" fp8 gc "$cap" > "$log" 2>&1 || rc=$?
  local result; result="$(grep RESULT "$log" | sed 's/^RESULT //' || true)"
  if [ "$rc" -ne 0 ] || [ -z "$result" ]; then
    say "| sd-scripts ${cap} GiB | --fp8_base --blocks_to_swap $swap --gradient_checkpointing | failed (exit $rc): $(tail -1 "$log" | cut -c1-160) | | |"
    status=1
    return
  fi
  python3 - "$result" "$swap" "$cap" <<'PY' | tee -a "$summary"
import json, sys
r = json.loads(sys.argv[1])
print(f"| sd-scripts {sys.argv[3]} GiB | --fp8_base --blocks_to_swap {sys.argv[2]} --gradient_checkpointing (its 12 GB recipe) | eager | {r['step_ms']} ms | {r['peak_gib']:.2f} GiB |")
PY
}

# Full-size random files for FAMILY under WORKDIR (kept between calls), a dataset and tokenizers:
# assets WORKDIR FAMILY CHECKPOINT DONE (DONE: the file whose presence means the checkpoint is written).
assets() {
  local w="$1" family="$2" checkpoint="$3" done="$4"
  mkdir -p "$w"
  [ -f "$done" ] || "$runner" --init_checkpoint "$checkpoint" --model_family "$family" --model_size full --seed 1 > "$w/init.log" 2>&1
  [ -d "$w/images" ] || "$runner" --init_dataset "$w/images" --seed 1 >> "$w/init.log" 2>&1
  [ -d "$w/tokenizer" ] || "$runner" --init_tokenizer "$w/tokenizer" >> "$w/init.log" 2>&1
}
# FLUX's checkpoint comes with its AE, CLIP-L and T5-XXL; T5-XXL is written last.
flux_assets() { assets "$work/flux-work" flux "$work/flux-work/flux/flux1-dev.safetensors" "$work/flux-work/flux/t5xxl_fp16.safetensors"; }

flux_start_budget() {
  local b="$1" w="$work/flux-work" name="flux-start-$1"
  if [ ! -f "$w/flux/t5xxl_fp16.safetensors" ]; then
    say "| FLUX start $b GiB | | not run: run \`vram_budget.sh flux-assets $out\` first | | |"
    status=1
    return
  fi
  cat > "$w/$name.toml" <<TOML
model_family = "flux"
training_type = "lora"
pretrained_model_name_or_path = "$w/flux/flux1-dev.safetensors"
ae = "$w/flux/ae.safetensors"
clip_l = "$w/flux/clip_l.safetensors"
t5xxl = "$w/flux/t5xxl_fp16.safetensors"
clip_tokenizer = "$w/tokenizer"
t5_tokenizer = "$w/tokenizer"
output_dir = "$w/out-$name"
output_name = "$name"
train_data_dir = "$w/images"
resolution = "1024,1024"
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
network_train_unet_only = true
network_dim = 32
optimizer_type = "AdamW"
learning_rate = 1e-4
max_train_steps = ${FLUX_START_STEPS:-3}
mixed_precision = "bf16"
seed = 1
save_precision = "bf16"
vram_budget_gb = $b
TOML
  local rc=0
  SINTER_CUDA_MEMORY_CAP_GB="$b" timeout "${VRAM_RUN_TIMEOUT:-280}" "$runner" --config_file "$w/$name.toml" --events jsonl > "$out/$name.events.jsonl" 2> "$out/$name.log" || rc=$?
  local plan; plan="$(plan_of "$out/$name.log")"
  local start; start="$({ grep -oE "start \(loading, caches, warm-up\) peaked at [0-9.]+ GiB.*estimated the start at [0-9.]+ GiB" "$out/$name.log" || true; } | tail -1)"
  if [ "$rc" -ne 0 ]; then
    say "| FLUX start $b GiB | $plan | failed (exit $rc): $(why_of "$out/$name.log" 'error|out of memory') | ${start:-start peak not reached} | |"
    status=1
    return
  fi
  python3 - "$out/$name.events.jsonl" "$b" "$plan" "$start" <<'PY' | tee -a "$summary"
import json, re, statistics, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
steps = [e for e in events if e.get("type") == "step"]
b = float(sys.argv[2])
m = re.search(r"peaked at ([\d.]+) GiB.*estimated the start at ([\d.]+) GiB", sys.argv[4])
start = f"start {m.group(1)} GiB (estimate {m.group(2)}){' OVER' if float(m.group(1)) > b else ''}" if m else "start: no line"
ms = statistics.median(e["step_ms"] for e in steps[1:]) if len(steps) > 1 else float("nan")
peak = max(e["peak_mem_mb"] for e in steps) / 1024 if steps else float("nan")
print(f"| FLUX start {sys.argv[2]} GiB | {sys.argv[3]} | real loop: {start} | {ms:.1f} ms | step {peak:.2f} GiB{' OVER' if peak > b else ''} |")
PY
}

sdxl_assets() { assets "$work/sdxl-work" sdxl "$work/sdxl-work/sdxl.safetensors" "$work/sdxl-work/sdxl.safetensors"; }

sdxl_budget() {
  local kind="$1" b="$2" w="$work/sdxl-work" name="sdxl-$1-$2"
  local method extra
  if [ "$kind" = fused ]; then
    method='training_type = "finetune"'
    extra=$'full_bf16 = true\nfused_backward_pass = true\noptimizer_type = "Adafactor"\noptimizer_args = ["scale_parameter=False", "relative_step=False", "warmup_init=False"]\nlearning_rate = 1e-5'
  elif [ "$kind" = lora ]; then
    method='training_type = "lora"'
    extra=$'network_dim = 8\nnetwork_train_unet_only = true\noptimizer_type = "AdamW"\nlearning_rate = 1e-4'
  else
    method='training_type = "finetune"'
    extra=$'full_bf16 = true\noptimizer_type = "Adafactor"\noptimizer_args = ["scale_parameter=False", "relative_step=False", "warmup_init=False"]\nlearning_rate = 1e-5'
  fi
  cat > "$w/$name.toml" <<TOML
model_family = "sdxl"
$method
pretrained_model_name_or_path = "$w/sdxl.safetensors"
clip_tokenizer = "$w/tokenizer"
output_dir = "$w/out-$name"
output_name = "$name"
train_data_dir = "$w/images"
resolution = "1024,1024"
caption_extension = ".txt"
cache_latents = true
cache_text_encoder_outputs = true
max_train_steps = 8
mixed_precision = "bf16"
seed = 1
save_precision = "bf16"
vram_budget_gb = $b
$extra
TOML
  local rc=0
  SINTER_CUDA_MEMORY_CAP_GB="$b" timeout "${VRAM_RUN_TIMEOUT:-280}" "$runner" --config_file "$w/$name.toml" --events jsonl > "$out/$name.events.jsonl" 2> "$out/$name.log" || rc=$?
  local plan; plan="$(plan_of "$out/$name.log")"
  if [ "$rc" -ne 0 ]; then
    say "| SDXL $kind $b GiB | $plan | failed (exit $rc): $(why_of "$out/$name.log" 'error|out of memory') | | |"
    status=1
    return
  fi
  python3 - "$out/$name.events.jsonl" "$kind" "$b" "$plan" <<'PY' | tee -a "$summary"
import json, statistics, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
steps = [e for e in events if e.get("type") == "step"]
warn = [e["message"] for e in events if e.get("type") == "warning" and "vram_budget_gb" in e.get("message", "")]
ms = statistics.median(e["step_ms"] for e in steps[2:]) if len(steps) > 2 else float("nan")
peak = max(e["peak_mem_mb"] for e in steps) / 1024 if steps else float("nan")
b = float(sys.argv[3])
print(f"| SDXL {sys.argv[2]} {sys.argv[3]} GiB | {sys.argv[4]} | real loop | {ms:.1f} ms | {peak:.2f} GiB{' OVER' if peak > b else ''}{' (warned)' if warn else ''} |")
PY
}

say "# vram_budget_gb, $part: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1) (smaller cards EMULATED by capping the allocator)"
say ""
say "| budget | plan (estimate) | mode | median step | measured peak |"
say "|---|---|---|---|---|"
case "$part" in
  flux)
    budgets=("$@")
    [ ${#budgets[@]} -gt 0 ] || budgets=(8 12 16 24)
    for b in "${budgets[@]}"; do flux_budget "$b"; done
    for swap in ${SDSCRIPTS_SWAPS:-16}; do sdscripts_recipe "$swap" "${SDSCRIPTS_CAP:-12}"; done
    ;;
  sdscripts)
    # sd-scripts' 12 GB recipe alone (the flux part runs it after its budgets).
    for swap in ${SDSCRIPTS_SWAPS:-16}; do sdscripts_recipe "$swap" "${SDSCRIPTS_CAP:-12}"; done
    ;;
  flux-assets)
    flux_assets
    say "| FLUX assets | $(ls -1 "$work/flux-work/flux" | tr '\n' ' ') | written | | |"
    ;;
  flux-start)
    budgets=("$@")
    [ ${#budgets[@]} -gt 0 ] || budgets=(8)
    for b in "${budgets[@]}"; do flux_start_budget "$b"; done
    ;;
  sdxl)
    # KIND:BUDGET (default lora:6 lora:8 finetune:16 finetune:24); "fused:16" sets fused_backward_pass
    # itself (the plan keeps it) to time it beside the plan's own choice.
    runs=("$@")
    [ ${#runs[@]} -gt 0 ] || runs=(lora:6 lora:8 finetune:16 finetune:24)
    sdxl_assets
    for r in "${runs[@]}"; do sdxl_budget "${r%%:*}" "${r##*:}"; done
    ;;
  measure)
    # No cap, the settings forced (set to non-default values, which the plan keeps); the plan line
    # gives the estimate's parts; the measured peak less the weights, trained state and fixed bytes
    # over the tokens is the activation cost per token (core/vram_costs.h).
    for variant in plain gc; do
      flags=(--vram_budget_gb 200)
      [ "$variant" = gc ] && flags+=(--gradient_checkpointing)
      log="$out/measure-flux-$variant.log"
      timeout "${VRAM_RUN_TIMEOUT:-280}" "$runner" --benchmark_steps 4 --benchmark_scaling --model_family flux --mixed_precision bf16 "${flags[@]}" > "$log" 2>&1 || status=1
      python3 - "$log" "$variant" <<'PY' | tee -a "$summary"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"weights ([\d.]+) GiB, trained ([\d.]+) GiB, gradients ([\d.]+) GiB, optimizer ([\d.]+) GiB, activations ([\d.]+) GiB", text)
rows = [l for l in text.splitlines() if l.startswith("| eager")]
if not m or not rows:
    print(f"| measure {sys.argv[2]} | no plan line or eager row: see {sys.argv[1]} | | | |"); sys.exit(0)
peak = float(rows[0].split("|")[8].split()[0]) / 1024
margin, fixed, tokens = 1.06, 0.5, 4608
rest = sum(float(x) for x in m.groups()[:4])
act = peak / margin - rest - fixed
key = "kFluxFullBytesPerToken" if sys.argv[2] == "plain" else "kFluxSavedBytesPerToken + kFluxRecomputeBytesPerToken"
print(f"| measure {sys.argv[2]} | estimated activations {m.group(5)} GiB | eager | measured peak {peak:.2f} GiB | {key} = {act * 2**30 / tokens:.3g} bytes/token |")
PY
    done
    ;;
  *) echo "unknown part '$part' (flux, sdscripts, flux-assets, flux-start, sdxl or measure)"; exit 2 ;;
esac
echo
echo "summary: $summary; logs: $out"
exit $status
