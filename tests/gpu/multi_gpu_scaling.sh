#!/usr/bin/env bash
# On a lent machine with 2 GPUs (nvidia-h200-x2), after build_cuda_runner.sh: the LoRA training
# step of `sdxl` or `flux` (full size, random weights, bs1 per GPU, 1024²) timed on one GPU and on
# two (`--nproc_per_node 2`: each GPU steps its own batch, the gradients all-reduced over NCCL),
# eager and with the whole step captured; prints both tables and the scaling of samples per second.
# Usage: multi_gpu_scaling.sh sdxl|flux [steps] [extra runner options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
family="${1:-sdxl}"
steps="${2:-20}"
shift $(( $# > 2 ? 2 : $# ))
runner="$root/build-cuda/bin/sinter-runner"
one="$(mktemp)"; two="$(mktemp)"
"$runner" --model_family "$family" --benchmark_steps "$steps" --benchmark_scaling "$@" > "$one" 2> "$one.log" || { tail -30 "$one.log"; exit 1; }
"$runner" --model_family "$family" --benchmark_steps "$steps" --nproc_per_node 2 "$@" > "$two" 2> "$two.log" || { tail -30 "$two.log"; exit 1; }
echo "## one GPU"; cat "$one"
echo "## two GPUs"; cat "$two"
python3 - "$one" "$two" <<'PY'
import sys
def medians(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[5].endswith(" ms") and not cells[1].startswith("mode"):
            rows[cells[1]] = float(cells[5][:-3])
    return rows
one, two = medians(sys.argv[1]), medians(sys.argv[2])
print("| mode | 1 GPU step | 2 GPUs step | 1 GPU samples/s | 2 GPUs samples/s | speed-up | scaling efficiency |")
print("|---|---|---|---|---|---|---|")
for mode, t1 in one.items():
    if mode not in two: continue
    t2 = two[mode]
    s1, s2 = 1000.0 / t1, 2 * 1000.0 / t2
    print(f"| {mode} | {t1:.1f} ms | {t2:.1f} ms | {s1:.2f} | {s2:.2f} | {s2 / s1:.2f}x | {s2 / s1 / 2:.1%} |")
PY
