#pragma once
// The device a run uses and its memory high-water mark.
#include <torch/torch.h>

#include <string>

namespace sinter::train {

torch::Device trainingDevice();  // the first CUDA device when there is one, else the CPU
std::string describeDevice(const torch::Device& device);
// Peak memory in MiB: the CUDA allocator's peak on a GPU, the process's peak RSS on the CPU.
double peakMemoryMb(const torch::Device& device);
// Starts a new high-water mark (CUDA; the CPU's peak RSS cannot be reset).
void resetPeakMemory(const torch::Device& device);
bool cudaCompiledIn();
// A generator of its own on `device`, seeded (the CUDA default generator is shared, so a run gets
// separate ones for its separate uses: latent caching, the training step).
at::Generator makeGenerator(const torch::Device& device, std::uint64_t seed);
// cuda_allow_tf32 / cuda_cudnn_benchmark: CUDA only, with or without compile. Returns what was set.
std::string applyCudaMathFlags(const torch::Device& device, bool allowTf32, bool cudnnBenchmark);

}  // namespace sinter::train
