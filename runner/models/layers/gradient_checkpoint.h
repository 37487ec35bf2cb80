#pragma once
// Gradient checkpointing: run a block without keeping its activations, and run it again in the
// backward pass to get its gradients (PyTorch's reentrant torch.utils.checkpoint). Autocast, and
// the RNG state when the block draws random numbers (dropout), are restored for the recomputation,
// so it matches the forward. A block without dropout skips the RNG state's get/set: that is a host
// round trip a captured step cannot hold.
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace sinter::models {

using CheckpointedBlock = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

// Gradients reach the block's parameters (accumulated into .grad during backward) and every
// input that requires grad. `offloadInputs` (cpu_offload_checkpointing): the inputs the backward
// pass needs are kept in host memory until then, instead of on the device.
torch::Tensor runCheckpointed(CheckpointedBlock block, const std::vector<torch::Tensor>& inputs, bool preserveRngState = true,
                              bool offloadInputs = false);

}  // namespace sinter::models
