#!/usr/bin/env bash
# On the lent GPU machine (no apt there): builds sinter-runner against the pip PyTorch's libtorch
# (CUDA), with the Debian header packages unpacked into .deps/root (see README.md in this folder).
# No libsentencepiece there, so T5's tokenizer is left out (SINTER_WITH_SENTENCEPIECE=OFF).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
deps="$root/.deps/root/usr"
torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
# nccl.h for c10d's NCCL process group (several GPUs): the nvidia-nccl wheel PyTorch runs with.
nccl_include="$(python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "include"))' 2>/dev/null || true)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$root/build-cuda" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSINTER_BUILD_APP=OFF -DSINTER_BUILD_TESTS=OFF -DSINTER_SPDLOG_HEADER_ONLY=ON -DSINTER_WITH_SENTENCEPIECE=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DSINTER_NCCL_INCLUDE_DIR="$nccl_include" \
  -DTOML11_INCLUDE_DIR="$deps/include" -DNLOHMANN_JSON_INCLUDE_DIR="$deps/include" \
  -DSPDLOG_INCLUDE_DIR="$deps/include" -DFMT_INCLUDE_DIR="$deps/include" -DSTB_INCLUDE_DIR="$deps/include/stb" \
  -DWEBP_INCLUDE_DIR="$deps/include" -DWEBP_LIBRARY="$deps/lib/x86_64-linux-gnu/libwebp.a"
# sinter-runner, and sinter-kernel-check where nvcc builds the kernels; SINTER_CUDA_TARGETS="sinter-runner"
# builds only those targets (a call whose device time is short).
targets=()
for t in ${SINTER_CUDA_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$root/build-cuda" -j"$(nproc)" "${targets[@]}"
