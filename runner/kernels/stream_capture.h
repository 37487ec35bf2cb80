#pragma once
// Whether the work queued now on a device's current stream is being captured into a CUDA graph
// rather than run. Here, below both the models (which must not start a copy a graph would replay
// from freed memory) and the compile area (which captures).
#include <torch/torch.h>

namespace sinter::kernels {

// False on the CPU and in a build without CUDA.
bool capturingOnCurrentStream(torch::Device device);

}  // namespace sinter::kernels
