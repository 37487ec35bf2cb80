#!/usr/bin/env bash
# On the lent GPU machine (no apt there): builds sinter-runner against the pip PyTorch's libtorch
# (CUDA), with the Debian header packages unpacked into .deps/root (see README.md in this folder).
# T5's tokenizer (the sinter_sentencepiece module) links the libsentencepiece0 unpacked there too;
# without it in .deps the build leaves the tokenizer out (SINTER_WITH_SENTENCEPIECE=OFF) and FLUX's
# real loop cannot encode captions.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
deps="$root/.deps/root/usr"
torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
# nccl.h for c10d's NCCL process group (several GPUs): the nvidia-nccl wheel PyTorch runs with.
nccl_include="$(python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "include"))' 2>/dev/null || true)"
sentencepiece=(-DSINTER_WITH_SENTENCEPIECE=OFF)
if [ -f "$deps/include/sentencepiece_processor.h" ] && [ -e "$deps/lib/x86_64-linux-gnu/libsentencepiece.so" ]; then
  # The build tree's RPATH points the module at .deps' copy (no apt on the GPU machine).
  sentencepiece=(-DSINTER_WITH_SENTENCEPIECE=ON -DSENTENCEPIECE_INCLUDE_DIR="$deps/include"
                 -DSENTENCEPIECE_LIBRARY="$deps/lib/x86_64-linux-gnu/libsentencepiece.so")
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$root/build-cuda" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSINTER_BUILD_APP=OFF -DSINTER_BUILD_TESTS=OFF -DSINTER_SPDLOG_HEADER_ONLY=ON "${sentencepiece[@]}" \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DSINTER_NCCL_INCLUDE_DIR="$nccl_include" \
  -DTOML11_INCLUDE_DIR="$deps/include" -DNLOHMANN_JSON_INCLUDE_DIR="$deps/include" \
  -DSPDLOG_INCLUDE_DIR="$deps/include" -DFMT_INCLUDE_DIR="$deps/include" -DSTB_INCLUDE_DIR="$deps/include/stb" \
  -DWEBP_INCLUDE_DIR="$deps/include" -DWEBP_LIBRARY="$deps/lib/x86_64-linux-gnu/libwebp.a"
# sinter-runner, and sinter-kernel-check where nvcc builds the kernels; SINTER_CUDA_TARGETS="sinter-runner"
# builds only those targets (a call whose device time is short).
targets=()
for t in ${SINTER_CUDA_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$root/build-cuda" -j"$(nproc)" "${targets[@]}"
