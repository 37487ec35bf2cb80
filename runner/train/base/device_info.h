#pragma once
// The device a run uses and its memory high-water mark.
#include <torch/torch.h>

#include <string>

namespace sinter::train {

// The CUDA device `localRank` (one GPU per process on a host) when there is a GPU, else the CPU;
// std::invalid_argument when the host has fewer GPUs than that.
torch::Device trainingDevice(int localRank = 0);
// GPUs this process sees (0 without CUDA).
int cudaDeviceCount();
std::string describeDevice(const torch::Device& device);
// Peak memory in MiB: the CUDA allocator's peak on a GPU, the process's peak RSS on the CPU.
double peakMemoryMb(const torch::Device& device);
// Starts a new high-water mark (CUDA; the CPU's peak RSS cannot be reset).
void resetPeakMemory(const torch::Device& device);
// Bytes new device tensors can still take on a GPU: its free memory and what the caching allocator
// holds unused. 0 on the CPU.
int64_t availableDeviceBytes(const torch::Device& device);
// A GPU's memory size in bytes; 0 on the CPU.
int64_t totalDeviceBytes(const torch::Device& device);
// Bytes the CUDA caching allocator has in tensors now; 0 on the CPU.
int64_t allocatedDeviceBytes(const torch::Device& device);
// A smaller GPU emulated (SINTER_CUDA_MEMORY_CAP_GB, vram_budget.h): its size, which the two above
// then report (what is available: the cap less what the allocator holds in tensors), so what a run
// decides by the device's memory (a capture's state snapshot on the device or in host memory) is
// what it decides on that card.
void setEmulatedDeviceBytes(int64_t bytes);
bool cudaCompiledIn();
// What --version prints after the version: the libtorch it runs on, with CUDA or without, and each
// visible GPU with its compute capability and memory ("libtorch 2.11.0 with CUDA 13.0: cuda:0 NVIDIA
// H200, compute capability 9.0, 139.8 GiB").
std::string describeBuildAndDevices();
// A generator of its own on `device`, seeded (the CUDA default generator is shared, so a run gets
// separate ones for its separate uses: latent caching, the training step).
at::Generator makeGenerator(const torch::Device& device, std::uint64_t seed);
// cuda_allow_tf32 / cuda_cudnn_benchmark: CUDA only, with or without compile. Returns what was set.
std::string applyCudaMathFlags(const torch::Device& device, bool allowTf32, bool cudnnBenchmark);

}  // namespace sinter::train
