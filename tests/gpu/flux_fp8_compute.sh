#!/usr/bin/env bash
# On the GPU machine, after build_cuda_runner.sh: issue 38's FP8 compute for FLUX (fp8_base +
# fp8_scaled + fp8_fast), each part's whole output kept under OUTDIR, a table per part printed.
#   tests/gpu/flux_fp8_compute.sh OUTDIR [PART ...]     (no PART: all of them, in this order)
# Parts (each a few minutes on an H100, quantize and gemm under one):
#   quantize  the fused rowwise quantize kernel against the same arithmetic in torch operators at FLUX's
#             row lengths: every float8 code and scale bit for bit; kernel, torch rowwise and per-tensor timed
#   gemm      FLUX's Linear GEMMs (4608 tokens) forward and backward: bf16, FP8 per tensor, FP8 rowwise and
#             rowwise with use_fast_accum, each timed (quantizing included) and against float64
#   gemv      the few-row e4m3 products (FLUX's modulations and embedders, bs 1-4) against float64 and
#             the dequantised weight's cuBLAS GEMM they replace, each timed
#   linear    one FP8 Linear with LoRA, forward and backward, against float64 (bounds in the table)
#   grads     full-size random FLUX.1-dev, 1024x1024, one batch: every LoRA module's gradient with
#             FP8 compute against bf16's, as cosine similarity (forward only, forward+backward with dy
#             e4m3, and with dy e5m2 beside it)
#   loss      full-size random FLUX.1-dev, 512x512, 300 steps of LoRA (AdamW) on 8 cycled batches,
#             the same noise and timesteps: bf16 against FP8 compute, smoothed curves' max deviation
#             (FP8_LOSS_FORWARD_ONLY=1: a third curve with the backward in bf16; FP8_LOSS_STEPS, FP8_LOSS_SIDE)
#   speed     full-size FLUX.1-dev LoRA step (1024x1024, bs1, rank 32): eager and captured whole
#             step, bf16 and FP8 compute (forward+backward); FP8_BENCH_STEPS timed steps a row (10)
#   sdscripts sd-scripts' own eager FLUX step (.bench/sdscripts_step.py, tests/gpu/README.md): run it
#             in the same call as speed, the machines' timings vary from call to call
#   speed-fwd the same FP8 rows with the backward in bf16 (--no-fp8_fast_backward)
#   speed-accum the FP8 rows with use_fast_accum off, in the forward's GEMMs, and in both passes'
#             (the trainer's diagnostic SINTER_FP8_FAST_ACCUM=0 / forward / 1; FP8_ACCUM_FORMS picks)
# linear, grads and loss test fp8_fast as it trains (rowwise scales, dy e4m3, use_fast_accum in both passes)
# unless FP8_SCALING=tensor, FP8_GRADIENT_FORMAT=e5m2 or FP8_FAST_ACCUM=0|forward ask for another
# form (sinter-fp8-compute-check only; the trainer has no such options, only the diagnostic above).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(quantize gemm gemv linear grads loss speed sdscripts speed-fwd)
bin="$root/build-cuda/bin"
steps="${FP8_BENCH_STEPS:-10}"
status=0
fp8=(--fp8_base --fp8_scaled --fp8_fast)

bench() {  # LABEL LOG [flags...]: the benchmark's eager and captured rows
  local label="$1" log="$2"
  shift 2
  "$bin/sinter-runner" --benchmark_steps "$steps" --benchmark_scaling --model_family flux --mixed_precision bf16 "$@" \
    > "$out/$log" 2>&1
  local rc=$?
  echo "$label: exit $rc ($out/$log)"
  grep -E '^\||^benchmark:|^device:|refused|fp8_fast:|error|failed' "$out/$log"
  [ $rc -eq 0 ] || status=1
}

for part in "${parts[@]}"; do
  echo
  echo "== $part =="
  start=$(date +%s)
  case "$part" in
    quantize|gemm|gemv|linear)
            "$bin/sinter-fp8-compute-check" "$part" > "$out/$part.log" 2>&1 || status=1
            cat "$out/$part.log" ;;
    grads)  "$bin/sinter-fp8-compute-check" grads "${FP8_GRADS_SIDE:-128}" > "$out/grads.log" 2>&1 || status=1
            grep -E '^\||^\(|^FP8 form|refused|sinter-fp8' "$out/grads.log" ;;
    loss)   "$bin/sinter-fp8-compute-check" loss "${FP8_LOSS_STEPS:-300}" "${FP8_LOSS_SIDE:-64}" \
              ${FP8_LOSS_FORWARD_ONLY:+forward-only-too} > "$out/loss.log" 2>&1 || status=1
            grep -E '^\||^smoothed|^RESULT|^FP8 form|refused|sinter-fp8' "$out/loss.log" ;;
    speed)  bench "bf16" speed-bf16.log
            bench "fp8_fast (forward and backward)" speed-fp8.log "${fp8[@]}" ;;
    sdscripts)
            if [ -f "$root/.bench/sdscripts_step.py" ]; then
              (cd "$root/.bench" && PYTHONPATH=. python3 sdscripts_step.py flux eager > "$out/sdscripts.log" 2>&1)
              echo "sd-scripts eager: $(grep RESULT "$out/sdscripts.log" || tail -3 "$out/sdscripts.log")"
            else
              echo "sd-scripts eager: skipped (no .bench/sdscripts_step.py: tests/gpu/README.md)"
            fi ;;
    speed-fwd) bench "fp8_fast (forward only)" speed-fp8-forward.log "${fp8[@]}" --no-fp8_fast_backward ;;
    speed-accum)
            for form in ${FP8_ACCUM_FORMS:-0 forward 1}; do
              SINTER_FP8_FAST_ACCUM="$form" bench "fp8_fast, SINTER_FP8_FAST_ACCUM=$form" "speed-fp8-accum-$form.log" "${fp8[@]}"
            done ;;
    *) echo "unknown part '$part' (quantize, gemm, gemv, linear, grads, loss, speed, sdscripts, speed-fwd, speed-accum)"; status=2 ;;
  esac
  echo "($part: $(( $(date +%s) - start )) s)"
done
exit $status
