#!/usr/bin/env bash
# On the GPU machine, after build_cuda_runner.sh: everything issue 9's step needs from one call, each
# part's whole output kept under OUTDIR (a call returns only its output's tail), a summary printed:
# the fused kernels' check, the FLUX.1-dev LoRA benchmark (eager, fused, per block, whole step),
# sd-scripts' own step beside it (when .bench holds sd-scripts and the step timer, tests/gpu/README.md), and the
# fused uncaptured row's Kineto profile by kernel and by the operators that launched them.
#   tests/gpu/flux_step_report.sh OUTDIR [STEPS] [extra benchmark flags, e.g. --fp8_base]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
steps="${2:-10}"
shift $(( $# >= 2 ? 2 : 1 ))
runner="$root/build-cuda/bin/sinter-runner"
"$root/build-cuda/bin/sinter-kernel-check" > "$out/kernel-check.log" 2>&1
echo "kernel check: exit $?, $(grep -c ': ok' "$out/kernel-check.log") ok, $(grep -c FAILS "$out/kernel-check.log") failing"
grep FAILS "$out/kernel-check.log"
"$runner" --benchmark_steps "$steps" --model_family flux --mixed_precision bf16 "$@" > "$out/benchmark.log" 2>&1
echo "benchmark: exit $?"
grep -E '^\||^benchmark:|^device:|failed' "$out/benchmark.log"
if [ -f "$root/.bench/sdscripts_step.py" ]; then
  (cd "$root/.bench" && PYTHONPATH=. python3 sdscripts_step.py flux eager > "$out/sdscripts.log" 2>&1)
  echo "sd-scripts: $(grep RESULT "$out/sdscripts.log" || tail -3 "$out/sdscripts.log")"
fi
"$runner" --benchmark_steps 4 --model_family flux --mixed_precision bf16 "$@" --profile_steps 3 --output_dir "$out/profile" \
  > "$out/profile.log" 2>&1
trace="$(ls "$out"/profile/benchmark-inductor__default*.json 2>/dev/null | head -1)"
if [ -n "$trace" ]; then
  python3 "$root/tests/gpu/trace_summary.py" "$trace" 3 30 full > "$out/profile-summary.txt"
  python3 "$root/tests/gpu/trace_summary.py" "$trace" 3 30 ops > "$out/profile-ops.txt"  # which operators launched them
  head -31 "$out/profile-summary.txt" | cut -c1-150
  rm -rf "$out/profile"  # hundreds of MB of JSON; the summary stays
else
  echo "no trace: see $out/profile.log"
fi
