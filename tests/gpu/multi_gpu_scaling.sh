#!/usr/bin/env bash
# On a lent machine with several GPUs (nvidia-h100-x4, nvidia-h200-x2, ...), after
# build_cuda_runner.sh: the LoRA training step of `sdxl` or `flux` (full size, random weights, bs1 per
# GPU, 1024²) timed on 1 GPU and on the GPU counts of SINTER_GPU_RUNS (each GPU steps its own batch,
# the gradients all-reduced over NCCL), eager and with the whole step captured; prints every run's
# rows and the scaling of samples per second against one GPU.
# Usage: multi_gpu_scaling.sh sdxl|flux [steps] [extra runner options...]
#   SINTER_GPU_RUNS="2:no 4:no 4:bf16"    the multi-GPU runs, GPUs:ddp_comm_hook (default "2:no"), each
#                                         optionally with environment settings for that run only:
#                                         "2:no:NCCL_MAX_CTAS=2" or "2:no:SINTER_DDP_OVERLAP=0,NCCL_MAX_CTAS=4"
#   CUDA_VISIBLE_DEVICES=2,3 ...          runs on those GPUs (two copies of this script can share a machine)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
family="${1:-sdxl}"
steps="${2:-20}"
shift $(( $# > 2 ? 2 : $# ))
runner="$root/build-cuda/bin/sinter-runner"
runs="${SINTER_GPU_RUNS:-2:no}"
work="$(mktemp -d)"
run() {  # label, environment (A=1,B=2 or ""), runner arguments...
  local label="$1" settings="$2"; shift 2
  local start=$SECONDS
  local -a env_args=()
  [ -n "$settings" ] && IFS=, read -r -a env_args <<< "$settings"
  if env "${env_args[@]}" "$runner" --model_family "$family" --benchmark_steps "$steps" --benchmark_scaling "$@" > "$work/$label" 2> "$work/$label.log"; then
    echo "## $label ($((SECONDS - start)) s)"; cat "$work/$label"
  else
    echo "## $label FAILED ($((SECONDS - start)) s)"; tail -30 "$work/$label.log"; rm -f "$work/$label"
  fi
}
run "1 GPU" "" "$@"
for r in $runs; do
  IFS=: read -r n hook settings <<< "$r"
  run "$n GPUs, ddp_comm_hook $hook${settings:+, $settings}" "${settings:-}" --nproc_per_node "$n" --ddp_comm_hook "$hook" "$@"
done
python3 - "$work" <<'PY'
import os, sys
work = sys.argv[1]
def medians(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[5].endswith(" ms") and not cells[1].startswith("mode"):
            rows[cells[1]] = float(cells[5][:-3])
    return rows
if not os.path.exists(os.path.join(work, "1 GPU")):
    sys.exit("no one-GPU baseline")
one = medians(os.path.join(work, "1 GPU"))
print("| run | mode | step | samples/s | speed-up | scaling efficiency |")
print("|---|---|---|---|---|---|")
for mode, t1 in one.items():
    print(f"| 1 GPU | {mode} | {t1:.1f} ms | {1000.0 / t1:.2f} | 1.00x | 100.0% |")
for label in sorted(os.listdir(work)):
    if label.endswith(".log") or label == "1 GPU":
        continue
    n = int(label.split()[0])
    for mode, t in medians(os.path.join(work, label)).items():
        if mode not in one:
            continue
        s1, sn = 1000.0 / one[mode], n * 1000.0 / t
        print(f"| {label} | {mode} | {t:.1f} ms | {sn:.2f} | {sn / s1:.2f}x | {sn / s1 / n:.1%} |")
PY
