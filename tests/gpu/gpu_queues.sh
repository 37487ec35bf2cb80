#!/usr/bin/env bash
# On a lent machine with several GPUs: runs each QUEUE (one shell command line, e.g. two GPU scripts
# joined by ';') on a GPU of its own, all at once, so one call's device time covers several
# single-GPU measurements. Timings of different queues come from different cards of one host:
# compare rows within a queue (each script times its own baseline beside its subject).
#   tests/gpu/gpu_queues.sh OUTDIR SECONDS "QUEUE for GPU 0" ["QUEUE for GPU 1" ...]
# Each queue's output goes to OUTDIR/gpu-N.log as it runs; a queue still running after SECONDS is
# stopped (what it wrote stays). Prints every log at the end; exit status 1 if any queue failed.
set -uo pipefail
out="$(mkdir -p "${1:?usage: gpu_queues.sh OUTDIR SECONDS QUEUE...}" && cd "$1" && pwd)"
limit="${2:?SECONDS}"
shift 2
gpus="$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)"
[ "$#" -le "$gpus" ] || { echo "gpu_queues.sh: $# queues for $gpus GPUs"; exit 2; }
pids=()
for ((i = 0; i < $#; i++)); do
  queue="${@:i+1:1}"
  echo "GPU $i: $queue" > "$out/gpu-$i.log"
  CUDA_VISIBLE_DEVICES="$i" timeout --kill-after=10 "$limit" bash -c "$queue" >> "$out/gpu-$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < ${#pids[@]}; i++)); do
  wait "${pids[$i]}"
  rc=$?
  [ "$rc" -eq 0 ] || status=1
  echo "== GPU $i: exit $rc$([ "$rc" -eq 124 ] && echo " (stopped after $limit s)")"
  cat "$out/gpu-$i.log"
done
exit $status
