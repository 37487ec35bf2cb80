#!/usr/bin/env bash
# CTest driver for .ci/gpu-build's checks before it builds: each thing a GPU build needs and lacks
# is said in one line naming it, with exit 1, and nothing is installed or built. Here (no GPU, no
# pip PyTorch) every path ends in such a line:
#   a LIBTORCH that is no libtorch; a CPU libtorch (no lib/libtorch_cuda.so); a CUDA libtorch
#   without nvcc; no LIBTORCH and a python3 without PyTorch (a stand-in python3 first on PATH).
#   gpu_build_test.sh GPU_BUILD WORK_DIR
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 GPU_BUILD WORK_DIR" >&2; exit 2; }
script="$1" work="$2"
rm -rf "$work" && mkdir -p "$work/bin" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

# expect NAME PATTERN ENV...: the script, run with ENV, exits 1 with one line on stderr matching PATTERN.
expect() {
  local name="$1" pattern="$2"; shift 2
  echo "== $name"
  env "$@" SINTER_BUILD_DIR="$work/build" bash "$script" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  cat "$work/$name.out" "$work/$name.err"
  [ "$rc" -eq 1 ] || fail "$name: exit $rc (expected 1)"
  [ "$(wc -l < "$work/$name.err")" -eq 1 ] || fail "$name: the refusal is not one line"
  grep -qE "$pattern" "$work/$name.err" || fail "$name: the message does not match '$pattern'"
  [ ! -e "$work/build" ] || fail "$name: it configured or built before refusing"
}

expect not-a-libtorch "LIBTORCH=$work/none has no share/cmake/Torch/TorchConfig.cmake" LIBTORCH="$work/none"

mkdir -p "$work/cpu/share/cmake/Torch" "$work/cpu/lib" && touch "$work/cpu/share/cmake/Torch/TorchConfig.cmake" "$work/cpu/lib/libtorch_cpu.so"
expect cpu-libtorch "is a CPU libtorch \(no lib/libtorch_cuda.so\)" LIBTORCH="$work/cpu"

cp -r "$work/cpu" "$work/cuda" && touch "$work/cuda/lib/libtorch_cuda.so"
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  expect cuda-libtorch-without-nvcc "no nvcc: install the CUDA toolkit" LIBTORCH="$work/cuda"
fi

# A python3 that has no PyTorch, first on PATH.
printf '#!/bin/sh\necho "ModuleNotFoundError: No module named torch" >&2\nexit 1\n' > "$work/bin/python3" && chmod +x "$work/bin/python3"
expect python-without-torch "$work/bin/python3 has no PyTorch" PATH="$work/bin:$PATH" LIBTORCH=

echo "PASS"
